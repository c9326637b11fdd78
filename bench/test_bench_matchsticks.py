"""CPU benchmarks of the matchstick solvers (run: python -m pytest bench --benchmark-only)."""

import os
import sys

import pytest

from gpuqueens.problems.matchsticks.sweep import table_rows_by_sweep as table_rows
from gpuqueens.problems.matchsticks.transfer import count_by_removed

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from seed_tables import SEED_4X4, SEED_5X5, SEED_6X6  # noqa: E402  (the seed's tables)

SEED_TABLES = {4: SEED_4X4, 5: SEED_5X5, 6: SEED_6X6}


@pytest.mark.parametrize("top", [16, None], ids=["R0-16", "all-R"])
def test_transfer_10x10(benchmark, top):
    """Problem 1 on 10×10: R = 0..16 (target < 1 s) and the whole distribution (< 10 s)."""
    counts = benchmark(count_by_removed, 10, 10, top)
    assert counts[:5] == [1, 212, 22278, 1547004, 79847833]


@pytest.mark.parametrize("m", [4, 5])
def test_table(benchmark, m):
    """Problem 3: the S = 0..14 table."""
    rows = benchmark.pedantic(table_rows, args=(m, m, range(15)), rounds=1, iterations=1)
    assert rows == SEED_TABLES[m]


@pytest.mark.parametrize("s", [0, 3])
def test_table_6x6_single_rows(benchmark, s):
    """Problem 3 on 6×6, one S at a time (the rows with few solutions are quick)."""
    rows = benchmark.pedantic(table_rows, args=(6, 6, [s]), rounds=1, iterations=1)
    assert rows == [SEED_6X6[s]]


@pytest.mark.parametrize("m", [5, 6])
def test_public_table(benchmark, m):
    """Problem 3 through the public call (the centre join): S = 0..14; 6×6 in seconds."""
    import gpuqueens

    table = benchmark.pedantic(gpuqueens.matchstick_table, args=(m, m), kwargs={"backend": "cpu"},
                               rounds=3, iterations=1)
    assert table.rows == tuple(SEED_TABLES[m])
