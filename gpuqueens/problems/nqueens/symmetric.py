"""Solutions fixed by a half turn (F180) and by a quarter turn (F90), for Burnside's count.

The number of symmetry classes follows from the total ``T`` without comparing any solution
with its images (``docs/nqueens-method.md``): ``unique = (T + F180 + 2·F90) / 8``. This
module counts F180 and F90 with a search that is far smaller than the main one: a solution
fixed by the half turn is decided by its top ⌊n/2⌋ rows, each queen ``(r, c)`` coming with
its partner ``(n-1-r, n-1-c)``; for odd n the middle row's queen sits in the centre.

Diagonals are kept as sets indexed directly (``r + c`` and ``c - r + n - 1``, up to 63 bits):
the placement is symmetric, so a square's partner is attacked exactly when the square is.
F90 solutions are the F180 solutions also fixed by the quarter turn, checked at the leaves.
"""

from __future__ import annotations

import numpy as np

from .rules import split_bits

__all__ = ["count_symmetric"]

_U64 = np.uint64
_POWERS = np.array([1 << k for k in range(64)], dtype=_U64)
#: Most nodes handled in one array before a level is cut into slices (bounds memory).
_SLICE = 1 << 16


def _column_of(bit: np.ndarray) -> np.ndarray:
    """Column index of single-bit masks, read from the exponent of their float64 value."""
    return (bit.astype(np.float64).view(np.int64) >> 52) - 1023


def _leaf_quarter_turn_fixed(n: int, cols: np.ndarray) -> np.ndarray:
    """Which half-turn-symmetric boards (given by their top rows' columns) a quarter turn fixes."""
    k, half = cols.shape
    pos = np.empty((k, n), dtype=np.int64)
    pos[:, :half] = cols
    pos[:, n - 1 - np.arange(half)] = n - 1 - cols
    if n % 2:
        pos[:, half] = half
    # the quarter turn maps (r, c) to (c, n-1-r): fixed when pos[pos[r]] == n-1-r for every r
    image = np.take_along_axis(pos, pos, axis=1)
    return (image == n - 1 - np.arange(n)).all(axis=1)


def count_symmetric(n: int) -> tuple[int, int]:
    """``(F180, F90)``: solutions of the n×n board fixed by the 180° and by the 90° turn.

    >>> count_symmetric(8), count_symmetric(12)
    ((4, 0), (80, 8))
    >>> count_symmetric(1), count_symmetric(2), count_symmetric(3)
    ((1, 1), (0, 0), (0, 0))
    """
    if n == 1:
        return 1, 1
    mask = _U64((1 << n) - 1)
    one = _U64(1)
    half = n // 2
    down = diag = anti = np.zeros(1, dtype=_U64)
    if n % 2:  # the middle row's queen is its own partner: the centre square
        centre = one << _U64(half)
        down = down | centre
        diag = diag | (one << _U64(2 * half))
        anti = anti | (one << _U64(n - 1))
    fixed = [0, 0]
    quarter = n % 4 in (0, 1)  # F90 is zero for other n: no need to keep the columns

    def descend(row: int, down, diag, anti, cols) -> None:
        if row == half:
            fixed[0] += len(down)
            if quarter and len(down):
                fixed[1] += int(_leaf_quarter_turn_fixed(n, cols).sum())
            return
        free = ~(down | (diag >> _U64(row)) | (anti >> _U64(n - 1 - row))) & mask
        # a queen may not share a diagonal with its own partner: columns n-1-row and row
        free &= ~((one << _U64(n - 1 - row)) | (one << _U64(row)))
        if row == 0:  # a mirror image swaps columns c and n-1-c: count c < n/2, then double
            free &= _U64((1 << half) - 1)
        parent, bit = split_bits(free)
        for start in range(0, parent.size, _SLICE):
            p, b = parent[start:start + _SLICE], bit[start:start + _SLICE]
            col = _column_of(b)
            # table lookups: NumPy shifts by an array of amounts are slow
            d1 = _POWERS[row + col] | _POWERS[2 * n - 2 - row - col]
            d2 = _POWERS[n - 1 - row + col] | _POWERS[n - 1 + row - col]
            descend(row + 1, down[p] | b | _POWERS[n - 1 - col], diag[p] | d1, anti[p] | d2,
                    np.concatenate([cols[p], col[:, None]], axis=1) if quarter else cols)

    descend(0, down, diag, anti, np.zeros((1, 0), dtype=np.int64))
    return 2 * fixed[0], 2 * fixed[1]
