"""Problem 1 on long grids: one column's transfer raised to the w-th power by squaring.

Every column of an h×w grid but the last has the same transfer: a square matrix ``T`` over
the 2^(h+1) frontier states whose entries are polynomials in the number of removed sticks
(the point steps of :mod:`.transfer`, run over one column of h + 1 points). The counts
are the last column's map applied to ``T^w`` applied to the empty frontier, so squaring
takes about 2·log2(w) matrix products where the sweep takes w column steps: a 1×10^7
grid for R <= 1 in milliseconds instead of minutes.

Entries are exact Python integers truncated to R <= top (no primes, no CRT: a second,
independent method beside the sweep), or, with ``kept=True``, to K <= top sticks kept: the
count at R = E - K, for a grid with few sticks left (a product's cost grows with the square
of the truncation, so R near E is cheap this way and dear the other). A product costs 2^(3(h+1)) · (top + 1)(top + 2)/2
integer multiply-adds, so the method pays only for short sides and few removed sticks;
:func:`power_seconds` lets the caller pick it when it is the cheaper.

>>> count_by_column_powers(1, 2, 7)
[1, 1, 0, 2, 0, 0, 0, 1]
>>> count_by_column_powers(1, 10**7, 1)   # the sticks whose removal leaves no point at 1
[1, 29999995]
>>> count_by_column_powers(1, 2, 7, kept=True)  # the same counts, by sticks kept (E = 7)
[1, 0, 0, 0, 2, 0, 1, 1]
>>> count_by_column_powers(1, 10**4, 6, kept=True)[6]  # six sticks kept: two adjacent squares
9999
"""

from __future__ import annotations

import math

import numpy as np

from .grid import orient

__all__ = ["count_by_column_powers", "power_seconds"]

#: Seconds per integer multiply-add in the object-array products, and the fixed cost of a
#: product (``bench/calibrate_matchsticks.py`` on a 2-core machine, 2026-11-23: 5.2e-8 and
#: 1.45e-5; rounded up).
POWER_OP_SECONDS = 6e-8
POWER_PRODUCT_SECONDS = 1.5e-5


def _point_step(x: np.ndarray, h: int, i: int, has_down: bool, has_right: bool,
                kept: bool) -> np.ndarray:
    """One point step of :func:`.transfer.residues_by_removed` on exact integers.

    ``x`` has shape (B, 2^(h+1), 2, L): B independent states, frontier, up stick, and R
    (or K, the sticks kept, with ``kept``).
    """
    batch, length = x.shape[0], x.shape[-1]
    old = x.reshape(batch, 1 << (h - i), 2, 1 << i, 2, length)
    o00, o01 = old[:, :, 0, :, 0], old[:, :, 0, :, 1]
    o10, o11 = old[:, :, 1, :, 0], old[:, :, 1, :, 1]
    # Kept sticks (left, up) allowed for each number d + r of new sticks kept: degree != 1.
    by_kept = [o00 + o11, o01 + o10 + o11]
    by_kept.append(by_kept[1] + o00)
    new = np.zeros_like(x)
    out = new.reshape(old.shape)
    for r in (0, 1) if has_right else (0,):
        for d in (0, 1) if has_down else (0,):
            # sticks removed here (or kept: d and r are 0 where there is no stick)
            shift = d + r if kept else (has_down and not d) + (has_right and not r)
            if shift < length:
                out[:, :, r, :, d, shift:] = by_kept[d + r][..., : length - shift]
    return new


def _column(x: np.ndarray, h: int, has_right: bool, kept: bool) -> np.ndarray:
    for i in range(h + 1):
        x = _point_step(x, h, i, i < h, has_right, kept)
    return x


def _column_matrix(h: int, length: int, kept: bool) -> np.ndarray:
    """``T`` as an object array (length, F, F): ``T[R, after, before]``."""
    frontiers = 1 << (h + 1)
    basis = np.zeros((frontiers, frontiers, 2, length), dtype=object)
    basis[np.arange(frontiers), np.arange(frontiers), 0, 0] = 1
    after = _column(basis, h, True, kept)  # (before, after, up = 0 after the last row, R)
    return np.ascontiguousarray(after[:, :, 0, :].transpose(2, 1, 0))


def _times(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product of polynomial matrices (or a matrix and a vector), truncated to a's length."""
    length = a.shape[0]
    out = np.zeros((length,) + np.matmul(a[0], b[0]).shape, dtype=object)
    for k in range(length):
        for j in range(k + 1):
            out[k] = out[k] + np.matmul(a[j], b[k - j])
    return out


def count_by_column_powers(m: int, n: int, top: int, *, kept: bool = False) -> list[int]:
    """Exact counts of valid configurations with R = 0..top sticks removed (``kept``: with
    K = 0..top sticks kept, the counts at R = E - K).

    The same numbers as :func:`.transfer.count_by_removed` (tests compare them), in time
    logarithmic in the longer side.
    """
    h, w = orient(m, n)
    length = top + 1
    frontiers = 1 << (h + 1)
    power = _column_matrix(h, length, kept)
    vector = np.zeros((length, frontiers), dtype=object)
    vector[0, 0] = 1  # the empty frontier left of the first column, nothing removed
    while w:
        if w & 1:
            vector = _times(power, vector)
        w >>= 1
        if w:
            power = _times(power, power)
    state = np.zeros((1, frontiers, 2, length), dtype=object)
    state[0, :, 0, :] = vector.T
    last = _column(state, h, False, kept)  # no sticks leave the right edge
    return [int(v) for v in last[0, 0, 0]]


def power_seconds(h: int, w: int, top: int) -> float:
    """Estimated time of :func:`count_by_column_powers` on an h×w grid (h <= w), for any
    size (floats throughout)."""
    length = float(top) + 1.0
    frontiers = float(1 << (h + 1))
    products = 2.0 * max(1, math.ceil(math.log2(w + 1))) * length * (length + 1.0) / 2.0
    return products * (POWER_PRODUCT_SECONDS + POWER_OP_SECONDS * frontiers ** 3)
