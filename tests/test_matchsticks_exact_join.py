"""Problem 2 by the centre join (exact_join.py, halves in exact mode) against the brute
force, the whole-grid sweep, the thin-grid walk and the puzzle table's rows."""

from contextlib import closing

import numpy as np
import pytest
from few_removed import few_removed
from seed_tables import SEED_5X5, SEED_6X6
from thin_grids import thin_counts

import gpuqueens

from gpuqueens.problems.matchsticks.bruteforce import rs_histogram
from gpuqueens.problems.matchsticks.exact_join import (bucket_pairs, count_exact_join,
                                                       exact_groups, prepare_exact)
from gpuqueens.problems.matchsticks.grid import stick_count
from gpuqueens.problems.matchsticks.halves import exact_half_parts
from gpuqueens.problems.matchsticks.pairing import JoinStats, centre_patterns
from gpuqueens.problems.matchsticks.sweep import TooManyEntries, count_exact


@pytest.mark.parametrize("m,n", [(1, 1), (1, 4), (2, 2), (2, 3), (3, 2)])
def test_every_r_and_s_is_the_brute_force(m, n):
    table = rs_histogram(m, n)
    for r in range(table.shape[0]):
        for s in range(table.shape[1]):
            assert count_exact_join(m, n, removed=r, squares=s) == table[r, s], (r, s)


def test_a_sample_of_3x3_and_2x4_is_the_brute_force():
    rng = np.random.default_rng(3)
    for m, n in [(3, 3), (2, 4)]:
        table = rs_histogram(m, n)
        for r, s in zip(rng.integers(0, table.shape[0], 25), rng.integers(0, table.shape[1], 25)):
            assert count_exact_join(m, n, removed=int(r), squares=int(s)) == table[r, s], (r, s)


@pytest.mark.parametrize("chunk", [1, 7])
def test_products_in_small_chunks_are_the_brute_force(monkeypatch, chunk):
    from gpuqueens.problems.matchsticks import pair_blocks

    monkeypatch.setattr(pair_blocks, "CHUNK_PAIRS", chunk)
    rng = np.random.default_rng(4)
    for m, n in [(2, 3), (3, 3), (2, 4)]:
        table = rs_histogram(m, n)
        for r, s in zip(rng.integers(0, table.shape[0], 12), rng.integers(0, table.shape[1], 12)):
            assert count_exact_join(m, n, removed=int(r), squares=int(s)) == table[r, s], (r, s)


@pytest.mark.parametrize("m,n,removed,squares", [(3, 5, 12, 2), (4, 5, 14, 3), (4, 6, 15, 3),
                                                 (3, 7, 16, 4), (5, 4, 20, 1)])
def test_mid_range_counts_equal_the_whole_grid_sweep(m, n, removed, squares):
    # odd and even widths (the asymmetric and the symmetric join), R well above the fewest
    assert count_exact_join(m, n, removed=removed, squares=squares) == \
        count_exact(m, n, removed=removed, squares=squares) > 0


def test_counts_past_2_to_the_64_on_a_long_grid():
    expected = thin_counts(1, 60, 40, 5)
    assert expected[5] > 2**64
    for s in (0, 5):
        assert count_exact_join(1, 60, removed=40, squares=s) == expected[s]


def test_the_fewest_r_of_5x5_rows_counts_their_ways():
    for s, r, ways in SEED_5X5[::3]:
        assert count_exact_join(5, 5, removed=r, squares=s) == ways, s
        assert count_exact_join(5, 5, removed=r - 1, squares=s) == 0, s


def test_6x6_through_the_public_call_agrees_with_every_table_row():
    # for each S the count at the table's fewest R is the table's ways, one R less none
    table = SEED_6X6            # the table's rows (test_matchsticks_table.py)
    for s, r, ways in table:
        assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, backend="cpu") == ways, s
    for s, r, _ in table[::4]:
        assert gpuqueens.matchsticks(6, 6, removed=r - 1, squares=s, backend="cpu") == 0, s


def test_6x7_odd_width_agrees_with_the_table_and_the_whole_grid_sweep():
    for s, r, ways in gpuqueens.matchstick_table(6, 7, squares=range(3), backend="cpu").rows:
        assert gpuqueens.matchsticks(7, 6, removed=r, squares=s, backend="cpu") == ways \
            == count_exact(6, 7, removed=r, squares=s), s


def test_half_parts_in_exact_mode_keep_r_in_reach():
    # every part's r can still be completed to exactly R by the rest of the grid
    h, w, removed = 3, 4, 9
    primes = np.array([2147483647], dtype=np.uint64)
    left, right = exact_half_parts(h, w, removed, 2, primes)
    rest = stick_count(h, w) - (w // 2) * (2 * h + 1)
    assert right is left and len(left.r) > 0
    assert left.r.min() >= removed - rest and left.r.max() <= removed


def test_buckets_pair_r_a_with_r_minus_r_a():
    rnd = prepare_exact(4, 4, 12, 3)
    for C in centre_patterns(4):
        g = exact_groups(rnd.left, C, 3, 12, rnd.primes)
        rest = 12 - (4 - bin(C).count("1"))
        for a0, a1, b0, b1, weight in bucket_pairs(g, g, rest, True):
            ra, rb = set(g.r[a0:a1].tolist()), set(g.r[b0:b1].tolist())
            assert len(ra) == len(rb) == 1 and ra.pop() + rb.pop() == rest
            assert weight == (1 if a0 == b0 else 2)


def test_stats_count_the_join():
    stats = JoinStats()
    assert count_exact_join(4, 4, removed=9, squares=0, stats=stats) == 16
    assert stats.rounds == 1 and stats.pairs >= stats.hits > 0 and stats.groups > 0


def test_every_stored_result_emptied_is_refused(tmp_path):
    # every unit edited alike (checksums recomputed): no unit shows it against another, so
    # the count says how many residues each unit gives
    import sqlite3

    from gpuqueens.ledger_rows import row_checksum, stage_key

    path = str(tmp_path / "e.sqlite")
    expected = count_exact_join(3, 3, removed=5, squares=3, run={"checkpoint": path})
    assert expected == rs_histogram(3, 3)[5, 3] > 0
    with closing(sqlite3.connect(path)) as db, db:
        (job,) = db.execute("SELECT job FROM header").fetchone()
        (digest,) = db.execute("SELECT units_digest FROM stages").fetchone()
        for (key,) in db.execute("SELECT key FROM units").fetchall():
            db.execute("UPDATE units SET result = '[]', checksum = ? WHERE key = ?",
                       (row_checksum(stage_key(job, "", digest), key, "[]"), key))
    db.close()
    with pytest.raises(gpuqueens.CheckpointError, match="holds 0 numbers, but this run's units give"):
        count_exact_join(3, 3, removed=5, squares=3, run={"checkpoint": path, "recheck": 0})


@pytest.mark.parametrize("m,n,removed", [(6, 12, 1), (9, 6, 2)])
def test_few_removals_on_long_grids_are_counted_not_refused(m, n, removed, monkeypatch):
    # the estimate grew with the width however few sticks were removed: 6×12 with R = 1 was
    # refused as needing 62.5 GiB, and 6×9 with R = 2 announced as two hours (1.8 s)
    import warnings

    from gpuqueens import estimates

    monkeypatch.setattr(estimates, "available_memory", lambda: 16 * 2**30)
    ways = few_removed(m, n, removed)
    most = max(ways)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        for s in (most, most - 1):
            assert gpuqueens.matchsticks(m, n, removed=removed, squares=s, backend="cpu") == ways[s]


def test_the_join_watches_its_pace_against_its_estimate(keywords_of):
    from gpuqueens.problems.matchsticks import exact_join

    seen = keywords_of(exact_join, "run_units")
    assert gpuqueens.matchsticks(6, 6, removed=19, squares=0, backend="cpu", workers=1) == 16
    assert 0 < seen["estimate"] < 3600


@pytest.mark.parametrize("m,n,kept,squares", [(6, 8, 12, 2), (8, 6, 12, 1), (6, 12, 10, 1)])
def test_few_kept_on_wide_grids_are_counted_not_refused(m, n, kept, squares, monkeypatch):
    # the join's estimate is modelled on mid-range R: 6×8 with 12 sticks kept and S = 2 was
    # refused as needing 26 GiB (the whole-grid sweep: 0.2 s); the join itself agrees
    import warnings

    from gpuqueens import estimates

    monkeypatch.setattr(estimates, "available_memory", lambda: 16 * 2**30)
    removed = stick_count(m, n) - kept
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        got = gpuqueens.matchsticks(m, n, removed=removed, squares=squares, backend="cpu")
    assert got == count_exact_join(m, n, removed=removed, squares=squares) > 0


@pytest.mark.parametrize("kept", [9, 12, 15])
def test_the_whole_grid_sweep_with_few_kept_is_the_join(kept, monkeypatch):
    # forced on 6×6 (where the join is quick enough not to try it): two methods, one count
    import gpuqueens.problems.matchsticks.api as api

    monkeypatch.setattr(api, "SHORT_SWEEP_AFTER_SECONDS", 0.0)
    removed = stick_count(6, 6) - kept
    for s in range(4):
        assert gpuqueens.matchsticks(6, 6, removed=removed, squares=s, backend="cpu") \
            == count_exact_join(6, 6, removed=removed, squares=s), s


def test_a_few_kept_sweep_past_its_entries_gives_way_to_the_join(monkeypatch):
    import gpuqueens.problems.matchsticks.api as api

    tried = []

    def sweep(*args, **kwargs):
        tried.append(kwargs["max_entries"])
        try:
            return count_exact(*args, **{**kwargs, "max_entries": 10})   # stopped early
        except TooManyEntries:
            tried.append("stopped")
            raise

    monkeypatch.setattr(api, "SHORT_SWEEP_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(api, "count_exact", sweep)
    removed = stick_count(6, 6) - 14
    assert gpuqueens.matchsticks(6, 6, removed=removed, squares=2, backend="cpu") \
        == count_exact_join(6, 6, removed=removed, squares=2) > 0
    assert tried == [api.SHORT_SWEEP_ENTRIES, "stopped"]
