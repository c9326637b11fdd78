"""The CuPy path of the transfer matrix agrees with NumPy (skipped without a usable GPU)."""

import numpy as np
import pytest

from gpuqueens.backends import gpu_status

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_status()[0], reason=f"no usable GPU: {gpu_status()[1]}"),
]


@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (4, 4), (6, 9)])
def test_gpu_matches_cpu_distribution(m, n):
    from gpuqueens.problems.matchsticks.gpu import cupy_module
    from gpuqueens.problems.matchsticks.transfer import count_by_removed

    assert count_by_removed(m, n, xp=cupy_module()) == count_by_removed(m, n, xp=np)


def test_public_api_on_gpu():
    import gpuqueens

    assert gpuqueens.matchstick_counts(10, 10, backend="gpu")[:5] == [1, 212, 22278, 1547004, 79847833]
    assert gpuqueens.matchsticks(10, 10, removed=13, backend="gpu") == 135871476036610693224
    assert gpuqueens.matchstick_table(4, 4, [0], backend="gpu").rows == ((0, 9, 16),)
