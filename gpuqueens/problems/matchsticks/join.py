"""Problem 3 (the puzzle table) by a meet in the middle at a vertical grid line.

The square-tracking sweep of :mod:`.squares` keeps one entry per partial configuration once
the open bits of large squares span the grid (6×6: ~10^7 live entries). Here the sweep runs
only over the left half, up to the *centre line* (point column ``mid``), and again over the
left half of the mirrored grid, which is the right half; the two are joined at the centre.

A *part* is a half sweep's state after its last point column (``mid`` columns of points for
the left, ``w - mid`` for the right), with the (fewest R, count) semiring of the sweep:

* ``H``: its h+1 horizontal sticks that touch the centre line;
* ``X``: its bits of the *crossing* squares (left column c < mid < c+u): a left part has
  the bit when the square's left side and its top and bottom up to the centre line remain;
  a right part the mirror. A crossing square survives iff both parts have its bit;
* ``Y``: its bits of the squares with a side *on* the centre line (still waiting for it);
* ``s``, ``r``: squares completed inside the part, sticks removed in it.

The centre line's h vertical sticks ``C`` are enumerated in the join. For a pattern C a part
turns into a *group* key (H, X, s' = s + its Y squares whose centre side C keeps) with the
fewest r' (plus C's removed sticks on the left) and the count at it — exact by the same
argument as the sweep (the rest of the grid sees a part only through its group key). A
left group a and a right group b join when every centre point has degree != 1 (its two
horizontal sticks from H_a, H_b and its vertical ones from C), into S = s'_a + s'_b +
popcount(X_a & X_b) squares and R = r'_a + r'_b removed sticks.

The join is dense linear algebra. For each C, every group gets a float32 row whose product
with a row of the other side is popcount(X_a & X_b) + score_a + score_b + penalty, where
score = s' + 2r' and the penalty (a multiple of a power of two above the level, from 2 columns per centre
point) is
non-zero exactly when some centre point would have degree 1. One BLAS product per block
then gives S + 2R for every pair (~1 ns a pair; all values are integers < 2^24, exact).

Levels: a round at level K finds every configuration with S + 2R <= K, i.e. R <= (K-S)//2.
The groups are sorted by score, so the pairs with score_a + score_b <= K form a staircase,
covered by row strata and column prefixes; hits (value <= K) are few and decoded exactly.
Counts at the fewest R are exact (semiring argument above), kept as residues modulo primes
(:mod:`.modular`) and combined by the CRT. The first level is one above
max_S (S + 2L(S)), L the unit-square lower bound of :mod:`.bounds`; an S not found at level
K has fewest R > (K-S)//2, and the next round runs at the least S + 2L(S) still open (only
the open S are kept, so later rounds are small). The score S + 2R is the seed's "2R+S".

Symmetries: the top-bottom mirror maps C to its reverse with equal results (only C <= its
reverse runs, weight 2 otherwise); for even w the right parts are the left parts mirrored,
so the join matrix is symmetric and only its upper triangle runs (weight 2 off the
diagonal blocks).

>>> table_rows_join(2, 2, range(6))
[(0, 4, 4), (1, 2, 2), (2, 2, 4), (3, 1, 4), (4, None, 0), (5, 0, 1)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...progress import Progress, progress_enabled
from .bounds import UnitSquareBound
from .grid import mirror_pattern, orient, square_count, stick_count
from .modular import NARROW_PRIME_LIMIT, binomial_bound, crt, primes_for_bound
from .squares import MAX_ENTRIES, KeyLayout, step_point

__all__ = ["table_rows_join", "JoinStats", "run_levels", "merge_fewest", "prepare_round", "join_centre",
           "centre_patterns"]

U64 = np.uint64
ONE = U64(1)

#: Largest shorter side the join answers. 7×7 took 588 s and ~12 GB with 3.1·10^7 live
#: entries (2026-11-21, 2 cores); 8×8 would need far more memory.
MAX_JOIN_SHORT_SIDE = 7
#: The live-entry limit per shorter side: 7×7 needs more than the sweep's default.
JOIN_ENTRY_LIMIT = {7: 60_000_000}


@dataclass
class JoinStats:
    """Sizes and times of one :func:`table_rows_join` run (all rounds)."""

    rounds: int = 0
    parts: list[int] = field(default_factory=list)      # states per half sweep
    max_live: int = 0                                   # most live entries in a half sweep
    groups: int = 0                                     # left groups summed over C
    pairs: int = 0                                      # matrix entries computed in the join
    hits: int = 0                                       # pairs passing the score cut
    blocks: int = 0
    sweep_seconds: float = 0.0
    join_seconds: float = 0.0


def _half_sweep(h, w, stops, max_squares, caps, bound, primes, max_entries=MAX_ENTRIES):
    """The sweep of :mod:`.squares` (table mode) over point columns 0..stop-1.

    Returns ``{stop: (keys, removed, counts)}`` for each stop asked, and the key layout.
    """
    layout = KeyLayout(h, w, max_squares)
    keys = [np.zeros(1, dtype=U64) for _ in range(layout.words)]
    removed = np.zeros(1, dtype=np.int64)
    counts = np.ones((1, len(primes)), dtype=U64)
    out, live = {}, 1
    if 0 in stops:
        out[0] = (keys, removed, counts)
    for j in range(max(stops)):
        for i in range(h + 1):
            keys, removed, counts = step_point(layout, (keys, removed, counts), i, j, bound=bound,
                                               caps=caps, max_squares=max_squares, primes=primes)
            live = max(live, len(removed))
            if live > max_entries:
                raise ValueError(
                    f"{h}×{w}: a half sweep of the centre join passed {max_entries:,} live "
                    f"entries at column {j}; this grid is too large for it "
                    f"(see docs/matchsticks.md, 'Meet in the middle')")
        if j + 1 in stops:
            out[j + 1] = (keys, removed, counts)
    return out, layout, live


@dataclass
class _Parts:
    """Parts of one side, in the original grid's coordinates."""

    H: np.ndarray        # int64, h+1 bits, row-indexed
    X: np.ndarray        # int64 index into xbits (unique crossing patterns)
    xbits: np.ndarray    # float32 (patterns, crossing squares) 0/1, canonical order
    xbits_mirrored: np.ndarray | None  # the same patterns read as right parts (left side only)
    ymask: np.ndarray    # int64 (parts, centre squares) 0/1
    yrows: list          # per centre square: bit mask of the C sticks it needs
    s: np.ndarray
    r: np.ndarray
    counts: np.ndarray   # (parts, primes) residues
    hx: np.ndarray | None = None


def _parts(h, w, mid, state, layout, mirrored) -> _Parts:
    """Decode a half sweep's final states. ``mirrored``: the sweep ran on the mirrored grid.

    Crossing squares (r, u, c) with c < mid < c + u are indexed in one canonical order;
    a mirrored part's square with left column c' is the original square w - c' - u.
    """
    keys, removed, counts = state
    cut = w - mid if mirrored else mid            # the sweep's own point columns
    crossing = [(r, u, c) for u in range(2, h + 1) for r in range(h - u + 1)
                for c in range(max(0, mid - u + 1), min(mid, w - u + 1))]
    index = {sq: k for k, sq in enumerate(crossing)}
    X = np.zeros(len(removed), dtype=U64)
    ycols, yrows = [], []
    for (r, u), k in sorted(layout.groups.items()):
        g = layout.get(keys, ("g", r, u))
        for c in range(max(0, cut - u), cut):
            if c + u > w:
                continue
            bit = (g >> U64(c % k)) & ONE
            if c + u == cut:
                ycols.append(bit.astype(np.int64))
                yrows.append(((1 << u) - 1) << r)
            else:
                original = (r, u, w - c - u) if mirrored else (r, u, c)
                X |= bit << U64(index[original])
    unique, inverse = np.unique(X, return_inverse=True)
    shifts = np.arange(len(crossing), dtype=U64)
    xbits = ((unique[:, None] >> shifts[None, :]) & ONE).astype(np.float32)
    if not mirrored and 2 * mid == w:  # for a symmetric grid the right parts are these, mirrored
        mirror = [index[(r, u, w - c - u)] for r, u, c in crossing]
        xbits_mirrored = xbits[:, mirror]
    else:
        xbits_mirrored = None
    ymask = np.stack(ycols, axis=1) if ycols else np.zeros((len(removed), 0), dtype=np.int64)
    return _presort(_Parts(layout.get(keys, "H").astype(np.int64), inverse.astype(np.int64),
                           xbits, xbits_mirrored, ymask, yrows,
                           layout.get(keys, "s").astype(np.int64), removed, counts))


@dataclass
class _Groups:
    """Groups of one side for one centre pattern C, sorted by base score s' + 2r'."""

    H: np.ndarray
    s: np.ndarray
    r: np.ndarray
    base: np.ndarray     # s' + 2r' (r' without the centre sticks)
    X: np.ndarray
    counts: np.ndarray


def _groups(parts: _Parts, C: int, max_squares: int, primes) -> _Groups:
    """Fix the centre sticks C: close the centre squares, merge by (H, X, s').

    The parts are pre-sorted by (H, X, r) (:func:`_presort`), so a stable sort by the key
    (H, X, s') keeps r ascending inside each key and the first entry holds the fewest r.
    """
    if parts.yrows:
        closing = np.array([(C & rows) == rows for rows in parts.yrows], dtype=np.int64)
        s = parts.s + parts.ymask @ closing
    else:
        s = parts.s
    ok = s <= max_squares
    hx, s, r = parts.hx[ok], s[ok], parts.r[ok]
    key = hx * (max_squares + 1) + s
    order = np.argsort(key, kind="stable")         # nearly sorted already: cheap
    key, r = key[order], r[order]
    index = np.flatnonzero(ok)[order]
    if len(key):
        change = np.empty(len(key), dtype=bool)
        change[0] = True
        np.not_equal(key[1:], key[:-1], out=change[1:])
        starts = np.flatnonzero(change)
        fewest = r[starts]
        at_min = r == np.repeat(fewest, np.diff(np.append(starts, len(key))))
        counts = np.add.reduceat(parts.counts[index] * at_min[:, None], starts, axis=0) % primes
        key = key[starts]
    else:
        fewest, counts = r, parts.counts[:0]
    s = key % (max_squares + 1)
    hx = key // (max_squares + 1)
    H, X = hx // len(parts.xbits), hx % len(parts.xbits)
    base = s + 2 * fewest
    order = np.argsort(base, kind="stable")
    return _Groups(H[order], s[order], fewest[order], base[order], X[order], counts[order])


def _presort(parts: _Parts) -> _Parts:
    """Order the parts by (H, X, r) and add their combined (H, X) index ``hx``."""
    hx = parts.H * len(parts.xbits) + parts.X
    order = np.lexsort((parts.r, hx))
    for name in ("H", "X", "ymask", "s", "r", "counts"):
        setattr(parts, name, getattr(parts, name)[order])
    parts.hx = hx[order]
    return parts


#: float32 holds every integer below 2^24 exactly, so the levels must stay below it.
_EXACT_FLOAT32 = 1 << 24


def _penalty_scale(level: int) -> float:
    """The penalty unit of a round: a power of two above the level, so that a pair with a
    penalty never passes the cut ``value <= level`` (float32 rounding of sums of
    non-negative terms never falls below a representable power of two they exceed)."""
    if level >= _EXACT_FLOAT32:
        raise ValueError(f"level {level} of the centre join is beyond float32's exact integers")
    return float(1 << max(12, level.bit_length()))


def _penalty_table(h: int, C: int | None, big: float = 0.0) -> np.ndarray:
    """Feature columns per value of H; products of a left and a right row give the penalty.

    A multiple of ``big`` when a centre point would have degree 1: with v vertical centre
    sticks at point i, v = 1 needs H_a[i] or H_b[i], v = 0 needs H_a[i] == H_b[i].
    ``C=None``: the left rows (independent of C), scaled by ``big``; the right rows are 0/1.
    """
    values = np.arange(1 << (h + 1))
    table = np.zeros((len(values), 2 * (h + 1)), dtype=np.float32)
    for i in range(h + 1):
        bit = ((values >> i) & 1).astype(np.float32)
        if C is None:
            table[:, 2 * i], table[:, 2 * i + 1] = big * (1 - bit), big * bit
            continue
        vertical = (i >= 1 and (C >> (i - 1)) & 1) + (i < h and (C >> i) & 1)
        if vertical == 1:      # (1 - H_a)(1 - H_b)
            table[:, 2 * i] = 1 - bit
        elif vertical == 0:    # (1 - H_a) H_b + H_a (1 - H_b)
            table[:, 2 * i], table[:, 2 * i + 1] = bit, 1 - bit
    return table


def _features(g: _Groups, xbits: np.ndarray, penalty: np.ndarray, left: bool,
              extra: int) -> np.ndarray:
    """Rows whose products give popcount(X_a & X_b) + score_a + score_b + penalty."""
    nbits = xbits.shape[1]
    rows = np.empty((len(g.H), nbits + 2 + penalty.shape[1]), dtype=np.float32)
    np.take(xbits, g.X, axis=0, out=rows[:, :nbits])
    score, one = (nbits, nbits + 1) if left else (nbits + 1, nbits)
    rows[:, score] = g.base + extra
    rows[:, one] = 1.0
    np.take(penalty, g.H, axis=0, out=rows[:, nbits + 2:])
    return rows


#: Row strata of a staircase hold at least this many rows (fewer, larger products) ...
_STRATUM_ROWS = 256
#: ... and a block at most this many pairs (64 MiB of float32 values).
_MAX_BLOCK = 1 << 24


def _staircase(left_base, right_base, limit, triangle):
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


def centre_patterns(h: int) -> list[int]:
    """Centre-column stick patterns, one of each top-bottom mirror pair."""
    return [c for c in range(1 << h) if mirror_pattern(c, h) >= c]


@dataclass
class _Round:
    """What every centre pattern of one round shares: the parts of both halves and the cuts."""

    h: int
    w: int
    caps: dict[int, int]
    level: int
    left: _Parts
    right: _Parts
    symmetric: bool
    primes: np.ndarray
    primes_list: list[int]
    cap: np.ndarray              # cap[S] = largest R asked for S (-1: S not asked)
    left_penalty: np.ndarray     # the left rows' penalty features (independent of C)


def prepare_round(h, w, caps: dict[int, int], level: int, stats: JoinStats,
                   max_entries: int = MAX_ENTRIES) -> _Round:
    """The half sweeps of a round at level K with caps (K - S) // 2, decoded into parts."""
    max_squares = max(caps)
    sticks = stick_count(h, w)
    primes_list = primes_for_bound(binomial_bound(sticks, max(caps.values())), NARROW_PRIME_LIMIT)
    primes = np.array(primes_list, dtype=U64)
    begin = time.perf_counter()
    bound = UnitSquareBound(h, w, max_squares)
    mid = w // 2
    stops = sorted({mid, w - mid})
    states, layout, live = _half_sweep(h, w, stops, max_squares, caps, bound, primes,
                                       max_entries)
    stats.max_live = max(stats.max_live, live)
    left = _parts(h, w, mid, states[mid], layout, mirrored=False)
    symmetric = 2 * mid == w
    right = left if symmetric else _parts(h, w, mid, states[w - mid], layout, mirrored=True)
    stats.parts += [len(left.r), len(right.r)]
    cap = np.full(2 * max_squares + left.xbits.shape[1] + 1, -1, dtype=np.int64)
    for q, c in caps.items():
        cap[q] = c
    stats.sweep_seconds += time.perf_counter() - begin
    return _Round(h, w, dict(caps), level, left, right, symmetric, primes, primes_list, cap,
                  _penalty_table(h, None, _penalty_scale(level)))


def join_centre(rnd: _Round, C: int, stats: JoinStats) -> dict[int, tuple[int, int]]:
    """The configurations whose centre sticks are C (or its mirror): ``{S: (fewest R, count)}``
    for every S found within its cap."""
    begin = time.perf_counter()
    h, caps, level, primes = rnd.h, rnd.caps, rnd.level, rnd.primes
    left, right, symmetric = rnd.left, rnd.right, rnd.symmetric
    max_squares = max(caps)
    rbins = stick_count(h, rnd.w) + 1
    cap = rnd.cap
    hits_by_bin = np.zeros((max_squares + 1) * rbins, dtype=np.int64)
    residues = np.zeros((len(primes), (max_squares + 1) * rbins), dtype=U64)
    weight_c = 1 if mirror_pattern(C, h) == C else 2
    removed_c = h - bin(C).count("1")
    limit = level - 2 * removed_c
    gl = _groups(left, C, max_squares, primes)
    gr = gl if symmetric else _groups(right, C, max_squares, primes)
    stats.groups += len(gl.H)
    if len(gl.H) and len(gr.H):
        rows = _features(gl, left.xbits, rnd.left_penalty, True, 2 * removed_c)
        cols = _features(gr, left.xbits_mirrored if symmetric else right.xbits,
                         _penalty_table(h, C), False, 0)
        for i0, i1, j0, j1 in _staircase(gl.base, gr.base, limit, symmetric):
            values = rows[i0:i1] @ cols[j0:j1].T
            stats.blocks += 1
            stats.pairs += values.size
            hit = np.flatnonzero(values.ravel() <= level)
            if len(hit) == 0:
                continue
            stats.hits += len(hit)
            width = j1 - j0
            ia = i0 + hit // width
            ib = j0 + hit % width
            common = values.ravel()[hit].astype(np.int64) - gl.base[ia] - gr.base[ib] \
                - 2 * removed_c
            S = gl.s[ia] + gr.s[ib] + common
            R = gl.r[ia] + gr.r[ib] + removed_c
            good = R <= cap[S]
            if not good.any():
                continue
            ia, ib, S, R = ia[good], ib[good], S[good], R[good]
            wt = weight_c * (1 + (symmetric & (ib >= i1)))
            bins = S * rbins + R
            hits_by_bin += np.bincount(bins, minlength=len(hits_by_bin))
            for k, p in enumerate(primes):
                prod = gl.counts[ia, k] * gr.counts[ib, k] % p * wt.astype(U64) % p
                # float64 sums of < 2^22 residues < 2^31 stay below 2^53: exact
                for c0 in range(0, len(bins), 1 << 22):
                    part = np.bincount(bins[c0:c0 + (1 << 22)],
                                       weights=prod[c0:c0 + (1 << 22)].astype(np.float64),
                                       minlength=residues.shape[1])
                    residues[k] = (residues[k] + part.astype(U64) % p) % p
    found = {}
    for q, c in caps.items():
        nz = np.flatnonzero(hits_by_bin[q * rbins: q * rbins + c + 1])
        if len(nz):
            r = int(nz[0])
            found[q] = (r, crt([int(residues[k][q * rbins + r]) for k in range(len(primes))],
                               rnd.primes_list))
    stats.join_seconds += time.perf_counter() - begin
    return found


def merge_fewest(into: dict[int, tuple[int, int]], more: dict[int, tuple[int, int]]) -> None:
    """Add ``more``'s ``{S: (fewest R, count)}`` to ``into``: the smaller R wins, counts add
    on a tie (the configurations of different centre patterns are different).

    >>> found = {0: (4, 1)}
    >>> merge_fewest(found, {0: (4, 3), 1: (2, 5)}); merge_fewest(found, {1: (1, 1)})
    >>> found
    {0: (4, 4), 1: (1, 1)}
    """
    for q, (r, c) in more.items():
        old = into.get(q)
        if old is None or r < old[0]:
            into[q] = (r, c)
        elif r == old[0]:
            into[q] = (r, old[1] + c)


def _join_round(h, w, caps: dict[int, int], level: int, stats: JoinStats,
                max_entries: int = MAX_ENTRIES, advance=lambda weight=1.0: None):
    """One round at a level K: finds every pair with S + 2R <= K (caps (K - S) // 2).

    Returns ``{S: (fewest R, count)}`` for the S found within its cap. ``advance()`` is
    called after the half sweeps and after each centre pattern (for a progress bar).
    """
    rnd = prepare_round(h, w, caps, level, stats, max_entries)
    advance()
    found: dict[int, tuple[int, int]] = {}
    for C in centre_patterns(h):
        merge_fewest(found, join_centre(rnd, C, stats))
        advance()
    return found


def run_levels(h: int, w: int, wanted: list[int], run_round) -> list[tuple[int, int | None, int]]:
    """The rounds of the join: ``run_round(caps, level, index)`` returns ``{S: (R, count)}``
    for one round; levels rise until every S asked is found or proved impossible.

    The first level is one above the largest S + 2L(S) (L the unit-square lower bound);
    after a round, an S not found has fewest R > (K - S) // 2, and the next level is the
    least S + 2L(S) left.
    """
    sticks = stick_count(h, w)
    top = square_count(h, w)
    done: dict[int, tuple[int | None, int]] = {q: (None, 0) for q in wanted if q > top}
    start = UnitSquareBound(h, w, max(wanted)).before_start()
    lower = {q: int(start[min(q, len(start) - 1)]) for q in wanted if q not in done}
    level = max((q + 2 * lower[q] for q in lower), default=0) + 1
    index = 0
    while len(done) < len(wanted):
        open_ = [q for q in wanted if q not in done]
        caps = {q: min(sticks, (level - q) // 2) for q in open_}
        index += 1
        found = run_round(caps, level, index)
        for q in open_:
            if q in found:
                done[q] = found[q]
            elif caps[q] >= sticks:
                done[q] = (None, 0)
            else:
                lower[q] = max(lower[q], caps[q] + 1)
        level = min((q + 2 * lower[q] for q in wanted if q not in done), default=level)
    return [(q, *done[q]) for q in wanted]


def table_rows_join(m: int, n: int, squares, *, stats: JoinStats | None = None,
                    max_entries: int = MAX_ENTRIES,
                    progress: bool | None = False) -> list[tuple[int, int | None, int]]:
    """Rows ``(S, fewest R, count)`` like :func:`.squares.table_rows`, by the centre join.

    ``progress``: a bar per round (see :func:`gpuqueens.progress.progress_enabled`).
    The rounds are those of :func:`run_levels`.
    """
    wanted = sorted(set(squares))
    h, w = orient(m, n)
    stats = stats if stats is not None else JoinStats()

    def run_round(caps, level, index):
        stats.rounds += 1
        steps = len(centre_patterns(h)) + 1
        with Progress(steps, steps, enabled=progress_enabled(progress),
                      description=f"{h}×{w} table, round {index}") as bar:
            return _join_round(h, w, caps, level, stats, max_entries, advance=bar.advance)

    return run_levels(h, w, wanted, run_round)
