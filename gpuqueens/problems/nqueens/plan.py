"""How an N-Queens count is cut into work units, and how one unit is solved.

A count has two kinds of unit (docs/nqueens-method.md):

* prefix units ``u0``, ``u1``, ...: each a contiguous slice of the prefixes at the unit row,
  in their fixed order, so ``(n, unit_row, unit count, index)`` identifies it on every
  machine and every run. Its result is ``(weight, 0, 0)``: three times the solutions below
  its prefixes. The CPU counts a unit's prefixes directly; the GPU cuts them into finer work
  items on the device (``gpu.choose_split``), and expands them on the host only when a
  unit is too small for that.
* the symmetric unit ``sym``: ``(0, F180, F90)``, the solutions fixed by the half and the
  quarter turn.

(Every unit gives three numbers, as the runner requires of the units of one run.)

:func:`combine` turns the results into ``(total, unique)`` by Burnside's lemma, and checks
the two divisibilities that any correct set of results satisfies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...runner import WorkUnit
from .prefixes import Prefixes, default_mark, enumerate_prefixes, expand_prefixes

__all__ = ["Plan", "UnitPayload", "SymmetricPayload", "plan_for", "work_units", "solve_unit",
           "combine", "InconsistentCountError", "GPU_TARGET_PREFIXES", "SYMMETRIC_UNIT"]

#: A unit whose prefixes, split on the device, would give fewer work items than this is
#: first expanded row by row on the host (only small boards and small units).
GPU_TARGET_PREFIXES = 1 << 15
#: ...but the host stops this many rows above the bottom: deeper prefixes leave too little work.
GPU_MIN_TAIL_ROWS = 9

#: The shape of unit results: 2 = prefix weights plus the symmetric unit (format 1 held
#: per-unit (total, unique) pairs; such checkpoints are refused, not misread).
FORMAT = 2
#: Key of the unit that counts the rotation-symmetric solutions.
SYMMETRIC_UNIT = "sym"


@dataclass(frozen=True)
class Plan:
    """The unit layout of one count: the row the units are cut at and how many there are."""

    n: int
    unit_row: int
    unit_count: int

    def job(self) -> dict[str, object]:
        """The identity of the run, as stored in a checkpoint."""
        return {"problem": "nqueens", "format": FORMAT, "n": self.n,
                "unit_row": self.unit_row, "units": self.unit_count}

    @classmethod
    def from_job(cls, job: dict) -> "Plan | None":
        """The plan a checkpoint's job was made with, if it is an N-Queens job of this format."""
        if job.get("problem") != "nqueens" or job.get("format") != FORMAT:
            return None
        try:
            return cls(int(job["n"]), int(job["unit_row"]), int(job["units"]))
        except (KeyError, TypeError, ValueError):
            return None


#: From this n on, each size step gets four times more units (each n costs ~8-10x the
#: previous one), so that a unit stays at seconds of work: the GPU needs big units to
#: fill the device, the CPU is ~1000 times slower and cuts earlier.
FIRST_SPLIT_N = {"cpu": 15, "gpu": 20}
MAX_UNITS = 4096


def plan_for(n: int, backend: str = "gpu") -> Plan:
    """The default plan for an n×n board (n >= 4) on a backend.

    >>> plan_for(8)
    Plan(n=8, unit_row=5, unit_count=1)
    >>> plan_for(22, "gpu"), plan_for(16, "cpu")
    (Plan(n=22, unit_row=5, unit_count=64), Plan(n=16, unit_row=5, unit_count=16))
    """
    unit_row = default_mark(n)
    first = FIRST_SPLIT_N[backend]
    unit_count = 1 if n < first else min(MAX_UNITS, 4 ** (n - first + 1))
    return Plan(n, unit_row, unit_count)


@dataclass(frozen=True)
class UnitPayload:
    """What a worker needs for one unit: the backend to run on and the unit's prefixes."""

    backend: str
    prefixes: Prefixes

    def ledger_identity(self) -> list:
        """The unit's identity in a checkpoint: its prefixes, not the backend (resume anywhere)."""
        p = self.prefixes
        return [p.n, p.mark, p.left, p.down, p.right, p.cols, p.b1, p.corner]


@dataclass(frozen=True)
class SymmetricPayload:
    """The symmetric unit: count the solutions of an n×n board fixed by rotations."""

    n: int

    def ledger_identity(self) -> list:
        return ["symmetric", self.n]


def work_units(plan: Plan, backend: str) -> list[WorkUnit]:
    """The units of ``plan``: slices of the prefixes at the unit row, then the symmetric unit."""
    prefixes = enumerate_prefixes(plan.n, plan.unit_row)
    bounds = np.linspace(0, len(prefixes), plan.unit_count + 1).round().astype(int)
    width = len(str(plan.unit_count - 1))
    units = [
        WorkUnit(f"u{index:0{width}d}", UnitPayload(backend, prefixes.take(slice(int(a), int(b)))),
                 weight=float(max(b - a, 1)))
        for index, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
    ]
    return units + [WorkUnit(SYMMETRIC_UNIT, SymmetricPayload(plan.n), weight=1.0)]


def gpu_batch(prefixes: Prefixes) -> Prefixes:
    """Expand prefixes row by row on the host while there are too few for the GPU even after
    the device's own split (each split row multiplies the work items by n)."""
    def items(p: Prefixes) -> int:
        return len(p) * p.n ** 2

    while len(prefixes) and items(prefixes) < GPU_TARGET_PREFIXES and prefixes.mark < prefixes.n - GPU_MIN_TAIL_ROWS:
        prefixes = expand_prefixes(prefixes, prefixes.mark + 1)
    return prefixes


def solve_unit(payload: UnitPayload | SymmetricPayload) -> tuple[int, ...]:
    """Count one unit: ``(weight, 0, 0)`` for a prefix unit, ``(0, F180, F90)`` for the
    symmetric one.

    Both backends give the same result for the same unit, so a run can be resumed on either.
    """
    if isinstance(payload, SymmetricPayload):
        from .symmetric import count_symmetric

        return (0, *count_symmetric(payload.n))
    prefixes = payload.prefixes
    if payload.backend == "gpu":
        from .gpu import count_prefixes_gpu

        return (count_prefixes_gpu(gpu_batch(prefixes)), 0, 0)
    from .cpu import count_prefixes_cpu

    return (count_prefixes_cpu(prefixes), 0, 0)


class InconsistentCountError(RuntimeError):
    """Unit results that no correct search can give (a faulty device or a corrupted file)."""


def combine(results: Mapping[str, tuple[int, ...]]) -> tuple[int, int]:
    """``(total, unique)`` from every unit's result, by Burnside's lemma.

    The prefix weights add up to 3 × total; no solution is fixed by a reflection, so
    unique = (total + F180 + 2·F90) / 8. Both divisions must be exact: if not, some unit
    result is wrong and :class:`InconsistentCountError` is raised.

    >>> combine({"u0": (3 * 92, 0, 0), "sym": (0, 4, 0)})
    (92, 12)
    """
    weight = sum(r[0] for key, r in results.items() if key != SYMMETRIC_UNIT)
    _, f180, f90 = results[SYMMETRIC_UNIT]
    total, rest = divmod(weight, 3)
    orbits = total + f180 + 2 * f90
    if rest or orbits % 8 or f90 > f180 or f180 > total:
        raise InconsistentCountError(
            f"unit results are inconsistent (3·total = {weight}, F180 = {f180}, F90 = {f90}): "
            "3·total must be a multiple of 3 and total + F180 + 2·F90 of 8; "
            "a device or a checkpoint gave a wrong count")
    return total, orbits // 8
