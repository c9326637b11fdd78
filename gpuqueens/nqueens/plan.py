"""How an N-Queens count is cut into work units, and how one unit is solved.

A unit is a contiguous slice of the prefixes at :func:`unit_row`, in their fixed order,
so ``(n, unit_row, unit count, index)`` identifies it on every machine and every run.
The CPU counts a unit's prefixes directly; the GPU first expands them row by row until
there are enough threads' worth of prefixes, then launches the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runner import WorkUnit
from .prefixes import Prefixes, enumerate_prefixes, expand_prefixes

__all__ = ["Plan", "plan_for", "work_units", "solve_unit", "GPU_TARGET_PREFIXES"]

#: The GPU expands a unit's prefixes until there are at least this many (several waves of
#: threads on a large GPU), so that uneven subtrees even out.
GPU_TARGET_PREFIXES = 1 << 21
#: ...but stops this many rows above the bottom: deeper prefixes leave too little work per thread.
GPU_MIN_TAIL_ROWS = 9


@dataclass(frozen=True)
class Plan:
    """The unit layout of one count: the row the units are cut at and how many there are."""

    n: int
    unit_row: int
    unit_count: int

    def job(self) -> dict[str, object]:
        """The identity of the run, as stored in a checkpoint."""
        return {"problem": "nqueens", "format": 1, "n": self.n,
                "unit_row": self.unit_row, "units": self.unit_count}


def plan_for(n: int) -> Plan:
    """The plan for an n×n board (n >= 4).

    One unit up to n=19 (a few seconds on a GPU); from n=20 on, four times more units per
    size step (each n costs roughly 8-10 times the previous one), up to 4096.

    >>> plan_for(8)
    Plan(n=8, unit_row=5, unit_count=1)
    >>> plan_for(22)
    Plan(n=22, unit_row=5, unit_count=64)
    """
    unit_row = max(2, min(5, n - 2))
    unit_count = 1 if n < 20 else min(4096, 4 ** (n - 19))
    return Plan(n, unit_row, unit_count)


def work_units(plan: Plan, backend: str) -> list[WorkUnit]:
    """The units of ``plan``; each payload is ``(backend, prefixes of the unit)``."""
    prefixes = enumerate_prefixes(plan.n, plan.unit_row)
    bounds = np.linspace(0, len(prefixes), plan.unit_count + 1).round().astype(int)
    width = len(str(plan.unit_count - 1))
    return [
        WorkUnit(f"u{index:0{width}d}", (backend, prefixes.take(slice(int(a), int(b)))), weight=float(b - a))
        for index, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
    ]


def gpu_batch(prefixes: Prefixes) -> Prefixes:
    """Expand prefixes row by row until there are enough of them for the GPU."""
    while len(prefixes) and len(prefixes) < GPU_TARGET_PREFIXES and prefixes.mark < prefixes.n - GPU_MIN_TAIL_ROWS:
        prefixes = expand_prefixes(prefixes, prefixes.mark + 1)
    return prefixes


def solve_unit(payload: tuple[str, Prefixes]) -> tuple[int, int]:
    """Count one unit: ``(total, unique)`` of the solutions below its prefixes."""
    backend, prefixes = payload
    if backend == "gpu":
        from .gpu import count_prefixes_gpu

        return count_prefixes_gpu(gpu_batch(prefixes))
    from .cpu import count_prefixes_cpu

    return count_prefixes_cpu(prefixes)
