"""Small picklable tasks for worker processes in tests (a module of its own, so that a
spawned worker imports only this, not a whole test module)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def meet(folder: str, expected: int, timeout: float = 120.0) -> int:
    """Wait until ``expected`` different processes have called this, then return this pid.

    A worker busy here cannot take another task, so ``expected`` tasks submitted to a pool
    of ``expected`` workers are certain to run in ``expected`` different processes.
    """
    here = Path(folder)
    here.mkdir(parents=True, exist_ok=True)
    (here / str(os.getpid())).touch()
    deadline = time.monotonic() + timeout
    while len(list(here.iterdir())) < expected:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(list(here.iterdir()))} of {expected} processes arrived")
        time.sleep(0.01)
    return os.getpid()


def meet_on_gpu(folder: str, expected: int) -> tuple[int, str, int]:
    """As :func:`meet`, and say where CUDA puts this process: ``(pid, CUDA_VISIBLE_DEVICES,
    PCI bus id of its device 0)``."""
    import cupy

    pid = meet(folder, expected)
    bus = cupy.cuda.runtime.getDeviceProperties(0)["pciBusID"]
    return pid, os.environ.get("CUDA_VISIBLE_DEVICES", ""), int(bus)


def malloc_tuned_here() -> tuple[int, str | None, bool]:
    """``(pid, MALLOC_TRIM_THRESHOLD_, whether gpuqueens tuned malloc in this process)``."""
    from gpuqueens import worker_setup

    return os.getpid(), os.environ.get("MALLOC_TRIM_THRESHOLD_"), worker_setup._malloc_done == (os.getpid(), True)


def die(code: int = 1) -> None:
    """End this process at once, as a crash or the out-of-memory killer would."""
    os._exit(code)


def square(x: int) -> int:
    return x * x


def fail(message: str) -> None:
    raise ValueError(message)


def meet_and_report_malloc(payload: tuple[str, int]) -> tuple[int, ...]:
    """A unit solver: :func:`meet`, then ``(1 if malloc was tuned in this process else 0, pid)``."""
    from gpuqueens import worker_setup

    pid = meet(*payload)
    return (int(worker_setup._malloc_done == (pid, True)), pid)


def large_array_in_heap(payload: object) -> tuple[int, ...]:
    """A unit solver: ``keep_large_blocks()`` (1 if it was done), then whether a new 256 MiB
    array lies in the heap (1) rather than in a mapping of its own (0), and the pid."""
    import numpy as np

    from gpuqueens import worker_setup

    kept = worker_setup.keep_large_blocks()
    array = np.empty(256 << 20, np.uint8)
    with open("/proc/self/maps") as maps:
        heaps = [[int(end, 16) for end in line.split()[0].split("-")]
                 for line in maps if line.rstrip().endswith("[heap]")]
    in_heap = any(low <= array.ctypes.data < high for low, high in heaps)
    return int(kept), int(in_heap), os.getpid()


def sleep_unless_in(pid: int, seconds: float) -> None:
    """Sleep, except in process ``pid`` (so that a test's own process is never kept busy)."""
    if os.getpid() != pid:
        time.sleep(seconds)


_met_in: int | None = None


def solve_unit_after_meeting(payload):
    """N-Queens' unit solver, but each process first waits (once) until ``MEET_COUNT``
    processes have arrived in the folder ``MEET_FOLDER``: then every worker of a pool of
    that size is certain to solve units."""
    global _met_in
    from gpuqueens.problems.nqueens.plan import solve_unit

    if _met_in != os.getpid():
        meet(os.environ["MEET_FOLDER"], int(os.environ["MEET_COUNT"]))
        _met_in = os.getpid()
    return solve_unit(payload)


def environment_variable(name: str) -> str | None:
    """This process's value of ``name`` (``os.environ.get`` itself would be pickled together
    with the caller's ``os.environ``)."""
    return os.environ.get(name)


def blas_threads_here(payload: object) -> tuple[int, ...]:
    """A unit solver: the most threads any BLAS library loaded here may use, and the pid."""
    import numpy as np
    from threadpoolctl import threadpool_info

    np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded and used
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return max(blas, default=0), os.getpid()
