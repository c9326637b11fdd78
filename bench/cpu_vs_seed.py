"""Time the NumPy path against the seed program's single-thread CPU mode, in one run.

The seed program is the CUDA N-Queens counter of the Japanese article this project started
from (docs/performance.md, *The peers*); its source is not distributed with gpuqueens, so this
script runs only where you have it.

    python bench/cpu_vs_seed.py 15 [--repeat 5] [--seed-tool peers/tools/seed_nqueens.sh]

Needs the seed tool copied into peers/ by bench/prepare_peers.sh
and nvcc to build it. Both programs are run alternately, ``--repeat`` times each; the
table shows the median seconds and the ratio ours/seed (our target: at most 2).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time
from pathlib import Path

import gpuqueens

ROOT = Path(__file__).resolve().parent.parent


def seed_seconds(tool: Path, n: int) -> tuple[float, int]:
    """Run the seed in CPU mode for one n; return its own reported time and total.

    A seed tool that fails ends the script with one line that gives its exit status and
    the last line it wrote to stderr."""
    done = subprocess.run(["bash", str(tool), "-c", str(n), str(n)], capture_output=True, text=True)
    if done.returncode:
        tail = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"cpu_vs_seed: error: the seed tool {tool} failed at n={n} "
                         f"(exit {done.returncode}: {tail}); the tool needs nvcc to build the seed")
    out = done.stdout
    match = re.search(rf"^\s*{n}:\s+(\d+)\s+(\d+)\s+(\d+):(\d+):(\d+):(\d+)\.(\d+)", out, re.M)
    if not match:
        raise RuntimeError(f"could not read the seed's output:\n{out}")
    total = int(match.group(1))
    d, h, m, s, frac = (int(g) for g in match.groups()[2:])
    return ((d * 24 + h) * 60 + m) * 60 + s + frac / 100, total


def ours_seconds(n: int) -> tuple[float, int]:
    start = time.perf_counter()
    total = gpuqueens.count(n, backend="cpu", progress=False, workers=1)  # one core, as the seed's -c
    return time.perf_counter() - start, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, nargs="+")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed-tool", type=Path,
                        default=ROOT / "peers" / "tools" / "seed_nqueens.sh")
    args = parser.parse_args()
    if not args.seed_tool.is_file():
        raise SystemExit(f"cpu_vs_seed: error: no seed tool at {args.seed_tool}: copy it into peers/ "
                         "with bash bench/prepare_peers.sh SEED_DIR, or give --seed-tool")
    seed_seconds(args.seed_tool, 8)  # build once, outside the timings
    print(f"{'n':>3} {'total':>14} {'seed -c [s]':>12} {'numpy [s]':>10} {'ratio':>6}")
    for n in args.n:
        seed, ours = [], []
        for _ in range(args.repeat):
            s, seed_total = seed_seconds(args.seed_tool, n)
            o, our_total = ours_seconds(n)
            if seed_total != our_total:
                raise SystemExit(f"n={n}: totals differ, seed {seed_total} vs ours {our_total}")
            seed.append(s)
            ours.append(o)
        s, o = statistics.median(seed), statistics.median(ours)
        ratio = f"{o / s:>6.2f}" if s > 0 else "   n/a"  # the seed prints 10 ms steps
        print(f"{n:>3} {our_total:>14} {s:>12.3f} {o:>10.3f} {ratio}")


if __name__ == "__main__":
    main()
