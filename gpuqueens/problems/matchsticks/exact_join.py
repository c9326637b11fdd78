"""Problem 2 by the centre join: valid configurations with exactly R sticks removed and
exactly S squares, from half sweeps in exact mode (:func:`.halves.exact_half_parts`).

The table's join (:mod:`.pairing`) keeps, per group, only the fewest removals, and scores a
pair by S + 2R, which cannot tell R = 5, S = 4 from R = 4, S = 6. Here R is exact on both
sides: a part's key holds its removals r, so for a centre pattern C (``r_C`` of its h
sticks removed) a left group joins a right group only when

    r_a + r_b + r_C = R   and   s'_a + s'_b + popcount(X_a & X_b) = S

with every centre point of degree != 1 (as in the table). The groups of each side are
sorted by (r, s'); the left groups with removals r_a meet only the right *bucket*
r_b = R - r_C - r_a, so the join is one block product per pair of buckets (a per-R split
instead of an encoding): inside it a float32 product gives popcount + s'_a + s'_b plus a
penalty above S for an invalid centre point, and a hit is a value equal to S. The buckets
are sorted by s', so only the pairs with s'_a + s'_b <= S are multiplied (the table's
staircase). For even w the right groups are the left ones mirrored: bucket pairs with
r_a < r_b count twice, r_a > r_b are skipped. Counts: residues modulo primes below 2^31
whose product exceeds C(E, R), summed over the hits, then the CRT.

Work units: one per centre pattern C (up to the top-bottom mirror), through
:func:`gpuqueens.runner.run_units`; a unit returns its residues, the units' residues add up.

>>> count_exact_join(2, 2, removed=2, squares=1), count_exact_join(3, 3, removed=8, squares=2)
(2, 715)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...runner import WorkUnit, run_units
from ...worker_setup import blas_on_one_thread
from .bounds import unit_square_bound
from .grid import centre_removed, centre_weight, orient, square_count, stick_count
from .halves import Parts, exact_half_parts
from .keys import U64, merge_equal_keys
from .modular import NARROW_PRIME_LIMIT, binomial_bound, crt, primes_for_bound
from .pair_blocks import CHUNK_PAIRS, chunks, staircase
from .pairing import (JoinStats, centre_patterns, feature_rows, penalty_scale, penalty_table,
                      product)
from .round_cache import RoundCache, forget_join_leftovers
from .sweep import SweepStats
from .unit_checks import check_count, check_residues

__all__ = ["ExactRound", "ExactGroups", "prepare_exact", "exact_groups", "bucket_pairs",
           "join_exact_centre", "exact_units", "solve_exact_unit", "count_exact_join",
           "MAX_EXACT_JOIN_SHORT_SIDE"]

#: Largest shorter side problem 2 answers by the join: 7×7 at the table's fewest R took
#: minutes and ~4 GB (docs/matchsticks.md); 8×8's halves would need far more memory.
MAX_EXACT_JOIN_SHORT_SIDE = 7


@dataclass
class ExactRound:
    """What every centre pattern of one problem-2 count shares: both halves' parts."""

    h: int
    w: int
    removed: int
    squares: int
    left: Parts
    right: Parts
    symmetric: bool
    primes: np.ndarray
    primes_list: list[int]
    left_penalty: np.ndarray     # the left rows' penalty features (independent of C)
    sweep: SweepStats
    seconds: float


def prepare_exact(h: int, w: int, removed: int, squares: int,
                  max_entries: int | None = None, *, xp=np) -> ExactRound:
    """The half sweeps of an h×w grid (h <= w) in exact mode for (R, S), decoded into parts
    (``xp``: the array module they run on, see :func:`.halves.half_parts`)."""
    begin = time.perf_counter()
    primes_list = primes_for_bound(binomial_bound(stick_count(h, w), removed), NARROW_PRIME_LIMIT)
    primes = np.array(primes_list, dtype=U64)
    sweep = SweepStats()
    left, right = exact_half_parts(h, w, removed, squares, primes, max_entries, sweep, xp=xp)
    return ExactRound(h, w, removed, squares, left, right, right is left, primes, primes_list,
                      penalty_table(h, None, penalty_scale(squares)), sweep,
                      time.perf_counter() - begin)


@dataclass
class ExactGroups:
    """Groups of one side for one centre pattern, sorted by (r, s'); ``starts[k]`` is the
    first group with ``r == k`` (``len(starts) == R + 2``)."""

    H: np.ndarray
    s: np.ndarray
    r: np.ndarray
    X: np.ndarray
    counts: np.ndarray
    starts: np.ndarray


def exact_groups(parts: Parts, C: int, squares: int, removed: int,
                 primes: np.ndarray) -> ExactGroups:
    """Fix the centre sticks C: close the centre squares they complete, drop the parts
    with more than S squares, and add up the counts of equal (H, X, s', r)."""
    s = parts.squares_with_centre(C)
    ok = np.flatnonzero(s <= squares)
    key = (parts.hx[ok] * (removed + 1) + parts.r[ok]) * (squares + 1) + s[ok]
    (key,), counts = merge_equal_keys([key], parts.counts, primes, rows=ok)
    s = key % (squares + 1)
    r = key // (squares + 1) % (removed + 1)
    hx = key // ((squares + 1) * (removed + 1))
    order = np.lexsort((s, r))
    r = r[order]
    starts = np.searchsorted(r, np.arange(removed + 2))
    return ExactGroups(hx[order] // len(parts.xbits), s[order], r,
                       hx[order] % len(parts.xbits), counts[order], starts)


def _rows(g: ExactGroups, lo: int, hi: int, xbits: np.ndarray, penalty: np.ndarray,
          left: bool) -> np.ndarray:
    """Feature rows of groups lo..hi-1: products give popcount + s'_a + s'_b + penalty."""
    return feature_rows(g.X[lo:hi], g.H[lo:hi], g.s[lo:hi], xbits, penalty, left)


def bucket_pairs(gl: ExactGroups, gr: ExactGroups, rest: int,
                 symmetric: bool) -> list[tuple[int, int, int, int, int]]:
    """``(a0, a1, b0, b1, weight)``: the left groups with r_a and the right groups with
    r_b = ``rest`` - r_a, both non-empty; for a symmetric join only r_a <= r_b, the
    pairs with r_a < r_b counting twice."""
    out = []
    for ra in range(min(rest, len(gl.starts) - 2) + 1):
        rb = rest - ra
        if symmetric and rb < ra:
            break
        if rb > len(gr.starts) - 2:
            continue
        a0, a1 = int(gl.starts[ra]), int(gl.starts[ra + 1])
        b0, b1 = int(gr.starts[rb]), int(gr.starts[rb + 1])
        if a1 > a0 and b1 > b0:
            out.append((a0, a1, b0, b1, 2 if symmetric and ra < rb else 1))
    return out


@blas_on_one_thread()   # its products are small: BLAS threads only spin
def join_exact_centre(rnd: ExactRound, C: int, stats: JoinStats | None = None) -> list[int]:
    """The residues (one per prime) of the configurations whose centre sticks are C or its
    mirror, with exactly R removed and S squares."""
    begin = time.perf_counter()
    stats = stats if stats is not None else JoinStats()
    h, primes, S = rnd.h, rnd.primes, rnd.squares
    removed_c = centre_removed(C, h)
    total = np.zeros(len(primes), dtype=U64)
    rest = rnd.removed - removed_c
    if rest >= 0:
        gl = exact_groups(rnd.left, C, S, rnd.removed, primes)
        gr = gl if rnd.symmetric else exact_groups(rnd.right, C, S, rnd.removed, primes)
        stats.groups += len(gl.H)
        xright = rnd.left.xbits_mirrored if rnd.symmetric else rnd.right.xbits
        right_penalty = penalty_table(h, C)
        values_buffer = np.empty(CHUNK_PAIRS, dtype=np.float32)
        hit_buffer = np.empty(CHUNK_PAIRS, dtype=bool)
        # one contiguous row of counts per prime: gathers from it are twice as fast
        left_counts = np.ascontiguousarray(gl.counts.T)
        right_counts = left_counts if gr is gl else np.ascontiguousarray(gr.counts.T)
        for a0, a1, b0, b1, weight in bucket_pairs(gl, gr, rest, rnd.symmetric):
            blocks = staircase(gl.s[a0:a1], gr.s[b0:b1], S, False)
            # rows only for the groups the staircase reaches (a prefix of each run)
            top = max((i1 for _, i1, _, _ in blocks), default=0)
            width = max((j1 for _, _, _, j1 in blocks), default=0)
            rows = _rows(gl, a0, a0 + top, rnd.left.xbits, rnd.left_penalty, True)
            cols = _rows(gr, b0, b0 + width, xright, right_penalty, False)
            for row_pick, col_pick, _ in chunks((slice(i0, i1), slice(j0, j1), None)
                                                for i0, i1, j0, j1 in blocks):
                values = product(rows[row_pick], cols[col_pick], values_buffer)
                stats.pairs += values.size
                hit = np.flatnonzero(np.equal(values.ravel(), S, out=hit_buffer[:values.size]))
                if len(hit) == 0:
                    continue
                stats.hits += len(hit)
                ka = hit // values.shape[1]
                ib = b0 + col_pick.start + hit - ka * values.shape[1]
                # the hits come row by row: each row's right counts are added first, then
                # multiplied by its left count once (30 ns a hit -> ~15)
                starts = np.flatnonzero(np.diff(ka, prepend=-1))
                ia = a0 + row_pick.start + ka[starts]
                for k, p in enumerate(primes):
                    # residues < 2^31: a row's sum of at most CHUNK_PAIRS = 2^18 of them
                    # stays below 2^49; its product with the left count (< 2^62) is
                    # reduced before the rows' remainders add up (fewer than 2^33 rows)
                    sums = np.add.reduceat(np.take(right_counts[k], ib), starts)
                    prod = sums % p * np.take(left_counts[k], ia) % p
                    total[k] = (total[k] + U64(weight) * (prod.sum(dtype=U64) % p)) % p
    weight_c = centre_weight(C, h)
    stats.join_seconds += time.perf_counter() - begin
    return [int(v) * weight_c % int(p) for v, p in zip(total, primes)]


def exact_units(h: int, w: int, removed: int, squares: int,
                max_entries: int | None = None) -> list[WorkUnit]:
    """One unit per centre pattern C (up to its top-bottom mirror)."""
    return [WorkUnit(f"matchsticks/{h}x{w}/R{removed}/S{squares}/C{C:0{h}b}",
                     {"h": h, "w": w, "removed": removed, "squares": squares, "C": C,
                      "max_entries": max_entries})
            for C in centre_patterns(h)]


def _prepare(h: int, w: int, removed: int, squares: int, max_entries: int | None,
             backend: str) -> ExactRound:
    from .gpu import array_module  # "gpu": the half sweeps on the device too

    return prepare_exact(h, w, removed, squares, max_entries, xp=array_module(backend))


#: The round whose units this process solves (its half sweeps, built by its first unit).
_rounds = RoundCache(_prepare, forget_join_leftovers)


def solve_exact_unit(payload: Mapping[str, Any], stats: JoinStats | None = None,
                     backend: str = "cpu", store: str | None = None) -> tuple[int, ...]:
    """One unit: the residues of its centre pattern (picklable; halves cached per process,
    or built once for the processes that share ``store``, :mod:`.round_store`).
    ``backend="gpu"``: half sweeps and pairing on the current CUDA device, same result."""
    key = (payload["h"], payload["w"], payload["removed"], payload["squares"],
           payload["max_entries"], backend)
    if backend == "gpu":
        from .gpu_check import check_device

        check_device("join")  # the first use in a process on a device: against the CPU
    with _rounds.using(*key, store=store) as rnd:
        if backend == "gpu":
            from .gpu_join import join_exact_centre_gpu

            return tuple(join_exact_centre_gpu(rnd, payload["C"], stats))
        return tuple(join_exact_centre(rnd, payload["C"], stats))


def count_exact_join(m: int, n: int, *, removed: int, squares: int,
                     run: Mapping[str, Any] | None = None, max_entries: int | None = None,
                     stats: JoinStats | None = None,
                     wrap_solver: Callable[[Callable], Callable] | None = None,
                     backend: str = "cpu", store: str | None = None) -> int:
    """Valid configurations of an m×n grid with exactly ``removed`` sticks removed and
    ``squares`` squares, by the centre join (units through
    :func:`gpuqueens.runner.run_units`; ``run``: its options, without a progress bar unless
    it asks for one; ``stats``, ``wrap_solver``, ``backend``, ``store``: as for
    :func:`.table.table_rows`)."""
    h, w = orient(m, n)
    if squares > square_count(h, w) or removed > stick_count(h, w):
        return 0
    run = dict(run or {})
    if stats is not None and run.get("executor") is not None:
        raise ValueError("stats are gathered in this process only: not with an executor")
    run.setdefault("progress", False)
    units = exact_units(h, w, removed, squares, max_entries)
    solve = functools.partial(solve_exact_unit, stats=stats, backend=backend, store=store)
    if wrap_solver is not None:
        solve = wrap_solver(solve)
    job = {"problem": "matchsticks-exact", "format": 1, "m": h, "n": w, "removed": removed,
           "squares": squares}
    primes = primes_for_bound(binomial_bound(stick_count(h, w), removed), NARROW_PRIME_LIMIT)
    try:
        results = run_units(units, solve, job=job, description=f"{h}×{w}, R={removed}, S={squares}",
                            result_width=len(primes),
                            check=functools.partial(check_residues, primes=primes), **run)
        if stats is not None:
            with _rounds.using(h, w, removed, squares, max_entries, backend) as rnd:
                stats.add_round(rnd)  # type: ignore[arg-type]  # the same fields as a Round's
        residues = [sum(result[k] for result in results.values()) % p
                    for k, p in enumerate(primes)]
        return check_count(crt(residues, primes), sticks=stick_count(h, w), removed=removed,
                           what=f"{h}×{w}, R={removed}, S={squares}")
    finally:  # this process's copies of the round's parts and of the bound
        _rounds.clear()
        unit_square_bound.cache_clear()
