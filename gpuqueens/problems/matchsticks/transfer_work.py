"""The work of problem 1's two methods, counted from their own plans: updates, bytes moved,
instructions issued, and the H100 projection built on them.

These counts follow the methods exactly (the tests check them against the lanes, passes and
primes that run), so they take time proportional to the grid: the benchmarks and the
calibration use them. The public calls check their sizes with :mod:`.costs`, whose
constant-time models take the constants below.

Two methods count the same thing (docs/matchsticks.md):

* the **coefficient transfer** (:mod:`.transfer`, the CPU method): a dense array of
  2^(h+2) states × (R+1) residues per prime < 2^62; its work is the state-coefficient
  updates Σ_steps 2^(h+2) · live(R) · primes, at a rate measured with
  ``bench/cpu_matchsticks.py``;
* both choose their primes by the same bound (:func:`.count_bound.count_bound`), whose own
  float64 sweep is counted too (a small term): here it is computed as the methods compute
  it up to a shorter side of :data:`EXACT_BOUND_SHORT_SIDE`, and taken from its fitted size
  (:func:`.count_bound.estimated_bound_bits`, within 0.002 bits of the sweep up to 20×20)
  beyond, where the sweep would take the host tens of seconds or more;
* **evaluation points** (:mod:`.evaluation`, the GPU kernel): 2^(h+2) residues per lane
  (E+1 points per prime < 2^29) over the half sweep; its work is lanes · 2^(h+2) · steps
  state updates. On the GPU the two numbers are the bytes every pass must move through
  device memory (read and write every state of every lane once) and the instructions the
  kernel issues (counted in its SASS for sm_90, ``tests/test_matchsticks_kernel.py``
  builds the same code): their times at an H100's rates give a floor, and the projection
  is that floor over an assumed efficiency. **GPU seconds are a projection, not a
  measurement** until bench/gpu_matchsticks.py has been run on the device.

>>> cost = method_cost(10, 10, "cpu")
>>> cost.bytes > 0 and cost.seconds > 0
True
>>> method_cost(20, 20, "gpu").bytes < 2**30  # one group of 8 lanes: 256 MiB
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

from .count_bound import bound_points, count_bound, estimated_bound_bits
from .evaluation import LANES, sweep_plan
from .grid import orient, stick_count
from .interpolation import evaluation_primes
from .modular import WIDE_PRIME_LIMIT, primes_for_bound

__all__ = ["TransferCost", "CoefficientWork", "EvaluationWork", "coefficient_work", "evaluation_work",
           "method_cost", "method_bound", "bound_updates", "bound_seconds", "H100"]

# --- measured on the CPU with bench/cpu_matchsticks.py (2 cores of an AMD EPYC, NumPy 2.4.6,
# 2026-11-24, the step's buffers reused): the coefficient transfer --------------------------
#: seconds per state-coefficient update while the dense array fits in the caches (8×8..11×11:
#: 2.4-3.9 ns) and beyond them (12×12, a 41 MB array: 4.9 ns; 13×13: 5.1 ns)
CPU_SECONDS_IN_CACHE, CPU_SECONDS_BEYOND_CACHE, CPU_CACHE_BYTES = 4e-9, 5.5e-9, 24 << 20
#: fixed cost of one point step of one prime (NumPy calls; dominates long thin grids)
CPU_SECONDS_PER_STEP = 1e-4
#: peak resident memory over one dense array (11×11, 12×12 and 13×13: 4.1-4.4 after the
#: interpreter's ~33 MB, with a margin), and that baseline
CPU_PEAK_ARRAYS, CPU_BASE_BYTES = 5, 40 << 20
#: the host's share of the evaluation method (lane tables, interpolation, CRT): 34-82 ns per
#: lane and coefficient measured for 16×16..20×20
HOST_SECONDS_PER_LANE_COEFFICIENT = 40e-9
#: the bound's float64 sweep (:mod:`.count_bound`) on the CPU: seconds per state and x of a
#: point step (4 ns at 16×16, 11 ns at 18×18 and 20×20, one x) and per point step (NumPy calls)
BOUND_SECONDS_PER_UPDATE, BOUND_SECONDS_PER_STEP = 11e-9, 5e-5
#: ... on the GPU: bytes per state and x of a point step (the ~7.5 passes over the float64
#: state that its array operations make), and kernel launches per point step
BOUND_BYTES_PER_UPDATE, BOUND_LAUNCHES_PER_STEP, LAUNCH_SECONDS = 64, 12, 10e-6
#: up to this shorter side the work counts use the bound itself (0.3 s at 16×16)
EXACT_BOUND_SHORT_SIDE = 16

# --- the kernel's instructions per unit of work, from its SASS (nvcc 13.0, sm_90) -----------
#: interior step group: 216 instructions for 3 steps on 16 states (48 updates), 116 of
#: them IMAD-class (the FMA pipe)
INSTRUCTIONS_PER_UPDATE = 216 / 48
FMA_INSTRUCTIONS_PER_UPDATE = 116 / 48
#: tile copy: 78 instructions per 4 loads of 16 bytes (4 lanes), the same again to store
COPY_INSTRUCTIONS_PER_VALUE = 2 * 78 / 16


@dataclass(frozen=True)
class Device:
    """The rates a GPU projection uses."""

    bandwidth: float     # bytes/s of device memory, read + write (measured with a copy)
    sms: int
    clock: float         # Hz, sustained
    efficiency: float    # assumed fraction of the floor a first kernel reaches

    @property
    def issue_rate(self) -> float:  # thread instructions per second: 4 schedulers × 32 lanes
        return self.sms * 4 * 32 * self.clock

    @property
    def fma_rate(self) -> float:  # IMAD-class thread instructions per second: 64 per SM per clock
        return self.sms * 64 * self.clock


#: H100 SXM: 3.0 TB/s measured with a device copy; 132 SMs; 1.755 GHz assumed sustained.
H100 = Device(3.0e12, 132, 1.755e9, 0.5)


class TransferCost(NamedTuple):
    """``bytes``: the least memory the run needs (CPU: the coefficient transfer's peak; GPU:
    device memory for one group of 8 lanes, more is used in bigger batches when free);
    ``seconds``: the expected time (GPU: projected from the H100 rates)."""

    bytes: int
    seconds: float


@dataclass(frozen=True)
class CoefficientWork:
    primes: int
    updates: int      # Σ over point steps of states × live R entries × primes
    array_bytes: int  # one dense array


@dataclass(frozen=True)
class EvaluationWork:
    primes: int
    lanes: int        # E + 1 points per prime, in whole groups of 8
    states: int
    steps: int        # point steps of the half sweep
    passes: int
    updates: int      # lanes × states × steps
    moved_bytes: int  # device memory traffic: every pass reads and writes every state
    instructions: int
    fma_instructions: int
    lane_bytes: int   # device memory per lane (two states for even w)

    def floors(self, device: Device = H100) -> tuple[float, float]:
        """(memory seconds, compute seconds) at the device's rates."""
        compute = max(self.instructions / device.issue_rate, self.fma_instructions / device.fma_rate)
        return self.moved_bytes / device.bandwidth, compute


def _top(sticks: int, max_removed: int | None) -> int:
    return sticks if max_removed is None else min(max_removed, sticks)


@functools.lru_cache(maxsize=256)
def method_bound(h: int, w: int, top: int) -> int:
    """The bound the methods choose their primes by (h <= w): computed up to a shorter side of
    :data:`EXACT_BOUND_SHORT_SIDE`, else 2 to the power of its fitted size."""
    if h <= EXACT_BOUND_SHORT_SIDE:
        return count_bound(h, w, top)
    bits = estimated_bound_bits(h, w, top)
    whole = int(bits)
    return int(2.0 ** (bits - whole) * 2 ** 52) << whole >> 52


def bound_updates(h: int, w: int, top: int) -> tuple[int, int]:
    """(state updates, point steps) of the bound's float64 sweep: 2^(h+2) states times the
    x values swept, over every point of the grid."""
    steps = (h + 1) * (w + 1)
    return (1 << (h + 2)) * len(bound_points(stick_count(h, w), top)) * steps, steps


def bound_seconds(h: int, w: int, top: int, backend: str) -> float:
    """Seconds of the bound's float64 sweep (h <= w): on the CPU at its measured rate; on the
    GPU its bytes at :data:`H100`'s rate and its launches."""
    updates, steps = bound_updates(h, w, top)
    if backend == "gpu":
        return (updates * BOUND_BYTES_PER_UPDATE / H100.bandwidth / H100.efficiency
                + steps * BOUND_LAUNCHES_PER_STEP * LAUNCH_SECONDS)
    return updates * BOUND_SECONDS_PER_UPDATE + steps * BOUND_SECONDS_PER_STEP


@functools.lru_cache(maxsize=256)
def coefficient_work(m: int, n: int, max_removed: int | None = None) -> CoefficientWork:
    """Work of :func:`.transfer.count_by_removed` for an m×n grid."""
    h, w = orient(m, n)
    sticks = stick_count(h, w)
    top = _top(sticks, max_removed)
    primes = len(primes_for_bound(method_bound(h, w, top), WIDE_PRIME_LIMIT))
    states, decided, updates = 1 << (h + 2), 0, 0
    for j in range(w + 1):
        for i in range(h + 1):
            updates += states * min(decided + 1, top + 1)
            decided += (i < h) + (j < w)
    return CoefficientWork(primes, updates * primes, states * (top + 1) * 8)


@functools.lru_cache(maxsize=256)
def evaluation_work(m: int, n: int, max_removed: int | None = None) -> EvaluationWork:
    """Work of :func:`.evaluation.count_by_removed_evaluated` (CPU twin or GPU kernel)."""
    h, w = orient(m, n)
    sticks = stick_count(h, w)
    primes = len(evaluation_primes(sticks + 1, method_bound(h, w, _top(sticks, max_removed))))
    lanes = -(-primes * (sticks + 1) // LANES) * LANES
    states = 1 << (h + 2)
    plan = sweep_plan(h, w)
    steps = sum(one.steps for one in plan.passes)
    buffers = 2 if w % 2 == 0 else 1
    values = lanes * states
    # each pass reads and writes every state; setting up writes the buffers; the join reads
    # the up = 0 half of two states
    moved = 4 * values * (2 * len(plan.passes) + buffers + 1)
    instructions = values * (steps * INSTRUCTIONS_PER_UPDATE + len(plan.passes) * COPY_INSTRUCTIONS_PER_VALUE)
    return EvaluationWork(primes, lanes, states, steps, len(plan.passes), values * steps, moved,
                          int(instructions), int(values * steps * FMA_INSTRUCTIONS_PER_UPDATE),
                          states * 4 * buffers)


def method_cost(h: int, w: int, backend: str, max_removed: int | None = None) -> TransferCost:
    """Memory and expected seconds of problem 1 for an h×w grid on ``backend`` ("cpu" or
    "gpu"), for R = 0..max_removed (default all): what the API can check before it starts.

    CPU: the coefficient transfer, from its measured rate and peak memory. GPU: the
    evaluation kernel, projected for one H100 from the two numbers (bytes moved, instructions
    issued) at :data:`H100`'s rates and an assumed efficiency of 0.5, plus the host's
    interpolation and CRT at a measured CPU rate. Both include the bound's float64 sweep
    (on the device for the GPU: its bytes at the same rates, and its launches).
    """
    if backend not in ("cpu", "gpu"):
        raise ValueError(f"backend must be 'cpu' or 'gpu', got {backend!r}")
    short, long = orient(h, w)
    top = _top(stick_count(h, w), max_removed)
    bound = bound_seconds(short, long, top, backend)
    if backend == "cpu":
        work = coefficient_work(h, w, max_removed)
        rate = CPU_SECONDS_IN_CACHE if work.array_bytes <= CPU_CACHE_BYTES else CPU_SECONDS_BEYOND_CACHE
        steps = (min(h, w) + 1) * (max(h, w) + 1) * work.primes
        return TransferCost(int(work.array_bytes * CPU_PEAK_ARRAYS) + CPU_BASE_BYTES,
                            work.updates * rate + steps * CPU_SECONDS_PER_STEP + bound)
    work = evaluation_work(h, w, max_removed)
    host = work.lanes * (top + 1) * HOST_SECONDS_PER_LANE_COEFFICIENT
    return TransferCost(work.lane_bytes * LANES, max(work.floors()) / H100.efficiency + host + bound)
