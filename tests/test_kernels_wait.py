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

from gpuqueens.kernels import WAIT_PAUSE_SECONDS, wait_for_device


class _Stop(Exception):
    pass


def _device_busy_for(seconds: float, monkeypatch) -> list:
    """A ``cupy`` whose current stream's work ends ``seconds`` after an event is recorded."""
    streams = []

    class Event:
        def __init__(self, **options):
            self.end = None

        def record(self, stream=None):
            streams.append(stream)
            self.end = time.monotonic() + seconds

        @property
        def done(self):
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
