"""The check of a GPU before the first use of a matchstick kernel
(gpuqueens/problems/matchsticks/gpu_check.py), through the CuPy stand-in: a device that
computes right is checked once per path; one that gets a check grid wrong is refused
before any count, in Python and in the shell."""

from __future__ import annotations

import shutil

import pytest
from fake_cupy import fake_cupy_installed
from fake_cupy_site import emulator_libraries

import gpuqueens
from gpuqueens import cli
from gpuqueens.problems.matchsticks import gpu, gpu_check, gpu_join
from gpuqueens.problems.matchsticks.transfer import count_by_removed

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path_factory):
    libraries = emulator_libraries(lambda: tmp_path_factory.mktemp("emulator"))
    with fake_cupy_installed(monkeypatch, libraries, device_checks=True) as fake:
        yield fake


def test_each_path_is_checked_once(fake_gpu):
    assert gpuqueens.matchstick_counts(3, 5, backend="gpu") == count_by_removed(3, 5)
    assert gpuqueens.matchstick_counts(5, 3, backend="gpu") == count_by_removed(5, 3)
    for squares in ([0], [1, 2]):  # (S that lose over 30 of the 55 squares: by the join)
        on_gpu = gpuqueens.matchstick_table(5, 5, squares, backend="gpu")
        assert on_gpu.rows == gpuqueens.matchstick_table(5, 5, squares, backend="cpu").rows
    info = gpu_check._check_device_of.cache_info()
    assert (info.misses, info.currsize) == (2, 2)  # the transfer and the join, once each


def test_a_wrong_transfer_is_refused(fake_gpu, monkeypatch):
    right = gpu.sweep_values_gpu

    def off_by_one(h, w, lanes, *args, **kwargs):
        values = right(h, w, lanes, *args, **kwargs)
        values[0] += 1
        return values

    monkeypatch.setattr(gpu, "sweep_values_gpu", off_by_one)
    with pytest.raises(gpuqueens.DeviceCheckError, match=r"the counts by R of the 4×5 grid: .* backend='cpu'"):
        gpuqueens.matchstick_counts(2, 2, backend="gpu")
    assert gpuqueens.matchstick_counts(2, 2, backend="cpu")[-1] == 1  # the CPU still counts


def test_a_wrong_join_is_refused_in_the_shell_too(fake_gpu, monkeypatch, capsys):
    right = gpu_join.table_centre

    def one_more(*args, **kwargs):
        found = right(*args, **kwargs)
        return {q: (r, ways + 1) for q, (r, ways) in found.items()}

    monkeypatch.setattr(gpu_join, "table_centre", one_more)
    with pytest.raises(gpuqueens.DeviceCheckError, match=r"the 4×4 table round's centre pattern [01]{4}: "):
        gpuqueens.matchstick_table(5, 5, [0], backend="gpu")
    assert cli.main(["matchstick-table", "5", "5", "--squares", "0", "--backend", "gpu"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuqueens: error: the GPU (") and err.count("\n") == 1


def test_problem_2_on_the_gpu_checks_the_join_first(fake_gpu, monkeypatch):
    from gpuqueens.problems.matchsticks.exact_join import exact_units, solve_exact_unit

    right = gpu_join.table_centre
    monkeypatch.setattr(gpu_join, "table_centre", lambda *args, **kwargs: {0: (0, 1), **right(*args, **kwargs)})
    with pytest.raises(gpuqueens.DeviceCheckError, match=r"the 4×4 table round's"):
        solve_exact_unit(exact_units(5, 5, 20, 1)[0].payload, backend="gpu")


def test_the_check_round_is_the_first_round_of_the_4x4_table():
    from gpuqueens.problems.matchsticks.table import first_round

    h, w, caps, level = gpu_check.CHECK_ROUND
    assert first_round(h, w, sorted(caps)) == (caps, level)


def test_too_little_memory_for_the_check_says_it_is_the_check(fake_gpu, monkeypatch):
    # a 2×2 count fits where the check's 4×5 does not: the 4×5 grid would otherwise be the
    # only grid the error names
    monkeypatch.setattr(gpu, "device_free_bytes", lambda xp: 2000)  # 2×2 needs 1.2 kB, 4×5 2.4 kB
    with pytest.raises(ValueError, match=r"^the check of the GPU before its first matchstick count "
                                         r".* could not run: 4×5: .* are free"):
        gpuqueens.matchstick_counts(2, 2, backend="gpu")
