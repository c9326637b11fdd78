"""Problem 1 on the CPU: the coefficient transfer against the evaluation points (NumPy twin).

    python bench/cpu_matchsticks.py 8x8 10x10 11x11 12x12 [--methods coefficients,evaluation]
                                    [--repeats 3] [--batch LANES] [--json FILE]

Each (grid, method) runs in a fresh Python process (so that peak memory is its own), warm
(one run first, then the median of --repeats), and prints: seconds, peak resident memory
(max RSS of the process), and the work unit the cost model of
gpuqueens.problems.matchsticks.transfer_work uses for that method, with the time per unit:

coefficients
    state-coefficient updates: Σ over point steps of 2^(h+2) states × live R entries ×
    primes < 2^62.
evaluation
    state updates: 2^(h+2) states × half-sweep steps × lanes (E + 1 points × primes < 2^29);
    ``--batch`` sweeps that many lanes at a time (default: all at once).

Both methods' counts are compared with each other. A short table is printed last.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, resource, statistics, sys, time
from gpuqueens.problems.matchsticks import transfer_work as cost
from gpuqueens.problems.matchsticks.evaluation import count_by_removed_evaluated
from gpuqueens.problems.matchsticks.transfer import count_by_removed
m, n, method, repeats = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
batch = int(sys.argv[5]) or None
if method == "coefficients":
    run = count_by_removed
else:
    run = lambda m, n: count_by_removed_evaluated(m, n, lanes_per_batch=batch)
counts = run(m, n)
times = []
for _ in range(repeats):
    start = time.perf_counter()
    again = run(m, n)
    times.append(time.perf_counter() - start)
    assert again == counts
work = cost.coefficient_work(m, n) if method == "coefficients" else cost.evaluation_work(m, n)
print(json.dumps({"grid": f"{m}x{n}", "method": method, "seconds": statistics.median(times),
                  "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "updates": work.updates, "counts": [str(c) for c in counts]}))
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("grids", nargs="+", help="grids as MxN")
    parser.add_argument("--methods", default="coefficients,evaluation")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=0, help="lanes per batch (evaluation)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    unknown = set(args.methods.split(",")) - {"coefficients", "evaluation"}
    if unknown:
        parser.error(f"--methods takes coefficients and/or evaluation, not {', '.join(sorted(unknown))}")
    rows = []
    for grid in args.grids:
        m, n = (int(v) for v in grid.lower().split("x"))
        by_method = {}
        for method in args.methods.split(","):
            done = subprocess.run([sys.executable, "-c", CHILD, str(m), str(n), method, str(args.repeats),
                                   str(args.batch)],
                                  capture_output=True, text=True, check=True, cwd=ROOT)
            row = json.loads(done.stdout)
            by_method[method] = row.pop("counts")
            row["ns_per_update"] = row["seconds"] / row["updates"] * 1e9
            rows.append(row)
            print(json.dumps(row), flush=True)
        assert len({tuple(c) for c in by_method.values()}) == 1, f"{grid}: the methods disagree"
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"\n{'grid':>7} {'method':>13} {'seconds':>9} {'peak MB':>8} {'updates':>10} {'ns/update':>9}")
    for r in rows:
        print(f"{r['grid']:>7} {r['method']:>13} {r['seconds']:9.3f} {r['peak_bytes'] / 1e6:8.0f} "
              f"{r['updates']:10.3g} {r['ns_per_update']:9.3f}")
    print(f"(median of {args.repeats} warm runs each; "
          f"{statistics.median(r['seconds'] for r in rows):.3f} s median over the table)")


if __name__ == "__main__":
    main()
