"""Which backend runs: the ``backend=`` argument, ``GPUQUEENS_BACKEND``, and the CUDA probe.

``"auto"`` picks the GPU when CuPy is installed *and* a CUDA device is usable, else the CPU.
Importing CuPy succeeds on machines without a driver, so the probe goes as far as compiling
and running a tiny kernel; any failure on that path means "no usable GPU", never a crash.
"""

from __future__ import annotations

import functools
import os
import warnings

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "BackendUnavailableError",
    "GPUFallbackWarning",
    "gpu_status",
    "resolve_backend",
    "device_name",
]

BACKENDS = ("auto", "cpu", "gpu")
BACKEND_ENV = "GPUQUEENS_BACKEND"

_PROBE_SOURCE = r"""
extern "C" __global__ void gpuqueens_probe(int* out) { out[threadIdx.x] = threadIdx.x + 1; }
"""


class BackendUnavailableError(RuntimeError):
    """``backend="gpu"`` was asked for but no usable CUDA device is there."""


class GPUFallbackWarning(RuntimeWarning):
    """``backend="auto"`` found no usable GPU and runs on the CPU instead."""


@functools.lru_cache(maxsize=None)
def gpu_status() -> tuple[bool, str]:
    """Return ``(usable, reason)``: whether CuPy can run a kernel on device 0, and why not."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy that fails while importing
        return False, f"CuPy is not installed or does not import ({exc.__class__.__name__}: {exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            return False, "CuPy found no CUDA device"
        kernel = cupy.RawKernel(_PROBE_SOURCE, "gpuqueens_probe")
        out = cupy.zeros(4, dtype=cupy.int32)
        kernel((1,), (4,), (out,))
        if out.get().tolist() != [1, 2, 3, 4]:
            return False, "the probe kernel ran but returned wrong values"
    except Exception as exc:  # driver, runtime or NVRTC problems all land here
        return False, f"CUDA is not usable ({exc.__class__.__name__}: {exc})"
    return True, "ok"


_warned_fallback = False


def resolve_backend(backend: str | None = "auto") -> str:
    """Turn a requested backend into the one that will run: ``"cpu"`` or ``"gpu"``.

    ``None`` and ``"auto"`` consult ``GPUQUEENS_BACKEND`` first (``None`` only), then probe.

    >>> resolve_backend("cpu")
    'cpu'
    """
    global _warned_fallback
    if backend is None:
        backend = os.environ.get(BACKEND_ENV, "auto") or "auto"
        source = f"{BACKEND_ENV}={backend!r}"
    else:
        source = f"backend={backend!r}"
    if not isinstance(backend, str) or backend.lower() not in BACKENDS:
        raise ValueError(f"{source} is not one of {', '.join(BACKENDS)}")
    backend = backend.lower()
    if backend == "cpu":
        return "cpu"
    usable, reason = gpu_status()
    if backend == "gpu":
        if not usable:
            raise BackendUnavailableError(f"backend='gpu' was requested but {reason}")
        return "gpu"
    if usable:
        return "gpu"
    if not _warned_fallback:
        _warned_fallback = True
        warnings.warn(f"no usable GPU, running on the CPU: {reason}", GPUFallbackWarning, stacklevel=3)
    return "cpu"


def device_name(backend: str) -> str:
    """A human-readable name of the device a resolved backend runs on."""
    if backend == "gpu":
        import cupy

        device = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(device.id)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        return f"{name} (device {device.id})"
    import platform

    return f"CPU ({platform.processor() or platform.machine()})"
