"""The bound that sets problem 1's primes: never below a count, and much below C(E, R).

The exact distributions here come from the coefficient transfer with primes chosen by the
binomial bound (proven independently of :mod:`.count_bound`), so a bound that were too
small could not hide behind counts that it had itself made wrong.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import pytest
from fake_cupy import make_fake_cupy

from gpuqueens.problems.matchsticks import count_bound as cb
from gpuqueens.problems.matchsticks.grid import orient, stick_count
from gpuqueens.problems.matchsticks.interpolation import evaluation_primes
from gpuqueens.problems.matchsticks.modular import (WIDE_PRIME_LIMIT, binomial_bound, crt,
                                                    primes_for_bound)
from gpuqueens.problems.matchsticks.transfer import residues_by_removed


@functools.lru_cache(maxsize=None)
def exact_counts(m: int, n: int) -> tuple[int, ...]:
    """The whole distribution, with primes for max C(E, R) (not for the bound under test)."""
    h, w = orient(m, n)
    sticks = stick_count(h, w)
    primes = primes_for_bound(binomial_bound(sticks), WIDE_PRIME_LIMIT)
    columns = [[int(v) for v in residues_by_removed(h, w, sticks + 1, p)] for p in primes]
    return tuple(crt(list(values), primes) for values in zip(*columns))


SMALL = [(m, n) for m in range(1, 7) for n in range(m, 9)]


@pytest.mark.parametrize("m,n", SMALL + [(7, 11), (9, 9), (10, 10)])
def test_bound_is_at_least_every_count_and_the_total(m, n):
    counts = exact_counts(m, n)
    bound = cb.count_bound(m, n)
    assert bound >= sum(counts) >= max(counts)
    assert bound <= binomial_bound(stick_count(m, n))
    sticks = len(counts) - 1
    for top in sorted({0, 1, 2, 3, sticks // 8, sticks // 4, sticks // 3, sticks // 2, sticks - 1}):
        assert cb.count_bound(m, n, top) >= max(counts[:top + 1]), top


@pytest.mark.parametrize("m,n", [(2, 3), (4, 4), (3, 7), (6, 6)])
def test_float_sweep_is_below_the_exact_value_by_at_most_the_proven_factor(m, n):
    # P(x) exactly from the counts, for every x the bound uses: computed <= exact <= proven
    counts = exact_counts(m, n)
    h, w = orient(m, n)
    values, exponents = cb.scaled_values(h, w, cb.BOUND_POINTS)
    steps = (h + 1) * (w + 1)
    factor = 1 + Fraction(2 * cb.ROUNDINGS_PER_STEP * steps, 1 << 53)
    for x, value, exponent in zip(cb.BOUND_POINTS, values, exponents):
        exact = sum(c * Fraction(x) ** r for r, c in enumerate(counts))
        computed = Fraction(value) * Fraction(2) ** exponent
        assert exact <= computed * factor
        assert computed <= exact * (1 + Fraction(1, 1 << 40))  # a float sweep, not a guess


def test_bound_is_close_to_the_total():
    # tight: no more than the margin above P(1) (P(1) itself is within 4.1 bits of the
    # largest count at 10×10)
    for m, n in [(6, 8), (9, 9), (10, 10)]:
        total = sum(exact_counts(m, n))
        assert cb.count_bound(m, n) <= (total + 1) * 2 ** cb.MARGIN_BITS * (1 + 2.0 ** -19)
    counts = exact_counts(10, 10)
    assert math.log2(sum(counts)) - math.log2(max(counts)) < 4.1


def test_short_r_ranges_use_smaller_x():
    counts = exact_counts(10, 10)
    # R <= 40: C(220, 40) has 146.6 bits, P(1) 167.3, the largest count 137.4
    bound = cb.count_bound(10, 10, 40)
    assert bound >= max(counts[:41])
    assert bound.bit_length() <= 144 < binomial_bound(220, 40).bit_length()


# primes for the whole distribution, (binomial, bound): below 2^62 (the CPU method) and
# the evaluation method's below 2^29, ≡ 1 mod E + 1 (docs/performance.md quotes these)
PRIMES = {10: ((4, 3), (8, 6)), 12: ((5, 4), (11, 9)), 14: ((7, 6), (15, 12)),
          16: ((9, 7), (19, 15))}


@pytest.mark.parametrize("side", sorted(PRIMES))
def test_fewer_primes_on_square_grids(side):
    sticks = stick_count(side, side)
    bound, binomial = cb.count_bound(side, side), binomial_bound(sticks)
    wide = (len(primes_for_bound(binomial)), len(primes_for_bound(bound)))
    narrow = (len(evaluation_primes(sticks + 1, binomial)), len(evaluation_primes(sticks + 1, bound)))
    assert (wide, narrow) == PRIMES[side]


def test_runs_on_the_cupy_stand_in():
    # device arrays throughout: the stand-in refuses any host array mixed in
    cp = make_fake_cupy({})
    for m, n, top in [(3, 5, None), (6, 7, None), (6, 7, 20)]:
        assert cb.count_bound(m, n, top, xp=cp) == cb.count_bound(m, n, top)


def test_the_estimate_follows_the_bound():
    for h, w in [(2, 9), (3, 3), (5, 12), (8, 8), (11, 13)]:
        sticks = stick_count(h, w)
        for top in (sticks, sticks // 4, 3):
            estimate = cb.estimated_bound_bits(h, w, top)
            assert abs(estimate - math.log2(cb.count_bound(h, w, top))) < 0.1 or (
                top < sticks and estimate > math.log2(cb.count_bound(h, w, top)))


def test_x_outside_the_proven_range_is_refused():
    with pytest.raises(ValueError, match="proven"):
        cb.scaled_values(2, 2, [2.0 ** -7])
    with pytest.raises(ValueError, match="proven"):
        cb.scaled_values(2, 2, [1.5])
