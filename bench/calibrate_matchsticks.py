"""Measure the constants of the matchstick cost models.

The models are gpuqueens/problems/matchsticks/costs.py and square_costs.py.

    python bench/calibrate_matchsticks.py            # prints each constant and what it came from

Each rate is the best of a few runs (the machine may be shared); memory is the peak
resident size of a fresh process. Copy the printed values into costs.py or square_costs.py
and the table of docs/matchsticks.md ("Estimates"), with the machine and the date.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc

from gpuqueens.problems.matchsticks import costs, square_costs
from gpuqueens.problems.matchsticks import column_powers
from gpuqueens.problems.matchsticks.bounds import UnitSquareBound
from gpuqueens.problems.matchsticks.grid import stick_count
from gpuqueens.problems.matchsticks.modular import crt, primes_below, primes_for_bound
from gpuqueens.problems.matchsticks.pairing import (JoinStats, centre_patterns, join_centre,
                                                    prepare_round)
from gpuqueens.problems.matchsticks.sweep import SweepStats, count_exact
from gpuqueens.problems.matchsticks.transfer import count_by_removed, residues_by_removed


def best(run, repeat=3):
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        run()
        times.append(time.perf_counter() - begin)
    return min(times)


def transfer():
    step_run = best(lambda: count_by_removed(1, 20_000, 1))
    step = step_run / (2 * 20_001)                       # one prime, tiny arrays
    print(f"TRANSFER_STEP_SECONDS = {step:.3g}   # 1×20000, R <= 1: {step_run:.2f} s")
    for m in (10, 11):
        sticks = stick_count(m, m)
        primes = costs.prime_count(sticks, None, 62)
        points = (m + 1) ** 2
        seconds = best(lambda: count_by_removed(m, m), repeat=2 if m > 10 else 3)
        elements = (1 << (m + 2)) * costs._mean_live(sticks + 1, sticks)
        rate = (seconds / (primes * points) - step) / elements
        print(f"TRANSFER_ELEMENT_SECONDS = {rate:.3g}   # {m}×{m}, every R: {seconds:.2f} s, "
              f"{primes} primes")
    tracemalloc.start()
    residues_by_removed(8, 8, 145, primes_below(1 << 62, 1)[0])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"TRANSFER_ARRAYS = {peak / (8 * (1 << 10) * 145):.2f}   # 8×8 traced peak {peak:,} B")
    primes = primes_below(1 << 62, 40)
    values = [[(k * 7919 + i) % p for p in primes] for k in range(2000) for i in (0,)]
    seconds = best(lambda: [crt(v, primes) for v in values])
    print(f"CRT_SECONDS = {seconds / (2000 * 40 * 40):.3g}   # 2000 counts, 40 primes: "
          f"{seconds:.2f} s")


def powers():
    small = best(lambda: column_powers.count_by_column_powers(1, 10**5, 20))
    products = 2 * 17 * 21 * 22 / 2                     # 4 frontiers: the fixed cost
    print(f"POWER_PRODUCT_SECONDS = {small / products:.3g}   # 1×10^5, R <= 20: {small:.3f} s")
    large = best(lambda: column_powers.count_by_column_powers(4, 1000, 5))
    products = 2 * 10 * 6 * 7 / 2                        # 32 frontiers: the multiply-adds
    rate = (large / products - small / (2 * 17 * 21 * 22 / 2)) / 32**3
    print(f"POWER_OP_SECONDS = {rate:.3g}   # 4×1000, R <= 5: {large:.3f} s")


def prime_search():
    for limit, bits in ((1 << 62, 62), (1 << 31, 31)):
        begin = time.perf_counter()
        found = primes_for_bound(2 ** 20_000, limit)
        seconds = time.perf_counter() - begin
        print(f"PRIME_SEARCH_SECONDS[{bits}] = {seconds / len(found) ** 2:.3g}   # "
              f"{len(found)} primes for 20000 bits: {seconds:.2f} s")


def sweep():
    h, w = 1, 2000
    stats = SweepStats()
    seconds = best(lambda: count_exact(h, w, removed=stick_count(h, w), squares=0, stats=stats))
    step = seconds / ((h + 1) * (w + 1))
    print(f"SWEEP_STEP_SECONDS = {step:.3g}   # 1×2000, every stick removed: {seconds:.2f} s")
    for h, w, r, s in [(4, 5, 16, 4), (3, 12, 29, 12)]:
        stats = SweepStats()
        seconds = best(lambda: count_exact(h, w, removed=r, squares=s, stats=stats), repeat=2)
        runs = 2
        words = square_costs._key_words(h, w, s, r)
        primes = costs.prime_count(stick_count(h, w), r, 31)
        work = stats.entries / runs * (words + 1 + primes)
        rate = (seconds - stats.steps / runs * step) / work
        print(f"SWEEP_ENTRY_SECONDS = {rate:.3g}   # {h}×{w} R={r} S={s}: {seconds:.2f} s, "
              f"{stats.entries // runs:,} entries over the points, most {stats.max_states:,}")
    bound = best(lambda: UnitSquareBound(6, 6, 14))
    values = (7 * 7 + 1) * 4 ** 7 * 15 * 4
    print(f"BOUND_VALUE_SECONDS = {bound / values:.3g}   # 6×6, S <= 14: {bound:.2f} s")


def join():
    for h, w in [(5, 10), (6, 6), (6, 8)]:
        wanted = list(range(15))
        start = UnitSquareBound(h, w, 14).before_start()
        level = max(q + 2 * int(start[q]) for q in wanted) + 1
        caps = {q: min(stick_count(h, w), (level - q) // 2) for q in wanted}
        rnd = prepare_round(h, w, caps, level, slack=14)
        stats = JoinStats()
        stats.add_round(rnd)
        for c in centre_patterns(h):
            join_centre(rnd, c, stats)
        words = square_costs._key_words(h, w, 14, None)
        per_entry = words + 1 + len(rnd.primes)
        rate = stats.join_seconds / (stats.max_live * len(centre_patterns(h)) * per_entry)
        columns = (w + 1) // 2
        sweep_rate = stats.sweep_seconds / ((h + 1) * square_costs._table_live_sum(h, columns)) \
            - square_costs.TABLE_SWEEP_WORD_SECONDS * per_entry
        print(f"TABLE_SWEEP_ENTRY_SECONDS = {sweep_rate:.3g}   # {h}×{w} round 1: half sweeps "
              f"{stats.sweep_seconds:.2f} s over {columns} point columns, {per_entry} words")
        print(f"JOIN_ENTRY_SECONDS = {rate:.3g}   # {h}×{w} round 1: join "
              f"{stats.join_seconds:.2f} s, most live {stats.max_live:,}, half sweeps "
              f"{stats.sweep_seconds:.2f} s, {stats.groups:,} groups, {stats.pairs:.2g} pairs, "
              f"{stats.hits:,} hits")


_PEAK = """
import json, sys
from gpuqueens.problems.matchsticks.pairing import prepare_round
from gpuqueens.problems.matchsticks import column_powers
from gpuqueens.problems.matchsticks.bounds import UnitSquareBound
from gpuqueens.problems.matchsticks.grid import stick_count

def high_water():  # this process's peak resident size (Linux)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

h, w = int(sys.argv[1]), int(sys.argv[2])
base = high_water()
start = UnitSquareBound(h, w, 14).before_start()
level = max(q + 2 * int(start[q]) for q in range(15)) + 1
caps = {q: min(stick_count(h, w), (level - q) // 2) for q in range(15)}
rnd = prepare_round(h, w, caps, level, slack=14)
print(json.dumps([base, high_water(), rnd.sweep.max_states, len(rnd.primes)]))
"""


def memory():
    for h, w in [(5, 10), (6, 7)]:
        out = subprocess.run([sys.executable, "-c", _PEAK, str(h), str(w)], check=True,
                             capture_output=True, text=True).stdout
        base, peak, live, primes = json.loads(out)
        per_entry = square_costs.entry_bytes(square_costs._key_words(h, w, 14, None), primes)
        print(f"SWEEP_COPIES = {(peak - base) / (live * per_entry):.1f}   # {h}×{w} round 1: "
              f"peak {peak / 2**30:.2f} GiB, {live:,} live entries of {per_entry} B")


#: The grids whose half sweeps set AT_BOUND_LIVE and ONE_ABOVE_LIVE, the most at any width
#: measured (5×5 to 5×64, 6×6 to 6×30, 7×7 to 7×20): the widths past which the entries
#: stop growing, and for S = 0 the odd widths 5×5 and 7×7, which hold more than the longer
#: grids; with the S taken from each.
FEW_SQUARES_GRIDS = [(5, 5, [0]), (5, 14, [1, 3, 5, 7]), (6, 12, [0, 1, 3, 5]), (6, 20, [7, 14]),
                     (7, 7, [0]), (7, 12, [1, 3]), (7, 16, [7])]


def few_squares(grids=FEW_SQUARES_GRIDS, above_limit: int = 2 * 10**7):
    """The table's half sweeps for one small S, at the unit-square bound and one above (a
    round past ``above_limit`` live entries is stopped and shown as such)."""
    from gpuqueens.problems.matchsticks.sweep import TooManyEntries
    from gpuqueens.problems.matchsticks.table import first_round

    for h, w, squares in grids:
        for s in squares:
            caps, level = first_round(h, w, [s])
            begin = time.perf_counter()
            at_bound = prepare_round(h, w, caps, level, slack=s).sweep.max_states
            middle = time.perf_counter()
            try:
                rnd = prepare_round(h, w, {s: caps[s] + 1}, level + 1, above_limit, s)
                above = f"{rnd.sweep.max_states:,}"
            except TooManyEntries:
                above = f"past {above_limit:,}"
            print(f"{h}×{w}, S = {s}: AT_BOUND_LIVE {at_bound:,} ({middle - begin:.1f} s), "
                  f"ONE_ABOVE_LIVE {above} ({time.perf_counter() - middle:.1f} s)", flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """``--few-squares``: only the half sweeps of a small S (minutes); else every constant.
    The parser gives ``--help`` and refuses stray arguments before minutes of measuring
    start."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="Prints each constant and what it came from, to copy into the cost models.")
    parser.add_argument("--few-squares", action="store_true",
                        help="only the table's half sweeps for one small S "
                             "(AT_BOUND_LIVE, ONE_ABOVE_LIVE)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print("# load", open("/proc/loadavg").read().split()[:3], time.strftime("%Y-%m-%d"))
    if args.few_squares:
        few_squares()
        return 0
    memory()
    transfer()
    powers()
    prime_search()
    sweep()
    join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
