"""N-Queens: how many ways n queens can share an n×n board without attacking each other.

>>> count(8)
92
>>> count(8, unique=True)
12
"""

from __future__ import annotations

import concurrent.futures
import html
import os
import time
from dataclasses import dataclass

from ..._checks import check_board_size
from ...runner import run_units
from ...ledger import stored_job
from ...workers import check_workers, choose_backend, executor_for
from .plan import Plan, plan_for, solve_unit, work_units

__all__ = ["NQueensResult", "count", "nqueens"]


@dataclass(frozen=True)
class NQueensResult:
    """The outcome of one count: both numbers, where they were computed, and how long it took."""

    n: int
    total: int
    unique: int
    backend: str
    device: str
    seconds: float

    def __str__(self) -> str:
        return (f"n={self.n}: {self.total:,} solutions, {self.unique:,} unique "
                f"[{self.backend} on {self.device}, {self.seconds:.3f} s]")

    def _repr_html_(self) -> str:
        cells = [("n", self.n), ("total", f"{self.total:,}"), ("unique", f"{self.unique:,}"),
                 ("backend", self.backend), ("device", self.device), ("seconds", f"{self.seconds:.3f}")]
        head = "".join(f"<th>{html.escape(k)}</th>" for k, _ in cells)
        body = "".join(f"<td>{html.escape(str(v))}</td>" for _, v in cells)
        return f"<table><tr>{head}</tr><tr>{body}</tr></table>"


def _small_board(n: int) -> tuple[int, int] | None:
    """Boards too small for the prefix search: n=1 has one solution, n=2 and n=3 none."""
    return {1: (1, 1), 2: (0, 0), 3: (0, 0)}.get(n)


#: From this n on, a count is long enough to gain from worker processes (on the CPU one
#: takes 0.2-0.3 s to start; on the GPU also CuPy and a CUDA context, about a second or
#: two): on the CPU n=16 takes ~3.4 s on one core (n=15 ~0.5 s); on an H100 n=21 takes
#: ~58 s (n=20 ~8 s, in only 4 units). Smaller counts stay in this process.
POOL_MIN_N = {"cpu": 16, "gpu": 21}


def _resumed_plan(checkpoint, n: int) -> Plan | None:
    """A checkpoint keeps the plan it was started with, whichever backend resumes it."""
    job = stored_job(checkpoint) if checkpoint is not None else None
    plan = Plan.from_job(job) if job else None
    return plan if plan is not None and plan.n == n else None


def nqueens(
    n: int,
    *,
    backend: str | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    workers: int | None = None,
) -> NQueensResult:
    """Count the solutions of the n-queens problem, total and unique, in one search.

    * ``backend``: ``"auto"`` (the GPU when CuPy and a usable CUDA device are there, else
      the CPU with one warning), ``"gpu"``, ``"cpu"``, or ``None`` for the
      ``GPUQUEENS_BACKEND`` environment variable, which itself defaults to ``"auto"``.
    * ``checkpoint``: a SQLite file that records each finished work unit; rerun the same
      call after a crash and it resumes where it stopped (on either backend: the run keeps
      the unit plan it was started with).
    * ``workers``: how many processes solve the work units. ``None`` (the default): for a
      long count (n >= 16 on the CPU, n >= 21 on the GPU), every usable core, or one process
      per visible GPU (``CUDA_VISIBLE_DEVICES`` respected), else this process only; ``1``:
      this process only; ``k``: k worker processes (on the GPU pinned to the visible GPUs
      in turn), this process coordinating. Scripts must keep their top-level code
      under ``if __name__ == "__main__":``, since worker processes import the main module.
    * ``executor``: instead of ``workers``, any :class:`concurrent.futures.Executor` (a
      process pool with any start method, a Dask cluster's) to spread the work units.
    * ``progress``: show a progress bar (``None``: when stderr is a terminal or a notebook).

    n must be an integer from 1 to 32 (``gpuqueens.MAX_N``: rows are 32-bit words).

    >>> result = nqueens(6, backend="cpu")
    >>> result.total, result.unique, result.backend
    (4, 1, 'cpu')
    """
    n = check_board_size(n)
    workers = check_workers(workers, executor)
    start = time.perf_counter()
    # CUDA is probed in this process only if the GPU work would run here (fork safety)
    used = choose_backend(backend, workers=workers, executor=executor,
                          large_on_gpu=n >= POOL_MIN_N["gpu"])
    small = _small_board(n)
    plan = None if small is not None else _resumed_plan(checkpoint, n) or plan_for(n, used)
    with executor_for(used, workers=workers, executor=executor, large=n >= POOL_MIN_N[used],
                      units=plan.unit_count if plan else 0) as chosen:
        if plan is None:
            total, unique = small
        else:
            results = run_units(
                work_units(plan, used), chosen.solver(solve_unit), job=plan.job(),
                executor=chosen.executor, checkpoint=checkpoint, progress=progress,
                description=f"n={n} [{used}]",
            )
            total = sum(r[0] for r in results.values())
            unique = sum(r[1] for r in results.values())
        device = chosen.describe()
    return NQueensResult(n, total, unique, used, device, time.perf_counter() - start)


def count(
    n: int,
    *,
    unique: bool = False,
    backend: str | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    workers: int | None = None,
) -> int:
    """The number of n-queens solutions; with ``unique=True``, of classes under the 8 symmetries.

    Options as in :func:`nqueens`.

    >>> count(1), count(2), count(3), count(4), count(10)
    (1, 0, 0, 2, 724)
    >>> count(10, unique=True)
    92
    """
    if not isinstance(unique, bool):
        raise TypeError(f"unique must be True or False, not {unique!r}")
    result = nqueens(n, backend=backend, checkpoint=checkpoint, executor=executor, progress=progress,
                     workers=workers)
    return result.unique if unique else result.total
