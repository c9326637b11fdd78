"""Device benchmark of problem 1 on the GPU: whole distributions through kernels/matchsticks.cu.

On a machine with an NVIDIA GPU (CUDA 12 or 13 driver), from a checkout of gpuqueens:

    python -m venv .venv && . .venv/bin/activate
    pip install -e ".[cuda12]"          # or ".[cuda13]", matching the driver
    python bench/gpu_matchsticks.py --json gpu_matchsticks.json

runs the squares 10×10 .. 18×18 and 20×20 (``--grids 10-18,20``; any MxN too) and prints,
for each grid, one JSON line and at the end a table:

first s
    the first call in this process, with two check primes (below): includes compiling the
    kernel with NVRTC (CuPy caches it on disk, so only a machine's very first run pays that).
warm s
    median of ``--repeats`` further calls (the counts are read back, so each is complete).
projected s
    what :func:`gpuqueens.problems.matchsticks.transfer_work.method_cost` expects on one H100, for
    comparison; floors mem/ops: the two numbers (bytes moved / 3.0 TB/s, instructions /
    issue rate) behind it.
peak GB
    device memory held by CuPy's pool after the call (its blocks stay allocated).
check
    how the counts were checked: ``cpu`` (the coefficient transfer on the CPU, up to a
    shorter side of ``--cpu-max``), ``cupy`` (the coefficient transfer run with CuPy arrays
    on the GPU: an independent method, up to ``--cupy-max``), and for every grid
    ``primes+2`` (two more primes than needed: the counts must agree with them) and the
    known ends of the distribution (R = 0: 1; R = E: 1; E-3 <= R < E: 0; R = E-4: the unit
    squares). A failed check stops the script.

The ``--json`` file keeps each distribution (``counts``, as decimal strings), which
``python bench/cpu_check_distributions.py FILE`` checks on any machine's CPU at random points.

``--memory-gb X`` sizes the batches of lanes as on a card with X GB of free memory (at most
what this one has), e.g. ``--grids 20 --repeats 0 --memory-gb 75`` for 20×20 on an 80 GB
card measured on a larger one; the peak then stays near X.

Before spending GPU time, dry-run it on the CuPy stand-in (nvcc needed; times mean
nothing): ``python tests/fake_gpu_run.py bench/gpu_matchsticks.py --grids 3-5 --repeats 1``.
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
from gpuqueens.problems.matchsticks.transfer_work import H100, evaluation_work, method_cost  # noqa: E402
from gpuqueens.problems.matchsticks.grid import stick_count  # noqa: E402
from gpuqueens.problems.matchsticks.transfer import MAX_GPU_TRANSFER_SHORT_SIDE, count_by_removed  # noqa: E402


def check_ends(m: int, n: int, counts: list[int]) -> None:
    sticks = stick_count(m, n)
    assert len(counts) == sticks + 1 and counts[0] == 1 and counts[-1] == 1
    assert counts[-4:-1] == [0, 0, 0] and counts[-5] == m * n, "the distribution's ends are wrong"


def peak_bytes(cupy) -> int | None:
    pool = getattr(cupy, "get_default_memory_pool", None)
    return None if pool is None else int(pool().total_bytes())


def cap_free_memory(limit: int) -> None:
    """Make the GPU transfer size its batches of lanes for at most ``limit`` free bytes, as
    on a smaller card (the library reads the free memory through this one function)."""
    from gpuqueens.problems.matchsticks import gpu

    free = gpu.device_free_bytes
    gpu.device_free_bytes = lambda xp: min(free(xp), limit)


def run_grid(cupy, m: int, n: int, args) -> dict:
    from gpuqueens.problems.matchsticks.gpu import count_by_removed_gpu

    pool = getattr(cupy, "get_default_memory_pool", None)
    if pool is not None:
        pool().free_all_blocks()
    start = time.perf_counter()
    counts = count_by_removed_gpu(m, n, check_primes=2)
    first = time.perf_counter() - start
    peak = peak_bytes(cupy)
    check_ends(m, n, counts)
    checks = ["primes+2", "ends"]
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        again = count_by_removed_gpu(m, n)
        times.append(time.perf_counter() - start)
        assert again == counts, f"{m}×{n}: a warm run gave other counts"
    if min(m, n) <= args.cpu_max:
        assert count_by_removed(m, n) == counts, f"{m}×{n}: GPU and CPU differ"
        checks.append("cpu")
    if min(m, n) <= args.cupy_max:
        assert count_by_removed(m, n, xp=cupy) == counts, f"{m}×{n}: kernel and CuPy transfer differ"
        checks.append("cupy")
    work = evaluation_work(m, n)
    memory_floor, compute_floor = work.floors(H100)
    return {"grid": f"{m}x{n}", "sticks": stick_count(m, n), "primes": work.primes, "lanes": work.lanes,
            "first_s": first, "warm_s": statistics.median(times) if times else first,
            "projected_s": method_cost(m, n, "gpu").seconds, "memory_floor_s": memory_floor,
            "compute_floor_s": compute_floor, "peak_bytes": peak, "checks": checks,
            "total": str(sum(counts)), "largest": str(max(counts)), "memory_gb": args.memory_gb,
            "counts": [str(c) for c in counts]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grids", type=parse_grids, default="10-18,20",
                        help="e.g. 10-18,20 or 4x9,12x30")
    parser.add_argument("--repeats", type=int, default=3, help="warm runs after the first")
    parser.add_argument("--cpu-max", type=int, default=11, help="check on the CPU up to this short side")
    parser.add_argument("--cupy-max", type=int, default=16, help="check with the CuPy transfer up to this")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--memory-gb", type=float, default=None,
                        help="size the batches as on a card with this much free memory (GB)")
    args = parser.parse_args(argv)
    if args.memory_gb is not None and args.memory_gb <= 0:
        parser.error(f"--memory-gb must be positive, got {args.memory_gb}")
    beyond = [f"{m}x{n}" for m, n in args.grids if min(m, n) > MAX_GPU_TRANSFER_SHORT_SIDE]
    if beyond:
        parser.error(f"--grids {','.join(beyond)}: the GPU transfer is limited to a shorter side "
                     f"of {MAX_GPU_TRANSFER_SHORT_SIDE}")
    require_cupy("gpu_matchsticks")

    import cupy

    if args.memory_gb is not None:
        cap_free_memory(int(args.memory_gb * 1e9))

    from gpuqueens.backends import device_name

    print(f"device: {device_name('gpu')}", flush=True)
    rows = []
    for m, n in args.grids:
        row = run_grid(cupy, m, n, args)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "counts"}), flush=True)  # counts: --json only
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    print(f"\n{'grid':>6} {'primes':>6} {'first s':>8} {'warm s':>8} {'proj s':>7} {'mem fl':>7} "
          f"{'ops fl':>7} {'peak GB':>7}  checks")
    for r in rows:
        peak = "-" if r["peak_bytes"] is None else f"{r['peak_bytes'] / 1e9:.1f}"
        print(f"{r['grid']:>6} {r['primes']:>6} {r['first_s']:8.2f} {r['warm_s']:8.2f} {r['projected_s']:7.2f} "
              f"{r['memory_floor_s']:7.2f} {r['compute_floor_s']:7.2f} {peak:>7}  {','.join(r['checks'])}")


if __name__ == "__main__":
    main()
