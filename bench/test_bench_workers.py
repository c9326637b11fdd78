"""Worker processes on the CPU: a long count on every core against one process, and what a
pool costs to start.

    python -m pytest bench/test_bench_workers.py --benchmark-only \\
        --benchmark-columns=min,median,mean,max,rounds --benchmark-group-by=group

* ``n=16 cpu``: ``count(16, backend="cpu")`` with the default ``workers`` (every usable
  core) and with ``workers=1``; divide the medians for the speed-up. Each round is a whole
  call: pool start, units, pool end.
* ``pool start``: a :class:`~gpuqueens.workers.WorkerPool` of k spawned processes, created,
  given one trivial task and shut down (each process imports NumPy and gpuqueens), and
  the same with the other safe start method, forkserver, for comparison.
"""

from __future__ import annotations

import multiprocessing

import pytest

import gpuqueens
from gpuqueens import worker_pool, workers

N16_TOTAL = 14772512


@pytest.mark.benchmark(group="n=16 cpu")
@pytest.mark.parametrize("workers_arg", [None, 1], ids=["default", "workers=1"])
def test_count_16_cpu(benchmark, workers_arg):
    benchmark.extra_info["usable_cores"] = workers.usable_cores()
    result = benchmark.pedantic(gpuqueens.count, args=(16,), rounds=5, warmup_rounds=1,
                                kwargs={"backend": "cpu", "workers": workers_arg, "progress": False})
    assert result == N16_TOTAL


def _start_and_stop(processes: int) -> int:
    with workers.WorkerPool(processes) as pool:
        return pool.submit(abs, -1).result()


@pytest.mark.benchmark(group="pool start")
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
@pytest.mark.parametrize("processes", [1, 2])
def test_pool_start(benchmark, monkeypatch, method, processes):
    monkeypatch.setattr(worker_pool, "_worker_context", lambda: multiprocessing.get_context(method))
    assert benchmark.pedantic(_start_and_stop, args=(processes,), rounds=5, warmup_rounds=1) == 1
