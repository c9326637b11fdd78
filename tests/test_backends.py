"""Backend selection: explicit choice, the environment variable, and the CPU fallback."""

import warnings

import pytest

import gpuqueens
from gpuqueens import backends


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(backends, "gpu_status", lambda: (False, "no device in this test"))
    monkeypatch.setattr(backends, "_warned_fallback", False)


def test_cpu_is_always_available():
    assert backends.resolve_backend("cpu") == "cpu"
    assert backends.resolve_backend("CPU") == "cpu"


def test_auto_falls_back_to_cpu_and_warns_once(no_gpu):
    with pytest.warns(gpuqueens.GPUFallbackWarning, match="no device in this test"):
        assert backends.resolve_backend("auto") == "cpu"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise here
        assert backends.resolve_backend("auto") == "cpu"


def test_gpu_without_device_is_a_clear_error(no_gpu):
    with pytest.raises(gpuqueens.BackendUnavailableError, match="no device in this test"):
        backends.resolve_backend("gpu")
    with pytest.raises(gpuqueens.BackendUnavailableError):
        gpuqueens.count(8, backend="gpu")


def test_environment_variable_sets_the_default(no_gpu, monkeypatch):
    monkeypatch.setenv("GPUQUEENS_BACKEND", "cpu")
    assert backends.resolve_backend(None) == "cpu"
    assert gpuqueens.nqueens(6).backend == "cpu"
    monkeypatch.setenv("GPUQUEENS_BACKEND", "gpu")
    # the error names the variable: the caller passed no backend
    with pytest.raises(gpuqueens.BackendUnavailableError,
                       match=r"GPUQUEENS_BACKEND=gpu \(no backend= given\) was requested but"):
        gpuqueens.count(8)
    with pytest.raises(gpuqueens.BackendUnavailableError, match="^backend='gpu' was requested"):
        gpuqueens.count(8, backend="gpu")
    for call in (lambda: gpuqueens.matchsticks(2, 2, removed=3, squares=1),  # by squares too
                 lambda: gpuqueens.matchsticks(6, 6, removed=19, squares=0),
                 lambda: gpuqueens.matchstick_counts(2, 2)):
        with pytest.raises(gpuqueens.BackendUnavailableError,
                           match=r"GPUQUEENS_BACKEND=gpu \(no backend= given\)"):
            call()
    monkeypatch.setenv("GPUQUEENS_BACKEND", "quantum")
    with pytest.raises(ValueError, match="GPUQUEENS_BACKEND"):
        backends.resolve_backend(None)


@pytest.mark.parametrize("value", ["", "  ", " Cpu\t"])
def test_environment_variable_blank_means_auto_and_spaces_are_ignored(monkeypatch, value):
    monkeypatch.setenv("GPUQUEENS_BACKEND", value)
    assert backends.requested_backend(None) == (value.strip().lower() or "auto")


def test_auto_result_says_which_backend_ran(no_gpu):
    with pytest.warns(gpuqueens.GPUFallbackWarning):
        result = gpuqueens.nqueens(8, backend="auto")
    assert result.backend == "cpu" and result.total == 92


def test_probe_never_raises():
    usable, reason = backends.gpu_status()
    assert isinstance(usable, bool) and isinstance(reason, str)


def test_broken_cupy_import_is_reported_not_raised(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name == "cupy":
            raise ImportError("libcuda.so.1: cannot open shared object file")
        return real_import(name, *args, **kwargs)

    backends.gpu_status.cache_clear()
    monkeypatch.setattr(builtins, "__import__", failing_import)
    try:
        usable, reason = backends.gpu_status()
    finally:
        backends.gpu_status.cache_clear()
    assert not usable and "libcuda" in reason


def test_probe_in_a_fresh_process_reports_why_not(monkeypatch):
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    backends._report_from_child.cache_clear()
    try:
        report = backends.gpu_report(here=False)
    finally:
        backends._report_from_child.cache_clear()
    assert not report.usable and report.count == 0 and "CuPy is not installed" in report.reason


def test_gpu_with_an_executor_is_checked_by_its_workers(no_gpu):
    # this process does not probe (a Dask client may have no GPU); the worker says why it can't
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(gpuqueens.BackendUnavailableError, match="no device in this test"):
            gpuqueens.count(8, backend="gpu", executor=pool)


def test_requested_backend_is_checked_without_probing(monkeypatch):
    monkeypatch.setattr(backends, "gpu_status", lambda: pytest.fail("probed"))
    assert backends.requested_backend("GPU") == "gpu"
    with pytest.raises(ValueError, match="backend='tpu'"):
        backends.requested_backend("tpu")
    with pytest.raises(TypeError, match=r"backend must be a string \(auto, cpu, gpu\) or None, not int \(1\)"):
        backends.requested_backend(1)
