"""Up-front estimates for the square-tracking methods (problems 2 and 3): the whole-grid
sweep, the centre join with R exact, and the puzzle table's half sweeps and pairing.

The shared parts (:class:`~.costs.Cost`, the number of primes and the prime search) are in
:mod:`.costs`; the constants come from ``bench/calibrate_matchsticks.py`` (values and
machine in docs/matchsticks.md, "Estimates").
"""

from __future__ import annotations

import math

import numpy as np

from ...backends import device_free_bytes
from ...estimates import available_memory, format_bytes
from .costs import Cost, amount, log2_binomial, prime_count, prime_search_seconds
from .grid import square_count, stick_count

__all__ = ["exact_cost", "exact_join_cost", "table_cost", "top_cost", "table_live",
           "few_squares_live", "entry_bytes", "memory_for_entries", "live_entry_limit",
           "sweep_copies"]


# -- the square-tracking sweep (sweep.py, halves.py) --------------------------------------

#: Seconds per point step (NumPy calls) and per live entry and key-or-count word.
SWEEP_STEP_SECONDS = 3e-4
SWEEP_ENTRY_SECONDS = 8e-8
#: Peak memory per live entry, in entries: the copies during a point step (the entries
#: before and after it, the merge's sorted copies) and, for the table, the decoded parts
#: (measured 6.3 on 5×10, 5.7 on 6×7, 3.8 on 7×7: bench/calibrate_matchsticks.py; problem
#: 2 by the centre join 6.4 on 6×6, R = 22, S = 2).
SWEEP_COPIES = 7
#: The same on the GPU path (a stable argsort per key word, cumulative sums): 5.0 measured
#: on the CuPy stand-in (7×7), to which a device adds its radix sort's scratch and the
#: memory pool's cached blocks; kept at the former figure until measured on a device.
DEVICE_SWEEP_COPIES = 10
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
                     available: float | None = None, copies: int = SWEEP_COPIES) -> int:
    """The most live entries a sweep may hold: as many as this machine's memory holds with
    their ``copies`` during a point step, and at most ``max_entries`` if given.

    >>> live_entry_limit(None, 2, 3, available=2**30) == 2**30 // (SWEEP_COPIES * 48)
    True
    """
    if available is None:
        available = available_memory()
    limit = max_entries if max_entries is not None else 1 << 62
    if available is not None:
        limit = min(limit, int(available // (copies * entry_bytes(words, primes))))
    return max(1, limit)


def sweep_copies(xp) -> int:
    """Peak memory of a sweep on array module ``xp``, in live entries' bytes."""
    return SWEEP_COPIES if xp is np else DEVICE_SWEEP_COPIES


def memory_for_entries(xp) -> float | None:
    """Bytes a sweep on array module ``xp`` may fill: this machine's available memory for
    NumPy (None: unknown), the current device's free memory for CuPy."""
    return available_memory() if xp is np else device_free_bytes(xp)


def entry_bytes(words: int, primes: int) -> int:
    """Bytes of one live entry of a sweep: its key words, its R and its residues."""
    return 8 * (words + 1 + primes)


#: Problem 2: live entries per (state kind, S value, R value alive), the most measured per
#: shorter side h (docs/matchsticks.md, "Estimates"); an upper bound for the time.
EXACT_ENTRIES_PER_CELL = {1: 8, 2: 64, 3: 1200, 4: 40_000, 5: 150_000}


def configurations(decided: float, low: float, high: float) -> float:
    """At most how many ways to remove between ``low`` and ``high`` of ``decided`` sticks:
    a bound on a sweep's live entries with R so far in that window, as each entry stands
    for at least one such way ((high - low + 1) times the largest binomial in the window).

    >>> [round(configurations(*args)) for args in [(162, 0, 1), (162, 161, 162), (10, 0, 10)]]
    [324, 324, 2772]
    """
    d = int(decided)
    low, high = max(0, math.floor(low)), min(d, math.ceil(high))   # the windows are estimates
    if high < low:
        return 1.0
    middle = min(max(d // 2, low), high)       # the largest binomial in the window
    bits = log2_binomial(d, middle)
    return math.inf if bits > 1000 else (high - low + 1) * 2.0 ** bits


def exact_cost(h: int, w: int, removed: int, squares: int, *, entries: bool = True) -> Cost:
    """Problem 2 (R and S exact) on an h×w grid by the whole-grid sweep (:mod:`.sweep`).

    Memory: the unit-square bound's tables (exact) and the live entries. Time: every
    point step costs a call overhead plus its live entries. After a fraction x of the grid,
    an entry's R so far lies in a window: at least R minus the sticks still undecided and
    at least half the unit squares passed beyond S (a removal opens at most two), at most
    R minus half the unit squares ahead beyond S. The entries are taken as at most
    ``EXACT_ENTRIES_PER_CELL[h]`` per (S value, R in the window), and never more than memory
    holds (:func:`live_entry_limit`): an upper bound, so a warning may come for a run that
    then finishes sooner. ``entries=False``: without the live entries' time (the bound's
    tables, the prime search and the point steps' overhead: what the run takes whatever
    its entries).
    """
    sticks = stick_count(h, w)
    points = (h + 1) * (w + 1)
    primes = int(log2_binomial(sticks, removed) // 30.99) + 1   # C(E, R): see sweep.sweep
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
        if entries:
            total += min(most, per_cell * (squares + 1) * window,
                         configurations(decided, low, high))
    seconds = bound_seconds + prime_search_seconds(primes, 31) + points * (
        SWEEP_STEP_SECONDS + SWEEP_ENTRY_SECONDS * total / 257 * (words + 1 + primes))
    return Cost(f"counting the {h}×{w} grid by R = {removed} and S = {squares}",
                bound_bytes, seconds, primes)


#: Problem 2 by the centre join: live entries of the half sweeps per R value alive at the
#: centre line, the most measured per shorter side h (docs/matchsticks.md, "Estimates").
EXACT_JOIN_ENTRIES_PER_R = {6: 6e5, 7: 2e6}
#: Seconds per live entry of the half sweep and centre pattern: building the groups and
#: pairing them (measured 2.8e-7 to 3.4e-6 on 6×6 and 7×7).
EXACT_JOIN_ENTRY_SECONDS = 2e-6


def _half_sticks(h: int, w: int) -> int:
    """The sticks that the larger half sweep decides: those of its w//2 + 1 point columns
    (the verticals on them and the horizontals between them) and the horizontals leaving the
    last of them (a bound, whichever side the centre sticks are counted on)."""
    columns = w // 2 + 1
    return columns * h + columns * (h + 1)


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
    # and never more than the ways to remove R so far from the sticks of the larger half
    # (R = 1..3 on 6×12: hundreds of entries, where the growth gave 10^8)
    live = min(per_r * max(1.0, high - low + 1) * widening,
               configurations(_half_sticks(h, w), low, high))
    patterns = (2 ** h + 2 ** ((h + 1) // 2)) // 2      # one of each top-bottom mirror pair
    columns = w // 2 + 1
    sweep = (h + 1) * columns * (SWEEP_STEP_SECONDS + SWEEP_ENTRY_SECONDS * live
                                 * (words + 1 + primes))
    seconds = bound_seconds + prime_search_seconds(primes, 31) + sweep \
        + EXACT_JOIN_ENTRY_SECONDS * live * patterns
    entries = SWEEP_COPIES * entry_bytes(words, primes) * live
    return Cost(f"counting the {h}×{w} grid by R = {removed} and S = {squares} "
                f"({_what_holds(live, entries, bound_bytes, w)})",
                bound_bytes + entries, seconds, primes)


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
JOIN_ENTRY_SECONDS = 2.2e-8
#: Seconds per live entry of the table's half sweep, and more per word, at each point of
#: a column with that column's most live entries (problem 2's ``SWEEP_ENTRY_SECONDS``
#: counts each point's own entries): 3.6-5.8·10^-8 per word measured with 7-9 words (5×10,
#: 6×6, 6×8); a word costs far less than an entry, so long grids, whose counts need
#: hundreds of primes, were estimated up to 4 times too long (the default tables of 4×100,
#: 4×200 and 4×400, 28-100 words: 22.6, 100 and 416 s on one core, 2026-12-02).
TABLE_SWEEP_ENTRY_SECONDS = 3e-7
TABLE_SWEEP_WORD_SECONDS = 6e-9
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
    ``LATER_ROUNDS`` of the first. The S of at least the h·w unit squares have no
    removal bound, and their rounds climb R from 0: the estimate takes the round at the
    fewest R that can lose enough squares (:func:`table_round_live`), a lower bound (7×7,
    S = 80: that round has R <= 4, the row needs 5). Memory: the live entries of the widest
    column with their copies, and the bound. The table's R stays near a quarter of the
    sticks, which sets the primes.

    >>> table_cost(7, 7, [100]).memory < 2**30 < table_cost(7, 7, range(15)).memory
    True
    """
    sticks = stick_count(h, w)
    columns = (w + 1) // 2
    slack = max(wanted)
    primes = prime_count(sticks, sticks // 4, 31)
    words = _key_words(h, w, slack, None)
    per_entry = words + 1 + primes
    patterns = (2 ** h + 2 ** ((h + 1) // 2)) // 2      # one of each top-bottom mirror pair
    bound_bytes, bound_seconds = _bound_cost(h, w, slack)
    most, sweep = 0.0, columns * SWEEP_STEP_SECONDS
    first = 0.0
    for live, live_sum, at_bound in table_round_live(h, w, wanted):
        most, first = max(most, live), max(first, at_bound)
        sweep += (TABLE_SWEEP_ENTRY_SECONDS + TABLE_SWEEP_WORD_SECONDS * per_entry) * live_sum
    sweep *= h + 1
    join = JOIN_ENTRY_SECONDS * most * patterns * per_entry
    seconds = bound_seconds + prime_search_seconds(primes, 31) + (1 + LATER_ROUNDS) * (sweep + join)
    entries = SWEEP_COPIES * entry_bytes(words, primes) * most
    least = SWEEP_COPIES * entry_bytes(words, primes) * first
    above = (f", up to {amount(most)} if its fewest R lies above the unit-square bound"
             if first < most else "")
    return Cost(f"the {h}×{w} puzzle table ({_what_holds(first, least, bound_bytes, w, above)})",
                bound_bytes + entries, seconds, primes, least_memory=bound_bytes + least)


def _what_holds(live: float, entries: float, bound: float, w: int, more: str = "") -> str:
    """The words for a join's memory: its half sweeps' live entries, and its unit-square
    bound's tables where those weigh more (they grow with the grid's length: 7×10^9 with
    one live entry needs terabytes for them alone)."""
    said = f"{amount(live)} live entr{'y' if live == 1 else 'ies'} in its half sweeps{more}"
    if bound > entries:
        said += (f"; its unit-square bound's tables, over the {w:,} columns of points, "
                 f"{format_bytes(bound)} alone")
    return said


def table_round_live(h: int, w: int, wanted: list[int]) -> list[tuple[float, float, float]]:
    """The table's rounds that the estimate foresees: ``(most live entries, their sum over
    the point columns, the most in a round at the unit-square bound)`` of the half sweeps
    (the last: what the table needs at the least, where the estimate foresees a round
    above the bound; with several S the first level may lie one above the largest S's
    bound, and a round holds what that S alone holds at its level). For the S below h·w,
    the first round
    (``TABLE_LIVE``, measured for S = 0..14, times (largest S + 1) / 15 above 14; for a
    small largest S at most ``ONE_ABOVE_LIVE``, and ``AT_BOUND_LIVE`` in the round at the
    bound: :func:`few_squares_live`). For the S of at
    least h·w, whose rounds cap R at 0, 1, 2, ...: the round at the fewest R that can lose
    enough squares for the least of them (:func:`least_removals`), where each live entry
    stands for at least one way to remove up to that many sticks of the larger half (7×7,
    S = 100: 1, 57, 1476, 23313 live entries at caps 0 to 3, its fewest R; the ways to
    remove up to 3 of its 60 sticks: 36,051).

    >>> table_round_live(7, 7, [100])
    [(36051, 144204, 36051)]
    >>> [round(most) for most, _, _ in table_round_live(6, 6, [40])]  # 41/15 × S = 0..14's
    [1184290]
    """
    columns = (w + 1) // 2

    def model(group: list[int]) -> tuple[float, float, float]:
        # the measurements asked S = 0..14: their entries hold for a largest S up to 14, and
        # scale with it beyond; a small largest S keeps far fewer (few_squares_live)
        scale = max(1.0, (max(group) + 1) / 15)
        most, total = table_live(h, columns) * scale, _table_live_sum(h, columns) * scale
        at_bound = few_squares_live(AT_BOUND_LIVE, h, max(group))
        one_above = few_squares_live(ONE_ABOVE_LIVE, h, max(group))
        if len(group) > 1:  # the first level may be one above the largest S's bound
            at_bound = one_above
        first = most if at_bound is None else min(most, at_bound)
        if one_above is not None:
            # past about h point columns the entries stay at their most near the centre
            # line only: each further column adds about half as much to the sweep's work
            spread = min(columns, h) + LONG_COLUMN_SHARE * max(0, columns - h)
            most, total = min(most, one_above), min(total, one_above * spread)
        return most, total, first

    below = [q for q in wanted if q < h * w]
    above = [q for q in wanted if q >= h * w]
    rounds = [model(below)] if below else []
    if above:
        cap = least_removals(h, w, square_count(h, w) - min(above))
        half = _half_sticks(h, w)
        ways = sum(math.comb(half, k) for k in range(min(cap, half) + 1))
        # and at most as many as the measured model gives (6×6, S = 40: 2.9·10^6 ways to
        # remove up to 5 sticks, 1.2·10^6 by the model, 1.7·10^5 live entries)
        most, total, _ = model(above)
        rounds.append((min(ways, most), min(ways * columns, total), min(ways, most)))
    return rounds


#: Most live entries of the table's half sweeps for a small largest S (the rows of
#: ``matchstick_table(m, n, [S])``), by shorter side and S, the most at any width
#: measured (bench/calibrate_matchsticks.py --few-squares; one core, 2026-12-02): in the
#: first round, at the unit-square bound (level S + 2L(S) + 1), and in a round one above
#: it (S + 2L(S) + 2), which holds 10-100 times more. They stop growing with the width by
#: about h point columns, far below S = 0..14's ``TABLE_LIVE`` (7×20, S = 1: 1.1·10^6 one
#: above the bound, where S = 0..14 would grow past 10^10). Rounds further above are not
#: foreseen: on long grids the fewest R of a small S lies up to three above the bound
#: (S = 0: 5×12 two, 6×100 three), each round 10-100 times the one before (6×100, S = 0:
#: 80, 4892, 2.6·10^5 and 3.1·10^6 live entries, 110 s for the last).
AT_BOUND_LIVE = {
    5: {0: 215, 1: 1_628, 3: 25_830, 5: 133_425, 7: 361_887},
    6: {0: 80, 1: 4_291, 3: 110_044, 5: 1_033_015, 7: 4_605_775, 14: 2_805_411},
    7: {0: 1_049, 1: 10_355, 3: 319_873, 7: 38_224_610},  # S = 7: 7×16, still growing
}
ONE_ABOVE_LIVE = {
    5: {0: 4_810, 1: 73_323, 3: 682_592, 5: 2_678_207, 7: 5_665_479},
    6: {0: 4_892, 1: 364_206, 3: 6_317_261},
    7: {0: 89_470, 1: 1_144_486},
}
#: The share of a column's most live entries that each point column past the h-th adds
#: to the sweep's work (0.25-0.7 measured on 5×10 to 5×30, 6×12 to 6×30, 7×12 to 7×20).
LONG_COLUMN_SHARE = 0.5


def few_squares_live(measured: dict[int, dict[int, int]], h: int, largest: int) -> float | None:
    """The most live entries of the table's half sweeps for a largest S of ``largest``,
    from ``AT_BOUND_LIVE`` or ``ONE_ABOVE_LIVE`` (geometric between the S measured); None
    beyond the S measured for that shorter side, or for a shorter side not measured.

    >>> [few_squares_live(ONE_ABOVE_LIVE, 7, s) for s in (1, 3)]
    [1144486.0, None]
    >>> few_squares_live(AT_BOUND_LIVE, 4, 0) is None          # h = 4: S = 0..14's model
    True
    >>> round(few_squares_live(ONE_ABOVE_LIVE, 5, 2))       # between 73,323 and 682,592
    223718
    """
    row = measured.get(h, {})
    if largest in row:
        return float(row[largest])
    known = sorted(row)
    for low, high in zip(known, known[1:]):
        if low < largest < high:
            return row[low] * (row[high] / row[low]) ** ((largest - low) / (high - low))
    return None


def least_removals(h: int, w: int, lost: int) -> int:
    """At least how many sticks an h×w grid loses to lose ``lost`` of its squares: a stick
    is a side of at most k squares (16 on 7×7, at its centre), so ceil(lost / k).

    >>> [least_removals(7, 7, lost) for lost in (40, 60, 80)]    # fewest R 3, 5 and above 6
    [3, 4, 5]
    """
    def sides_through(i: int, j: int, rows: int, cols: int) -> int:
        # squares with a side on the stick that starts at point (i, j) of a rows × cols
        # grid and runs along a line of ``cols`` unit lengths: a side on the line at i
        # (above or below), covering the stick's unit j
        return sum(((i + u <= rows) + (i - u >= 0))
                   * max(0, min(j, cols - u) - max(0, j - u + 1) + 1)
                   for u in range(1, min(rows, cols) + 1))

    # a stick's count depends on its distance to the ends, capped at the square's size:
    # the sticks within h of an end and one in the middle hold every value
    units = sorted({*range(min(w, h + 1)), w // 2})          # along the long side
    lines = sorted({*range(min(w + 1, h + 1)), w // 2})      # across it
    most = max([sides_through(i, j, h, w) for i in range(h + 1) for j in units]
               + [sides_through(j, i, w, h) for j in lines for i in range(h)])
    return -(-lost // most) if lost > 0 else 0


# -- the top sweep of the table (top_rows.py) ----------------------------------------------

#: Its most live entries with ``TOP_LOST`` squares lost, per shorter side: the most at any
#: width measured (one core, 2026-11-25). Up to h = 4 they stop growing with the width (1×30
#: 317, 1×100 331; 2×20 and 2×50 2594; 3×8, 3×12 and 3×30 34,113; 4×8 to 4×30 476,878) and
#: with the squares lost (4×4: 9.0·10^4 at 20, 1.5·10^5 at 30); from 5 on the square grid
#: has the most (5×5 2.4·10^6, 5×6 1.3·10^6, 5×7 6.1·10^5; 6×6 1.3·10^6, 6×7 5.2·10^5;
#: 7×7 4.4·10^5, 7×8 2.0·10^5), and they grow ``TOP_GROWTH``-fold per square lost.
TOP_LIVE = {1: 340, 2: 2_600, 3: 34_200, 4: 480_000, 5: 2.4e6, 6: 1.3e6, 7: 4.4e5}
#: From a longer side of h + 2 on, far fewer, and the same at every width (one core,
#: 2026-12-02): the most measured, at h + 2 (5×7 609,808, then 525,851 on 5×10 to 5×200;
#: 6×8 254,785, then 232,513 on 6×12 to 6×50; 7×9 106,813, then 93,243 on 7×14 to 7×50).
TOP_LIVE_LONG = {5: 609_808, 6: 254_785, 7: 106_813}
TOP_LOST = 30
TOP_GROWTH = 1.35
TOP_GROWTH_FROM_SIDE = 5
#: Seconds per point step, and per live entry (at their most) and point: 0.8–1.7·10^-7
#: measured on 1×100, 2×50, 3×30, 4×4, 4×12, 4×30, 5×5 to 5×7, 6×7 and 7×8.
TOP_STEP_SECONDS = 1e-3
TOP_ENTRY_SECONDS = 1.5e-7
#: And per word of an entry: long grids need many primes (5×10 to 5×200, 3 to 77 words:
#: 4.5·10^-8 to 1.0·10^-7 per entry and point, 2026-12-02).
TOP_WORD_SECONDS = 1e-9


def top_cost(h: int, w: int, lost: int) -> Cost:
    """The table's top sweep (:mod:`.top_rows`) for the S that lose at most ``lost`` of the
    grid's squares: an upper estimate from the grid of that shorter side with the most
    entries measured (the square grid up to a longer side of h + 1, ``TOP_LIVE_LONG`` on).

    >>> round(top_cost(5, 5, 30).seconds), round(top_cost(5, 5, 20).seconds, 1)  # 7.6, 0.2 s
    (13, 0.7)
    >>> round(top_cost(5, 100, 30).seconds), round(top_cost(5, 100, 30).memory / 2**30, 1)  # 19 s
    (70, 1.2)
    >>> round(top_cost(4, 4, 30).seconds, 1), round(top_cost(3, 30, 30).seconds, 1)  # 0.3, 0.8 s
    (1.9, 0.8)
    """
    sticks = stick_count(h, w)
    side = min(h, max(TOP_LIVE))
    most = TOP_LIVE_LONG[side] if side in TOP_LIVE_LONG and w >= h + 2 else TOP_LIVE[side]
    if h >= TOP_GROWTH_FROM_SIDE:
        most *= TOP_GROWTH ** (lost - TOP_LOST)
    # at a point its kept entries' squares so far lie within ``lost`` of the most that can
    # have closed there, so a key's other fields bound them too (thin grids: a few hundred)
    other_bits = h + 1 + max(1, h.bit_length()) + sum(
        min(u, w - u + 1) for u in range(1, h + 1) for _ in range(h - u + 1))
    most = min(most, 2.0 ** other_bits * (lost + 1))
    primes = prime_count(sticks, None, 31)
    words = _key_words(h, w, square_count(h, w), None)
    points = (h + 1) * (w + 1)
    return Cost(f"the {h}×{w} puzzle table's rows with at most {lost} squares lost",
                SWEEP_COPIES * entry_bytes(words, primes) * most,
                points * (TOP_STEP_SECONDS + (TOP_ENTRY_SECONDS + TOP_WORD_SECONDS
                                              * (words + 1 + primes)) * most), primes)
