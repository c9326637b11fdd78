"""N-Queens: how many ways n queens can share an n×n board without attacking each other.

>>> count(8)
92
>>> count(8, unique=True)
12
"""

from __future__ import annotations

import concurrent.futures
import html
import itertools
import json
import os
import time
from dataclasses import dataclass

import numpy as np

from ..._checks import check_board_size
from ..._version import __version__
from ...ledger import CheckpointError, canonical_json, check_checkpoint_path, stored_job
from ...runner import check_run_options, run_units, units_to_solve
from ...workers import check_workers, choose_backend, executor_for, planned_processes
from .estimate import warn_if_long_count
from .plan import (UNIT_RESULT_WIDTH, Plan, combine, plan_for, prefix_unit_keys, solve_unit,
                   work_units)

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


#: Boards below this size are too small for the prefix search (its cases need a corner and
#: two more rows); they are counted here by trying every arrangement.
SMALLEST_PLANNED_N = 4


def _small_board(n: int) -> tuple[int, int]:
    """``(total, unique)`` for n < :data:`SMALLEST_PLANNED_N`, from all n! arrangements.

    A board is the tuple of its queens' columns, row by row; a solution is counted as
    unique when it is the least of its 8 images.
    """
    def images(cols: tuple[int, ...]) -> list[tuple[int, ...]]:
        boards = [cols, tuple(cols.index(c) for c in range(n))]  # and its transpose
        for board in list(boards):
            boards += [board[::-1], tuple(n - 1 - c for c in board), tuple(n - 1 - c for c in board[::-1])]
        return boards

    solutions = [cols for cols in itertools.permutations(range(n))
                 if len({r + c for r, c in enumerate(cols)}) == n
                 and len({r - c for r, c in enumerate(cols)}) == n]
    unique = sum(1 for cols in solutions if cols == min(images(cols)))
    return len(solutions), unique


#: From this n on, a count is long enough to gain from worker processes (on the CPU one
#: takes 0.2-0.3 s to start; on the GPU also CuPy and a CUDA context, about a second or
#: two): on the CPU n=16 takes ~3.4 s on one core (n=15 ~0.5 s); on an H100 an earlier
#: kernel took ~58 s for n=21 and ~8 s for n=20. On the GPU the plan makes one prefix unit
#: up to n=21 (see :data:`.plan.FIRST_SPLIT_N`), so extra GPUs help from n=22 on. Smaller
#: counts stay in this process.
POOL_MIN_N = {"cpu": 16, "gpu": 21}


#: The backends a plan can be made for: a checkpoint started on either is resumed on either.
PLAN_BACKENDS = ("cpu", "gpu")


def _resumed_plan(checkpoint: str | None, n: int) -> Plan | None:
    """The plan a checkpoint of this n was started with, if it holds one.

    A checkpoint keeps the plan it was started with, whichever backend resumes it. Its
    stored job is not trusted as it stands: it must be exactly a plan this gpuqueens makes
    for n (on some backend), else the checkpoint is refused before any unit is built, so
    that a header claiming 0 or 10**12 units is neither believed nor acted on. ``None``
    when there is no checkpoint, or it holds another problem or n (opening it then
    refuses it, naming the difference).
    """
    job = stored_job(checkpoint) if checkpoint is not None else None
    if not job:
        return None
    known = {backend: plan_for(n, backend) for backend in PLAN_BACKENDS}
    plan = Plan.from_job(job)
    if plan is None:
        # a plan of this problem, format and n that does not read as one (a number edited
        # into Infinity or a word) is refused below with the rest; another run's, on opening
        fresh = known["cpu"].job()
        if any(job.get(name) != fresh[name] for name in ("problem", "format", "n")):
            return None
    elif plan.n != n:
        return None
    # canonical_json's form, but an edited Infinity or NaN is shown as it stands
    stored = json.dumps(job, sort_keys=True, separators=(",", ":"))
    for candidate in known.values():
        if canonical_json(candidate.job()) == stored:
            return candidate
    made = "; ".join(f"{canonical_json(p.job())} ({b})" for b, p in known.items())
    raise CheckpointError(
        f"checkpoint {checkpoint} holds an N-Queens plan that gpuqueens {__version__} does not "
        f"make for n={n}: {stored}; it makes {made}. Not trusted: use another checkpoint file, "
        "or delete this one to start over."
    )


def nqueens(
    n: int,
    *,
    backend: str | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    recheck: int = 1,
    workers: int | None = None,
) -> NQueensResult:
    """Count the solutions of the n-queens problem, total and unique, in one search.

    * ``backend``: ``"auto"`` (the GPU when CuPy and a usable CUDA device are there, else
      the CPU with one warning), ``"gpu"``, ``"cpu"``, or ``None`` for the
      ``GPUQUEENS_BACKEND`` environment variable, which itself defaults to ``"auto"``.
    * ``checkpoint``: a SQLite file that records each finished work unit; rerun the same
      call after a crash and it resumes where it stopped (on either backend: the run keeps
      the unit plan it was started with, if that is a plan this gpuqueens makes for n).
      A path that cannot hold a checkpoint, or a checkpoint that cannot be trusted, is
      refused with :class:`gpuqueens.CheckpointError` before any work.
    * ``workers``: how many processes solve the work units. ``None`` (the default): for a
      long count, every usable core (n >= 16), or one process per visible GPU
      (``CUDA_VISIBLE_DEVICES`` respected; from n = 22, the first n whose plan has more
      than one unit; one GPU: this process), else this process only; ``1``:
      this process only; ``k``: k worker processes (on the CPU at most one per usable
      core; on the GPU pinned to the visible GPUs in turn), this process coordinating.
      These workers do not import the main module, so a script needs no
      ``if __name__ == "__main__":`` guard (a pool of your own passed as ``executor`` may:
      see its start method).
    * ``executor``: instead of ``workers``, any :class:`concurrent.futures.Executor` (a
      process pool with any start method, a Dask cluster's) to spread the work units.
    * ``progress``: show a progress bar: ``True``, ``False`` or ``None`` (when stderr is a
      terminal or a notebook).
    * ``recheck``: with a checkpoint, how many work units to solve again, at random, and
      compare: that many of the stored ones when the run resumes, and of this run's own
      at its end. A result that differs refuses the checkpoint
      (:class:`gpuqueens.CheckpointError`, naming the unit and both results). By default
      (1) it costs one unit's time at each point; ``0`` turns it off. See
      :func:`gpuqueens.runner.run_units`.

    n must be an integer from 1 to 32 (``gpuqueens.MAX_N``: rows are 32-bit words). A count
    expected to take more than about an hour (from rates measured per backend, see
    :mod:`.estimate`) gives a :class:`gpuqueens.LongRunWarning` with the estimate before it
    starts.

    >>> result = nqueens(6, backend="cpu")
    >>> result.total, result.unique, result.backend
    (4, 1, 'cpu')
    """
    n = check_board_size(n)
    recheck = check_run_options(executor=executor, progress=progress, recheck=recheck)
    workers = check_workers(workers, executor)
    if checkpoint is not None:
        checkpoint = check_checkpoint_path(checkpoint)
    start = time.perf_counter()
    # CUDA is probed in this process only if the GPU work would run here (fork safety)
    used = choose_backend(backend, workers=workers, executor=executor,
                          large_on_gpu=n >= POOL_MIN_N["gpu"])
    small = n < SMALLEST_PLANNED_N
    plan = None if small else _resumed_plan(checkpoint, n) or plan_for(n, used)
    where = dict(workers=workers, executor=executor, large=n >= POOL_MIN_N[used])
    estimate = None
    if plan is not None:  # the estimate comes before anything is built or started
        estimate = warn_if_long_count(  # the run then watches its own pace against it
            n, used, planned_processes(used, **where, units=plan.unit_count), stacklevel=2)
    # no more processes than prefix units left to solve, which hold the work (the
    # symmetric unit is small): none for a resumed count with one or none left
    left = units_to_solve(prefix_unit_keys(plan), checkpoint, recheck) if plan is not None else 0
    with executor_for(used, **where, units=left) as chosen:
        if plan is None:
            if checkpoint is not None:  # no units, but the file is checked (or made) all the same
                run_units([], solve_unit, job={"problem": "nqueens", "n": n, "search": "every arrangement"},
                          checkpoint=checkpoint, recheck=recheck)
            total, unique = _small_board(n)
        else:
            results = run_units(
                work_units(plan, used), chosen.solver(solve_unit), job=plan.job(),
                executor=chosen.executor, checkpoint=checkpoint, progress=progress,
                description=f"n={n} [{used}]", recheck=recheck, result_width=UNIT_RESULT_WIDTH,
                estimate=estimate,
            )
            total, unique = combine(results)
        # a small board never reaches the executor's workers: its device is not theirs
        device = chosen.describe() if plan is not None or executor is None else (
            "this process (n < 4 needs no search; the executor was not used)")
    return NQueensResult(n, total, unique, used, device, time.perf_counter() - start)


def count(
    n: int,
    *,
    unique: bool = False,
    backend: str | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    recheck: int = 1,
    workers: int | None = None,
) -> int:
    """The number of n-queens solutions; with ``unique=True``, of classes under the 8 symmetries.

    Options as in :func:`nqueens`.

    >>> count(1), count(2), count(3), count(4), count(10)
    (1, 0, 0, 2, 724)
    >>> count(10, unique=True)
    92
    """
    if not isinstance(unique, (bool, np.bool_)):
        raise TypeError(f"unique must be True or False, not {unique!r}")
    result = nqueens(n, backend=backend, checkpoint=checkpoint, executor=executor,
                     progress=progress, recheck=recheck, workers=workers)
    return result.unique if bool(unique) else result.total
