"""CPU benchmarks of the N-Queens NumPy path (run: python -m pytest bench --benchmark-only)."""

import pytest

import gpuqueens
from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes


@pytest.mark.parametrize("n", [10, 12, 13, 14, 15])
def test_count_cpu(benchmark, n):
    """The whole public call: plan, prefixes, search."""
    result = benchmark(gpuqueens.count, n, backend="cpu", progress=False)
    assert result > 0


@pytest.mark.parametrize("n", [13, 14])
def test_search_only(benchmark, n):
    """The NumPy search alone, from prefixes already enumerated."""
    prefixes = enumerate_prefixes(n, 5)
    total, unique = benchmark(count_prefixes_cpu, prefixes)
    assert total > unique > 0
