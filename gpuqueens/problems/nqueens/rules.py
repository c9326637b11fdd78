"""The per-row pruning rules of the symmetry-reduced search, vectorised over many nodes.

Every search in gpuqueens (host prefix enumeration, the NumPy search, the CUDA kernel)
descends row by row and applies the same rules; ``docs/nqueens-method.md`` explains why
they count each symmetry class exactly once. This module holds the NumPy versions, shared
by :mod:`.prefixes` and :mod:`.cpu`. Masks are ``uint32`` arrays: a bit shifted past
column 31 has left the board, so nothing needed is lost even for n = 32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["WORD", "Case", "cases", "free_squares", "free_squares_mixed", "place", "split_bits"]

WORD = np.uint32


@dataclass(frozen=True)
class Case:
    """One branch of the search: a corner queen (case C) or not (case S), and its ``B1``.

    For case C, row 0 holds column 0 and row 1 holds column ``b1``; the search resumes at
    row 2. For case S, row 0 holds column ``b1``; the search resumes at row 1.
    """

    n: int
    corner: bool
    b1: int

    @property
    def b2(self) -> int:
        return self.n - 1 - self.b1

    @property
    def first_row(self) -> int:
        """The first row not fixed by the case itself."""
        return 2 if self.corner else 1

    @property
    def fixed_cols(self) -> tuple[int, ...]:
        return (0, self.b1) if self.corner else (self.b1,)

    @property
    def edges(self) -> int:
        return (1 << (self.n - 1)) | 1

    @property
    def last_row_forbidden(self) -> int:
        """Columns the last row may not use in case S: those closer than B1 to a corner."""
        low = (1 << self.b1) - 1
        return low | (low << (self.n - self.b1))


def cases(n: int) -> list[Case]:
    """All cases for an n×n board (n >= 4), in the search order: case C first, B1 ascending.

    >>> [(c.corner, c.b1) for c in cases(6)]
    [(True, 2), (True, 3), (True, 4), (False, 1), (False, 2)]
    """
    corner = [Case(n, True, b1) for b1 in range(2, n - 1)]
    side = [Case(n, False, b1) for b1 in range(1, n) if b1 < n - 1 - b1]
    return corner + side


def free_squares(case: Case, row: int, left: np.ndarray, down: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Columns a queen may take in ``row`` for each node, after the case's pruning rules."""
    n = case.n
    mask = WORD((1 << n) - 1)
    free = ~(left | down | right) & mask
    if case.corner:
        if row < case.b1:
            free &= ~WORD(2)
        return free
    edges = WORD(case.edges)
    if row < case.b1:
        free &= ~edges
    elif row == case.b2:
        used = down & edges
        free = np.where(used == 0, WORD(0), np.where(used == edges, free, free & edges))
    if row == n - 1:
        free &= ~WORD(case.last_row_forbidden)
    return free


def free_squares_mixed(n: int, row: int, left: np.ndarray, down: np.ndarray, right: np.ndarray,
                       corner: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """:func:`free_squares` for nodes of different cases at once: each node under the rules of
    its own case (``corner``, ``b1``: one per node). Rows before the last only.

    >>> board = np.zeros(2, dtype=WORD)
    >>> free_squares_mixed(6, 1, board, board, board, np.array([1, 0]), np.array([3, 2])).tolist()
    [61, 30]
    """
    mask = WORD((1 << n) - 1)
    free = ~(left | down | right) & mask
    edges = WORD((1 << (n - 1)) | 1)
    # rows above B1: case C may not use column 1, case S no edge column
    above = row < b1
    free = np.where(above, free & ~np.where(corner != 0, WORD(2), edges), free)
    at_b2 = (corner == 0) & (row == n - 1 - b1.astype(np.intp))
    if at_b2.any():  # case S, row B2: both edge columns used by its end
        used = down & edges
        rule = np.where(used == 0, WORD(0), np.where(used == edges, free, free & edges))
        free = np.where(at_b2, rule, free)
    return free


def place(n: int, left: np.ndarray, down: np.ndarray, right: np.ndarray, bit: np.ndarray):
    """Attack masks of the next row after placing ``bit`` in the current one.

    The results are fresh arrays; ``left``, ``down`` and ``right`` are not modified.
    """
    mask = WORD((1 << n) - 1)
    one = WORD(1)
    new_left = np.bitwise_or(left, bit)
    np.left_shift(new_left, one, out=new_left)
    np.bitwise_and(new_left, mask, out=new_left)
    new_right = np.bitwise_or(right, bit)
    np.right_shift(new_right, one, out=new_right)
    return new_left, down | bit, new_right


def split_bits(free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One child per set bit: returns ``(parent index, bit)`` for every child.

    Children come grouped by the rank of their bit (all lowest bits first), not by parent;
    callers that need lexicographic order sort by parent (stable). Compacting an array
    costs ~20 times an elementwise operation, so the active set is compacted only when
    it has shrunk to a quarter.
    """
    rest = free.copy()
    index = None  # the parent index of each element of `rest`; None: the identity
    parents, bits = [], []
    while True:
        low = rest & np.negative(rest)  # lowest set bit (unsigned negation wraps)
        active = np.flatnonzero(low != 0)
        if active.size == 0:
            break
        parents.append(active if index is None else index[active])
        bits.append(low[active])
        rest ^= low
        if active.size * 4 < rest.size:
            rest = rest[active]
            index = active if index is None else index[active]
    if not parents:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=free.dtype)
    return np.concatenate(parents), np.concatenate(bits)
