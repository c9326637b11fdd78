"""Why CPU units are slow on Dask workers, and what gpuqueens' worker set-up does about it.

Dask's nanny starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536`` (the config key
``distributed.nanny.pre-spawn-environ``). glibc then also stops adapting its mmap
threshold, so every NumPy temporary above 128 KiB is a fresh ``mmap`` whose pages are
faulted in and zeroed again. This script times the same N-Queens CPU units

1. in a plain process (glibc's defaults), and with Dask's variable set,
2. in a Dask nanny worker as Dask configures it, solved directly,
3. in the same kind of worker through gpuqueens' ``WorkerSolve`` (what ``count(...,
   executor=client.get_executor())`` hands to Dask): it calls ``tune_malloc`` once,
4. in a plain process after ``tune_malloc``,

each in a fresh process, ``--repeat`` times in turn, and prints seconds per unit
(median over the runs of each run's median) and minor page faults per unit.

    python bench/dask_malloc.py --n 17 --units 4 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def time_units(n: int, count: int, tuned: bool) -> list[tuple[float, int]]:
    """Solve the first ``count`` units of n on the CPU here: (seconds, minor faults) each."""
    from gpuqueens.problems.nqueens.plan import plan_for, solve_unit, work_units
    from gpuqueens.workers import WorkerSolve

    solve = WorkerSolve(solve_unit, "cpu", coordinator=-1) if tuned else solve_unit
    timings = []
    for unit in work_units(plan_for(n, "cpu"), "cpu")[:count]:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        solve(unit.payload)
        timings.append((time.perf_counter() - start,
                        resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults))
    return timings


def environment_variable(name: str) -> str | None:
    return os.environ.get(name)  # (os.environ.get itself would carry this process's environ)


def in_dask_worker(n: int, count: int, tuned: bool) -> tuple[str | None, list[tuple[float, int]]]:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        env = client.submit(environment_variable, "MALLOC_TRIM_THRESHOLD_", pure=False).result()
        return env, client.submit(time_units, n, count, tuned, pure=False).result()


def in_plain_process(n: int, count: int, tuned: bool, trim: str | None = None) -> list[tuple[float, int]]:
    """Time units in a fresh process, with ``MALLOC_TRIM_THRESHOLD_=trim`` or without it.

    The variable is set or removed explicitly: a Dask nanny sets it in the environment of
    the process that starts the cluster too, and leaves it there.
    """
    env = {key: value for key, value in os.environ.items() if key != "MALLOC_TRIM_THRESHOLD_"}
    if trim is not None:
        env["MALLOC_TRIM_THRESHOLD_"] = trim
    code = (f"import json, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
            f"from dask_malloc import time_units; print(json.dumps(time_units({n}, {count}, {tuned})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    import json

    return [tuple(row) for row in json.loads(done.stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=17)
    parser.add_argument("--units", type=int, default=4, help="units timed in each process")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per setting")
    args = parser.parse_args()
    settings = {
        "plain process (glibc defaults)": lambda: in_plain_process(args.n, args.units, False),
        "plain process, MALLOC_TRIM_THRESHOLD_=65536": lambda: in_plain_process(args.n, args.units, False, "65536"),
        "Dask worker (nanny's MALLOC_TRIM_THRESHOLD_)": lambda: in_dask_worker(args.n, args.units, False)[1],
        "Dask worker, through WorkerSolve (tune_malloc)": lambda: in_dask_worker(args.n, args.units, True)[1],
        "plain process, tune_malloc": lambda: in_plain_process(args.n, args.units, True),
    }
    env = in_dask_worker(args.n, 1, False)[0]
    print(f"n={args.n}, {args.units} units per process, {args.repeat} processes per setting; "
          f"Dask sets MALLOC_TRIM_THRESHOLD_={env} in its workers")
    runs: dict[str, list[list[tuple[float, int]]]] = {name: [] for name in settings}
    for _ in range(args.repeat):  # in turn, so that a slow spell of the machine hits all
        for name, run in settings.items():
            runs[name].append(run())
    print(f"{'setting':<50} {'s per unit':>10} {'runs (median s)':>24} {'minor faults per unit':>22}")
    for name, results in runs.items():
        medians = [statistics.median(t for t, _ in result) for result in results]
        faults = statistics.median(f for result in results for _, f in result)
        print(f"{name:<50} {statistics.median(medians):>10.3f} "
              f"{' '.join(f'{m:.2f}' for m in medians):>24} {faults:>22,.0f}")


if __name__ == "__main__":
    main()
