"""Up-front estimates of the matchstick methods' memory and time, from the sizes alone.

Each public call estimates its cost before it builds anything, refuses with a
``ValueError`` what cannot fit in memory and warns with a :class:`gpuqueens.LongRunWarning`
what will take longer than about an hour (:mod:`gpuqueens.estimates`). The models and
their constants come from measurements (``bench/calibrate_matchsticks.py``; the values and
where they were taken are in docs/matchsticks.md, "Estimates"). An estimate takes
microseconds, whatever the size: nothing below loops over the grid.

>>> cost = transfer_cost(10, 10, 220, "cpu")
>>> cost.primes, cost.memory < 2**30, cost.seconds < 60
(4, True, True)
>>> transfer_cost(2, 10**6, 5 * 10**6 + 2, "cpu").memory > 2**40   # 2×10^6: terabytes
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...estimates import available_memory, check_memory, warn_if_long
from .column_powers import power_seconds
from .grid import stick_count

__all__ = ["Cost", "check_cost", "transfer_cost", "power_cost", "exact_cost", "exact_join_cost",
           "table_cost", "table_live",
           "prime_count", "log2_binomial", "entry_bytes", "live_entry_limit"]


@dataclass(frozen=True)
class Cost:
    """What a run is expected to need: ``memory`` bytes here (``device_memory`` on the GPU,
    checked against ``device_available``) and ``seconds``."""

    what: str
    memory: float
    seconds: float
    primes: int = 1
    device_memory: float = 0.0
    device_available: float | None = None


def check_cost(cost: Cost, stacklevel: int = 2) -> None:
    """Refuse what cannot fit in memory (``ValueError``); warn when it will take long.

    ``stacklevel`` as for :func:`warnings.warn`: 2 (the default) names the caller's caller.
    """
    check_memory(cost.what, cost.memory)
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


#: Choosing k primes (modular.primes_for_bound tries k = 1, 2, ... and tests candidates
#: afresh for each): seconds per k^2, for primes below 2^62 and below 2^31.
PRIME_SEARCH_SECONDS = {62: 1.1e-4, 31: 4e-5}


def _prime_search(primes: int, prime_bits: int) -> float:
    return PRIME_SEARCH_SECONDS[prime_bits] * primes * primes


def _amount(n: float) -> str:
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
    each of the k primes (for counts up to C(E, R)) is a pass over the (h+1)(w+1) grid
    points, and a point step touches the rows' live part (R up to the sticks decided so
    far). The counts come back as k lists of residues and are combined by the CRT into
    top + 1 exact integers. GPU: :func:`_evaluation_cost`.
    """
    if backend == "gpu":
        return _evaluation_cost(h, w, top)
    sticks = stick_count(h, w)
    length = top + 1
    primes = prime_count(sticks, top, 62)
    points = (h + 1) * (w + 1)
    rows = 1 << (h + 2)
    state_bytes = 8.0 * rows * length
    per_step = rows * _mean_live(length, sticks)
    bits = log2_binomial(sticks, min(top, sticks // 2))
    results = RESIDUE_BYTES * primes * length + length * (bits / 8 + 32)
    crt = CRT_SECONDS * length * primes * primes + _prime_search(primes, 62)
    asked = "every R" if top >= sticks else f"R <= {top}"
    what = f"the {h}×{w} transfer matrix ({asked}, {_amount(primes)} prime{'s' * (primes > 1)})"
    seconds = primes * points * (TRANSFER_STEP_SECONDS + TRANSFER_ELEMENT_SECONDS * per_step)
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

    The work of :func:`.transfer_work.evaluation_work` in closed form: lanes = primes ×
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
    primes = prime_count(sticks, top, EVALUATION_PRIME_BITS)
    asked = "every R" if top >= sticks else f"R <= {top}"
    what = (f"the {h}×{w} grid by evaluation points on the GPU ({asked}, "
            f"{_amount(primes)} primes ≡ 1 mod {points})")
    available = 2.0 ** EVALUATION_PRIME_BITS / (points * EVALUATION_PRIME_BITS * math.log(2))
    if primes > 0.9 * available:
        raise ValueError(f"{what}: the counts need {_amount(primes)} primes ≡ 1 (mod {points}) "
                         f"below 2^{EVALUATION_PRIME_BITS}, and there are only about "
                         f"{_amount(available)}; this grid has too many sticks for the GPU method")
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
    host = lanes * (top + 1) * work.HOST_SECONDS_PER_LANE_COEFFICIENT
    bits = log2_binomial(sticks, min(top, sticks // 2))
    results = RESIDUE_BYTES * primes * (top + 1) + (top + 1) * (bits / 8 + 32)
    lane_group = LANES * states * 4 * buffers
    return Cost(what, results + 8.0 * lanes, floor / device.efficiency + host, primes,
                lane_group, _gpu_memory())


# -- the square-tracking sweep (sweep.py, halves.py) --------------------------------------

#: Seconds per point step (NumPy calls) and per live entry and key-or-count word.
SWEEP_STEP_SECONDS = 3e-4
SWEEP_ENTRY_SECONDS = 8e-8
#: Peak memory per live entry, in entries: the copies during a point step (two sides, the
#: parts, the merge) and, for the table, the decoded parts (measured 8 to 12).
SWEEP_COPIES = 10
#: The unit-square bound's backward step: seconds per (state, slack) value.
BOUND_VALUE_SECONDS = 4e-9


def _bound_cost(h: int, w: int, slack: int) -> tuple[float, float]:
    """Bytes and seconds of the unit-square bound's tables (:mod:`.bounds`)."""
    sticks = stick_count(h, w)
    width = min(slack, h * w) + 1
    itemsize = 1 if sticks < 255 else 2 if sticks < 65535 else 4
    values = ((h + 1) * (w + 1) + 1) * 4.0 ** (h + 1) * width
    return values * itemsize, values * 4 * BOUND_VALUE_SECONDS


def _key_words(h: int, w: int, squares: int, removed: int | None) -> int:
    """Words of the sweep's packed key (:class:`.keys.KeyLayout`), without building it."""
    widths = [h + 1, max(1, h.bit_length())]
    widths += [min(u, w - u + 1) for u in range(1, h + 1) for _ in range(h - u + 1)]
    widths.append(max(1, squares.bit_length()))
    if removed is not None:
        widths.append(max(1, removed.bit_length()))
    words, used = 1, 0
    for width in widths:
        if used + width > 64:
            words, used = words + 1, 0
        used += width
    return words


def live_entry_limit(max_entries: int | None, words: int, primes: int,
                     available: float | None = None) -> int:
    """The most live entries a sweep may hold: as many as this machine's memory holds with
    their copies during a point step, and at most ``max_entries`` if given.

    >>> live_entry_limit(None, 2, 3, available=2**30) == 2**30 // (SWEEP_COPIES * 48)
    True
    """
    if available is None:
        available = available_memory()
    limit = max_entries if max_entries is not None else 1 << 62
    if available is not None:
        limit = min(limit, int(available // (SWEEP_COPIES * entry_bytes(words, primes))))
    return max(1, limit)


def entry_bytes(words: int, primes: int) -> int:
    """Bytes of one live entry of a sweep: its key words, its R and its residues."""
    return 8 * (words + 1 + primes)


#: Problem 2: live entries per (state kind, S value, R value alive), the most measured per
#: shorter side h (docs/matchsticks.md, "Estimates"); an upper bound for the time.
EXACT_ENTRIES_PER_CELL = {1: 8, 2: 64, 3: 1200, 4: 40_000, 5: 150_000}


def exact_cost(h: int, w: int, removed: int, squares: int) -> Cost:
    """Problem 2 (R and S exact) on an h×w grid by the whole-grid sweep (:mod:`.sweep`).

    Memory: the unit-square bound's tables (exact) and the live entries. Time: every
    point step costs a call overhead plus its live entries. After a fraction x of the grid,
    an entry's R so far lies in a window: at least R minus the sticks still undecided and
    at least half the unit squares passed beyond S (a removal opens at most two), at most
    R minus half the unit squares ahead beyond S. The entries are taken as at most
    ``EXACT_ENTRIES_PER_CELL[h]`` per (S value, R in the window), and never more than memory
    holds (:func:`live_entry_limit`): an upper bound, so a warning may come for a run that
    then finishes sooner.
    """
    sticks = stick_count(h, w)
    points = (h + 1) * (w + 1)
    primes = prime_count(sticks, removed, 31)
    words = _key_words(h, w, squares, removed)
    bound_bytes, bound_seconds = _bound_cost(h, w, squares)
    per_cell = EXACT_ENTRIES_PER_CELL.get(h, max(EXACT_ENTRIES_PER_CELL.values()))
    most = live_entry_limit(None, words, primes)
    total = 0.0
    for k in range(257):                     # 257 points along the sweep stand for all
        x = k / 256
        decided, passed, ahead = sticks * x, h * w * x, h * w * (1 - x)
        low = max(0.0, removed - (sticks - decided), (passed - squares) / 2)
        high = min(removed, decided, removed - (ahead - squares) / 2)
        window = max(1.0, high - low + 1)
        total += min(most, per_cell * (squares + 1) * window)
    seconds = bound_seconds + _prime_search(primes, 31) + points * (
        SWEEP_STEP_SECONDS + SWEEP_ENTRY_SECONDS * total / 257 * (words + 1 + primes))
    return Cost(f"counting the {h}×{w} grid by R = {removed} and S = {squares}",
                bound_bytes, seconds, primes)


#: Problem 2 by the centre join: live entries of the half sweeps per R value alive at the
#: centre line, the most measured per shorter side h (docs/matchsticks.md, "Estimates").
EXACT_JOIN_ENTRIES_PER_R = {6: 6e5, 7: 2e6}
#: Seconds per live entry of the half sweep and centre pattern: building the groups and
#: pairing them (measured 2.8e-7 to 3.4e-6 on 6×6 and 7×7).
EXACT_JOIN_ENTRY_SECONDS = 2e-6


def exact_join_cost(h: int, w: int, removed: int, squares: int) -> Cost:
    """Problem 2 (R and S exact) on an h×w grid by the centre join (:mod:`.exact_join`).

    The half sweeps run over about half the grid with R in the key: at the centre line an
    entry's R so far lies in the window of :func:`exact_cost` at x = 1/2, and the live
    entries are taken as ``EXACT_JOIN_ENTRIES_PER_R[h]`` per R in it (measured on the
    square h×h grid; a longer grid's parts grow as the table's, :func:`table_live`). Every centre
    pattern builds its groups from them and pairs them (``EXACT_JOIN_ENTRY_SECONDS`` per
    entry and pattern). Memory: the entries with their copies, and the bound.
    """
    sticks = stick_count(h, w)
    primes = prime_count(sticks, removed, 31)
    words = _key_words(h, w, squares, removed)
    bound_bytes, bound_seconds = _bound_cost(h, w, squares)
    half = h * w / 2
    low = max(0.0, removed - sticks / 2, (half - squares) / 2)
    high = min(removed, sticks / 2, removed - (half - squares) / 2)
    per_r = EXACT_JOIN_ENTRIES_PER_R.get(h, max(EXACT_JOIN_ENTRIES_PER_R.values()))
    widening = table_live(h, (w + 1) // 2) / table_live(h, (h + 1) // 2)
    live = per_r * max(1.0, high - low + 1) * widening
    patterns = (2 ** h + 2 ** ((h + 1) // 2)) // 2      # one of each top-bottom mirror pair
    columns = w // 2 + 1
    sweep = (h + 1) * columns * (SWEEP_STEP_SECONDS + SWEEP_ENTRY_SECONDS * live
                                 * (words + 1 + primes))
    seconds = bound_seconds + _prime_search(primes, 31) + sweep \
        + EXACT_JOIN_ENTRY_SECONDS * live * patterns
    return Cost(f"counting the {h}×{w} grid by R = {removed} and S = {squares} "
                f"({_amount(live)} live entries in its half sweeps)",
                bound_bytes + SWEEP_COPIES * entry_bytes(words, primes) * live, seconds, primes)


#: The puzzle table: most live entries of a half sweep of ``c`` point columns, measured
#: for S = 0..14 per shorter side h (docs/matchsticks.md, "Estimates"). Between two
#: measured widths the entries grow geometrically; beyond the last they stay (the state has
#: saturated), except where TABLE_SATURATION gives the level they keep growing to, by the
#: last measured step (or by TABLE_STEP where only one width was measured).
TABLE_LIVE = {
    1: {1: 2, 2: 4, 3: 11, 4: 21, 6: 36, 8: 51, 12: 81, 16: 109},
    2: {1: 5, 2: 42, 3: 130, 4: 236, 6: 449, 8: 593, 12: 856, 16: 965, 24: 970},
    3: {2: 317, 3: 1007, 5: 4022, 6: 4784, 9: 10_947, 12: 12_928, 18: 12_944},
    4: {2: 889, 3: 10_263, 4: 40_872, 6: 117_399, 8: 147_801, 12: 263_479},
    5: {3: 137_968, 5: 1_496_628, 8: 4_923_275, 10: 5_203_548, 13: 6_574_426, 15: 7_347_299},
    6: {3: 433_277, 4: 3_966_538, 5: 20_698_612},
    7: {4: 31_000_000},
}
TABLE_SATURATION = {1: 240, 6: 2.7e8, 7: 1.2e10}
TABLE_STEP = {7: 5.2}
#: Seconds per live entry of the first round's half sweep, per centre pattern and residue
#: word, for building the groups and joining them (the join).
JOIN_ENTRY_SECONDS = 3.5e-8
#: The rounds after the first: fewer S, smaller; together about half the first.
LATER_ROUNDS = 0.5


def _growth(h: int) -> tuple[int, float, float]:
    """After the last measured width: (its columns, its entries, the factor per column)."""
    measured = TABLE_LIVE[h]
    known = sorted(measured)
    last = known[-1]
    if h not in TABLE_SATURATION:
        return last, float(measured[last]), 1.0
    if h in TABLE_STEP:
        return last, float(measured[last]), TABLE_STEP[h]
    before = known[-2]
    return last, float(measured[last]), (measured[last] / measured[before]) ** (1 / (last - before))


def table_live(h: int, columns: int) -> float:
    """Most live entries of the table's half sweep over ``columns`` point columns."""
    measured = {0: 1, **TABLE_LIVE[h]}      # the sweep starts from one entry
    if columns in measured:
        return float(measured[columns])
    known = sorted(measured)
    for low, high in zip(known, known[1:]):
        if columns <= high:
            step = (measured[high] / measured[low]) ** (1 / (high - low))
            return measured[low] * step ** (columns - low)
    last, value, step = _growth(h)
    if step <= 1.0:
        return value
    top = TABLE_SATURATION[h]
    # compare logarithms: the power may be far too large to compute for a huge grid
    if math.log(top / value) <= (columns - last) * math.log(step):
        return float(top)
    return value * step ** (columns - last)


def _table_live_sum(h: int, columns: int) -> float:
    """Sum of :func:`table_live` over columns 1..``columns``, in constant time: past the
    column where the entries stop growing every term is the same."""
    last, value, step = _growth(h)
    flat = last
    if step > 1.0:
        flat += math.ceil(math.log(TABLE_SATURATION[h] / value) / math.log(step))
    counted = min(columns, flat)
    total = sum(table_live(h, c) for c in range(1, counted + 1))
    return total + (columns - counted) * table_live(h, flat)


def table_cost(h: int, w: int, wanted: list[int]) -> Cost:
    """The puzzle table of an h×w grid for the S in ``wanted`` by the centre join.

    Per round: the unit-square bound (once), the half sweep over ceil(w/2) point columns
    (its live entries per column from ``TABLE_LIVE``, scaled by the S values asked), and
    the join of each centre pattern (proportional to the live entries); later rounds add
    ``LATER_ROUNDS`` of the first. Memory: the live entries of the widest column with their
    copies, and the bound. The table's R stays near a quarter of the sticks, which sets the
    primes.
    """
    sticks = stick_count(h, w)
    columns = (w + 1) // 2
    slack = max(wanted)
    scale = (slack + 1) / 15          # the measurements asked S = 0..14
    primes = prime_count(sticks, sticks // 4, 31)
    words = _key_words(h, w, slack, None)
    per_entry = words + 1 + primes
    patterns = (2 ** h + 2 ** ((h + 1) // 2)) // 2      # one of each top-bottom mirror pair
    bound_bytes, bound_seconds = _bound_cost(h, w, slack)
    most = table_live(h, columns) * scale
    sweep = (h + 1) * (columns * SWEEP_STEP_SECONDS
                       + SWEEP_ENTRY_SECONDS * per_entry * scale * _table_live_sum(h, columns))
    join = JOIN_ENTRY_SECONDS * most * patterns * per_entry
    seconds = bound_seconds + _prime_search(primes, 31) + (1 + LATER_ROUNDS) * (sweep + join)
    memory = bound_bytes + SWEEP_COPIES * entry_bytes(words, primes) * most
    return Cost(f"the {h}×{w} puzzle table ({_amount(most)} live entries in its half sweeps)",
                memory, seconds, primes)
