"""Sizes of an M×N matchstick grid, and the orientation every solver works in.

An M×N grid of unit squares has (M+1)×(N+1) grid points, ``(M+1)·N`` horizontal and
``M·(N+1)`` vertical sticks, and ``Σ_u (M-u+1)(N-u+1)`` squares of sizes u = 1..min(M, N).
The problems are symmetric under transposition, so the solvers sweep along the longer side
with columns of ``short + 1`` points: the state of a sweep grows with the column height.

>>> stick_count(2, 3), square_count(2, 3)
(17, 8)
>>> orient(5, 3)
(3, 5)
"""

from __future__ import annotations

from ..._checks import check_int

__all__ = ["stick_count", "square_count", "orient", "check_grid", "mirror_pattern",
           "centre_removed", "centre_weight"]


def stick_count(m: int, n: int) -> int:
    """Number of sticks E = M(N+1) + N(M+1) of an M×N grid.

    >>> stick_count(10, 10)
    220
    """
    return m * (n + 1) + n * (m + 1)


def square_count(m: int, n: int) -> int:
    """Number of squares of every size in an M×N grid (all of them survive with R = 0).

    The sum over u = 1..k, k = min(M, N), of (a - u)(b - u) with a = M + 1, b = N + 1, in
    closed form: any size answers at once.

    >>> square_count(4, 4), square_count(6, 6)
    (30, 91)
    """
    k, a, b = min(m, n), m + 1, n + 1
    return k * a * b - (a + b) * k * (k + 1) // 2 + k * (k + 1) * (2 * k + 1) // 6


def orient(m: int, n: int) -> tuple[int, int]:
    """``(short, long)``: column height in squares and number of columns of squares."""
    return (m, n) if m <= n else (n, m)


def check_grid(m: object, n: object) -> tuple[int, int]:
    """Check grid sizes: integers of at least 1 (bool, float and str are refused)."""
    return check_int("m", m, low=1), check_int("n", n, low=1)


def mirror_pattern(pattern: int, bits: int) -> int:
    """A column's stick pattern turned upside down (bit i becomes bit bits-1-i).

    >>> mirror_pattern(0b001, 3), mirror_pattern(0b110, 3)
    (4, 3)
    """
    return int(format(pattern, f"0{bits}b")[::-1], 2) if bits else 0


def centre_removed(pattern: int, bits: int) -> int:
    """Sticks that a centre column's pattern removes (its zero bits).

    >>> centre_removed(0b101, 3)
    1
    """
    return bits - bin(pattern).count("1")


def centre_weight(pattern: int, bits: int) -> int:
    """How many patterns a centre pattern stands for when the join takes one of each mirror
    pair: 1 if it is its own mirror, else 2.

    >>> centre_weight(0b101, 3), centre_weight(0b001, 3)
    (1, 2)
    """
    return 1 if mirror_pattern(pattern, bits) == pattern else 2
