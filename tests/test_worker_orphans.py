"""Worker processes end when their coordinating process ends, however it ends (and a worker
that dies ends the command line run with one line).

Each test starts a coordinator as a subprocess, waits until its worker processes are
busy, kills or interrupts the coordinator and checks that its workers end, and that its
stdout (held open by every child) reaches EOF. Linux only: processes are found in /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

#: Seconds the workers get to notice that their coordinator has ended.
GONE_WITHIN = 5.0


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie has ended


def _cpu_seconds(pid: int) -> float:
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None and int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _is_worker(pid: int) -> bool:
    try:
        return b"--multiprocessing-fork" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _busy_workers(coordinator: subprocess.Popen, count: int, timeout: float = 60) -> set[int]:
    """The coordinator's worker processes, once ``count`` of them have each used some CPU
    (past starting: solving units)."""
    def busy() -> bool:
        workers = {pid for pid in _children(coordinator.pid) if _is_worker(pid)}
        return len(workers) >= count and all(_cpu_seconds(pid) >= 0.5 for pid in workers)

    assert _wait_for(busy, timeout), f"{count} busy workers did not appear"
    return {pid for pid in _children(coordinator.pid) if _is_worker(pid)}


def _ctrl_c_at_its_default() -> None:
    """In the child, before it runs Python: SIGINT at its default, as in a terminal (a test
    run in the background, e.g. `pytest &` in a script, would otherwise pass it on ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def _coordinator(args: list[str]) -> Iterator[tuple[subprocess.Popen, set[int]]]:
    """Start ``python ARGS``; yield it and a set to which the test adds the processes it
    must not leave behind (each killed at the end if still there)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}
    process = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=_ctrl_c_at_its_default)
    leftovers: set[int] = set()
    try:
        yield process, leftovers
    finally:
        leftovers |= _children(process.pid)
        for pid in [process.pid, *leftovers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        process.communicate()


def _assert_gone(pids: set[int]) -> None:
    left = lambda: {pid for pid in pids if _alive(pid)}  # noqa: E731
    assert _wait_for(lambda: not left(), GONE_WITHIN), f"still running: {sorted(left())}"


def _assert_stdout_ends(coordinator: subprocess.Popen) -> None:
    try:
        coordinator.communicate(timeout=GONE_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail("the coordinator's stdout did not reach EOF")


@pytest.mark.parametrize("ending", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM],
                         ids=["killed", "ctrl-c", "terminated"])
def test_cli_workers_end_with_the_cli(ending):
    with _coordinator(["-m", "gpuqueens", "nqueens", "17", "--backend", "cpu",
                       "--workers", "2", "--no-progress"]) as (cli, leftovers):
        workers = _busy_workers(cli, 2)
        children = _children(cli.pid)  # the workers and multiprocessing's resource tracker
        leftovers |= children
        assert workers <= children
        cli.send_signal(ending)
        _assert_gone(children)
        _assert_stdout_ends(cli)


# SIGINT and SIGTERM a few microseconds apart (Ctrl-C and a scheduler's kill at once, or
# Ctrl-C pressed twice): the kernel may hand the second, or both, to another thread than the
# main one, and the second reached Python while the first one's clean-up ran. The run hung
# (the main thread never woke) or ended with rc 1 and a traceback (`release unlocked lock`).
# Each burst must end the run at once with the first signal's exit code, one line and no
# worker left. Several rounds, as the failure came in about half of the tries.
@pytest.mark.parametrize("burst", [
    (signal.SIGINT, signal.SIGTERM),
    (signal.SIGTERM, signal.SIGINT),
    (signal.SIGINT, signal.SIGTERM, signal.SIGINT),
    (signal.SIGTERM, signal.SIGINT, signal.SIGTERM),
], ids=["int-term", "term-int", "int-term-int", "term-int-term"])
def test_a_burst_of_signals_ends_the_cli_once(burst):
    with _coordinator(["-m", "gpuqueens", "nqueens", "32", "--backend", "cpu", "--workers", "2",
                       "--no-progress"]) as (cli, leftovers):
        _busy_workers(cli, 2)
        children = _children(cli.pid)  # the workers and multiprocessing's resource tracker
        leftovers |= children
        sent = time.monotonic()
        for ending in burst:
            os.kill(cli.pid, ending)
        try:
            _, err = cli.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run did not end after {[ending.name for ending in burst]}")
        took = time.monotonic() - sent
        text = err.decode()
        assert "Traceback" not in text and "Exception ignored" not in text, text
        ended = {130: "gpuqueens: interrupted", 143: "gpuqueens: terminated"}
        assert cli.returncode in ended, text
        assert text.strip().splitlines()[-1] == ended[cli.returncode], text
        assert took < 5, f"{took:.1f} s to end"
        _assert_gone(children)


def test_a_killed_worker_ends_the_cli_with_one_line(tmp_path):
    # (the other way round: a worker dies, e.g. out of memory; the run stops, says so in one
    # line, and the checkpoint resumes it)
    checkpoint = tmp_path / "run.sqlite"
    with _coordinator(["-m", "gpuqueens", "nqueens", "17", "--backend", "cpu", "--workers", "2",
                       "--no-progress", "--checkpoint", str(checkpoint)]) as (cli, leftovers):
        workers = _busy_workers(cli, 2)
        leftovers |= _children(cli.pid)
        os.kill(min(workers), signal.SIGKILL)
        _, err = cli.communicate(timeout=60)
        lines = err.decode().strip().splitlines()
        assert cli.returncode == 1, err
        assert len(lines) == 1 and lines[0].startswith("gpuqueens: error: a gpuqueens worker process ended abruptly")
        assert "rerun the same command to resume" in lines[0]


# A coordinator whose two workers sleep in a task (once both have met in the folder
# sys.argv[1]), and which then forks a child that keeps a copy of every pipe the
# coordinator holds (not its stdout) for a minute.
FORKING_COORDINATOR = textwrap.dedent("""
    import os, sys, time
    import worker_tasks
    from gpuqueens.worker_pool import WorkerPool

    pool = WorkerPool(2)
    for task in [pool.submit(worker_tasks.meet, sys.argv[1], 2) for _ in range(2)]:
        task.result(timeout=120)
    for _ in range(2):
        pool.submit(time.sleep, 600)
    child = os.fork()
    if child == 0:
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        time.sleep(60)
        os._exit(0)
    print(child, flush=True)
    time.sleep(600)
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_workers_end_when_the_coordinator_is_killed_though_a_fork_holds_its_pipes(tmp_path):
    with _coordinator(["-c", FORKING_COORDINATOR, str(tmp_path)]) as (coordinator, leftovers):
        forked = int(coordinator.stdout.readline())
        leftovers.add(forked)
        workers = {pid for pid in _children(coordinator.pid) if _is_worker(pid)}
        leftovers |= _children(coordinator.pid)
        assert len(workers) == 2
        coordinator.kill()
        _assert_gone(workers)
        # the fork, a process of the coordinator's own, is left as it is (and with it the
        # resource tracker, whose pipe the fork holds too)
        assert _alive(forked)


# A coordinator that sends Ctrl-C to its whole process group (as a terminal or a notebook's
# interrupt does) while its new workers are still importing, then uses them.
EARLY_CTRL_C = textwrap.dedent("""
    import os, signal, time
    from gpuqueens.worker_pool import WorkerPool

    pool = WorkerPool(2)
    try:
        os.killpg(os.getpgrp(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    print(sorted(pool.submit(abs, -k).result(timeout=120) for k in range(4)), flush=True)
    pool.shutdown()
""")


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs process groups")
def test_a_ctrl_c_while_the_workers_start_reaches_the_coordinator_alone():
    # each new worker printed a KeyboardInterrupt traceback from its imports, and died
    done = subprocess.run([sys.executable, "-c", EARLY_CTRL_C], capture_output=True, text=True,
                          timeout=180, start_new_session=True)
    assert done.stdout.splitlines() == ["interrupted", "[0, 1, 2, 3]"], done.stderr[-2000:]
    assert "Traceback" not in done.stderr
