"""What run_units itself costs per work unit, with and without an SQLite checkpoint.

Run with ``pytest bench --benchmark-only`` (normal test runs skip benchmarks). The solver
does nothing, so the time per unit is the runner's own overhead: validating the result,
the progress counters and, with a checkpoint, one committed INSERT per unit.
"""

from __future__ import annotations

import itertools

from gpuqueens.ledger import Ledger
from gpuqueens.runner import WorkUnit, run_units

UNIT_COUNT = 2000
UNITS = [WorkUnit(f"u{i:06d}", i) for i in range(UNIT_COUNT)]
JOB = {"problem": "bench", "units": UNIT_COUNT}


def trivial_solve(payload: int) -> tuple[int, int]:
    return (payload, 1)


def _per_unit_note(benchmark) -> None:
    benchmark.extra_info["units_per_round"] = UNIT_COUNT
    benchmark.extra_info["note"] = "divide the times by units_per_round for the cost per unit"


def test_run_units_without_checkpoint(benchmark):
    _per_unit_note(benchmark)
    results = benchmark(run_units, UNITS, trivial_solve, job=JOB, progress=False)
    assert len(results) == UNIT_COUNT


def test_run_units_with_checkpoint(benchmark, tmp_path):
    _per_unit_note(benchmark)
    fresh = (tmp_path / f"run{i}.sqlite" for i in itertools.count())

    def setup():  # every round starts from an empty ledger, so it commits every unit
        return (UNITS, trivial_solve), {"job": JOB, "checkpoint": next(fresh), "progress": False}

    results = benchmark.pedantic(run_units, setup=setup, rounds=5, iterations=1)
    assert len(results) == UNIT_COUNT


def test_ledger_commit_per_unit(benchmark, tmp_path):
    """One Ledger.record: an INSERT and its commit (WAL, synchronous=NORMAL)."""
    units = [WorkUnit(f"u{i:07d}", i) for i in range(200_000)]
    ledger = Ledger.open(tmp_path / "commits.sqlite", JOB, units)
    keys = iter(unit.key for unit in units)
    try:
        benchmark.pedantic(lambda: ledger.record(next(keys), (2**70, 12345)),
                           rounds=2000, iterations=1, warmup_rounds=50)
    finally:
        ledger.close()
