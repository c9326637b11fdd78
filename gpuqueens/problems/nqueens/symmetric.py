"""Solutions fixed by a half turn (F180) and by a quarter turn (F90), for Burnside's count.

The number of symmetry classes follows from the total ``T`` without comparing any solution
with its images (``docs/nqueens-method.md``): ``unique = (T + F180 + 2·F90) / 8``. This
module counts F180 and F90 with a search that is far smaller than the main one: a solution
fixed by the half turn is decided by its top ⌊n/2⌋ rows, each queen ``(r, c)`` coming with
its partner ``(n-1-r, n-1-c)``; for odd n the middle row's queen sits in the centre.

Diagonals are kept as sets indexed directly (``r + c`` and ``c - r + n - 1``, up to 63 bits):
the placement is symmetric, so a square's partner is attacked exactly when the square is.
F90 solutions are the F180 solutions also fixed by the quarter turn, checked at the leaves.
Row 0 takes only columns ``c < n/2`` (a mirror image swaps ``c`` and ``n-1-c``), so every
count here is half of F180 or F90 until :func:`count_symmetric` doubles it.

The search is cut like the main one: :func:`symmetric_prefixes` places the first rows and
:func:`count_symmetric_below` searches below each prefix. ``kernels/nqueens_symmetric.cu``
searches the same prefixes on the GPU and must give the same count for each one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rules import split_bits

__all__ = ["count_symmetric", "SymmetricPrefixes", "symmetric_prefixes", "expand_symmetric", "symmetric_work",
           "count_symmetric_below", "quarter_turn_possible"]

_U64 = np.uint64
_POWERS = np.array([1 << k for k in range(64)], dtype=_U64)
#: Most nodes handled in one array before a level is cut into slices (bounds memory).
_SLICE = 1 << 16
#: Columns of one prefix in its record (the kernel's NQS_RECORD_WORDS: 5 mask words, then
#: the columns of rows 0..15, one byte each).
RECORD_WORDS = 9


def quarter_turn_possible(n: int) -> bool:
    """A solution fixed by the quarter turn exists only for n ≡ 0 or 1 (mod 4)."""
    return n % 4 in (0, 1)


@dataclass(frozen=True, eq=False)
class SymmetricPrefixes:
    """Half-turn-symmetric placements of rows ``0..rows-1`` (with their partner rows).

    ``down`` holds the used columns, ``diag`` and ``anti`` the used diagonals ``r + c`` and
    ``c - r + n - 1`` (uint64 sets), ``cols`` the column of each placed top row.
    """

    n: int
    rows: int
    down: np.ndarray  # uint64 (P,)
    diag: np.ndarray  # uint64 (P,)
    anti: np.ndarray  # uint64 (P,)
    cols: np.ndarray  # int64 (P, rows)

    def __len__(self) -> int:
        return int(self.down.shape[0])

    def take(self, indices) -> "SymmetricPrefixes":
        pick = lambda a: a[indices]  # noqa: E731
        return SymmetricPrefixes(self.n, self.rows, pick(self.down), pick(self.diag), pick(self.anti),
                                 pick(self.cols))

    def records(self) -> np.ndarray:
        """The prefixes as ``kernels/nqueens_symmetric.cu`` reads them: (P, 9) uint32 rows of
        down, diag (low, high word), anti (low, high word) and 16 column bytes."""
        size = len(self)
        out = np.zeros((size, RECORD_WORDS), dtype=np.uint32)
        low = np.uint64(0xFFFFFFFF)
        out[:, 0] = self.down.astype(np.uint32)
        for k, mask in ((1, self.diag), (3, self.anti)):
            out[:, k] = (mask & low).astype(np.uint32)
            out[:, k + 1] = (mask >> np.uint64(32)).astype(np.uint32)
        cols = np.zeros((size, 16), dtype=np.uint8)
        cols[:, :self.rows] = self.cols
        out[:, 5:] = cols.view("<u4").reshape(size, 4)
        return out


def _column_of(bit: np.ndarray) -> np.ndarray:
    """Column index of single-bit masks, read from the exponent of their float64 value."""
    return (bit.astype(np.float64).view(np.int64) >> 52) - 1023


def _root(n: int) -> SymmetricPrefixes:
    """The empty placement (for odd n, with the centre queen of the middle row)."""
    down = diag = anti = np.zeros(1, dtype=_U64)
    if n % 2:  # the middle row's queen is its own partner: the centre square
        half = n // 2
        down = down | _POWERS[half]
        diag = diag | _POWERS[2 * half]
        anti = anti | _POWERS[n - 1]
    return SymmetricPrefixes(n, 0, down, diag, anti, np.zeros((1, 0), dtype=np.int64))


def _free(n: int, row: int, down, diag, anti) -> np.ndarray:
    """Free columns of ``row`` (and so of its partner row) for each placement."""
    one = _U64(1)
    free = ~(down | (diag >> _U64(row)) | (anti >> _U64(n - 1 - row))) & _U64((1 << n) - 1)
    # a queen may not share a diagonal with its own partner: columns n-1-row and row
    free &= ~((one << _U64(n - 1 - row)) | (one << _U64(row)))
    if row == 0:  # a mirror image swaps columns c and n-1-c: count c < n/2, then double
        free &= _U64((1 << (n // 2)) - 1)
    return free


def _children(p: SymmetricPrefixes, parent: np.ndarray, bit: np.ndarray, keep_cols: bool) -> SymmetricPrefixes:
    """Place the queen ``bit`` (and its partner) in row ``p.rows`` of each ``parent``."""
    n, row = p.n, p.rows
    col = _column_of(bit)
    # table lookups: NumPy shifts by an array of amounts are slow
    d1 = _POWERS[row + col] | _POWERS[2 * n - 2 - row - col]
    d2 = _POWERS[n - 1 - row + col] | _POWERS[n - 1 + row - col]
    cols = np.concatenate([p.cols[parent], col[:, None]], axis=1) if keep_cols else p.cols[:0]
    return SymmetricPrefixes(n, row + 1, p.down[parent] | bit | _POWERS[n - 1 - col], p.diag[parent] | d1,
                             p.anti[parent] | d2, cols)


def expand_symmetric(p: SymmetricPrefixes) -> SymmetricPrefixes:
    """Every placement of one more row, in order (prefix, then column)."""
    parent, bit = split_bits(_free(p.n, p.rows, p.down, p.diag, p.anti))
    order = np.argsort(parent, kind="stable")
    return _children(p, parent[order], bit[order], keep_cols=True)


def symmetric_prefixes(n: int, rows: int) -> SymmetricPrefixes:
    """Every half-turn-symmetric placement of rows ``0..rows-1`` (1 <= rows <= n // 2), in
    a fixed order; row 0 takes only the columns left of the middle.

    >>> p = symmetric_prefixes(8, 2)
    >>> len(p), p.cols.tolist()[:2]
    (10, [[1, 3], [1, 4]])
    """
    if not (n >= 2 and 1 <= rows <= n // 2):
        raise ValueError(f"symmetric prefixes need n >= 2 and 1 <= rows <= n // 2, got n={n}, rows={rows}")
    p = _root(n)
    for _ in range(rows):
        p = expand_symmetric(p)
    return p


def symmetric_work(n: int, target: int, rows_below: int = 3) -> SymmetricPrefixes:
    """Prefixes for a parallel search: rows placed one by one until there are ``target``
    prefixes or only ``rows_below`` rows are left to search below them (n >= 4).

    >>> p = symmetric_work(20, 4096)
    >>> p.rows, len(p)
    (4, 12131)
    """
    p = symmetric_prefixes(n, 1)
    while len(p) < target and p.rows + rows_below < n // 2:
        p = expand_symmetric(p)
    return p


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


def count_symmetric_below(prefixes: SymmetricPrefixes, *, per_prefix: bool = False):
    """Half-turn-symmetric completions below each prefix, and those of them that the quarter
    turn fixes too: ``(f180, f90)`` summed (Python ints), or with ``per_prefix=True`` two
    int64 arrays. These are the halves of F180 and F90 (row 0 is searched left of the middle).

    >>> [a.tolist() for a in count_symmetric_below(symmetric_prefixes(12, 1), per_prefix=True)]
    [[4, 12, 6, 10, 8], [0, 0, 0, 4, 0]]
    """
    n, size = prefixes.n, len(prefixes)
    half = n // 2
    quarter = quarter_turn_possible(n)  # F90 is zero for other n: no need to keep the columns
    f180 = np.zeros(size if per_prefix else 1, dtype=np.int64)
    f90 = np.zeros_like(f180)

    def descend(p: SymmetricPrefixes, root: np.ndarray | None) -> None:
        """``root``: the prefix of each node (None when only the sums are wanted)."""
        if p.rows == half:
            if root is None:
                f180[0] += len(p)
                if quarter and len(p):
                    f90[0] += int(_leaf_quarter_turn_fixed(n, p.cols).sum())
            else:
                f180[:] += np.bincount(root, minlength=size)
                if quarter and len(p):
                    f90[:] += np.bincount(root[_leaf_quarter_turn_fixed(n, p.cols)], minlength=size)
            return
        parent, bit = split_bits(_free(n, p.rows, p.down, p.diag, p.anti))
        for start in range(0, parent.size, _SLICE):
            piece = slice(start, start + _SLICE)
            descend(_children(p, parent[piece], bit[piece], keep_cols=quarter),
                    None if root is None else root[parent[piece]])

    descend(prefixes, np.arange(size) if per_prefix else None)
    if per_prefix:
        return f180, f90
    return int(f180[0]), int(f90[0])


def count_symmetric(n: int) -> tuple[int, int]:
    """``(F180, F90)``: solutions of the n×n board fixed by the 180° and by the 90° turn.

    >>> count_symmetric(8), count_symmetric(12)
    ((4, 0), (80, 8))
    >>> count_symmetric(1), count_symmetric(2), count_symmetric(3)
    ((1, 1), (0, 0), (0, 0))
    """
    if n == 1:
        return 1, 1
    f180, f90 = count_symmetric_below(symmetric_prefixes(n, 1))
    return 2 * f180, 2 * f90
