"""Device benchmark of the gpuqueens CUDA N-Queens search (run on a machine with a GPU).

    python bench/gpu_nqueens.py --nmin 8 --nmax 21 [--repeats 3] [--plain-nodes-max 19] [--json FILE]
    python bench/gpu_nqueens.py --host-side --nmin 18 --nmax 23    # the host's share only, no GPU

For each n it prints one row:

n, total, unique
    the counts (checked against OEIS A000170 / A002562 where known).
prefixes, mark
    (--path direct) how many host prefixes the GPU searched and at which row.
--path
    ``api`` (default) times the public call ``gpuqueens.problems.nqueens.nqueens(n, backend="gpu")``
    with its own work plan; ``direct`` times ``enumerate_prefixes(n, mark)`` plus
    ``count_prefixes_gpu`` and ``count_symmetric_gpu``, the kernel path alone, and puts the
    median of each phase in the JSON rows (prefixes_s, kernel_s, symmetric_s).
cold s
    (n <= --cold-max) a fresh Python process with an empty CuPy kernel cache (CUPY_CACHE_DIR in a new temporary
    folder): importing gpuqueens and CuPy, compiling kernels/nqueens.cu with NVRTC,
    enumerating the prefixes and counting. Measured inside the child, so Python start-up
    is left out.
warm s
    after one warm-up count in this process (the smallest n, which compiles and loads the
    kernels): the first count of n if it took over --long-run-s, else the median of
    ``--repeats`` counts after it; each is the whole count including the host's prefix
    enumeration, and the GPU result is read back, so every run is synchronised.
sol/s
    total solutions divided by warm seconds.
plain nodes, nodes/s
    the work measure that is the same for every program compared: the number of queens
    placed by the plain, unreduced backtracking search (rows top to bottom, every
    non-attacking square tried, no symmetry pruning), i.e. the number of ways to place k
    non-attacking queens in rows 0..k-1, summed over k = 1..n. It is a fixed number for each
    n, whatever a program actually visits, so nodes/s = plain nodes / seconds compares
    programs (this one, the seed peer) on one scale. It is computed by an instrumented build
    of the same kernel (-DNQ_COUNT_NODES) running prefixes with no pruning rule (corner=1,
    b1=0); values for n <= 18 were measured with the host harness
    (tests/native/nqueens_host_main.cu, built with -DNQ_COUNT_NODES) and are listed in
    PLAIN_NODES, which the device run re-checks. Rows above --plain-nodes-max show "-"
    unless PLAIN_NODES has the value.

--budget-s S
    stop before an n whose row could end after S seconds from the start, taking a count of
    n to cost at most GROWTH times a count of n - 1 (an N-Queens count grows about 8 times
    per n); the rows so far are kept (the JSON file is rewritten after every row).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "tests"):  # run from a checkout without installing; tests/oeis.py
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from bench.gpu_required import require_cupy  # noqa: E402
from gpuqueens import MAX_N  # noqa: E402
from gpuqueens.problems.nqueens.gpu import DEFAULT_BLOCK_SIZE, WIDEST, _check_block_size  # noqa: E402
from gpuqueens.problems.nqueens.prefixes import Prefixes, default_mark, enumerate_prefixes  # noqa: E402

from oeis import A000170, A002562  # noqa: E402  (the published sequences the tests use)

TOTAL = [None, *A000170]  # index n
UNIQUE = [None, *A002562]

#: Queens placed by the plain unreduced backtracking search, measured with the host harness
#: (the n = 8 value plus the root is the classic 2057-node tree of the eight queens).
PLAIN_NODES: dict[int, int] = {
    4: 16, 5: 53, 6: 152, 7: 551, 8: 2056, 9: 8393, 10: 35538, 11: 166925, 12: 856188,
    13: 4674889, 14: 27358552, 15: 171129071, 16: 1141190302, 17: 8017021931,
    18: 59365844490,
}


# --- the unreduced search, for the node count ---------------------------------------------


def plain_prefixes(n: int, mark: int) -> tuple[Prefixes, int]:
    """Every placement of rows 0..mark-1 with no pruning rule, and the nodes above the mark.

    The prefixes carry corner=1 and b1=0, which the kernel searches with no rule at all
    (every leaf weighs 24). The second value counts the queens placed
    in rows 0..mark-1 (the nodes the GPU does not see).
    """
    full = (1 << n) - 1
    left = down = right = np.zeros(1, dtype=np.int64)
    cols = np.zeros((1, 0), dtype=np.uint8)
    nodes_above = 0
    for _ in range(mark):
        free = ~(left | down | right) & full
        # one child per (parent, free column), parents in order, columns ascending
        parent, col = np.nonzero((free[:, None] >> np.arange(n)) & 1)
        bit = np.int64(1) << col
        left = ((left[parent] | bit) << 1) & full
        down = down[parent] | bit
        right = (right[parent] | bit) >> 1
        cols = np.concatenate([cols[parent], col[:, None].astype(np.uint8)], axis=1)
        nodes_above += len(bit)
    size = len(left)
    prefixes = Prefixes(
        n, mark, left.astype(np.uint32), down.astype(np.uint32), right.astype(np.uint32), cols,
        np.zeros(size, np.uint8), np.ones(size, np.uint8),
    )
    return prefixes, nodes_above


def plain_nodes_gpu(n: int) -> int:
    """Plain search node count for n, on the GPU with the instrumented kernel build."""
    from gpuqueens.problems.nqueens.gpu import sum_prefixes_gpu

    mark = min(n - 1, 5)
    prefixes, above = plain_prefixes(n, mark)
    weight, below = sum_prefixes_gpu(prefixes, count_nodes=True)
    solutions = weight // 24  # every leaf weighs 24 in the plain search
    if n < len(TOTAL) and solutions != TOTAL[n]:
        raise AssertionError(f"plain search found {solutions} solutions for n={n}, not {TOTAL[n]}")
    return above + below


# --- timing --------------------------------------------------------------------------------


def count_once(n: int, mark: int, path: str) -> tuple[int, int, int | None]:
    """One GPU count: (total, unique, prefixes searched or None).

    ``path="api"`` times the public call (``gpuqueens.problems.nqueens.nqueens(n, backend="gpu")``:
    its own work plan, prefix expansion, runner); ``path="direct"`` times
    ``enumerate_prefixes(n, mark)`` plus ``count_prefixes_gpu`` on them, the kernel path alone.
    """
    if path == "api":
        from gpuqueens.problems.nqueens import nqueens

        result = nqueens(n, backend="gpu", progress=False)
        return result.total, result.unique, None
    from gpuqueens.problems.nqueens.gpu import count_prefixes_gpu, count_symmetric_gpu
    from gpuqueens.problems.nqueens.plan import SYMMETRIC_UNIT, combine

    start = time.perf_counter()
    prefixes = enumerate_prefixes(n, mark)
    enumerated = time.perf_counter()
    weight = count_prefixes_gpu(prefixes, split=SPLIT, expand=EXPAND, block_size=BLOCK_SIZE)  # upload, kernel, read-back
    counted = time.perf_counter()
    symmetric = count_symmetric_gpu(n)  # host prefixes, kernel, read-back
    PHASES.append({"prefixes_s": enumerated - start, "kernel_s": counted - enumerated,
                   "symmetric_s": time.perf_counter() - counted})
    total, unique = combine({"u0": (weight, 0, 0), SYMMETRIC_UNIT: (0, *symmetric)})
    return total, unique, len(prefixes)


#: (path direct) the phases of each timed run: host prefixes, the main search, the symmetric one
PHASES: list[dict] = []
#: (path direct) rows the device splits each prefix by into work items; None: the default
#: (the prefixes expanded on the device by ``choose_split``'s rows)
SPLIT: int | None = None
#: (path direct) rows the device expands the prefixes by; None: ``choose_split``'s rows
EXPAND: int | None = None
#: (path direct) threads per block of the search, or "widest" (gpu.widest_block_size)
BLOCK_SIZE: int | str = DEFAULT_BLOCK_SIZE


def warm_seconds(n: int, mark: int, path: str, repeats: int, long_run_s: float):
    """(seconds, result, counts run): the wall time of the first count of n if it took
    longer than `long_run_s` (long runs vary little and GPU time is dear), else the
    median of `repeats` counts after it. The kernels must be loaded already (:func:`warm_up`)."""
    PHASES.clear()
    start = time.perf_counter()
    result = count_once(n, mark, path)
    first = time.perf_counter() - start
    if first > long_run_s:
        return first, result, 1
    PHASES.clear()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        again = count_once(n, mark, path)
        times.append(time.perf_counter() - start)
        if again != result:
            raise AssertionError(f"n={n}: repeated run gave {again}, first gave {result}")
    return statistics.median(times), result, 1 + repeats


def warm_up(n: int, mark: int, path: str) -> None:
    """One untimed count, so that compiling and loading the kernels is in no timed run."""
    from gpuqueens.kernels import load_module

    load_module("nqueens.cu")
    load_module("nqueens_symmetric.cu")
    count_once(n, mark, path)
    PHASES.clear()


#: A count of n costs at most this many times a count of n - 1 (--budget-s): an N-Queens
#: count grows by 6-9x per n from n = 12 on; smaller ones are milliseconds.
GROWTH = 9


def next_row_seconds(previous: dict, previous_s: float, args) -> float:
    """At most how long the next n's row takes, from the row before it (`previous`, which
    took `previous_s`): as many counts as :func:`warm_seconds` will run, each GROWTH times
    the last, and the rest of the row (a cold process, the plain search) GROWTH times the
    rest of the row before."""
    count_s = GROWTH * previous["warm_s"]
    counts = 1 if count_s > args.long_run_s else 1 + args.repeats
    rest = max(0.0, previous_s - previous["warm_s"] * previous["warm_runs"])
    return counts * count_s + GROWTH * rest


def cold_seconds(n: int, mark: int, path: str) -> float:
    """Time of the first count in a fresh process with an empty kernel cache."""
    with tempfile.TemporaryDirectory(prefix="gpuqueens-cold-") as cache:
        env = dict(os.environ, CUPY_CACHE_DIR=cache)
        child = subprocess.run(
            [sys.executable, __file__, "--cold-child", str(n), "--mark", str(mark), "--path", path,
             *(["--split", str(SPLIT)] if SPLIT is not None else []),
             *(["--expand", str(EXPAND)] if EXPAND is not None else []),
             "--block-size", str(BLOCK_SIZE)],
            env=env, capture_output=True, text=True,
        )
    if child.returncode != 0:
        tail = "\n".join(child.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"n={n}: the cold process failed (exit {child.returncode}):\n{tail}")
    return float(json.loads(child.stdout.strip().splitlines()[-1])["seconds"])


def _cold_child(n: int, mark: int, path: str) -> None:
    start = time.perf_counter()
    import cupy  # noqa: F401  (its import is part of a cold start)

    total, unique, _ = count_once(n, mark, path)
    print(json.dumps({"n": n, "seconds": time.perf_counter() - start, "total": total, "unique": unique}))


# --- the host's share of the public call, measured without a GPU ----------------------------


def host_side_seconds(n: int, repeats: int = 5) -> float:
    """Best of `repeats` wall times of ``nqueens(n, backend="gpu")`` with the device's work
    replaced by the host's share of it: each unit's records and one copy of them, the
    symmetric search's prefixes and records. Runs anywhere (no CuPy); the counts it returns
    are not checked."""
    import gpuqueens.problems.nqueens as api
    from gpuqueens.problems.nqueens import gpu, gpu_check
    from gpuqueens.problems.nqueens.symmetric import symmetric_work

    def prefix_unit(prefixes, **options):
        np.copy(prefixes.records())
        return 0

    def symmetric_unit(n, **options):
        np.copy(symmetric_work(n, gpu.SYMMETRIC_TARGET_PREFIXES).records())
        return 0, 0

    from gpuqueens import workers

    saved = (gpu.count_prefixes_gpu, gpu.count_symmetric_gpu, api.combine, api.choose_backend,
             workers.device_name, workers.prepare_process, gpu_check.check_device)
    gpu.count_prefixes_gpu, gpu.count_symmetric_gpu = prefix_unit, symmetric_unit
    gpu_check.check_device = lambda: None  # (once per process on a GPU: not the share of a count)
    api.combine, api.choose_backend = (lambda results: (0, 0)), (lambda *args, **options: "gpu")
    workers.device_name = lambda backend: "-"
    workers.prepare_process = lambda backend, **options: None  # no CUDA probe: no GPU needed
    try:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            api.nqueens(n, backend="gpu", progress=False, workers=1)  # this process only
            times.append(time.perf_counter() - start)
        return min(times)
    finally:
        (gpu.count_prefixes_gpu, gpu.count_symmetric_gpu, api.combine, api.choose_backend,
         workers.device_name, workers.prepare_process, gpu_check.check_device) = saved


# --- table ---------------------------------------------------------------------------------


def _fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3e}"


def block_size_arg(text: str) -> int | str:
    """--block-size: a multiple of 32 from 32 to 1024, or "widest".

    >>> block_size_arg("256"), block_size_arg("widest")
    (256, 'widest')
    """
    try:  # the library's own rule
        return _check_block_size(text if text == WIDEST else int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a multiple of 32 from 32 to 1024, or {WIDEST!r}") from None


def mark_for(n: int, args) -> int:
    """The prefix row of n: --mark, else default_mark(n), kept inside 2..n-1."""
    return max(2, min(args.mark if args.mark else default_mark(n), n - 1))


def fits_cut(n: int, args) -> bool:
    """Whether n's prefix row leaves room for --split or --expand: mark + rows <= n - 1."""
    rows = args.split if args.split is not None else args.expand
    return rows is None or mark_for(n, args) + rows <= n - 1


def bench_row(n: int, args) -> dict:
    mark = mark_for(n, args)
    warm, (total, unique, count), runs = warm_seconds(n, mark, args.path, args.repeats, args.long_run_s)
    if n < len(TOTAL) and (total, unique) != (TOTAL[n], UNIQUE[n]):
        raise AssertionError(f"n={n}: counted {(total, unique)}, OEIS says {(TOTAL[n], UNIQUE[n])}")
    cold = None if args.no_cold or n > args.cold_max else cold_seconds(n, mark, args.path)
    nodes = PLAIN_NODES.get(n)
    if n <= args.plain_nodes_max:
        measured = plain_nodes_gpu(n)
        if nodes is not None and measured != nodes:
            raise AssertionError(f"n={n}: plain nodes {measured} on the GPU, {nodes} on the host")
        nodes = measured
    phases = {key: statistics.median(p[key] for p in PHASES) for key in PHASES[0]} if PHASES else {}
    return phases | {
        "n": n, "total": total, "unique": unique, "path": args.path,
        "prefixes": count, "mark": mark if args.path == "direct" else None,
        "cold_s": cold, "warm_s": warm, "warm_runs": runs, "solutions_per_s": total / warm if warm > 0 else None,
        "plain_nodes": nodes, "nodes_per_s": nodes / warm if nodes and warm > 0 else None,
    }


HEADER = f"{'n':>3} {'total':>16} {'unique':>15} {'prefixes':>9} {'mark':>4} {'cold s':>8} {'warm s':>9} {'sol/s':>10} {'plain nodes':>17} {'nodes/s':>10}"


def format_row(r: dict) -> str:
    cold = "-" if r["cold_s"] is None else f"{r['cold_s']:.2f}"
    nodes = "-" if r["plain_nodes"] is None else str(r["plain_nodes"])
    prefixes = "-" if r["prefixes"] is None else str(r["prefixes"])
    mark = "-" if r["mark"] is None else str(r["mark"])
    return (f"{r['n']:>3} {r['total']:>16} {r['unique']:>15} {prefixes:>9} {mark:>4} "
            f"{cold:>8} {r['warm_s']:>9.4f} {_fmt_rate(r['solutions_per_s']):>10} {nodes:>17} "
            f"{_fmt_rate(r['nodes_per_s']):>10}")


def device_line() -> str:
    from gpuqueens.backends import device_name

    return device_name("gpu")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nmin", type=int, default=8)
    parser.add_argument("--nmax", type=int, default=21)
    parser.add_argument("--repeats", type=int, default=3, help="warm runs per n (median)")
    parser.add_argument("--path", choices=("api", "direct"), default="api",
                        help="api: the public gpuqueens call; direct: prefixes + count_prefixes_gpu")
    parser.add_argument("--mark", type=int, default=0,
                        help="prefix row for --path direct (default: default_mark(n))")
    parser.add_argument("--split", type=int, choices=(0, 1, 2), default=None,
                        help="rows the device splits each prefix by into work items, for --path "
                             "direct (default: none; the prefixes are expanded on the device by "
                             "choose_split's rows instead); e.g. --split 2 against the default "
                             "compares the split's work items with the expanded records")
    parser.add_argument("--expand", type=int, choices=(0, 1, 2, 3), default=None,
                        help="rows the device expands the prefixes by before the search, for --path "
                             "direct (default: choose_split's rows); e.g. --expand 3 starts the "
                             "search a row deeper than the default from n = 15 on: a smaller stack "
                             "per thread, more warps per SM")
    parser.add_argument("--block-size", type=block_size_arg, default=DEFAULT_BLOCK_SIZE,
                        help=f"threads per block of the search, for --path direct (default "
                             f"{DEFAULT_BLOCK_SIZE}), or 'widest': the size at which the device holds "
                             f"the most search threads at once (e.g. 512 at n = 21: 1024 threads an "
                             f"H100 SM instead of 896)")
    parser.add_argument("--short-launches", action="store_true",
                        help="run as on a GPU whose driver stops long kernels (one that drives a "
                             "display): launches of about a quarter of a second, the search from "
                             "3 rows below the prefixes; times that path's cost on any GPU")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-process timing")
    parser.add_argument("--cold-max", type=int, default=18, help="largest n timed cold")
    parser.add_argument("--long-run-s", type=float, default=5.0,
                        help="a warm-up longer than this is followed by one timed run, not --repeats")
    parser.add_argument("--plain-nodes-max", type=int, default=19,
                        help="largest n whose plain-search node count is measured on the GPU")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="stop before an n that could end after this many seconds "
                             f"(a count of n taken as at most {GROWTH}x one of n - 1)")
    parser.add_argument("--host-side", action="store_true",
                        help="only time the host's share of the public call, device stubbed out (no GPU needed)")
    parser.add_argument("--cold-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    global SPLIT, EXPAND, BLOCK_SIZE
    SPLIT, EXPAND, BLOCK_SIZE = args.split, args.expand, args.block_size
    for name in ("split", "expand"):
        if getattr(args, name) is not None and args.path != "direct":
            parser.error(f"--{name} goes with --path direct")
    if args.block_size != DEFAULT_BLOCK_SIZE and args.path != "direct":
        parser.error("--block-size goes with --path direct")
    if args.short_launches and not args.no_cold:
        parser.error("--short-launches goes with --no-cold (a cold process runs the usual launches)")
    if args.split is not None and args.expand is not None:
        parser.error("--split and --expand are two ways to cut the work: give one")
    for name in ("nmin", "nmax"):
        if not 1 <= getattr(args, name) <= MAX_N:
            parser.error(f"--{name} {getattr(args, name)} is outside 1..{MAX_N} (the boards gpuqueens counts)")
    if args.nmin > args.nmax:
        parser.error(f"--nmin {args.nmin} is above --nmax {args.nmax}")
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: at least 1 timed run per n")
    boards = [n for n in range(args.nmin, args.nmax + 1) if fits_cut(n, args)]
    if not boards:
        cut = "split" if args.split is not None else "expand"
        parser.error(f"--{cut} {getattr(args, cut)}: no n in {args.nmin}..{args.nmax} leaves "
                     f"room below its mark row (mark + rows <= n - 1)")
    if args.cold_child is not None:
        _cold_child(args.cold_child, args.mark, args.path)
        return 0
    if args.host_side:
        import warnings

        warnings.simplefilter("ignore")  # the long-run estimate of n >= 23
        for n in range(args.nmin, args.nmax + 1):
            print(f"n={n}: host side of nqueens(n, backend='gpu') {1e3 * host_side_seconds(n):.1f} ms", flush=True)
        return 0
    require_cupy("gpu_nqueens")
    if args.short_launches:
        import gpuqueens.kernels

        gpuqueens.kernels._stops_long_kernels = lambda device_id: True  # before any launch asks
    split = "" if args.split is None else f", split={args.split}"
    split += "" if args.expand is None else f", expand={args.expand}"
    split += "" if args.block_size == DEFAULT_BLOCK_SIZE else f", block_size={args.block_size}"
    split += ", short launches" if args.short_launches else ""
    print(f"# gpuqueens N-Queens on {device_line()}, path={args.path}{split}")
    if boards[0] > args.nmin:
        skipped = f"{args.nmin}..{boards[0] - 1}" if boards[0] - 1 > args.nmin else f"{args.nmin}"
        print(f"# n={skipped} skipped: no room below the mark row for the cut")
    print(HEADER, flush=True)
    start = time.perf_counter()
    warm_up(boards[0], mark_for(boards[0], args), args.path)
    rows: list[dict] = []
    write_rows(args.json, rows)
    next_s = 0.0  # at most how long the next row takes
    for n in boards:
        spent = time.perf_counter() - start
        if args.budget_s is not None and spent + next_s > args.budget_s:
            print(f"# n={n}..{args.nmax} skipped: n={n} may take {next_s:.0f} s, "
                  f"{max(0.0, args.budget_s - spent):.0f} s of --budget-s {args.budget_s:g} left",
                  flush=True)
            break
        row_start = time.perf_counter()
        rows.append(bench_row(n, args))
        next_s = next_row_seconds(rows[-1], time.perf_counter() - row_start, args)
        print(format_row(rows[-1]), flush=True)
        write_rows(args.json, rows)
    return 0


def write_rows(path: Path | None, rows: list[dict]) -> None:
    """Write the rows so far, whole or not at all: a run stopped from outside (a time limit)
    keeps what it measured."""
    if path is not None:
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(rows, indent=1))
        partial.replace(path)


if __name__ == "__main__":
    sys.exit(main())
