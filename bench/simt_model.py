"""Warp model of the N-Queens kernel (and of ygch/n_queens) on the CPU: lanes, pipes, time.

    python bench/simt_model.py [--n 18 19] [--mark 7] [--sample 256] [--ygch]

Builds bench/simt_model.cu (nvcc, host code only), which replays the kernel's own per-thread
loop (kernels/nqueens.cu compiled for the host) for 32-lane warps in lockstep over a sample
of the work items (every ``--sample``-th prefix at the mark row, with the threads scaled
down by the same factor, so that items per thread stay as on the device). Each code block
costs the SASS instructions in ``V3_COSTS``, of which the ALU-pipe ones (LOP3, ISETP, SEL,
SHF, IADD3, LEA, PRMT) are counted apart: an H100 scheduler issues one instruction per
cycle but has 16 integer lanes, so a warp's ALU instruction holds that pipe two cycles.
Shared memory serves one wavefront per SM per cycle (a 16-byte access of a quarter-warp
is one wavefront, a 4-byte access of the warp one).

The time per warp step is bounded by max(issued, 2 x ALU, 4 x wavefronts) cycles; the
ratio of that bound to the measured cycles is calibrated on ygch/n_queens, whose loop the
model replays too (``--ygch``) and whose ncu profile is known (docs/performance.md). The
projected seconds are a projection, not a measurement.
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

#: SASS of nqueens_count (sm_90, nvcc 13.0 -O3, cuobjdump -sass), counted 2026-11-23: the main
#: iteration (popc, rare-branch test, one candidate, rules, queen store, save, select, restore,
#: loop control) 43 instructions of which 25 on the ALU pipe; a case-C leaf 13, a case-S leaf
#: 54 (row B1 and B2 loads, the weight), the fetch of a work item about 200 (an estimate:
#: the atomic, the record, the split rows; it runs once per item of thousands of nodes).
V3_COSTS = {"main": 43, "main_alu": 25, "leaf_c": 13, "leaf_s": 54, "fetch": 200}
#: ygch/n_queens at dba7b01 built for sm_90 with its configuration 2: the loop is 30
#: instructions, 15 on the ALU pipe; the fetch of 32 subproblems about 30.
YGCH_COSTS = {"loop": 30, "loop_alu": 15, "fetch": 30}
#: ncu of ygch's kernel at n=18, 6 rows (r4-ncu_ygch18): 115.5e6 active cycles per SM at
#: 1.59 GHz for the 1,199,146 subproblems; the model's bound for the same run (full sample,
#: 163,840 threads) is BOUND_EFFICIENCY of that: cycles = bound / BOUND_EFFICIENCY.
BOUND_EFFICIENCY = 0.865
#: H100 SXM: 132 SMs of 4 schedulers; clock of the wall-clock runs (r1: boost) and of ncu.
SMS = 132
CLOCK_HZ = 1.755e9
NCU_CLOCK_HZ = 1.59e9
#: Threads an H100 holds at once with nqueens_count: 128-thread blocks, as many as the shared
#: memory allows (228 KiB per SM, 1 KiB reserved per block), at most 2048 per SM.
SHARED_PER_SM = 228 * 1024


def h100_threads(n: int, base: int, block: int = 128) -> int:
    per_thread = 4 * (4 * (n - base) + (n - 1 - base))
    blocks = min(2048 // block, SHARED_PER_SM // (block * per_thread + 1024 + 256))
    return SMS * blocks * block


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


def _parse(out: str) -> dict:
    row = dict(item.split("=") for item in out.split())
    return {k: (v if k == "loop" else float(v)) for k, v in row.items()}


def bound_cycles_per_node(r: dict) -> float:
    """Scheduler cycles per node at full speed: issue, ALU pipe or shared memory (4 schedulers)."""
    return max(r["issued_per_node"], 2 * r["alu_per_node"], 4 * r["wavefronts_per_node"])


def projected_seconds(r: dict, nodes: float, clock: float = CLOCK_HZ) -> float:
    return nodes * bound_cycles_per_node(r) / BOUND_EFFICIENCY / (SMS * 4 * clock)


def run_v3(binary: Path, folder: Path, n: int, mark: int, sample: int, threads: int | None = None) -> dict:
    prefixes = enumerate_prefixes(n, mark)
    subset = prefixes.take(np.arange(0, len(prefixes), sample))
    threads = threads or max(32, round(h100_threads(n, mark) / sample / 32) * 32)
    path = folder / f"prefixes_{n}_{mark}_{sample}.bin"
    write_prefix_file(path, subset)
    c = V3_COSTS
    out = subprocess.run([str(binary), "v3", str(path), str(threads), str(c["main"]), str(c["main_alu"]),
                          str(c["leaf_c"]), str(c["leaf_s"]), str(c["fetch"])],
                         check=True, capture_output=True, text=True, timeout=3600).stdout
    return _parse(out) | {"n": n, "mark": mark, "sample": sample, "all_prefixes": len(prefixes)}


def run_ygch(binary: Path, n: int, rows: int, sample: int, threads: int = 163840) -> dict:
    c = YGCH_COSTS
    threads = max(32, round(threads / sample / 32) * 32)
    out = subprocess.run([str(binary), "ygch", str(n), str(rows), str(sample), str(threads), str(c["loop"]),
                          str(c["loop_alu"]), str(c["fetch"])], check=True, capture_output=True, text=True,
                         timeout=3600).stdout
    return _parse(out) | {"n": n, "mark": rows, "sample": sample}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[16, 17, 18])
    parser.add_argument("--mark", type=int, default=7)
    parser.add_argument("--sample", type=int, default=256, help="model every k-th item, 1/k of the threads")
    parser.add_argument("--ygch", action="store_true", help="model ygch/n_queens (6 rows) instead")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        binary = build(Path(folder))
        print(f"{'loop':>4} {'n':>3} {'mark':>4} {'threads':>7} {'lanes':>6} {'issued/node':>11} {'alu/node':>8} "
              f"{'wavefr/node':>11} {'bound cyc/node':>14} {'tail':>5} {'nodes (all)':>12} {'projected s':>11}")
        for n in args.n:
            if args.ygch:
                r = run_ygch(binary, n, args.mark, args.sample)
            else:
                r = run_v3(binary, Path(folder), n, args.mark, args.sample)
            nodes = r["nodes"] * args.sample
            print(f"{r['loop']:>4} {n:>3} {args.mark:>4} {int(r['threads']):>7} {r['active_lanes']:>6.2f} "
                  f"{r['issued_per_node']:>11.3f} {r['alu_per_node']:>8.3f} {r['wavefronts_per_node']:>11.3f} "
                  f"{bound_cycles_per_node(r):>14.3f} {r['tail']:>5.2f} {nodes:>12.4g} "
                  f"{projected_seconds(r, nodes):>11.4f}")
    print("lanes: active lanes per issued instruction; bound: max(issued, 2 x ALU, 4 x shared wavefronts) "
          "scheduler cycles per node")
    print(f"projected s: kernel seconds on one H100 at {CLOCK_HZ / 1e9:.3f} GHz, the bound divided by "
          f"{BOUND_EFFICIENCY} (calibrated on ygch's ncu profile); a projection, not a measurement")
    return 0


if __name__ == "__main__":
    sys.exit(main())
