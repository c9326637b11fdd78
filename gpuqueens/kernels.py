"""Find the CUDA sources in ``kernels/`` and build them with CuPy, once per device.

In an installed wheel the sources live in ``gpuqueens/_kernels``; in a source checkout they
are in the top-level ``kernels/`` folder. CuPy caches compiled modules on disk, so only the
first run on a machine pays the compile.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["kernel_source_path", "kernel_source", "load_module"]

_HERE = Path(__file__).resolve().parent
_SEARCH = (_HERE / "_kernels", _HERE.parent / "kernels")


def kernel_source_path(name: str) -> Path:
    """Path of ``kernels/<name>`` whether the package is installed or run from a checkout."""
    for folder in _SEARCH:
        path = folder / name
        if path.is_file():
            return path
    raise FileNotFoundError(f"CUDA source {name!r} not found in {', '.join(map(str, _SEARCH))}")


def kernel_source(name: str) -> str:
    """The text of ``kernels/<name>``."""
    return kernel_source_path(name).read_text()


@functools.lru_cache(maxsize=None)
def _load(name: str, options: tuple[str, ...], device_id: int):
    import cupy

    with cupy.cuda.Device(device_id):
        module = cupy.RawModule(code=kernel_source(name), options=options)
        module.compile()
    return module


def load_module(name: str, options: tuple[str, ...] = ("-std=c++17",)):
    """A compiled ``cupy.RawModule`` for ``kernels/<name>`` on the current device."""
    import cupy

    return _load(name, tuple(options), cupy.cuda.Device().id)
