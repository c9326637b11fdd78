"""The brute force itself: hand-checkable grids and internal consistency."""

import pytest

from gpuqueens.problems.matchsticks.bruteforce import MAX_BRUTE_STICKS, brute_counts, brute_table, rs_histogram
from gpuqueens.problems.matchsticks.grid import square_count, stick_count


def test_single_square_by_hand():
    # 4 sticks: all present (1 square) or all removed; any other subset leaves a degree-1 point.
    assert brute_counts(1, 1) == [1, 0, 0, 0, 1]
    assert brute_table(1, 1, [0, 1, 2]) == [(0, 4, 1), (1, 0, 1), (2, None, 0)]


def test_one_by_two_by_hand():
    # Keep all (2 squares); drop the middle stick (outer rectangle, 0 squares);
    # drop one square's 3 outer sticks (2 ways, 1 square); drop everything.
    assert brute_counts(1, 2) == [1, 1, 0, 2, 0, 0, 0, 1]


@pytest.mark.parametrize("m,n", [(1, 3), (2, 2), (2, 3)])
def test_histogram_shape_and_transpose(m, n):
    hist = rs_histogram(m, n)
    assert hist.shape == (stick_count(m, n) + 1, square_count(m, n) + 1)
    assert (hist == rs_histogram(n, m)).all()
    assert hist[0, square_count(m, n)] == 1 and hist[stick_count(m, n), 0] == 1


def test_refuses_large_grids():
    with pytest.raises(ValueError, match="brute force"):
        rs_histogram(4, 4)
    assert stick_count(3, 3) <= MAX_BRUTE_STICKS
