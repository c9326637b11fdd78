"""Waiting for the device (kernels.wait_for_device): done when the work is, and a signal
(Ctrl-C, a scheduler's SIGTERM) handled at once while a long unit runs, not after it."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import types

import pytest

from gpuqueens.kernels import WAIT_PAUSE_SECONDS, timed_slices, wait_for_device


class _Stop(Exception):
    pass


def _device_busy_for(seconds: float, monkeypatch, fails: Exception | None = None) -> list:
    """A ``cupy`` whose current stream's work ends ``seconds`` after an event is recorded
    (with ``fails`` raised when it ends, if given, as CUDA reports a failed kernel)."""
    streams = []

    class Event:
        def __init__(self, **options):
            self.end = None

        def record(self, stream=None):
            streams.append(stream)
            self.end = time.monotonic() + seconds

        @property
        def done(self):
            if fails is not None and time.monotonic() >= self.end:
                raise fails
            return time.monotonic() >= self.end

    cuda = types.SimpleNamespace(Event=Event, get_current_stream=lambda: "current stream")
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    return streams


def test_the_wait_ends_soon_after_the_work(monkeypatch):
    streams = _device_busy_for(0.2, monkeypatch)
    begin = time.monotonic()
    wait_for_device()
    took = time.monotonic() - begin
    assert streams == ["current stream"]
    assert 0.2 <= took < 0.2 + WAIT_PAUSE_SECONDS + 0.1


class CUDARuntimeError(RuntimeError):
    """CuPy's error type for a failed CUDA runtime call (same name, same text)."""


@pytest.mark.parametrize("text", ["cudaErrorLaunchTimeout: the launch timed out and was terminated",
                                  "CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out and was terminated"])
def test_a_kernel_stopped_by_the_watchdog_is_explained(monkeypatch, text):
    _device_busy_for(0.01, monkeypatch, fails=CUDARuntimeError(text))
    with pytest.raises(RuntimeError, match="drives a display") as caught:
        wait_for_device()
    assert "backend=\"cpu\"; --backend cpu in the shell" in str(caught.value)
    assert "new Python process" in str(caught.value)
    assert isinstance(caught.value.__cause__, CUDARuntimeError)


def test_other_device_errors_pass_unchanged(monkeypatch):
    error = CUDARuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered")
    _device_busy_for(0.01, monkeypatch, fails=error)
    with pytest.raises(CUDARuntimeError) as caught:
        wait_for_device()
    assert caught.value is error


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="no SIGUSR1 here")
def test_a_signal_is_handled_while_the_device_works(monkeypatch):
    _device_busy_for(30.0, monkeypatch)

    def stop(*_signal):  # (signal number, frame)
        raise _Stop

    previous = signal.signal(signal.SIGUSR1, stop)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1))
    try:
        begin = time.monotonic()
        timer.start()
        with pytest.raises(_Stop):
            wait_for_device()
        assert time.monotonic() - begin < 2.0  # not the 30 s of the work
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)


# --- short launches (kernels.timed_slices) ---------------------------------------------------


def _slices(total: int, first: int, items_per_second: float, target_s: float = 0.25):
    """The ranges timed_slices gives for a device that does ``items_per_second``."""
    now = [0.0]
    ranges = []
    for start, stop in timed_slices(total, first, target_s=target_s, clock=lambda: now[0]):
        ranges.append((start, stop))
        now[0] += (stop - start) / items_per_second
    return ranges


def test_slices_cover_the_items_in_order():
    for total, first in [(0, 5), (1, 5), (5, 5), (6, 5), (10_000, 7)]:
        ranges = _slices(total, first, items_per_second=1000)
        assert [n for a, b in ranges for n in range(a, b)] == list(range(total))


def test_slices_settle_at_the_target_and_grow_at_most_fourfold():
    ranges = _slices(1_000_000, 10, items_per_second=4000, target_s=0.25)  # 1000 items a launch
    sizes = [b - a for a, b in ranges]
    assert sizes[:4] == [10, 40, 160, 640]
    assert all(abs(size - 1000) <= 1 for size in sizes[4:-1])  # (the clock's rounding)


def test_slices_never_go_below_the_first():
    # a device slower than one first launch per target: each launch stays at `first`
    ranges = _slices(100, 10, items_per_second=1, target_s=0.25)
    assert {b - a for a, b in ranges} == {10}


def test_the_watchdog_is_explained_wherever_its_error_surfaces():
    # (a copy to or from the device, the next launch: not only a wait)
    from gpuqueens.kernels import watchdog_explained

    with pytest.raises(RuntimeError, match="drives a display"):
        with watchdog_explained():
            raise CUDARuntimeError("cudaErrorLaunchTimeout: the launch timed out and was terminated")
    with pytest.raises(ValueError, match="not the GPU's"):
        with watchdog_explained():
            raise ValueError("not the GPU's")
