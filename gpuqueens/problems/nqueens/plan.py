"""How an N-Queens count is cut into work units, and how one unit is solved.

A count has two kinds of unit (docs/nqueens-method.md):

* prefix units ``u0``, ``u1``, ...: unit ``k`` of ``U`` holds the prefixes ``k, k + U,
  k + 2U, ...`` at the unit row, in their fixed order, so ``(n, unit_row, U, k)`` identifies
  it on every machine and every run. Strided, not contiguous: the prefixes come in an order
  whose end holds small subtrees (case S with large B1), and so does every unit's end, which
  keeps short the tail of a GPU launch (its last items run on an otherwise idle device).
  Its result is ``(weight, 0, 0)``: three times the solutions below its prefixes. The CPU counts a unit's prefixes directly; the GPU cuts them into finer work
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

from ...runner import InconsistentCountError, WorkUnit
from .prefixes import Prefixes, default_mark, enumerate_prefixes, expand_prefixes

__all__ = ["Plan", "UnitPayload", "SymmetricPayload", "plan_for", "prefix_unit_keys", "work_units",
           "solve_unit", "combine", "InconsistentCountError", "GPU_TARGET_PREFIXES", "SYMMETRIC_UNIT"]

#: A unit whose prefixes, split on the device, would give fewer work items than this is
#: first expanded row by row on the host (only small boards and small units).
GPU_TARGET_PREFIXES = 1 << 15
#: ...but the host stops this many rows above the bottom: deeper prefixes leave too little work.
GPU_MIN_TAIL_ROWS = 9

#: The layout of a plan's units and results: 3 = strided prefix units (unit k holds prefixes
#: k, k + units, ...) with weights, plus the symmetric unit. Earlier formats are refused, not
#: misread (2: contiguous slices of the prefixes; 1: per-unit (total, unique) pairs).
FORMAT = 3
#: Key of the unit that counts the rotation-symmetric solutions.
SYMMETRIC_UNIT = "sym"
#: Every unit gives three numbers: (weight, 0, 0) for a prefix unit, (0, F180, F90) for
#: the symmetric one.
UNIT_RESULT_WIDTH = 3


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
        except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
            return None


#: From this n on, each size step gets four times more units (each n costs ~8-10x the
#: previous one), so that a unit stays short. From n = 27 the units stay at MAX_UNITS and a
#: unit's work grows with n again (the projections of docs/scaling.md: minutes a unit on one
#: GPU at n = 26 and 27, hours at 28). The GPU needs big units: every
#: unit ends with a tail (its last items run on an emptying device; estimated as twice a
#: mean item at ~50 ns per node for a lane alone: 0.03 s at n = 21, 0.14 s at 22, 0.7 s at
#: 23) and a read-back before the host prepares the next one. Measured on one H200
#: (2026-11-28, docs/performance.md): n = 21 takes 8.2 s and is one unit, n = 22 (72 s) four
#: of about 18 s; n = 23 is projected at sixteen of about 41 s.
#: The CPU is ~1000 times slower and cuts earlier.
FIRST_SPLIT_N = {"cpu": 15, "gpu": 22}
MAX_UNITS = 4096


def plan_for(n: int, backend: str = "gpu") -> Plan:
    """The default plan for an n×n board (n >= 4) on a backend.

    >>> plan_for(8)
    Plan(n=8, unit_row=5, unit_count=1)
    >>> plan_for(22, "gpu"), plan_for(16, "cpu")
    (Plan(n=22, unit_row=5, unit_count=4), Plan(n=16, unit_row=5, unit_count=16))
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
    """The symmetric unit: count the solutions of an n×n board fixed by rotations, on the
    GPU (kernels/nqueens_symmetric.cu) or the CPU (NumPy): the same result either way."""

    n: int
    backend: str = "cpu"

    def ledger_identity(self) -> list:
        """The backend is not part of the identity: the unit can be resumed on either."""
        return ["symmetric", self.n]


def prefix_unit_keys(plan: Plan) -> list[str]:
    """The keys of ``plan``'s prefix units, in order: ``u0``, ``u1``, ... (zero-padded).

    >>> prefix_unit_keys(Plan(n=16, unit_row=5, unit_count=16))[:3]
    ['u00', 'u01', 'u02']
    """
    width = len(str(plan.unit_count - 1))
    return [f"u{index:0{width}d}" for index in range(plan.unit_count)]


def work_units(plan: Plan, backend: str) -> list[WorkUnit]:
    """The units of ``plan``: strided selections of the prefixes at the unit row, then the
    symmetric unit."""
    prefixes = enumerate_prefixes(plan.n, plan.unit_row)
    count = plan.unit_count
    units = []
    for index, key in enumerate(prefix_unit_keys(plan)):
        part = prefixes.take(slice(index, None, count))
        units.append(WorkUnit(key, UnitPayload(backend, part), weight=float(max(len(part), 1))))
    return units + [WorkUnit(SYMMETRIC_UNIT, SymmetricPayload(plan.n, backend), weight=1.0)]


def gpu_batch(prefixes: Prefixes) -> Prefixes:
    """Expand prefixes row by row on the host while there are too few for the GPU even after
    the device's own split of two rows (``gpu.items_per_prefix``)."""
    from .gpu import items_per_prefix

    def items(p: Prefixes) -> int:
        return len(p) * items_per_prefix(p.n, p.mark, min(2, p.n - 1 - p.mark))

    while len(prefixes) and items(prefixes) < GPU_TARGET_PREFIXES and prefixes.mark < prefixes.n - GPU_MIN_TAIL_ROWS:
        prefixes = expand_prefixes(prefixes, prefixes.mark + 1)
    return prefixes


def solve_unit(payload: UnitPayload | SymmetricPayload) -> tuple[int, ...]:
    """Count one unit: ``(weight, 0, 0)`` for a prefix unit, ``(0, F180, F90)`` for the
    symmetric one.

    Both backends give the same result for the same unit, so a run can be resumed on either.
    The first GPU unit of a process on a device checks that device first
    (:func:`~gpuqueens.problems.nqueens.gpu_check.check_device`).
    """
    if payload.backend == "gpu":
        from .gpu_check import check_device

        check_device()
    if isinstance(payload, SymmetricPayload):
        if payload.backend == "gpu":
            from .gpu import count_symmetric_gpu

            return (0, *count_symmetric_gpu(payload.n))
        from .symmetric import count_symmetric

        return (0, *count_symmetric(payload.n))
    prefixes = payload.prefixes
    if payload.backend == "gpu":
        from .gpu import count_prefixes_gpu

        return (count_prefixes_gpu(gpu_batch(prefixes)), 0, 0)
    from .cpu import count_prefixes_cpu

    return (count_prefixes_cpu(prefixes), 0, 0)


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
