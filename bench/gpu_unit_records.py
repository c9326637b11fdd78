"""Records per GPU work unit at large n: does a unit keep the device's threads busy?

A GPU count cuts its prefixes at row 5 into units (``plan.plan_for``), and the device
expands each unit's prefixes by ``gpu.choose_split``'s rows into records, one per search
thread's work item. From n = 22 the units grow four times in number per n while the
prefixes grow ~1.3 times, so a unit holds fewer and fewer prefixes; when its records are
not many times the threads the device holds, the unit's time is that of its longest
records (the tail). Without a GPU this prints, from the library's own plan, unit 0 of each
n: its prefixes, the rows the device expands them by (at most two, as before 2026-11-28,
and the rows chosen now, up to three), the records each gives, and the records per thread an H100/H200 holds
(132 SMs, 228 KiB of shared memory each, blocks of 128 threads):

    python bench/gpu_unit_records.py --nmin 20 --nmax 28

With ``--time`` on a GPU machine it also times unit 0 of each n on the current device,
expanded by two rows and by three (the kernels warm; a unit of n = 24 is estimated at
about 1.6 minutes, n = 25 at 4: each n is timed twice):

    python bench/gpu_unit_records.py --nmin 24 --nmax 25 --time

How uneven the records are (``--spread``, no GPU; nvcc builds the kernel's host harness,
tests/native/nqueens_host_main.cu, with node counts): the nodes of each record at row 7 of
n against the mean record's, the largest and the 99.99th percentile:

    python bench/gpu_unit_records.py --nmin 14 --nmax 16 --spread
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpuqueens.problems.nqueens import gpu  # noqa: E402
from gpuqueens.problems.nqueens.plan import gpu_batch, plan_for  # noqa: E402
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes, expand_prefixes  # noqa: E402

#: An H100 SXM or an H200 (the same SM count and shared memory), for the threads held.
HOPPER = gpu.DeviceLimits(132, 2048, 32, 48 * 1024, 227 * 1024, 228 * 1024, 1024)
#: The search kernel's static shared memory per block, in bytes (its block sums).
STATIC_SHARED = 256
BLOCK = 128


def unit_zero(n: int):
    """The prefixes of unit 0 of n's GPU plan, as a GPU unit gets them."""
    units = plan_for(n, "gpu").unit_count
    return units, gpu_batch(enumerate_prefixes(n, 5).take(slice(0, None, units)))


def threads_held(n: int, base: int) -> int:
    """Search threads a Hopper GPU holds at once with the search starting below row base."""
    return HOPPER.sms * gpu.resident_threads(BLOCK, gpu.stack_bytes_per_thread(n, base), STATIC_SHARED, HOPPER)


def row(n: int) -> dict:
    """Unit 0 of n: its units, prefixes, and (rows, records, records per thread) by the rule
    before (at most two rows) and now."""
    units, prefixes = unit_zero(n)
    mark = prefixes.mark
    rows = {"before": gpu.choose_split(n, mark, len(prefixes)),  # at most two rows
            "now": gpu.choose_split(n, mark, len(prefixes), most=gpu.MAX_EXPAND)}
    out = {"n": n, "units": units, "prefixes": len(prefixes)}
    for name, k in rows.items():
        records = len(expand_prefixes(prefixes, mark + k)) if k else len(prefixes)
        out[name] = (k, records, records / threads_held(n, mark + k))
    return out


def time_unit(n: int, rows: int) -> tuple[float, int]:
    """(seconds, weight) of unit 0 of n on the current device, expanded by ``rows`` rows
    (the sum's read-back waits for the device)."""
    _, prefixes = unit_zero(n)
    start = time.perf_counter()
    (weight,) = gpu.sum_prefixes_gpu(prefixes, expand=rows)
    return time.perf_counter() - start, weight


def node_spread(n: int, harness: Path, folder: Path) -> tuple[int, float, float]:
    """(records, largest / mean, 99.99th percentile / mean) of the nodes below each record
    at row 7 of n, by the kernel's search run on the host (the harness's file formats)."""
    records = expand_prefixes(enumerate_prefixes(n, 5), 7)
    source, target = folder / "records.bin", folder / "nodes.bin"
    with open(source, "wb") as f:
        f.write(b"NQPREF2\0")
        f.write(np.array([n, records.mark], dtype="<u4").tobytes())
        f.write(np.array([len(records)], dtype="<u8").tobytes())
        f.write(records.records().astype("<u4").tobytes())
    subprocess.run([str(harness), str(source), str(target), "0"], check=True)
    nodes = np.fromfile(target, dtype="<u8")[len(records):].astype(np.float64)  # after the weights
    mean = nodes.mean()
    return len(records), nodes.max() / mean, float(np.quantile(nodes, 0.9999)) / mean


def spread(nmin: int, nmax: int) -> None:
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as folder:
        harness = Path(folder) / "nqueens_nodes"
        subprocess.run(["nvcc", "-O2", "-std=c++17", "-DNQ_COUNT_NODES", "-o", str(harness),
                        str(root / "tests" / "native" / "nqueens_host_main.cu")], check=True)
        print("n records_at_row_7 largest/mean p99.99/mean (nodes below a record)")
        for n in range(nmin, nmax + 1):
            count, largest, p9999 = node_spread(n, harness, Path(folder))
            print(f"{n} {count} {largest:.2f} {p9999:.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Records per GPU work unit, and with --time each unit's seconds.")
    parser.add_argument("--nmin", type=int, default=20, help="The first n (at least 10).")
    parser.add_argument("--nmax", type=int, default=28, help="The last n (at most 32).")
    parser.add_argument("--time", action="store_true",
                        help="Also time unit 0 of each n on the GPU, expanded by two rows and by three.")
    parser.add_argument("--spread", action="store_true",
                        help="Instead, the nodes below each record at row 7 against the mean (nvcc, no GPU).")
    args = parser.parse_args(argv)
    if args.spread:
        if not 10 <= args.nmin <= args.nmax <= 20:
            parser.error("with --spread give 10 <= --nmin <= --nmax <= 20")
        spread(args.nmin, args.nmax)
        return 0
    if not 10 <= args.nmin <= args.nmax <= 32:
        parser.error("give 10 <= --nmin <= --nmax <= 32")
    if args.time:
        from bench.gpu_required import require_cupy

        require_cupy("gpu_unit_records")
        time_unit(10, 3)  # compile and load the kernels first
    print("n units prefixes/unit | before: rows records per_thread | now: rows records per_thread"
          + (" | seconds expanded by 2 rows, by 3" if args.time else ""))
    for n in range(args.nmin, args.nmax + 1):
        r = row(n)
        line = f"{n} {r['units']} {r['prefixes']}"
        for name in ("before", "now"):
            k, records, per_thread = r[name]
            line += f" | {k} {records} {per_thread:.2f}"
        if args.time:
            (two, weight2), (three, weight3) = time_unit(n, 2), time_unit(n, 3)
            line += f" | {two:.2f} {three:.2f}"
            if weight2 != weight3:  # the same unit: the same weight, however expanded
                print(line, flush=True)
                print(f"gpu_unit_records: error: n={n}: unit 0 weighs {weight2} expanded by two "
                      f"rows but {weight3} by three", file=sys.stderr)
                return 1
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
