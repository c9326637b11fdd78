"""Which pairs a pairing launch covers: the kernel's *descriptors* and *windows*.

A descriptor ``(i0, i1, j0, j1, jsplit, weights)`` sends the left groups i0..i1-1 (at most
:data:`.join_twin.BLOCK_ROWS`, one per thread) against the right groups j0..j1-1 (at most
:data:`.join_twin.MAX_COLUMNS`); a pair weighs ``weights & 0xff`` when b < jsplit and
``weights >> 8`` otherwise. The groups are sorted by their scores s' + 2r
(:mod:`.join_groups`), so the pairs with score_a + score_b <= limit form a staircase;
each row block takes the columns that its first (smallest) row reaches
(:func:`table_blocks`). For a symmetric join (even w: the right groups are the left ones
mirrored) a row block's columns start at its first row; pairs inside the diagonal square
appear in both orders (weight 1), the others once (weight 2).

A window per S, ``(lo, hi, base)``, says which R count for it and where its bins start.

>>> import numpy as np
>>> table_blocks(np, np.array([0, 1, 5]), np.array([0, 2, 9]), limit=3, symmetric=False).tolist()
[[0, 2, 0, 2, 2, 257]]
>>> windows_for({0: (4, 5), 2: (3, 3)}, max_s=2)
([[4, 5, 0], [1, 0, 0], [3, 3, 2]], 3)
"""

from __future__ import annotations

import numpy as np

from .join_twin import BLOCK_ROWS, MAX_COLUMNS

__all__ = ["table_blocks", "exact_blocks", "windows_for"]


def _host(values) -> np.ndarray:
    return values.get() if hasattr(values, "get") else np.asarray(values)


def _split_columns(rows: np.ndarray) -> np.ndarray:
    """Descriptors with more than MAX_COLUMNS columns cut into pieces (split and weights kept)."""
    width = rows[:, 3] - rows[:, 2]
    pieces = np.maximum(1, -(-width // MAX_COLUMNS))
    if (pieces == 1).all():
        return rows
    out = np.repeat(rows, pieces, axis=0)
    first = np.repeat(np.cumsum(pieces) - pieces, pieces)
    k = np.arange(len(out)) - first
    out[:, 2] = out[:, 2] + k * MAX_COLUMNS
    out[:, 3] = np.minimum(out[:, 3], out[:, 2] + MAX_COLUMNS)
    return out


def _row_blocks(xp, left_score, right_score, first: int, end: int, right_first: int,
                right_end: int, limit: int, triangle: bool, weights: int) -> np.ndarray:
    """Descriptors for left rows first..end-1 against right columns right_first..right_end-1
    (both sorted by score) covering every pair with score_a + score_b <= limit."""
    i0 = np.arange(first, end, BLOCK_ROWS, dtype=np.int64)
    if len(i0) == 0 or right_end <= right_first:
        return np.zeros((0, 6), dtype=np.int64)
    i1 = np.minimum(i0 + BLOCK_ROWS, end)
    reach = limit - _host(left_score[xp.asarray(i0)]).astype(np.int64)
    j1 = right_first + _host(xp.searchsorted(right_score[right_first:right_end],
                                             xp.asarray(reach), side="right")).astype(np.int64)
    j0 = i0 if triangle else np.full(len(i0), right_first)
    split = i1 if triangle else j1
    rows = np.stack([i0, i1, j0, j1, split, np.full(len(i0), weights)], axis=1)
    return _split_columns(rows[j1 > j0])


def table_blocks(xp, left_score, right_score, limit: int, symmetric: bool) -> np.ndarray:
    """Descriptors (int32, one row each) for a table's pairs with score_a + score_b <= limit."""
    if len(left_score) == 0 or len(right_score) == 0:
        return np.zeros((0, 6), dtype=np.int32)
    bound = limit // 2 if symmetric else limit - int(_host(right_score[:1])[0])
    top = int(_host(xp.searchsorted(left_score, xp.asarray([bound]), side="right"))[0])
    weights = 1 | (2 if symmetric else 1) << 8
    return _row_blocks(xp, left_score, right_score, 0, top, 0, len(right_score), limit,
                       symmetric, weights).astype(np.int32)


def exact_blocks(xp, left_r, left_score, right_r, right_score, removed: int, limit: int,
                 symmetric: bool) -> np.ndarray:
    """Descriptors (int32) for problem 2's pairs, r_a + r_b = ``removed`` exactly and
    score_a + score_b <= limit: the groups sorted by r, then by score, and each left run of
    one r paired with the right run of the r that completes it (a staircase in each), so
    that no launch tests pairs whose removals cannot add up. A symmetric join takes
    r_a <= r_b: the runs r_a < r_b once (weight 2), the run r_a = r_b as a triangle."""
    if len(left_r) == 0 or len(right_r) == 0:
        return np.zeros((0, 6), dtype=np.int32)
    values = np.arange(removed + 2)
    left_at = _host(xp.searchsorted(left_r, xp.asarray(values))).astype(np.int64)
    right_at = _host(xp.searchsorted(right_r, xp.asarray(values))).astype(np.int64)
    pieces = [np.zeros((0, 6), dtype=np.int64)]
    for ra in range(removed + 1):
        rb = removed - ra
        if symmetric and ra > rb:
            break
        triangle = symmetric and ra == rb
        weights = (1 | 2 << 8) if triangle else (514 if symmetric else 257)
        pieces.append(_row_blocks(xp, left_score, right_score, left_at[ra], left_at[ra + 1],
                                  right_at[rb], right_at[rb + 1], limit, triangle, weights))
    return np.concatenate(pieces).astype(np.int32)


def windows_for(ranges: dict[int, tuple[int, int]], max_s: int) -> tuple[list[list[int]], int]:
    """``([lo, hi, base] per S = 0..max_s, bins)`` for the R range ``ranges[S] = (lo, hi)``
    of each S counted (the others get an empty window)."""
    windows, base = [], 0
    for q in range(max_s + 1):
        lo, hi = ranges.get(q, (1, 0))
        windows.append([lo, hi, base if hi >= lo else 0])
        base += max(0, hi - lo + 1)
    return windows, base
