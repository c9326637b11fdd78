"""Host enumeration of board prefixes: every legal placement of rows ``0..mark-1``.

The prefixes are the work the GPU threads (or the NumPy search) pick up: counting the
subtree below each prefix and summing gives the answer, and any subset of prefixes gives
the exact contribution of that subset. The order is fixed (case C before case S, B1
ascending, then each row's column ascending), so a prefix's index is a stable identity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rules import WORD, Case, cases, free_squares, place, split_bits

__all__ = ["Prefixes", "enumerate_prefixes", "expand_prefixes", "default_mark", "RULE_CORNER",
           "RULE_KNOWN_SHIFT"]

#: Rule word of a prefix record (docs/nqueens-method.md): bits 0-7 B1, bit 8 case C,
#: bits 9-10 the edge queens at corner distance B1 among the prefix rows (case S).
RULE_CORNER = 1 << 8
RULE_KNOWN_SHIFT = 9


@dataclass(frozen=True, eq=False)
class Prefixes:
    """A set of board prefixes at row ``mark`` of an n×n board (format: docs/nqueens-method.md).

    >>> p = enumerate_prefixes(6, 3)
    >>> len(p), p.cols.shape
    (10, (10, 3))
    """

    n: int
    mark: int
    left: np.ndarray  # uint32 (P,), attack masks for row `mark`
    down: np.ndarray
    right: np.ndarray
    cols: np.ndarray  # uint8 (P, mark), the column of each placed row
    b1: np.ndarray  # uint8 (P,)
    corner: np.ndarray  # uint8 (P,), 1 for case C

    def __len__(self) -> int:
        return int(self.left.shape[0])

    def take(self, indices) -> "Prefixes":
        """The prefixes at ``indices`` (an index array, a boolean mask or a slice)."""
        if not isinstance(indices, slice):
            indices = np.asarray(indices)
            if indices.dtype == bool:
                indices = np.flatnonzero(indices)
            elif indices.size == 0:
                indices = indices.astype(np.intp)  # np.asarray([]) is float64
        pick = lambda a: a[indices]  # noqa: E731  (first axis; keeps cols 2-D)
        return Prefixes(
            self.n, self.mark, pick(self.left), pick(self.down), pick(self.right),
            pick(self.cols), pick(self.b1), pick(self.corner),
        )

    def records(self) -> np.ndarray:
        """The prefixes as the kernel reads them: (P, 4) uint32 rows of left, down, right, rule.

        >>> enumerate_prefixes(6, 3).records().shape
        (10, 4)
        """
        n, mark = self.n, self.mark
        rule = self.b1.astype(np.uint32) | np.where(self.corner != 0, np.uint32(RULE_CORNER), np.uint32(0))
        side = self.corner == 0
        b1 = self.b1.astype(np.intp)
        b2 = n - 1 - b1
        rows = np.arange(len(self))
        known = np.zeros(len(self), dtype=np.uint32)
        # the left queen at (B2, 0) and the right one at (B1, n-1), where the prefix holds them
        for row, col in ((b2, 0), (b1, n - 1)):
            inside = side & (row < mark)
            known += inside & (self.cols[rows, np.where(inside, row, 0)] == col)
        rule |= known << np.uint32(RULE_KNOWN_SHIFT)
        return np.ascontiguousarray(np.stack(
            [self.left.astype(np.uint32), self.down.astype(np.uint32), self.right.astype(np.uint32), rule],
            axis=1))

    def groups(self) -> list[tuple[Case, slice]]:
        """Runs of consecutive prefixes that share a case, as ``(case, slice)`` pairs."""
        if len(self) == 0:
            return []
        key = self.corner.astype(np.int64) * 256 + self.b1
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        stops = np.r_[starts[1:], len(self)]
        return [
            (Case(self.n, bool(self.corner[a]), int(self.b1[a])), slice(int(a), int(b)))
            for a, b in zip(starts, stops)
        ]


def default_mark(n: int) -> int:
    """The mark row used when none is given: 5 (a few thousand to a few million prefixes)."""
    return max(2, min(5, n - 2))


def _case_roots(case: Case) -> Prefixes:
    """The single prefix that fixes a case's first rows (row 0, and row 1 in case C)."""
    left = down = right = np.zeros(1, dtype=WORD)
    for col in case.fixed_cols:
        left, down, right = place(case.n, left, down, right, np.full(1, 1 << col, dtype=WORD))
    return Prefixes(
        case.n, case.first_row, left, down, right,
        np.array([case.fixed_cols], dtype=np.uint8),
        np.array([case.b1], dtype=np.uint8), np.array([case.corner], dtype=np.uint8),
    )


def _concat(n: int, mark: int, parts: list[Prefixes]) -> Prefixes:
    parts = [p for p in parts if len(p)] or [Prefixes(
        n, mark, *(np.empty(0, WORD) for _ in range(3)),
        np.empty((0, mark), np.uint8), np.empty(0, np.uint8), np.empty(0, np.uint8))]
    join = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
    return Prefixes(n, mark, join("left"), join("down"), join("right"),
                    join("cols"), join("b1"), join("corner"))


def expand_prefixes(prefixes: Prefixes, mark: int) -> Prefixes:
    """Every continuation of ``prefixes`` down to row ``mark``, in the fixed order.

    >>> expand_prefixes(enumerate_prefixes(8, 2), 3).cols.shape
    (44, 3)
    """
    n = prefixes.n
    if not prefixes.mark <= mark <= n - 1:
        raise ValueError(f"mark must be in {prefixes.mark}..{n - 1}, got {mark}")
    parts = []
    for case, group in prefixes.groups():
        left, down, right = prefixes.left[group], prefixes.down[group], prefixes.right[group]
        cols = prefixes.cols[group]
        for row in range(prefixes.mark, mark):
            free = free_squares(case, row, left, down, right)
            parent, bit = split_bits(free)
            order = np.argsort(parent, kind="stable")  # lexicographic: parent, then column
            parent, bit = parent[order], bit[order]
            left, down, right = place(n, left[parent], down[parent], right[parent], bit)
            col = np.log2(bit.astype(np.float64)).astype(np.uint8)  # exact for powers of two
            cols = np.concatenate([cols[parent], col[:, None]], axis=1)
        size = len(left)
        parts.append(Prefixes(n, mark, left, down, right, cols,
                              np.full(size, case.b1, np.uint8), np.full(size, case.corner, np.uint8)))
    return _concat(n, mark, parts)


def enumerate_prefixes(n: int, mark: int | None = None) -> Prefixes:
    """Every prefix of rows ``0..mark-1`` for an n×n board, n >= 4 and 2 <= mark <= n-1.

    >>> p = enumerate_prefixes(8, 2)
    >>> len(p), int(p.corner.sum())
    (16, 5)
    """
    if n < 4:
        raise ValueError(f"prefixes exist for n >= 4, got n={n}")
    mark = default_mark(n) if mark is None else mark
    if not 2 <= mark <= n - 1:
        raise ValueError(f"mark must be in 2..{n - 1} for n={n}, got {mark}")
    return _concat(n, mark, [expand_prefixes(_case_roots(case), mark) for case in cases(n)])
