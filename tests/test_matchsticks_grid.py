"""Grid sizes and orientation."""

import pytest

from gpuqueens.problems.matchsticks.grid import check_grid, orient, square_count, stick_count


@pytest.mark.parametrize("m,n,sticks,squares", [(1, 1, 4, 1), (2, 3, 17, 8), (4, 4, 40, 30),
                                                 (6, 6, 84, 91), (10, 10, 220, 385)])
def test_sizes(m, n, sticks, squares):
    assert stick_count(m, n) == stick_count(n, m) == sticks
    assert square_count(m, n) == square_count(n, m) == squares


def test_square_count_closed_form_is_the_sum():
    for m in range(1, 12):
        for n in range(1, 12):
            assert square_count(m, n) == sum((m - u + 1) * (n - u + 1)
                                             for u in range(1, min(m, n) + 1))
    assert square_count(10**12, 10**12) > 10**35  # at once, whatever the size


def test_orient_puts_short_side_first():
    assert orient(3, 7) == orient(7, 3) == (3, 7)


@pytest.mark.parametrize("bad,error", [(0, ValueError), (-2, ValueError), (True, TypeError),
                                       (2.0, TypeError), ("3", TypeError)])
def test_check_grid_refuses(bad, error):
    with pytest.raises(error):
        check_grid(bad, 3)
    with pytest.raises(error):
        check_grid(3, bad)
