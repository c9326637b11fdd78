"""The check of a GPU before its first count (gpuqueens/problems/nqueens/gpu_check.py),
through the CuPy stand-in: a device that counts right is checked once; one that counts a
check board wrong is refused before any count, in Python and in the shell."""

from __future__ import annotations

import shutil

import pytest
from fake_cupy import fake_cupy_installed
from fake_cupy_site import emulator_libraries
from oeis import total, unique

import gpuqueens
from gpuqueens import cli
from gpuqueens.problems.nqueens import gpu, gpu_check


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path_factory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    libraries = emulator_libraries(lambda: tmp_path_factory.mktemp("emulator"))
    with fake_cupy_installed(monkeypatch, libraries, gpu._device_limits_of, device_checks=True) as fake:
        yield fake


def test_the_check_boards_agree_with_the_published_counts():
    # the reference is the NumPy search; the boards' counts are OEIS's
    for n, mark in gpu_check.CHECK_BOARDS:
        weight, f180, f90 = gpu_check.reference_counts(n, mark)
        assert weight == 3 * total(n) and (total(n) + f180 + 2 * f90) // 8 == unique(n)


def test_a_device_that_counts_right_is_checked_once(fake_gpu):
    assert gpuqueens.count(10, backend="gpu") == total(10)
    assert gpuqueens.count(11, backend="gpu") == total(11)
    info = gpu_check._check_device_of.cache_info()
    assert (info.misses, info.currsize) == (1, 1)  # one check, kept for the process
    # the check ran the count's own path: the device's expansion of the prefixes
    assert gpu._module(False).get_function("nqueens_expand").launches


@pytest.mark.parametrize("wrong", ["weight", "symmetric"])
def test_a_device_that_counts_wrong_is_refused(fake_gpu, monkeypatch, wrong):
    if wrong == "weight":
        right = gpu.count_prefixes_gpu
        monkeypatch.setattr(gpu, "count_prefixes_gpu", lambda prefixes, **kw: right(prefixes, **kw) + 24)
    else:
        monkeypatch.setattr(gpu, "count_symmetric_gpu", lambda n: (0, 0))
    with pytest.raises(gpuqueens.DeviceCheckError, match=r"n=13, prefixes at row 3: .* backend='cpu'"):
        gpuqueens.nqueens(10, backend="gpu")
    with pytest.raises(gpuqueens.DeviceCheckError):  # not remembered as checked
        gpuqueens.count(9, backend="gpu")
    assert gpuqueens.count(10, backend="cpu") == total(10)  # the CPU still counts


def test_the_shell_says_it_in_one_line(fake_gpu, monkeypatch, capsys):
    monkeypatch.setattr(gpu, "count_symmetric_gpu", lambda n: (2, 0))
    assert cli.main(["nqueens", "10", "--backend", "gpu"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuqueens: error: the GPU (") and err.count("\n") == 1
