"""The square-tracking sweep (sweep.py): problem 2 and its whole-grid table against the brute
force, the seed's tables and an independent walk of thin grids."""

import functools
import math

import pytest

from gpuqueens.problems.matchsticks.bruteforce import brute_table, rs_histogram
from gpuqueens.problems.matchsticks.grid import square_count, stick_count
from gpuqueens.problems.matchsticks.sweep import SweepStats, count_exact
from gpuqueens.problems.matchsticks.sweep import table_rows_by_sweep as table_rows
from thin_grids import thin_counts

from seed_tables import SEED_4X4, SEED_5X5, SEED_6X6

# 6×6 rows that the sweep reproduces quickly (the others are too slow for CI).
SEED_6X6_FAST = [SEED_6X6[0], SEED_6X6[3]]


@functools.lru_cache(maxsize=None)
def hist(m, n):
    return rs_histogram(m, n)


@pytest.mark.parametrize("m,n", [(1, 1), (1, 3), (2, 2), (2, 3), (3, 2), (1, 6), (2, 4), (3, 3)])
def test_table_matches_brute_force(m, n):
    everything = range(square_count(m, n) + 2)
    assert table_rows(m, n, everything) == brute_table(m, n, everything)


@pytest.mark.parametrize("m,n", [(2, 2), (2, 3), (1, 4)])
def test_exact_counts_match_brute_force_everywhere(m, n):
    table = hist(m, n)
    for r in range(stick_count(m, n) + 1):
        for s in range(square_count(m, n) + 1):
            assert count_exact(m, n, removed=r, squares=s) == table[r, s], (r, s)


def test_exact_counts_match_brute_force_on_3x3_sample():
    table = hist(3, 3)
    cells = [(r, s) for r in range(25) for s in range(15) if (3 * r + s) % 7 == 0]
    cells += [(9, 0), (6, 4), (4, 6), (12, 0), (3, 8), (0, 14)]
    for r, s in cells:
        assert count_exact(3, 3, removed=r, squares=s) == table[r, s], (r, s)


def test_seed_4x4_table():
    assert table_rows(4, 4, range(15)) == SEED_4X4


def test_seed_5x5_table():
    stats = SweepStats()
    assert table_rows(5, 5, range(15), stats=stats) == SEED_5X5
    assert stats.max_states > 0


def test_seed_6x6_fast_rows():
    for s, r, c in SEED_6X6_FAST:
        assert table_rows(6, 6, [s]) == [(s, r, c)]


def test_transposed_grids_match_the_brute_force_of_the_grid_as_drawn():
    # the sweep turns every grid its short side first; the brute force does not
    assert table_rows(4, 2, range(15)) == brute_table(2, 4, range(15))
    histogram = rs_histogram(2, 4)
    for removed, squares in [(5, 0), (3, 1), (1, 2), (0, 3)]:
        assert count_exact(4, 2, removed=removed, squares=squares) == histogram[removed, squares]


def test_exact_count_is_consistent_with_table():
    for s, r, c in SEED_4X4[:6]:
        assert count_exact(4, 4, removed=r, squares=s) == c
        assert count_exact(4, 4, removed=r - 1, squares=s) == 0


def test_counts_exceeding_narrow_primes_are_exact():
    # The sweep keeps residues modulo primes below 2^31; 1×60 with 40 sticks removed and
    # 5 squares has about 2.5·10^24 configurations (needs three such primes and more than
    # 64 bits), counted independently by the column walk of tests/thin_grids.py.
    expected = thin_counts(1, 60, 40, 5)[5]
    assert expected > 2**64
    assert count_exact(1, 60, removed=40, squares=5) == expected
    assert math.comb(stick_count(1, 60), 40) >= expected


@pytest.mark.parametrize("slice_size", [1, 7, 100])
def test_a_point_step_gives_the_same_entries_whatever_its_slices(monkeypatch, slice_size):
    # step_point finds successors a slice of entries at a time (its memory); the slices
    # may hold no successor at all, and the merged entries must not depend on them
    import numpy as np

    from gpuqueens.problems.matchsticks import sweep as sweep_module

    def entries(**options):
        s, removed, counts, _ = sweep_module.sweep(2, 4, max_squares=6, **options)
        return s.tolist(), removed.tolist(), counts.tolist()

    whole = entries(), entries(max_removed=5)
    monkeypatch.setattr(sweep_module, "SUCCESSOR_SLICE", slice_size)
    assert (entries(), entries(max_removed=5)) == whole
    assert len(whole[0][0]) > 3 and np.array(whole[1][2]).any()
