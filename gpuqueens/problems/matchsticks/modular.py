"""Exact big counts from fixed-width arithmetic: residues modulo primes, then the CRT.

The transfer matrices only *add* counts, so each can run in ``uint64`` modulo a prime p
and stay exact modulo p. A count c with 0 <= c < P = p1·p2·…·pk is then recovered exactly
from its residues by the Chinese remainder theorem, so it suffices to choose primes whose
product exceeds a proven upper bound on every count that is wanted.

The binomial bound: a configuration with exactly R sticks removed is determined by *which*
R of the E sticks are removed, so ``count(R) <= C(E, R)``, and any count restricted further
(by the number of squares, or to valid configurations) is smaller still. Problems 2 and 3
use it; problem 1 uses the tighter :func:`.count_bound.count_bound`, which it caps.

>>> primes = primes_below(1 << 20, 2)
>>> primes
[1048573, 1048571]
>>> crt([12345678901 % p for p in primes], primes)
12345678901
"""

from __future__ import annotations

import functools
import math

__all__ = ["is_prime", "primes_below", "primes_for_bound", "crt", "binomial_bound",
           "WIDE_PRIME_LIMIT", "NARROW_PRIME_LIMIT"]

#: Primes for dense additions: two residues < 2^62 add to < 2^63, never wrapping uint64.
WIDE_PRIME_LIMIT = 1 << 62
#: Primes for segmented sums: 2^33 residues < 2^31 add up without wrapping uint64.
NARROW_PRIME_LIMIT = 1 << 31

_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # deterministic below 3.3e24


def is_prime(n: int) -> bool:
    """Deterministic Miller–Rabin for n < 3.3·10^24 (all uint64 values included).

    >>> [k for k in range(20) if is_prime(k)]
    [2, 3, 5, 7, 11, 13, 17, 19]
    """
    if n < 2:
        return False
    for p in _WITNESSES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _WITNESSES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


@functools.lru_cache(maxsize=None)
def _primes_below(limit: int, count: int) -> tuple[int, ...]:
    found: list[int] = []
    candidate = limit - 1
    while len(found) < count:
        if is_prime(candidate):
            found.append(candidate)
        candidate -= 1
    return tuple(found)


def primes_below(limit: int, count: int) -> list[int]:
    """The ``count`` largest primes below ``limit``, largest first."""
    return list(_primes_below(limit, count))


def primes_for_bound(bound: int, limit: int = WIDE_PRIME_LIMIT) -> list[int]:
    """Fewest primes below ``limit`` whose product exceeds ``bound`` (so counts <= bound are exact).

    >>> len(primes_for_bound(2**100))
    2
    """
    primes: list[int] = []
    product = 1
    k = 1
    while product <= bound:
        primes = primes_below(limit, k)
        product = math.prod(primes)
        k += 1
    return primes or primes_below(limit, 1)


def binomial_bound(sticks: int, max_removed: int | None = None) -> int:
    """``max_{R <= max_removed} C(E, R)``: no count with R <= max_removed removed exceeds it.

    >>> binomial_bound(220, 16) == math.comb(220, 16)
    True
    """
    top = sticks if max_removed is None else min(max_removed, sticks)
    return math.comb(sticks, min(top, sticks // 2))


def crt(residues: list[int], primes: list[int]) -> int:
    """The unique c in ``[0, p1·…·pk)`` with ``c ≡ residues[i] (mod primes[i])``."""
    value, modulus = 0, 1
    for r, p in zip(residues, primes):
        # Garner step: choose t with value + modulus·t ≡ r (mod p).
        t = (int(r) - value) * pow(modulus, -1, p) % p
        value += modulus * t
        modulus *= p
    return value
