"""Check gpuqueens' worker processes on a GPU machine: pinning by device, fork safety, totals.

    python bench/device_workers.py [--n 20] [--json workers.json]

Run from a checkout (or with gpuqueens installed) on a machine with CuPy and at least one
GPU. Each step prints one line, and ``--json`` keeps them all. The steps, in this order
(everything that needs this process free of CUDA comes before anything initialises it):

1. ``probe``: the GPUs that a fresh process sees (names, PCI addresses); this process has
   not initialised CUDA.
2. ``driver``: in a fresh process, ``cupy.cuda.driver.ctxGetCurrent()`` fails with
   ``CUDA_ERROR_NOT_INITIALIZED`` before CUDA is initialised and works after: the test
   gpuqueens uses to tell whether CUDA is initialised, checked on this driver.
3. ``pinning``: gpuqueens' own worker pool, max(2, GPUs) processes; each reports its
   ``CUDA_VISIBLE_DEVICES`` and the PCI address of the device CUDA gives it, which must
   be the probe's address for that device.
4. ``fork pool``: ``nqueens(n, backend="gpu", executor=ProcessPoolExecutor(2))`` with the
   ``fork`` start method (Linux's default up to Python 3.13): exact, and this process
   still free of CUDA.
5. ``workers=2``: two gpuqueens worker processes (on one GPU they share it).
6. ``default``: ``nqueens(n)``: one process per GPU on several GPUs from n=22 (a count is
   long from n=21, ``POOL_MIN_N["gpu"]``, but its plan has one unit up to n=21 and no more
   processes than units start), else this process (which then initialises CUDA).
7. ``refused``: with CUDA now initialised here, a new fork pool is refused with
   ``CUDAForkError`` before any worker starts; the time until the refusal.
8. ``raw fork failure``: for reference, what CUDA itself says in such a forked worker when
   gpuqueens' checks are bypassed (the search called directly).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "tests"):  # run from a checkout without installing; tests/oeis.py
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import gpuqueens  # noqa: E402
from gpuqueens import _probe, backends, fork_safety, workers  # noqa: E402
from oeis import total as oeis_total  # noqa: E402

DRIVER_CHECK = """
import json, cupy
def initialised():
    try:
        cupy.cuda.driver.ctxGetCurrent()
        return True
    except Exception as exc:
        return repr(exc)
before = initialised()
cupy.cuda.runtime.getDeviceCount()
print(json.dumps({"before": before, "after": initialised()}))
"""


def where_am_i(folder: str, expected: int) -> dict:
    """In a worker: wait until ``expected`` workers have arrived (so each task runs in its
    own process), then say which device CUDA gives this process."""
    Path(folder, str(os.getpid())).touch()
    deadline = time.monotonic() + 300
    while len(os.listdir(folder)) < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"pid": os.getpid(), "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "pci": _probe.visible_devices()[0]["pci"]}


def timed_count(n: int, **options) -> dict:
    start = time.perf_counter()
    result = gpuqueens.nqueens(n, progress=False, **options)
    return {"seconds": round(time.perf_counter() - start, 3), "total": result.total,
            "unique": result.unique, "exact": result.total == oeis_total(n), "device": result.device,
            "cuda_here_after": fork_safety.cuda_initialised_here()}


def step(results: dict, name: str, function, *args, **kwargs) -> None:
    try:
        value = function(*args, **kwargs)
    except Exception as exc:  # record and go on: later steps still say something
        value = {"error": f"{type(exc).__name__}: {exc}"}
    results[name] = value
    print(f"{name:>17}: {json.dumps(value)}", flush=True)


def probe() -> dict:
    report = backends.gpu_report(here=False)
    return {"usable": report.usable, "reason": report.reason, "names": report.names,
            "pci": report.pci, "cuda_here": fork_safety.cuda_initialised_here()}


def driver_check() -> dict:
    done = subprocess.run([sys.executable, "-c", DRIVER_CHECK], capture_output=True, text=True, timeout=300)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def pinning() -> dict:
    report = backends.gpu_report(here=False)
    count = max(2, report.count)
    with tempfile.TemporaryDirectory() as folder:
        with workers.executor_for("gpu", workers=count, large=True, units=count) as chosen:
            # gpuqueens' workers do not import the main module: hand them this file's
            # function by its module name (the script's folder is on their sys.path)
            import device_workers

            futures = [chosen.executor.submit(device_workers.where_am_i, folder, count)
                       for _ in range(count)]
            found = [future.result(timeout=600) for future in futures]
    ids = workers._visible_device_ids(report.count)
    expected = {device: report.pci[ids.index(device)] for device in chosen.devices}
    ok = all(row["pci"] == expected[row["CUDA_VISIBLE_DEVICES"]] for row in found)
    return {"plan": chosen.devices, "workers": found, "pinned_as_planned": ok,
            "distinct_processes": len({row["pid"] for row in found}) == count}


def refused(n: int) -> dict:
    backends.gpu_status()  # make sure CUDA is initialised here
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        start = time.perf_counter()
        try:
            gpuqueens.count(n, backend="gpu", executor=pool)
        except fork_safety.CUDAForkError as exc:
            return {"refused": True, "seconds": round(time.perf_counter() - start, 4),
                    "workers_started": len(pool._processes), "message": str(exc)}
        return {"refused": False, "seconds": round(time.perf_counter() - start, 4)}


def raw_fork_failure() -> dict:
    from gpuqueens.problems.nqueens.gpu import count_prefixes_gpu
    from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes

    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        try:
            pool.submit(count_prefixes_gpu, enumerate_prefixes(10, 3)).result(timeout=120)
        except Exception as exc:
            return {"failed": True, "error": f"{type(exc).__name__}: {exc}"[:300]}
        return {"failed": False}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    n = args.n
    results: dict = {"n": n, "python": sys.version.split()[0],
                     "default_start_method": multiprocessing.get_start_method(),
                     "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")}
    print(json.dumps(results))
    step(results, "probe", probe)
    step(results, "driver", driver_check)
    step(results, "pinning", pinning)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        step(results, "fork pool", timed_count, n, backend="gpu", executor=pool)
    step(results, "workers=2", timed_count, n, backend="gpu", workers=2)
    step(results, "default", timed_count, n)
    step(results, "refused", refused, n)
    step(results, "raw fork failure", raw_fork_failure)
    checks = {
        "probe left this process free of CUDA": results["probe"].get("cuda_here") is False,
        "ctxGetCurrent fails before cuInit only": results["driver"].get("before") not in (True, None)
                                                  and results["driver"].get("after") is True,
        "each worker on its planned device": results["pinning"].get("pinned_as_planned") is True,
        "fork pool exact, this process CUDA-free": results["fork pool"].get("exact") is True
                                                   and results["fork pool"].get("cuda_here_after") is False,
        "workers=2 exact": results["workers=2"].get("exact") is True,
        "default exact": results["default"].get("exact") is True,
        "fork pool after CUDA refused in < 1 s": results["refused"].get("refused") is True
                                                 and results["refused"].get("seconds", 9) < 1,
    }
    results["checks"] = checks
    for name, ok in checks.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
