"""Make the CuPy stand-in (tests/fake_cupy.py) the ``cupy`` of every process of a test.

A test that starts processes needs the stand-in in each of them: in this one and its forks
(``sys.modules``), in spawned workers and in the GPU probe's fresh interpreter, which import
``cupy`` anew. :func:`write_site` writes a folder holding a ``cupy`` package that builds the
stand-in when imported; put the folder first on ``sys.path`` (spawned processes inherit
``sys.path``, the probe gets it as ``PYTHONPATH``). The stand-in is configured through the
environment, which every child inherits:

* ``FAKE_CUPY_DEVICES``: how many physical devices (default 1);
* ``FAKE_CUPY_LIBRARIES``: JSON ``{"plain": path, "nodes": path}`` of the emulator builds
  (tests/fake_gpu_run.build_emulator); without it only the backend probe's kernel runs;
* ``FAKE_CUPY_LAUNCH_LOG``: a file to which each kernel launch appends "pid device".
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

_PACKAGE = '''"""CuPy replaced by gpuqueens' test stand-in (see tests/fake_cupy_site.py)."""
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, {tests!r})
from fake_cupy import make_fake_cupy

_libraries = {{key: Path(path) for key, path in json.loads(os.environ.get("FAKE_CUPY_LIBRARIES", "{{}}")).items()}}
# Fill this module rather than put the stand-in in its place in sys.modules: a thread that
# imports cupy while this runs gets this module object once the import is done.
for _name, _value in vars(make_fake_cupy(_libraries, devices=int(os.environ.get("FAKE_CUPY_DEVICES", "1")))).items():
    if _name == "__getattr__" or not _name.startswith("__"):
        globals()[_name] = _value
'''


def write_site(folder: Path) -> Path:
    """Write ``folder/cupy/__init__.py`` (the stand-in as a package) and return ``folder``."""
    package = folder / "cupy"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(_PACKAGE.format(tests=str(HERE)))
    return folder


_built: dict[str, Path] = {}


def emulator_libraries(folder_factory) -> dict[str, Path]:
    """The emulator builds (nvcc), made once per test session into ``folder_factory()``."""
    if not _built:
        from fake_gpu_run import build_emulator

        _built.update(build_emulator(folder_factory()))
    return dict(_built)


def forget_gpu_state() -> None:
    """Clear every cached probe, compiled module and device limit of this process."""
    from gpuqueens import backends, kernels
    from gpuqueens.problems.nqueens import gpu

    for cache in (backends.gpu_status, backends._report_here, backends._report_from_child,
                  kernels._load, kernels._stops_long_kernels, gpu._device_limits_of):
        cache.cache_clear()


def install(monkeypatch, folder: Path, *, devices: int = 1, libraries: dict[str, Path] | None = None,
            visible: str | None = None, launch_log: Path | None = None):
    """Make the stand-in this test's ``cupy`` everywhere, with fresh gpuqueens GPU state;
    return the module. Undone by ``monkeypatch`` (call :func:`forget_gpu_state` after it)."""
    import importlib
    import json
    import sys

    from gpuqueens import backends, fork_safety, worker_setup

    forget_gpu_state()
    monkeypatch.setattr(fork_safety, "_initialised_in", None)
    monkeypatch.setattr(fork_safety, "_forked_after_cuda", False)
    monkeypatch.setattr(worker_setup, "_prepared", set())
    monkeypatch.setattr(backends, "_warned_fallback", False)
    monkeypatch.setenv("FAKE_CUPY_DEVICES", str(devices))
    monkeypatch.setenv("FAKE_CUPY_LIBRARIES", json.dumps({k: str(v) for k, v in (libraries or {}).items()}))
    if launch_log is not None:
        monkeypatch.setenv("FAKE_CUPY_LAUNCH_LOG", str(launch_log))
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    monkeypatch.syspath_prepend(str(write_site(folder)))
    monkeypatch.setitem(sys.modules, "cupy", None)  # undone: the module before, or none
    del sys.modules["cupy"]
    return importlib.import_module("cupy")  # the stand-in, built by the site's package


def launches(log: Path) -> dict[int, set[int]]:
    """``{pid: physical devices it launched kernels on}`` from a launch log."""
    found: dict[int, set[int]] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            pid, device = map(int, line.split())
            found.setdefault(pid, set()).add(device)
    return found
