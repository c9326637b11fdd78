"""Measure the CPU rate behind gpuqueens' N-Queens time estimates (problems/nqueens/estimate.py).

    python bench/nqueens_estimate_calibration.py 14 15 16 17 [--repeat 3]

Counts each n on the CPU in this process (one core, no checkpoint, no executor), ``--repeat``
times, and prints the fastest time of each n as the ``CPU_SECONDS`` mapping that
estimate.py holds, with the seconds per solution and the estimate the fitted model then
gives. Run it on an otherwise idle machine: the fastest of the repeats is kept because
other load only ever makes a run slower.
"""

from __future__ import annotations

import argparse
import time

import gpuqueens
from gpuqueens.problems.nqueens import estimate


def fastest_seconds(n: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        gpuqueens.count(n, backend="cpu", progress=False, recheck=0)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    gpuqueens.count(8, backend="cpu")  # imports and first-call costs out of the way
    measured = {}
    for n in args.n:
        measured[n] = fastest_seconds(n, args.repeat)
        per_solution = measured[n] / estimate.solution_count(n)
        model = estimate.estimated_seconds(n, "cpu")
        print(f"n={n}: {measured[n]:.3f} s  ({per_solution:.3e} s per solution; "
              f"the model in use says {model:.3f} s)", flush=True)
    print("CPU_SECONDS = {" + ", ".join(f"{n}: {s:.3f}" for n, s in measured.items()) + "}")


if __name__ == "__main__":
    main()
