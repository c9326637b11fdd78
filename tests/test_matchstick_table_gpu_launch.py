"""The centre join on the GPU (the puzzle table and problem 2), run without a GPU.

The pairing pipeline of gpuqueens/problems/matchsticks/gpu_join.py on NumPy arrays with the
kernel's NumPy twin, for the table and for problem 2 (R and S exact): against the CPU's
pairing (BLAS products) centre pattern by centre pattern, and for problem 2 summed over the
patterns against the whole-grid sweep. Then whole tables and counts with ``backend="gpu"``
through the CuPy stand-in (tests/fake_cupy.py), whose ``matchstick_join_pairs`` launches are
checked and run by the host build of the kernel (tests/fake_matchstick_join.py), against
the CPU's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import fake_cupy
import pytest
from fake_cupy import fake_cupy_installed
from fake_matchstick_join import shared_library
from seed_tables import SEED_6X6

import gpuqueens
from gpuqueens import kernels
from gpuqueens.problems.matchsticks import gpu_join, halves, sweep
from gpuqueens.problems.matchsticks.exact_join import join_exact_centre, prepare_exact
from gpuqueens.problems.matchsticks.modular import crt
from gpuqueens.problems.matchsticks.pairing import JoinStats, centre_patterns, join_centre, prepare_round
from gpuqueens.problems.matchsticks.sweep import count_exact

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@pytest.mark.parametrize("h,w,level,top", [(2, 3, 12, 11), (3, 3, 20, 11), (3, 4, 25, 11),
                                           (4, 4, 30, 11), (4, 4, 19, 0)])
def test_twin_pipeline_equals_the_cpu_pairing(h, w, level, top):
    # top = 0: only S = 0 asked, so that some centre patterns leave a side without groups
    rnd = prepare_round(h, w, {q: (level - q) // 2 for q in range(top + 1)}, level)
    sides = gpu_join.device_sides(np, rnd)
    cpu, twin = JoinStats(), JoinStats()
    for C in centre_patterns(h):
        assert gpu_join.table_centre(sides, rnd, C, gpu_join.twin_pairing, twin) == \
            join_centre(rnd, C, cpu)
    assert twin.groups == cpu.groups and twin.hits > 0


@pytest.mark.parametrize("h,w,removed,squares", [(2, 3, 5, 1), (3, 3, 8, 2), (3, 4, 10, 0),
                                                   (4, 4, 12, 3), (4, 5, 14, 2), (4, 4, 2, 0)])
def test_twin_pipeline_equals_the_cpu_exact_join(h, w, removed, squares):
    # (4, 4, 2, 0): fewer removals than some centre patterns already take
    rnd = prepare_exact(h, w, removed, squares)
    sides = gpu_join.device_sides(np, rnd)
    for C in centre_patterns(h):
        assert gpu_join.exact_centre(sides, rnd, C, gpu_join.twin_pairing) == \
            join_exact_centre(rnd, C), C


@pytest.mark.parametrize("h,w,removed,squares", [(2, 3, 5, 1), (3, 5, 9, 2), (4, 4, 12, 3),
                                                   (4, 5, 14, 2)])
def test_twin_pipeline_equals_the_whole_grid_sweep(h, w, removed, squares):
    # an independent method: the centre patterns' residues added up, against the sweep
    rnd = prepare_exact(h, w, removed, squares)
    sides = gpu_join.device_sides(np, rnd)
    primes = [int(p) for p in rnd.primes]
    total = [0] * len(primes)
    for C in centre_patterns(h):
        found = gpu_join.exact_centre(sides, rnd, C, gpu_join.twin_pairing)
        total = [(t + v) % p for t, v, p in zip(total, found, primes)]
    assert crt(total, primes) == count_exact(h, w, removed=removed, squares=squares) > 0


@pytest.fixture
def fake_gpu(monkeypatch):
    with fake_cupy_installed(monkeypatch, {"matchstick_join": shared_library()}) as fake:
        yield fake


def _launches():
    return kernels.load_module(gpu_join.KERNEL_SOURCE).get_function("matchstick_join_pairs").launches


def _array_modules(monkeypatch, module, name):
    """The array module (``xp=``) of every call of ``module.name`` from now on."""
    modules = []
    real = getattr(module, name)

    def recorded(*args, **kwargs):
        modules.append(kwargs["xp"])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return modules


@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("m,n", [(5, 5), (3, 6)])
def test_gpu_tables_equal_the_cpu_tables(fake_gpu, m, n):
    on_gpu = gpuqueens.matchstick_table(m, n, backend="gpu", workers=1)
    assert on_gpu.backend == "gpu" and len(_launches()) > 0
    assert on_gpu.rows == gpuqueens.matchstick_table(m, n, backend="cpu").rows


@needs_nvcc
@pytest.mark.nvcc
def test_short_pairing_launches_where_the_driver_stops_long_kernels(fake_gpu, monkeypatch):
    # a GPU that drives a display stops kernels after about 2 s (Windows): each pairing's
    # blocks go in launches sized to a quarter of a second, the first of one block per SM,
    # and the table is the same (every block adds its bins into the global ones)
    monkeypatch.setitem(fake_cupy.ATTRIBUTES, "KernelExecTimeout", 1)
    monkeypatch.setitem(fake_cupy.ATTRIBUTES, "MultiProcessorCount", 2)
    pairings = []  # the ranges of each pairing's launches
    timed_slices = kernels.timed_slices

    def recorded(total, first):
        pairings.append([])
        for start, stop in timed_slices(total, first):
            pairings[-1].append((start, stop))
            yield start, stop

    monkeypatch.setattr(kernels, "timed_slices", recorded)
    on_gpu = gpuqueens.matchstick_table(5, 5, backend="gpu", workers=1)
    assert on_gpu.rows == gpuqueens.matchstick_table(5, 5, backend="cpu").rows
    assert [grid for grid, *_ in _launches()] == [b - a for ranges in pairings for a, b in ranges]
    assert all(ranges[0][1] <= 2 for ranges in pairings)  # the first launch of each: short
    assert max(len(ranges) for ranges in pairings) > 1


@needs_nvcc
@pytest.mark.nvcc
def test_the_top_sweep_runs_on_the_device_with_the_cpu_rows(fake_gpu, monkeypatch):
    # 4×4: every S by the top sweep (30 squares), its point steps on CuPy arrays
    modules = _array_modules(monkeypatch, sweep, "step_point")
    everything = range(31)
    on_gpu = gpuqueens.matchstick_table(4, 4, everything, backend="gpu", workers=1)
    assert on_gpu.backend == "gpu" and modules and all(xp is fake_gpu for xp in modules)
    modules.clear()
    assert on_gpu.rows == gpuqueens.matchstick_table(4, 4, everything, backend="cpu").rows
    assert modules and all(xp is np for xp in modules)


@needs_nvcc
@pytest.mark.nvcc
def test_gpu_tables_run_their_half_sweeps_on_the_device(fake_gpu, monkeypatch):
    modules = _array_modules(monkeypatch, halves, "_half_sweep")
    gpuqueens.matchstick_table(4, 5, [0, 2, 7], backend="gpu", workers=1)
    assert modules and all(xp is fake_gpu for xp in modules)
    modules.clear()
    gpuqueens.matchstick_table(4, 5, [0, 2, 7], backend="cpu", workers=1)
    assert modules and all(xp is np for xp in modules)


@needs_nvcc
@pytest.mark.nvcc
def test_auto_runs_a_6x6_table_on_the_gpu(fake_gpu):
    on_gpu = gpuqueens.matchstick_table(6, 6, [0, 3, 13], backend="auto", workers=1)
    assert on_gpu.backend == "gpu" and len(_launches()) > 0
    assert list(on_gpu.rows) == [row for row in SEED_6X6 if row[0] in (0, 3, 13)]  # the CPU's


def test_auto_keeps_small_tables_on_the_cpu(fake_gpu):
    assert gpuqueens.matchstick_table(5, 5, [0], backend="auto").backend == "cpu"
    assert not fake_gpu.fake_cuda.initialised_pid  # no probe, no launch


@needs_nvcc
@pytest.mark.nvcc
def test_counting_by_squares_on_the_gpu_equals_the_cpu(fake_gpu, monkeypatch):
    # h <= 5: the whole-grid sweep on the device's arrays; h = 6: the exact join, half sweeps
    # and pairing (the kernel's host build) on the device
    modules = []
    sweep = halves._half_sweep
    monkeypatch.setattr(halves, "_half_sweep", lambda *a, **k: modules.append(k["xp"]) or sweep(*a, **k))
    assert gpuqueens.matchsticks(4, 4, removed=9, squares=0, backend="gpu") == 16
    assert not modules and not _launches()
    assert gpuqueens.matchsticks(3, 5, removed=9, squares=2, backend="gpu") == \
        gpuqueens.matchsticks(3, 5, removed=9, squares=2, backend="cpu")
    for removed, squares in [(2, 85), (2, 67), (3, 60)]:  # few removals: seconds on the host build
        assert gpuqueens.matchsticks(6, 6, removed=removed, squares=squares, backend="gpu") == \
            gpuqueens.matchsticks(6, 6, removed=removed, squares=squares, backend="cpu")
    assert fake_gpu in modules and np in modules and len(_launches()) > 0


def table_benchmark_rows(tmp_path, *args: str) -> list[dict]:
    """The rows bench/gpu_matchstick_table.py writes with these arguments, run on the stand-in
    (tests/fake_gpu_run.py); its times mean nothing."""
    out = tmp_path / "rows.json"
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, str(root / "tests" / "fake_gpu_run.py"),
         str(root / "bench" / "gpu_matchstick_table.py"), *args, "--json", str(out)],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


@needs_nvcc
@pytest.mark.nvcc
def test_gpu_table_benchmark_script_dry_run(tmp_path):
    # end to end, its checks against the CPU table and the whole-grid sweep included
    rows = table_benchmark_rows(tmp_path, "--grids", "3x4", "--repeats", "1")
    assert [r["grid"] for r in rows] == ["3x4"] and rows[0]["checks"] == ["cpu", "sweep", "exact"]
    assert tuple(tuple(r) for r in rows[0]["rows"]) == gpuqueens.matchstick_table(3, 4, backend="cpu").rows


@needs_nvcc
@pytest.mark.nvcc
def test_gpu_table_benchmark_script_checks_only_the_possible_rows(tmp_path):
    # 3×3 has no configuration with S = 12 or 13: problem 2 is checked at the other rows' R
    [row] = table_benchmark_rows(tmp_path, "--grids", "3", "--repeats", "0", "--cpu-max", "0",
                                 "--sweep-squares", "")
    assert row["checks"] == ["exact"] and [12, None, 0] in row["rows"]
