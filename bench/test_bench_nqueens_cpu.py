"""CPU benchmarks of the N-Queens NumPy path (run: python -m pytest bench --benchmark-only)."""

import os
import sys

import pytest

import gpuqueens
from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu
from gpuqueens.problems.nqueens.plan import SYMMETRIC_UNIT, combine
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes
from gpuqueens.problems.nqueens.symmetric import count_symmetric

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from oeis import total, unique  # noqa: E402  (the published counts)


@pytest.mark.parametrize("n", [10, 12, 13, 14, 15])
def test_count_cpu(benchmark, n):
    """The whole public call: plan, prefixes, search."""
    result = benchmark(gpuqueens.count, n, backend="cpu", progress=False)
    assert result == total(n)


@pytest.mark.parametrize("n", [13, 14])
def test_search_only(benchmark, n):
    """The NumPy search alone, from prefixes already enumerated."""
    prefixes = enumerate_prefixes(n, 5)
    weight = benchmark(count_prefixes_cpu, prefixes)
    counts = combine({"u0": (weight, 0, 0), SYMMETRIC_UNIT: (0, *count_symmetric(n))})
    assert counts == (total(n), unique(n))
