"""Primes, bounds and the Chinese remainder theorem."""

import math
import random

from gpuqueens.problems.matchsticks.modular import (NARROW_PRIME_LIMIT, WIDE_PRIME_LIMIT, binomial_bound,
                                           crt, is_prime, primes_below, primes_for_bound)


def test_is_prime_matches_trial_division():
    def slow(n):
        return n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1))

    assert [is_prime(k) for k in range(2000)] == [slow(k) for k in range(2000)]
    assert is_prime((1 << 61) - 1) and not is_prime((1 << 62) - 1)


def test_primes_are_below_limits_and_distinct():
    for limit in (WIDE_PRIME_LIMIT, NARROW_PRIME_LIMIT):
        primes = primes_below(limit, 5)
        assert len(set(primes)) == 5 and all(is_prime(p) and p < limit for p in primes)


def test_primes_for_bound_product_exceeds_bound():
    for bound in (1, 2**62, 2**200, math.comb(544, 272)):
        assert math.prod(primes_for_bound(bound)) > bound
        assert math.prod(primes_for_bound(bound, NARROW_PRIME_LIMIT)) > bound


def test_binomial_bound_is_the_largest_binomial():
    assert binomial_bound(10) == 252
    assert binomial_bound(10, 3) == 120
    assert binomial_bound(10, 50) == 252


def test_crt_recovers_big_numbers():
    rng = random.Random(1)
    primes = primes_for_bound(2**300)
    for _ in range(50):
        value = rng.randrange(2**300)
        assert crt([value % p for p in primes], primes) == value
