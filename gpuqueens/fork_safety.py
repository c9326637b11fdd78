"""CUDA and ``fork``: a process forked after its parent initialised CUDA cannot use CUDA.

CUDA's state does not survive ``fork``: in a child forked from a process that has called
into CUDA, every CUDA call fails (``cudaErrorInitializationError``). A
``ProcessPoolExecutor`` with Linux's default start method (``fork`` up to Python 3.13)
makes exactly such children. gpuqueens therefore

* initialises CUDA only in a process that runs GPU work itself: a process that hands work
  to other processes learns about the GPU from a probe in a fresh interpreter
  (:func:`gpuqueens.backends.gpu_report`) and stays free of CUDA, so any executor it is
  given works, whatever its start method;
* refuses at once, with :class:`CUDAForkError`, an executor that would fork workers from a
  process where CUDA is already initialised (:func:`check_executor`);
* checks in each worker, before any CUDA call, whether the worker was forked from such a
  process (:func:`raise_if_forked_after_cuda`), for executors it cannot look into.

"Initialised" means gpuqueens' own probe ran in this process, or CUDA's driver says it
was initialised (``cuCtxGetCurrent`` answers ``CUDA_ERROR_NOT_INITIALIZED`` until
``cuInit``); the driver is asked only when CuPy is already imported.
"""

from __future__ import annotations

import concurrent.futures
import os
import sys

__all__ = ["CUDAForkError", "note_cuda_initialised", "cuda_initialised_here",
           "forked_after_cuda", "raise_if_forked_after_cuda", "check_executor",
           "executor_start_method"]

_ADVICE = (
    "Start the pool's processes with 'spawn' or 'forkserver' instead, e.g. "
    "ProcessPoolExecutor(max_workers, mp_context=multiprocessing.get_context('spawn')), "
    "or let gpuqueens start its own worker processes (workers=k instead of executor=)."
)


class CUDAForkError(RuntimeError):
    """Worker processes forked from a process that had initialised CUDA cannot use CUDA."""


#: The process in which gpuqueens' own probe initialised CUDA (a pid; inherited by forks).
_initialised_in: int | None = None
#: Set in a child by the fork hook when its parent had CUDA initialised at the fork.
_forked_after_cuda = False
_cuda_at_fork = False


def note_cuda_initialised() -> None:
    """Record that this process is about to initialise CUDA (called by the in-process probe)."""
    global _initialised_in
    _initialised_in = os.getpid()


def _driver_initialised() -> bool:
    cupy = sys.modules.get("cupy")
    if cupy is None:  # CuPy not imported: nothing here has called into CUDA through it
        return False
    try:
        cupy.cuda.driver.ctxGetCurrent()  # CUDA_ERROR_NOT_INITIALIZED before cuInit
    except Exception:
        return False
    return True


def cuda_initialised_here() -> bool:
    """Whether CUDA has been initialised in this process (or its state inherited by a fork)."""
    return _initialised_in is not None or _forked_after_cuda or _driver_initialised()


def forked_after_cuda() -> bool:
    """Whether this process was forked from one that had already initialised CUDA."""
    return _forked_after_cuda or (_initialised_in is not None and _initialised_in != os.getpid())


def raise_if_forked_after_cuda() -> None:
    """Raise :class:`CUDAForkError` in a worker that CUDA cannot work in; call before any CUDA use."""
    if forked_after_cuda():
        raise CUDAForkError(
            f"this worker process (pid {os.getpid()}) was forked from a process that had already "
            f"initialised CUDA, so CUDA cannot work in it. {_ADVICE}"
        )


def _before_fork() -> None:
    global _cuda_at_fork
    try:
        _cuda_at_fork = cuda_initialised_here()
    except Exception:  # a fork hook must never break a fork
        _cuda_at_fork = _initialised_in is not None


def _after_fork_in_child() -> None:
    global _forked_after_cuda
    _forked_after_cuda = _cuda_at_fork


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def executor_start_method(executor: concurrent.futures.Executor) -> str | None:
    """``"fork"``, ``"spawn"`` or ``"forkserver"`` for a ``ProcessPoolExecutor``; else ``None``."""
    if not isinstance(executor, concurrent.futures.ProcessPoolExecutor):
        return None
    context = getattr(executor, "_mp_context", None)  # set by ProcessPoolExecutor since 3.7
    try:
        return context.get_start_method() if context is not None else None
    except Exception:
        return None


def check_executor(executor: concurrent.futures.Executor) -> None:
    """Refuse at once a process pool that would fork GPU workers from this CUDA-initialised process.

    A pool whose processes are already running is let through: they may have been forked
    before CUDA was initialised, and each worker checks itself before its first CUDA call.
    """
    if executor_start_method(executor) != "fork" or not cuda_initialised_here():
        return
    if getattr(executor, "_processes", None):
        return
    raise CUDAForkError(
        "CUDA is already initialised in this process, so worker processes that a "
        f"ProcessPoolExecutor forks from it cannot use CUDA. {_ADVICE}"
    )
