"""Worker processes on the CPU: the ``workers`` argument, the pool, and the defaults.

The GPU side (pinning, fork safety) is in test_workers_gpu.py and test_fork_safety.py.
"""

from __future__ import annotations

import concurrent.futures
import functools
import multiprocessing
import multiprocessing.spawn
import os
import subprocess
import sys

import pytest
import worker_tasks
from oeis import total, unique

import gpuqueens
import gpuqueens.problems.nqueens as nqueens_api
from gpuqueens import workers
from gpuqueens.cli import main
from gpuqueens.problems.nqueens import plan


@pytest.fixture
def small_long_counts(monkeypatch):
    """Count n=12 as a "long" CPU count in 16 units, so defaults start pools quickly."""
    monkeypatch.setitem(nqueens_api.POOL_MIN_N, "cpu", 12)
    monkeypatch.setitem(plan.FIRST_SPLIT_N, "cpu", 11)


# --- the cores there are ---------------------------------------------------------------

def test_usable_cores_prefers_process_cpu_count(monkeypatch):
    monkeypatch.setattr(os, "process_cpu_count", lambda: 3, raising=False)
    assert workers.usable_cores() == 3


def test_usable_cores_falls_back_to_the_affinity_mask_then_cpu_count(monkeypatch):
    monkeypatch.delattr(os, "process_cpu_count", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 5}, raising=False)
    assert workers.usable_cores() == 2
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 7)
    assert workers.usable_cores() == 7


# --- the argument ----------------------------------------------------------------------

@pytest.mark.parametrize("bad,error", [(True, TypeError), (2.0, TypeError), ("2", TypeError),
                                       (0, ValueError), (-3, ValueError)])
def test_bad_workers_are_refused(bad, error):
    with pytest.raises(error, match="workers"):
        gpuqueens.count(8, backend="cpu", workers=bad)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_a_small_board_with_an_executor_does_not_claim_its_workers(backend, no_pools):
    # n < 4 is counted here from every arrangement: nothing reaches the executor
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = gpuqueens.nqueens(2, backend=backend, executor=pool)
    assert (result.total, result.backend) == (0, backend)
    assert result.device == "this process (n < 4 needs no search; the executor was not used)"


def test_workers_and_executor_together_are_refused(no_pools):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="not both: workers=2 starts gpuqueens' own"):
            gpuqueens.count(8, backend="cpu", workers=2, executor=pool)
        with pytest.raises(ValueError, match="not both: workers=1 runs the work in this process"):
            gpuqueens.nqueens(8, backend="cpu", workers=1, executor=pool)
        assert gpuqueens.count(8, backend="cpu", workers=None, executor=pool) == 92


def test_cli_workers_option(capsys):
    assert main(["nqueens", "10", "--backend", "cpu", "--workers", "2"]) == 0
    assert "total 724" in capsys.readouterr().out
    for bad in ("0", "two"):
        with pytest.raises(SystemExit) as exit_info:
            main(["nqueens", "10", "--backend", "cpu", "--workers", bad])
        assert exit_info.value.code == 2
        assert "--workers" in capsys.readouterr().err


# --- where the units run by default ------------------------------------------------------

@pytest.mark.parametrize("n", [1, 8, 13, 15])
def test_small_counts_stay_in_this_process(no_pools, monkeypatch, n):
    monkeypatch.setattr(workers, "usable_cores", lambda: 64)
    assert gpuqueens.count(n, backend="cpu") == total(n)


def test_default_cpu_run_uses_every_core(pools, small_long_counts, monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 3)
    result = gpuqueens.nqueens(12, backend="cpu", progress=False)
    assert (result.total, result.unique) == (total(12), unique(12))
    assert len(pools) == 1, "the default run started no worker pool"
    pool = pools[0]
    assert pool._max_workers == 3 and pool._pool._max_workers == 3  # one per core
    assert result.device.endswith(", 3 processes")


@pytest.mark.skipif(workers.usable_cores() < 2, reason="one core: the default is this process")
def test_with_several_cores_the_default_starts_more_processes(tmp_path):
    with workers.executor_for("cpu", large=True, units=2) as chosen:
        assert chosen.processes == 2 and chosen.executor is not None
        pids = {f.result(timeout=300) for f in [chosen.executor.submit(worker_tasks.meet, str(tmp_path), 2)
                                                 for _ in range(2)]}
    assert len(pids) == 2 and os.getpid() not in pids  # this process only coordinates


def test_the_default_fits_in_memory(no_pools, monkeypatch):
    # e.g. a matchstick table of ~12 GB a process: 20 GB free and 8 cores give one
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)
    monkeypatch.setattr(workers, "available_memory", lambda: 20e9)
    with workers.executor_for("cpu", large=True, units=72, memory_per_worker=12e9) as chosen:
        assert chosen.executor is None and chosen.processes == 1
    monkeypatch.setattr(workers, "available_memory", lambda: 30e9)
    assert workers._process_count("cpu", None, large=True, units=72, memory_per_worker=12e9) == 2
    assert workers._process_count("cpu", 4, large=True, units=72, memory_per_worker=12e9) == 4  # asked for


def test_windows_pools_stay_within_61_processes(monkeypatch):
    # ProcessPoolExecutor refuses more on Windows ("max_workers must be <= 61"): a 64-core
    # machine's default run ended with that error
    monkeypatch.setattr(workers, "usable_cores", lambda: 64)
    assert workers._process_count("cpu", None, large=True, units=4096, memory_per_worker=None) == 64
    windows = functools.partial(workers.max_pool_processes, "win32")
    monkeypatch.setattr(workers, "max_pool_processes", windows)
    assert workers._process_count("cpu", None, large=True, units=4096, memory_per_worker=None) == 61
    with pytest.warns(UserWarning, match="workers=64: a process pool here holds at most 61 processes"):
        assert workers._process_count("cpu", 64, large=True, units=4096, memory_per_worker=None,
                                      warn=True) == 61


def test_the_default_follows_the_cores_there_are(pools, small_long_counts, monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 1)
    assert gpuqueens.count(12, backend="cpu") == total(12)
    assert pools == []


def test_cpu_workers_beyond_the_cores_are_capped_with_a_warning(pools, monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 2)
    with pytest.warns(UserWarning, match="workers=99999 is more than the 2 usable cores") as said:
        result = gpuqueens.nqueens(15, backend="cpu", workers=99999)
    assert result.total == total(15) and result.device.endswith(", 2 processes")
    assert len(said) == 1 and len(pools) == 1
    assert said[0].filename == __file__  # the caller's line, not a context manager's


def test_workers_capped_to_one_core_say_that_this_process_runs_the_count(pools, monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 1)
    with pytest.warns(UserWarning, match="1 usable core of this machine; this process runs"):
        result = gpuqueens.nqueens(15, backend="cpu", workers=2)
    assert result.total == total(15) and pools == []


def test_explicit_workers_for_a_small_count(pools):
    # the user asked for it; but never more processes than units (n=10 has one)
    assert gpuqueens.count(10, backend="cpu", workers=4) == 724
    assert pools == []


def test_no_pool_inside_a_worker_process(no_pools, small_long_counts, monkeypatch):
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)
    assert gpuqueens.count(12, backend="cpu") == total(12)


def test_a_count_while_a_worker_imports_the_main_module_is_refused(small_long_counts, monkeypatch):
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)
    with pytest.raises(RuntimeError, match="__name__"):
        gpuqueens.count(12, backend="cpu")
    with pytest.raises(RuntimeError, match="__name__"):
        gpuqueens.count(10, backend="cpu", workers=2)
    assert gpuqueens.count(10, backend="cpu") == 724  # no workers: harmless
    with concurrent.futures.ProcessPoolExecutor(2) as pool:  # the user's own pool too
        with pytest.raises(RuntimeError, match="no process pool"):
            gpuqueens.count(10, backend="cpu", executor=pool)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # threads: harmless
        assert gpuqueens.count(10, backend="cpu", executor=pool) == 724


def test_unguarded_script_runs_once(tmp_path):
    # gpuqueens' worker processes do not import the main module, so a script without an
    # `if __name__ == "__main__":` guard runs its top level once, not once per worker
    script = tmp_path / "unguarded.py"
    script.write_text("import gpuqueens\nprint('top level')\n"
                      "print(gpuqueens.count(12, backend='cpu', workers=2))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["top", "level", str(total(12))]


def test_unguarded_script_with_its_own_spawn_pool_says_what_to_do(tmp_path):
    # the user's pool does import the main module: each new process refuses the count,
    # and the error the script ends with says what may have ended them
    script = tmp_path / "unguarded_pool.py"
    script.write_text("import multiprocessing, concurrent.futures, gpuqueens\n"
                      "pool = concurrent.futures.ProcessPoolExecutor(\n"
                      "    1, mp_context=multiprocessing.get_context('spawn'))\n"
                      "print(gpuqueens.count(12, backend='cpu', executor=pool))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and done.stdout == ""
    assert "Keep the script's top-level code under" in done.stderr
    if sys.version_info >= (3, 11):  # Python 3.10 prints no exception notes
        assert done.stderr.rstrip().endswith('which every new process of the pool runs again)')


def test_other_spawned_processes_still_import_the_main_module():
    # only processes named as gpuqueens workers skip it: a user's own pools are untouched
    from gpuqueens import worker_pool

    worker_pool._worker_context()  # installs the filter
    prepare = multiprocessing.spawn.get_preparation_data
    assert getattr(prepare, "gpuqueens_without_main", False)
    main_file = getattr(sys.modules["__main__"], "__file__", None)
    if main_file is None:
        pytest.skip("this interpreter's main module has no file")
    users = prepare("SpawnProcess-1")
    ours = prepare(f"{worker_pool.WORKER_NAME}-SpawnProcess-2")
    assert "init_main_from_path" in users or "init_main_from_name" in users
    assert "init_main_from_path" not in ours and "init_main_from_name" not in ours


# --- checkpoints and resuming with workers -------------------------------------------------

def test_checkpointed_run_resumed_with_other_workers(small_long_counts, monkeypatch, tmp_path):
    checkpoint = tmp_path / "n12.sqlite"
    real, calls = nqueens_api.solve_unit, []

    def dies_after_five_units(payload):
        calls.append(1)
        if len(calls) > 5:
            raise RuntimeError("power cut")
        return real(payload)

    monkeypatch.setattr(nqueens_api, "solve_unit", dies_after_five_units)
    with pytest.raises(RuntimeError, match="power cut"):
        gpuqueens.count(12, backend="cpu", workers=1, checkpoint=checkpoint, progress=False)
    monkeypatch.setattr(nqueens_api, "solve_unit", real)
    resumed = gpuqueens.nqueens(12, backend="cpu", workers=2, checkpoint=checkpoint, progress=False)
    assert (resumed.total, resumed.unique) == (total(12), unique(12))
    assert "2 processes" in resumed.device
    again = gpuqueens.nqueens(12, backend="cpu", workers=1, checkpoint=checkpoint, progress=False)
    assert (again.total, again.unique) == (total(12), unique(12))


def test_a_resumed_count_with_one_unit_or_none_left_starts_no_pool(pools, small_long_counts, monkeypatch,
                                                                   tmp_path):
    # worker processes take about a second to start: not worth it for one unit or none
    monkeypatch.setattr(workers, "usable_cores", lambda: 3)
    checkpoint = tmp_path / "n12.sqlite"
    first = gpuqueens.nqueens(12, backend="cpu", checkpoint=checkpoint, progress=False)
    assert len(pools) == 1 and first.device.endswith(", 3 processes")
    for recheck in (0, 1):  # nothing left; nothing left but one unit solved again
        again = gpuqueens.nqueens(12, backend="cpu", checkpoint=checkpoint, progress=False,
                                  recheck=recheck)
        assert (again.total, again.unique) == (total(12), unique(12))
        assert len(pools) == 1 and "processes" not in again.device
    assert gpuqueens.runner.units_to_solve(plan.prefix_unit_keys(plan.plan_for(12, "cpu")),
                                           checkpoint, recheck=2) == 2


# --- the pool itself ---------------------------------------------------------------------

def test_pool_workers_are_separate_processes(tmp_path):
    with workers.WorkerPool(2) as pool:
        pids = {f.result(timeout=300) for f in [pool.submit(worker_tasks.meet, str(tmp_path), 2)
                                                 for _ in range(2)]}
    assert len(pids) == 2 and os.getpid() not in pids


def test_pool_results_and_errors():
    with workers.WorkerPool(1) as pool:
        squares = [pool.submit(worker_tasks.square, k) for k in range(10)]
        failed = pool.submit(worker_tasks.fail, "unit u3 is wrong")
        assert [f.result(timeout=300) for f in squares] == [k * k for k in range(10)]
        with pytest.raises(ValueError, match="unit u3 is wrong"):
            failed.result(timeout=300)
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(worker_tasks.square, 2)


def test_a_dead_worker_process_is_a_clear_error():
    with workers.WorkerPool(1) as pool:
        with pytest.raises(workers.WorkerProcessError, match="ended abruptly"):
            pool.submit(worker_tasks.die).result(timeout=300)


def test_an_exception_ends_the_worker_processes_at_once(monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)  # 3 processes even on 2 cores
    with pytest.raises(KeyboardInterrupt):
        with workers.executor_for("cpu", workers=3, large=True, units=10) as chosen:
            pool = chosen.executor
            tasks = [pool.submit(worker_tasks.sleep_unless_in, os.getpid(), 600) for _ in range(5)]
            processes = list(pool._pool._processes.values())
            assert len(processes) == 3
            raise KeyboardInterrupt  # as Ctrl-C in the coordinating process
    for process in processes:
        process.join(timeout=60)
    assert not any(process.is_alive() for process in processes)
    done, not_done = concurrent.futures.wait(tasks, timeout=60)
    assert not not_done  # cancelled, or failed with the ended process


@pytest.mark.skipif(not hasattr(os, "confstr") or "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""),
                    reason="glibc only")
def test_worker_processes_tune_malloc_and_this_one_is_left_alone(tmp_path):
    solve = workers.WorkerSolve(worker_tasks.meet_and_report_malloc, "cpu", os.getpid())
    with workers.WorkerPool(1) as pool:
        tuned, pid = pool.submit(solve, (str(tmp_path / "there"), 1)).result(timeout=300)
    assert (tuned, pid != os.getpid()) == (1, True)
    assert solve((str(tmp_path / "here"), 1)) == (0, os.getpid())  # the coordinating process


def test_worker_processes_let_blas_use_one_thread_and_this_one_is_left_alone():
    # a worker is one of about one process per core: BLAS threads on top of it only compete
    # (the matchstick join's chunked products: 6×7 table twice as slow on 2 cores)
    from threadpoolctl import threadpool_limits

    solve = workers.WorkerSolve(worker_tasks.blas_threads_here, "cpu", os.getpid())
    with threadpool_limits(limits=2, user_api="blas"):   # this process's own setting
        own = worker_tasks.blas_threads_here(None)[0]
        with workers.WorkerPool(1) as pool:
            threads, pid = pool.submit(solve, None).result(timeout=300)
        assert (threads, pid != os.getpid()) == (1, True)
        assert solve(None) == (own, os.getpid())   # the coordinating process: left as it is


def _blas_threads() -> int:
    return worker_tasks.blas_threads_here(None)[0]


@pytest.fixture
def two_blas_threads():
    """This process's BLAS on two threads for the test, then as it was; the thread count."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):
        if _blas_threads() < 2:
            pytest.skip("BLAS here has one thread only")
        yield _blas_threads()


def test_blas_on_one_thread_limits_the_block_and_restores_the_setting_after(two_blas_threads):
    from gpuqueens.worker_setup import blas_on_one_thread

    with blas_on_one_thread():
        assert _blas_threads() == 1
        with blas_on_one_thread():          # nested: still one, and the outer block too
            assert _blas_threads() == 1
        assert _blas_threads() == 1
    assert _blas_threads() == two_blas_threads


def test_blas_on_one_thread_in_several_threads_restores_when_the_last_one_leaves(two_blas_threads):
    import threading

    from gpuqueens.worker_setup import blas_on_one_thread

    def enter_and_leave():
        with blas_on_one_thread():
            pass

    with blas_on_one_thread():
        other = threading.Thread(target=enter_and_leave)
        other.start()
        other.join(timeout=60)
        assert _blas_threads() == 1         # the other thread left first: still one
    assert _blas_threads() == two_blas_threads


@pytest.mark.skipif(not hasattr(os, "confstr") or "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or "")
                    or not os.path.exists("/proc/self/maps"), reason="glibc on Linux only")
def test_keep_large_blocks_puts_large_arrays_in_a_workers_heap_only():
    # with glibc's defaults a 256 MiB array is a mapping of its own, whose pages the kernel
    # zeroes again each time; a worker that keeps large blocks serves it from its heap
    solve = workers.WorkerSolve(worker_tasks.large_array_in_heap, "cpu", os.getpid())
    with workers.WorkerPool(1) as pool:
        kept, in_heap, pid = pool.submit(solve, None).result(timeout=300)
    assert (kept, in_heap, pid != os.getpid()) == (1, 1, True)
    assert solve(None) == (0, 0, os.getpid())  # the coordinating process is left as it is
