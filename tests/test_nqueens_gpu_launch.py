"""The GPU path's Python side, run without a GPU through a stand-in for CuPy.

``tests/fake_cupy.py`` replaces CuPy; its kernels check each launch against the kernel's
signature in kernels/nqueens.cu and run the kernel's own search code on the host
(tests/native/nqueens_launch_emulator.cu, built with nvcc). So the backend probe, the
module cache, the batching, the arguments, the grid and shared-memory sizing and the block
sums of gpuqueens/problems/nqueens/gpu.py, and the public API on backend="gpu", are all
exercised here; the device-side block reduction is not (tests/test_nqueens_gpu.py covers it
on a real GPU).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import fake_cupy
from fake_cupy import FAKE_DEVICE_NAME, LaunchError, fake_cupy_installed
from fake_gpu_run import build_emulator
from oeis import total, unique
from prefix_samples import random_prefix_subset
from scripts import load_script

import gpuqueens
from gpuqueens import backends, kernels
from gpuqueens.problems.nqueens import gpu, plan
from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes, expand_prefixes
from gpuqueens.problems.nqueens.symmetric import (count_symmetric, count_symmetric_below, expand_symmetric,
                                                  symmetric_prefixes)

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed"),
]

@pytest.fixture(scope="session")
def emulator_libraries(tmp_path_factory) -> dict[str, Path]:
    return build_emulator(tmp_path_factory.mktemp("nqueens_emulator"))


@pytest.fixture
def fake_gpu(emulator_libraries, monkeypatch):
    """CuPy replaced by the host emulation for one test."""
    with fake_cupy_installed(monkeypatch, emulator_libraries, gpu._device_limits_of) as fake:
        yield fake


def test_probe_finds_the_fake_device(fake_gpu):
    assert backends.gpu_status() == (True, "ok")
    assert backends.resolve_backend("auto") == "gpu"
    assert backends.device_name("gpu") == f"{FAKE_DEVICE_NAME} (device 0)"


@pytest.mark.parametrize("n", range(1, 13))
def test_public_api_on_the_gpu_path(fake_gpu, n):
    result = gpuqueens.nqueens(n, backend="gpu")
    assert (result.total, result.unique) == (total(n), unique(n))
    assert result.backend == "gpu" and FAKE_DEVICE_NAME in result.device
    assert gpuqueens.count(n, unique=True) == unique(n)  # "auto" picks the (fake) GPU


@pytest.mark.parametrize("n,mark", [(8, 2), (10, 3), (11, 6), (12, 4)])
def test_sums_over_several_batches(fake_gpu, monkeypatch, n, mark):
    # small batches: several launches add into one block-sum buffer, the last one with a
    # smaller grid than the buffer was sized for; each launch gets a fresh prefix counter
    prefixes = enumerate_prefixes(n, mark)
    monkeypatch.setattr(gpu, "BATCH_PREFIXES", max(1, len(prefixes) // 3 - 1))
    assert gpu.count_prefixes_gpu(prefixes, block_size=32) == count_prefixes_cpu(prefixes) == 3 * total(n)
    launches = gpu._module(False).get_function("nqueens_count").launches
    assert len(launches) >= 3


@pytest.fixture
def display_gpu(fake_gpu, monkeypatch):
    """The stand-in as a GPU whose driver stops long kernels (one that drives a display),
    with room for 2 blocks at once, so that a first launch of one item a thread is short;
    yields the record ranges of the launches the search was cut into."""
    monkeypatch.setitem(fake_cupy.ATTRIBUTES, "KernelExecTimeout", 1)
    monkeypatch.setattr(gpu, "_resident_blocks", lambda block_size: 2)
    ranges = []
    timed_slices = kernels.timed_slices

    def recorded(total, first, **options):
        for start, stop in timed_slices(total, first, **options):
            ranges.append((start, stop))
            yield start, stop

    monkeypatch.setattr(kernels, "timed_slices", recorded)
    yield ranges


def _covers(ranges, total: int) -> bool:
    return [a for a, _ in ranges] == [0, *(b for _, b in ranges[:-1])] and ranges[-1][1] == total


def test_short_launches_where_the_driver_stops_long_kernels(display_gpu):
    # Windows stops a kernel after about 2 s on a GPU that drives a display, Linux under X
    # after a few: there the search goes in launches of about a quarter of a second, the
    # first of one record a thread; the same counts
    prefixes = enumerate_prefixes(11, 4)
    assert gpu.count_prefixes_gpu(prefixes, block_size=32, expand=0) == 3 * total(11)
    launches = gpu._module(False).get_function("nqueens_count").launches
    assert len(launches) == len(display_gpu) > 1
    assert display_gpu[0] == (0, 2 * 32) and _covers(display_gpu, len(prefixes))


def test_short_launches_of_the_device_expansion_and_per_prefix(display_gpu):
    # the records the device expands to, and each prefix's weight in place, cut the same way
    prefixes = enumerate_prefixes(12, 4)
    assert gpu.count_prefixes_gpu(prefixes, block_size=64, expand=2) == 3 * total(12)
    assert len(display_gpu) > 1 and _covers(display_gpu, len(expand_prefixes(prefixes, 6)))
    display_gpu.clear()
    got = gpu.count_prefixes_gpu(prefixes, per_prefix=True, block_size=32, split=1)
    np.testing.assert_array_equal(got, count_prefixes_cpu(prefixes, per_prefix=True))
    first = 2 * 32 // gpu.items_per_prefix(12, 4, 1)
    assert display_gpu[0] == (0, first) and _covers(display_gpu, len(prefixes))

def test_display_gpu_searches_from_the_deepest_expansion(display_gpu, monkeypatch):
    # the public call's records start as deep as the device's expansion goes (3 rows below
    # the host's prefixes, where the board leaves room), so that no short launch waits long
    # on the search below one record
    cuts = []

    def recorded(prefixes, *args):
        cuts.append((prefixes.n, prefixes.mark, gpu_work_cut(prefixes, *args)))
        return cuts[-1][2]

    gpu_work_cut = gpu._work_cut
    monkeypatch.setattr(gpu, "_work_cut", recorded)
    assert gpuqueens.nqueens(12, backend="gpu").total == total(12)
    assert cuts and all(cut == (min(gpu.MAX_EXPAND, n - 1 - mark), 0) for n, mark, cut in cuts)
    assert len(display_gpu) > 1


def test_the_benchmark_times_the_short_launches_on_any_gpu(fake_gpu, monkeypatch, capsys):
    # bench/gpu_nqueens.py --short-launches takes the path of a GPU that stops long kernels
    # on a GPU that does not, so that its cost can be timed; without it, the usual launches
    script = load_script("bench/gpu_nqueens.py")
    monkeypatch.setattr(kernels, "_stops_long_kernels", kernels._stops_long_kernels)  # (undone after)
    monkeypatch.setattr(gpu, "_resident_blocks", lambda block_size: 2)
    launches = gpu._module(False).get_function("nqueens_count").launches
    options = ["--nmin", "12", "--nmax", "12", "--no-cold", "--repeats", "1", "--plain-nodes-max", "0"]
    assert script.main(options) == 0
    usual = len(launches)
    launches.clear()
    gpu._device_limits_of.cache_clear()
    assert script.main([*options, "--short-launches"]) == 0
    assert len(launches) > usual and "short launches" in capsys.readouterr().out


@pytest.mark.parametrize("seed", range(8))
def test_per_prefix_counts_match_numpy(fake_gpu, monkeypatch, seed):
    n, mark, prefixes = random_prefix_subset(seed, max_size=400, sizes=(6, 13))
    monkeypatch.setattr(gpu, "BATCH_PREFIXES", 97)
    split = seed % (min(2, n - 1 - mark) + 1)
    got = gpu.count_prefixes_gpu(prefixes, per_prefix=True, block_size=64, split=split)
    np.testing.assert_array_equal(got, count_prefixes_cpu(prefixes, per_prefix=True))
    # the summing kernel, whose threads share the work items through the counter, agrees
    assert gpu.count_prefixes_gpu(prefixes, block_size=32, split=split) == int(got.sum())


def test_node_counting_build(fake_gpu):
    prefixes = enumerate_prefixes(10, 3)
    weight, nodes = gpu.sum_prefixes_gpu(prefixes, count_nodes=True)
    assert weight == 3 * total(10)
    # nodes do not depend on how the prefixes are spread over threads
    assert gpu.sum_prefixes_gpu(prefixes, count_nodes=True, block_size=256)[1] == nodes > 0


def test_large_stacks_opt_in_to_more_shared_memory(fake_gpu):
    kernel = gpu._module(False).get_function("nqueens_count")
    block, shared = gpu._prepare_kernel(kernel, 20, 2, 256)  # 356 bytes a thread: 89 KiB a block
    assert block == 256 and shared == 256 * gpu.stack_bytes_per_thread(20, 2) > 48 * 1024
    assert kernel.max_dynamic_shared_size_bytes == shared
    with pytest.raises(ValueError, match="shared memory"):
        gpu._prepare_kernel(kernel, 32, 2, 1024)  # 596 KiB: beyond the opt-in limit


@pytest.mark.parametrize("n,mark", [(12, 4), (14, 7)])
def test_the_widest_block_size(fake_gpu, n, mark):
    # block_size="widest" (benchmarks): the block size at which an SM holds the most search
    # threads at once, the system's 1 KiB of each block counted; the same weight
    prefixes = enumerate_prefixes(n, mark)
    assert gpu.count_prefixes_gpu(prefixes, block_size="widest", expand=0) == 3 * total(n)
    kernel = gpu._module(False).get_function("nqueens_count")
    _, block, shared = kernel.launches[-1]
    per_thread = gpu.stack_bytes_per_thread(n, mark)
    limits = gpu._device_limits()
    assert block == gpu.widest_block_size(per_thread, kernel.shared_size_bytes, limits)
    assert shared == block * per_thread
    best = gpu.resident_threads(block, per_thread, kernel.shared_size_bytes, limits)
    assert best >= max(gpu.resident_threads(b, per_thread, kernel.shared_size_bytes, limits)
                       for b in range(32, 1025, 32))
    with pytest.raises(ValueError, match="block_size"):
        gpu.count_symmetric_gpu(n, block_size="widest")  # one prefix per thread: no stack to fit
    with pytest.raises(ValueError, match="block_size"):
        gpu.count_prefixes_gpu(prefixes, block_size="wide")


def test_automatic_split_on_the_gpu_path(fake_gpu, monkeypatch):
    # a small target makes the device split rows even for a small board: same weight
    monkeypatch.setattr(gpu, "TARGET_ITEMS", 10 ** 6)
    monkeypatch.setattr(gpu, "MIN_ROWS_BELOW", 3)
    prefixes = enumerate_prefixes(10, 3)
    assert gpu.choose_split(10, 3, len(prefixes)) == 2
    assert gpu.count_prefixes_gpu(prefixes) == 3 * total(10)
    with pytest.raises(ValueError, match="split"):
        gpu.count_prefixes_gpu(prefixes, split=7)


@pytest.mark.parametrize("n,mark,rows", [(6, 2, 3), (8, 3, 1), (10, 3, 2), (12, 5, 2), (13, 4, 3), (16, 5, 2)])
def test_device_expansion_is_the_host_enumeration(fake_gpu, n, mark, rows):
    # nqueens_expand (the kernel's host build) continues the prefixes into the same records,
    # in the same order, as the NumPy enumeration, rules and edge-queen bits included
    prefixes = enumerate_prefixes(n, mark)
    batches = list(gpu._expanded_batches(prefixes, rows, gpu._module(False)))
    got = np.concatenate([records.get() for _, records, _ in batches])
    np.testing.assert_array_equal(got, expand_prefixes(prefixes, mark + rows).records())
    assert [count for count, _, _ in batches] == [len(got)]


def test_a_unit_of_few_prefixes_is_expanded_by_three_rows(fake_gpu, monkeypatch):
    # from n = 24 a GPU unit holds few prefixes (393 at n = 27: two rows would leave fewer
    # records than an H200 holds threads); the default expansion then takes a third row
    assert [gpu.choose_split(n, 5, c, most=gpu.MAX_EXPAND) for n, c in
            ((18, 105541), (21, 298867), (23, 34717), (24, 11965), (27, 393))] == [2, 2, 2, 3, 3]
    n, mark = 13, 3
    monkeypatch.setattr(gpu, "MIN_ROWS_BELOW", 7)  # room for three rows at n = 13
    monkeypatch.setattr(gpu, "TARGET_ITEMS", 1 << 40)
    prefixes = enumerate_prefixes(n, mark)
    assert gpu.count_prefixes_gpu(prefixes, block_size=32) == 3 * total(n)
    _, block, shared = gpu._module(False).get_function("nqueens_count").launches[-1]
    assert shared == block * gpu.stack_bytes_per_thread(n, mark + 3)  # the search from row 6


def test_unit_records_script_shows_the_third_row_and_times_both(fake_gpu, capsys):
    # bench/gpu_unit_records.py: the sizes from the plan (no GPU needed), and with --time
    # unit 0 counted on the device expanded by two rows and by three
    script = load_script("bench/gpu_unit_records.py")
    assert script.main(["--nmin", "23", "--nmax", "24"]) == 0
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[0].split()[0] for r in rows] == ["23", "24"]
    assert rows[0][1].split()[0] == rows[0][2].split()[0] == "2"  # n = 23: two rows, as before
    assert rows[1][1].split()[0] == "2" and rows[1][2].split()[0] == "3"  # n = 24: a third
    assert float(rows[1][2].split()[2]) > 8 * float(rows[1][1].split()[2])  # records per thread
    assert script.main(["--nmin", "12", "--nmax", "12", "--time"]) == 0
    seconds = capsys.readouterr().out.splitlines()[-1].split(" | ")[-1].split()
    assert len(seconds) == 2 and all(float(s) >= 0 for s in seconds)


@pytest.mark.parametrize("n,mark", [(13, 3), (14, 4)])
def test_expanded_count_in_small_batches(fake_gpu, monkeypatch, n, mark):
    # the default count expands on the device; batches of whole prefixes of at most
    # EXPANDED_BATCH records (a prefix with more children is a batch of its own), each
    # launched with a fresh counter into one block-sum buffer
    monkeypatch.setattr(gpu, "MIN_ROWS_BELOW", n - mark - 2)  # two rows expanded
    monkeypatch.setattr(gpu, "EXPANDED_BATCH", 50)
    monkeypatch.setattr(gpu, "BATCH_PREFIXES", 40)
    prefixes = enumerate_prefixes(n, mark)
    assert gpu.choose_split(n, mark, len(prefixes)) == 2
    assert gpu.count_prefixes_gpu(prefixes, block_size=32) == 3 * total(n)
    module = gpu._module(False)
    expanded = len(expand_prefixes(prefixes, mark + 2))
    launches = module.get_function("nqueens_count").launches
    assert len(launches) >= expanded // 50 and len(module.get_function("nqueens_expand_count").launches) >= 2
    assert gpu.count_prefixes_gpu(prefixes, block_size=32, split=2) == 3 * total(n)  # the split's path agrees


def test_the_expanded_rows_can_be_chosen(fake_gpu):
    # expand=: where the search starts (benchmarks); every choice gives the same weight, and
    # the shared memory of a launch shrinks by 16 bytes a thread per row expanded
    prefixes = enumerate_prefixes(11, 3)
    for rows in range(gpu.MAX_EXPAND + 1):
        assert gpu.count_prefixes_gpu(prefixes, expand=rows, block_size=32) == 3 * total(11), rows
    shared = [launch[2] for launch in gpu._module(False).get_function("nqueens_count").launches]
    assert shared[:4] == [32 * gpu.stack_bytes_per_thread(11, 3 + rows) for rows in range(4)]
    for bad in (4, -1, 1.0):
        with pytest.raises(ValueError, match="expand must be"):
            gpu.count_prefixes_gpu(prefixes, expand=bad)
    with pytest.raises(ValueError, match="expand must be"):
        gpu.count_prefixes_gpu(enumerate_prefixes(6, 3), expand=3)  # past row n - 1
    with pytest.raises(ValueError, match="without split"):
        gpu.count_prefixes_gpu(prefixes, expand=1, split=1)
    with pytest.raises(ValueError, match="per-prefix"):
        gpu.count_prefixes_gpu(prefixes, expand=1, per_prefix=True)


def test_the_public_call_expands_on_the_device(fake_gpu):
    # n = 15: the plan's prefixes at row 5, two rows expanded on the device, no empty items
    result = gpuqueens.nqueens(15, backend="gpu", workers=1)
    assert (result.total, result.unique) == (total(15), unique(15))
    assert gpu._module(False).get_function("nqueens_expand").launches


def test_the_fake_rejects_a_wrong_argument_type(fake_gpu):
    # the fake is strict: a Python int where the kernel takes a 32-bit int must not pass
    kernel = gpu._module(False).get_function("nqueens_count")
    sums = fake_gpu.zeros(2, dtype=np.uint64)
    records, counter = fake_gpu.zeros(4, dtype=np.uint32), fake_gpu.zeros(1, dtype=np.uint64)
    head = (np.int32(8), np.int32(2), np.int32(0))
    shared = 32 * gpu.stack_bytes_per_thread(8, 2)
    kernel((1,), (32,), (*head, np.int64(0), records, counter, sums), shared_mem=shared)
    with pytest.raises(LaunchError, match="argument 0"):
        kernel((1,), (32,), (8, *head[1:], np.int64(0), records, counter, sums), shared_mem=shared)
    with pytest.raises(LaunchError, match="argument 4"):
        kernel((1,), (32,), (*head, np.int64(0), counter, counter, sums), shared_mem=shared)
    with pytest.raises(LaunchError, match="split"):
        kernel((1,), (32,), (*head[:2], np.int32(6), np.int64(0), records, counter, sums), shared_mem=shared)
    with pytest.raises(LaunchError, match="counter"):
        counter[0] = 5  # a counter left over from an earlier launch
        kernel((1,), (32,), (*head, np.int64(1), records, counter, sums), shared_mem=shared)


def test_gpu_run_interrupted_and_resumed_on_the_cpu(fake_gpu, monkeypatch, tmp_path):
    # a multi-unit GPU plan (as for n >= 20) on a small board: each unit's prefixes are
    # expanded before the launch; the run dies after two units and the CPU finishes it
    monkeypatch.setitem(plan.FIRST_SPLIT_N, "gpu", 10)
    monkeypatch.setattr(plan, "GPU_TARGET_PREFIXES", 200 * 11 ** 2)
    monkeypatch.setattr(plan, "GPU_MIN_TAIL_ROWS", 3)
    real, calls = gpu.count_prefixes_gpu, []

    def dies_after_two_units(prefixes, **options):
        calls.append((len(prefixes), prefixes.mark))
        if len(calls) > 2:
            raise RuntimeError("device lost")
        return real(prefixes, **options)

    monkeypatch.setattr(gpu, "count_prefixes_gpu", dies_after_two_units)
    checkpoint = tmp_path / "run.sqlite"
    with pytest.raises(RuntimeError, match="device lost"):
        gpuqueens.nqueens(11, backend="gpu", checkpoint=checkpoint, progress=False)
    unit_row = plan.plan_for(11, "gpu").unit_row
    assert all(size >= 200 or mark == 8 for size, mark in calls)  # expanded for the GPU
    assert all(mark > unit_row for _, mark in calls)
    resumed = gpuqueens.nqueens(11, backend="cpu", checkpoint=checkpoint, progress=False)
    assert (resumed.total, resumed.unique) == (total(11), unique(11))
    monkeypatch.setattr(gpu, "count_prefixes_gpu", real)
    whole = gpuqueens.nqueens(11, backend="gpu", progress=False)  # 16 units, none dies
    assert (whole.total, whole.unique) == (total(11), unique(11))


# --- the symmetric search (kernels/nqueens_symmetric.cu) against its NumPy twin ---------


@pytest.mark.parametrize("n", range(1, 15))
def test_symmetric_counts_on_the_gpu_path(fake_gpu, n):
    assert gpu.count_symmetric_gpu(n, block_size=64) == count_symmetric(n)


def _random_symmetric_prefixes(n: int, rows: int, size: int, rng: np.random.Generator):
    """Random prefixes of ``rows`` rows: a random sample of at most ``size`` kept at each row."""
    p = symmetric_prefixes(n, 1)
    while p.rows < rows:
        p = expand_symmetric(p)
        if len(p) > size:
            p = p.take(np.sort(rng.choice(len(p), size=size, replace=False)))
    return p


@pytest.mark.parametrize("n", [4, 5, 7, 8, 9, 12, 13, 18, 20, 21, 24, 25, 28, 29, 31, 32])
def test_symmetric_prefix_counts_match_numpy(fake_gpu, n):
    # deep random prefixes up to n = 32 (3 rows left below them), one count pair each
    rng = np.random.default_rng(n)
    rows = max(1, n // 2 - 3) if n > 9 else int(rng.integers(1, n // 2 + 1))
    prefixes = _random_symmetric_prefixes(n, rows, 60, rng)
    expected = count_symmetric_below(prefixes, per_prefix=True)
    got = gpu.count_symmetric_prefixes_gpu(prefixes, per_prefix=True, block_size=32)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert gpu.count_symmetric_prefixes_gpu(prefixes) == tuple(int(a.sum()) for a in expected)


@pytest.mark.parametrize("n,rows", [(16, 3), (17, 2), (20, 3)])
def test_quarter_turn_leaves_prefix_by_prefix(fake_gpu, n, rows):
    # the prefixes with F90 leaves below them, and as many others, prefix by prefix
    prefixes = symmetric_prefixes(n, rows)
    f180, f90 = count_symmetric_below(prefixes, per_prefix=True)
    rng = np.random.default_rng(n)
    quarter = np.flatnonzero(f90)
    assert quarter.size > 0
    pick = np.union1d(quarter, rng.choice(len(prefixes), size=quarter.size, replace=False))
    got = gpu.count_symmetric_prefixes_gpu(prefixes.take(pick), per_prefix=True, block_size=32)
    np.testing.assert_array_equal(got[0], f180[pick])
    np.testing.assert_array_equal(got[1], f90[pick])


def test_symmetric_kernel_launch_contract(fake_gpu):
    prefixes = symmetric_prefixes(12, 2)
    assert gpu.count_symmetric_prefixes_gpu(prefixes.take(np.zeros(0, dtype=np.intp))) == (0, 0)
    kernel = kernels.load_module(gpu.SYMMETRIC_SOURCE, gpu.kernel_options()).get_function("nqueens_symmetric")
    records = fake_gpu.asarray(prefixes.records())
    sums = fake_gpu.zeros(2, dtype=np.uint64)
    kernel((3,), (32,), (np.int32(12), np.int32(2), np.int64(len(prefixes)), records, sums))
    assert tuple(int(v) for v in sums.get()) == count_symmetric_below(prefixes)
    with pytest.raises(LaunchError, match="rows"):
        kernel((1,), (32,), (np.int32(12), np.int32(7), np.int64(len(prefixes)), records, sums))
    with pytest.raises(LaunchError, match="record words"):
        kernel((1,), (32,), (np.int32(12), np.int32(2), np.int64(len(prefixes) + 1), records, sums))


def test_matchstick_transfer_on_the_gpu_path(fake_gpu):
    assert gpuqueens.matchstick_counts(3, 4, backend="gpu") == gpuqueens.matchstick_counts(3, 4, backend="cpu")
    assert gpuqueens.matchsticks(10, 10, removed=13, backend="gpu") == 135871476036610693224


def run_benchmark(*args: str) -> subprocess.CompletedProcess:
    """bench/gpu_nqueens.py with these arguments, on the stand-in (tests/fake_gpu_run.py)."""
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, str(root / "tests" / "fake_gpu_run.py"), str(root / "bench" / "gpu_nqueens.py"), *args],
        capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("path", ["api", "direct"])
def test_gpu_benchmark_script_dry_run(tmp_path, path):
    # the GPU benchmark (bench/gpu_nqueens.py) run end to end on the stand-in, so that a
    # broken script is found before anyone rents a GPU to run it; its times mean nothing
    out = tmp_path / "rows.json"
    result = run_benchmark("--nmin", "8", "--nmax", "10", "--no-cold", "--repeats", "1", "--path", path,
                           "--json", str(out))
    assert result.returncode == 0, result.stderr
    rows = json.loads(out.read_text())
    assert [(r["n"], r["total"], r["unique"]) for r in rows] == [(n, total(n), unique(n)) for n in (8, 9, 10)]
    assert all(r["plain_nodes"] > 0 and r["warm_s"] > 0 for r in rows)


def test_gpu_benchmark_stops_before_an_n_that_would_pass_its_budget(tmp_path):
    # --budget-s: the rows so far are kept, the JSON file holds them, and the run ends with a
    # line saying which n were left out (a count of n taken as at most 9x one of n - 1)
    out = tmp_path / "rows.json"
    result = run_benchmark("--nmin", "8", "--nmax", "17", "--no-cold", "--repeats", "1", "--plain-nodes-max", "0",
                           "--budget-s", "1", "--json", str(out))
    assert result.returncode == 0, result.stderr
    rows = json.loads(out.read_text())
    last = rows[-1]["n"]
    assert 8 <= last < 17 and [r["n"] for r in rows] == list(range(8, last + 1))
    assert f"# n={last + 1}..17 skipped" in result.stdout and "of --budget-s 1 left" in result.stdout
    assert all((r["total"], r["unique"]) == (total(r["n"]), unique(r["n"])) for r in rows)


def test_device_run_dry_run(emulator_libraries, tmp_path):
    # bench/device_run.sh's GPU steps and table end to end on the stand-in (no peers, no ncu),
    # so that the script is not first tried on rented GPU time; its times mean nothing
    from fake_cupy_site import write_site

    root = Path(__file__).resolve().parent.parent
    tools = tmp_path / "bin"  # a compute-sanitizer that runs the command after its 4 options
    tools.mkdir()
    (tools / "compute-sanitizer").write_text('#!/bin/sh\nshift 4\n"$@" && echo "= ERROR SUMMARY: 0 errors"\n')
    (tools / "compute-sanitizer").chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(write_site(tmp_path / "site")),
               FAKE_CUPY_LIBRARIES=json.dumps({k: str(v) for k, v in emulator_libraries.items()}),
               PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "out"
    done = subprocess.run(
        ["bash", str(root / "bench" / "device_run.sh"), "--nmax", "10", "--budget", "300",
         "--steps", "smoke bench sanitize direct table", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600, cwd=root, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    for tool in ("memcheck", "racecheck"):  # bench/gpu_sanitize.py's cases, each against the CPU
        assert re.search(rf"{tool}: (\d+) of \1 cases agree with the CPU", done.stdout)
        assert f"{tool}: = ERROR SUMMARY: 0 errors" in done.stdout
    assert [r["n"] for r in json.loads((out / "smoke.json").read_text())] == list(range(4, 11))
    rows = json.loads((out / "ours.json").read_text())
    assert [(r["n"], r["total"]) for r in rows] == [(n, total(n)) for n in (8, 9, 10)]
    assert [r["n"] for r in json.loads((out / "direct.json").read_text())] == [10]
    table = (out / "table.txt").read_text().splitlines()
    assert table[0].split()[:5] == ["n", "total", "ours", "s", "goal"]
    assert table[3].split()[:2] == ["10", str(total(10))] and table[3].split()[4] != "-"  # kernel s
    assert "not run" not in done.stdout and "stopped" not in done.stdout


def test_sanitizer_cases_say_which_result_differs(fake_gpu, monkeypatch, capsys):
    # bench/gpu_sanitize.py: a case whose GPU result is not the CPU's, or that raises, fails the
    # run (showing both results, or the error) without stopping the cases after it
    root = Path(__file__).resolve().parent.parent
    monkeypatch.syspath_prepend(str(root / "bench"))
    import gpu_sanitize

    both = gpu_sanitize.BOTH
    monkeypatch.setattr(gpu_sanitize, "CASES", [
        ("agrees", "k1", both, lambda: gpu_sanitize.nqueens_per_prefix(9, 4, 1)),
        ("differs", "k2", both, lambda: ([1, 2], [1, 3])),
        ("raises", "k3", both, lambda: 1 // 0),
        ("agrees too", "k4", both, lambda: (5, 5)),
    ])
    assert gpu_sanitize.main([]) == 1
    out = capsys.readouterr().out
    assert out.startswith("ok   agrees") and "DIFF differs" in out
    assert "GPU [1, 2]" in out and "CPU [1, 3]" in out
    assert "FAIL raises" in out and "ZeroDivisionError" in out and "ok   agrees too" in out
    assert "2 of 4 cases agree" in out


def test_each_sanitizer_gets_its_own_cases(fake_gpu, monkeypatch, capsys):
    # bench/gpu_sanitize.py --tool: racecheck (shared memory only) skips what only memcheck
    # needs, and every kernel of ours is still launched under each checker
    root = Path(__file__).resolve().parent.parent
    monkeypatch.syspath_prepend(str(root / "bench"))
    import gpu_sanitize

    cases, ran = gpu_sanitize.CASES, {}
    for tool in gpu_sanitize.BOTH:
        picked = [c for c in cases if tool in c[2]]
        ran[tool] = {k.strip() for c in picked for k in c[1].split(",")}
        # the same cases with a check that passes, and one meant for no checker that fails
        monkeypatch.setattr(gpu_sanitize, "CASES", [(w, k, t, lambda: (1, 1)) for w, k, t, _ in picked]
                            + [("other", "x", (), lambda: (1, 2))])
        assert gpu_sanitize.main(["--tool", tool]) == 0
        assert f"{len(picked)} of {len(picked)} cases agree" in capsys.readouterr().out
    ours = {"nqueens_count", "nqueens_count_each", "nqueens_symmetric", "nqueens_symmetric_each",
            "matchsticks_pass", "matchsticks_join", "matchstick_join_pairs"}
    assert ours <= ran["memcheck"] and ours <= ran["racecheck"]
    assert "CuPy arrays only" in ran["memcheck"] and "CuPy arrays only" not in ran["racecheck"]


def test_gpu_benchmark_script_takes_the_depth_of_work_items(tmp_path):
    # --mark 6 --split 2: the A/B of how deep the device's work items start (run on a GPU)
    out = tmp_path / "rows.json"
    result = run_benchmark("--nmin", "11", "--nmax", "11", "--no-cold", "--repeats", "1", "--path", "direct",
                           "--mark", "6", "--split", "2", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "split=2" in result.stdout
    assert [(r["n"], r["total"], r["unique"]) for r in json.loads(out.read_text())] == [(11, total(11), unique(11))]


def test_gpu_benchmark_script_takes_the_expanded_rows(tmp_path):
    # --expand 3: the search a row deeper than the default (run on a GPU)
    out = tmp_path / "rows.json"
    result = run_benchmark("--nmin", "8", "--nmax", "11", "--no-cold", "--repeats", "1", "--path", "direct",
                           "--expand", "3", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "expand=3" in result.stdout
    assert "# n=8 skipped: no room below the mark row" in result.stdout  # mark 5 + 3 rows > 7
    assert [(r["n"], r["total"], r["unique"]) for r in json.loads(out.read_text())] == \
        [(n, total(n), unique(n)) for n in (9, 10, 11)]
    both = run_benchmark("--nmin", "11", "--nmax", "11", "--path", "direct", "--expand", "1", "--split", "1")
    assert both.returncode == 2 and "give one" in both.stderr
    api = run_benchmark("--nmin", "11", "--nmax", "11", "--expand", "1")
    assert api.returncode == 2 and "--expand goes with --path direct" in api.stderr


def test_host_side_timing_of_the_benchmark(capsys):
    # bench/gpu_nqueens.py --host-side: the public call with the device's work stubbed out
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "bench"))
    import gpu_nqueens

    from gpuqueens.problems.nqueens import gpu as module

    before = module.count_prefixes_gpu
    assert gpu_nqueens.main(["--host-side", "--nmin", "8", "--nmax", "9"]) == 0
    assert "n=9: host side" in capsys.readouterr().out
    assert module.count_prefixes_gpu is before  # the stubs are taken out again
