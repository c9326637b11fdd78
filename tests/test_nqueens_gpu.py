"""The CUDA search on a real device: OEIS counts and exact agreement with the NumPy search.

Prefix weights are 3 × the solutions below the prefixes; with the symmetric search they
give the total and the classes (Burnside's lemma, gpuqueens.problems.nqueens.plan.combine).

Skipped where CuPy cannot run a kernel (``gpuqueens.backends.gpu_status()``).
"""

from __future__ import annotations

import numpy as np
import pytest
from prefix_samples import random_prefix_subset

from gpuqueens.backends import gpu_status
from gpuqueens.problems.nqueens.plan import combine
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes
from gpuqueens.problems.nqueens.symmetric import count_symmetric

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_status()[0], reason=f"no usable GPU: {gpu_status()[1]}"),
]

# OEIS A000170 (all solutions) and A002562 (symmetry classes), index n.
from oeis import A000170, A002562

TOTAL = [None, *A000170]  # index n
UNIQUE = [None, *A002562]


@pytest.mark.parametrize("n", range(1, 16))
def test_public_count_on_gpu_matches_oeis(n):
    import gpuqueens

    assert gpuqueens.count(n, backend="gpu") == TOTAL[n]
    assert gpuqueens.count(n, unique=True, backend="gpu") == UNIQUE[n]


@pytest.mark.parametrize("n", range(4, 14))
def test_all_prefixes_sum_to_oeis(n):
    from gpuqueens.problems.nqueens.gpu import count_prefixes_gpu

    for mark in sorted({2, n // 2, n - 1}):
        weight = count_prefixes_gpu(enumerate_prefixes(n, mark))
        assert combine({"u0": (weight, 0, 0), "sym": (0, *count_symmetric(n))}) == (TOTAL[n], UNIQUE[n]), mark


@pytest.mark.parametrize("seed", range(16))
def test_per_prefix_counts_match_numpy_search(seed):
    from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu
    from gpuqueens.problems.nqueens.gpu import count_prefixes_gpu

    n, mark, subset = random_prefix_subset(seed, 2000)
    weights = count_prefixes_cpu(subset, per_prefix=True)
    np.testing.assert_array_equal(count_prefixes_gpu(subset, per_prefix=True), weights)
    # the summing kernel agrees with the per-prefix one on the same subset
    assert count_prefixes_gpu(subset) == int(weights.sum())


@pytest.mark.parametrize("block_size", [32, 256, 1024])
def test_block_sizes_and_batches_give_the_same_counts(block_size, monkeypatch):
    from gpuqueens.problems.nqueens import gpu

    monkeypatch.setattr(gpu, "BATCH_PREFIXES", 1000)  # several launches into one buffer
    prefixes = enumerate_prefixes(12, 6)
    assert gpu.count_prefixes_gpu(prefixes, block_size=block_size) == 3 * TOTAL[12]
    weights = gpu.count_prefixes_gpu(prefixes, per_prefix=True, block_size=block_size)
    assert int(weights.sum()) == 3 * TOTAL[12]


@pytest.mark.parametrize("n,mark,rows", [(10, 3, 2), (13, 4, 3), (16, 5, 2), (20, 5, 2)])
def test_device_expansion_is_the_host_enumeration(n, mark, rows):
    from gpuqueens.problems.nqueens import gpu
    from gpuqueens.problems.nqueens.prefixes import expand_prefixes

    prefixes = enumerate_prefixes(n, mark)
    if n == 20:  # a sample: the host's enumeration of all takes seconds
        prefixes = prefixes.take(np.arange(0, len(prefixes), 97))
    got = np.concatenate([r.get() for _, r, _ in gpu._expanded_batches(prefixes, rows, gpu._module(False))])
    np.testing.assert_array_equal(got, expand_prefixes(prefixes, mark + rows).records())


def test_expansion_and_split_give_the_same_counts(monkeypatch):
    from gpuqueens.problems.nqueens import gpu

    prefixes = enumerate_prefixes(16, 5)
    expanded = gpu.count_prefixes_gpu(prefixes)
    assert expanded == gpu.count_prefixes_gpu(prefixes, split=2) == gpu.count_prefixes_gpu(prefixes, split=1)
    monkeypatch.setattr(gpu, "EXPANDED_BATCH", 10_000)  # many launches into one buffer
    assert gpu.count_prefixes_gpu(prefixes) == expanded


def test_empty_prefix_set():
    from gpuqueens.problems.nqueens.gpu import count_prefixes_gpu

    empty = enumerate_prefixes(10, 4).take(np.zeros(0, dtype=np.intp))
    assert count_prefixes_gpu(empty) == 0
    assert count_prefixes_gpu(empty, per_prefix=True).size == 0


def test_instrumented_build_counts_nodes():
    from gpuqueens.problems.nqueens.gpu import sum_prefixes_gpu

    weight, nodes = sum_prefixes_gpu(enumerate_prefixes(10, 4), count_nodes=True)
    assert weight == 3 * TOTAL[10]
    assert nodes > TOTAL[10] // 8


@pytest.mark.slow
@pytest.mark.parametrize("n", [22, 23])
def test_large_boards_match_oeis(n):
    import gpuqueens

    result = gpuqueens.nqueens(n, backend="gpu", progress=False)
    assert (result.total, result.unique) == (TOTAL[n], UNIQUE[n])


@pytest.mark.parametrize("n", range(1, 21))
def test_symmetric_search_on_gpu_matches_numpy(n):
    from gpuqueens.problems.nqueens.gpu import count_symmetric_gpu

    assert count_symmetric_gpu(n) == count_symmetric(n)


@pytest.mark.parametrize("n,rows", [(16, 3), (21, 4), (28, 11), (32, 13)])
def test_symmetric_prefix_counts_on_gpu(n, rows):
    from gpuqueens.problems.nqueens.gpu import count_symmetric_prefixes_gpu
    from gpuqueens.problems.nqueens.symmetric import count_symmetric_below, expand_symmetric, symmetric_prefixes

    rng = np.random.default_rng(n)
    p = symmetric_prefixes(n, 1)
    while p.rows < rows:  # a random sample of at most 400 kept at each row
        p = expand_symmetric(p)
        if len(p) > 400:
            p = p.take(np.sort(rng.choice(len(p), size=400, replace=False)))
    got = count_symmetric_prefixes_gpu(p, per_prefix=True)
    expected = count_symmetric_below(p, per_prefix=True)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
