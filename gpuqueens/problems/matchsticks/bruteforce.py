"""Reference counts by enumerating every subset of sticks, vectorised over subsets.

This module shares no code with the transfer-matrix solvers (it numbers the sticks its own
way and tests every grid point and every square directly), so agreement between the two is
an independent check. It is exponential in the number of sticks E: 2^E subsets, in chunks.

>>> table = rs_histogram(1, 1)     # one square: all 4 sticks, or none
>>> [(r, s, int(c)) for r, row in enumerate(table) for s, c in enumerate(row) if c]
[(0, 1, 1), (4, 0, 1)]
"""

from __future__ import annotations

import numpy as np

from ..._checks import check_int
from .grid import square_count, stick_count

__all__ = ["MAX_BRUTE_STICKS", "rs_histogram", "brute_counts", "brute_table"]

#: 2^24 subsets take a few seconds; beyond 28 sticks the enumeration would take minutes.
MAX_BRUTE_STICKS = 28

_CHUNK_BITS = 20


def _sticks(m: int, n: int) -> tuple[dict, dict]:
    """Number the sticks: horizontal (row y, col x) then vertical (row y, col x)."""
    horizontal = {}
    for y in range(m + 1):
        for x in range(n):
            horizontal[y, x] = len(horizontal)
    vertical = {}
    for y in range(m):
        for x in range(n + 1):
            vertical[y, x] = len(horizontal) + len(vertical)
    return horizontal, vertical


def rs_histogram(m: int, n: int) -> np.ndarray:
    """``table[R, S]``: valid configurations with R sticks removed and S squares left.

    Valid means no grid point touched by exactly one remaining stick.
    """
    m = check_int("m", m, low=1)
    n = check_int("n", n, low=1)
    e = stick_count(m, n)
    if e > MAX_BRUTE_STICKS:
        raise ValueError(f"brute force enumerates 2^E subsets; E={e} > {MAX_BRUTE_STICKS} sticks")
    horizontal, vertical = _sticks(m, n)
    # Sticks touching each grid point (y, x), y in 0..m, x in 0..n.
    incident = []
    for y in range(m + 1):
        for x in range(n + 1):
            around = [horizontal.get((y, x - 1)), horizontal.get((y, x)),
                      vertical.get((y - 1, x)), vertical.get((y, x))]
            incident.append([k for k in around if k is not None])
    borders = []
    for u in range(1, min(m, n) + 1):
        for y in range(m - u + 1):
            for x in range(n - u + 1):
                mask = 0
                for k in range(u):
                    mask |= 1 << horizontal[y, x + k]
                    mask |= 1 << horizontal[y + u, x + k]
                    mask |= 1 << vertical[y + k, x]
                    mask |= 1 << vertical[y + k, x + u]
                borders.append(np.uint64(mask))
    smax = square_count(m, n)
    hist = np.zeros((e + 1) * (smax + 1), dtype=np.int64)
    chunk = 1 << min(e, _CHUNK_BITS)
    for start in range(0, 1 << e, chunk):
        x = np.arange(start, start + chunk, dtype=np.uint64)  # bit k set: stick k remains
        bits = [((x >> np.uint64(k)) & np.uint64(1)).astype(np.uint8) for k in range(e)]
        valid = np.ones(chunk, dtype=bool)
        for sticks in incident:
            degree = np.zeros(chunk, dtype=np.uint8)
            for k in sticks:
                degree += bits[k]
            valid &= degree != 1
        kept = np.zeros(chunk, dtype=np.int64)
        for b in bits:
            kept += b
        squares = np.zeros(chunk, dtype=np.int64)
        for mask in borders:
            squares += (x & mask) == mask
        index = (e - kept[valid]) * (smax + 1) + squares[valid]
        hist += np.bincount(index, minlength=hist.size)
    return hist.reshape(e + 1, smax + 1)


def brute_counts(m: int, n: int) -> list[int]:
    """Valid configurations by number of removed sticks R = 0..E.

    >>> brute_counts(1, 1)
    [1, 0, 0, 0, 1]
    """
    return [int(c) for c in rs_histogram(m, n).sum(axis=1)]


def brute_table(m: int, n: int, squares=range(15)) -> list[tuple[int, int | None, int]]:
    """Rows ``(S, fewest R, count)`` for each S asked; ``(S, None, 0)`` when S is impossible.

    >>> brute_table(1, 1, squares=[0, 1])
    [(0, 4, 1), (1, 0, 1)]
    """
    hist = rs_histogram(m, n)
    rows = []
    for s in squares:
        if s >= hist.shape[1] or not hist[:, s].any():
            rows.append((s, None, 0))
            continue
        r = int(np.flatnonzero(hist[:, s])[0])
        rows.append((s, r, int(hist[r, s])))
    return rows
