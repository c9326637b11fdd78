"""Sample the puzzle table's first round on a grid too large to finish, and project its cost.

The round's half sweeps are built once, then a few centre patterns are joined, each timed;
the round's time and memory are projected from them.

On a machine with an NVIDIA GPU (CUDA 12 or 13 driver), from a checkout of gpuqueens:

    pip install -e ".[cuda12]"          # or ".[cuda13]", matching the driver
    python bench/gpu_matchstick_sample.py 8x8 --patterns 4 --json sample8.json

The table (S = 0..14 by default, ``--squares``) runs in rounds of the centre join
(gpuqueens/problems/matchsticks/table.py); a round builds both half sweeps once and then
joins one centre stick pattern C after another (136 patterns for 8×8). This script builds
the first round's half sweeps (timed, with the device memory held after them), joins
``--patterns`` patterns spread evenly over the sorted list (or ``all``), and prints one
JSON line per pattern and a summary:

sweeps s, peak GB
    the half sweeps and their decoding into parts; CuPy's pool after them (GPU), or the
    process's peak resident memory (CPU).
join s
    each sampled pattern's join (groups and pairing), and what it found: ``{S: [R, ways]}``
    for the S it reaches at the round's caps.
projected round s
    sweeps s + the number of patterns × the mean sampled join: the first round alone.
    The table may need more rounds (an S whose fewest R is above its cap in the first round
    is asked again one level up; 7×7 took two); each later round asks fewer S.

With ``--patterns all`` the rows found are the first round's answer for those S: the same
as the table's (``--check``, for grids the table answers). ``--backend cpu`` runs the same
on the CPU. Before spending GPU time, dry-run it on the CuPy stand-in (nvcc needed;
times mean nothing): ``python tests/fake_gpu_run.py bench/gpu_matchstick_sample.py 5x5
--patterns all --check``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.gpu_matchsticks import peak_bytes  # noqa: E402
from bench.gpu_required import require_cupy  # noqa: E402
from bench.grid_args import parse_grid  # noqa: E402
from gpuqueens.problems.matchsticks.cli import parse_squares  # noqa: E402
from gpuqueens.problems.matchsticks.gpu import array_module  # noqa: E402
from gpuqueens.problems.matchsticks.grid import orient, square_count  # noqa: E402
from gpuqueens.problems.matchsticks.pairing import (JoinStats, centre_patterns, join_centre,  # noqa: E402
                                                    prepare_round)
from gpuqueens.problems.matchsticks.table import first_round, merge_fewest, table_rows  # noqa: E402
from gpuqueens.problems.matchsticks.top_rows import split_squares  # noqa: E402


def sampled(patterns: list[int], count: str) -> list[int]:
    """``count`` patterns spread evenly over ``patterns`` (all of them for "all").

    >>> sampled(list(range(10)), "3"), sampled([1, 2], "all")
    ([0, 4, 9], [1, 2])
    """
    if count == "all" or int(count) >= len(patterns):
        return list(patterns)
    k = max(1, int(count))
    if k == 1:
        return [patterns[len(patterns) // 2]]
    return [patterns[round(i * (len(patterns) - 1) / (k - 1))] for i in range(k)]


def memory_held(backend: str) -> int:
    """Bytes: CuPy's pool on the GPU (0 where CuPy has none: the stand-in), the process's
    peak resident set on the CPU."""
    if backend == "gpu":
        import cupy

        return peak_bytes(cupy) or 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("grid", type=parse_grid, help="MxN, e.g. 8x8")
    parser.add_argument("--squares", type=parse_squares, default="0-14",
                        help="the S of the table, e.g. 0-14 (the default) or 0,2,5-7")
    parser.add_argument("--patterns", default="4", help="how many centre patterns to join, or all")
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--check", action="store_true",
                        help="compare the rows found (with --patterns all) with the table's")
    parser.add_argument("--json", type=Path, help="write the summary here")
    args = parser.parse_args(argv)
    if args.patterns != "all" and not (args.patterns.isdigit() and int(args.patterns) >= 1):
        parser.error(f"--patterns takes a count of at least 1 or 'all', not {args.patterns!r}")
    if args.check and args.patterns != "all":
        parser.error("--check needs --patterns all (a sample finds only part of the round)")
    if args.backend == "gpu":
        require_cupy("gpu_matchstick_sample")
    h, w = orient(*args.grid)
    asked = sorted({q for part in args.squares for q in part})
    squares = [q for q in asked if q <= square_count(h, w)]
    if not squares:
        parser.error(f"--squares: a {h}×{w} grid has {square_count(h, w)} squares; "
                     f"no S asked is possible")
    _, rest = split_squares(h, w, squares)
    caps, level = first_round(h, w, rest) if rest else ({}, 0)
    if not caps:
        parser.error("every S asked comes from the top sweep or is impossible, not from the "
                     "join: nothing to sample")
    print(f"{h}×{w}, first round: level {level}, caps {caps}", flush=True)

    start = time.perf_counter()
    rnd = prepare_round(h, w, caps, level, None, max(rest), xp=array_module(args.backend))
    sweeps = time.perf_counter() - start
    held = memory_held(args.backend)
    print(json.dumps({"sweeps_s": round(sweeps, 3), "parts": [len(rnd.left.r), len(rnd.right.r)],
                      "max_live": rnd.sweep.max_states, "held_gb": round(held / 1e9, 2)}), flush=True)

    patterns = centre_patterns(h)
    found: dict[int, tuple[int, int]] = {}
    seconds = []
    for C in sampled(patterns, args.patterns):
        stats = JoinStats()
        start = time.perf_counter()
        if args.backend == "gpu":
            from gpuqueens.problems.matchsticks.gpu_join import join_centre_gpu

            rows = join_centre_gpu(rnd, C, stats)
        else:
            rows = join_centre(rnd, C, stats)
        seconds.append(time.perf_counter() - start)
        merge_fewest(found, rows)
        print(json.dumps({"C": format(C, f"0{h}b"), "join_s": round(seconds[-1], 3), "groups": stats.groups,
                          "pairs": stats.pairs, "hits": stats.hits, "found": rows}), flush=True)
    held = max(held, memory_held(args.backend))
    summary = {"grid": f"{h}x{w}", "backend": args.backend, "level": level, "caps": caps,
               "patterns": len(patterns), "sampled": len(seconds), "sweeps_s": sweeps,
               "join_s": seconds, "mean_join_s": statistics.mean(seconds),
               "projected_round_s": sweeps + len(patterns) * statistics.mean(seconds),
               "held_gb": held / 1e9, "found": {q: list(v) for q, v in sorted(found.items())}}
    print(f"{h}×{w}: sweeps {sweeps:.1f} s, {len(seconds)} of {len(patterns)} patterns joined "
          f"({min(seconds):.2f}..{max(seconds):.2f} s, mean {summary['mean_join_s']:.2f} s): the first round "
          f"projected at {summary['projected_round_s']:.0f} s; {held / 1e9:.1f} GB held at the most")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    if args.check:
        table = {q: (r, ways) for q, r, ways in table_rows(h, w, rest, backend=args.backend) if q in found}
        if not found:
            print("check: the first round found no row (its S lie above the round's caps): "
                  "nothing to compare")
            return 1
        if table != found:
            print(f"the first round's rows differ from the table's: {found} against {table}")
            return 1
        print(f"check: the {len(found)} rows found equal the table's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
