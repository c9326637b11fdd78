"""Find the CUDA sources in ``kernels/`` and build them with CuPy, once per device; wait
for their launches without holding up Ctrl-C (:func:`wait_for_device`); cut work into
short launches where the driver stops long kernels (:func:`launch_ranges`).

In an installed wheel the sources live in ``gpuqueens/_kernels``; in a source checkout they
are in the top-level ``kernels/`` folder. CuPy caches compiled modules on disk, so only the
first run on a machine pays the compile.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["kernel_source_path", "kernel_source", "load_module", "wait_for_device", "stops_long_kernels",
           "timed_slices", "launch_ranges", "watchdog_explained"]

#: The longest pause between two looks at the device while waiting for it (seconds): how
#: late a wait may notice that the work is done, and how long Ctrl-C may wait at most.
WAIT_PAUSE_SECONDS = 0.002
#: Seconds a launch aims at on a GPU whose driver stops kernels that run too long (a GPU
#: that drives a display: about 2 s on Windows, a few seconds under X on Linux): far
#: below the limit, since the work per item varies from one launch to the next.
SHORT_LAUNCH_SECONDS = 0.25

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
    return kernel_source_path(name).read_text(encoding="utf-8")   # not the locale's (cp1252 on Windows)


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


def wait_for_device() -> None:
    """Wait until the work queued on the current CUDA stream is done, looking every few
    milliseconds.

    A read-back (``.get()``) waits inside CUDA, where Python cannot run its signal
    handlers: Ctrl-C, or a batch scheduler's SIGTERM, would be held until a whole unit is
    done (hours at n = 27). Between two looks Python sleeps, so a signal is handled at
    once, and no CPU core spins while the device works.
    """
    import cupy

    done = cupy.cuda.Event(disable_timing=True)
    done.record(cupy.cuda.get_current_stream())
    pause = 0.0001
    with watchdog_explained():
        while not done.done:
            time.sleep(pause)
            pause = min(2 * pause, WAIT_PAUSE_SECONDS)


@contextlib.contextmanager
def watchdog_explained() -> Iterator[None]:
    """Turn CUDA's error for a kernel that a display GPU's watchdog stopped (wherever it
    surfaces: a wait, a copy, the next launch) into :data:`WATCHDOG_MESSAGE`."""
    try:
        yield
    except Exception as error:
        if _stopped_by_watchdog(error):
            raise RuntimeError(WATCHDOG_MESSAGE.format(error=error)) from error
        raise


#: What a count says when the driver's watchdog stopped one of its kernels: CUDA's own words
#: ("the launch timed out and was terminated") say neither why nor what to do.
WATCHDOG_MESSAGE = (
    "the GPU's driver stopped a kernel that ran too long ({error}): a GPU that drives a "
    "display has a watchdog that stops kernels after a few seconds, and a piece of this "
    "count's work took longer. Run the count on a GPU that drives no display, or on the CPU "
    "(backend=\"cpu\"; --backend cpu in the shell), in a new Python process: CUDA cannot be "
    "used in this one any more. With a checkpoint, the units already finished are kept.")


def _stopped_by_watchdog(error: Exception) -> bool:
    """Whether a CUDA error is the watchdog's: cudaErrorLaunchTimeout from the runtime,
    CUDA_ERROR_LAUNCH_TIMEOUT from the driver."""
    text = str(error).replace("_", "").lower()
    return "launchtimeout" in text


def stops_long_kernels(device_id: int | None = None) -> bool:
    """Whether the driver stops a kernel that runs too long on device ``device_id`` (the
    current one by default): CUDA's ``KernelExecTimeout``, a GPU that drives a display.
    Launches there must stay short."""
    import cupy

    return _stops_long_kernels(cupy.cuda.Device().id if device_id is None else device_id)


@functools.lru_cache(maxsize=None)
def _stops_long_kernels(device_id: int) -> bool:
    import cupy

    return bool(cupy.cuda.Device(device_id).attributes.get("KernelExecTimeout", 0))


def timed_slices(total: int, first: int, target_s: float = SHORT_LAUNCH_SECONDS, clock=time.perf_counter):
    """``(start, stop)`` ranges that cover ``range(total)`` in order: the first ``first``
    long, each next one sized from the items per second of the one before so that it takes
    about ``target_s``, growing at most fourfold a step and never below ``first``. The time
    of a range runs from its yield to the next request, so the caller launches the range and
    waits for the device before asking for the next.

    >>> seconds = [0.0]  # a device that does 10 items a second
    >>> ranges = []
    >>> for start, stop in timed_slices(100, 2, target_s=3, clock=lambda: seconds[0]):
    ...     ranges.append((start, stop))
    ...     seconds[0] += (stop - start) / 10
    >>> ranges
    [(0, 2), (2, 10), (10, 40), (40, 70), (70, 100)]
    """
    start, size = 0, max(1, first)
    began = clock()
    while start < total:
        stop = min(total, start + size)
        yield start, stop
        now = clock()
        rate = (stop - start) / max(now - began, 1e-6)
        size = max(first, min(4 * size, int(rate * target_s)))
        start, began = stop, now


def launch_ranges(total: int, first: int):
    """``(start, stop)`` ranges of the ``total`` items of one piece of work, one launch each:
    all at once, or where the driver stops long kernels (:func:`stops_long_kernels`) the
    short launches of :func:`timed_slices`, the first of ``first`` items, each waited for
    before the next is sized."""
    if not stops_long_kernels():
        yield 0, total
        return
    for start, stop in timed_slices(total, first):
        yield start, stop
        wait_for_device()  # the launch just made: its time sizes the next
