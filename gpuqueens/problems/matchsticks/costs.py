"""Up-front estimates of the matchstick methods' memory and time, from the sizes alone.

This module holds what every estimate shares and problem 1's methods (the transfer matrix,
column powers, evaluation points on the GPU); the square-tracking methods of problems 2
and 3 are estimated in :mod:`.square_costs`. Each public call estimates its cost before it builds anything, refuses with a
``ValueError`` what cannot fit in memory and warns with a :class:`gpuqueens.LongRunWarning`
what will take longer than about an hour (:mod:`gpuqueens.estimates`). The models and
their constants come from measurements (``bench/calibrate_matchsticks.py``; the values and
where they were taken are in docs/matchsticks.md, "Estimates"). An estimate takes
microseconds, whatever the size: nothing below loops over the grid.

>>> cost = transfer_cost(10, 10, 220, "cpu")
>>> cost.primes, cost.memory < 2**30, cost.seconds < 60
(3, True, True)
>>> transfer_cost(2, 10**6, 5 * 10**6 + 2, "cpu").memory > 2**40   # 2×10^6: terabytes
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...estimates import check_memory, warn_if_long
from .column_powers import power_seconds
from .grid import stick_count

__all__ = ["Cost", "check_cost", "transfer_cost", "power_cost", "prime_count", "bound_prime_count",
           "log2_binomial", "prime_search_seconds", "amount"]


@dataclass(frozen=True)
class Cost:
    """What a run is expected to need: ``memory`` bytes here (``device_memory`` on the GPU,
    checked against ``device_available``) and ``seconds``. ``least_memory``: what it needs
    for certain, where ``memory`` foresees work that may not come (the table's rounds above
    the unit-square bound): a run is refused only above it, and stops with a
    :class:`~.sweep.TooManyEntries` if the rest then outgrows memory."""

    what: str
    memory: float
    seconds: float
    primes: int = 1
    device_memory: float = 0.0
    device_available: float | None = None
    least_memory: float | None = None


def check_cost(cost: Cost, stacklevel: int = 2) -> None:
    """Refuse what cannot fit in memory (``ValueError``); warn when it will take long.

    ``stacklevel`` as for :func:`warnings.warn`: 2 (the default) names the caller's caller.
    """
    check_memory(cost.what, cost.memory if cost.least_memory is None else cost.least_memory)
    if cost.device_memory:
        check_memory(f"{cost.what} (on the GPU)", cost.device_memory,
                     available=cost.device_available, where="the GPU")
    warn_if_long(cost.what, cost.seconds, stacklevel=stacklevel + 1)


def log2_binomial(n: int, k: int) -> float:
    """log2 C(n, k), in constant time for any size.

    >>> round(log2_binomial(220, 110), 3) == round(math.log2(math.comb(220, 110)), 3)
    True
    """
    k = min(k, n - k)
    if k <= 0:
        return 0.0
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(2)


def prime_count(sticks: int, top: int | None, prime_bits: int) -> int:
    """How many primes of about ``prime_bits`` bits the CRT needs for counts up to
    max_{R <= top} C(E, R) (:func:`.modular.binomial_bound`), from its logarithm: primes
    just below 2^b each exceed 2^(b - 0.01), so this is the count or one more.

    >>> prime_count(220, None, 62), prime_count(220, 16, 62)
    (4, 2)
    """
    top = sticks if top is None else min(top, sticks)
    bits = log2_binomial(sticks, min(top, sticks // 2))
    return int(bits // (prime_bits - 0.01)) + 1


def bound_prime_count(h: int, w: int, top: int, prime_bits: int) -> tuple[int, float]:
    """(primes, bits) for problem 1 on an h×w grid, R <= top: the primes of about
    ``prime_bits`` bits that its methods choose by :func:`.count_bound.count_bound`, from
    that bound's fitted size (:func:`.count_bound.estimated_bound_bits`); the count or one
    more, as :func:`prime_count`.

    >>> bound_prime_count(10, 10, 220, 62)[0], prime_count(220, None, 62)
    (3, 4)
    """
    from .count_bound import estimated_bound_bits

    bits = estimated_bound_bits(h, w, top)
    return int(bits // (prime_bits - 0.01)) + 1, bits


def _bound_seconds(h: int, w: int, top: int, backend: str) -> float:
    """The bound's float64 sweep (:func:`.transfer_work.bound_seconds`)."""
    from .transfer_work import bound_seconds

    return bound_seconds(h, w, top, backend)


#: Choosing k primes (modular.primes_for_bound tries k = 1, 2, ... and tests candidates
#: afresh for each): seconds per k^2, for primes below 2^62 and below 2^31.
PRIME_SEARCH_SECONDS = {62: 1.1e-4, 31: 4e-5}


def prime_search_seconds(primes: int, prime_bits: int) -> float:
    return PRIME_SEARCH_SECONDS[prime_bits] * primes * primes


def amount(n: float) -> str:
    """A count for a message: exact while short, else rounded."""
    return f"{n:,.0f}" if n < 1e7 else f"{n:.1e}"


def _mean_live(length: int, sticks: int) -> float:
    """Mean over the sweep's points of min(decided sticks + 1, length): the live R axis."""
    if length >= sticks + 1:
        return (sticks + 2) / 2
    return length - length * length / (2 * (sticks + 1))


# -- problem 1: the transfer matrix (transfer.py) -----------------------------------------
# Constants from bench/calibrate_matchsticks.py on a 2-core machine, 2026-11-23 (the values
# measured and the spread are in docs/matchsticks.md, "Estimates").

#: CPU, seconds per point step and prime whatever its size (NumPy calls) ...
TRANSFER_STEP_SECONDS = 2e-5
#: ... and per state element (one residue of one state, one R) of a point step.
TRANSFER_ELEMENT_SECONDS = 5e-9
#: Peak arrays of the size of the dense state (the old and new state and the sums).
TRANSFER_ARRAYS = 2.75
#: The CRT: seconds per count per (prime count)^2 (Garner's method on Python ints).
CRT_SECONDS = 1e-7
#: Bytes of a small Python int in a list (the residues before the CRT).
RESIDUE_BYTES = 40


def _gpu_memory() -> float | None:
    try:
        from .gpu import cupy_module

        free, _ = cupy_module().cuda.Device().mem_info
        return float(free)
    except Exception:  # no CuPy or no device: the backend check says why elsewhere
        return None


def transfer_cost(h: int, w: int, top: int, backend: str = "cpu") -> Cost:
    """Problem 1 on an h×w grid (h <= w) for R = 0..top, by the method ``backend`` runs.

    CPU, the dense transfer matrix: the state has 2^(h+2) rows of top + 1 residues (uint64);
    each of the k primes (for counts up to :func:`.count_bound.count_bound`, after its own
    float64 sweep, :func:`_bound_seconds`) is a pass over the (h+1)(w+1) grid
    points, and a point step touches the rows' live part (R up to the sticks decided so
    far). The counts come back as k lists of residues and are combined by the CRT into
    top + 1 exact integers. GPU: :func:`_evaluation_cost`.
    """
    if backend == "gpu":
        return _evaluation_cost(h, w, top)
    sticks = stick_count(h, w)
    length = top + 1
    primes, bits = bound_prime_count(h, w, top, 62)
    points = (h + 1) * (w + 1)
    rows = 1 << (h + 2)
    state_bytes = 8.0 * rows * length
    per_step = rows * _mean_live(length, sticks)
    results = RESIDUE_BYTES * primes * length + length * (bits / 8 + 32)
    crt = CRT_SECONDS * length * primes * primes + prime_search_seconds(primes, 62)
    asked = "every R" if top >= sticks else f"R <= {top}"
    what = f"the {h}×{w} transfer matrix ({asked}, {amount(primes)} prime{'s' * (primes > 1)})"
    seconds = primes * points * (TRANSFER_STEP_SECONDS + TRANSFER_ELEMENT_SECONDS * per_step)
    seconds += _bound_seconds(h, w, top, "cpu")
    return Cost(what, TRANSFER_ARRAYS * state_bytes + results, seconds + crt, primes)


def power_cost(h: int, w: int, top: int) -> Cost:
    """Problem 1 on an h×w grid (h <= w) for R = 0..top by column powers
    (:mod:`.column_powers`): a few matrices of 4^(h+1) polynomials of top + 1 exact
    integers, each at most C(E, R)."""
    length = float(top) + 1.0
    sticks = stick_count(h, w)
    bits = log2_binomial(sticks, min(top, sticks // 2))
    memory = 4.0 * float(1 << (2 * h + 2)) * length * (RESIDUE_BYTES + bits / 8)
    what = f"the {h}×{w} grid by column powers (R <= {top})"
    return Cost(what, memory, power_seconds(h, w, top))


#: The evaluation method's primes lie below 2^29 and are 1 modulo E + 1 (:mod:`.interpolation`).
EVALUATION_PRIME_BITS = 29


def _evaluation_cost(h: int, w: int, top: int) -> Cost:
    """Problem 1 on the GPU, by evaluation points (:mod:`.evaluation`, kernels/matchsticks.cu).

    The work of :func:`.transfer_work.evaluation_work` in closed form (primes for the
    bound's fitted size, :func:`bound_prime_count`): lanes = primes ×
    (E+1) in groups of 8, 2^(h+2) residues per lane, the half sweep's (w//2+1)(h+1) point
    steps in passes of at most min(h+1, 10) steps, each pass reading and writing every
    state; GPU seconds are the H100 projection of :func:`.transfer_work.method_cost` (not
    a measurement). Refused when there are too few primes ≡ 1 (mod E+1) below 2^29 for the
    counts (about 2^29 / ((E+1)·ln 2^29) of them: grids of more than ~2·10^4 sticks).
    """
    from . import transfer_work as work
    from .evaluation import LANES, TILE_STEPS

    sticks = stick_count(h, w)
    points = sticks + 1
    primes, bits = bound_prime_count(h, w, top, EVALUATION_PRIME_BITS)
    asked = "every R" if top >= sticks else f"R <= {top}"
    what = (f"the {h}×{w} grid by evaluation points on the GPU ({asked}, "
            f"{amount(primes)} primes ≡ 1 mod {points})")
    available = 2.0 ** EVALUATION_PRIME_BITS / (points * EVALUATION_PRIME_BITS * math.log(2))
    if primes > 0.9 * available:
        raise ValueError(f"{what}: the counts need {amount(primes)} primes ≡ 1 (mod {points}) "
                         f"below 2^{EVALUATION_PRIME_BITS}, and there are only about "
                         f"{amount(available)}; this grid has too many sticks for the GPU method")
    lanes = -(-primes * points // LANES) * LANES
    states = float(1 << (h + 2))
    steps = (w // 2 + 1) * (h + 1)
    buffers = 2 if w % 2 == 0 else 1
    passes = -(-steps // max(1, min(TILE_STEPS, h + 1))) + (buffers - 1)
    values = lanes * states
    moved = 4 * values * (2 * passes + buffers + 1)
    instructions = values * (steps * work.INSTRUCTIONS_PER_UPDATE
                             + passes * work.COPY_INSTRUCTIONS_PER_VALUE)
    fma = values * steps * work.FMA_INSTRUCTIONS_PER_UPDATE
    device = work.H100
    floor = max(moved / device.bandwidth, instructions / device.issue_rate, fma / device.fma_rate)
    host = lanes * (top + 1) * work.HOST_SECONDS_PER_LANE_COEFFICIENT + _bound_seconds(h, w, top, "gpu")
    results = RESIDUE_BYTES * primes * (top + 1) + (top + 1) * (bits / 8 + 32)
    lane_group = LANES * states * 4 * buffers
    return Cost(what, results + 8.0 * lanes, floor / device.efficiency + host, primes,
                lane_group, _gpu_memory())
