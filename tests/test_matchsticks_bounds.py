"""The unit-square relaxation is a true lower bound, and exact on a hand-checked grid."""

import numpy as np

from gpuqueens.problems.matchsticks.bounds import UnitSquareBound
from gpuqueens.problems.matchsticks.bruteforce import rs_histogram


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
