"""Dask as the executor: nanny workers get gpuqueens' malloc set-up, and with one worker
per GPU (dask-cuda's convention: each worker's ``CUDA_VISIBLE_DEVICES`` names its GPU)
each unit runs on its worker's GPU, here through the CuPy stand-in with two fake devices.
"""

from __future__ import annotations

import os
import shutil

import pytest
import worker_tasks
from fake_cupy_site import emulator_libraries, forget_gpu_state, install, launches
from oeis import total, unique

import gpuqueens
import gpuqueens.problems.nqueens as nqueens_api
from gpuqueens.problems.nqueens import plan

distributed = pytest.importorskip("distributed")


@pytest.fixture(autouse=True)
def keep_environment():
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_ (and OMP_NUM_THREADS, ...) in the environment
    of the process that starts it, and leaves them there: undo that after each test."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.skipif(not hasattr(os, "confstr") or "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""),
                    reason="glibc only")
def test_nanny_workers_get_their_malloc_thresholds_raised(monkeypatch):
    monkeypatch.setitem(plan.FIRST_SPLIT_N, "cpu", 11)  # n=12 in 16 units
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)  # so that the nanny sets its own
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        pid, trim, tuned = client.submit(worker_tasks.malloc_tuned_here, pure=False).result()
        assert trim == "65536" and not tuned  # Dask's setting, nothing of ours yet
        result = gpuqueens.nqueens(12, backend="cpu", executor=client.get_executor(), progress=False)
        assert (result.total, result.unique) == (total(12), unique(12))
        assert client.submit(worker_tasks.malloc_tuned_here, pure=False).result() == (pid, trim, True)


def test_one_dask_worker_per_gpu_each_unit_on_its_workers_gpu(monkeypatch, tmp_path, tmp_path_factory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    libraries = emulator_libraries(lambda: tmp_path_factory.mktemp("emulator"))
    log = tmp_path / "launches.txt"
    fake = install(monkeypatch, tmp_path / "site", devices=2, libraries=libraries, launch_log=log)
    monkeypatch.setitem(plan.FIRST_SPLIT_N, "gpu", 10)  # n=11 in 16 units
    # each worker waits for the other before its first unit, so both certainly solve units
    (tmp_path / "meet").mkdir()
    monkeypatch.setenv("MEET_FOLDER", str(tmp_path / "meet"))
    monkeypatch.setenv("MEET_COUNT", "2")
    monkeypatch.setattr(nqueens_api, "solve_unit", worker_tasks.solve_unit_after_meeting)
    workers = {f"gpu{device}": {"cls": distributed.Nanny,
                                "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": device}}}
               for device in ("1", "0")}  # as dask-cuda's LocalCUDACluster pins its workers
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
    try:
        with distributed.SpecCluster(workers=workers, scheduler=scheduler) as cluster, \
                distributed.Client(cluster) as client:
            result = gpuqueens.nqueens(11, backend="gpu", executor=client.get_executor(), progress=False)
            worker_devices = client.run(worker_tasks.environment_variable, "CUDA_VISIBLE_DEVICES")
            worker_pids = client.run(os.getpid)
    finally:
        forget_gpu_state()
    assert (result.total, result.unique) == (total(11), unique(11))
    assert fake.fake_cuda.initialised_pid is None  # the client never touched CUDA
    pinned = {worker_pids[address]: int(worker_devices[address]) for address in worker_pids}
    used = launches(log)
    assert set(used) == set(pinned)  # both workers solved units...
    assert all(used[pid] == {pinned[pid]} for pid in used)  # ...each on its own GPU only
