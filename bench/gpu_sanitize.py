"""Small runs of every gpuqueens kernel on the GPU, each against the CPU, for a memory checker.

    compute-sanitizer --tool memcheck --error-exitcode 99 python bench/gpu_sanitize.py --tool memcheck
    compute-sanitizer --tool racecheck --error-exitcode 99 python bench/gpu_sanitize.py --tool racecheck
    python bench/gpu_sanitize.py            # every case without the sanitizer, in seconds

Each case launches one or more of the kernels in kernels/*.cu (named on its line) on inputs
small enough for the sanitizer's slowdown, and compares the result with the CPU's (the NumPy
twins, or OEIS): N-Queens whole counts through the public call with the device's split of
0, 1 and 2 rows, per-prefix weights (``nqueens_count_each``), the rotation-symmetric search
per prefix, the matchstick transfer kernel (``matchsticks_pass``, ``matchsticks_join``), the
puzzle table's pairing (``matchstick_join_pairs``) and problem 2's exact join. CuPy's memory
pools are turned off first, so that every array is an allocation of its own whose bounds the
memory checker sees (inside a pool, a read past an array's end lands in the pool's next block
and goes unseen). Prints one line per case and exits 1 if any result differs or any case
fails.

``--tool`` runs the cases meant for that checker, cheapest first, so that a checker stopped
by a time limit has covered every kernel before the larger inputs. Racecheck looks only at
shared memory, which only our kernels share between threads here, and slows a kernel that
uses it much more than memcheck does (the 4×4 table's pairing: 54 s against 5 s on an H200, 2026-11-27):
it gets the N-Queens and transfer cases and the 3×3 table, not the CuPy-only sweep or the
larger joins. (Racecheck also reports hazards inside CuPy's own ``nonzero`` scan kernel,
``cupy_nonzero_kernel_incomplete_scan``; they are CuPy's, not ours, and change no result.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "tests"):  # run from a checkout without installing; tests/oeis.py
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from bench.gpu_required import require_cupy  # noqa: E402

import oeis  # noqa: E402  (the published sequences the tests use)


def nqueens_public(n: int):
    """The public call on the GPU (one process), against OEIS."""
    import gpuqueens

    result = gpuqueens.nqueens(n, backend="gpu", workers=1, progress=False)
    return (result.total, result.unique), (oeis.total(n), oeis.unique(n))


def nqueens_per_prefix(n: int, mark: int, split: int):
    """Each prefix's weight on the device against the NumPy search's."""
    from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu
    from gpuqueens.problems.nqueens.gpu import count_prefixes_gpu
    from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes

    prefixes = enumerate_prefixes(n, mark)
    return (count_prefixes_gpu(prefixes, per_prefix=True, split=split).tolist(),
            np.asarray(count_prefixes_cpu(prefixes, per_prefix=True)).tolist())


def symmetric_per_prefix(n: int):
    """The rotation-symmetric search below each prefix, device against NumPy."""
    from gpuqueens.problems.nqueens.gpu import SYMMETRIC_TARGET_PREFIXES, count_symmetric_prefixes_gpu
    from gpuqueens.problems.nqueens.symmetric import count_symmetric_below, symmetric_work

    prefixes = symmetric_work(n, SYMMETRIC_TARGET_PREFIXES)
    gpu = count_symmetric_prefixes_gpu(prefixes, per_prefix=True)
    cpu = count_symmetric_below(prefixes, per_prefix=True)
    return [a.tolist() for a in gpu], [np.asarray(a).tolist() for a in cpu]


def matchstick_distribution(m: int, n: int):
    """Problem 1's whole distribution: the evaluation kernel against the CPU transfer."""
    from gpuqueens.problems.matchsticks.gpu import count_by_removed_gpu
    from gpuqueens.problems.matchsticks.transfer import count_by_removed

    return count_by_removed_gpu(m, n), count_by_removed(m, n)


def matchstick_table(m: int):
    """The puzzle table (the pairing kernel), GPU against CPU."""
    import gpuqueens

    return (gpuqueens.matchstick_table(m, m, backend="gpu", workers=1, progress=False).rows,
            gpuqueens.matchstick_table(m, m, backend="cpu", workers=1, progress=False).rows)


def matchsticks_by_squares(m: int, removed: int, squares: int):
    """Problem 2 (exact join on the device), GPU against CPU."""
    import gpuqueens

    return tuple(gpuqueens.matchsticks(m, m, removed=removed, squares=squares, backend=backend)
                 for backend in ("gpu", "cpu"))


#: Both checkers, or memcheck only (see the module docstring).
BOTH = ("memcheck", "racecheck")
MEMCHECK = ("memcheck",)

#: (what, kernels it launches, the checkers it is meant for, the check): small enough for a
#: sanitizer's slowdown, cheapest first within each checker's share.
CASES = [
    ("nqueens(8), split 0", "nqueens_count, nqueens_symmetric", BOTH, lambda: nqueens_public(8)),
    ("nqueens(14), split 1", "nqueens_count, nqueens_symmetric", BOTH, lambda: nqueens_public(14)),
    ("nqueens(15), split 2", "nqueens_count, nqueens_symmetric", BOTH, lambda: nqueens_public(15)),
    ("n=11 per prefix at row 5, split 2", "nqueens_count_each", BOTH, lambda: nqueens_per_prefix(11, 5, 2)),
    ("n=13 per prefix at row 4, split 0", "nqueens_count_each", BOTH, lambda: nqueens_per_prefix(13, 4, 0)),
    ("n=12 symmetric per prefix", "nqueens_symmetric_each", BOTH, lambda: symmetric_per_prefix(12)),
    ("n=13 symmetric per prefix", "nqueens_symmetric_each", BOTH, lambda: symmetric_per_prefix(13)),
    ("matchsticks 4x5 by R", "matchsticks_pass, matchsticks_join", BOTH, lambda: matchstick_distribution(4, 5)),
    ("matchsticks 6x9 by R", "matchsticks_pass, matchsticks_join", BOTH, lambda: matchstick_distribution(6, 9)),
    ("table 3x3", "matchstick_join_pairs", ("racecheck",), lambda: matchstick_table(3)),
    ("table 4x4", "matchstick_join_pairs", MEMCHECK, lambda: matchstick_table(4)),
    ("6x6 R=19 S=0 (exact join)", "matchstick_join_pairs", MEMCHECK, lambda: matchsticks_by_squares(6, 19, 0)),
    ("5x5 R=12 S=3 (whole-grid sweep)", "CuPy arrays only", MEMCHECK, lambda: matchsticks_by_squares(5, 12, 3)),
    ("table 5x5", "matchstick_join_pairs", MEMCHECK, lambda: matchstick_table(5)),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=BOTH, help="only the cases meant for this checker (default: all)")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.tool is None or args.tool in c[2]]
    require_cupy("gpu_sanitize")
    import cupy

    cupy.cuda.set_allocator(None)  # every array its own cudaMalloc: see the module docstring
    cupy.cuda.set_pinned_memory_allocator(None)
    failed = 0
    for what, kernels, _, check in cases:
        start = time.perf_counter()
        try:
            got, want = check()
        except Exception as error:  # the next cases still run: one failure hides no other
            failed += 1
            print(f"FAIL {what:<36} {kernels:<36} {type(error).__name__}: {error}", flush=True)
            continue
        ok = got == want
        failed += not ok
        print(f"{'ok  ' if ok else 'DIFF'} {what:<36} {kernels:<36} {time.perf_counter() - start:7.2f} s",
              flush=True)
        if not ok:
            print(f"     GPU {str(got)[:300]}\n     CPU {str(want)[:300]}", flush=True)
    print(f"{len(cases) - failed} of {len(cases)} cases agree with the CPU")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
