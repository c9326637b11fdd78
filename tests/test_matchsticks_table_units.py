"""The puzzle table through the runner (join_units.py): units, checkpoint, resume, executors."""

import concurrent.futures
import os
import pickle

import pytest
from seed_tables import SEED_4X4, SEED_6X6

import gpuqueens
from gpuqueens.problems.matchsticks import join_units
from gpuqueens.problems.matchsticks.join import table_rows_join
from gpuqueens.problems.matchsticks.join_units import (round_checkpoint, round_units, solve_round_unit,
                                                       table_rows_by_units)
from gpuqueens.problems.matchsticks.squares import table_rows


@pytest.mark.parametrize("m, n", [(1, 3), (2, 3), (3, 3), (3, 4), (4, 5)])
def test_units_give_the_direct_join_and_the_sweep(m, n):
    # odd and even widths: the asymmetric and the symmetric join
    by_units = table_rows_by_units(m, n, range(12))
    assert by_units == table_rows_join(m, n, range(12))
    assert by_units == table_rows(m, n, range(12))


def test_unit_keys_payloads_and_results_are_plain_data():
    units = round_units(3, 3, {0: 6, 2: 5}, level=13, index=1)
    assert [u.key for u in units] == [f"matchstick-table/3x3/round1/C{c}"
                                      for c in ("000", "001", "010", "011", "101", "111")]
    unit = units[3]
    assert pickle.loads(pickle.dumps(unit.payload)) == unit.payload
    result = solve_round_unit(unit.payload)
    assert len(result) == 4 and all(type(v) is int for v in result)


def test_round_checkpoint_names():
    assert round_checkpoint(None, 2) is None
    assert round_checkpoint("run.sqlite", 1) == "run.sqlite"
    assert round_checkpoint("run.sqlite", 3) == "run.sqlite.round3"


def test_checkpointed_public_table_with_several_rounds(tmp_path):
    path = tmp_path / "4x4.sqlite"
    first = gpuqueens.matchstick_table(4, 4, range(15), backend="cpu", checkpoint=path)
    assert list(first.rows) == SEED_4X4
    rounds = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm", ".lock")))
    assert rounds[0] == "4x4.sqlite" and len(rounds) >= 2  # 4×4 needs more than one level
    again = gpuqueens.matchstick_table(4, 4, range(15), backend="cpu", checkpoint=path)
    assert again.rows == first.rows


def test_interrupted_run_resumes_to_the_same_table(tmp_path, monkeypatch):
    path = tmp_path / "t.sqlite"
    real, calls = join_units.solve_round_unit, []

    def dies_after_five(payload):
        calls.append(payload["C"])
        if len(calls) > 5:
            raise KeyboardInterrupt
        return real(payload)

    monkeypatch.setattr(join_units, "solve_round_unit", dies_after_five)
    with pytest.raises(KeyboardInterrupt):
        gpuqueens.matchstick_table(4, 5, range(15), backend="cpu", checkpoint=path)
    monkeypatch.setattr(join_units, "solve_round_unit", real)
    resumed = gpuqueens.matchstick_table(4, 5, range(15), backend="cpu", checkpoint=path)
    assert list(resumed.rows) == table_rows(4, 5, range(15))


def test_executors_agree(tmp_path):
    direct = gpuqueens.matchstick_table(4, 4, range(8), backend="cpu")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        threads = gpuqueens.matchstick_table(4, 4, range(8), backend="cpu", executor=pool)
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        processes = gpuqueens.matchstick_table(4, 4, range(8), backend="cpu", executor=pool)
    assert direct.rows == threads.rows == processes.rows


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
    table = gpuqueens.matchstick_table(6, 6, backend="cpu", checkpoint=os.fspath(tmp_path / "6.sqlite"))
    assert list(table.rows) == SEED_6X6
