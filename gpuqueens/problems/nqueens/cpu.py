"""The NumPy search: counts the subtrees below a set of prefixes, many nodes at a time.

It is the CPU twin of ``kernels/nqueens.cu``: the same rows, rules and leaf check
(``docs/nqueens-method.md``), but breadth-first over arrays of nodes instead of one
depth-first stack per thread. A level that grows past :data:`LEVEL_LIMIT` nodes is cut
into slices that are finished one after another, so memory stays bounded for any n.
"""

from __future__ import annotations

import numpy as np

from .prefixes import Prefixes
from .rules import WORD, Case, free_squares, place, split_bits

__all__ = ["count_prefixes_cpu", "classify_leaves", "LEVEL_LIMIT"]

#: Most nodes held in one level array before the level is cut into slices.
LEVEL_LIMIT = 1 << 15  # ~128 KiB per mask array: measured fastest at n=15..16

# flags carried by case-S nodes: which rotation pre-tests of the leaf check already hold
_ROW_B2_HAS_COL0 = np.uint8(1)  # R90 may equal the board at row 0
_ROW_B1_HAS_LAST = np.uint8(2)  # R270 may equal the board at row 0


def _lex_compare(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise lexicographic comparison of two (k, n) arrays: -1, 0 or 1 per row."""
    differ = a != b
    first = differ.argmax(axis=1)
    rows = np.arange(a.shape[0])
    sign = np.where(a[rows, first] < b[rows, first], -1, 1)
    return np.where(differ.any(axis=1), sign, 0)


def classify_leaves(pos: np.ndarray) -> np.ndarray:
    """Class size counted for each case-S leaf board, or 0 where it is not the representative.

    ``pos`` is (k, n): ``pos[i, r]`` is the column of row r. The leaf is kept when no
    rotation is lexicographically smaller; it stands for 2, 4 or 8 solutions depending on
    which rotations fix it.

    >>> classify_leaves(np.array([[1, 3, 0, 2]]))  # n=4: fixed by 90° turns, a class of 2
    array([2])
    >>> classify_leaves(np.array([[1, 3, 5, 0, 2, 4], [2, 5, 1, 4, 0, 3]]))  # n=6: a class of 4
    array([4, 0])
    """
    k, n = pos.shape
    inv = np.empty_like(pos)
    inv[np.arange(k)[:, None], pos] = np.arange(n)
    r90 = n - 1 - inv
    r180 = n - 1 - pos[:, ::-1]
    r270 = inv[:, ::-1]
    c90, c180, c270 = (_lex_compare(pos, r) for r in (r90, r180, r270))
    size = np.where(c90 == 0, 2, np.where(c180 == 0, 4, 8))
    return np.where((c90 > 0) | (c180 > 0) | (c270 > 0), 0, size)


class _Search:
    """Breadth-first search of one case's prefixes, with per-prefix tallies."""

    def __init__(self, case: Case, prefixes: Prefixes, group: slice, per_prefix: bool):
        self.case = case
        self.n = case.n
        self.mark = prefixes.mark
        self.cols = prefixes.cols[group]
        self.size = self.cols.shape[0]
        self.per_prefix = per_prefix
        self.total = np.zeros(self.size if per_prefix else 1, dtype=np.int64)
        self.unique = np.zeros_like(self.total)
        # chain[i] = (parent index into level i-1, bit placed) for rows mark+i; level 0 = prefixes
        self.chain: list[tuple[np.ndarray, np.ndarray]] = []

    def run(self, left, down, right) -> None:
        flags = self._initial_flags()
        self._descend(self.mark, left, down, right, flags)

    def _initial_flags(self) -> np.ndarray:
        flags = np.zeros(self.size, dtype=np.uint8)
        case = self.case
        if case.corner:
            return flags
        if case.b2 < self.mark:
            flags[self.cols[:, case.b2] == 0] |= _ROW_B2_HAS_COL0
        if case.b1 < self.mark:
            flags[self.cols[:, case.b1] == self.n - 1] |= _ROW_B1_HAS_LAST
        return flags

    def _descend(self, row, left, down, right, flags) -> None:
        case, n = self.case, self.n
        free = free_squares(case, row, left, down, right)
        if row == n - 1:
            self._leaves(free, flags)
            return
        parent, bit = split_bits(free)
        for start in range(0, parent.size, LEVEL_LIMIT):
            p = parent[start:start + LEVEL_LIMIT]
            b = bit[start:start + LEVEL_LIMIT]
            f = flags
            if not case.corner:  # case C never needs the leaf check, so carries no flags
                f = flags[p]
                if row == case.b2:
                    f = f | np.where(b == WORD(1), _ROW_B2_HAS_COL0, np.uint8(0))
                if row == case.b1:
                    f = f | np.where(b == WORD(1 << (n - 1)), _ROW_B1_HAS_LAST, np.uint8(0))
            self.chain.append((p, b))
            self._descend(row + 1, *place(n, left[p], down[p], right[p], b), f)
            self.chain.pop()

    def _roots(self, index: np.ndarray) -> np.ndarray:
        """Prefix index (within the case group) of each node of the deepest level."""
        for parent, _ in reversed(self.chain):
            index = parent[index]
        return index

    def _boards(self, index: np.ndarray, last_bit: np.ndarray) -> np.ndarray:
        """Full boards (k, n) of leaves: prefix rows, searched rows, and the last row."""
        n, mark = self.n, self.mark
        pos = np.empty((index.size, n), dtype=np.int64)
        pos[:, n - 1] = np.log2(last_bit.astype(np.float64))
        for depth in range(len(self.chain) - 1, -1, -1):
            parent, bit = self.chain[depth]
            pos[:, mark + depth] = np.log2(bit[index].astype(np.float64))
            index = parent[index]
        pos[:, :mark] = self.cols[index]
        return pos

    def _leaves(self, free: np.ndarray, flags: np.ndarray) -> None:
        leaf = np.flatnonzero(free != 0)  # the last row has at most one free column
        if self.case.corner:
            weight = np.full(leaf.size, 8, dtype=np.int64)
        else:
            bit = free[leaf]
            check = (flags[leaf] != 0) | (bit == WORD(1 << self.case.b2))
            weight = np.full(leaf.size, 8, dtype=np.int64)
            if check.any():
                sub = leaf[check]
                weight[check] = classify_leaves(self._boards(sub, bit[check]))
        counted = weight > 0
        if self.per_prefix:
            roots = self._roots(leaf)
            self.total += np.bincount(roots, weights=weight, minlength=self.size).astype(np.int64)
            self.unique += np.bincount(roots, weights=counted, minlength=self.size).astype(np.int64)
        else:
            self.total[0] += int(weight.sum())
            self.unique[0] += int(counted.sum())


def count_prefixes_cpu(prefixes: Prefixes, *, per_prefix: bool = False):
    """Count the solutions below every prefix.

    Returns ``(total, unique)`` as Python ints, or with ``per_prefix=True`` two int64
    arrays with each prefix's contribution.

    >>> from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes
    >>> count_prefixes_cpu(enumerate_prefixes(8, 3))
    (92, 12)
    """
    size = len(prefixes)
    totals = np.zeros(size, dtype=np.int64)
    uniques = np.zeros(size, dtype=np.int64)
    total = unique = 0
    left = prefixes.left.astype(WORD)
    down = prefixes.down.astype(WORD)
    right = prefixes.right.astype(WORD)
    # per-node bincount weights go through float64: exact below 2^53 per prefix and call
    for case, group in prefixes.groups():
        search = _Search(case, prefixes, group, per_prefix)
        search.run(left[group], down[group], right[group])
        if per_prefix:
            totals[group] = search.total
            uniques[group] = search.unique
        else:
            total += int(search.total[0])
            unique += int(search.unique[0])
    if per_prefix:
        return totals, uniques
    return total, unique
