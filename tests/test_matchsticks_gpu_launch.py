"""The matchstick GPU path's Python side, run without a GPU through the CuPy stand-in.

``tests/fake_cupy.py`` replaces CuPy; the matchstick kernels' launches are checked against
their signatures and launch contracts and run by the host emulation of their own phases
(tests/fake_matchsticks.py, tests/native/matchsticks_launch_emulator.cu). So the launcher
(gpuqueens/problems/matchsticks/gpu.py: buffers, the pass schedule, the kept S_c, shared
memory opt-in, the join's partial sums, lane batches) and the public API on backend="gpu"
are exercised here; tests/test_matchsticks_gpu.py runs the same on a real GPU.
"""

from __future__ import annotations

import collections
import itertools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_cupy import FAKE_DEVICE_NAME, LaunchError, fake_cupy_installed
from fake_matchsticks import shared_library
from oeis import NO_LEAF_GRID

import gpuqueens
from gpuqueens import backends, kernels
from gpuqueens.problems.matchsticks import gpu
from gpuqueens.problems.matchsticks.transfer import count_by_removed

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed"),
]


@pytest.fixture
def fake_gpu(monkeypatch):
    # the matchstick kernels only
    with fake_cupy_installed(monkeypatch, {"matchsticks": shared_library()}) as fake:
        yield fake


@pytest.mark.parametrize("m,n", [(1, 1), (1, 4), (2, 2), (2, 3), (3, 3), (4, 3), (3, 6), (5, 5), (4, 9)])
def test_whole_distributions_equal_the_coefficient_transfer(fake_gpu, m, n):
    assert gpu.count_by_removed_gpu(m, n) == count_by_removed(m, n)


@pytest.mark.parametrize("m, n, removed", [(11, 11, 3), (10, 20, 3)])
def test_shorter_sides_past_a_tile_count_exactly(fake_gpu, m, n, removed):
    # h + 1 > TILE_STEPS: passes wrap to the next column's row 0, whose state bits lie
    # below the pass's first row; the kernel's tile copy once stepped through them in the
    # wrong order (11×11, R = 3: 2737904 instead of 2737936, which all C(264, 3) removal
    # sets give).
    assert gpuqueens.matchsticks(m, n, removed=removed, backend="gpu") == \
        gpuqueens.matchsticks(m, n, removed=removed, backend="cpu")


def _removal_sets_tried_one_by_one(m: int, n: int, removed: int) -> int:
    """Valid configurations with ``removed`` sticks removed, by trying every removal set:
    independent of the transfer methods (the CPU's stops at a shorter side of 13)."""
    sticks = [((y, x), (y, x + 1)) for y in range(m + 1) for x in range(n)]
    sticks += [((y, x), (y + 1, x)) for y in range(m) for x in range(n + 1)]
    touching = collections.Counter(point for stick in sticks for point in stick)
    valid = 0
    for gone in itertools.combinations(sticks, removed):
        left = collections.Counter(point for stick in gone for point in stick)
        valid += all(touching[point] - k != 1 for point, k in left.items())
    return valid


@pytest.mark.slow
def test_a_shorter_side_beyond_the_cpu_transfer_counts_exactly(fake_gpu):
    # 14×14: the kernel alone can count it, so removal sets are tried one by one instead
    assert gpu.count_by_removed_gpu(14, 14, 2) == [
        1, _removal_sets_tried_one_by_one(14, 14, 1), _removal_sets_tried_one_by_one(14, 14, 2)]


def test_trying_removal_sets_agrees_with_the_transfer():
    for m, n in [(1, 3), (2, 2), (3, 4)]:
        assert [_removal_sets_tried_one_by_one(m, n, r) for r in range(4)] == count_by_removed(m, n)[:4]


def test_tall_grids_have_passes_that_wrap_to_the_next_column():
    # what the two tests above run through the kernel's tile copy
    from gpuqueens.problems.matchsticks.evaluation import sweep_plan
    for h in (10, 12):
        assert any(one.first_row + one.steps > h + 1 for one in sweep_plan(h, h).passes)


def test_every_pass_and_the_join_are_launched(fake_gpu):
    gpu.count_by_removed_gpu(4, 6)
    module = gpu._module()
    passes = module.get_function("matchsticks_pass").launches
    joins = module.get_function("matchsticks_join").launches
    # 4×6: 4 columns of 5 rows in passes of 5 steps, split at S_3; 2 primes × 59 points (15 groups)
    assert len(passes) == 4 and len(joins) == 1
    assert all(block == gpu.BLOCK_SIZE and shared == (2 << 5) * 8 * 4 for _, block, shared in passes)


def test_lane_batches_and_long_tiles(fake_gpu, monkeypatch):
    # a device with room for two lane groups at a time: many batches, the last one short
    h, w = 3, 8
    per_group = gpu.state_bytes_per_lane(h, w) * 8
    free = int(2.5 * per_group / gpu.MEMORY_FRACTION)
    monkeypatch.setattr(fake_gpu.cuda.runtime, "memGetInfo", lambda: (free, free))
    assert gpu.lanes_per_batch(h, w, free) == 16
    assert gpu.count_by_removed_gpu(h, w) == count_by_removed(h, w)
    joins = gpu._module().get_function("matchsticks_join").launches
    assert len(joins) == -(-2 * 60 // 16)  # 2 primes × 60 points (E = 59), 16 lanes a batch


def test_tiles_beyond_48k_opt_in_to_more_shared_memory(fake_gpu):
    gpu.count_by_removed_gpu(10, 11, 3)  # passes of 10 steps: 64 KiB tiles
    kernel = gpu._module().get_function("matchsticks_pass")
    assert kernel.max_dynamic_shared_size_bytes == 64 * 1024
    assert max(shared for _, _, shared in kernel.launches) == 64 * 1024


def test_the_fake_rejects_a_grid_that_misses_tiles(fake_gpu):
    import numpy as np

    kernel = gpu._module().get_function("matchsticks_pass")
    states = fake_gpu.zeros(8 * 16, dtype=np.uint32)
    lanes = fake_gpu.zeros(8 * 7, dtype=np.uint32)
    with pytest.raises(LaunchError, match="grid"):
        kernel((1,), (256,), (states, states, lanes, np.int64(1), np.int32(2), np.int32(0),
                              np.int32(1), np.int32(1)), shared_mem=4 * 8 * 4)


def test_not_enough_device_memory_is_a_clear_error():
    with pytest.raises(ValueError, match=r"24×24: one group of 8 lanes needs 4\.0 GiB of device "
                                         r"memory, 1\.0 GiB are free"):
        gpu.lanes_per_batch(24, 24, 2**30)
    with pytest.raises(ValueError, match=r"needs 16\.0 MiB .* 9\.5 MiB are free"):  # not "0.0 GiB"
        gpu.lanes_per_batch(16, 16, 10**7)


def test_public_api_on_the_gpu_path(fake_gpu):
    assert backends.device_name("gpu") == f"{FAKE_DEVICE_NAME} (device 0)"
    assert gpuqueens.matchstick_counts(3, 5, backend="gpu") == count_by_removed(3, 5)
    assert gpuqueens.matchstick_counts(2, 7) == count_by_removed(2, 7)  # "auto" picks the fake GPU
    assert gpuqueens.matchsticks(10, 10, removed=13, backend="gpu") == 135871476036610693224
    assert sum(gpuqueens.matchstick_counts(4, 14, backend="gpu")) == NO_LEAF_GRID[5][14] > 2**64
    assert len(gpu._module().get_function("matchsticks_join").launches) == 4  # one per call above


def test_auto_keeps_on_the_cpu_a_grid_the_gpu_method_cannot_count(fake_gpu, monkeypatch, capsys):
    from gpuqueens.cli import main
    from gpuqueens.problems.matchsticks.api import by_removed_backend

    # the refusal itself, from the estimate alone: 1×20000 needs 1,273 primes ≡ 1 (mod 60002)
    # below 2^29, and there are about 445
    assert by_removed_backend(1, 20000, None) == "cpu"
    assert by_removed_backend(2, 7, None) == "gpu"
    for asked_for_the_gpu in (lambda: gpuqueens.matchstick_counts(1, 20000, backend="gpu"),
                              lambda: by_removed_backend(1, 20000, None, "gpu")):
        with pytest.raises(ValueError, match="too many sticks for the GPU method"):
            asked_for_the_gpu()

    # counted, on a small grid: primes below 2^8 are too few for its 39 points
    monkeypatch.setattr("gpuqueens.problems.matchsticks.costs.EVALUATION_PRIME_BITS", 8)

    def no_gpu(*_args, **_kwargs):
        raise AssertionError("the GPU method ran")

    monkeypatch.setattr(gpu, "count_by_removed_gpu", no_gpu)
    whole = count_by_removed(3, 5)
    assert gpuqueens.matchstick_counts(3, 5) == whole
    # by R (7), by sticks kept (30 removed, 8 kept): neither on the GPU, with or without "gpu"
    assert gpuqueens.matchsticks(3, 5, removed=7) == whole[7]
    assert gpuqueens.matchsticks(3, 5, removed=30) == whole[30]
    assert gpuqueens.matchsticks(3, 5, removed=30, backend="gpu") == whole[30]
    for argv in (["matchstick-counts", "3", "5"], ["matchsticks", "3", "5", "--removed", "7"],
                 ["matchsticks", "3", "5", "--removed", "30"]):
        assert main(argv) == 0
        assert capsys.readouterr().out.splitlines()[-1].startswith("[cpu]"), argv


def test_the_shell_says_where_the_counts_by_removed_ran(fake_gpu, monkeypatch, capsys):
    from gpuqueens.cli import main

    ran = []
    counting = gpu.count_by_removed_gpu
    monkeypatch.setattr(gpu, "count_by_removed_gpu", lambda *a, **k: ran.append(a) or counting(*a, **k))
    for argv, where in ((["matchstick-counts", "3", "5"], "gpu"),
                        (["matchsticks", "3", "5", "--removed", "7"], "gpu"),
                        (["matchsticks", "3", "5", "--removed", "0"], "cpu"),     # a closed form
                        (["matchsticks", "3", "5", "--removed", "34"], "cpu"),    # 4 kept: closed
                        (["matchsticks", "1", "1000", "--removed", "2"], "cpu")):  # column powers
        ran.clear()
        assert main(argv) == 0
        assert capsys.readouterr().out.splitlines()[-1].startswith(f"[{where}]"), argv
        assert bool(ran) == (where == "gpu"), argv


def test_cpu_backend_does_not_touch_the_device(fake_gpu):
    assert gpuqueens.matchstick_counts(3, 5, backend="cpu") == count_by_removed(3, 5)
    assert gpuqueens.matchsticks(4, 4, removed=9, backend="cpu") == 4975368
    assert kernels._load.cache_info().currsize == 0  # no kernel module was built


def test_gpu_benchmark_script_dry_run(tmp_path):
    # bench/gpu_matchsticks.py end to end on the stand-in, so that a broken script is
    # found before anyone rents a GPU to run it; its times mean nothing
    out = tmp_path / "rows.json"
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, str(root / "tests" / "fake_gpu_run.py"), str(root / "bench" / "gpu_matchsticks.py"),
         "--grids", "2-3,3x7", "--repeats", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = json.loads(out.read_text())
    assert [(r["grid"], int(r["total"])) for r in rows] == [
        ("2x2", NO_LEAF_GRID[3][2]), ("3x3", NO_LEAF_GRID[4][3]), ("3x7", NO_LEAF_GRID[4][7])]
    assert all(r["checks"] == ["primes+2", "ends", "cpu", "cupy"] for r in rows)
    assert "checks" in result.stdout.splitlines()[-4]  # the table comes last
    # the file keeps each distribution (the printed lines do not), which the CPU checks
    assert all(sum(map(int, r["counts"])) == int(r["total"]) for r in rows) and '"counts"' not in result.stdout
    check = [sys.executable, str(root / "bench" / "cpu_check_distributions.py"), str(out)]
    result = subprocess.run(check, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.count("equal to the CPU") == 3, result.stdout + result.stderr
    rows[2]["counts"][5] = str(int(rows[2]["counts"][5]) + 1)  # one count of 3×7 wrong
    del rows[0]["counts"]                                      # an older file's row: its total
    out.write_text(json.dumps(rows))
    result = subprocess.run(check, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2x2: the total, P(1): equal to the CPU")
    assert lines[1].startswith("3x3: P(x) at 8 random points: equal to the CPU")
    assert lines[2].startswith("3x7: P(x) at 8 random points: DIFFERENT from the CPU")


def test_gpu_benchmark_sizes_batches_as_on_a_smaller_card(tmp_path):
    # --memory-gb: the batches of lanes are sized for that much free memory; too little for
    # one group of 8 lanes is the library's own clear refusal
    root = Path(__file__).resolve().parent.parent
    command = [sys.executable, str(root / "tests" / "fake_gpu_run.py"), str(root / "bench" / "gpu_matchsticks.py"),
               "--grids", "3", "--repeats", "0", "--json", str(tmp_path / "rows.json")]
    result = subprocess.run(command + ["--memory-gb", "0.001"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert int(rows[0]["total"]) == NO_LEAF_GRID[4][3] and rows[0]["memory_gb"] == 0.001
    result = subprocess.run(command + ["--memory-gb", "1e-9"], capture_output=True, text=True, timeout=600)
    assert result.returncode != 0 and "one group of 8 lanes needs" in result.stderr


def test_table_sample_dry_run(tmp_path):
    # bench/gpu_matchstick_sample.py on the stand-in: every centre pattern of 5×5's first
    # round joined on the (fake) device finds the table's rows; a sample projects the round
    root = Path(__file__).resolve().parent.parent
    script = [sys.executable, str(root / "tests" / "fake_gpu_run.py"), str(root / "bench" / "gpu_matchstick_sample.py")]
    result = subprocess.run(script + ["5x5", "--patterns", "all", "--check"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert "check: the 13 rows found equal the table's" in result.stdout
    out = tmp_path / "sample.json"
    result = subprocess.run(script + ["6x6", "--patterns", "3", "--json", str(out)], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    summary = json.loads(out.read_text())
    assert (summary["patterns"], summary["sampled"], len(summary["join_s"])) == (36, 3, 3)
    assert summary["projected_round_s"] == pytest.approx(summary["sweeps_s"] + 36 * summary["mean_join_s"])


def test_tiles_of_11_steps_and_a_refused_12(fake_gpu):
    import numpy as np

    from gpuqueens.problems.matchsticks.evaluation import lane_words

    lanes = lane_words([536870849] * 8, [3] * 8)  # any prime < 2^29 and point will do
    same = gpu.sweep_values_gpu(11, 13, lanes, tile_steps=11)
    assert np.array_equal(same, gpu.sweep_values_gpu(11, 13, lanes, tile_steps=4))
    assert gpu._module().get_function("matchsticks_pass").max_dynamic_shared_size_bytes == 128 * 1024
    with pytest.raises(ValueError, match="tile_steps"):
        gpu.sweep_values_gpu(11, 13, lanes, tile_steps=12)


def test_grids_beyond_the_checked_sizes_are_refused_before_any_launch(fake_gpu):
    # (the kernel's word offsets would need more care from a shorter side of 28 on)
    from gpuqueens.problems.matchsticks.evaluation import lane_words
    from gpuqueens.problems.matchsticks.transfer import MAX_GPU_TRANSFER_SHORT_SIDE

    too_wide = MAX_GPU_TRANSFER_SHORT_SIDE + 1
    lanes = lane_words([536870849] * 8, [3] * 8)
    with pytest.raises(ValueError, match=f"shorter side must be 1..{MAX_GPU_TRANSFER_SHORT_SIDE}"):
        gpu.sweep_values_gpu(too_wide, too_wide, lanes)
    with pytest.raises(ValueError, match="limited to a shorter side"):
        gpu.count_by_removed_gpu(too_wide, 30)
