"""The options every counting call passes on to :func:`gpuqueens.runner.run_units`, checked
before any work, and what an executor can do at once."""

from __future__ import annotations

import concurrent.futures
import os

from ._checks import check_int
from .progress import check_progress

__all__ = ["check_executor", "check_run_options", "executor_workers"]


def check_executor(executor: object) -> None:
    """Refuse an ``executor=`` that is neither ``None`` nor an object with a ``submit`` method,
    and a Dask ``Client`` itself (its futures are Dask's: ``client.get_executor()`` is the
    executor).

    >>> check_executor(None)
    >>> check_executor("pool")
    Traceback (most recent call last):
    ...
    TypeError: executor must be a concurrent.futures.Executor (an object with a submit method) or None, not str ('pool')
    """
    if isinstance(executor, type):
        raise TypeError(f"executor must be an executor object, such as {executor.__name__}(4), "
                        f"not the class {executor.__name__}")
    if type(executor).__module__.split(".")[0] == "distributed" and callable(getattr(executor, "get_executor", None)):
        raise TypeError("executor takes a concurrent.futures.Executor: for a Dask Client, "
                        "pass client.get_executor()")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError("executor must be a concurrent.futures.Executor (an object with a submit "
                        f"method) or None, not {type(executor).__name__} ({executor!r})")


def check_run_options(*, executor: object = None, progress: object = None,
                      recheck: object = 1) -> int:
    """Check the options every counting call passes on to :func:`~gpuqueens.runner.run_units`;
    return ``recheck``.

    A problem's public call runs this first, so that a bad option is refused before any
    work (planning included), not when the first unit is handed out.

    >>> check_run_options(executor=None, progress=True, recheck=2)
    2
    >>> check_run_options(recheck=-1)
    Traceback (most recent call last):
    ...
    ValueError: recheck must be at least 0, got -1
    """
    check_executor(executor)
    check_progress(progress)
    return check_int("recheck", recheck, low=0)


def executor_workers(executor: concurrent.futures.Executor | None) -> int:
    """How many units the executor can solve at once, as well as can be told (1 for None)."""
    if executor is None:
        return 1
    workers = getattr(executor, "_max_workers", None)  # ThreadPool/ProcessPoolExecutor
    if isinstance(workers, int) and workers > 0:
        return workers
    client = getattr(executor, "_client", None)  # distributed's ClientExecutor
    if client is not None:
        try:
            threads = sum(client.nthreads().values())
            if threads > 0:
                return threads
        except Exception:
            pass
    return os.cpu_count() or 1
