"""``workers=`` of the matchstick puzzle table and of problem 2 by the centre join (and
``--workers`` of matchstick-table and matchsticks): the same argument, checks and defaults
as N-Queens' (test_workers.py), for the table's rounds and problem 2's centre patterns."""

from __future__ import annotations

import concurrent.futures
import contextlib

import pytest
from seed_tables import SEED_4X4, SEED_6X6

import gpuqueens
from gpuqueens import estimates, workers
from gpuqueens.cli import main
from gpuqueens.problems.matchsticks import api
from gpuqueens.problems.matchsticks.bruteforce import brute_table
from gpuqueens.problems.matchsticks.square_costs import table_cost
from gpuqueens.problems.matchsticks.pairing import centre_patterns

#: The 4×4 table (S = 0..14), as the seed document gives it (the sweep and the join
#: reproduce it: test_matchsticks_sweep.py, test_matchsticks_table.py).
TABLE_4X4 = tuple(SEED_4X4)


@pytest.mark.parametrize("bad,error", [(True, TypeError), (2.0, TypeError), ("2", TypeError),
                                       (0, ValueError), (-1, ValueError)])
def test_bad_workers_are_refused(no_pools, bad, error):
    with pytest.raises(error, match="workers"):
        gpuqueens.matchstick_table(2, 2, backend="cpu", workers=bad)


def test_workers_and_executor_together_are_refused(no_pools):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="not both"):
            gpuqueens.matchstick_table(2, 2, backend="cpu", workers=2, executor=pool)
        assert gpuqueens.matchstick_table(4, 4, backend="cpu", executor=pool).rows == TABLE_4X4


def test_a_short_table_stays_in_this_process(no_pools, monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 64)
    assert table_cost(4, 4, list(range(15))).seconds < api.TABLE_POOL_SECONDS
    assert gpuqueens.matchstick_table(4, 4, backend="cpu").rows == TABLE_4X4


def test_explicit_workers_solve_the_units_in_worker_processes(pools):
    table = gpuqueens.matchstick_table(4, 4, backend="cpu", workers=2, progress=False)
    assert table.rows == TABLE_4X4
    assert len(pools) == 1 and pools[0]._max_workers == 2


def test_a_long_table_uses_every_core_by_default(pools, monkeypatch):
    monkeypatch.setattr(api, "TABLE_POOL_SECONDS", 0.0)  # the 4×4 table counts as long
    monkeypatch.setattr(workers, "usable_cores", lambda: 3)
    assert gpuqueens.matchstick_table(4, 4, backend="cpu", progress=False).rows == TABLE_4X4
    assert len(pools) == 1 and pools[0]._max_workers == 3
    # never more processes than a round has units (centre patterns)
    monkeypatch.setattr(workers, "usable_cores", lambda: 64)
    assert gpuqueens.matchstick_table(3, 3, backend="cpu", progress=False).rows == \
        tuple(brute_table(3, 3))
    assert pools[1]._max_workers == len(centre_patterns(3))


@pytest.mark.parametrize("memory, processes", [(0.95, 1), (1.5, 4)])
def test_the_default_starts_no_more_processes_than_memory_holds(pools, join_only, monkeypatch,
                                                                 memory, processes):
    monkeypatch.setattr(api, "TABLE_POOL_SECONDS", 0.0)
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)
    need = table_cost(4, 4, list(range(15))).memory
    monkeypatch.setattr(workers, "available_memory", lambda: memory * need)
    assert gpuqueens.matchstick_table(4, 4, backend="cpu", progress=False).rows == TABLE_4X4
    # one build of a round, then each process's pairing: 0.85 + 4 × 0.15 of the estimate
    # fit in 1.5 of it; with one process, still a worker: its malloc set-up keeps the
    # sweeps' arrays in its heap
    assert len(pools) == 1 and pools[0]._max_workers == processes


def test_a_long_table_runs_in_this_process_with_workers_1(no_pools, monkeypatch):
    monkeypatch.setattr(api, "TABLE_POOL_SECONDS", 0.0)
    monkeypatch.setattr(workers, "usable_cores", lambda: 1)
    assert gpuqueens.matchstick_table(4, 4, backend="cpu", workers=1).rows == TABLE_4X4


def test_explicit_workers_that_memory_cannot_hold_are_refused_up_front(no_pools, join_only,
                                                                       monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)  # 3 processes even on 2 cores
    need = table_cost(4, 4, list(range(15))).memory
    # the processes share the round's build: 0.85 + 3 × 0.15 of the estimate
    monkeypatch.setattr(estimates, "available_memory", lambda: 1.2 * need)
    with pytest.raises(ValueError, match="in 3 worker processes sharing its half sweeps"):
        gpuqueens.matchstick_table(4, 4, backend="cpu", workers=3)
    # an executor's processes may be anywhere: each builds its own round
    monkeypatch.setattr(estimates, "available_memory", lambda: 2.5 * need)
    monkeypatch.setattr(api, "open_store", _no_store)
    with pytest.raises(ValueError, match="in 3 worker processes each with its own half sweeps"):
        gpuqueens.matchstick_table(4, 4, backend="cpu", workers=3)


def test_explicit_workers_are_refused_only_on_what_the_first_round_needs(no_pools, monkeypatch):
    # 6×11, S = 8: 4.3·10^6 live entries at the unit-square bound (1.7 GB, what it needs
    # for certain), 1.1·10^8 one above (42 GB); it takes 3.4 s and 0.15 GB
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)
    monkeypatch.setattr(estimates, "available_memory", lambda: 8 * 2**30)
    with pytest.raises(AssertionError, match="a worker pool was started"):  # past the check
        gpuqueens.matchstick_table(6, 11, [8], backend="cpu", workers=2)


@contextlib.contextmanager
def _no_store():
    yield None


def test_a_checkpointed_table_resumes_with_other_workers(tmp_path, pools):
    path = tmp_path / "t44.sqlite"
    first = gpuqueens.matchstick_table(4, 4, backend="cpu", workers=2, checkpoint=path,
                                       progress=False)
    again = gpuqueens.matchstick_table(4, 4, backend="cpu", workers=1, checkpoint=path,
                                       progress=False)
    assert first.rows == again.rows == TABLE_4X4
    assert len(pools) == 1  # the resumed run solved its re-check unit in this process


def test_cli_matchstick_table_workers(capsys):
    assert main(["matchstick-table", "3", "3", "--workers", "2", "--no-progress"]) == 0
    out_two = capsys.readouterr().out
    assert main(["matchstick-table", "3", "3", "--workers", "1"]) == 0
    out_one = capsys.readouterr().out
    assert out_two.splitlines()[:-1] == out_one.splitlines()[:-1]  # all but the time
    with pytest.raises(SystemExit) as exit_info:
        main(["matchstick-table", "3", "3", "--workers", "0"])
    assert exit_info.value.code == 2 and "--workers" in capsys.readouterr().err


# -- problem 2 by the centre join: the same options, one unit per centre pattern ----------

def test_a_count_by_squares_shares_its_centre_patterns_out_to_workers(pools):
    s, r, ways = SEED_6X6[4]
    assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, backend="cpu", workers=2,
                                 progress=False) == ways
    assert len(pools) == 1 and pools[0]._max_workers == 2


def test_a_short_count_by_squares_stays_in_this_process(no_pools, monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 64)
    s, r, ways = SEED_6X6[0]
    assert 6 < api.MIN_POOL_SHORT_SIDE_BY_JOIN
    assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, backend="cpu") == ways


def test_a_long_count_by_squares_uses_every_core_by_default(pools, monkeypatch):
    monkeypatch.setattr(api, "MIN_POOL_SHORT_SIDE_BY_JOIN", 6)  # 6×6 counts as long
    monkeypatch.setattr(workers, "usable_cores", lambda: 3)
    s, r, ways = SEED_6X6[0]
    assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, backend="cpu",
                                 progress=False) == ways
    assert len(pools) == 1 and pools[0]._max_workers == 3


def test_a_checkpointed_count_by_squares_resumes(tmp_path, pools):
    path = tmp_path / "p2.sqlite"
    s, r, ways = SEED_6X6[1]
    assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, backend="cpu", workers=2,
                                 checkpoint=path, progress=False) == ways
    assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, backend="cpu", workers=1,
                                 checkpoint=path, recheck=2) == ways
    assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, backend="cpu", workers=2,
                                 checkpoint=path, recheck=0) == ways
    assert len(pools) == 1      # resumed with nothing left to solve: no worker processes
    with pytest.raises(gpuqueens.CheckpointError):      # another count's checkpoint
        gpuqueens.matchsticks(6, 6, removed=r, squares=s + 1, backend="cpu", checkpoint=path)


@pytest.mark.parametrize("kwargs", [dict(m=4, n=4, removed=9, squares=0),   # whole-grid sweep
                                    dict(m=6, n=6, removed=9),              # no squares
                                    dict(m=6, n=6, removed=0, squares=91)])  # closed form
def test_a_checkpoint_or_executor_without_units_is_refused(no_pools, tmp_path, kwargs):
    with pytest.raises(ValueError, match="checkpoint applies to counts by squares"):
        gpuqueens.matchsticks(**kwargs, backend="cpu", checkpoint=tmp_path / "c.sqlite")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="executor applies to counts by squares"):
            gpuqueens.matchsticks(**kwargs, backend="cpu", executor=pool)
        with pytest.raises(ValueError, match="checkpoint and executor apply to counts"):
            gpuqueens.matchsticks(**kwargs, backend="cpu", executor=pool,
                                  checkpoint=tmp_path / "c.sqlite")
    assert not (tmp_path / "c.sqlite").exists()
    # progress and workers change nothing there
    assert gpuqueens.matchsticks(**kwargs, backend="cpu", workers=2, progress=False) >= 0


def test_bad_run_options_of_a_count_by_squares_are_refused(no_pools):
    with pytest.raises(ValueError, match="workers"):
        gpuqueens.matchsticks(6, 6, removed=19, squares=0, workers=0)
    with pytest.raises(TypeError, match="progress"):
        gpuqueens.matchsticks(6, 6, removed=19, squares=0, progress="yes")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="not both"):
            gpuqueens.matchsticks(6, 6, removed=19, squares=0, workers=2, executor=pool)
        s, r, ways = SEED_6X6[2]
        assert gpuqueens.matchsticks(6, 6, removed=r, squares=s, executor=pool) == ways


def test_cli_matchsticks_by_squares_takes_the_run_options(tmp_path, capsys):
    path = str(tmp_path / "p2.sqlite")
    s, r, ways = SEED_6X6[3]
    args = ["matchsticks", "6", "6", "--removed", str(r), "--squares", str(s)]
    assert main(args + ["--workers", "2", "--no-progress", "--checkpoint", path]) == 0
    assert f": {ways}" in capsys.readouterr().out
    assert main(args + ["--workers", "1", "--checkpoint", path, "--recheck", "0"]) == 0
    assert f": {ways}" in capsys.readouterr().out


def test_the_joins_multiply_with_one_blas_thread_and_leave_the_setting_after(monkeypatch):
    # their products are chunks of 2^18 pairs: BLAS threads only spin there, and in this
    # process too (6×6 table beside one busy process on 2 cores: 14.8 s, 3.1 s with one)
    from threadpoolctl import threadpool_info, threadpool_limits

    from gpuqueens.problems.matchsticks import exact_join, pairing
    from gpuqueens.problems.matchsticks.exact_join import count_exact_join
    from gpuqueens.problems.matchsticks.table import table_rows

    def blas_threads() -> int:
        return max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"),
                   default=0)

    seen = []
    real = pairing.product

    def product(a, b, buffer=None):
        seen.append(blas_threads())
        return real(a, b, buffer)

    monkeypatch.setattr(pairing, "product", product)
    monkeypatch.setattr(exact_join, "product", product)
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("BLAS here has one thread only")
        assert tuple(table_rows(4, 4, range(15), top_sweep=False)) == TABLE_4X4   # by the join
        table_products = len(seen)
        assert count_exact_join(2, 4, removed=8, squares=2) == 209    # the brute force's
        assert table_products > 0 and len(seen) > table_products
        assert set(seen) == {1}
        assert blas_threads() == 2
