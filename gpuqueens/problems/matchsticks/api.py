"""The public matchstick functions: argument checks, backend choice, and the result table."""

from __future__ import annotations

import concurrent.futures
import html
import os
from collections.abc import Iterable
from dataclasses import dataclass

from ..._checks import check_int
from ...backends import resolve_backend
from .grid import check_grid, orient, square_count, stick_count
from .join import JOIN_ENTRY_LIMIT, MAX_JOIN_SHORT_SIDE, table_rows_join
from .join_units import table_rows_by_units
from .squares import MAX_ENTRIES, MAX_EXACT_SHORT_SIDE, count_exact
from .transfer import MAX_GPU_TRANSFER_SHORT_SIDE, count_by_removed

__all__ = ["matchsticks", "matchstick_counts", "matchstick_table", "MatchstickTable",
           "MAX_CPU_TRANSFER_SHORT_SIDE"]

#: On the CPU the dense transfer matrix is limited to h <= 13 (h = 13: ~1 GB per array and
#: minutes); the GPU path (evaluation points, kernels/matchsticks.cu) goes to
#: MAX_GPU_TRANSFER_SHORT_SIDE.
MAX_CPU_TRANSFER_SHORT_SIDE = 13


@dataclass(frozen=True)
class MatchstickTable:
    """For each S: the fewest sticks R to remove so that exactly S squares survive in a valid
    configuration, and the number of ways; ``R is None`` (count 0) when no configuration has
    exactly S squares.

    >>> table = matchstick_table(2, 2, squares=[0, 4, 5], backend="cpu")
    >>> table.rows
    ((0, 4, 4), (4, None, 0), (5, 0, 1))
    >>> table[0]
    (4, 4)
    >>> print(table)
    2×2 grid (12 sticks, 5 squares)
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
        for s, r, count in self.rows:
            if s == squares:
                return r, count
        raise KeyError(f"S={squares} was not computed for this table")

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def _cells(self) -> list[tuple[str, str, str]]:
        return [(str(s), "-" if r is None else str(r), str(c)) for s, r, c in self.rows]

    def __str__(self) -> str:
        cells = [("S", "fewest R", "ways")] + self._cells()
        widths = [max(len(row[k]) for row in cells) for k in range(3)]
        title = (f"{self.m}×{self.n} grid ({stick_count(self.m, self.n)} sticks, "
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


def _check_transfer_size(m: int, n: int, backend: str) -> None:
    h, _ = orient(m, n)
    limit = MAX_GPU_TRANSFER_SHORT_SIDE if backend == "gpu" else MAX_CPU_TRANSFER_SHORT_SIDE
    if h > limit:
        raise ValueError(f"{m}×{n}: the transfer matrix on the {backend.upper()} is limited to a "
                         f"shorter side of {limit} (its state has 2^(h+2) rows); got {h}")


def _counts(m: int, n: int, max_removed: int | None, backend: str) -> list[int]:
    if backend == "gpu":  # the kernel, by evaluation points
        from .gpu import count_by_removed_gpu

        return count_by_removed_gpu(m, n, max_removed)
    return count_by_removed(m, n, max_removed)  # the faster method on the CPU (measured)


def matchstick_counts(m: int, n: int, *, backend: str | None = None) -> list[int]:
    """Valid configurations of an m×n grid by number of removed sticks, R = 0..E.

    Valid: no grid point touched by exactly one remaining stick (untouched points are fine).

    >>> matchstick_counts(1, 1, backend="cpu")
    [1, 0, 0, 0, 1]
    >>> sum(matchstick_counts(2, 2, backend="cpu"))
    43
    """
    m, n = check_grid(m, n)
    backend = resolve_backend(backend)
    _check_transfer_size(m, n, backend)
    return _counts(m, n, None, backend)


def matchsticks(m: int, n: int, *, removed: int, squares: int | None = None,
                backend: str | None = None) -> int:
    """Valid configurations with exactly ``removed`` sticks removed (and, if given, exactly
    ``squares`` surviving squares of any size).

    >>> matchsticks(10, 10, removed=2, backend="cpu")
    22278
    >>> matchsticks(4, 4, removed=9, squares=0, backend="cpu")
    16
    """
    m, n = check_grid(m, n)
    removed = check_int("removed", removed, low=0, high=stick_count(m, n))
    backend = resolve_backend(backend)
    if squares is None:
        _check_transfer_size(m, n, backend)
        return _counts(m, n, removed, backend)[removed]
    squares = check_int("squares", squares, low=0, high=square_count(m, n))
    h, _ = orient(m, n)
    if h > MAX_EXACT_SHORT_SIDE:
        raise ValueError(f"{m}×{n}: counting by squares is limited to a shorter side of "
                         f"{MAX_EXACT_SHORT_SIDE} (its state grows ~30x per row); got {h}")
    return count_exact(m, n, removed=removed, squares=squares)


def matchstick_table(m: int, n: int, squares: Iterable[int] = range(15), *,
                     backend: str | None = None,
                     checkpoint: str | os.PathLike[str] | None = None,
                     executor: concurrent.futures.Executor | None = None,
                     progress: bool | None = None) -> MatchstickTable:
    """The puzzle table: for each S, the fewest removals leaving exactly S squares, and the
    number of ways (valid configurations only).

    The table comes from a meet-in-the-middle join at the centre column
    (``docs/matchsticks.md``): 6×6 in a few seconds, 7×7 in about ten minutes and ~12 GB;
    the shorter side is limited to 7. With ``checkpoint`` or ``executor`` the join runs as
    work units through :func:`gpuqueens.runner.run_units`, one per centre stick pattern and
    round: a checkpointed run can be killed and resumed (round k > 1 keeps its ledger in
    ``checkpoint + ".round<k>"``), and the units can be spread over processes or a Dask
    cluster (each worker process computes the round's half sweeps once). ``progress``
    shows a bar in either case.

    >>> print(matchstick_table(1, 2, squares=range(3), backend="cpu"))
    1×2 grid (7 sticks, 2 squares)
     S  fewest R  ways
     0         1     1
     1         3     2
     2         0     1
    """
    m, n = check_grid(m, n)
    total = square_count(m, n)
    wanted = sorted({check_int("squares", s, low=0) for s in squares})
    if not wanted:
        raise ValueError("squares must name at least one S")
    resolve_backend(backend)  # validates the choice; the table runs on the CPU (below)
    h, w = orient(m, n)
    if h > MAX_JOIN_SHORT_SIDE:
        raise ValueError(f"{m}×{n}: the table is limited to a shorter side of {MAX_JOIN_SHORT_SIDE} "
                         f"(7×7 takes ~10 minutes and ~12 GB of memory); got {h}")
    possible = [s for s in wanted if s <= total]
    limit = JOIN_ENTRY_LIMIT.get(h, MAX_ENTRIES)
    if not possible:
        found = []
    elif checkpoint is not None or executor is not None:
        found = table_rows_by_units(h, w, possible, checkpoint=checkpoint, executor=executor,
                                    progress=progress, max_entries=limit)
    else:
        found = table_rows_join(h, w, possible, max_entries=limit, progress=progress)
    rows = {s: (r, c) for s, r, c in found}
    full = tuple((s, *rows.get(s, (None, 0))) for s in wanted)
    # The sparse DP runs on the CPU on every backend (docs/matchsticks.md).
    return MatchstickTable(m, n, full, "cpu")
