"""Long thin grids, where removal counts pass 255: problem 2 and the puzzle table against
counts that share no code with them (tests/thin_grids.py, closed forms, the transfer matrix).

The unit-square bound once stored its values in 8 bits, so that the fewest removals of a
long grid (2×255: 256 or more) saturated and problem 2 and the table answered wrongly
(2×255, 2×256 and 1×508..1×512 among others); the grids below sit on both sides of that
boundary.
"""

import pytest

import gpuqueens
from gpuqueens.problems.matchsticks.bruteforce import rs_histogram
from gpuqueens.problems.matchsticks.grid import square_count, stick_count
from thin_grids import thin_counts, thin_table


def test_the_independent_walk_agrees_with_the_brute_force():
    # (its own doctests run with the rest: --doctest-modules collects tests/ too)
    for h, w in [(1, 1), (1, 2), (1, 7), (2, 1), (2, 3), (2, 4)]:
        hist = rs_histogram(h, w)
        top = square_count(h, w)
        fewest = [(s, *next(((r, int(hist[r, s])) for r in range(len(hist)) if hist[r, s]),
                            (None, 0))) for s in range(top + 1)]
        assert thin_table(h, w, top) == fewest, (h, w)
        for r in range(stick_count(h, w) + 1):
            assert thin_counts(h, w, r, top) == [int(v) for v in hist[r]], (h, w, r)


@pytest.mark.parametrize("m, n", [(2, 254), (2, 256), (1, 510)])
def test_table_on_long_grids(m, n):
    table = gpuqueens.matchstick_table(m, n, squares=range(15), backend="cpu")
    assert list(table.rows) == thin_table(m, n, 14)


def test_table_of_the_report():
    # Said "S = 0 is impossible" when the bound saturated; S = 0 always is possible.
    table = gpuqueens.matchstick_table(2, 256, squares=[0, 1, 2, 14], backend="cpu")
    assert table.rows == ((0, 257, 50), (1, 256, 40), (2, 255, 8), (14, 249, 7750552213006000))


def test_problem_2_at_the_fewest_removals_2x255():
    expected = thin_table(2, 255, 14)
    for s in (0, 7, 14):
        _, fewest, ways = expected[s]
        assert gpuqueens.matchsticks(2, 255, removed=fewest, squares=s, backend="cpu") == ways
    assert gpuqueens.matchsticks(2, 255, removed=expected[0][1] - 1, squares=0,
                                 backend="cpu") == 0


def test_problem_2_above_the_fewest_removals_1x512():
    # 258 removed: two more than the fewest for S = 0; the counts pass 2^64 for S >= 2
    expected = thin_counts(1, 512, 258, 5)
    assert expected[5] > 2**64
    for s in (0, 1, 5):
        assert gpuqueens.matchsticks(1, 512, removed=258, squares=s, backend="cpu") == expected[s]


def test_problem_2_near_every_stick_removed_2x255():
    h, w = 2, 255
    sticks = stick_count(h, w)
    assert gpuqueens.matchsticks(h, w, removed=sticks, squares=0, backend="cpu") == 1
    # 4 sticks kept: one unit square; 6 kept: one 1×2 rectangle, no square
    assert gpuqueens.matchsticks(h, w, removed=sticks - 4, squares=1, backend="cpu") == h * w
    rectangles = h * (w - 1) + (h - 1) * w
    by_squares = [gpuqueens.matchsticks(h, w, removed=sticks - 6, squares=s, backend="cpu")
                  for s in (0, 1)]  # two squares need at least 7 sticks
    assert by_squares == [rectangles, 0]
    # the transfer matrix (problem 1) counts the same configurations, summed over S
    assert gpuqueens.matchsticks(h, w, removed=sticks - 6, backend="cpu") == sum(by_squares)
