"""Warp model of the N-Queens kernel (and of ygch/n_queens) on the CPU: lanes, pipes, time.

    python bench/simt_model.py [--n 18 19] [--mark 7] [--split 0] [--sample 256] [--ygch]
    python bench/simt_model.py --sass      # the main iteration in SASS (nvcc, cuobjdump)

Builds bench/simt_model.cu (nvcc, host code only), which replays the kernel's own per-thread
loop (kernels/nqueens.cu compiled for the host) for 32-lane warps in lockstep over a sample
of the work items (every ``--sample``-th prefix at the mark row, with the threads scaled
down by the same factor, so that items per thread stay as on the device). Each code block
costs the SASS instructions in ``KERNEL_COSTS``, of which the ALU-pipe ones (LOP3, ISETP, SEL,
SHF, IADD3, LEA, PRMT) are counted apart (IMAD and VIADD, on the FMA pipe, are not): an H100 scheduler issues one instruction per
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
import glob
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpuqueens.problems.nqueens.gpu import stack_bytes_per_thread  # noqa: E402
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes  # noqa: E402

#: SASS of nqueens_count (sm_90, nvcc 13.0 -O3, cuobjdump -sass), engine v5, counted
#: 2026-11-28: the main iteration with ``--sass``, the rare blocks by hand from the full listing:
#: (instructions, of which on the ALU pipe) per block of NqWorker::advance(). A main iteration
#: is head + main + tail = 28 (10 ALU); a leaf takes rare + leaf instead of main (the rare path
#: tests for the last row first); a row up to B1 (its child has a static rule, or it is row
#: B1-1 or B1) rare + last + rule; the end of an item rare + last + fetch. Fetch and empty are estimates read off the SASS, not counted
#: exactly: about 200 for an item (the warp-aggregated atomic, the divisions of the item index,
#: the record, the split rows), about 100 for an empty one (a square that does not exist).
KERNEL_COSTS = {"head": (5, 1), "main": (17, 8), "rare": (2, 1), "rule": (25, 16), "last": (2, 1),
                "leaf": (14, 10), "fetch": (200, 100), "empty": (100, 50), "tail": (6, 1)}
KERNEL_BLOCKS = ("head", "main", "rare", "rule", "last", "leaf", "fetch", "empty", "tail")
# v5 of 4097d6e (the leaf read two words and picked the weight with shifts; it was tested
# after the rule rows): rule 20/11, leaf 19/11, a leaf rare + last + leaf.
# v5 before 2026-11-28 (0d2cfbd: a "go on" word beside `cand`, a register move per iteration;
# the leaf words in shared memory, row B1's stored apart from the B2 rule): head 5/1, main
# 19/11, rule 24/15, leaf 23/11.
# v4 (daa8e36, a per-row store of `down`) as counted on 2026-11-23: head 5/1, main 19/10,
# rule 20/11, leaf 22/11, the rest as v5.
# v3 (fe41912) as counted on 2026-11-23, for the record: 43 per iteration (25 ALU), a case-C
# leaf 13, a case-S leaf 54, the fetch about 200.
#: ygch/n_queens at dba7b01 built for sm_90 with its configuration 2: the loop is 30
#: instructions, 15 on the ALU pipe; the fetch of 32 subproblems about 30.
YGCH_COSTS = {"loop": 30, "loop_alu": 15, "fetch": 30}
#: ncu of ygch's kernel at n=18, 6 rows (2026-11-22): 118.5e6 elapsed cycles (115.5e6 active
#: per SM) at 1.59 GHz for the 1,199,146 subproblems; the model's bound for the same run
#: (`--ygch --mark 6 --n 18 --sample 1`, 163,840 threads: 2.935e10 nodes at 1.828 cycles,
#: 1.016e8 cycles per scheduler) is BOUND_EFFICIENCY of the elapsed cycles:
#: cycles = bound / BOUND_EFFICIENCY. (0.880 of the active cycles; 0.865 with the bound of a
#: 1/16 sample, which this constant was before 2026-11-23.)
BOUND_EFFICIENCY = 0.858
#: H100 SXM: 132 SMs of 4 schedulers; clock of the wall-clock runs (r1: boost). (ncu locks
#: the clock at 1.59 GHz: the calibration above is in cycles, so it does not depend on it.)
SMS = 132
CLOCK_HZ = 1.755e9
#: Threads an H100 holds at once with nqueens_count: 128-thread blocks, as many as the shared
#: memory allows (228 KiB per SM, 1 KiB reserved per block), at most 2048 per SM.
SHARED_PER_SM = 228 * 1024


def h100_threads(n: int, base: int, block: int = 128) -> int:
    """Threads an H100 holds at once when searching from row `base` (gpu._grid_size)."""
    per_thread = stack_bytes_per_thread(n, base)
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


def run_kernel(binary: Path, folder: Path, n: int, mark: int, sample: int, threads: int | None = None,
           costs: dict | None = None, split: int = 0) -> dict:
    """The kernel's loop over every `sample`-th prefix at row `mark`, cut by `split` rows."""
    prefixes = enumerate_prefixes(n, mark)
    subset = prefixes.take(np.arange(0, len(prefixes), sample))
    threads = threads or max(32, round(h100_threads(n, mark + split) / sample / 32) * 32)
    path = folder / f"prefixes_{n}_{mark}_{sample}.bin"
    write_prefix_file(path, subset)
    costs = costs or KERNEL_COSTS
    pairs = [str(v) for block in KERNEL_BLOCKS for v in costs[block]]
    out = subprocess.run([str(binary), "kernel", str(path), str(split), str(threads), *pairs],
                         check=True, capture_output=True, text=True, timeout=3600).stdout
    return _parse(out) | {"n": n, "mark": mark, "split": split, "sample": sample, "all_prefixes": len(prefixes)}


def run_ygch(binary: Path, n: int, rows: int, sample: int, threads: int = 163840) -> dict:
    c = YGCH_COSTS
    threads = max(32, round(threads / sample / 32) * 32)
    out = subprocess.run([str(binary), "ygch", str(n), str(rows), str(sample), str(threads), str(c["loop"]),
                          str(c["loop_alu"]), str(c["fetch"])], check=True, capture_output=True, text=True,
                         timeout=3600).stdout
    return _parse(out) | {"n": n, "mark": rows, "sample": sample}


#: SASS opcodes that run on the integer ALU pipe (the rest of the loop: IMAD*, VIADD on the FMA
#: pipe; POPC, LDS/STS, branches and barriers elsewhere).
ALU_OPCODES = ("LOP3", "ISETP", "SEL", "SHF", "IADD3", "LEA", "PRMT", "PLOP3", "FLO", "BREV", "BMSK",
               "IMNMX", "VIMNMX", "MOV")


def find_cuda_tool(name: str) -> str | None:
    """`name` (cuobjdump, nvdisasm) on the PATH, or from its nvidia-cuda-<name> wheel in this
    Python's site-packages."""
    found = shutil.which(name)
    if found:
        return found
    for folder in (*site.getsitepackages(), site.getusersitepackages()):
        for path in sorted(glob.glob(f"{folder}/nvidia/cu*/bin/{name}")) + sorted(
                glob.glob(f"{folder}/nvidia/cuda_{name}/bin/{name}")):
            return path
    return None


#: What to install where cuobjdump or the nvdisasm it runs is missing.
SASS_TOOLS_HINT = "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, or put a CUDA toolkit's bin on the PATH"


def sass_tools() -> tuple[str, str] | None:
    """cuobjdump and nvdisasm (cuobjdump runs nvdisasm to print SASS), or None if either is missing."""
    cuobjdump, nvdisasm = find_cuda_tool("cuobjdump"), find_cuda_tool("nvdisasm")
    return (cuobjdump, nvdisasm) if cuobjdump and nvdisasm else None


def sass(source: Path, folder: Path, function: str = "nqueens_count") -> list[tuple[int, str]]:
    """(address, instruction) of `function` in the sm_90 build of `source` (nvcc, cuobjdump)."""
    tools = sass_tools()
    if tools is None:
        raise FileNotFoundError(f"cuobjdump or nvdisasm not found ({SASS_TOOLS_HINT})")
    cubin = folder / "kernel.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-O3", "-o", str(cubin), str(source)], check=True, timeout=300)
    cuobjdump, nvdisasm = tools
    env = dict(os.environ, NVDISASM_PATH=str(Path(nvdisasm).parent))
    text = subprocess.run([cuobjdump, "-sass", "-fun", function, str(cubin)], check=True, capture_output=True,
                          text=True, timeout=300, env=env).stdout
    found = (re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line) for line in text.splitlines())
    return [(int(m.group(1), 16), m.group(2)) for m in found if m]


def is_alu(instruction: str) -> bool:
    opcode = instruction.split()[1] if instruction.startswith("@") else instruction.split()[0]
    return opcode.split(".")[0] in ALU_OPCODES


def main_iteration(code: list[tuple[int, str]]) -> list[str]:
    """The search loop's main path: from its head (the POPC that a back branch returns to)
    along the fall-through path, through unconditional branches, to the back branch."""
    where = {address: k for k, (address, _) in enumerate(code)}
    for k, (address, text) in enumerate(code):
        if not re.match(r"POPC R\d+, R\d+$", text) or not any(t == f"BRA 0x{address:x}" for _, t in code):
            continue
        path, i = [], k
        while len(path) < 200:
            path.append(code[i][1])
            if path[-1] == f"BRA 0x{address:x}":
                return path
            jump = re.match(r"BRA 0x([0-9a-f]+)$", path[-1])
            i = where[int(jump.group(1), 16)] if jump else i + 1
    raise ValueError("no search loop found in the SASS")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[16, 17, 18])
    parser.add_argument("--mark", type=int, default=7)
    parser.add_argument("--split", type=int, default=0,
                        help="rows the device cuts each prefix by into work items (the public call "
                             "expands its prefixes at row 5 by two rows on the device: --mark 7 --split 0; "
                             "with the split's work items instead: --mark 5 --split 2)")
    parser.add_argument("--sample", type=int, default=256, help="model every k-th item, 1/k of the threads")
    parser.add_argument("--ygch", action="store_true", help="model ygch/n_queens (6 rows) instead")
    parser.add_argument("--sass", action="store_true",
                        help="print the main iteration of kernels/nqueens.cu in SASS (nvcc, cuobjdump) and stop")
    args = parser.parse_args(argv)
    for n in args.n:  # the kernel's range (kernels/nqueens.cu): 4 <= n <= 32, 2 <= mark, mark + split <= n - 1
        if not (4 <= n <= 32 and args.mark >= 2 and 0 <= args.split <= 2 and args.mark + args.split <= n - 1):
            parser.error(f"n={n}, --mark {args.mark}, --split {args.split}: the kernel needs 4 <= n <= 32, "
                         f"mark >= 2, split 0..2 and mark + split <= n - 1")
    if args.sass:
        if sass_tools() is None:
            print(f"simt_model.py: cuobjdump or nvdisasm not found ({SASS_TOOLS_HINT})", file=sys.stderr)
            return 1
        with tempfile.TemporaryDirectory() as folder:
            path = main_iteration(sass(ROOT / "kernels" / "nqueens.cu", Path(folder)))
        for text in path:
            print(f"{'ALU' if is_alu(text) else '':>3}  {text}")
        print(f"{len(path)} instructions, {sum(map(is_alu, path))} on the ALU pipe "
              f"(KERNEL_COSTS head + main + tail: {sum(KERNEL_COSTS[b][0] for b in ('head', 'main', 'tail'))}, "
              f"{sum(KERNEL_COSTS[b][1] for b in ('head', 'main', 'tail'))})")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        binary = build(Path(folder))
        print(f"{'loop':>4} {'n':>3} {'mark':>4} {'split':>5} {'threads':>7} {'lanes':>6} {'issued/node':>11} "
              f"{'alu/node':>8} {'wavefr/node':>11} {'bound cyc/node':>14} {'tail':>5} {'nodes (all)':>12} "
              f"{'projected s':>11} {'leaf steps':>10} {'empty/item':>10}")
        for n in args.n:
            if args.ygch:
                r = run_ygch(binary, n, args.mark, args.sample)
            else:
                r = run_kernel(binary, Path(folder), n, args.mark, args.sample, split=args.split)
            nodes = r["nodes"] * args.sample
            print(f"{r['loop']:>4} {n:>3} {args.mark:>4} {r.get('split', 0):>5} {int(r['threads']):>7} "
                  f"{r['active_lanes']:>6.2f} {r['issued_per_node']:>11.3f} {r['alu_per_node']:>8.3f} "
                  f"{r['wavefronts_per_node']:>11.3f} {bound_cycles_per_node(r):>14.3f} {r['tail']:>5.2f} "
                  f"{nodes:>12.4g} {projected_seconds(r, nodes):>11.4f} {r.get('steps_with_leaf', 0):>10.3f} "
                  f"{r.get('empty_per_item', 0):>10.2f}")
    print("lanes: active lanes per issued instruction; bound: max(issued, 2 x ALU, 4 x shared wavefronts) "
          "scheduler cycles per node; leaf steps: share of warp steps with a leaf; empty/item: empty items "
          "taken per item searched")
    print(f"projected s: kernel seconds on one H100 at {CLOCK_HZ / 1e9:.3f} GHz, the bound divided by "
          f"{BOUND_EFFICIENCY} (calibrated on ygch's ncu profile); a projection, not a measurement")
    return 0


if __name__ == "__main__":
    sys.exit(main())
