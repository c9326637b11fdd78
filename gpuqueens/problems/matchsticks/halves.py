"""The two halves of the puzzle table's centre join: half sweeps decoded into *parts*.

The square-tracking sweep of :mod:`.sweep` keeps one entry per partial configuration once
the open bits of large squares span the grid (6×6: ~10^7 live entries). The centre join
runs it only over the left half, up to the *centre line* (point column ``mid = w // 2``),
and again over the left half of the mirrored grid, which is the right half.

A *part* is a half sweep's state after its last point column (``mid`` columns of points for
the left, ``w - mid`` for the right), with the (fewest R, count) semiring of the sweep:

* ``H``: its h+1 horizontal sticks that touch the centre line;
* ``X``: its bits of the *crossing* squares (left column c < mid < c+u): a left part has
  the bit when the square's left side and its top and bottom up to the centre line remain;
  a right part the mirror. A crossing square survives iff both parts have its bit;
* ``Y``: its bits of the squares with a side *on* the centre line (still waiting for it);
* ``s``, ``r``: squares completed inside the part, sticks removed in it.

:mod:`.pairing` joins the parts of the two sides.

>>> primes = np.array([2147483647], dtype=np.uint64)
>>> left, right = half_parts(2, 2, {q: 12 for q in range(6)}, primes)
>>> right is left, len(left.r), left.xbits.shape[1]     # 2×2: symmetric, one crossing square
(True, 5, 1)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .bounds import unit_square_bound
from .keys import ONE, U64, KeyLayout, bit_count, table_index
from .square_costs import live_entry_limit, memory_for_entries, sweep_copies
from .sweep import SweepStats, step_point, successor_limit, too_many_entries

__all__ = ["Parts", "half_parts", "exact_half_parts", "crossing_squares", "centre_squares",
           "least_score", "MAX_CROSSING_SQUARES"]

#: The crossing squares' bits share one uint64 per part: 42 for 7×7 (56 on longer grids
#: with h = 7), 64 for 8×8, 70 for 8×9.
MAX_CROSSING_SQUARES = 64


@dataclass
class Parts:
    """Parts of one side, in the original grid's coordinates, ordered by (H, X, r)."""

    xbits: np.ndarray    # float32 (patterns, crossing squares) 0/1, canonical order
    xbits_mirrored: np.ndarray | None  # the same patterns read as right parts (left side only)
    xwords: np.ndarray   # uint64 (patterns,): the same bits, bit k = crossing square k
    xwords_mirrored: np.ndarray | None
    ybits: np.ndarray    # uint64 (parts,): bit k set when the part keeps centre square k
    yrows: list          # per centre square: bit mask of the C sticks it needs
    s: np.ndarray
    r: np.ndarray
    counts: np.ndarray   # (parts, primes) residues
    hx: np.ndarray       # H * len(xbits) + X: the h+1 centre horizontals H (bit i: row i)
                         # and the index X of the part's crossing pattern in xbits

    def squares_with_centre(self, C: int) -> np.ndarray:
        """Each part's squares once the centre sticks are C: its own, plus the centre
        squares that C completes (all of whose sticks the part and C keep)."""
        return centre_squares(np, self.s, self.ybits, self.yrows, C)


def centre_squares(xp, s, ybits, yrows: list, C: int):
    """Parts' squares ``s`` plus the centre squares (bit k of ``ybits``: the part keeps
    square k, which needs the C sticks ``yrows[k]``) that the centre sticks C complete; the
    arrays on module ``xp``."""
    closing = sum(1 << k for k, rows in enumerate(yrows) if (C & rows) == rows)
    return s + bit_count(xp, ybits & U64(closing)) if closing else s


def least_score(s, r, max_squares: int) -> int:
    """The least s' + 2r of the parts (squares ``s`` with the centre's, removals ``r``; any
    array module) with at most ``max_squares`` squares, which is also the least score of
    their groups; a large number where there are none (then nothing pairs)."""
    score = (s + 2 * r)[s <= max_squares]
    return int(score.min()) if len(score) else 1 << 40


def crossing_squares(h: int, w: int) -> list[tuple[int, int, int]]:
    """The squares (r, u, c) that cross the centre line: left column c < mid < c + u."""
    mid = w // 2
    return [(r, u, c) for u in range(2, h + 1) for r in range(h - u + 1)
            for c in range(max(0, mid - u + 1), min(mid, w - u + 1))]


def _half_sweep(h, w, stops, max_squares, caps, bound, primes, max_entries, stats,
                exact_removed=None, xp=np):
    """The sweep of :mod:`.sweep` over point columns 0..stop-1: table mode, or exact mode
    for R = ``exact_removed`` (R in the key; pruned when the rest of the whole grid cannot
    bring R so far to exactly R, or by the unit-square bound to exactly S = max_squares).
    On array module ``xp`` (CuPy: on the current device, within its free memory).

    Returns ``{stop: (keys, removed, counts)}`` for each stop asked and the key layout.
    """
    layout = KeyLayout(h, w, max_squares, exact_removed)
    limit = live_entry_limit(max_entries, layout.words, len(primes), memory_for_entries(xp),
                             sweep_copies(xp))
    keys = [xp.zeros(1, dtype=U64) for _ in range(layout.words)]
    removed = xp.zeros(1, dtype=np.int64)
    counts = xp.ones((1, len(primes)), dtype=U64)
    primes = xp.asarray(primes)
    sticks, decided = h * (w + 1) + w * (h + 1), 0
    out = {}
    if 0 in stops:
        out[0] = (keys, removed, counts)
    for j in range(max(stops)):
        for i in range(h + 1):
            decided += (i < h) + (j < w)
            keys, removed, counts = step_point(layout, (keys, removed, counts), i, j, bound=bound,
                                               caps=caps, max_squares=max_squares, primes=primes,
                                               max_removed=exact_removed,
                                               undecided=sticks - decided, xp=xp,
                                               most_successors=successor_limit(
                                                   limit, layout.words, len(primes),
                                                   sweep_copies(xp), memory_for_entries(xp)))
            if len(removed) > limit:
                raise too_many_entries(f"{h}×{w}: a half sweep of the centre join (column {j})",
                                       len(removed), limit, layout.words, len(primes))
            stats.add(len(removed))
        if j + 1 in stops:
            exact_r = None if exact_removed is None else layout.get(keys, "r").astype(np.int64)
            out[j + 1] = (keys, removed if exact_r is None else exact_r, counts)
    return out, layout


def _decode(h, w, state, layout, mirrored, xp=np) -> Parts:
    """Decode a half sweep's final states. ``mirrored``: the sweep ran on the mirrored grid.

    Crossing squares (r, u, c) with c < mid < c + u are indexed in one canonical order;
    a mirrored part's square with left column c' is the original square w - c' - u.
    The states may be on the device (``xp`` CuPy): the parts come back to the host.
    """
    keys, removed, counts = state
    mid = w // 2
    cut = w - mid if mirrored else mid            # the sweep's own point columns
    crossing = crossing_squares(h, w)
    index = {sq: k for k, sq in enumerate(crossing)}
    X = xp.zeros(len(removed), dtype=U64)
    # Y: one bit per centre square (at most h(h+1)/2 <= 64 of them wherever the crossing
    # squares fit in a word), not a 0/1 matrix: parts are many (7×7: 1.6·10^7, 22 squares)
    Y = xp.zeros(len(removed), dtype=U64)
    yrows = []
    for (r, u), k in sorted(layout.groups.items()):
        # the group's k bits (one per left column mod k) -> its X and Y bits, as a table
        values = np.arange(1 << k, dtype=U64)
        to_x, to_y = np.zeros(1 << k, dtype=U64), np.zeros(1 << k, dtype=U64)
        for c in range(max(0, cut - u), cut):
            if c + u > w:
                continue
            bit = (values >> U64(c % k)) & ONE
            if c + u == cut:
                to_y |= bit << U64(len(yrows))
                yrows.append(((1 << u) - 1) << r)
            else:
                original = (r, u, w - c - u) if mirrored else (r, u, c)
                to_x |= bit << U64(index[original])
        if to_x.any() or to_y.any():
            g = table_index(xp, layout.get(keys, ("g", r, u)))
            if to_x.any():
                X |= xp.asarray(to_x)[g]
            if to_y.any():
                Y |= xp.asarray(to_y)[g]
    unique, inverse = xp.unique(X, return_inverse=True)
    unique, inverse = _host(xp, unique), inverse.ravel()
    shifts = np.arange(len(crossing), dtype=U64)
    xbits = ((unique[:, None] >> shifts[None, :]) & ONE).astype(np.float32)
    if not mirrored and 2 * mid == w:  # for a symmetric grid the right parts are these, mirrored
        mirror = [index[(r, u, w - c - u)] for r, u, c in crossing]
        xbits_mirrored = xbits[:, mirror]
        xwords_mirrored = _words(xbits_mirrored)
    else:
        xbits_mirrored = xwords_mirrored = None
    H = layout.get(keys, "H").astype(np.int64)
    X = inverse.astype(np.int64)
    s = layout.get(keys, "s").astype(np.int64)
    # Order by (H, X, r): each centre pattern's groups then meet nearly sorted keys.
    hx = H * len(xbits) + X
    removed = removed.astype(np.int64)
    top = int(removed.max()) + 1 if len(removed) else 1
    order = xp.argsort(hx * top + removed, kind="stable")
    Y, s, removed, counts, hx = (_host(xp, a[order]) for a in (Y, s, removed, counts, hx))
    return Parts(xbits, xbits_mirrored, unique.astype(U64), xwords_mirrored, Y, yrows,
                 s, removed, counts, hx)


def _host(xp, a):
    """``a`` as a NumPy array (a copy from the device for CuPy)."""
    return a if xp is np else xp.asnumpy(a)


def _words(xbits: np.ndarray) -> np.ndarray:
    """0/1 rows (patterns, bits) packed into one uint64 each, bit k from column k."""
    weights = ONE << np.arange(xbits.shape[1], dtype=U64)
    return (xbits.astype(U64) * weights[None, :]).sum(axis=1, dtype=U64) if xbits.shape[1] \
        else np.zeros(len(xbits), dtype=U64)


def half_parts(h: int, w: int, caps: dict[int, int], primes: np.ndarray,
               max_entries: int | None = None, slack: int = 0,
               stats: SweepStats | None = None, xp=np) -> tuple[Parts, Parts]:
    """The parts of the left and the right half of an h×w grid (h <= w) for one round:
    ``caps`` maps each S asked to the most sticks removed that count for it. ``slack``: the
    unit-square bound is built for at least this many squares (the largest S of the whole
    table, so that every round shares one bound).

    Returns ``(left, right)``; for even w the right parts are the left ones
    (``right is left``), read mirrored by the pairing. ``stats`` counts the half sweep;
    its live entries are limited as those of :func:`.sweep.sweep`. ``xp``: the array
    module the half sweeps run on (CuPy: the current device); the parts are NumPy arrays.
    """
    return _halves(h, w, max(caps), caps, None, primes, max_entries, max(max(caps), slack), stats,
                   xp)


def exact_half_parts(h: int, w: int, removed: int, squares: int, primes: np.ndarray,
                     max_entries: int | None = None,
                     stats: SweepStats | None = None, xp=np) -> tuple[Parts, Parts]:
    """The parts of both halves for problem 2 (exactly R = ``removed`` sticks removed and
    S = ``squares`` squares): the half sweeps in exact mode, a part's ``r`` its exact
    removals, its counts all the partial configurations with that key.

    >>> primes = np.array([2147483647], dtype=np.uint64)
    >>> left, right = exact_half_parts(2, 2, removed=4, squares=0, primes=primes)
    >>> right is left, sorted(set(left.r.tolist()))    # 2×2: no half removes more than 2 here
    (True, [0, 1, 2])
    """
    return _halves(h, w, squares, None, removed, primes, max_entries, squares, stats, xp)


def _halves(h, w, max_squares, caps, exact_removed, primes, max_entries, slack, stats, xp):
    if not 1 <= h <= w:   # the join cuts the longer side (the public calls orient the grid)
        raise ValueError(f"the half sweeps take the shorter side first (h <= w), not {h}×{w}")
    if len(crossing_squares(h, w)) > MAX_CROSSING_SQUARES:
        raise ValueError(f"{h}×{w}: {len(crossing_squares(h, w))} squares cross the centre "
                         f"line, more than the {MAX_CROSSING_SQUARES} bits a part keeps")
    bound = unit_square_bound(h, w, slack)
    mid = w // 2
    stats = stats if stats is not None else SweepStats()
    begin = time.perf_counter()
    states, layout = _half_sweep(h, w, sorted({mid, w - mid}), max_squares, caps, bound, primes,
                                 max_entries, stats, exact_removed, xp=xp)
    stats.seconds += time.perf_counter() - begin
    left = _decode(h, w, states[mid], layout, mirrored=False, xp=xp)
    if 2 * mid == w:
        return left, left
    return left, _decode(h, w, states[w - mid], layout, mirrored=True, xp=xp)
