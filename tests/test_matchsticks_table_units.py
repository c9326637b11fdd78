"""The puzzle table through the runner: units, checkpoint, resume and executors."""

import concurrent.futures

import pytest

import gpuqueens
from gpuqueens.problems.matchsticks.squares import table_rows


@pytest.mark.parametrize("m, n", [(2, 3), (3, 3), (3, 4)])
def test_units_give_the_direct_table(m, n, tmp_path):
    direct = gpuqueens.matchstick_table(m, n, range(10), backend="cpu")
    by_units = gpuqueens.matchstick_table(m, n, range(10), backend="cpu", checkpoint=tmp_path / "t.sqlite")
    assert by_units.rows == direct.rows
    assert [(s, r, c) for s, r, c in direct.rows if s <= 14] == [
        row for row in table_rows(m, n, range(10))]


def test_resume_reads_the_ledger_and_executor_agrees(tmp_path):
    path = tmp_path / "4x4.sqlite"
    first = gpuqueens.matchstick_table(4, 4, range(6), backend="cpu", checkpoint=path)
    again = gpuqueens.matchstick_table(4, 4, range(6), backend="cpu", checkpoint=path)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        spread = gpuqueens.matchstick_table(4, 4, range(6), backend="cpu", executor=pool)
    assert first.rows == again.rows == spread.rows
    assert first.rows[0] == (0, 9, 16)  # the seed's 4×4 row S=0, checked by brute force elsewhere


def test_a_checkpoint_of_another_table_is_refused(tmp_path):
    path = tmp_path / "t.sqlite"
    gpuqueens.matchstick_table(2, 3, range(3), backend="cpu", checkpoint=path)
    with pytest.raises(gpuqueens.CheckpointError):
        gpuqueens.matchstick_table(2, 3, range(4), backend="cpu", checkpoint=path)
    with pytest.raises(gpuqueens.CheckpointError):
        gpuqueens.count(8, backend="cpu", checkpoint=path)
