"""The puzzle table (table.py): the centre join's rounds against the brute force, the
whole-grid sweep and the seed; its work units, one checkpoint file, resume and executors."""

import concurrent.futures
import multiprocessing
import os
import pickle
import sqlite3
from contextlib import closing

import pytest
from few_removed import few_removed
from seed_tables import SEED_4X4, SEED_5X5, SEED_6X6

import gpuqueens
from gpuqueens.problems.matchsticks import table
from gpuqueens.problems.matchsticks.bruteforce import brute_table
from gpuqueens.problems.matchsticks.grid import square_count
from gpuqueens.problems.matchsticks.pairing import JoinStats
from gpuqueens.problems.matchsticks.sweep import table_rows_by_sweep
from gpuqueens.problems.matchsticks.table import round_units, solve_round_unit, table_rows


@pytest.mark.parametrize("m,n", [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 2), (1, 6),
                                 (2, 4), (3, 3)])
def test_join_matches_brute_force(m, n):
    everything = range(square_count(m, n) + 2)
    h, w = min(m, n), max(m, n)
    assert table_rows(h, w, everything) == brute_table(m, n, everything)


@pytest.mark.slow
def test_a_row_far_up_in_s_is_answered_not_refused(monkeypatch):
    # S = 100 of the 7×7 grid's 140 squares: the memory model scaled by the largest S asked
    # (65.5 GiB) and refused it, but no removal bound holds from S = 49 up, and its rounds
    # climb R from 0 to 3 with at most 23,313 live entries (4 s, 0.3 GB)
    from gpuqueens import estimates

    monkeypatch.setattr(estimates, "available_memory", lambda: 16 * 2**30)
    ways = [few_removed(7, 7, r).get(100, 0) for r in range(4)]
    assert ways[:3] == [0, 0, 0] and ways[3] > 0
    with pytest.warns(gpuqueens.LongRunWarning, match="estimated for S <= 14 only"):
        found = gpuqueens.matchstick_table(7, 7, [100], backend="cpu", workers=1)
    assert found.rows == ((100, 3, ways[3]),)


@pytest.mark.parametrize("m,n", [(3, 4), (3, 5), (3, 6), (3, 7), (4, 5), (4, 6)])
def test_join_matches_sweep(m, n):
    # even and odd widths: the symmetric and the asymmetric join
    assert table_rows(m, n, range(15)) == table_rows_by_sweep(m, n, range(15))


def test_join_seed_4x4_and_5x5():
    assert table_rows(4, 4, range(15)) == SEED_4X4
    stats = JoinStats()
    assert table_rows(5, 5, range(15), stats=stats) == SEED_5X5
    assert stats.rounds >= 1 and stats.pairs > 0 and stats.hits > 0
    assert stats.max_live > 0 and len(stats.parts) == 2 * stats.rounds


def test_join_single_rows_and_order():
    assert table_rows(4, 4, [9, 2]) == [SEED_4X4[2], SEED_4X4[9]]
    assert table_rows(4, 5, [3, 0, 30, 40]) == table_rows_by_sweep(4, 5, [0, 3, 30, 40])


def test_stats_are_refused_with_an_executor():
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="stats"):
            table_rows(2, 2, [0], run={"executor": pool}, stats=JoinStats())


@pytest.mark.slow
def test_join_matches_sweep_5x6():
    assert table_rows(5, 6, range(15)) == table_rows_by_sweep(5, 6, range(15))


@pytest.mark.slow
def test_public_table_6x6_is_the_seed_table():
    """The whole 6×6 table through the public API (the join) equals the seed's table."""
    assert list(gpuqueens.matchstick_table(6, 6, backend="cpu").rows) == SEED_6X6


def test_table_progress_bar_only_when_asked(capsys, join_only):
    pytest.importorskip("tqdm")
    quiet = gpuqueens.matchstick_table(3, 3, backend="cpu", progress=False)
    assert capsys.readouterr().err == ""
    shown = gpuqueens.matchstick_table(3, 3, backend="cpu", progress=True)
    assert "3×3 table, round 1" in capsys.readouterr().err
    assert shown.rows == quiet.rows


@pytest.mark.parametrize("m, n", [(1, 3), (2, 3), (3, 3), (3, 4), (4, 5)])
def test_units_through_a_thread_pool_give_the_sweep(m, n):
    # odd and even widths: the asymmetric and the symmetric join
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        by_units = table_rows(m, n, range(12), run={"executor": pool})
    assert by_units == table_rows(m, n, range(12))
    assert by_units == table_rows_by_sweep(m, n, range(12))


def test_unit_keys_payloads_and_results_are_plain_data():
    units = round_units(3, 3, {0: 6, 2: 5}, level=13, index=1)
    assert [u.key for u in units] == [f"matchstick-table/3x3/round1/C{c}"
                                      for c in ("000", "001", "010", "011", "101", "111")]
    unit = units[3]
    assert pickle.loads(pickle.dumps(unit.payload)) == unit.payload
    result = solve_round_unit(unit.payload)
    assert len(result) == 4 and all(type(v) is int for v in result)


def test_checkpointed_public_table_with_several_rounds_is_one_file(tmp_path, join_only):
    path = tmp_path / "4x4.sqlite"
    first = gpuqueens.matchstick_table(4, 4, range(15), backend="cpu", checkpoint=path)
    assert list(first.rows) == SEED_4X4
    files = sorted(p.name for p in tmp_path.iterdir()
                   if not p.name.endswith(("-wal", "-shm", ".lock")))
    assert files == ["4x4.sqlite"]
    with closing(sqlite3.connect(path)) as db, db:
        stages = [name for (name,) in db.execute("SELECT DISTINCT stage FROM units ORDER BY stage")]
    assert len(stages) >= 2 and stages[:2] == ["round1", "round2"]  # 4×4 needs more than one level
    again = gpuqueens.matchstick_table(4, 4, range(15), backend="cpu", checkpoint=path)
    assert again.rows == first.rows


def test_interrupted_run_resumes_to_the_same_table(tmp_path, monkeypatch):
    path = tmp_path / "t.sqlite"
    real, calls = table.solve_round_unit, []

    def dies_after_five(payload, **options):
        calls.append(payload["C"])
        if len(calls) > 5:
            raise KeyboardInterrupt
        return real(payload, **options)

    monkeypatch.setattr(table, "solve_round_unit", dies_after_five)
    with pytest.raises(KeyboardInterrupt):
        gpuqueens.matchstick_table(4, 5, range(15), backend="cpu", checkpoint=path)
    monkeypatch.setattr(table, "solve_round_unit", real)
    resumed = gpuqueens.matchstick_table(4, 5, range(15), backend="cpu", checkpoint=path)
    assert list(resumed.rows) == table_rows_by_sweep(4, 5, range(15))


def test_interrupted_in_a_later_round_resumes_from_that_round(tmp_path, monkeypatch, join_only):
    path = tmp_path / "t.sqlite"
    real, rounds = table.solve_round_unit, []

    def dies_in_round_two(payload, **options):
        rounds.append(payload["level"])
        if len(set(rounds)) > 1:
            raise KeyboardInterrupt
        return real(payload, **options)

    monkeypatch.setattr(table, "solve_round_unit", dies_in_round_two)
    with pytest.raises(KeyboardInterrupt):
        gpuqueens.matchstick_table(4, 4, range(15), backend="cpu", checkpoint=path)
    first_level = rounds[0]
    rounds.clear()
    monkeypatch.setattr(table, "solve_round_unit", lambda payload, **options: (
        rounds.append(payload["level"]) or real(payload, **options)))
    resumed = gpuqueens.matchstick_table(4, 4, range(15), backend="cpu", checkpoint=path,
                                         recheck=0)
    assert list(resumed.rows) == SEED_4X4
    assert first_level not in rounds  # round 1 came back from the ledger
    rounds.clear()
    again = gpuqueens.matchstick_table(4, 4, range(15), backend="cpu", checkpoint=path)
    assert again.rows == resumed.rows
    assert rounds.count(first_level) == 1  # recheck=1: one stored unit of round 1 solved again


def test_executors_agree(tmp_path):
    direct = gpuqueens.matchstick_table(4, 4, range(8), backend="cpu")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        threads = gpuqueens.matchstick_table(4, 4, range(8), backend="cpu", executor=pool)
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        processes = gpuqueens.matchstick_table(4, 4, range(8), backend="cpu", executor=pool)
    assert direct.rows == threads.rows == processes.rows == tuple(SEED_4X4[:8])


def test_a_checkpoint_of_another_table_is_refused(tmp_path):
    path = tmp_path / "t.sqlite"
    gpuqueens.matchstick_table(2, 3, range(3), backend="cpu", checkpoint=path)
    with pytest.raises(gpuqueens.CheckpointError):
        gpuqueens.matchstick_table(2, 3, range(4), backend="cpu", checkpoint=path)
    with pytest.raises(gpuqueens.CheckpointError):
        gpuqueens.matchstick_table(3, 3, range(3), backend="cpu", checkpoint=path)
    with pytest.raises(gpuqueens.CheckpointError):
        gpuqueens.count(8, backend="cpu", checkpoint=path)


@pytest.mark.slow
def test_six_by_six_checkpointed_equals_the_seed(tmp_path):
    path = os.fspath(tmp_path / "6.sqlite")
    assert list(gpuqueens.matchstick_table(6, 6, backend="cpu", checkpoint=path).rows) == SEED_6X6


def test_every_s_including_the_impossible_ones_without_rounds():
    """An impossible S climbs to every stick removed in the join, one round a step (3×4:
    61 rounds; 4×4: 75 rounds and a minute); a grid of at most 30 squares has every S from
    the top sweep instead, with no round, and the rows of the sweep's own table."""
    m, n = 3, 4
    everything = range(square_count(m, n) + 2)
    stats = JoinStats()
    rows = table_rows(m, n, everything, stats=stats)
    assert rows == table_rows_by_sweep(m, n, everything)
    assert sum(r is None for _, r, _ in rows) >= 3
    assert stats.rounds == 0


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_a_fork_pool_with_a_checkpoint_runs_every_stage(tmp_path):
    """The top sweep and the join are two stages, each opening the ledger: the fork pool's
    workers, started in the first, must not lock the second out."""
    path = tmp_path / "t.sqlite"
    fork = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=fork) as pool:
        forked = gpuqueens.matchstick_table(4, 5, [0, 40], backend="cpu", checkpoint=path,
                                            executor=pool)
    assert forked.rows == gpuqueens.matchstick_table(4, 5, [0, 40], backend="cpu").rows


def test_a_checkpoint_of_an_older_job_format_says_so(tmp_path, monkeypatch):
    path = tmp_path / "t.sqlite"
    gpuqueens.matchstick_table(2, 3, range(3), backend="cpu", checkpoint=path)
    monkeypatch.setattr(table, "JOB_FORMAT", table.JOB_FORMAT + 1)
    with pytest.raises(gpuqueens.CheckpointError, match="written by an older version of gpuqueens"):
        gpuqueens.matchstick_table(2, 3, range(3), backend="cpu", checkpoint=path)


def test_s_far_apart_are_asked_each_at_its_own_level(monkeypatch):
    # 4×8: S = 39 (bound 0) once set the first level, where S = 0 (bound 13) got R <= 20
    from gpuqueens.problems.matchsticks.bounds import unit_square_bound

    first_caps = []
    real = table.run_units

    def recorded(units, solve, **options):
        if options["stage"] == "round1":
            first_caps.append((units[0].payload["level"], dict(units[0].payload["caps"])))
        return real(units, solve, **options)

    monkeypatch.setattr(table, "run_units", recorded)
    both = table_rows(4, 8, [0, 39], top_sweep=False)
    level, caps = first_caps[0]
    assert both == table_rows(4, 8, [0], top_sweep=False) + table_rows(4, 8, [39], top_sweep=False)
    bound = int(unit_square_bound(4, 8, 39).before_start()[0])
    assert caps == {0: bound + 1} and level == 2 * bound + 2   # S = 39 waits for its level
