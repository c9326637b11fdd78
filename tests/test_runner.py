"""run_units: the same results on every executor, bounded submission, resume after a kill."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from contextlib import closing

import pytest

import gpuqueens
from gpuqueens import estimates
from gpuqueens.ledger import CheckpointError
from gpuqueens.runner import WorkUnit, check_result, run_units

JOB = {"problem": "toy", "size": 40, "plan": "ranges-of-7"}


def toy_units(count: int = 40) -> list[WorkUnit]:
    return [WorkUnit(f"u{i:03d}", range(7 * i, 7 * i + 7), weight=1 + i % 3) for i in range(count)]


def toy_solve(payload: range) -> tuple[int, int]:
    """Module level, so that process pools and Dask can pickle it."""
    return (sum(payload), len(payload))


def expected(units: list[WorkUnit]) -> dict[str, tuple[int, int]]:
    return {u.key: (sum(u.payload), len(u.payload)) for u in units}


def combined(results: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    return tuple(map(sum, zip(*results.values())))


def test_sequential_results_in_unit_order():
    units = toy_units()
    results = run_units(units, toy_solve, job=JOB, progress=False)
    assert results == expected(units)
    assert list(results) == [u.key for u in units]
    assert combined(results) == (sum(range(280)), 280)
    assert all(type(v) is int for r in results.values() for v in r)


@pytest.mark.parametrize(
    "pool", [concurrent.futures.ThreadPoolExecutor, concurrent.futures.ProcessPoolExecutor]
)
def test_pools_give_the_sequential_results(pool, tmp_path):
    units = toy_units()
    with pool(max_workers=2) as executor:
        results = run_units(units, toy_solve, job=JOB, executor=executor,
                            checkpoint=tmp_path / "run.sqlite", progress=False)
    assert results == run_units(units, toy_solve, job=JOB, progress=False)
    assert list(results) == [u.key for u in units]


def test_dask_executor_gives_the_sequential_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    units = toy_units()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        results = run_units(units, toy_solve, job=JOB, executor=client.get_executor(),
                            checkpoint=tmp_path / "run.sqlite", progress=False)
        # the Client itself hands back Dask's futures: refused before any work, saying what to pass
        with pytest.raises(TypeError, match=r"for a Dask Client, pass client.get_executor\(\)"):
            run_units(units, toy_solve, job=JOB, executor=client, progress=False)
    assert results == expected(units)


class CountingExecutor(concurrent.futures.Executor):
    """A thread pool that remembers the most futures it ever had unfinished at once."""

    def __init__(self, workers: int) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(workers)
        self._lock = threading.Lock()
        self.unfinished = 0
        self.most_unfinished = 0
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        with self._lock:
            self.unfinished += 1
            self.submitted += 1
            self.most_unfinished = max(self.most_unfinished, self.unfinished)
        future = self._pool.submit(fn, *args, **kwargs)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future):
        with self._lock:
            self.unfinished -= 1

    def shutdown(self, wait=True, **kwargs):
        self._pool.shutdown(wait=wait)


@pytest.mark.parametrize("max_in_flight, bound", [(None, 2 * 4), (3, 3)])
def test_units_in_flight_are_bounded(max_in_flight, bound):
    units = toy_units(60)

    def slow(payload):
        time.sleep(0.002)
        return toy_solve(payload)

    with CountingExecutor(4) as executor:
        executor._max_workers = 4  # what the default bound reads from thread pools
        results = run_units(units, slow, job=JOB, executor=executor,
                            max_in_flight=max_in_flight, progress=False)
    assert results == expected(units)
    assert executor.submitted == 60
    assert executor.most_unfinished <= bound


def test_resume_solves_only_the_missing_units(tmp_path):
    units = toy_units()
    path = tmp_path / "run.sqlite"

    def fails_at_u010(payload):
        if payload.start == 70:
            raise ArithmeticError("boom")
        return toy_solve(payload)

    with pytest.raises(ArithmeticError, match="boom") as info:
        run_units(units, fails_at_u010, job=JOB, checkpoint=path, progress=False)
    assert any("u010" in note for note in info.value.__notes__)  # on every Python (3.10 too)

    solved = []

    def counting(payload):
        solved.append(payload.start // 7)
        return toy_solve(payload)

    # recheck=0: only the units the ledger lacks (the re-check has tests of its own)
    assert run_units(units, counting, job=JOB, checkpoint=path, progress=False,
                     recheck=0) == expected(units)
    assert sorted(solved) == list(range(10, 40))
    solved.clear()
    assert run_units(units, counting, job=JOB, checkpoint=path, progress=False,
                     recheck=0) == expected(units)
    assert solved == []  # everything came from the ledger


def test_failure_on_an_executor_keeps_finished_results(tmp_path):
    units = toy_units()
    path = tmp_path / "run.sqlite"

    def fails_late(payload):
        if payload.start == 7 * 30:
            time.sleep(0.2)  # so that every earlier unit has finished by then
            raise LookupError("unit 30 fails")
        return toy_solve(payload)

    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        with pytest.raises(LookupError, match="unit 30 fails"):
            run_units(units, fails_late, job=JOB, executor=executor, checkpoint=path,
                      progress=False, max_in_flight=2)
    with closing(sqlite3.connect(path)) as db, db:
        recorded = {key for (key,) in db.execute("SELECT key FROM units")}
    db.close()
    assert {u.key for u in units[:30]} <= recorded
    assert "u030" not in recorded


def test_a_broken_process_pool_says_what_may_have_ended_its_process():
    # a user's own pool: with spawn, an unguarded script run again by each new process is
    # the usual cause, and Python's own message names none
    def breaks(payload):
        raise concurrent.futures.process.BrokenProcessPool("terminated abruptly")

    with concurrent.futures.ThreadPoolExecutor(1) as executor:
        with pytest.raises(concurrent.futures.process.BrokenProcessPool) as info:
            run_units(toy_units(3), breaks, job=JOB, executor=executor, progress=False)
    notes = info.value.__notes__
    assert notes[0] == "(raised while solving work unit 'u000')"
    assert "killed, out of memory" in notes[1] and '__name__ == "__main__"' in notes[1]


def test_a_pool_whose_worker_dies_ends_the_program_with_large_units_waiting():
    # A worker that dies while units larger than a pipe's buffer (64 KB; the N-Queens units
    # carry 50-300 KB of prefixes) wait in the pool's call queue: the pool of Python 3.10 and
    # of 3.11 before the fix (Debian 12's 3.11.2) then kept a thread blocked on that pipe and
    # hung at exit after the error (CPython issue 94777); the runner closes the pipe's reading
    # end itself.
    script = textwrap.dedent("""
        import concurrent.futures, os, sys
        sys.path.insert(0, sys.argv[1])
        from gpuqueens.runner import WorkUnit, run_units
        from test_runner import toy_solve
        units = [WorkUnit(f"u{i}", bytes(100_000), weight=1) for i in range(8)]
        pool = concurrent.futures.ProcessPoolExecutor(1, initializer=os._exit, initargs=(3,))
        run_units(units, toy_solve, job={"problem": "toy"}, executor=pool, progress=False)
    """)
    tests = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-c", script, tests], capture_output=True, text=True,
                          timeout=120)
    # (raised by a unit's result or by the next submission, whichever comes first)
    assert done.returncode == 1 and "concurrent.futures.process.BrokenProcessPool: A" in done.stderr
    if sys.version_info >= (3, 11):  # either way, the note that says what may have ended it
        assert done.stderr.rstrip().endswith("which every new process of the pool runs again)")


def test_other_job_is_refused(tmp_path):
    units = toy_units()
    path = tmp_path / "run.sqlite"
    run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False)
    with pytest.raises(CheckpointError, match="size: the checkpoint has 40, this run has 41"):
        run_units(units, toy_solve, job={**JOB, "size": 41}, checkpoint=path, progress=False)


@pytest.mark.parametrize("bad", [(1.0, 2), (True,), ("3",), 5, None, [1, None], {"a": 1}])
def test_result_that_is_not_integers_is_an_error(bad):
    with pytest.raises(TypeError, match="work unit 'u000'.*integers"):
        run_units(toy_units(1), lambda _payload: bad, job=JOB, progress=False)


def test_result_of_non_integers_on_an_executor_is_an_error(tmp_path):
    with concurrent.futures.ThreadPoolExecutor(2) as executor, pytest.raises(TypeError):
        run_units(toy_units(4), lambda _payload: (0.5,), job=JOB, executor=executor,
                  checkpoint=tmp_path / "run.sqlite", progress=False)


def test_integer_results_are_normalised_to_python_ints():
    np = pytest.importorskip("numpy")
    assert check_result("k", [np.uint64(2**63), np.int8(-3), 2**100]) == (2**63, -3, 2**100)
    results = run_units(toy_units(2), lambda p: (np.int64(len(p)),), job=JOB, progress=False)
    assert all(type(r[0]) is int for r in results.values())


def test_bad_unit_lists_are_refused():
    with pytest.raises(ValueError, match="appears twice"):
        run_units([WorkUnit("a", 1), WorkUnit("a", 2)], toy_solve, job=JOB)
    with pytest.raises(ValueError, match="weight"):
        run_units([WorkUnit("a", 1, weight=0)], toy_solve, job=JOB)
    with pytest.raises(TypeError, match="non-empty string"):
        run_units([WorkUnit(3, 1)], toy_solve, job=JOB)
    with pytest.raises(TypeError, match="JSON"):
        run_units([WorkUnit("a", range(2))], toy_solve, job={"f": toy_solve})
    with concurrent.futures.ThreadPoolExecutor(1) as executor, \
            pytest.raises(ValueError, match="max_in_flight"):
        run_units([WorkUnit("a", range(2))], toy_solve, job=JOB, executor=executor,
                  max_in_flight=0)
    assert run_units([], toy_solve, job=JOB) == {}


KILLED_RUN = """
    import concurrent.futures, sys, time
    from gpuqueens.runner import WorkUnit, run_units

    def slow_solve(payload):
        time.sleep(0.01)
        return (sum(payload) * 2**70, len(payload))  # big ints go through the ledger too

    units = [WorkUnit(f"u{i:03d}", range(7 * i, 7 * i + 7)) for i in range(120)]
    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        results = run_units(units, slow_solve, job={"problem": "toy-kill", "size": 120},
                            executor=executor, checkpoint=sys.argv[1], progress=False)
    print(sum(r[0] for r in results.values()), sum(r[1] for r in results.values()))
"""


def ledger_rows(path) -> list[str]:
    """Unit keys in the ledger, read while another process may be writing it."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1)
        try:
            return [key for (key,) in db.execute("SELECT key FROM units")]
        finally:
            db.close()
    except sqlite3.Error:  # not created yet, or busy creating
        return []


def test_sigkilled_run_resumes_to_the_exact_result(tmp_path):
    script = tmp_path / "killed_run.py"
    script.write_text(textwrap.dedent(KILLED_RUN))
    path = tmp_path / "run.sqlite"
    child = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(ledger_rows(path)) < 10:
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run recorded nothing"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    survived = ledger_rows(path)
    assert 10 <= len(survived) < 120

    finished = subprocess.run([sys.executable, str(script), str(path)], capture_output=True,
                              text=True, check=True, timeout=60)
    assert finished.stdout.split() == [str(sum(range(840)) * 2**70), "840"]
    keys = ledger_rows(path)
    assert sorted(keys) == [f"u{i:03d}" for i in range(120)]  # every unit, exactly once
    assert set(survived) <= set(keys)


def slow_toy_solve(payload: range) -> tuple[int, int]:
    time.sleep(0.03)
    return toy_solve(payload)


def test_dask_worker_killed_mid_run_counts_nothing_twice(tmp_path):
    distributed = pytest.importorskip("distributed")
    cloudpickle = pytest.importorskip("cloudpickle")
    # Worker processes cannot import this test module: ship its functions by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    units = toy_units(60)
    path = tmp_path / "run.sqlite"
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            outcome = {}
            runner = threading.Thread(target=lambda: outcome.setdefault("results", run_units(
                units, slow_toy_solve, job=JOB, executor=client.get_executor(),
                checkpoint=path, progress=False)))
            runner.start()
            deadline = time.monotonic() + 30
            while len(ledger_rows(path)) < 6 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(ledger_rows(path)) < len(units), "the run ended before the kill"
            victim = next(iter(client.run(os.getpid).values()))
            os.kill(victim, signal.SIGKILL)  # the nanny restarts it; its tasks run again
            runner.join(60)
            assert not runner.is_alive()
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert outcome["results"] == expected(units)
    assert sorted(ledger_rows(path)) == [u.key for u in units]


@pytest.mark.parametrize("make", [lambda: concurrent.futures.ThreadPoolExecutor(2),
                                  lambda: concurrent.futures.ProcessPoolExecutor(1)])
def test_an_executor_already_shut_down_is_named_in_the_error(make):
    executor = make()
    executor.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown") as info:
        run_units(toy_units(3), toy_solve, job=JOB, executor=executor, progress=False)
    assert any("executor= takes no more work" in note for note in info.value.__notes__)


class CancelsAfterSubmits(concurrent.futures.ThreadPoolExecutor):
    """A pool of one thread that something shuts down with cancel_futures=True once the last
    unit is queued (a watchdog, a user's handler): the units waiting behind the first are
    cancelled."""

    def __init__(self, after: int):
        super().__init__(1)
        self.after, self.submitted = after, 0

    def submit(self, fn, *args, **kwargs):
        future = super().submit(fn, *args, **kwargs)
        self.submitted += 1
        if self.submitted == self.after:
            self.shutdown(wait=False, cancel_futures=True)
        return future


class HandsBackCancelled(concurrent.futures.ThreadPoolExecutor):
    def submit(self, fn, *args, **kwargs):
        future = concurrent.futures.Future()
        future.cancel()
        return future


@pytest.mark.parametrize("make", [lambda: CancelsAfterSubmits(after=3), lambda: HandsBackCancelled(1)])
def test_units_the_executor_cancels_end_the_run_with_an_error(make, tmp_path):
    # it waited for them for ever: wait() never returns a future that was only cancelled
    units = [WorkUnit(f"u{i}", i) for i in range(3)]
    outcome = {}

    def run():
        try:
            run_units(units, slow_square, job=JOB, executor=make(), progress=False,
                      checkpoint=tmp_path / "run.sqlite", recheck=0, max_in_flight=3)
        except BaseException as exc:
            outcome["error"] = exc

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(30)
    assert not runner.is_alive(), "the run waited for ever on a cancelled unit"
    error = outcome["error"]
    assert isinstance(error, concurrent.futures.CancelledError)
    assert any("cancelled this unit before it ran" in note for note in error.__notes__)


class RunsInSubmit:
    """An "executor" whose submit returns the result itself, not a future."""

    def submit(self, fn, *args):
        return fn(*args)


def test_an_executor_whose_submit_returns_no_future_is_told_so():
    with pytest.raises(TypeError, match="executor.submit returned builtins.tuple, not a concurrent.futures.Future"):
        run_units(toy_units(3), toy_solve, job=JOB, executor=RunsInSubmit(), progress=False)
    with pytest.raises(TypeError, match="not a concurrent.futures.Future"):
        gpuqueens.count(9, backend="cpu", executor=RunsInSubmit())


def slow_square(payload: int) -> tuple[int]:
    time.sleep(0.02)
    return (payload * payload,)


@pytest.fixture
def short_hour(monkeypatch):
    """An "hour" of 0.05 s, judged from the first unit on."""
    monkeypatch.setattr(estimates, "LONG_RUN_SECONDS", 0.05)
    monkeypatch.setattr(estimates, "PACE_MIN_SECONDS", 0.0)


@pytest.mark.usefixtures("short_hour")
def test_a_run_slower_than_its_estimate_says_so_once():
    units = [WorkUnit(f"u{i}", i) for i in range(10)]  # 10 × 0.02 s: four "hours"
    with pytest.warns(gpuqueens.LongRunWarning, match=r"^toy: this run did 10% of its work in") as seen:
        results = run_units(units, slow_square, job={"problem": "toy"}, description="toy",
                            estimate=0.01)
    assert len(seen) == 1 and "(estimated at 0 s before it started)" in str(seen[0].message)
    assert seen[0].filename == __file__  # the line that started the run, not ours
    assert results["u9"] == (81,)


@pytest.mark.usefixtures("short_hour")
@pytest.mark.parametrize("estimate", [None, 1.0])  # none to watch, or announced before the start
def test_a_run_without_an_estimate_or_announced_already_is_not_watched(estimate):
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        run_units([WorkUnit(f"u{i}", i) for i in range(5)], slow_square, job={"problem": "toy"},
                  estimate=estimate)


class _Reader:
    closed = False

    def close(self):
        self.closed = True


def _broken_pool(manager: threading.Thread) -> concurrent.futures.ProcessPoolExecutor:
    """A broken pool's remains, as _let_broken_pool_end sees them (no processes started)."""
    pool = concurrent.futures.ProcessPoolExecutor.__new__(concurrent.futures.ProcessPoolExecutor)
    pool._executor_manager_thread = manager
    pool._call_queue = type("CallQueue", (), {"_reader": _Reader()})()
    return pool


def test_a_broken_pool_whose_manager_ends_by_itself_is_left_to_it(monkeypatch):
    # Pythons with the fix close the pipe in the manager thread: closing it here too raced
    # with that ("OSError: Bad file descriptor" from the pool's thread)
    from gpuqueens import runner

    monkeypatch.setattr(runner, "BROKEN_POOL_MANAGER_SECONDS", 0.05)
    ended = threading.Thread(target=lambda: None)
    ended.start()
    pool = _broken_pool(ended)
    runner._let_broken_pool_end(pool)
    assert not pool._call_queue._reader.closed

    release = threading.Event()
    stuck = threading.Thread(target=release.wait, daemon=True)   # Python 3.10's manager
    stuck.start()
    pool = _broken_pool(stuck)
    try:
        runner._let_broken_pool_end(pool)
        assert pool._call_queue._reader.closed
    finally:
        release.set()
