"""Problem 1 on a real GPU (skipped without one): the kernel path of gpu.py and the CuPy run of
the coefficient transfer, each against the coefficient transfer on the CPU."""

import numpy as np
import pytest
from oeis import NO_LEAF_GRID

from gpuqueens.backends import gpu_status
from gpuqueens.problems.matchsticks.transfer import count_by_removed

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_status()[0], reason=f"no usable GPU: {gpu_status()[1]}"),
]


@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (4, 4), (6, 9), (7, 7), (10, 10), (11, 12)])
def test_kernel_matches_cpu_distribution(m, n):
    from gpuqueens.problems.matchsticks.gpu import count_by_removed_gpu

    assert count_by_removed_gpu(m, n) == count_by_removed(m, n)


def test_kernel_with_long_tiles_and_many_batches(monkeypatch):
    from gpuqueens.problems.matchsticks import gpu

    monkeypatch.setattr(gpu, "lanes_per_batch", lambda h, w, free: 64)
    assert gpu.count_by_removed_gpu(12, 12, 40) == count_by_removed(12, 12, 40)


@pytest.mark.parametrize("m,n", [(2, 3), (6, 9)])
def test_cupy_coefficient_transfer_matches_numpy(m, n):
    from gpuqueens.problems.matchsticks.gpu import cupy_module

    assert count_by_removed(m, n, xp=cupy_module()) == count_by_removed(m, n, xp=np)


def test_public_api_on_gpu():
    import gpuqueens

    assert gpuqueens.matchstick_counts(10, 10, backend="gpu")[:5] == [1, 212, 22278, 1547004, 79847833]
    assert gpuqueens.matchsticks(10, 10, removed=13, backend="gpu") == 135871476036610693224
    assert sum(gpuqueens.matchstick_counts(4, 14, backend="gpu")) == NO_LEAF_GRID[5][14]
    assert gpuqueens.matchstick_table(4, 4, [0], backend="gpu").rows == ((0, 9, 16),)


def test_table_pairing_on_gpu_equals_the_cpu():
    import gpuqueens
    from seed_tables import SEED_6X6

    table = gpuqueens.matchstick_table(6, 6, backend="gpu", workers=1)
    assert table.backend == "gpu" and list(table.rows) == SEED_6X6
    assert gpuqueens.matchstick_table(5, 5, backend="gpu").rows == \
        gpuqueens.matchstick_table(5, 5, backend="cpu").rows


def test_counting_by_squares_on_gpu_equals_the_table_rows():
    # the whole-grid sweep on CuPy arrays (5×5) and the exact join on the device (6×6), each
    # at the table's fewest R, against the table's ways
    import gpuqueens
    from seed_tables import SEED_5X5, SEED_6X6

    for m, rows in [(5, SEED_5X5[::4]), (6, SEED_6X6[::3])]:
        for squares, fewest, ways in rows:
            assert gpuqueens.matchsticks(m, m, removed=fewest, squares=squares,
                                         backend="gpu") == ways, (m, squares)


def test_few_kept_by_the_sweep_on_gpu_equals_the_join_on_the_cpu():
    # 6×8 with 12 sticks kept: the whole-grid sweep on CuPy arrays, where the join's estimate
    # would refuse or project hours
    import gpuqueens
    from gpuqueens.problems.matchsticks.exact_join import count_exact_join

    removed = 110 - 12
    for squares in (0, 2):
        assert gpuqueens.matchsticks(6, 8, removed=removed, squares=squares, backend="gpu") \
            == count_exact_join(6, 8, removed=removed, squares=squares), squares
