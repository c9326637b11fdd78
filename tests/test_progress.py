"""The progress reporter: on when asked (or watched), silent otherwise or without tqdm."""

from __future__ import annotations

import io
import sys
import threading
import warnings

import numpy as np
import pytest

from gpuqueens import progress as progress_module
from gpuqueens.progress import Progress, progress_enabled
from gpuqueens.runner import WorkUnit, run_units

JOB = {"problem": "toy"}
UNITS = [WorkUnit(f"u{i}", range(i), weight=i + 1) for i in range(5)]


def solve(payload):
    return (sum(payload), len(payload))


def test_progress_false_prints_nothing(capsys):
    run_units(UNITS, solve, job=JOB, progress=False, description="toy")
    assert capsys.readouterr() == ("", "")


def test_progress_none_is_off_when_stderr_is_not_a_terminal(capsys):
    run_units(UNITS, solve, job=JOB, progress=None)
    assert capsys.readouterr() == ("", "")


def test_progress_true_draws_a_bar_on_stderr(capsys):
    pytest.importorskip("tqdm")
    run_units(UNITS, solve, job=JOB, progress=True, description="toy")
    out, err = capsys.readouterr()
    assert out == ""
    assert "toy" in err and "5/5 units" in err and "100%" in err


class FullDisk(io.StringIO):
    """A stderr on a full disk: every write fails."""

    def write(self, text):
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("stderr", [None, FullDisk()], ids=["closed", "full"])
def test_a_stderr_that_cannot_be_written_drops_the_bar_not_the_run(stderr, monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys, "stderr", stderr)  # None: file 2 closed, or pythonw
    results = run_units(UNITS, solve, job=JOB, progress=True, description="toy")
    assert sorted(results.values()) == sorted(solve(unit.payload) for unit in UNITS)
    assert capsys.readouterr().out == ""
    assert other_threads_can_draw_bars()


def other_threads_can_draw_bars() -> bool:
    """Whether another thread can take tqdm's global lock, which every bar takes to draw (a
    failed write inside tqdm's refresh used to leave it held: Dask's threads then hung)."""
    from tqdm.std import TqdmDefaultWriteLock

    locks = [getattr(TqdmDefaultWriteLock, name, None) for name in ("mp_lock", "th_lock")]
    taken = []

    def take() -> None:
        for lock in filter(None, locks):
            taken.append(lock.acquire(True, 5))
            if taken[-1]:
                lock.release()

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return all(taken)


def test_the_bar_is_drawn_on_stderr_as_tqdm_sees_it(capsys):
    # tqdm.write clears the bars whose file equals the one it writes to, before writing
    tqdm = pytest.importorskip("tqdm")
    with Progress(total_units=2, total_weight=2.0, enabled=True) as bar:
        assert bar._bar.fp == sys.stderr
        tqdm.tqdm.write("a line between two drawings", file=sys.stderr)
        bar.advance(1.0)
    assert "a line between two drawings\n" in capsys.readouterr().err


def test_resumed_run_starts_the_bar_at_the_finished_units(capsys, tmp_path):
    pytest.importorskip("tqdm")
    path = tmp_path / "run.sqlite"

    def fails_at_u3(payload):
        if len(payload) == 3:
            raise RuntimeError("stop")
        return solve(payload)

    with pytest.raises(RuntimeError):
        run_units(UNITS, fails_at_u3, job=JOB, checkpoint=path, progress=False)
    run_units(UNITS, solve, job=JOB, checkpoint=path, progress=True)
    err = capsys.readouterr().err
    assert "3/5 units" in err and "5/5 units" in err


def test_a_resumed_run_says_it_is_re_checking_stored_units(capsys, tmp_path):
    pytest.importorskip("tqdm")
    path = tmp_path / "run.sqlite"
    run_units(UNITS, solve, job=JOB, checkpoint=path, progress=False)
    run_units(UNITS, solve, job=JOB, checkpoint=path, progress=True, recheck=2)
    assert "5/5 units, re-checking 2 stored units" in capsys.readouterr().err


def test_without_tqdm_progress_is_silent(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # makes "import tqdm..." fail
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    monkeypatch.setattr(progress_module, "_warned_no_tqdm", False)
    with pytest.warns(UserWarning, match=r'tqdm.*pip install "\.\[progress\]"') as said:
        assert run_units(UNITS, solve, job=JOB, progress=True)["u4"] == (6, 4)
    assert capsys.readouterr() == ("", "")
    assert said[0].filename == __file__  # the caller's line, not ours


def test_numpy_bools_are_bools():
    assert progress_module.progress_enabled(np.False_) is False
    assert run_units(UNITS, solve, job=JOB, progress=np.False_)["u4"] == (6, 4)


def test_without_tqdm_the_hint_is_said_once(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(progress_module, "_warned_no_tqdm", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            run_units(UNITS, solve, job=JOB, progress=True)
        run_units(UNITS, solve, job=JOB, progress=None)  # not asked for: no hint
    assert len(caught) == 1 and "pip install" in str(caught[0].message)


def test_no_hint_when_no_bar_is_asked_for(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(progress_module, "_warned_no_tqdm", False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_units(UNITS, solve, job=JOB, progress=False)
        run_units(UNITS, solve, job=JOB, progress=None)


@pytest.mark.parametrize("bad", ["no", "off", 1, 0.0, "False"])
def test_progress_must_be_a_bool_or_none(bad, capsys):
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        progress_enabled(bad)
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        run_units(UNITS, solve, job=JOB, progress=bad)
    assert capsys.readouterr() == ("", "")  # no bar was drawn


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_none_follows_whether_stderr_is_a_terminal(monkeypatch):
    assert progress_enabled(True) and not progress_enabled(False)
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    assert progress_enabled(None)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress_enabled(None)
    monkeypatch.setattr(sys, "stderr", None)  # pythonw and some services
    assert not progress_enabled(None)


def test_weights_drive_the_bar_and_counts_are_exact(capsys):
    pytest.importorskip("tqdm")
    with Progress(total_units=3, total_weight=6.0, enabled=True, description="w") as bar:
        bar.advance(3.0)  # half the work in one unit of three
        assert bar._bar.n == pytest.approx(1.5)
        bar.advance(1.0)
        bar.advance(2.0)
        assert bar._bar.n == bar._bar.total == 3
    assert (bar.units_done, bar.weight_done) == (3, 6.0)
    assert "3/3 units" in capsys.readouterr().err
    bar.close()  # closing twice is harmless


def test_disabled_reporter_still_counts(capsys):
    with Progress(total_units=2, total_weight=2.0, enabled=False, already_units=1,
                  already_weight=1.0) as bar:
        bar.advance(1.0)
    assert (bar.units_done, bar.weight_done) == (2, 2.0)
    assert capsys.readouterr() == ("", "")


def _bar_drawn_on_a_terminal_of_size(columns: int, rows: int) -> bytes:
    """What a count with ``progress=True`` writes to a pseudo-terminal of that size."""
    pty = pytest.importorskip("pty")
    import fcntl
    import os
    import struct
    import subprocess
    import termios

    pytest.importorskip("tqdm")
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    code = "import gpuqueens; gpuqueens.count(12, backend='cpu', progress=True)"
    process = subprocess.Popen([sys.executable, "-c", code], stdin=child,
                               stdout=subprocess.DEVNULL, stderr=child)
    os.close(child)
    written = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        written += chunk
    os.close(main)
    assert process.wait(timeout=60) == 0
    return written


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal sizes: Linux")
def test_a_terminal_that_reports_no_size_still_gets_a_bar():
    assert b"units]" in _bar_drawn_on_a_terminal_of_size(100, 24)
    drawn = _bar_drawn_on_a_terminal_of_size(0, 0)
    assert b"units]" in drawn and b"100%" in drawn


def test_a_notebook_without_ipywidgets_gets_a_text_bar_without_tqdm_s_warning(monkeypatch):
    # tqdm.auto warned "IProgress not found. Please update jupyter and ipywidgets" from its
    # own file, then drew the text bar anyway
    import tqdm.std

    monkeypatch.setattr(progress_module, "_in_notebook", lambda: True)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    shown = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bar = progress_module._make_bar(10, 0, "units", "", progress_module._DroppingStream(shown))
        bar.update(10)
        bar.close()
    assert type(bar) is tqdm.std.tqdm
    assert "100%" in shown.getvalue()
