"""The centre join (problem 3) against the brute force, the square-tracking sweep and the seed."""

import pytest

from gpuqueens.problems.matchsticks.bruteforce import brute_table
from gpuqueens.problems.matchsticks.grid import square_count
from gpuqueens.problems.matchsticks.join import JoinStats, table_rows_join
from gpuqueens.problems.matchsticks.squares import table_rows

from seed_tables import SEED_4X4, SEED_5X5, SEED_6X6


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


def test_table_progress_bar_only_when_asked(capsys):
    pytest.importorskip("tqdm")
    import gpuqueens

    quiet = gpuqueens.matchstick_table(3, 3, backend="cpu", progress=False)
    assert capsys.readouterr().err == ""
    shown = gpuqueens.matchstick_table(3, 3, backend="cpu", progress=True)
    assert "3×3 table, round 1" in capsys.readouterr().err
    assert shown.rows == quiet.rows


def test_a_round_at_a_level_past_4096_counts_no_incompatible_pair():
    # Incompatible centre horizontals add a penalty that must exceed the level; a fixed
    # 4096 let such pairs through once S + 2R could pass it (long grids).
    from gpuqueens.problems.matchsticks.grid import stick_count
    from gpuqueens.problems.matchsticks.join import (centre_patterns, join_centre, merge_fewest,
                                                     prepare_round)

    h, w = 2, 3
    everything = range(square_count(h, w) + 1)
    rnd = prepare_round(h, w, {q: stick_count(h, w) for q in everything}, 5000, JoinStats())
    found = {}
    for C in centre_patterns(h):
        merge_fewest(found, join_centre(rnd, C, JoinStats()))
    assert [(q, *found.get(q, (None, 0))) for q in everything] == brute_table(h, w, everything)
