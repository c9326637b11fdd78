"""The public matchstick functions: argument checks, backend choice, up-front estimates, and
the result table.

Every call checks its arguments and estimates its memory and time from the sizes
(:mod:`.costs`) before it builds anything: what cannot fit in memory is refused with a
``ValueError``, what will take longer than about an hour is announced with a
:class:`gpuqueens.LongRunWarning`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import html
import math
import numbers
import os
import reprlib
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
import dataclasses
from dataclasses import dataclass
from typing import Any

from ..._checks import check_int
from ...estimates import (LONG_RUN_SECONDS, LongRunWarning, available_memory, check_memory,
                          warn_if_long)
from ...ledger import check_checkpoint_path
from ...progress import check_progress
from ...runner import check_run_options, units_to_solve
from ...backends import requested_backend, resolve_backend
from ...workers import check_workers, choose_backend, executor_for, planned_processes
from .column_powers import count_by_column_powers
from .costs import Cost, check_cost, power_cost, transfer_cost
from .square_costs import exact_cost, exact_join_cost, table_cost, top_cost
from .exact_join import MAX_EXACT_JOIN_SHORT_SIDE, count_exact_join, exact_units
from .grid import check_grid, orient, square_count, stick_count
from .sweep import MAX_EXACT_SHORT_SIDE, TooManyEntries, count_exact
from .pairing import centre_patterns
from .round_store import open_store
from .table import MAX_JOIN_SHORT_SIDE, table_rows
from .top_rows import split_squares
from .transfer import MAX_GPU_TRANSFER_SHORT_SIDE, count_by_removed

__all__ = ["matchsticks", "matchstick_counts", "matchstick_table", "MatchstickTable",
           "MAX_CPU_TRANSFER_SHORT_SIDE", "square_tracking_backend"]

#: On the CPU the dense transfer matrix is limited to h <= 13 (h = 13: ~1 GB per array and
#: minutes); the GPU path (evaluation points, kernels/matchsticks.cu) goes to
#: MAX_GPU_TRANSFER_SHORT_SIDE.
MAX_CPU_TRANSFER_SHORT_SIDE = 13
#: The puzzle's S values, asked by default (as far as the grid has that many squares).
DEFAULT_SQUARES = range(15)
#: A table expected to take at least this many seconds (:func:`.square_costs.table_cost`) is long
#: enough to gain from worker processes: each starts in ~0.3 s, and the processes wait for
#: one of them to build each round's half sweeps (7×7: a quarter of its time, ~6 GB at the
#: peak), so only the joins of the centre patterns are shared out. 6×7 (estimated 33 s; 16 s
#: here, 13 s on 2 cores) and 7×7 use every core, as memory allows. 6×6 and 5×10 (estimated
#: 4 and 9 s) would gain a little on 2 idle cores (3.4 s to 3.0 s, 7.1 s to 5.6 s), and
#: lose where the cores are busy: on one core, the worker process that a large table gets
#: even alone took 6×6 from 1.9–2.2 s to 2.6–2.8 s (2026-11-25).
TABLE_POOL_SECONDS = 20.0
#: The join's time is measured and modelled for S up to this (the default table). Above it,
#: from a shorter side of 5 and 30 unit squares on, a round can cost many times the one
#: before it, in a way the estimate does not foresee (docs/matchsticks.md, *Estimates*);
#: 5×5 with every S takes 11 s on 2 cores; on one core 4×12 with S = 60 1 s, 6×6 with S = 26 18 s
#: (before the join cut on the least S asked, 14 minutes).
JOIN_MODELLED_SQUARES = 14
UNFORESEEN_JOIN_CELLS = 30
#: The worker processes of a centre join on the CPU share each round through a file
#: (:mod:`.round_store`): one of them builds it (the estimate's memory), then each holds,
#: beside the shared parts, its own pairing's arrays, taken as this share of the estimate
#: (7×7 table: ~0.4 GB more per process against 10.5 GB estimated, 2026-11-24).
JOIN_MEMORY_SHARE = 0.15
#: Problem 2 by the centre join uses every core by default from this shorter side: a 7×7
#: count takes a minute or more (its half sweeps alone ~25 s), a 6×6 count from 0.1 s (at
#: the table's fewest R) to about an hour (mid-range R), which the up-front estimate cannot
#: tell apart (docs/matchsticks.md, "Estimates"); ``workers=`` spreads a long 6×6 count.
MIN_POOL_SHORT_SIDE_BY_JOIN = 7
#: Problem 2's estimates are upper bounds, often far too high where the unit-square bound
#: prunes hard or few sticks are kept (an S that cannot be: 0 in under a second, announced as
#: an hour; 6×8 with 12 sticks kept, S = 2: refused by the join's estimate as needing 26 GiB,
#: the whole-grid sweep 0.2 s). So a count the estimate calls long is judged by its sweep's
#: first steps: up to a shorter side of 5 the estimate's warning waits until the sweep has
#: passed this many live entries or run SHORT_SWEEP_SECONDS; on 6 and 7 with fewer sticks
#: kept than removed, where the join's estimate passes SHORT_SWEEP_AFTER_SECONDS or the
#: memory there is, the whole-grid sweep runs first, stopped past this many live entries
#: (seconds at most), and the centre join (its estimate checked then) only if it was stopped. With R exact the sweep drops every entry
#: keeping more than E - R sticks: with few kept its entries stay few on any width (S = 0:
#: ~1.6·10^3 with 10 kept, 1.0·10^5 with 18, 1.8·10^6 with 26 on 6×6 and 6×10; S = 3 2-5x
#: that; 7×7 ~1.3x 6×6). 2026-12-02, docs/matchsticks.md.
SHORT_SWEEP_ENTRIES = 1_000_000
SHORT_SWEEP_SECONDS = 2.0
SHORT_SWEEP_AFTER_SECONDS = 30.0
#: The smallest shorter side whose table ``backend="auto"`` sends to a usable GPU.
MIN_GPU_TABLE_SHORT_SIDE = 6


@dataclass(frozen=True)
class MatchstickTable:
    """For each S: the fewest sticks R to remove so that exactly S squares survive in a valid
    configuration, and the number of ways; ``R is None`` (count 0) when no configuration has
    exactly S squares. ``backend``: where it was computed.

    >>> table = matchstick_table(2, 2, squares=[0, 4, 5], backend="cpu")
    >>> table.rows
    ((0, 4, 4), (4, None, 0), (5, 0, 1))
    >>> table[0], table.backend, 4 in table, 3 in table
    ((4, 4), 'cpu', True, False)
    >>> print(table)
    2x2 grid (12 sticks, 5 squares)
     S  fewest R  ways
     0         4     4
     4         -     0
     5         0     1
    """

    m: int
    n: int
    rows: tuple[tuple[int, int | None, int], ...]
    backend: str = "cpu"

    def __getitem__(self, squares: int) -> tuple[int | None, int]:
        squares = check_int("S", squares)   # a string or a bool is not an S
        for s, r, count in self.rows:
            if s == squares:
                return r, count
        raise KeyError(f"S={squares} was not computed for this table")

    def __contains__(self, squares: object) -> bool:
        """Whether the table has a row for S (as ``table[S]`` then answers); a row itself
        is looked up in ``table.rows``."""
        if isinstance(squares, bool) or not isinstance(squares, numbers.Integral):
            return False
        return any(s == squares for s, _, _ in self.rows)

    def __iter__(self) -> Iterator[tuple[int, int | None, int]]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def _cells(self) -> list[tuple[str, str, str]]:
        return [(str(s), "-" if r is None else str(r), str(c)) for s, r, c in self.rows]

    def __str__(self) -> str:
        cells = [("S", "fewest R", "ways")] + self._cells()
        widths = [max(len(row[k]) for row in cells) for k in range(3)]
        # ASCII only: print(table) then works on any console (an ASCII or cp437 stdout too)
        title = (f"{self.m}x{self.n} grid ({stick_count(self.m, self.n)} sticks, "
                 f"{square_count(self.m, self.n)} squares)")
        lines = [" " + "  ".join(c.rjust(wd) for c, wd in zip(row, widths)) for row in cells]
        return "\n".join([title] + lines)

    def __repr__(self) -> str:
        return f"MatchstickTable(m={self.m}, n={self.n}, rows={self.rows!r})"

    def _repr_html_(self) -> str:
        body = "".join(f"<tr><td>{s}</td><td>{r}</td><td>{c}</td></tr>" for s, r, c in self._cells())
        caption = html.escape(f"{self.m}×{self.n} matchstick grid")
        return (f"<table><caption>{caption}</caption><tr><th>S</th><th>fewest R</th>"
                f"<th>ways</th></tr>{body}</table>")


def square_tracking_backend(backend: str | None) -> str:
    """Where problem 2 (counting by squares) runs.

    ``"gpu"`` (as an argument or in ``GPUQUEENS_BACKEND``): on the GPU, or
    :class:`gpuqueens.BackendUnavailableError` when none is usable. ``"auto"`` (the
    default) and ``"cpu"``: on the CPU, without probing for a GPU (the GPU version has not
    been timed against the CPU on the same counts yet, so it is not chosen for you).

    >>> square_tracking_backend("auto")
    'cpu'
    """
    if requested_backend(backend) == "gpu":
        return resolve_backend(backend)  # as given: an error then names where "gpu" came from
    return "cpu"


#: Column powers multiply 2^(h+1)-square matrices: beyond this side they never pay.
MAX_POWERS_SHORT_SIDE = 6


def _check_transfer_size(m: int, n: int, backend: str) -> None:
    h, _ = orient(m, n)
    limit = MAX_GPU_TRANSFER_SHORT_SIDE if backend == "gpu" else MAX_CPU_TRANSFER_SHORT_SIDE
    if h > limit:
        raise ValueError(f"{m}×{n}: the transfer matrix on the {backend.upper()} is limited to a "
                         f"shorter side of {limit} (its state has 2^(h+2) rows); got {h}")


def by_removed_backend(m: int, n: int, removed: int | None = None, backend: str | None = None) -> str:
    """Where ``matchsticks(m, n, removed=R, backend=...)`` counts (``removed=None``:
    ``matchstick_counts(m, n, backend=...)``), on checked arguments: ``"cpu"`` or ``"gpu"``.

    The closed forms, the counts by sticks kept and column powers run on the CPU whatever
    the backend; the transfer runs on the backend that ``backend`` resolves to, except that
    ``"auto"`` keeps on the CPU a grid that the GPU method cannot count (its evaluation points
    need more primes than there are below 2^29: grids of more than ~2·10^4 sticks).

    >>> by_removed_backend(10, 10, 2, "cpu")
    'cpu'
    """
    if removed is None:
        return _way_for_counts(m, n, backend, progress=False).where
    return _way_for_removed(m, n, removed, backend, progress=False).where


@dataclass(frozen=True)
class _Way:
    """One way to count problem 1: where it runs, its cost (``None``: a closed form, at
    once) and the count."""

    where: str
    cost: Cost | None
    count: Callable[[], Any]

    def run(self) -> Any:
        if self.cost is not None:
            check_cost(self.cost)   # refused or warned before any work
        return self.count()


def _way_for_counts(m: int, n: int, backend: str | None, progress: bool | None) -> _Way:
    """Problem 1 for every R (``matchstick_counts``)."""
    asked = requested_backend(backend)
    backend = resolve_backend(backend)
    top = stick_count(m, n)
    return _way_by_removed(m, n, top, _keep_off_gpu(m, n, top, backend, asked), progress)


def _way_for_removed(m: int, n: int, removed: int, backend: str | None, progress: bool | None) -> _Way:
    """Problem 1 at one R (``matchsticks`` without ``squares``): a closed form, the count by
    sticks kept, or the counts by R up to R."""
    asked = requested_backend(backend)
    backend = resolve_backend(backend)
    closed = _closed_form(m, n, removed, None)
    if closed is not None:
        return _Way("cpu", None, lambda: closed)
    backend = _keep_off_gpu(m, n, removed, backend, asked)
    way = _way_by_few_kept(m, n, removed, backend, progress)
    if way is not None:
        return way
    by_removed = _way_by_removed(m, n, removed, backend, progress)
    return dataclasses.replace(by_removed, count=lambda: by_removed.count()[removed])


def _keep_off_gpu(m: int, n: int, top: int, backend: str, asked: str) -> str:
    """``"cpu"`` for a backend that ``"auto"`` resolved to the GPU when the GPU method
    refuses the grid; else ``backend``."""
    if backend != "gpu" or asked != "auto":
        return backend
    h, w = orient(m, n)
    if h > MAX_CPU_TRANSFER_SHORT_SIDE:
        return backend
    try:
        transfer_cost(h, w, top, "gpu")
    except ValueError:   # too many sticks for the GPU method; the CPU's has no such limit
        return "cpu"
    return backend


def _counts(m: int, n: int, max_removed: int | None, backend: str,
            progress: bool | None) -> list[int]:
    if backend == "gpu":  # the kernel, by evaluation points
        from .gpu import count_by_removed_gpu
        from .gpu_check import check_device

        check_device("transfer")  # the first use in a process on a device: against the CPU

        return count_by_removed_gpu(m, n, max_removed, progress=progress)
    # the faster method on the CPU (measured)
    return count_by_removed(m, n, max_removed, progress=progress)


def _memory_for_a_way() -> float:
    """Bytes a way that is chosen for its speed may take: half of what this machine has
    available (all of it may be needed by the way it replaces); no limit where the system
    does not say (``available_memory()`` is None)."""
    available = available_memory()
    return math.inf if available is None else available / 2


def _way_by_removed(m: int, n: int, top: int, backend: str, progress: bool | None) -> _Way:
    """Problem 1 for R = 0..top on a resolved backend, after the size check. Long grids
    with a short side and few removed sticks go by powers of the column transfer
    (:mod:`.column_powers`, on the CPU) whatever the backend, when that is the cheaper."""
    _check_transfer_size(m, n, backend)
    h, w = orient(m, n)
    sweep = transfer_cost(h, w, top, backend)
    if h <= MAX_POWERS_SHORT_SIDE:
        powers = power_cost(h, w, top)
        if powers.seconds < sweep.seconds and powers.memory < _memory_for_a_way():
            return _Way("cpu", powers, lambda: count_by_column_powers(m, n, top))
    return _Way(backend, sweep, lambda: _counts(m, n, top, backend, progress))


def _way_by_few_kept(m: int, n: int, removed: int, backend: str,
                     progress: bool | None = False) -> _Way | None:
    """Problem 1 at one R with fewer sticks kept than removed, counted by sticks kept
    (truncated at K = E - R, not at R) by the CPU sweep or column powers, when one of them
    is cheaper than :func:`_way_by_removed` would be; else ``None``. (A 1×5000 strip with 7
    sticks kept: at once, against minutes; a 13×13 grid with 10 kept: seconds, against the
    whole distribution.)"""
    h, w = orient(m, n)
    kept = stick_count(m, n) - removed
    if kept >= removed:
        return None
    fits = _memory_for_a_way()
    # each way by sticks kept: its cost and the count; and the cost of each way by R
    ways = []
    by_removed = []
    with contextlib.suppress(ValueError):  # the GPU method refuses the grid: it is no way
        by_removed.append(transfer_cost(h, w, removed, backend))
    if h <= MAX_CPU_TRANSFER_SHORT_SIDE:
        ways.append((transfer_cost(h, w, kept, "cpu"), lambda: count_by_removed(m, n, kept, kept=True, progress=progress)))
    if h <= MAX_POWERS_SHORT_SIDE:
        ways.append((power_cost(h, w, kept), lambda: count_by_column_powers(m, n, kept, kept=True)))
        by_removed.append(power_cost(h, w, removed))
    ways = [way for way in ways if way[0].memory < fits]
    if not ways:
        return None
    cost, count = min(ways, key=lambda way: way[0].seconds)
    if cost.seconds >= min((c.seconds for c in by_removed if c.memory < fits), default=math.inf):
        return None
    return _Way("cpu", cost, lambda: count()[kept])


def matchstick_counts(m: int, n: int, *, backend: str | None = None,
                      progress: bool | None = None) -> list[int]:
    """Valid configurations of an m×n grid by number of removed sticks, R = 0..E.

    Valid: no grid point touched by exactly one remaining stick (untouched points are fine).
    ``progress``: a bar over the transfer's sweeps (``None``: when stderr is a terminal or
    in a notebook; needs tqdm), as for :func:`matchstick_table`.

    >>> matchstick_counts(1, 1, backend="cpu")
    [1, 0, 0, 0, 1]
    >>> sum(matchstick_counts(2, 2, backend="cpu"))
    43
    """
    m, n = check_grid(m, n)
    progress = check_progress(progress)
    return _way_for_counts(m, n, backend, progress).run()


def _closed_form(m: int, n: int, removed: int, squares: int | None) -> int | None:
    """The count without a sweep where it is known, else ``None``: R = 0 keeps the whole grid
    (valid, every grid point touches 2 to 4 sticks) with all its squares; R = E keeps no
    stick, so no point is touched and no square survives. With 1 to 4 sticks kept: in a
    valid configuration no point is touched by exactly one kept stick, so the kept sticks
    hold a cycle, and the shortest cycles of the grid are its m·n unit squares: no way with
    1 to 3 sticks, and with 4 a unit square (one square survives).

    >>> _closed_form(1, 10**9, 0, 10**9), _closed_form(2, 2, 12, 1), _closed_form(2, 2, 3, 0)
    (1, 0, None)
    >>> E = stick_count(1, 10**5)
    >>> _closed_form(1, 10**5, E - 3, None), _closed_form(1, 10**5, E - 4, None)
    (0, 100000)
    """
    if removed == 0:
        return int(squares is None or squares == square_count(m, n))
    kept = stick_count(m, n) - removed
    if kept == 0:
        return int(squares is None or squares == 0)
    if kept < 4:
        return 0
    if kept == 4:
        return m * n if squares is None or squares == 1 else 0
    return None


def matchsticks(m: int, n: int, *, removed: int, squares: int | None = None,
                backend: str | None = None,
                checkpoint: str | os.PathLike[str] | None = None,
                executor: concurrent.futures.Executor | None = None,
                progress: bool | None = None, recheck: int = 1,
                workers: int | None = None) -> int:
    """Valid configurations with exactly ``removed`` sticks removed (and, if given, exactly
    ``squares`` surviving squares of any size).

    With ``squares`` the count runs by the whole-grid sweep up to a shorter side of 5, by
    the centre join (the halves' sweeps with R exact, :mod:`.exact_join`) for a shorter side
    of 6 or 7 (on the CPU: 6×6 in seconds to about an hour, 7×7 in minutes and gigabytes;
    with fewer sticks kept than removed first by the whole-grid sweep, which keeps few
    entries then, e.g. 6×8 with 12 kept in 0.2 s); on the CPU unless ``backend="gpu"``.
    R = 0 and R from E - 4 to E (at most 4 sticks kept) are answered at once, on any grid,
    from closed forms; with few sticks kept, the count runs over the sticks kept instead of
    the sticks removed.

    The centre join runs as work units, one per centre stick pattern, and takes the run
    options of :func:`matchstick_table`: ``checkpoint``, ``executor``, ``progress``,
    ``recheck`` and ``workers`` (by default every usable core for a 7×7 count, as far as
    memory holds a process per core, and this process for 6×6). The other counts run
    at once in this process: without ``squares`` ``progress`` draws a bar over the
    transfer's sweeps (as :func:`matchstick_counts`), ``workers`` changes nothing, and a
    ``checkpoint`` or an ``executor`` is refused, as nothing would be recorded or shared out.

    >>> matchsticks(10, 10, removed=2, backend="cpu")
    22278
    >>> matchsticks(4, 4, removed=9, squares=0)
    16
    """
    m, n = check_grid(m, n)
    removed = check_int("removed", removed, low=0, high=stick_count(m, n))
    recheck = check_run_options(executor=executor, progress=progress, recheck=recheck)
    workers = check_workers(workers, executor)
    if checkpoint is not None:
        checkpoint = check_checkpoint_path(checkpoint)
    if squares is None:
        _refuse_units_options(m, n, checkpoint, executor, "without squares=")
        return _way_for_removed(m, n, removed, backend, progress).run()
    squares = check_int("squares", squares, low=0, high=square_count(m, n))
    closed = _closed_form(m, n, removed, squares)
    if closed is not None:
        _refuse_units_options(m, n, checkpoint, executor, f"at R = {removed}")
        square_tracking_backend(backend)   # the backend's checks, as for any count
        return closed
    h, w = orient(m, n)
    if h > MAX_EXACT_JOIN_SHORT_SIDE:
        raise ValueError(f"{m}×{n}: counting by squares is limited to a shorter side of "
                         f"{MAX_EXACT_JOIN_SHORT_SIDE} (the halves' state grows ~10-60x per "
                         f"row); got {h}")
    if h <= MAX_EXACT_SHORT_SIDE:
        _refuse_units_options(m, n, checkpoint, executor, "by the whole-grid sweep")
        backend = square_tracking_backend(backend)
        cost = exact_cost(h, w, removed, squares)
        check_memory(cost.what, cost.memory)           # the bound's tables: needed at once
        from .gpu import array_module

        def announce() -> None:
            warn_if_long(cost.what, cost.seconds)

        if exact_cost(h, w, removed, squares, entries=False).seconds > LONG_RUN_SECONDS:
            announce()       # long whatever its entries (a long prime search, many steps)
        return count_exact(m, n, removed=removed, squares=squares, xp=array_module(backend),
                           announce=(SHORT_SWEEP_ENTRIES, SHORT_SWEEP_SECONDS, announce))
    cost = exact_join_cost(h, w, removed, squares)
    if checkpoint is None and executor is None:
        swept = _count_by_a_short_sweep(m, n, removed, squares, backend, cost)
        if swept is not None:
            return swept
    check_cost(cost)
    large = h >= MIN_POOL_SHORT_SIDE_BY_JOIN
    if requested_backend(backend) == "gpu":
        backend = choose_backend(backend, workers=workers, executor=executor, large_on_gpu=large)
    else:
        backend = square_tracking_backend(backend)
    # a resumed count solves only what its checkpoint lacks: no worker processes for less
    left = units_to_solve([unit.key for unit in exact_units(h, w, removed, squares)],
                          checkpoint, recheck)
    with _rounds_where(cost, backend, executor) as (store, memory):
        where = dict(workers=workers, executor=executor, large=large, units=left, **memory)
        _check_worker_memory(cost, backend, where)
        with executor_for(backend, **where, worker_even_alone=True) as chosen:
            run = {"checkpoint": checkpoint, "executor": chosen.executor, "progress": progress,
                   "recheck": recheck, "estimate": cost.seconds / chosen.processes}
            return count_exact_join(m, n, removed=removed, squares=squares, run=run,
                                    wrap_solver=chosen.solver, backend=backend,
                                    store=store if chosen.processes > 1 else None)


def _count_by_a_short_sweep(m: int, n: int, removed: int, squares: int, backend: str | None,
                            join: Cost) -> int | None:
    """Problem 2 on a shorter side of 6 or 7 with fewer sticks kept than removed, by the
    whole-grid sweep stopped past :data:`SHORT_SWEEP_ENTRIES` live entries, where the
    ``join``'s estimate is long or refused; ``None`` when not tried or stopped."""
    if stick_count(m, n) - removed >= removed:
        return None
    available = available_memory()
    too_big = available is not None and join.memory > available
    if join.seconds <= SHORT_SWEEP_AFTER_SECONDS and not too_big:
        return None
    h, w = orient(m, n)
    bound = exact_cost(h, w, removed, squares).memory   # the unit-square bound's tables
    if available is not None and bound > available:
        return None
    from .gpu import array_module

    try:
        return count_exact(m, n, removed=removed, squares=squares,
                           max_entries=SHORT_SWEEP_ENTRIES,
                           xp=array_module(square_tracking_backend(backend)))
    except TooManyEntries:
        return None


def _refuse_units_options(m: int, n: int, checkpoint: object, executor: object,
                          how: str) -> None:
    """A checkpoint or an executor with a count that has no work units: refused, since
    nothing would be recorded or shared out."""
    named = [name for name, value in (("checkpoint", checkpoint), ("executor", executor))
             if value is not None]
    if named:
        verb = "apply" if len(named) > 1 else "applies"
        raise ValueError(f"{' and '.join(named)} {verb} to counts by squares through the centre "
                         f"join (shorter side {MAX_EXACT_SHORT_SIDE + 1} to "
                         f"{MAX_EXACT_JOIN_SHORT_SIDE}); the {m}×{n} count {how} runs at once in "
                         "this process")


def _check_worker_memory(cost: Cost, backend: str, where: dict[str, Any]) -> None:
    """Refuse up front a number of worker processes whose rounds memory cannot hold: as for
    one process, what their first round needs for certain (``cost.least_memory``)."""
    processes = planned_processes(backend, **where)
    if where["executor"] is None and processes > 1:
        shared = where.get("memory_shared", 0.0)
        how = "sharing its half sweeps" if shared else "each with its own half sweeps"
        certain = 1.0 if cost.least_memory is None else cost.least_memory / cost.memory
        check_memory(f"{cost.what}, in {processes} worker processes {how}",
                     certain * (shared + where["memory_per_worker"] * processes))


@contextlib.contextmanager
def _rounds_where(cost: Cost, backend: str,
                  executor: concurrent.futures.Executor | None) -> Iterator[tuple[str | None, dict]]:
    """Where the worker processes of a centre join keep its rounds, and the memory that
    decides how many there are: ``(store directory or None, memory options of
    :func:`gpuqueens.workers.executor_for`)``. On the CPU without the caller's executor, one
    store for the processes started here (:mod:`.round_store`); else a round per process."""
    apart = None, {"memory_per_worker": cost.memory}
    if backend != "cpu" or executor is not None:
        yield apart
        return
    with open_store() as store:
        if store is None:  # no file locks, or no temporary directory to write
            yield apart
            return
        joining = cost.memory * JOIN_MEMORY_SHARE
        yield str(store.directory), {"memory_per_worker": joining,
                                     "memory_shared": cost.memory - joining}


def _table_cost(h: int, w: int, wanted: list[int]) -> Cost:
    """The table's cost: its top sweep for the S with few squares lost (:mod:`.top_rows`),
    then the centre join for the others (their memory is not needed at once)."""
    top, rest = split_squares(h, w, wanted)
    parts = ([top_cost(h, w, square_count(h, w) - min(top))] if top else []) + (
        [table_cost(h, w, rest)] if rest else [])
    join = parts[-1]
    least = [c.memory if c.least_memory is None else c.least_memory for c in parts]
    return dataclasses.replace(join, memory=max(c.memory for c in parts), least_memory=max(least),
                               seconds=sum(c.seconds for c in parts),
                               primes=max(c.primes for c in parts))


def _unforeseen_join(h: int, w: int, wanted: list[int]) -> list[int]:
    """The S asked that the join answers beyond what its estimate models (none on grids
    whose rounds stay short: a shorter side below 5, or fewer than 30 unit squares)."""
    if h < 5 or h * w < UNFORESEEN_JOIN_CELLS:
        return []
    return [q for q in split_squares(h, w, wanted)[1] if q > JOIN_MODELLED_SQUARES]


def _warn_unforeseen_join(h: int, w: int, beyond: list[int]) -> None:
    shown = (f"S = {beyond[0]}" if len(beyond) == 1 else
             f"S = {beyond[0]}..{beyond[-1]}" if beyond[-1] - beyond[0] + 1 == len(beyond) else
             f"{len(beyond)} S values from {beyond[0]} to {beyond[-1]}")
    warnings.warn(
        f"the {h}×{w} puzzle table for {shown} comes from the centre join, whose time is "
        f"estimated for S <= {JOIN_MODELLED_SQUARES} only: above that each round can cost "
        "many times the one before (on one core, 6×6: S = 14 alone 2 s, S = 26 alone 18 s; "
        "7×7: S = 100 alone 4 s, S = 80 87 s, S = 60 past 20 minutes). A checkpoint keeps "
        "the finished rounds.",
        LongRunWarning, stacklevel=3)


def _table_backend(backend: str | None, h: int, *, workers, executor, large: bool) -> str:
    """Where a table's pairing runs: as every count (:func:`gpuqueens.backends.resolve_backend`),
    except that ``"auto"`` keeps a shorter side below :data:`MIN_GPU_TABLE_SHORT_SIDE` on the CPU."""
    if requested_backend(backend) == "auto" and h < MIN_GPU_TABLE_SHORT_SIDE:
        return "cpu"
    return choose_backend(backend, workers=workers, executor=executor, large_on_gpu=large)


def _check_squares_collection(squares: object) -> None:
    """Refuse a ``squares`` that is not a collection of S values: one integer is ambiguous
    (S alone, or S = 0..S?), and a str or a mapping would be read by characters or keys."""
    shown = f"{type(squares).__name__} ({reprlib.repr(squares)})"
    if isinstance(squares, numbers.Integral) and not isinstance(squares, bool) and squares >= 0:
        s = int(squares)
        raise TypeError(f"squares must be a collection of S values, e.g. [{s}] for S = {s} "
                        f"alone or range({s + 1}) for S = 0..{s}; not {shown}")
    wrong = isinstance(squares, (str, bytes, Mapping))
    if not wrong:
        try:
            iter(squares)
        except TypeError:
            wrong = True
    if wrong:
        raise TypeError(f"squares must be a collection of integer S values such as [0, 3] "
                        f"or range(15), not {shown}")


#: Memory per S value asked while the request is read: a Python int in a set and a list.
BYTES_PER_S_ASKED = 120


def _squares_asked(squares: Iterable[int] | None, m: int, n: int) -> list[int]:
    """The S values asked, checked one by one as they are read (a range by its ends), so
    that no huge request is built before it is refused."""
    total = square_count(m, n)
    default = range(min(len(DEFAULT_SQUARES), total + 1))
    if squares is None:
        return list(default)
    _check_squares_collection(squares)

    def check(s: object) -> int:
        s = check_int("each S in squares", s, low=0)
        if s > total:
            raise ValueError(f"S={s} is more than the {total} squares of a {m}×{n} grid (S may be 0 to "
                             f"{total}; by default the table has S = 0..{default[-1]})")
        return s

    if isinstance(squares, range) and len(squares):
        check(min(squares[0], squares[-1]))
        check(max(squares[0], squares[-1]))
        # every S between valid ends is valid: no check per S (10^7 of them took 12 s), but
        # refuse what the list of S alone cannot hold (a Python int in a set and a list)
        check_memory(f"the list of the {len(squares):,} S values asked",
                     len(squares) * BYTES_PER_S_ASKED)
        wanted = set(squares)
    else:
        wanted = {check(s) for s in squares}
    if not wanted:
        raise ValueError("squares must name at least one S")
    return sorted(wanted)


def matchstick_table(m: int, n: int, squares: Iterable[int] | None = None, *,
                     backend: str | None = None,
                     checkpoint: str | os.PathLike[str] | None = None,
                     executor: concurrent.futures.Executor | None = None,
                     progress: bool | None = None, recheck: int = 1,
                     workers: int | None = None) -> MatchstickTable:
    """The puzzle table: for each S, the fewest removals leaving exactly S squares, and the
    number of ways (valid configurations only).

    ``squares``: a collection of S values (a list, a set, a range, a NumPy array of
    integers), each at most the grid's number of squares (default: S = 0..14, as far as
    the grid has squares); one S alone is asked as ``[S]``. The table comes from a
    meet-in-the-middle join at the centre column (``docs/matchsticks.md`` in the source
    repository): 6×6 in a few seconds, 7×7 in under 3 minutes on 2 cores (~6.4 GB at the
    peak in the process that builds each round) on the CPU; the shorter side is limited
    to 7. The S that lose at most 30 of the grid's squares (every S of a
    grid up to 4×4) come from one whole-grid sweep kept to such configurations instead
    (seconds up to 7×7, longer on long grids); among them the S that no configuration has
    (``None`` in the table). ``backend``: where the join (its half sweeps and its pairing) runs (``"auto"``:
    the GPU from a shorter side of 6 when one is usable); the result's ``backend`` says
    which. The table runs as work units through
    :func:`gpuqueens.runner.run_units`, one per round of the join and centre stick pattern:
    with ``checkpoint`` (one file) a killed run can be resumed, and ``progress`` shows a
    bar per round. ``recheck``: with a checkpoint, how many work units to solve again and
    compare, when resuming and at the end (see :func:`gpuqueens.nqueens`; 0 turns it off);
    the rows with few squares lost are one unit, so a checkpointed table sweeps them twice.

    ``workers``: how many processes solve the units, as for :func:`gpuqueens.nqueens`.
    ``None`` (the default): every usable core for a table expected to take 20 s or more
    (6×7, 7×7), or asked for an S above 14 from 5×6 on, as many as memory holds (on the
    CPU one of them builds each round's half sweeps, ~6.4 GB at the peak for 7×7, and the
    others share them through a file:
    :mod:`.round_store`) and on the CPU at least one worker process, whose malloc
    set-up suits the half sweeps' large arrays (:mod:`gpuqueens.worker_setup`); else this
    process; ``1``: this process only. Or ``executor``: any executor (threads, processes, a
    Dask cluster) spreads the units.

    >>> print(matchstick_table(1, 2, backend="cpu"))
    1x2 grid (7 sticks, 2 squares)
     S  fewest R  ways
     0         1     1
     1         3     2
     2         0     1
    """
    m, n = check_grid(m, n)
    recheck = check_run_options(executor=executor, progress=progress, recheck=recheck)
    workers = check_workers(workers, executor)
    if checkpoint is not None:
        checkpoint = check_checkpoint_path(checkpoint)
    h, w = orient(m, n)
    if h > MAX_JOIN_SHORT_SIDE:   # before the S values are read: they may be many
        raise ValueError(f"{m}×{n}: the table is limited to a shorter side of {MAX_JOIN_SHORT_SIDE} "
                         f"(7×7 takes under 3 minutes on 2 cores and ~6.4 GB of memory at the peak); got {h}")
    wanted = _squares_asked(squares, m, n)
    cost = _table_cost(h, w, wanted)
    check_cost(cost)
    beyond = _unforeseen_join(h, w, wanted)
    if beyond:
        _warn_unforeseen_join(h, w, beyond)
    large = cost.seconds >= TABLE_POOL_SECONDS or bool(beyond)
    backend = _table_backend(backend, h, workers=workers, executor=executor, large=large)
    with _rounds_where(cost, backend, executor) as (store, memory):
        where = dict(workers=workers, executor=executor, large=large,
                     units=len(centre_patterns(h)), **memory)
        _check_worker_memory(cost, backend, where)
        # a large CPU table runs in a worker process even alone there: its malloc set-up
        # keeps the half sweeps' arrays in the heap (7×7 on 2 cores: 386 s, not 531 s), and
        # this process is left as it is
        with executor_for(backend, **where, worker_even_alone=True) as chosen:
            run = {"checkpoint": checkpoint, "executor": chosen.executor, "progress": progress,
                   "recheck": recheck}
            rows = table_rows(h, w, wanted, run=run, wrap_solver=chosen.solver, backend=backend,
                              store=store if chosen.processes > 1 else None)
    return MatchstickTable(m, n, tuple(rows), backend)
