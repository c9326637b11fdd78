"""Coefficients of the count polynomial from its values at roots of unity modulo primes.

The count polynomial P(x) = Σ_R X_R x^R of a grid with E sticks has degree E, so its
values at N = E + 1 distinct points determine it. With primes p ≡ 1 (mod N) the points can
be the powers of a primitive N-th root of unity ω, and the coefficients come back by the
inverse discrete Fourier transform, exact in the field Z/p:

    X_R ≡ N^-1 · Σ_k P(ω^k) · ω^(-kR)   (mod p),

because Σ_k ω^(kj) is N when N divides j and 0 otherwise. The primes stay below 2^29 for
the lazy residues of :mod:`.evaluation` (sums of four values below 2p stay below 2^32).

>>> p = evaluation_primes(5, 10**6)[0]
>>> p % 5, p < PRIME_LIMIT
(1, True)
>>> w = root_of_unity(p, 5)
>>> values = [(3 + 2 * pow(w, k, p) + pow(w, 4 * k, p)) % p for k in range(5)]
>>> coefficients(values, p, w, 5).tolist()
[3, 2, 0, 0, 1]
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .modular import is_prime

__all__ = ["PRIME_LIMIT", "evaluation_primes", "root_of_unity", "points", "coefficients"]

#: Primes of the evaluation method: 8p < 2^32 (see :mod:`.evaluation`).
PRIME_LIMIT = 1 << 29


@functools.lru_cache(maxsize=None)
def _primes_one_mod(modulus: int, count: int, limit: int) -> tuple[int, ...]:
    found: list[int] = []
    candidate = (limit - 2) // modulus * modulus + 1  # largest k·modulus + 1 below limit
    while len(found) < count:
        if candidate <= modulus:
            raise ValueError(f"fewer than {count} primes ≡ 1 (mod {modulus}) below {limit}")
        if is_prime(candidate):
            found.append(candidate)
        candidate -= modulus
    return tuple(found)


def evaluation_primes(point_count: int, bound: int, limit: int = PRIME_LIMIT) -> list[int]:
    """Fewest primes p ≡ 1 (mod point_count), p < limit, largest first, whose product
    exceeds ``bound`` (at least one).

    >>> primes = evaluation_primes(221, 2**100)
    >>> [p % 221 for p in primes], math.prod(primes) > 2**100 > math.prod(primes[:-1])
    ([1, 1, 1, 1], True)
    """
    count = 1
    while True:
        primes = list(_primes_one_mod(point_count, count, limit))
        if math.prod(primes) > bound:
            return primes
        count += 1


def _prime_factors(n: int) -> list[int]:
    factors, d = [], 2
    while d * d <= n:
        if n % d == 0:
            factors.append(d)
            while n % d == 0:
                n //= d
        d += 1
    return factors + ([n] if n > 1 else [])


@functools.lru_cache(maxsize=None)
def root_of_unity(p: int, n: int) -> int:
    """A primitive n-th root of unity modulo the prime p (n divides p - 1).

    >>> root_of_unity(13, 4) in (5, 8)
    True
    """
    if (p - 1) % n:
        raise ValueError(f"{n} does not divide {p} - 1")
    for a in range(2, p):
        w = pow(a, (p - 1) // n, p)
        if all(pow(w, n // q, p) != 1 for q in _prime_factors(n)):
            return w
    if n == 1:
        return 1
    raise ValueError(f"no primitive {n}-th root of unity modulo {p}")  # cannot happen for prime p


def points(p: int, n: int) -> list[int]:
    """The n evaluation points ω^0, ω^1, ..., ω^(n-1) modulo p."""
    w = root_of_unity(p, n)
    out, x = [], 1
    for _ in range(n):
        out.append(x)
        x = x * w % p
    return out


def coefficients(values, p: int, w: int, count: int) -> np.ndarray:
    """The first ``count`` coefficients (mod p) of the polynomial of degree < n whose values
    at ω^k are ``values[k]`` (k = 0..n-1, ω = ``w`` a primitive n-th root of unity)."""
    n = len(values)
    v = np.asarray([int(x) % p for x in values], dtype=np.uint64)
    inverse = [1] * n  # ω^-e for e = 0..n-1
    w_inv = pow(w, -1, p)
    for e in range(1, n):
        inverse[e] = inverse[e - 1] * w_inv % p
    table = np.asarray(inverse, dtype=np.uint64)
    exponents = np.outer(np.arange(count, dtype=np.int64), np.arange(n, dtype=np.int64)) % n
    # products < p^2 < 2^58; n of them reduced below p sum to < 2^64
    sums = ((table[exponents] * v[None, :]) % np.uint64(p)).sum(axis=1, dtype=np.uint64)
    return (sums % np.uint64(p)) * np.uint64(pow(n, -1, p)) % np.uint64(p)
