"""Warp model of the N-Queens kernel on the CPU: active lanes, instructions per node, tail.

    python bench/simt_model.py [--n 18] [--mark 7] [--sample 256] [--policy dynamic]

Builds bench/simt_model.cu (nvcc, host code only), which runs the kernel's own per-thread
loop for 32-lane warps in lockstep over a sample of the prefixes (every ``--sample``-th one,
with the threads scaled down by the same factor, so that prefixes per thread stay as on
the device). Each code block of the loop costs the SASS instructions counted in
``BLOCK_COSTS`` (read from ``cuobjdump -sass`` of the sm_90 cubin, see
docs/performance.md). It prints the model's active lanes per issued instruction,
issued warp instructions per node, the tail (longest thread's busy steps over the mean)
and, from those, a projected kernel time on an H100: a projection, not a measurement.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes  # noqa: E402

#: SASS instructions of each block of the loop (nqueens_count, sm_90, nvcc 13.0 -O3), in the
#: order head, fetch, pop, advance, rules, push, leaf-row, leaf-weight. Counted 2026-11-23
#: from the disassembly; fetch includes the warp-aggregated atomic and the 16-byte load.
BLOCK_COSTS = (6, 70, 25, 13, 14, 14, 8, 30)
#: The previous kernel (4fed4d1), for calibration: head, fetch (static stride), pop, advance
#: with its branchy rules, (unused), push, case-C leaf, case-S leaf. The case-S leaf runs
#: three pre-tests (~35 instructions) and, for the ~1 leaf in 4 that passes one, a rotation
#: comparison whose row_of scans cost hundreds more: 150 is an estimate of the average.
V1_COSTS = (7, 40, 19, 18, 0, 16, 7, 150)
#: H100 SXM: 132 SMs x 4 schedulers at the 1.59 GHz ncu reported, and the 0.88 issue slots
#: per scheduler and cycle that ncu measured for the previous kernel (r4-ncu18).
H100_ISSUE_PER_S = 132 * 4 * 1.59e9 * 0.88
#: Threads the H100 holds at once with this kernel (39 registers, 128-thread blocks: 12 blocks
#: of 4 warps by registers; shared memory allows more): 132 SMs x 1536.
H100_THREADS = 132 * 1536


def write_prefix_file(path: Path, prefixes) -> None:
    """The host harness's input format (tests/native/nqueens_host_main.cu)."""
    with open(path, "wb") as f:
        f.write(b"NQPREF2\0")
        f.write(np.array([prefixes.n, prefixes.mark], dtype="<u4").tobytes())
        f.write(np.array([len(prefixes)], dtype="<u8").tobytes())
        f.write(prefixes.records().astype("<u4").tobytes())


def build(folder: Path) -> Path:
    binary = folder / "simt_model"
    subprocess.run(["nvcc", "-O2", "-std=c++17", "-o", str(binary), str(ROOT / "bench" / "simt_model.cu")],
                   check=True, timeout=300)
    return binary


def run_model(binary: Path, folder: Path, n: int, mark: int, sample: int, policy: str,
              threads: int | None = None, loop: str = "v2") -> dict:
    prefixes = enumerate_prefixes(n, mark)
    subset = prefixes.take(np.arange(0, len(prefixes), sample))
    threads = threads or max(32, round(H100_THREADS / sample / 32) * 32)
    path = folder / f"prefixes_{n}_{mark}_{sample}.bin"
    write_prefix_file(path, subset)
    costs = BLOCK_COSTS if loop == "v2" else V1_COSTS
    out = subprocess.run([str(binary), str(path), policy, str(threads), loop, *map(str, costs)],
                         check=True, capture_output=True, text=True, timeout=3600).stdout
    row = dict(item.split("=") for item in out.split())
    return {k: (v if k == "policy" else float(v)) for k, v in row.items()} | {
        "n": n, "mark": mark, "sample": sample, "all_prefixes": len(prefixes)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[16, 17, 18])
    parser.add_argument("--mark", type=int, default=7)
    parser.add_argument("--sample", type=int, default=256, help="model every k-th prefix, 1/k of the threads")
    parser.add_argument("--policy", choices=("dynamic", "static"), default="dynamic")
    parser.add_argument("--threads", type=int, help="modelled threads (default: the H100's, scaled by --sample)")
    parser.add_argument("--loop", choices=("v2", "v1"), default="v2",
                        help="v2: this kernel; v1: the previous kernel (4fed4d1), for calibration")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        binary = build(Path(folder))
        print(f"{'n':>3} {'mark':>4} {'loop':>4} {'policy':>8} {'prefixes':>9} {'threads':>7} {'active lanes':>12} "
              f"{'instr/node':>10} {'tail':>6} {'warp life':>9} {'nodes (sample)':>14} {'projected s':>11}")
        for n in args.n:
            r = run_model(binary, Path(folder), n, args.mark, args.sample, args.policy, args.threads, args.loop)
            # all nodes: the sample's nodes scaled up; time = issued instructions / issue rate
            nodes_all = r["nodes"] * args.sample
            projected = nodes_all * r["issued_per_node"] / H100_ISSUE_PER_S
            print(f"{n:>3} {args.mark:>4} {args.loop:>4} {r['policy']:>8} {int(r['all_prefixes']):>9} "
                  f"{int(r['threads']):>7} {r['active_lanes']:>12.2f} {r['issued_per_node']:>10.2f} "
                  f"{r['tail']:>6.2f} {r['warp_life_ratio']:>9.3f} {int(r['nodes']):>14} {projected:>11.4f}")
    print("tail: longest thread's busy steps / mean; warp life: mean / longest warp lifetime (the "
          "achieved-occupancy factor of a grid that fits the device at once)")
    print("projected s: kernel time on one H100 from the model (issued instructions at the issue "
          "rate ncu measured for the previous kernel); a projection, not a measurement")
    return 0


if __name__ == "__main__":
    sys.exit(main())
