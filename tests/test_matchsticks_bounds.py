"""The unit-square relaxation is a true lower bound, and exact on a hand-checked grid."""

import numpy as np

from gpuqueens.problems.matchsticks.bounds import UnitSquareBound
from gpuqueens.problems.matchsticks.bruteforce import rs_histogram
from gpuqueens.problems.matchsticks.grid import stick_count
from thin_grids import thin_table


def test_global_bound_never_exceeds_true_fewest_removals():
    for m, n in [(1, 3), (2, 2), (2, 3), (3, 3)]:
        hist = rs_histogram(m, n)
        h, w = min(m, n), max(m, n)
        start = UnitSquareBound(h, w, hist.shape[1] - 1).before_start()
        for s in range(hist.shape[1]):
            if hist[:, s].any():
                fewest = int(np.flatnonzero(hist[:, s])[0])
                assert int(start[min(s, len(start) - 1)]) <= fewest


def test_one_by_one():
    # At most 0 unit squares: remove all 4 sticks; at most 1: remove none.
    assert [int(v) for v in UnitSquareBound(1, 1, 3).before_start()] == [4, 0]


def test_values_past_255_do_not_saturate():
    # One row of squares has unit squares only, so the relaxation is exact there: at most
    # X squares left costs the fewest removals over S <= X (about w/2, here past 255).
    h, w = 1, 600
    bound = UnitSquareBound(h, w, 3)
    assert bound.dtype == np.uint16 and bound.unreachable == stick_count(h, w) + 1
    fewest = [r for _, r, _ in thin_table(h, w, 3)]
    assert [int(v) for v in bound.before_start()] == [min(fewest[: x + 1]) for x in range(4)]
    assert min(fewest) > 255


def test_table_type_holds_every_count_of_sticks():
    assert UnitSquareBound(2, 50, 2).dtype == np.uint8      # E = 252
    assert UnitSquareBound(2, 51, 2).dtype == np.uint16     # E = 257
