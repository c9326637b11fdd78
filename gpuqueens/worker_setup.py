"""What a worker process does before its first unit, whoever started it.

:class:`WorkerSolve` wraps a problem's unit solver for other processes (gpuqueens' own
pool, a process pool, Dask): once per process it raises glibc's malloc thresholds
(:func:`tune_malloc`), lets BLAS use one thread (:func:`one_blas_thread`) and, on the
GPU, checks that CUDA can work in the process (not forked from a process with CUDA
initialised; a usable device), so that a worker fails with a message rather than a CUDA
error from deep inside. Work whose arrays are hundreds of MiB
raises the thresholds further in worker processes (:func:`keep_large_blocks`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .backends import resolve_backend
from .glibc import glibc_function

__all__ = ["WorkerSolve", "prepare_process", "tune_malloc", "keep_large_blocks", "one_blas_thread",
           "blas_on_one_thread"]


#: glibc mallopt parameters and the values set in worker processes: glibc's own dynamic
#: maxima on 64-bit systems (its adaptive mmap threshold never grows past 32 MiB).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
TRIM_THRESHOLD_BYTES, MMAP_THRESHOLD_BYTES = 64 << 20, 32 << 20


def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt``, or ``None`` elsewhere (not Linux, or musl)."""
    mallopt = glibc_function("mallopt")
    if mallopt is not None:
        mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


def tune_malloc() -> bool:
    """Keep freed memory up to 64 MiB for reuse and serve blocks below 32 MiB from the heap
    (glibc only; returns whether it was done).

    The NumPy search allocates and frees arrays of a few MiB at a high rate. With glibc's
    defaults many of them are fresh ``mmap`` s, and with a small trim threshold (Dask's
    nanny sets ``MALLOC_TRIM_THRESHOLD_=65536`` for its workers, which also freezes the
    mmap threshold at 128 KiB) every one is: the pages are faulted in and zeroed again and
    again. Measured on 2 busy cores (a process solving four n=17 CPU units, medians of 5):
    9.3 s with Dask's setting, 5.4 s with glibc's defaults, 3.8-3.9 s after this call, the
    same peak memory (bench/dask_malloc.py measures it in Dask workers).
    """
    mallopt = _mallopt()
    return mallopt is not None and bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
                                        and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))


#: The thresholds of :func:`keep_large_blocks`, for arrays of hundreds of MiB.
LARGE_MMAP_THRESHOLD_BYTES, LARGE_TRIM_THRESHOLD_BYTES = 1 << 30, (1 << 31) - 1


def keep_large_blocks() -> bool:
    """In a worker process (one that :func:`prepare_process` tuned), serve blocks below
    1 GiB from the heap too and keep the freed memory for reuse; in any other process,
    nothing (the user's own process is left as it is). Returns whether it was done (glibc
    only, and only where glibc accepts a threshold that high).

    For work whose temporaries are hundreds of MiB, which glibc otherwise maps afresh and
    unmaps on every free, so that the kernel zeroes their pages again on each first touch:
    the matchstick table's half sweeps (7×7 on 2 cores: 2.1 million minor page faults and
    173 of 616 CPU seconds in the kernel with glibc's defaults; 190,000 and 18 of 479 in a
    worker after this call, 386 s instead of 531 s). The worker's memory then stays at its
    peak until it ends.
    """
    if _malloc_done != (os.getpid(), True):
        return False
    mallopt = _mallopt()
    return mallopt is not None and bool(mallopt(M_MMAP_THRESHOLD, LARGE_MMAP_THRESHOLD_BYTES)
                                        and mallopt(M_TRIM_THRESHOLD, LARGE_TRIM_THRESHOLD_BYTES))


def one_blas_thread() -> None:
    """Let BLAS (NumPy's matrix products) use one thread in this process, as one of a set of
    worker processes that already uses the cores (Dask's nanny does the same through the
    environment).

    The matchstick join multiplies in chunks of 2^18 pairs
    (:mod:`.problems.matchsticks.pair_blocks`); with two such workers each running BLAS on
    two threads, the 6×7 table took 38 s and 68 s of CPU on 2 cores, against 19 s before
    the chunks (measured 2026-11-24).
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


_blas_lock = threading.Lock()
_blas_holders = 0                 # blocks inside blas_on_one_thread now, in any thread
_blas_limiter: Any = None         # what restores the setting found when the first entered


@contextlib.contextmanager
def blas_on_one_thread() -> Iterator[None]:
    """BLAS on one thread inside the block, and as it was after: for small matrix products
    in any process, this one included.

    The matchstick joins multiply in chunks of 2^18 pairs, too small for BLAS threads to
    gain, and while another process keeps a core busy those threads wait by spinning: the
    6×6 table in this process took 14.8 s (14.5 s of CPU) with two BLAS threads against 3.1
    s with one, on 2 cores beside one busy process (2026-11-25); on 2 idle cores two threads
    gain a little (3.5 s against 4.0 s), which is not worth the risk. Blocks in several threads
    at once share one limit, and the first setting comes back when the last one leaves
    (OpenBLAS 0.3.31 ignores a change made outside the main thread once the main thread has
    made one: the limit is sure in the main thread only).

    >>> from threadpoolctl import threadpool_info
    >>> with blas_on_one_thread():
    ...     all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
    True
    """
    global _blas_holders, _blas_limiter
    from threadpoolctl import threadpool_limits

    with _blas_lock:
        if _blas_holders == 0:
            _blas_limiter = threadpool_limits(limits=1, user_api="blas")
        _blas_holders += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_holders -= 1
            if _blas_holders == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


_prepared: set[tuple[int, str]] = set()  # (pid, backend): inherited by forks, so keyed by pid
_malloc_done: tuple[int, bool] | None = None  # (pid, whether tune_malloc succeeded there)


def prepare_process(backend: str, *, worker: bool) -> None:
    """Once per process and backend, before its first unit: in a worker process, tune malloc
    and let BLAS use one thread; on the GPU, check that CUDA can work here (raises
    ``CUDAForkError`` or ``BackendUnavailableError`` with a message, never a CUDA error from
    deep inside)."""
    global _malloc_done
    key = (os.getpid(), backend)
    if key in _prepared:
        return
    if worker and (_malloc_done is None or _malloc_done[0] != os.getpid()):
        _malloc_done = (os.getpid(), tune_malloc())
        one_blas_thread()
    if backend == "gpu":
        # the probe, in this process, where the GPU work runs; in a fork of a process that
        # had initialised CUDA it raises CUDAForkError itself
        resolve_backend("gpu")
    _prepared.add(key)


@dataclass(frozen=True)
class WorkerSolve:
    """A unit solver for other processes (or threads): prepares the process, then solves.

    ``coordinator`` is the pid of the process that runs the count; only other processes
    are tuned (this one is the caller's, left as it is).
    """

    solve: Callable[[Any], tuple[int, ...]]
    backend: str
    coordinator: int

    def __call__(self, payload: Any) -> tuple[int, ...]:
        prepare_process(self.backend, worker=os.getpid() != self.coordinator)
        return self.solve(payload)
