"""The table's top sweep (rows with few squares lost) against brute force and the join."""

from __future__ import annotations

import os
from contextlib import closing

import pytest

import gpuqueens
from gpuqueens.problems.matchsticks import table
from gpuqueens.problems.matchsticks.bruteforce import brute_table
from gpuqueens.problems.matchsticks.grid import square_count
from gpuqueens.problems.matchsticks.pairing import JoinStats
from gpuqueens.problems.matchsticks.sweep import SweepStats, sweep, table_rows_by_sweep
from gpuqueens.problems.matchsticks.table import table_rows
from gpuqueens.problems.matchsticks.top_rows import TOP_DEFICIT, top_rows, top_squares


@pytest.mark.parametrize("m,n", [(1, 1), (1, 6), (2, 2), (2, 3), (3, 2), (2, 4), (3, 3)])
def test_every_lowest_s_equals_brute_force(m, n):
    total = square_count(m, n)
    brute = brute_table(m, n, range(total + 1))
    for lowest in range(total + 1):
        assert top_rows(m, n, list(range(lowest, total + 1))) == brute[lowest:], lowest


@pytest.mark.parametrize("m,n", [(3, 4), (4, 3), (2, 7), (3, 5)])
def test_the_top_sweep_equals_the_join(m, n):
    # two independent ways: the whole-grid sweep kept to few squares lost, the centre join
    asked = list(range(square_count(m, n) + 1))
    assert top_squares(m, n, asked) == asked
    by_join = table_rows(m, n, asked, top_sweep=False)
    assert top_rows(m, n, asked) == by_join
    assert any(r is None for _, r, _ in by_join)   # among them an S no configuration has


def test_the_top_sweep_equals_the_join_on_5x5():
    # the join one S at a time (~4 s; together, at the level of the largest, 80 s); an
    # impossible S would take it minutes
    asked = [34, 35, 38, 41, 44, 46, 47, 50]
    assert top_rows(5, 5, asked) == [table_rows(5, 5, [q], top_sweep=False)[0] for q in asked]


def test_fewer_entries_the_fewer_squares_may_be_lost():
    # the pruning works: 5×5 keeps ~2·10^4 entries at most for S >= 43, none of them below
    live = []
    for lowest in (50, 43, 35):
        stats = SweepStats()
        s, *_ = sweep(5, 5, max_squares=55, caps=dict.fromkeys(range(lowest, 56), 60),
                      min_squares=lowest, stats=stats)
        assert min(s) >= lowest
        live.append(stats.max_states)
    assert live == sorted(live) and live[0] < 1000 and live[1] < 2 * 10**4


def test_which_s_go_the_top_way():
    assert top_squares(5, 5, list(range(56))) == list(range(25, 56))
    assert top_squares(7, 7, [0, 14, 109, 110, 140]) == [110, 140]     # 140 - 110 = 30
    assert 140 - 110 == TOP_DEFICIT
    assert top_squares(5, 5, list(range(15))) == []                  # the default table
    assert top_squares(4, 4, list(range(15))) == list(range(15))     # 30 squares in all


def test_s_above_the_grid_alone_is_none_both_ways():
    # every S asked above the grid's squares: the top sweep had no S left to sweep for
    for top_sweep in (True, False):
        assert table_rows(1, 5, [6], top_sweep=top_sweep) == [(6, None, 0)]
        assert table_rows(1, 5, [6, 7], top_sweep=top_sweep) == [(6, None, 0), (7, None, 0)]
        assert table_rows(2, 2, [4, 5, 6], top_sweep=top_sweep) == [(4, None, 0), (5, 0, 1),
                                                                   (6, None, 0)]


def test_the_table_answers_high_s_without_rounds():
    # 5×5: S = 48 and 49 have no configuration; the join would climb to every stick removed
    stats = JoinStats()
    rows = table_rows(5, 5, [46, 48, 49, 50, 55], stats=stats)
    assert rows == [(46, 1, 12), (48, None, 0), (49, None, 0), (50, 1, 16), (55, 0, 1)]
    assert stats.rounds == 0


def test_both_ways_in_one_table_equal_each_way_alone():
    asked = [0, 3, 9, 10, 20, 37, 40]   # 4×5: 40 squares, 0..9 by the join
    stats = JoinStats()
    rows = table_rows(4, 5, asked, stats=stats)
    assert stats.rounds > 0
    assert rows[:3] == table_rows_by_sweep(4, 5, [0, 3, 9])
    assert rows[3:] == top_rows(4, 5, asked[3:])
    assert [q for q, r, _ in rows if r is None] == [37]


def test_a_checkpointed_table_resumes_with_its_top_stage(tmp_path, monkeypatch):
    path = os.fspath(tmp_path / "t.sqlite")
    whole = gpuqueens.matchstick_table(4, 4, range(31), backend="cpu", checkpoint=path)
    solved = []
    solve = table.solve_top_unit

    def counted(payload, **kwargs):
        solved.append(payload["squares"])
        return solve(payload, **kwargs)

    monkeypatch.setattr(table, "solve_top_unit", counted)
    again = gpuqueens.matchstick_table(4, 4, range(31), backend="cpu", checkpoint=path,
                                       recheck=0)
    assert again.rows == whole.rows and solved == []   # read back, not solved again
    assert [q for q, r, _ in whole.rows if r is None] == [25, 27, 28, 29]


def test_a_stored_top_result_of_another_length_is_refused(tmp_path):
    # the top stage has one unit, so no other unit's length shows an edit: the table says it
    import sqlite3

    from gpuqueens.ledger_rows import row_checksum, stage_key

    path = os.fspath(tmp_path / "t.sqlite")
    gpuqueens.matchstick_table(3, 3, [12, 13, 14], backend="cpu", checkpoint=path)
    with closing(sqlite3.connect(path)) as db, db:
        (job,) = db.execute("SELECT job FROM header").fetchone()
        key, digest = db.execute("SELECT key, units_digest FROM units JOIN stages "
                                 "ON stage = name WHERE stage = 'top'").fetchone()
        text = "[1,1]"   # one S's (R, count) where three were stored
        db.execute("UPDATE units SET result = ?, checksum = ? WHERE key = ?",
                   (text, row_checksum(stage_key(job, "top", digest), key, text), key))
    db.close()
    with pytest.raises(gpuqueens.CheckpointError, match="holds 2 numbers, but this run's units give 6"):
        gpuqueens.matchstick_table(3, 3, [12, 13, 14], backend="cpu", checkpoint=path, recheck=0)


def test_a_long_thin_grid_is_not_refused_for_memory():
    # the estimate once took 5×5's entries with a 1×2000 grid's 194 primes: 24.5 GiB,
    # refused, where the sweep keeps a few hundred entries (0.3 GB in all, 10 s)
    from gpuqueens.problems.matchsticks.square_costs import top_cost

    assert top_cost(1, 2000, 30).memory < 0.1 * 2**30
    assert top_cost(5, 5, 30).memory > 0.2 * 2**30      # the worst grid measured


@pytest.mark.parametrize("h, w", [(7, 9), (6, 12)])
def test_past_a_longer_side_of_h_plus_one_the_top_sweep_holds_the_long_grids_entries(h, w):
    # the square grid holds 4-5 times more (5×5 2.4·10^6, 5×10 to 5×200 525,851): the
    # estimate takes TOP_LIVE_LONG from a longer side of h + 2 on, the most there (at h + 2)
    from gpuqueens.problems.matchsticks.grid import square_count, stick_count
    from gpuqueens.problems.matchsticks.square_costs import TOP_LIVE, TOP_LIVE_LONG, top_cost
    from gpuqueens.problems.matchsticks.sweep import SweepStats, sweep

    total, stats = square_count(h, w), SweepStats()
    sweep(h, w, max_squares=total, min_squares=total - 30, stats=stats,
          caps=dict.fromkeys(range(total - 30, total + 1), stick_count(h, w)))
    assert TOP_LIVE_LONG[h] / 1.2 <= stats.max_states <= TOP_LIVE_LONG[h] < TOP_LIVE[h] / 4
    assert top_cost(h, w, 30).memory < top_cost(h, h, 30).memory / 2   # with more primes
