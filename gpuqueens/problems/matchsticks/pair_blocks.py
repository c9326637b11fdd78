"""Which pairs of a round's groups the CPU join multiplies (:func:`.pairing.join_centre`):
the *staircase* of the pairs whose scores fit under the round's level, and, for a round
whose least S asked is above 0, the blocks of it that can reach that least S
(:func:`reaching_blocks`); the products go through them in cache-sized :func:`chunks`
(problem 2's join as well, :mod:`.exact_join`).

The groups of each side are sorted by their score s' + 2r, so the pairs under the level
form a staircase (:func:`staircase`; a symmetric join, even w, runs one triangle of it).

>>> import numpy as np
>>> staircase(np.array([0, 1, 5]), np.array([0, 2, 9]), 3, False)
[(0, 2, 0, 2)]
"""

from __future__ import annotations

import numpy as np

from .keys import run_starts

__all__ = ["staircase", "reaching_blocks", "chunks", "CHUNK_PAIRS"]


#: Row strata of a staircase hold at least this many rows (fewer, larger products) ...
_STRATUM_ROWS = 256
#: ... and a block at most this many pairs (its products go in :func:`chunks`, so this no
#: longer bounds memory; wide blocks take fewer rows, which keeps the staircase close).
_MAX_BLOCK = 1 << 24


def staircase(left_base, right_base, limit, triangle):
    """Blocks (i0, i1, j0, j1) covering {(a, b): base_a + base_b <= limit}.

    Both lists are sorted. ``triangle``: the two sides are the same list and only b >= a is
    needed; a block's columns then start at its first row, so the pairs with both ends in
    [i0, i1) appear in both orders (weight 1) and the others once (weight 2).
    """
    if len(right_base) == 0:
        return []
    top = int(np.searchsorted(left_base, limit // 2 if triangle else limit - right_base[0],
                              side="right"))
    out = []
    i0 = 0
    while i0 < top:
        j0 = i0 if triangle else 0
        j1 = int(np.searchsorted(right_base, limit - left_base[i0], side="right"))
        if j1 <= j0:
            break                       # later rows have larger bases: nothing left
        run_end = int(np.searchsorted(left_base, left_base[i0], side="right"))
        i1 = min(top, max(i0 + _STRATUM_ROWS, run_end), i0 + max(1, _MAX_BLOCK // (j1 - j0)))
        for c0 in range(j0, j1, _MAX_BLOCK):
            out.append((i0, i1, c0, min(j1, c0 + _MAX_BLOCK)))
        i0 = i1
    return out


def reaching_blocks(blocks, left_base, left_s, left_p, left_r, right_base, right_s, right_p,
                    right_r, limit: int, least: int, most_r: int, symmetric: bool):
    """Blocks ``(rows, columns, twice)`` (index arrays; ``twice``: the columns whose pairs
    with these rows weigh 2, or None) covering the pairs with base_a + base_b <= limit that
    can have S >= ``least`` with r_a + r_b <= ``most_r``; None when they would hold more
    than a quarter of the pairs of ``blocks``, the staircase of these pairs
    (:data:`_WORTH_CUTTING`). Both sides are sorted by base.

    A pair has S = s'_a + s'_b + popcount(X_a & X_b) <= s'_a + s'_b + min(p_a, p_b), p the
    crossing squares a group keeps, so it needs t_b = s'_b + p_b >= least - s'_a and
    s'_b >= least - t_a (t_a = s'_a + p_a), and r_b <= most_r - r_a. The rows go by s'
    first (then by base, in blocks of up to _STRATUM_ROWS), so that a block's s'_a is one
    value, and a block keeps the columns that pass all three for its largest t_a and least
    r_a, within the staircase of its first row. At level 44, every eighth centre pattern:
    5×7 with S = 32 has 2.2·10^9 pairs in the staircase, 1.1·10^6 in these blocks; 6×6
    with S = 30 4.9·10^9 and 3.8·10^6.

    A symmetric join (the right groups are the left ones) takes each pair once, as the
    staircase's triangle: both sides in the same order, a block's columns are its own rows
    (the diagonal square, whose pairs come in both orders: weight 1; left out when none of
    them passes), then those after them in that order that pass (weight 2).

    >>> base, s, p = np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([0, 1, 1])
    >>> r = np.zeros(3, dtype=int)
    >>> every = staircase(base, base, 9, False)     # only (2, 2) can have 5 squares
    >>> [(a.tolist(), b.tolist()) for a, b, _ in reaching_blocks(
    ...     every, base, s, p, r, base, s, p, r, 9, 5, 9, False)]
    [([2], [2])]
    >>> reaching_blocks(every, base, s, p, r, base, s, p, r, 9, 3, 9, False) is None
    True
    """
    left_runs = _runs(left_s)
    left_order, left_starts, _ = left_runs
    right_order, run_start, run_of = left_runs if symmetric else _runs(right_s)
    # the right side in its run order, keyed by (run, base): one search finds where every
    # run's staircase ends for a row
    s_o, r_o = right_s[right_order], right_r[right_order]
    t_o = s_o + right_p[right_order]
    run_squares = s_o[run_start]
    span = int(right_base.max(initial=0)) + limit + 2
    runs = np.arange(len(run_start), dtype=np.int64) * span
    key = run_of * span + right_base[right_order]
    left_t = left_s + left_p
    worth = _WORTH_CUTTING * sum((i1 - i0) * (j1 - j0) for i0, i1, j0, j1 in blocks)
    out, pairs = [], 0
    for first, last in zip(left_starts.tolist(), [*left_starts[1:].tolist(), len(left_order)]):
        sigma = int(left_s[left_order[first]])
        k = first
        while k < last:
            rows = left_order[k:min(last, k + _STRATUM_ROWS)]
            reach = limit - int(left_base[rows[0]])
            most_t, least_r = int(left_t[rows].max()), int(left_r[rows].min())
            end = np.searchsorted(key, runs + max(reach, -1), side="right")
            lo = np.maximum(run_start, k) if symmetric else run_start   # symmetric: after k
            size = np.where(run_squares >= least - most_t, np.maximum(end - lo, 0), 0)
            at = np.repeat(lo - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
            ok = (t_o[at] >= least - sigma) & (r_o[at] <= most_r - least_r)
            at = at[ok]
            if len(at) * len(rows) > _MAX_BLOCK:   # fewer rows: their columns are a subset
                rows = rows[:max(1, _MAX_BLOCK // len(at))]
            pieces = _block(rows, right_order, at, k if symmetric else None)
            out += pieces
            pairs += sum(len(r) * len(c) for r, c, _ in pieces)
            if pairs > worth:     # not worth it: stop here
                return None
            k += len(rows)
    return out


#: The share of the staircase's pairs above which the cut is not worth its second product
#: and its smaller blocks (6×6, S = 14 at level 38, every other centre pattern on one core:
#: the cut keeps 39% of the pairs and takes 0.6 s, the staircase 0.46 s).
_WORTH_CUTTING = 0.25


def _runs(squares: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups by s', then by base (a side is sorted by base): the order, where each
    run of one s' starts in it, and each group's run (:func:`.keys.run_starts`)."""
    order = np.argsort(squares, kind="stable")
    return (order, *run_starts(np, squares[order]))


def _block(rows, order, at, first: int | None) -> list:
    """A block's pieces of at most _MAX_BLOCK columns, the columns ``order[at]``.
    ``first``: a symmetric join's position of the block's first row in ``order`` (its rows
    are the positions after it): its diagonal square whole, when any of its rows passes as a
    column, then the columns after its rows."""
    cols, twice = order[at], None
    if first is not None:
        inside = at < first + len(rows)
        square = rows if inside.any() else rows[:0]
        cols = np.concatenate([square, cols[~inside]])
        twice = np.arange(len(cols)) >= len(square)
    return [(rows, cols[c0:c0 + _MAX_BLOCK], None if twice is None else twice[c0:c0 + _MAX_BLOCK])
            for c0 in range(0, len(cols), _MAX_BLOCK)]


#: The products go in chunks of at most this many pairs, into buffers reused for every chunk:
#: 1 MiB of float32 values stays in a core's cache for the comparison that follows (one
#: core, 256 rows against 65536 columns: 1.8 ns a pair in chunks, 2.8 ns as one product).
CHUNK_PAIRS = 1 << 18


def _cut(pick: slice | np.ndarray, a: int, b: int) -> slice | np.ndarray:
    """Positions a..b-1 of a block's rows or columns (a slice or an index array)."""
    return slice(pick.start + a, pick.start + b) if isinstance(pick, slice) else pick[a:b]


def _length(pick: slice | np.ndarray) -> int:
    return pick.stop - pick.start if isinstance(pick, slice) else len(pick)


def chunks(blocks):
    """The blocks ``(rows, columns, twice)`` cut into pieces of at most CHUNK_PAIRS pairs
    (``twice``, one flag per column or None, cut with the columns)."""
    for rows, cols, twice in blocks:
        if _length(rows) == 0 or _length(cols) == 0:
            continue
        height = min(_length(rows), CHUNK_PAIRS)
        width = max(1, CHUNK_PAIRS // height)
        for a in range(0, _length(rows), height):
            for b in range(0, _length(cols), width):
                c = min(_length(cols), b + width)
                yield (_cut(rows, a, min(_length(rows), a + height)), _cut(cols, b, c),
                       None if twice is None else twice[b:c])
