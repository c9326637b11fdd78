"""Lower bounds on the sticks still to remove, from a relaxation that counts unit squares only.

Every surviving unit square is a surviving square, so a configuration that ends with S'
squares has at most S' - s unit squares completed after the point where it had s squares.
Relaxed problem: from a sweep position and a *small* state, what is the fewest future
removals such that (a) every future point has degree != 1 and (b) at most X unit squares
are completed in the future? Its answer ``f[σ, X]`` is a lower bound for the real problem.

The small state σ is what the sweep of :mod:`.sweep` knows about unit squares: the
frontier sticks ``H`` (h+1 bits), the stick from above ``up`` (1 bit) and one bit per row
r for the open unit square whose bottom-left or top-left corner lies in the frontier
(``G``, h bits) — 2^(2h+2) states, small enough for a dense backward min-plus DP.

>>> bound = UnitSquareBound(2, 2, max_slack=4)
>>> [int(v) for v in bound.before_start()]   # fewest removals for <= X unit squares
[2, 2, 1, 1, 0]
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["UnitSquareBound", "NoBound", "unit_square_bound"]


class UnitSquareBound:
    """``after(p)[σ, X]``: fewest removals after sweep point p (points numbered column-major).

    X runs over 0..max_slack (clipped to h·w, where f stops changing). A value of
    ``unreachable`` (E + 1, more than any removal count) marks a state that cannot finish.
    The tables use the narrowest unsigned type that holds E + 1 (uint8 up to E = 254).
    """

    def __init__(self, h: int, w: int, max_slack: int):
        self.h, self.w = h, w
        self.max_slack = min(max_slack, h * w)
        self.states = 1 << (2 * h + 2)
        self.unreachable = h * (w + 1) + w * (h + 1) + 1
        self.dtype = np.min_scalar_type(self.unreachable)
        # the backward step adds up to 2 lost sticks to a stored value: a signed type that
        # holds unreachable + 2
        self._work = np.min_scalar_type(-(self.unreachable + 3))
        width = self.max_slack + 1
        points = (h + 1) * (w + 1)
        tables: list[np.ndarray] = [np.empty(0)] * (points + 1)  # tables[p + 1] = after(p)
        last = np.full((self.states, width), self.unreachable, dtype=self.dtype)
        last[0] = 0  # the sweep ends with every frontier stick absent and nothing open
        tables[points] = last
        for p in range(points - 1, -1, -1):
            j, i = divmod(p, h + 1)
            tables[p] = self._step_back(tables[p + 1], i, j)
        self._tables = tables

    def index(self, frontier: np.ndarray, up: np.ndarray, units: np.ndarray) -> np.ndarray:
        """Small-state index from the H bits, the up bit and the open-unit-square bits."""
        h = self.h
        return (frontier | (up << np.uint64(h + 1)) | (units << np.uint64(h + 2))).astype(np.int64)

    def after(self, p: int) -> np.ndarray:
        return self._tables[p + 1]

    def before_start(self) -> np.ndarray:
        """Fewest removals of the whole grid with at most X unit squares, X = 0..max_slack."""
        return self._tables[0][0]

    def _step_back(self, following: np.ndarray, i: int, j: int) -> np.ndarray:
        h, w = self.h, self.w
        sigma = np.arange(self.states, dtype=np.int64)
        frontier = sigma & ((1 << (h + 1)) - 1)
        up = (sigma >> (h + 1)) & 1
        units = sigma >> (h + 2)
        left = (frontier >> i) & 1
        has_down, has_right = i < h, j < w
        never, work = self.unreachable, self._work
        best = np.full(following.shape, never, dtype=work)
        for right in (0, 1) if has_right else (0,):
            for down in (0, 1) if has_down else (0,):
                valid = (left + up + down + right) != 1
                closed = np.zeros(self.states, dtype=np.int64)
                new_units = units
                if i >= 1:  # the unit square with bottom row i is settled here
                    r = i - 1
                    waiting = (units >> r) & 1
                    closed = waiting & up
                    opened = up & ((frontier >> r) & 1) & right
                    new_units = (units & ~(1 << r)) | (opened << r)
                new_frontier = (frontier & ~(1 << i)) | (right << i)
                new_up = down if has_down else 0
                target = new_frontier | (new_up << (h + 1)) | (new_units << (h + 2))
                lost = (has_down and not down) + (has_right and not right)
                ahead = following[target].astype(work)
                # One more unit square completed here: X future squares leave X-1 afterwards.
                shifted = np.where(closed[:, None] == 1,
                                   np.concatenate([np.full((self.states, 1), never, work),
                                                   ahead[:, :-1]], axis=1), ahead)
                cost = np.where(valid[:, None], shifted + lost, never)
                np.minimum(best, cost, out=best)
        return np.minimum(best, never).astype(self.dtype)


@functools.lru_cache(maxsize=2)
def unit_square_bound(h: int, w: int, max_slack: int) -> UnitSquareBound:
    """A shared :class:`UnitSquareBound` (read only): every round of a puzzle table asks for
    the same one (the table clears this cache when it ends). A bound with a larger
    ``max_slack`` also answers every smaller slack (column X depends on columns <= X only).
    """
    return UnitSquareBound(h, w, max_slack)


class NoBound:
    """A bound that prunes nothing, for a sweep whose caps let every stick go: with caps of
    E the unit-square bound drops only states that cannot end validly, which die at the
    latest when the sweep ends, and its tables take seconds to build from 6×6 on.

    >>> import numpy as np
    >>> NoBound().after(0).tolist(), NoBound().index(np.array([5, 9], dtype=np.uint64), 0, 0).tolist()
    ([[0]], [0, 0])
    """

    def after(self, p: int) -> np.ndarray:
        return np.zeros((1, 1), dtype=np.int64)

    def index(self, frontier, up, units):
        return (frontier & np.uint64(0)).astype(np.int64)

