"""The square-tracking sweep (sweep.py): problem 2 and its whole-grid table against the brute
force, the seed's tables and an independent walk of thin grids."""

import functools
import math

import numpy as np
import pytest

from gpuqueens.problems.matchsticks.bruteforce import brute_table, rs_histogram
from gpuqueens.problems.matchsticks.grid import square_count, stick_count
from gpuqueens.problems.matchsticks.modular import crt
from gpuqueens.problems.matchsticks.sweep import FEW_LOST, SweepStats, count_exact, sweep
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


# -- memory: a sweep that outgrows it stops with a ValueError, never by running out --------

def test_a_sweep_past_its_live_entries_stops_with_a_value_error():
    from gpuqueens.problems.matchsticks.sweep import sweep

    stats = SweepStats()
    sweep(4, 4, max_squares=3, max_removed=12, stats=stats)
    most = stats.max_states
    assert sweep(4, 4, max_squares=3, max_removed=12, max_entries=most)[2].shape[0] > 0
    with pytest.raises(ValueError, match="past its limit|entries to merge"):
        sweep(4, 4, max_squares=3, max_removed=12, max_entries=most - 1)


def test_a_point_step_refuses_to_merge_more_successors_than_memory_holds():
    # the successors of a step (up to four an entry) are merged before the live entries are
    # counted: the check comes before the merge's arrays are made
    import numpy as np

    from gpuqueens.problems.matchsticks import sweep as sweep_module
    from gpuqueens.problems.matchsticks.bounds import UnitSquareBound
    from gpuqueens.problems.matchsticks.keys import U64, KeyLayout

    layout = KeyLayout(3, 3, 2, None)
    primes = np.array([2**31 - 1], dtype=U64)
    state = ([np.zeros(1, dtype=U64) for _ in range(layout.words)], np.zeros(1, dtype=np.int64),
             np.ones((1, 1), dtype=U64))
    step = functools.partial(sweep_module.step_point, layout, state, 0, 0,
                             bound=UnitSquareBound(3, 3, 2), caps={0: 24, 1: 24, 2: 24},
                             max_squares=2, primes=primes)
    made = step()
    assert len(made[1]) == 2             # the corner point: right and down both kept or removed
    same = step(most_successors=2)
    assert all((a == b).all() for a, b in zip(made[0] + [made[2]], same[0] + [same[2]]))
    with pytest.raises(ValueError, match=r"made more than 1 entries to merge, what the free"):
        step(most_successors=1)


def test_the_successor_limit_leaves_the_merge_within_the_live_entries_memory():
    from gpuqueens.problems.matchsticks.square_costs import entry_bytes
    from gpuqueens.problems.matchsticks.sweep import successor_limit

    for words, primes in [(1, 2), (3, 3), (4, 6)]:
        limit, copies = 10**6, 7
        most = successor_limit(limit, words, primes, copies)
        merge = most * 8 * (2 * words + primes + 3) + limit * entry_bytes(words, primes)
        assert merge <= copies * limit * entry_bytes(words, primes)
        assert most >= 2 * limit         # a sweep whose entries double per step still runs


def test_a_point_step_stops_at_the_slice_that_passes_the_successor_limit(monkeypatch):
    # a step finds its successors a slice of entries at a time: past the limit it stops
    # there, without making the other slices' successors
    import numpy as np

    from gpuqueens.problems.matchsticks import sweep as sweep_module
    from gpuqueens.problems.matchsticks.bounds import UnitSquareBound
    from gpuqueens.problems.matchsticks.keys import U64, KeyLayout

    layout = KeyLayout(2, 2, 1, None)
    entries = 8
    state = ([np.zeros(entries, dtype=U64) for _ in range(layout.words)],
             np.zeros(entries, dtype=np.int64), np.ones((entries, 1), dtype=U64))
    slices = []
    made = sweep_module._successors
    monkeypatch.setattr(sweep_module, "SUCCESSOR_SLICE", 2)
    monkeypatch.setattr(sweep_module, "_successors",
                        lambda *a, **k: slices.append(k["first"]) or made(*a, **k))
    step = functools.partial(sweep_module.step_point, layout, state, 0, 0,
                             bound=UnitSquareBound(2, 2, 1), caps={0: 12, 1: 12}, max_squares=1,
                             primes=np.array([2**31 - 1], dtype=U64))
    step()
    assert slices == [0, 2, 4, 6]          # 2 successors an entry at the corner point
    slices.clear()
    with pytest.raises(ValueError, match="made more than 5 entries to merge"):
        step(most_successors=5)
    assert slices == [0, 2]                # 4, then 8 > 5: the last two slices are not made


@pytest.mark.parametrize("removed,squares", [(6, 20), (4, 28), (3, 32), (5, 25), (8, 9)])
def test_exact_counts_with_few_squares_lost_equal_the_sweep_without_that_pruning(removed, squares):
    # 4×5 has 40 squares: at most 30 lost prunes by the squares still possible (the small
    # grids' counts above are all pruned so, against brute force); (8, 9) loses 31
    pruned = count_exact(4, 5, removed=removed, squares=squares)
    s, r, counts, primes = sweep(4, 5, max_squares=squares, max_removed=removed)
    plain = sum(crt([int(v) for v in row], primes)
                for a, b, row in zip(s, r, counts) if a == squares and b == removed)
    assert pruned == plain > 0
    assert (40 - squares <= FEW_LOST) == (squares != 9)


@pytest.mark.parametrize("h,w,max_squares,targets", [
    (2, 3, 4, {4: 5}), (3, 4, 7, {7: 9}), (3, 4, 30, {30: 2}),      # exact mode: one target
    (3, 4, 9, {0: 6, 3: 5, 4: 4, 9: 3}), (3, 3, 14, {2: 7, 14: 0}),   # table mode: the caps
    (2, 2, 3, {})])
def test_thresholds_looked_up_per_entry_are_the_built_table(h, w, max_squares, targets):
    from gpuqueens.problems.matchsticks.bounds import UnitSquareBound
    from gpuqueens.problems.matchsticks.sweep import EntryThresholds, _thresholds

    bound = UnitSquareBound(h, w, max_squares)
    for p in range((h + 1) * (w + 1)):
        after = bound.after(p)
        table = _thresholds(after, targets, max_squares)
        small, s = np.meshgrid(np.arange(table.shape[0]), np.arange(max_squares + 1),
                               indexing="ij")
        looked_up = EntryThresholds(after, targets)[small.ravel(), s.ravel()]
        # the table stops at -1; both are below any removals so far: the entry is cut
        assert np.array_equal(np.maximum(looked_up, -1), table.ravel()), p


def test_a_point_step_looks_thresholds_up_per_entry_only_where_that_costs_less():
    from gpuqueens.problems.matchsticks.sweep import EntryThresholds, thresholds

    after = np.zeros((64, 11), dtype=np.uint8)
    assert isinstance(thresholds(after, {10: 3}, 10, entries=700), EntryThresholds)
    assert isinstance(thresholds(after, {10: 3, 9: 4}, 10, entries=700), np.ndarray)


def test_with_most_sticks_removed_the_sweep_carries_the_primes_of_c_e_r_only():
    # 3×12 keeps 6 of its 87 sticks (the 1×2 rectangles, S = 0): C(87, 81) < 2^31 needs one
    # prime, C(87, 43) three; summed over S the counts equal problem 1's transfer matrix
    # (its own primes)
    from gpuqueens.problems.matchsticks.grid import square_count, stick_count
    from gpuqueens.problems.matchsticks.sweep import count_exact, sweep
    from gpuqueens.problems.matchsticks.transfer import count_by_removed

    assert stick_count(3, 12) == 87 and len(sweep(3, 12, max_squares=0, max_removed=81)[3]) == 1
    by_s = [count_exact(3, 12, removed=81, squares=s) for s in range(square_count(3, 12) + 1)]
    assert sum(by_s) == count_by_removed(3, 12)[81] == by_s[0] == 3 * 11 + 2 * 12  # 1×2, 2×1
