"""The command line, run in-process and as ``python -m gpuqueens``."""

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing

import pytest

from gpuqueens import cli
from gpuqueens.cli import main


def test_nqueens_prints_counts_backend_and_time(capsys):
    assert main(["nqueens", "8", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "n=8" in out and "total 92" in out and "unique 12" in out and "cpu" in out and " s" in out


def test_nqueens_several_sizes_and_unique(capsys):
    assert main(["nqueens", "4", "5", "--unique", "--backend", "cpu"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[:3] for line in lines] == [["n=4", "unique", "1"], ["n=5", "unique", "2"]]


@pytest.mark.parametrize("argv", [["nqueens", "0"], ["nqueens", "33"]])
def test_bad_sizes_give_a_message_and_exit_2(argv, capsys):
    assert main(argv + ["--backend", "cpu"]) == 2
    assert "gpuqueens: error:" in capsys.readouterr().err


def test_non_integer_size_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["nqueens", "eight"])
    assert exit_info.value.code == 2


@pytest.mark.parametrize("argv, usage, named", [
    (["nqueens", "8", "--bogus"], "usage: gpuqueens nqueens", "--bogus"),
    (["matchstick-table", "3", "3", "--x"], "usage: gpuqueens matchstick-table", "--x"),
    (["--bogus"], "usage: gpuqueens [-h]", "--bogus (the command comes first"),
    (["--backend", "cpu", "nqueens", "8"], "usage: gpuqueens [-h]", "--backend (the command"),
])
def test_an_unknown_option_is_named_under_its_commands_usage(argv, usage, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.startswith(usage) and f"error: unrecognized arguments: {named}" in err


def test_checkpoint_option(tmp_path, capsys):
    path = tmp_path / "cli.sqlite"
    assert main(["nqueens", "9", "--backend", "cpu", "--checkpoint", str(path), "--no-progress"]) == 0
    assert path.exists() and "total 352" in capsys.readouterr().out


def test_python_dash_m():
    done = subprocess.run([sys.executable, "-m", "gpuqueens", "nqueens", "6", "--backend", "cpu"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "total 4" in done.stdout


def test_checkpoint_with_several_sizes_is_refused_up_front(tmp_path, capsys):
    path = tmp_path / "two.sqlite"
    assert main(["nqueens", "8", "9", "--backend", "cpu", "--checkpoint", str(path)]) == 2
    assert "one board size at a time" in capsys.readouterr().err
    assert not path.exists()


# -- every bad checkpoint or option: one line "gpuqueens: error: ...", exit code 2 --------

def one_line_error(err: str, text: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gpuqueens: error: ") and text in lines[0], err
    assert "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_checkpoint_is_refused_at_once(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gpuqueens", "nqueens", "15", "--checkpoint",
                           str(fifo)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    one_line_error(done.stderr, "is a named pipe (FIFO), not a regular file")
    assert time.monotonic() - start < 30  # measured: about 0.3 s, Python's start included


@pytest.mark.parametrize("checkpoint, text", [("", "the checkpoint path is empty"),
                                              ("missing/dir/n.sqlite", "does not exist")])
def test_bad_checkpoint_paths_exit_2(checkpoint, text, capsys):
    assert main(["nqueens", "15", "--backend", "cpu", "--checkpoint", checkpoint]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line_error(err, text)


def test_read_only_ledger_with_units_to_do_exits_2(tmp_path, capsys, read_only_works):
    from gpuqueens.ledger import Ledger
    from gpuqueens.problems.nqueens.plan import plan_for, work_units

    path = tmp_path / "n15.sqlite"
    plan = plan_for(15, "cpu")
    units = work_units(plan, "cpu")  # 4 prefix units and the symmetric one
    Ledger.open(path, plan.job(), units).close()  # a ledger, no unit done
    read_only_works.lock(path)
    assert main(["nqueens", "15", "--backend", "cpu", "--checkpoint", str(path)]) == 2
    one_line_error(capsys.readouterr().err, f"{len(units)} of {len(units)} work units are still to do")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n15.sqlite"]


def test_checkpoint_with_a_plan_the_code_does_not_make_exits_2(tmp_path, capsys):
    path = tmp_path / "n12.sqlite"
    assert main(["nqueens", "12", "--backend", "cpu", "--checkpoint", str(path)]) == 0
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("""UPDATE header SET job = replace(job, '"units":1', '"units":0')""")
    db.close()
    capsys.readouterr()
    assert main(["nqueens", "12", "--backend", "cpu", "--checkpoint", str(path)]) == 2
    one_line_error(capsys.readouterr().err, "does not make for n=12")


def test_recheck_option(tmp_path, capsys):
    path = tmp_path / "n10.sqlite"
    assert main(["nqueens", "10", "--backend", "cpu", "--checkpoint", str(path),
                 "--recheck", "3"]) == 0
    assert "total 724" in capsys.readouterr().out
    for bad in ("-1", "one"):  # refused by the parser, as a bad --workers is
        with pytest.raises(SystemExit) as exit_info:
            main(["nqueens", "10", "--backend", "cpu", "--checkpoint", str(path), "--recheck", bad])
        assert exit_info.value.code == 2
        assert f"argument --recheck: takes a whole number from 0 up, not '{bad}'" in capsys.readouterr().err


def test_progress_without_tqdm_says_how_to_get_it_once(monkeypatch, capsys):
    from gpuqueens import progress

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(progress, "_warned_no_tqdm", False)
    assert main(["nqueens", "8", "9", "--backend", "cpu", "--progress"]) == 0
    out, err = capsys.readouterr()
    assert "total 92" in out and "total 352" in out
    assert err.count("gpuqueens: warning:") == 1
    assert 'pip install ".[progress]"' in err and "Traceback" not in err


def test_long_count_warns_on_one_line_before_it_starts(monkeypatch, capsys):
    from gpuqueens.problems import nqueens as nqueens_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # the user's Ctrl-C once the warning is on the screen

    monkeypatch.setattr(nqueens_module, "work_units", interrupted)
    assert main(["nqueens", "32", "--backend", "cpu", "--workers", "1"]) == 130
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("gpuqueens: warning: counting n=32 on one CPU core is expected to "
                             "take about ") and err[0].endswith(" years")
    assert err[1] == "gpuqueens: interrupted"
    # with worker processes the estimate is shared among them, still before anything starts
    from gpuqueens import workers
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)  # 3 processes even on 2 cores
    assert main(["nqueens", "32", "--backend", "cpu", "--workers", "3"]) == 130
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("gpuqueens: warning: counting n=32 on 3 workers, each counted as one CPU "
                             "core, is expected to take about ")
    assert err[1] == "gpuqueens: interrupted"


# -- a run that cannot go on: every size checked first, output gone, stopped by SIGTERM -----

def test_every_size_is_checked_before_the_first_is_counted(capsys):
    assert main(["nqueens", "8", "33", "--backend", "cpu"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    one_line_error(captured.err, "n=32")


@pytest.mark.parametrize("name", ["CPU", " cpu ", "Cpu"])
def test_backend_option_takes_any_case(name, capsys):
    assert main(["nqueens", "6", "--backend", name]) == 0
    assert "[cpu:" in capsys.readouterr().out


def _cli(*argv: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gpuqueens", *argv], stderr=subprocess.PIPE,
                            text=True, **popen)


def test_an_ascii_only_output_still_gets_the_counts(capsys):
    """``PYTHONIOENCODING=ascii`` (or an ASCII locale): "2×2" cannot be encoded, and the count
    was lost to a UnicodeEncodeError after it had been computed."""
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    for argv, line in ((["matchsticks", "2", "2", "--removed", "3"], "2x2 R=3: 8"),
                       (["matchstick-table", "2", "2"], "2x2 grid (12 sticks, 5 squares)")):
        process = _cli(*argv, "--backend", "cpu", stdout=subprocess.PIPE, env=env)
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0 and out.splitlines()[0] == line, err
    process = _cli("matchstick-table", "8", "8", env=env)  # an error whose line holds a ×
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2 and err.startswith("gpuqueens: error: 8x8: the table is limited"), err
    # in this process: where everything can be encoded, nothing changes, and the streams are
    # as they were afterwards
    assert main(["matchsticks", "2", "2", "--removed", "3", "--backend", "cpu"]) == 0
    assert capsys.readouterr().out.startswith("2×2 R=3: 8")
    assert sys.stdout.errors == "strict"


def test_a_closed_pipe_ends_the_run_quietly():
    """``gpuqueens nqueens 8 9 | head -1``: no traceback when the reader has gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    process = _cli("nqueens", "6", "7", "8", "--backend", "cpu", stdout=write_end)
    os.close(write_end)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141 and err == "", err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_that_cannot_be_written_is_one_line_error():
    with open("/dev/full", "w") as full:
        process = _cli("nqueens", "6", "--backend", "cpu", stdout=full)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    one_line_error(err, "No space left")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("--help",), ("--version",), ("matchstick-table", "--help")])
def test_help_that_cannot_be_written_is_one_line_error(args):
    # recent Pythons' argparse drops the failed write (3.11.7, 3.12): the command exited 0, silent
    with open("/dev/full", "w") as full:
        process = _cli(*args, stdout=full)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    one_line_error(err, "No space left")


def test_help_into_a_closed_pipe_ends_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)
    process = _cli("nqueens", "--help", stdout=write_end)
    os.close(write_end)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141 and err == "", err


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_a_closed_stdout_is_an_error_not_silence():
    """``gpuqueens nqueens 8 >&-``: Python's print() would drop the counts without a word."""
    process = subprocess.Popen(["sh", "-c", 'exec "$0" -m gpuqueens nqueens 6 --backend cpu >&-', sys.executable],
                               stderr=subprocess.PIPE, text=True)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    one_line_error(err, "standard output is closed")


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as listing:
            found.update(int(child) for child in listing.read().split())
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads worker processes from /proc")
def test_sigterm_stops_like_ctrl_c_and_ends_the_workers(tmp_path):
    path = tmp_path / "term.sqlite"
    process = _cli("nqueens", "17", "--backend", "cpu", "--workers", "2", "--checkpoint", str(path),
                   "--no-progress", stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        workers = {pid for pid in _children(process.pid) if _alive(pid)}
    assert len(workers) >= 2, "the workers did not start"
    time.sleep(1.0)  # the workers are solving units
    process.terminate()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert err.strip().splitlines()[-1] == ("gpuqueens: terminated (rerun with the same "
                                            "--checkpoint to resume)"), err
    assert "Traceback" not in err
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)


def test_a_closed_stderr_keeps_its_lines_out_of_the_counts(monkeypatch, capsys):
    """``gpuqueens nqueens 0 2>&-``: Python's sys.stderr is None, and print(file=None) would
    write the error (or a warning) among the counts on stdout."""
    monkeypatch.setattr(sys, "stderr", None)
    assert main(["nqueens", "0"]) == 2
    cli._show_warning("no usable GPU", UserWarning, "x.py", 1)
    assert main(["nqueens", "6", "--backend", "cpu", "--progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("n=6  total 4  unique 1") and out.count("\n") == 1, out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_stderr_that_cannot_be_written_does_not_lose_the_count():
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "gpuqueens", "nqueens", "13", "--backend", "cpu",
                               "--progress"], stdout=subprocess.PIPE, stderr=full, text=True,
                              timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("n=13  total 73712  unique 9233"), done


def test_main_puts_the_signal_handlers_back_after_a_stop():
    from gpuqueens.cli import Terminated, _signals_stop_once

    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(Terminated):
            with _signals_stop_once():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)   # (the handler raises at once)
        assert {number: signal.getsignal(number) for number in before} == before
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_after_a_stop_the_command_keeps_the_stop_s_status():
    # `gpuqueens`: a SIGTERM 10-30 ms after Ctrl-C, while Python exited, killed it with status
    # 143 instead of 130. The other signal is now ignored; the same one again still ends the
    # process (an exit that hangs needs a way out), with the same status.
    script = textwrap.dedent("""
        import os, signal, time
        from gpuqueens.cli import _signals_stop_once
        try:
            with _signals_stop_once(exit_after_stop=True):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
        except KeyboardInterrupt:
            print("stopped", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)   # Python's exit under way
        time.sleep(0.2)
        print("SIGTERM ignored", flush=True)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        print("not ended")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["stopped", "SIGTERM ignored"]
    assert done.returncode == -signal.SIGINT   # the shell's 130, as for the stop itself
