"""Measure the CPU rate behind gpuqueens' N-Queens time estimates (problems/nqueens/estimate.py).

    python bench/nqueens_estimate_calibration.py 14 15 16 17 [--repeat 3]

Counts each n on the CPU in this process (one core, no checkpoint, no executor), ``--repeat``
times, and prints, for each n, the fastest wall-clock time and the fastest CPU time of the
process (``time.process_time``: the NumPy search runs on one thread, so on an idle machine
the two agree, and on a busy one the CPU time still measures the work of one core), the
CPU seconds per solution, and what the model in use says. The last line is the ``"cpu"``
entry of ``MEASURED_SECONDS`` in estimate.py, from the CPU times.
"""

from __future__ import annotations

import argparse
import time

import gpuqueens
from gpuqueens.problems.nqueens import estimate


def fastest_seconds(n: int, repeat: int) -> tuple[float, float]:
    """The fastest wall-clock and the fastest CPU seconds of ``repeat`` counts of n."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        gpuqueens.count(n, backend="cpu", progress=False, recheck=0)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    gpuqueens.count(8, backend="cpu")  # imports and first-call costs out of the way
    measured = {}
    for n in args.n:
        wall, measured[n] = fastest_seconds(n, args.repeat)
        per_solution = measured[n] / estimate.solution_count(n)
        model = estimate.estimated_seconds(n, "cpu")
        print(f"n={n}: wall {wall:.3f} s, CPU {measured[n]:.3f} s ({per_solution:.3e} s per "
              f"solution; the model in use says {model:.3f} s)", flush=True)
    print('"cpu": {' + ", ".join(f"{n}: {s:.3f}" for n, s in measured.items()) + "},")


if __name__ == "__main__":
    main()
