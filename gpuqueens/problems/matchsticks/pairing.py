"""The centre join's pairing: the left and right parts (:mod:`.halves`) of one round joined
for one pattern C of the centre line's vertical sticks, by dense matrix products.

For a pattern C a part turns into a *group* key (H, X, s' = s + its Y squares whose centre
side C keeps) with the fewest r' (plus C's removed sticks on the left) and the count at it
— exact by the same argument as the sweep (the rest of the grid sees a part only through
its group key). A left group a and a right group b join when every centre point has
degree != 1 (its two horizontal sticks from H_a, H_b and its vertical ones from C), into
S = s'_a + s'_b + popcount(X_a & X_b) squares and R = r'_a + r'_b removed sticks.

The join is dense linear algebra. For each C, every group gets a float32 row whose product
with a row of the other side is popcount(X_a & X_b) + score_a + score_b + penalty, where
score = s' + 2r' and the penalty (2 columns per centre point) is a multiple of a power of
two above the round's level exactly when some centre point would have degree 1. BLAS
products then give S + 2R for every pair, in cache-sized chunks of a block into reused
buffers (:func:`.pair_blocks.chunks`; ~1-2 ns a pair; the values that matter are integers
below 2^24, exact in float32).

A round at level K finds every configuration with S + 2R <= K (R <= (K-S)//2). The groups
are sorted by score, so the pairs with score_a + score_b <= K form a staircase, covered by
row strata and column prefixes (:mod:`.pair_blocks`); hits (value <= K) are few and
decoded exactly, and only those at or below the fewest R a pattern has found so far for
their S have their counts multiplied. When the least S asked is above 0, most pairs under
a high level have fewer squares and more removals than any S asked can use: the blocks
then skip the pairs
that cannot reach that least S within the largest cap
(:func:`.pair_blocks.reaching_blocks`), and a second product per chunk
(popcount(X_a & X_b) + s'_a + s'_b, no penalty) gives S itself, so that a hit needs
S >= that least S too. Counts are residues modulo primes below 2^31 (:mod:`.modular`).

Symmetries: the top-bottom mirror maps C to its reverse with equal results (only C <= its
reverse runs, weight 2 otherwise); for even w the right parts are the left parts mirrored,
so the join matrix is symmetric and only its upper triangle runs (weight 2 off the
diagonal blocks).

>>> rnd = prepare_round(2, 2, {0: 4, 5: 0}, level=9)   # 2×2: S = 0 with R <= 4, S = 5 with R = 0
>>> {format(C, "02b"): join_centre(rnd, C) for C in centre_patterns(2)}
{'00': {}, '01': {0: (4, 4)}, '11': {5: (0, 1)}}
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...worker_setup import blas_on_one_thread
from .bounds import unit_square_bound
from .grid import centre_removed, centre_weight, mirror_pattern, stick_count
from .halves import Parts, half_parts, least_score
from .keys import U64, merge_equal_keys
from .modular import NARROW_PRIME_LIMIT, binomial_bound, crt, primes_for_bound
from .pair_blocks import CHUNK_PAIRS, chunks, reaching_blocks, staircase
from .sweep import SweepStats

__all__ = ["JoinStats", "Round", "prepare_round", "join_centre", "centre_patterns", "penalty_scale",
           "penalty_table", "feature_rows", "product"]


@dataclass
class JoinStats:
    """Sizes and times of a table's centre join (summed over rounds and centre patterns)."""

    rounds: int = 0
    parts: list[int] = None  # type: ignore[assignment]  # parts per half, per round
    max_live: int = 0        # most live entries in a half sweep
    groups: int = 0          # left groups within reach of the round's level, summed over C
    pairs: int = 0           # matrix entries computed in the join
    hits: int = 0            # pairs passing the score cut
    sweep_seconds: float = 0.0
    join_seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.parts is None:
            self.parts = []

    def add_round(self, rnd: Round) -> None:
        """Count a round's half sweeps (once per round)."""
        self.rounds += 1
        self.parts += [len(rnd.left.r), len(rnd.right.r)]
        self.max_live = max(self.max_live, rnd.sweep.max_states)
        self.sweep_seconds += rnd.seconds


@dataclass
class Round:
    """What every centre pattern of one round shares: the parts of both halves and the cuts."""

    h: int
    w: int
    caps: dict[int, int]         # S -> the most sticks removed that count for it
    level: int
    left: Parts
    right: Parts
    symmetric: bool
    primes: np.ndarray
    primes_list: list[int]
    cap: np.ndarray              # cap[S] = largest R asked for S (-1: S not asked)
    lower: dict[int, int]        # S -> the unit-square lower bound on its R (<= its cap)
    left_penalty: np.ndarray     # the left rows' penalty features (independent of C)
    sweep: SweepStats            # the half sweep's sizes
    seconds: float               # preparing the round: half sweeps and decoding


def prepare_round(h: int, w: int, caps: dict[int, int], level: int,
                  max_entries: int | None = None, slack: int = 0, *, xp=np) -> Round:
    """The half sweeps of a round at level K with caps ``{S: largest R}`` (each at most
    (K - S) // 2), decoded into parts
    (``slack``, ``xp``: see :func:`.halves.half_parts`)."""
    begin = time.perf_counter()
    primes_list = primes_for_bound(binomial_bound(stick_count(h, w), max(caps.values())),
                                   NARROW_PRIME_LIMIT)
    primes = np.array(primes_list, dtype=U64)
    sweep = SweepStats()
    left, right = half_parts(h, w, caps, primes, max_entries, slack, sweep, xp=xp)
    cap = np.full(2 * max(caps) + left.xbits.shape[1] + 1, -1, dtype=np.int64)
    for q, c in caps.items():
        cap[q] = c
    start = unit_square_bound(h, w, max(max(caps), slack)).before_start()  # the halves' own
    lower = {q: min(c, int(start[min(q, len(start) - 1)])) for q, c in caps.items()}
    return Round(h, w, dict(caps), level, left, right, right is left, primes, primes_list, cap,
                 lower, penalty_table(h, None, penalty_scale(level)), sweep,
                 time.perf_counter() - begin)


@dataclass
class _Groups:
    """Groups of one side for one centre pattern C, sorted by base score s' + 2r'."""

    H: np.ndarray
    s: np.ndarray
    r: np.ndarray
    base: np.ndarray     # s' + 2r' (r' without the centre sticks)
    X: np.ndarray
    counts: np.ndarray


def _groups(parts: Parts, s: np.ndarray, max_squares: int, primes: np.ndarray,
            most: int) -> _Groups:
    """The groups of a centre pattern C: the fewest r per (H, X, s') with the counts at it,
    ``s`` the parts' squares with C's centre squares (:meth:`.halves.Parts.squares_with_centre`).

    Only the groups whose base s' + 2r is at most ``most`` are kept, from the parts with
    s' + 2r <= most alone: a part above it is either not at its group's fewest r (its count
    is not wanted) or at it, and then its whole group is above. The parts are ordered by
    (H, X, r), so the key sort below meets nearly sorted keys.
    """
    ok = np.flatnonzero((s <= max_squares) & (s + 2 * parts.r <= most))
    key = parts.hx[ok] * (max_squares + 1) + s[ok]
    (key,), fewest, counts = merge_equal_keys([key], parts.counts, primes,
                                              removed=parts.r[ok], rows=ok)
    s = key % (max_squares + 1)
    hx = key // (max_squares + 1)
    H, X = hx // len(parts.xbits), hx % len(parts.xbits)
    base = s + 2 * fewest
    order = np.argsort(base, kind="stable")
    return _Groups(H[order], s[order], fewest[order], base[order], X[order], counts[order])


#: float32 holds every integer below 2^24 exactly, so the levels must stay below it.
_EXACT_FLOAT32 = 1 << 24


def penalty_scale(level: int) -> float:
    """The penalty unit of a round: a power of two above the level, so that a pair with a
    penalty never passes the cut ``value <= level`` (float32 rounding of sums of
    non-negative terms never falls below a representable power of two they exceed)."""
    if level >= _EXACT_FLOAT32:
        raise ValueError(f"level {level} of the centre join is beyond float32's exact integers")
    return float(1 << max(12, level.bit_length()))


def penalty_table(h: int, C: int | None, big: float = 0.0) -> np.ndarray:
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


def feature_rows(X: np.ndarray, H: np.ndarray, score: np.ndarray, xbits: np.ndarray,
                 penalty: np.ndarray, left: bool) -> np.ndarray:
    """Rows of groups (crossing pattern X, centre horizontals H, score) whose products with
    the other side's give popcount(X_a & X_b) + score_a + score_b + penalty."""
    nbits = xbits.shape[1]
    rows = np.empty((len(X), nbits + 2 + penalty.shape[1]), dtype=np.float32)
    np.take(xbits, X, axis=0, out=rows[:, :nbits])
    score_column, one = (nbits, nbits + 1) if left else (nbits + 1, nbits)
    rows[:, score_column] = score
    rows[:, one] = 1.0
    np.take(penalty, H, axis=0, out=rows[:, nbits + 2:])
    return rows


def _crossing_counts(xbits: np.ndarray, X: np.ndarray) -> np.ndarray:
    """How many crossing squares each group keeps (an upper bound on its common squares)."""
    return xbits.sum(axis=1).astype(np.int64)[X]


def _view(buffer: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    return buffer[:shape[0] * shape[1]].reshape(shape)


def product(a: np.ndarray, b: np.ndarray, buffer: np.ndarray | None = None) -> np.ndarray:
    """``a @ b.T`` (float32), into ``buffer`` when it is given (a chunk of
    :func:`.pair_blocks.chunks`: 1 MiB of values, which stay in a core's cache for the
    comparison that follows)."""
    out = None if buffer is None else _view(buffer, (len(a), len(b)))
    return np.matmul(a, b.T, out=out)


def _picked(pick: slice | np.ndarray, k: np.ndarray) -> np.ndarray:
    """The group indices at positions ``k`` of a block's rows or columns."""
    return pick.start + k if isinstance(pick, slice) else pick[k]


def centre_patterns(h: int) -> list[int]:
    """Centre-column stick patterns, one of each top-bottom mirror pair.

    >>> [format(c, "03b") for c in centre_patterns(3)]
    ['000', '001', '010', '011', '101', '111']
    """
    return [c for c in range(1 << h) if mirror_pattern(c, h) >= c]


@blas_on_one_thread()   # its products are small: BLAS threads only spin
def join_centre(rnd: Round, C: int, stats: JoinStats | None = None) -> dict[int, tuple[int, int]]:
    """The configurations whose centre sticks are C (or its mirror): ``{S: (fewest R, count)}``
    for every S found within its cap."""
    begin = time.perf_counter()
    stats = stats if stats is not None else JoinStats()
    h, caps, level, primes = rnd.h, rnd.caps, rnd.level, rnd.primes
    left, right, symmetric = rnd.left, rnd.right, rnd.symmetric
    max_squares = max(caps)
    rbins = max(caps.values()) + 1          # every R counted is within its S's cap
    # reach[S]: the most removals that can still count for S in this unit: the round's cap,
    # lowered to the fewest R found so far. Only the fewest R of the unit is returned, and
    # reach never falls below it, so every pair at it is counted; the pairs above it (on
    # 6×7, 82% of the pairs under the level) skip the products of their counts.
    reach = rnd.cap.copy()
    hits_by_bin = np.zeros((max_squares + 1) * rbins, dtype=np.int64)
    residues = np.zeros((len(primes), (max_squares + 1) * rbins), dtype=U64)
    weight_c = centre_weight(C, h)
    removed_c = centre_removed(C, h)
    limit = level - 2 * removed_c
    # A pair needs base_a + base_b <= limit, and a side's least base is its least s' + 2r
    # over the parts, so each side keeps the groups up to limit minus the other's least.
    sl = left.squares_with_centre(C)
    sr = sl if symmetric else right.squares_with_centre(C)
    low_l = least_score(sl, left.r, max_squares)
    low_r = low_l if symmetric else least_score(sr, right.r, max_squares)
    gl = _groups(left, sl, max_squares, primes, limit - low_r)
    gr = gl if symmetric else _groups(right, sr, max_squares, primes, limit - low_l)
    stats.groups += len(gl.H)
    if len(gl.H) and len(gr.H):
        blocks = staircase(gl.base, gr.base, limit, symmetric)
        # Rows only for the groups the staircase reaches: sorted by score, they are a prefix
        # of each side (7×7: 1-10% of the groups, whose rows took half a unit's time).
        top = max((i1 for _, i1, _, _ in blocks), default=0)
        width = max((j1 for _, _, _, j1 in blocks), default=0)
        right_bits = left.xbits_mirrored if symmetric else right.xbits
        # A round whose S all lie above 0 also needs S >= the least S asked: most pairs under
        # the level have fewer squares (5×7, S = 26 at level 40: 126 of 9.8·10^7 have 26),
        # so the blocks skip the pairs that cannot reach it within the largest cap
        # (:func:`.pair_blocks.reaching_blocks`), and a second, narrower product
        # (popcount + s'_a + s'_b) drops the rest before decoding.
        least = min(caps)
        picked = None if least == 0 else reaching_blocks(
            blocks, gl.base, gl.s, _crossing_counts(left.xbits, gl.X), gl.r, gr.base, gr.s,
            _crossing_counts(right_bits, gr.X), gr.r, limit, least, rbins - 1 - removed_c,
            symmetric)
        cut = picked is not None
        row_ids, col_ids = slice(0, top), slice(0, width)   # the groups given feature rows
        if cut:    # only those that the blocks use
            none = np.zeros(0, dtype=np.int64)
            row_ids = np.unique(np.concatenate([r for r, _, _ in picked] or [none]))
            col_ids = np.unique(np.concatenate([c for _, c, _ in picked] or [none]))
            picked = [(np.searchsorted(row_ids, r), np.searchsorted(col_ids, c), twice)
                      for r, c, twice in picked]
        else:
            picked = [(slice(i0, i1), slice(j0, j1),
                       np.arange(j0, j1) >= i1 if symmetric else None)
                      for i0, i1, j0, j1 in blocks]
        rows = feature_rows(gl.X[row_ids], gl.H[row_ids], gl.base[row_ids] + 2 * removed_c,
                            left.xbits, rnd.left_penalty, True)
        cols = feature_rows(gr.X[col_ids], gr.H[col_ids], gr.base[col_ids], right_bits,
                            penalty_table(h, C), False)
        if cut:
            no_penalty = rnd.left_penalty[:, :0]
            square_rows = feature_rows(gl.X[row_ids], gl.H[row_ids], gl.s[row_ids], left.xbits,
                                       no_penalty, True)
            square_cols = feature_rows(gr.X[col_ids], gr.H[col_ids], gr.s[col_ids], right_bits,
                                       no_penalty, False)
        values_buffer = np.empty(CHUNK_PAIRS, dtype=np.float32)
        keep_buffer = np.empty(CHUNK_PAIRS, dtype=bool)
        for row_pick, col_pick, twice in chunks(picked):
            values = product(rows[row_pick], cols[col_pick], values_buffer)
            stats.pairs += values.size
            keep = np.less_equal(values, level, out=_view(keep_buffer, values.shape))
            if cut:
                keep &= product(square_rows[row_pick], square_cols[col_pick]) >= least
            hit = np.flatnonzero(keep.ravel())
            if len(hit) == 0:
                continue
            stats.hits += len(hit)
            ka = hit // values.shape[1]
            kb = hit - ka * values.shape[1]
            ia, ib = _picked(row_pick, ka), _picked(col_pick, kb)
            if cut:
                ia, ib = row_ids[ia], col_ids[ib]
            R = gl.r[ia] + gr.r[ib] + removed_c
            S = values.ravel()[hit].astype(np.int64) - 2 * R     # a value is S + 2R
            good = R <= reach[S]
            if not good.any():
                continue
            ia, ib, S, R = ia[good], ib[good], S[good], R[good]
            np.minimum.at(reach, S, R)
            wt = np.full(len(ia), weight_c, dtype=np.int64)
            if twice is not None:
                wt[twice[kb][good]] *= 2
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
