"""Device benchmark of the puzzle table on the GPU: half sweeps and pairing on the device.

On a machine with an NVIDIA GPU (CUDA 12 or 13 driver), from a checkout of gpuqueens:

    python -m venv .venv && . .venv/bin/activate
    pip install -e ".[cuda12]"          # or ".[cuda13]", matching the driver
    python bench/gpu_matchstick_table.py --json gpu_table.json

runs the tables (S = 0..14) of the squares 5×5, 6×6 and 7×7 (``--grids 5-7``; any MxN
too) with ``backend="gpu"`` in this process (``workers=1``), and prints one JSON line per
grid and a table at the end:

first s
    the first table in this process (includes compiling the pairing kernel with NVRTC and
    CuPy's own kernels; CuPy caches them on disk).
warm s
    median of ``--repeats`` further tables.
sweeps s, join s
    of the last table: the half sweeps with their decoding into parts (on the device), and
    the pairing of every centre pattern (groups and kernel), summed over the rounds.
peak GB
    device memory held by CuPy's pool after the last table (its blocks stay allocated).
cpu s
    the same table with ``backend="cpu"`` in this process, for grids up to a shorter side
    of ``--cpu-max`` (default 6; 7×7 takes about three minutes on 2 cores).
check
    ``cpu`` where the CPU table ran (the rows must be equal), and for every grid
    ``sweep``: the rows for the S in ``--sweep-squares`` (default 0, 1, 2, 4: a few
    seconds each on 7×7) recomputed by the whole-grid square-tracking sweep on the CPU, an
    independent method; ``exact``: for the S in ``--exact-squares`` (default all), problem
    2 on the GPU (``matchsticks(m, n, removed=R, squares=S, backend="gpu")`` at the row's
    fewest R, another join) equals the row's ways. A failed check stops the script.
exact s
    the problem-2 counts of that check, summed (first calls included).

Before spending GPU time, dry-run it on the CuPy stand-in (nvcc needed; times mean
nothing): ``python tests/fake_gpu_run.py bench/gpu_matchstick_table.py --grids 4 --repeats 1``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.grid_args import parse_grids  # noqa: E402
from bench.gpu_required import require_cupy  # noqa: E402
from gpuqueens.problems.matchsticks.api import matchsticks  # noqa: E402
from gpuqueens.problems.matchsticks.grid import square_count  # noqa: E402
from gpuqueens.problems.matchsticks.pairing import JoinStats  # noqa: E402
from gpuqueens.problems.matchsticks.sweep import table_rows_by_sweep  # noqa: E402
from gpuqueens.problems.matchsticks.table import MAX_JOIN_SHORT_SIDE, table_rows  # noqa: E402


def timed_table(m: int, n: int, squares: list[int], backend: str) -> tuple[float, list, JoinStats]:
    stats = JoinStats()
    begin = time.perf_counter()
    rows = table_rows(m, n, squares, stats=stats, backend=backend)
    return time.perf_counter() - begin, rows, stats


def run_grid(m: int, n: int, args) -> dict:
    import cupy

    squares = list(range(min(14, square_count(m, n)) + 1))
    first, rows, _ = timed_table(m, n, squares, "gpu")
    warm, stats = [], None
    for _ in range(args.repeats):
        seconds, again, stats = timed_table(m, n, squares, "gpu")
        if again != rows:
            raise SystemExit(f"{m}×{n}: two GPU runs gave different tables")
        warm.append(seconds)
    pool = getattr(cupy, "get_default_memory_pool", None)  # (the CuPy stand-in has none)
    held = pool().total_bytes() / 1e9 if pool is not None else 0.0
    row = {"grid": f"{m}x{n}", "first_s": round(first, 3),
           "warm_s": round(statistics.median(warm), 3) if warm else None,
           "sweeps_s": round(stats.sweep_seconds, 3) if stats else None,
           "join_s": round(stats.join_seconds, 3) if stats else None,
           "peak_gb": round(held, 2), "checks": [],
           "rows": [list(r) for r in rows]}
    if min(m, n) <= args.cpu_max:
        seconds, on_cpu, _ = timed_table(m, n, squares, "cpu")
        if on_cpu != rows:
            raise SystemExit(f"{m}×{n}: the GPU table differs from the CPU table")
        row["cpu_s"] = round(seconds, 3)
        row["checks"].append("cpu")
    asked = [q for q in args.sweep_squares if q in squares]
    if asked:
        by_sweep = table_rows_by_sweep(m, n, asked)
        if by_sweep != [r for r in rows if r[0] in asked]:
            raise SystemExit(f"{m}×{n}: the GPU table differs from the whole-grid sweep "
                             f"for S in {asked}")
        row["checks"].append("sweep")
    exact = [r for r in rows if (args.exact_squares is None or r[0] in args.exact_squares)
             and r[1] is not None]  # (S, None, 0): no configuration has S squares
    if exact:
        begin = time.perf_counter()
        for q, fewest, ways in exact:
            if matchsticks(m, n, removed=fewest, squares=q, backend="gpu") != ways:
                raise SystemExit(f"{m}×{n}: problem 2 at S={q}, R={fewest} differs from the "
                                 f"table's {ways} ways")
        row["exact_s"] = round(time.perf_counter() - begin, 3)
        row["checks"].append("exact")
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grids", type=parse_grids, default="5-7", help="e.g. 5-7 or 4x9,6x7")
    parser.add_argument("--repeats", type=int, default=2, help="warm runs after the first")
    parser.add_argument("--cpu-max", type=int, default=6, help="CPU table up to this short side")
    parser.add_argument("--sweep-squares", default="0,1,2,4",
                        help="S rows checked by the whole-grid sweep ('' for none)")
    parser.add_argument("--exact-squares", default="all",
                        help="S rows checked by problem 2 on the GPU ('all', or '' for none)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    beyond = [f"{m}x{n}" for m, n in args.grids if min(m, n) > MAX_JOIN_SHORT_SIDE]
    if beyond:
        parser.error(f"--grids {','.join(beyond)}: the table is limited to a shorter side of "
                     f"{MAX_JOIN_SHORT_SIDE}; bench/gpu_matchstick_sample.py samples a larger "
                     f"grid's first round")
    require_cupy("gpu_matchstick_table")
    args.sweep_squares = [int(q) for q in args.sweep_squares.split(",") if q]
    args.exact_squares = None if args.exact_squares == "all" else \
        [int(q) for q in args.exact_squares.split(",") if q]
    rows = []
    for m, n in args.grids:
        row = run_grid(m, n, args)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"\n{'grid':>6} {'first s':>8} {'warm s':>8} {'sweeps s':>9} {'join s':>8} "
          f"{'cpu s':>8} {'exact s':>8} {'peak GB':>8}  checks")
    for r in rows:
        print(f"{r['grid']:>6} {r['first_s']:>8} {str(r['warm_s']):>8} {str(r['sweeps_s']):>9} "
              f"{str(r['join_s']):>8} {str(r.get('cpu_s', '-')):>8} "
              f"{str(r.get('exact_s', '-')):>8} {r['peak_gb']:>8}  "
              f"{','.join(r['checks'])}")


if __name__ == "__main__":
    main()
