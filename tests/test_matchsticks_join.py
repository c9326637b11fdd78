"""The centre join (problem 3) against the brute force, the square-tracking sweep and the seed."""

import pytest

from gpuqueens.problems.matchsticks.bruteforce import brute_table
from gpuqueens.problems.matchsticks.grid import square_count
from gpuqueens.problems.matchsticks.join import JoinStats, table_rows_join
from gpuqueens.problems.matchsticks.squares import table_rows

SEED_4X4 = [(0, 9, 16), (1, 9, 4972), (2, 8, 1798), (3, 7, 168), (4, 7, 5720), (5, 6, 312),
            (6, 6, 4230), (7, 5, 80), (8, 5, 1164), (9, 5, 7144), (10, 4, 84), (11, 4, 784),
            (12, 4, 3020), (13, 3, 8), (14, 3, 156)]
SEED_5X5 = [(0, 14, 448), (1, 13, 208), (2, 12, 16), (3, 12, 28030), (4, 11, 2092),
            (5, 11, 151276), (6, 10, 6716), (7, 10, 196528), (8, 9, 4896), (9, 9, 99740),
            (10, 8, 1038), (11, 8, 21422), (12, 7, 40), (13, 7, 1624), (14, 7, 19112)]
# The seed's 6×6 table (mod160/mod166); S = 12 and 14 were first confirmed by this join.
SEED_6X6 = [(0, 19, 16), (1, 19, 13632), (2, 18, 2752), (3, 17, 72), (4, 17, 371612),
            (5, 16, 20300), (6, 16, 4239420), (7, 15, 161024), (8, 15, 11181548),
            (9, 14, 278384), (10, 14, 11129340), (11, 13, 165500), (12, 13, 5117504),
            (13, 12, 37360), (14, 12, 1138828)]


@pytest.mark.parametrize("m,n", [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 2), (1, 6),
                                 (2, 4), (3, 3)])
def test_join_matches_brute_force(m, n):
    everything = range(square_count(m, n) + 2)
    assert table_rows_join(m, n, everything) == brute_table(m, n, everything)


@pytest.mark.parametrize("m,n", [(3, 4), (3, 5), (3, 6), (3, 7), (4, 5), (4, 6)])
def test_join_matches_sweep(m, n):
    # even and odd widths: the symmetric and the asymmetric join
    assert table_rows_join(m, n, range(15)) == table_rows(m, n, range(15))


def test_join_seed_4x4_and_5x5():
    assert table_rows_join(4, 4, range(15)) == SEED_4X4
    stats = JoinStats()
    assert table_rows_join(5, 5, range(15), stats=stats) == SEED_5X5
    assert stats.rounds >= 1 and stats.pairs > 0 and stats.hits > 0


def test_join_single_rows_and_order():
    assert table_rows_join(4, 4, [9, 2]) == [SEED_4X4[2], SEED_4X4[9]]
    assert table_rows_join(5, 4, [3, 0, 30, 40]) == table_rows(4, 5, [0, 3, 30, 40])


@pytest.mark.slow
def test_join_matches_sweep_5x6():
    assert table_rows_join(5, 6, range(15)) == table_rows(5, 6, range(15))


@pytest.mark.slow
def test_public_table_6x6_is_the_seed_table():
    """The whole 6×6 table through the public API (the join) equals the seed's table."""
    import gpuqueens

    assert list(gpuqueens.matchstick_table(6, 6, backend="cpu").rows) == SEED_6X6
