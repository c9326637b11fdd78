"""One worker process per GPU, without a GPU: the probe in a fresh process, pinning by
``CUDA_VISIBLE_DEVICES``, and whole counts spread over several fake devices.

tests/fake_cupy_site.py makes the CuPy stand-in the ``cupy`` of every process of a test
(spawned workers and the probe's fresh interpreter included), with as many fake devices
as asked; each device's ``pciBusID`` is 0x10 + its physical index, so a worker can tell
which one CUDA gave it. Counts need the kernel emulator (nvcc).
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
from gpuqueens import backends, fork_safety, workers
from gpuqueens.problems.nqueens import plan



@pytest.fixture
def fake_gpus(monkeypatch, tmp_path):
    """``fake_gpus(devices, ...)`` installs the stand-in with that many devices."""
    yield lambda devices=1, **options: install(monkeypatch, tmp_path / "site", devices=devices, **options)
    forget_gpu_state()


@pytest.fixture
def libraries(tmp_path_factory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    return emulator_libraries(lambda: tmp_path_factory.mktemp("emulator"))


@pytest.fixture
def long_gpu_counts(monkeypatch):
    """Count n=11 as a "long" GPU count in 16 units."""
    monkeypatch.setitem(nqueens_api.POOL_MIN_N, "gpu", 11)
    monkeypatch.setitem(plan.FIRST_SPLIT_N, "gpu", 10)


def meet_in_every_worker(pool, count: int, folder) -> set[tuple[str, int]]:
    """``{(CUDA_VISIBLE_DEVICES, PCI bus id of device 0)}`` of ``count`` distinct workers."""
    folder.mkdir()
    futures = [pool.submit(worker_tasks.meet_on_gpu, str(folder), count) for _ in range(count)]
    results = [future.result(timeout=300) for future in futures]
    assert len({pid for pid, _, _ in results}) == count and os.getpid() not in {r[0] for r in results}
    return {(visible, bus) for _, visible, bus in results}


# --- the probe ----------------------------------------------------------------------------

def test_the_probe_in_a_fresh_process_leaves_this_one_free_of_cuda(fake_gpus):
    fake = fake_gpus(3, visible="2,0")
    report = backends.gpu_report(here=False)
    assert report.usable and report.count == 2
    assert report.pci == ("0000:12:00.0", "0000:10:00.0")
    assert fake.fake_cuda.initialised_pid is None and not fork_safety.cuda_initialised_here()
    assert backends.resolve_backend("auto", here=False) == "gpu"
    assert fake.fake_cuda.initialised_pid is None
    assert backends.resolve_backend("auto") == "gpu"  # here: the probe initialises CUDA here
    assert fake.fake_cuda.initialised_pid == os.getpid() and fork_safety.cuda_initialised_here()


def test_the_fresh_process_says_why_there_is_no_gpu(fake_gpus):
    fake_gpus(0)
    report = backends.gpu_report(here=False)
    assert not report.usable and report.count == 0 and "no CUDA device" in report.reason
    with pytest.raises(gpuqueens.BackendUnavailableError, match="no CUDA device"):
        gpuqueens.count(16, backend="gpu", workers=2)


# --- the plan: one process per GPU, pinned ------------------------------------------------

def test_one_worker_process_per_gpu_each_on_its_own(fake_gpus, tmp_path):
    fake = fake_gpus(3)
    with workers.executor_for("gpu", large=True, units=16) as chosen:
        assert chosen.devices == ("0", "1", "2") and chosen.processes == 3
        assert chosen.executor._max_workers == 3  # no local worker: this process only coordinates
        found = meet_in_every_worker(chosen.executor, 3, tmp_path / "meet")
    assert found == {("0", 0x10), ("1", 0x11), ("2", 0x12)}
    assert fake.fake_cuda.initialised_pid is None


def test_pinning_follows_cuda_visible_devices(fake_gpus, tmp_path):
    fake_gpus(3, visible="2,0")
    with workers.executor_for("gpu", large=True, units=16) as chosen:
        assert chosen.devices == ("2", "0")
        found = meet_in_every_worker(chosen.executor, 2, tmp_path / "meet")
    assert found == {("2", 0x12), ("0", 0x10)}


def test_more_workers_than_gpus_take_the_gpus_in_turn(fake_gpus, monkeypatch):
    fake_gpus(3)
    assert workers._gpu_device_plan(5) == ("0", "1", "2", "0", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-a1,GPU-b2,junk")  # UUIDs; CUDA stops at junk
    monkeypatch.setattr(workers, "gpu_report", lambda here: backends.GPUReport(True, "ok", ("A", "B")))
    assert workers._gpu_device_plan(3) == ("GPU-a1", "GPU-b2", "GPU-a1")


@pytest.mark.parametrize("devices,large,units", [(1, True, 16), (3, False, 16), (3, True, 1)])
def test_one_gpu_a_short_count_or_one_unit_run_here(fake_gpus, monkeypatch, devices, large, units):
    fake_gpus(devices)
    monkeypatch.setattr(workers, "WorkerPool", None)  # would fail if called
    with workers.executor_for("gpu", large=large, units=units) as chosen:
        assert chosen.executor is None and chosen.processes == 1


# --- whole counts ------------------------------------------------------------------------

def test_a_long_count_runs_on_every_gpu(fake_gpus, libraries, long_gpu_counts, monkeypatch, tmp_path):
    log = tmp_path / "launches.txt"
    fake = fake_gpus(2, libraries=libraries, launch_log=log)
    # each worker waits for the other before its first unit, so both certainly solve units
    (tmp_path / "meet").mkdir()
    monkeypatch.setenv("MEET_FOLDER", str(tmp_path / "meet"))
    monkeypatch.setenv("MEET_COUNT", "2")
    monkeypatch.setattr(nqueens_api, "solve_unit", worker_tasks.solve_unit_after_meeting)
    result = gpuqueens.nqueens(11, progress=False)  # auto: the probe in a fresh process
    assert (result.total, result.unique, result.backend) == (total(11), unique(11), "gpu")
    assert "devices 0, 1" in result.device and "2 processes" in result.device
    used = launches(log)
    assert os.getpid() not in used and fake.fake_cuda.initialised_pid is None
    assert sorted(map(sorted, used.values())) == [[0], [1]]  # two workers, each on its own GPU


def test_gpu_workers_resume_a_checkpoint_and_the_cpu_finishes_it(
        fake_gpus, libraries, long_gpu_counts, monkeypatch, tmp_path):
    fake_gpus(2, libraries=libraries)
    checkpoint = tmp_path / "n11.sqlite"
    real, calls = nqueens_api.solve_unit, []

    def dies_after_three_units(payload):
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("device lost")
        return real(payload)

    monkeypatch.setattr(nqueens_api, "solve_unit", dies_after_three_units)
    with pytest.raises(RuntimeError, match="device lost"):
        gpuqueens.count(11, backend="gpu", workers=1, checkpoint=checkpoint, progress=False)
    monkeypatch.setattr(nqueens_api, "solve_unit", real)
    resumed = gpuqueens.nqueens(11, backend="gpu", checkpoint=checkpoint, progress=False)
    assert (resumed.total, resumed.unique) == (total(11), unique(11))
    assert "2 processes" in resumed.device
    on_cpu = gpuqueens.nqueens(11, backend="cpu", checkpoint=checkpoint, progress=False)
    assert (on_cpu.total, on_cpu.unique) == (total(11), unique(11))


def test_explicit_gpu_workers_share_one_gpu(fake_gpus, libraries, long_gpu_counts, tmp_path):
    log = tmp_path / "launches.txt"
    fake_gpus(1, libraries=libraries, launch_log=log)
    result = gpuqueens.nqueens(11, backend="gpu", workers=2, progress=False)
    assert (result.total, result.unique) == (total(11), unique(11))
    assert set().union(*launches(log).values()) == {0}


def test_device_script_dry_run(libraries, tmp_path):
    # bench/device_workers.py end to end on the stand-in (two fake devices), so that a run
    # on a GPU machine does not spend GPU time on a broken script; its times mean nothing
    import json
    import subprocess
    import sys
    from pathlib import Path

    from fake_cupy_site import write_site

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(write_site(tmp_path / "site")), FAKE_CUPY_DEVICES="2",
               FAKE_CUPY_LIBRARIES=json.dumps({k: str(v) for k, v in libraries.items()}))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    out = tmp_path / "workers.json"
    done = subprocess.run([sys.executable, str(root / "bench" / "device_workers.py"), "--n", "11",
                           "--json", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert all(results["checks"].values()) and len(results["checks"]) == 7
    assert results["pinning"]["plan"] == ["0", "1"]
    assert "cudaErrorInitializationError" in results["raw fork failure"]["error"]


def test_install_leaves_no_stand_in_behind(tmp_path):
    import sys

    before = sys.modules.get("cupy")
    undo = pytest.MonkeyPatch()
    try:
        fake = install(undo, tmp_path / "site", devices=2)
        assert sys.modules["cupy"] is fake and fake is not before
    finally:
        undo.undo()
        forget_gpu_state()
    assert sys.modules.get("cupy") is before
