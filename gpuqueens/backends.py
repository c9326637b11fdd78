"""Which backend runs: the ``backend=`` argument, ``GPUQUEENS_BACKEND``, and the CUDA probe.

``"auto"`` picks the GPU when CuPy is installed *and* a CUDA device is usable, else the CPU.
Importing CuPy succeeds on machines without a driver, so the probe goes as far as compiling
and running a tiny kernel; any failure on that path means "no usable GPU", never a crash.

The probe initialises CUDA in the process that runs it, and a process with CUDA
initialised cannot fork workers that use CUDA (:mod:`gpuqueens.fork_safety`). So a count
that will run its GPU work in this process probes here (:func:`gpu_status`), and one that
hands its work to other processes asks a fresh interpreter instead (:func:`gpu_report`
with ``here=False``), which also tells how many GPUs are visible.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import warnings
from dataclasses import dataclass

from . import _probe
from .fork_safety import (cuda_initialised_here, forked_after_cuda, note_cuda_initialised,
                          raise_if_forked_after_cuda)
from .user_frames import user_stacklevel

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "BackendUnavailableError",
    "DeviceCheckError",
    "GPUFallbackWarning",
    "GPUReport",
    "gpu_status",
    "gpu_report",
    "requested_backend",
    "resolve_backend",
    "device_name",
    "device_free_bytes",
]

BACKENDS = ("auto", "cpu", "gpu")
BACKEND_ENV = "GPUQUEENS_BACKEND"
#: Seconds the probe in a fresh interpreter may take (import CuPy, create a context, and
#: compile the probe kernel the first time on a machine; usually 1-3 s).
CHILD_PROBE_TIMEOUT = 300


class BackendUnavailableError(RuntimeError):
    """``backend="gpu"`` was asked for but no usable CUDA device is there."""


class DeviceCheckError(RuntimeError):
    """The GPU gave a wrong number on a check whose answer the CPU computes, before a count
    (problems/*/gpu_check.py): none of its counts can be trusted."""

    @classmethod
    def wrong(cls, what: str, got: object, want: object) -> "DeviceCheckError":
        """The error for a check of the current GPU: ``what`` it computed, ``got`` there and
        ``want`` on the CPU."""
        return cls(f"the GPU ({device_name('gpu')}) computed a check wrong: {what}: {got}, but the "
                   f"CPU gives {want}. No count of this GPU can be trusted: count with backend='cpu' "
                   f"(--backend cpu), and please report this with `gpuqueens --version`, the GPU, its "
                   f"driver and CuPy's version")


class GPUFallbackWarning(RuntimeWarning):
    """``backend="auto"`` found no usable GPU and runs on the CPU instead."""


@functools.lru_cache(maxsize=None)
def gpu_status() -> tuple[bool, str]:
    """Return ``(usable, reason)``: whether CuPy can run a kernel on device 0, and why not.

    Runs the probe in this process, which initialises CUDA here.
    """
    try:
        return _probe.probe()
    finally:
        if "cupy" in sys.modules:  # CuPy imported: the probe has called into CUDA
            note_cuda_initialised()


@dataclass(frozen=True)
class GPUReport:
    """What a probe found: usable or not (and why), and the visible devices' names and PCI addresses."""

    usable: bool
    reason: str
    names: tuple[str, ...] = ()
    pci: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """How many devices CUDA shows (``CUDA_VISIBLE_DEVICES`` respected); 0 when unusable."""
        return len(self.names) if self.usable else 0


def _report_from(data: dict) -> GPUReport:
    devices = data.get("devices", [])
    return GPUReport(bool(data["usable"]), str(data["reason"]),
                     tuple(str(d["name"]) for d in devices), tuple(str(d["pci"]) for d in devices))


@functools.lru_cache(maxsize=None)
def _report_here() -> GPUReport:
    usable, reason = gpu_status()
    if not usable:
        return GPUReport(False, reason)
    try:
        return _report_from({"usable": True, "reason": "ok", "devices": _probe.visible_devices()})
    except Exception as exc:
        return GPUReport(False, f"CUDA is not usable ({exc.__class__.__name__}: {exc})")


def _cupy_installed() -> bool:
    if "cupy" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("cupy") is not None
    except (ImportError, ValueError):  # a broken installation: let the probe tell
        return True


@functools.lru_cache(maxsize=None)
def _report_from_child() -> GPUReport:
    if not _cupy_installed():  # no CuPy, no CUDA to initialise: no need for a fresh process
        return _report_here()
    # The child sees the same modules (sys.path) and environment (CUDA_VISIBLE_DEVICES) as
    # this process. It runs _probe.py as a file, so it imports CuPy and nothing of ours.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
    env["PYTHONIOENCODING"] = "utf-8"   # read back as UTF-8 whatever the locale (a cp1252 one
    # failed to decode an error's text: UnicodeDecodeError instead of the report)
    command = [sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')",
               _probe.__file__]
    try:
        done = subprocess.run(command, env=env, capture_output=True, encoding="utf-8", errors="replace",
                              timeout=CHILD_PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except OSError:  # no interpreter to start (an embedded Python): probe here instead
        return _report_here()
    except subprocess.TimeoutExpired:
        return GPUReport(False, f"the CUDA probe in a child process took more than {CHILD_PROBE_TIMEOUT} s")
    lines = done.stdout.strip().splitlines()
    try:
        return _report_from(json.loads(lines[-1]))
    except (IndexError, ValueError, KeyError, TypeError):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return GPUReport(False, f"the CUDA probe in a child process failed (exit {done.returncode}: {tail})")


def gpu_report(*, here: bool = True) -> GPUReport:
    """Probe the GPU, in this process (``here=True``) or in a fresh one that leaves this
    process free of CUDA (``here=False``; about a second, once per process).

    Once CUDA is initialised here anyway, both ask this process.
    """
    if here or cuda_initialised_here():
        return _report_here()
    return _report_from_child()


def requested_backend(backend: str | None = "auto") -> str:
    """The backend asked for, checked: ``"auto"``, ``"cpu"`` or ``"gpu"``, in any case,
    spaces around it ignored (as an environment variable may carry them).

    ``None`` means ``GPUQUEENS_BACKEND``, itself ``"auto"`` when unset or blank.

    >>> requested_backend("CPU")
    'cpu'
    """
    if backend is None:
        backend = os.environ.get(BACKEND_ENV, "").strip() or "auto"
        source = f"{BACKEND_ENV}={backend!r}"
    else:
        source = f"backend={backend!r}"
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string ({', '.join(BACKENDS)}) or None, "
                        f"not {type(backend).__name__} ({backend!r})")
    if backend.strip().lower() not in BACKENDS:
        raise ValueError(f"{source} is not one of {', '.join(BACKENDS)} (in any case)")
    return backend.strip().lower()


_warned_fallback = False


def resolve_backend(backend: str | None = "auto", *, here: bool = True) -> str:
    """Turn a requested backend into the one that will run: ``"cpu"`` or ``"gpu"``.

    ``None`` and ``"auto"`` consult ``GPUQUEENS_BACKEND`` first (``None`` only), then probe.
    ``here``: whether the GPU work would run in this process; if not, the probe runs in a
    fresh process and CUDA is not initialised here (see :func:`gpu_report`).

    >>> resolve_backend("cpu")
    'cpu'
    """
    global _warned_fallback
    source = "backend='gpu'" if backend is not None else f"{BACKEND_ENV}=gpu (no backend= given)"
    backend = requested_backend(backend)
    if backend == "cpu":
        return "cpu"
    if here and forked_after_cuda():  # CUDA cannot work in a fork of a process that used it
        if backend == "gpu":
            raise_if_forked_after_cuda()  # CUDAForkError, with what to do instead
        usable, reason = False, "this process was forked from one that had initialised CUDA"
    elif here:
        usable, reason = gpu_status()
    else:
        report = gpu_report(here=False)
        usable, reason = report.usable, report.reason
    if backend == "gpu":
        if not usable:
            raise BackendUnavailableError(f"{source} was requested but {reason}")
        return "gpu"
    if usable:
        return "gpu"
    if not _warned_fallback:
        _warned_fallback = True
        warnings.warn(f"no usable GPU, running on the CPU: {reason}", GPUFallbackWarning,
                      stacklevel=user_stacklevel())
    return "cpu"


def device_name(backend: str) -> str:
    """A human-readable name of the device a resolved backend runs on, in this process."""
    if backend == "gpu":
        import cupy

        device = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(device.id)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        return f"{name} (device {device.id})"
    import platform

    return f"CPU ({platform.processor() or platform.machine()})"


def device_free_bytes(cupy) -> int:
    """Free memory of the current CUDA device, counting the blocks CuPy's memory pool keeps
    for reuse (they are free for the next arrays too)."""
    free, _ = cupy.cuda.runtime.memGetInfo()
    pool = getattr(cupy, "get_default_memory_pool", None)
    if pool is not None:
        free += pool().free_bytes()
    return int(free)
