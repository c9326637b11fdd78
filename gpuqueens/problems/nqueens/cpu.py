"""The NumPy search: counts the subtrees below a set of prefixes, many nodes at a time.

It is the CPU twin of ``kernels/nqueens.cu``: the same rows, rules and leaf weights
(``docs/nqueens-method.md``), but breadth-first over arrays of nodes instead of one
depth-first stack per thread. A prefix's count is its *weight*: three times the number of
solutions its subtree stands for (a leaf weighs 24/k, see :func:`leaf_weight`), so that
every count stays an integer; the weights of all prefixes add up to 3 × total. A level that grows past :data:`LEVEL_LIMIT` nodes is cut
into slices that are finished one after another, so memory stays bounded for any n.
"""

from __future__ import annotations

import numpy as np

from .prefixes import Prefixes
from .rules import WORD, Case, free_squares, place, split_bits

__all__ = ["count_prefixes_cpu", "leaf_weight", "LEVEL_LIMIT", "CORNER_LEAF_WEIGHT"]

#: Most nodes held in one level array before the level is cut into slices.
LEVEL_LIMIT = 1 << 15  # ~128 KiB per mask array: measured fastest at n=15..16

#: A case-C leaf stands for a class of 8 solutions, found once: weight 3 × 8.
CORNER_LEAF_WEIGHT = 24

# flags carried by case-S nodes: edge queens at corner distance B1 placed so far
_ROW_B2_HAS_COL0 = np.uint8(1)  # the left queen at (B2, 0)
_ROW_B1_HAS_LAST = np.uint8(2)  # the right queen at (B1, n-1)


def leaf_weight(edge_queens_at_b1) -> np.ndarray:
    """Weight of a case-S leaf with k edge queens at corner distance B1 (k = 1..4): 24 / k.

    The k images of the leaf's class that pass the case-S rules are all found, so each
    carries 1/k of the class's 8 members: 8/k solutions, 24/k in thirds.

    >>> leaf_weight(np.array([1, 2, 3, 4])).tolist()
    [24, 12, 8, 6]
    """
    return CORNER_LEAF_WEIGHT // np.asarray(edge_queens_at_b1, dtype=np.int64)


class _Search:
    """Breadth-first search of one case's prefixes, with per-prefix weights."""

    def __init__(self, case: Case, prefixes: Prefixes, group: slice, per_prefix: bool):
        self.case = case
        self.n = case.n
        self.mark = prefixes.mark
        self.cols = prefixes.cols[group]
        self.size = self.cols.shape[0]
        self.per_prefix = per_prefix
        self.weight = np.zeros(self.size if per_prefix else 0, dtype=np.int64)
        # the sum as a Python int: at n = 32 a case's share of a unit comes within 2x of int64's limit
        self.total = 0
        # chain[i] = parent index into level i-1 of each node at row mark+i; level 0 = prefixes
        self.chain: list[np.ndarray] = []

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
            if not case.corner:  # case-C leaves all weigh the same: no flags to carry
                f = flags[p]
                if row == case.b2:
                    f = f | np.where(b == WORD(1), _ROW_B2_HAS_COL0, np.uint8(0))
                if row == case.b1:
                    f = f | np.where(b == WORD(1 << (n - 1)), _ROW_B1_HAS_LAST, np.uint8(0))
            self.chain.append(p)
            self._descend(row + 1, *place(n, left[p], down[p], right[p], b), f)
            self.chain.pop()

    def _roots(self, index: np.ndarray) -> np.ndarray:
        """Prefix index (within the case group) of each node of the deepest level."""
        for parent in reversed(self.chain):
            index = parent[index]
        return index

    def _leaves(self, free: np.ndarray, flags: np.ndarray) -> None:
        leaf = np.flatnonzero(free != 0)  # the last row has at most one free column
        if self.case.corner:
            weight = np.full(leaf.size, CORNER_LEAF_WEIGHT, dtype=np.int64)
        else:
            bottom = free[leaf] == WORD(1 << self.case.b2)  # the bottom queen at (n-1, B2)
            edge_queens = 1 + (flags[leaf] & 1) + (flags[leaf] >> 1) + bottom
            weight = leaf_weight(edge_queens)
        if self.per_prefix:
            roots = self._roots(leaf)
            self.weight += np.bincount(roots, weights=weight, minlength=self.size).astype(np.int64)
        else:
            self.total += int(weight.sum())


def count_prefixes_cpu(prefixes: Prefixes, *, per_prefix: bool = False):
    """The weight of every prefix: three times the solutions its subtree stands for.

    Returns the summed weight as a Python int, or with ``per_prefix=True`` an int64 array
    with each prefix's weight. Over all prefixes of a board the weight is 3 × total.

    >>> from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes
    >>> count_prefixes_cpu(enumerate_prefixes(8, 3)) == 3 * 92
    True
    """
    weights = np.zeros(len(prefixes), dtype=np.int64)
    weight = 0
    left = prefixes.left.astype(WORD)
    down = prefixes.down.astype(WORD)
    right = prefixes.right.astype(WORD)
    # per-node bincount weights go through float64: exact below 2^53 per prefix and call
    for case, group in prefixes.groups():
        search = _Search(case, prefixes, group, per_prefix)
        search.run(left[group], down[group], right[group])
        if per_prefix:
            weights[group] = search.weight
        else:
            weight += search.total
    return weights if per_prefix else weight
