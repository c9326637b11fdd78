"""Every row of a puzzle table checked through problem 2, on the CPU.

    python bench/cpu_matchstick_rows.py 7x7            # the table, then 30 counts: ~15 minutes
    python bench/cpu_matchstick_rows.py 6x6 --squares 0-4

computes the table (``matchstick_table(m, n, squares, backend="cpu")``), then for each row
(S, fewest R, ways) counts problem 2, ``matchsticks(m, n, removed=R, squares=S,
backend="cpu")``, at R (it must give the ways) and at R - 1 (it must give 0), with the
calls' defaults (worker processes for 7×7). Problem 2 keeps every R in its join where the
table keeps the fewest per group (and sweeps its halves with R in the key), so the two
check each other. Prints one line per row with the time of its two counts; exits with 1
at the first row that disagrees.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import gpuqueens  # noqa: E402
from bench.grid_args import parse_grid  # noqa: E402
from gpuqueens.problems.matchsticks.cli import parse_squares  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("grid", type=parse_grid, help="MxN, e.g. 7x7")
    parser.add_argument("--squares", type=parse_squares, default=None, metavar="0-14",
                        help="the table's S values (default 0-14, as far as the grid has squares)")
    args = parser.parse_args(argv)
    m, n = args.grid
    squares = None if args.squares is None else [s for part in args.squares for s in part]
    begin = time.perf_counter()
    table = gpuqueens.matchstick_table(m, n, squares, backend="cpu", progress=False)
    print(f"{m}×{n} table: {time.perf_counter() - begin:.1f} s", flush=True)
    total = time.perf_counter()
    for s, fewest, ways in table:
        if fewest is None:
            print(f"S={s:<3d} no configuration", flush=True)
            continue
        begin = time.perf_counter()
        at = gpuqueens.matchsticks(m, n, removed=fewest, squares=s, backend="cpu", progress=False)
        below = 0 if fewest == 0 else gpuqueens.matchsticks(m, n, removed=fewest - 1, squares=s,
                                                            backend="cpu", progress=False)
        seconds = time.perf_counter() - begin
        ok = at == ways and below == 0
        print(f"S={s:<3d} R={fewest:<3d} ways {ways}: problem 2 gives {at} at R, {below} at R-1 "
              f"({seconds:.1f} s){'' if ok else '  DIFFERENT'}", flush=True)
        if not ok:
            return 1
    print(f"all rows agree: {time.perf_counter() - total:.1f} s of problem-2 counts", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
