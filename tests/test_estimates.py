"""gpuqueens/estimates.py: the memory this process can use, where the system tells it."""

from __future__ import annotations

import ctypes
import types

from gpuqueens import estimates


class _Kernel32:
    """Windows' GlobalMemoryStatusEx, filling the structure it is given."""

    def __init__(self, available: int, succeeds: bool = True):
        self.available, self.succeeds = available, succeeds

    def GlobalMemoryStatusEx(self, pointer):  # noqa: N802 (Windows' name)
        status = pointer._obj
        assert status.dwLength == ctypes.sizeof(status) == 64
        status.ullAvailPhys = self.available
        status.ullAvailVirtual = 1 << 47   # a 64-bit process
        return int(self.succeeds)


def _no_proc(*_args, **_kwargs):
    raise FileNotFoundError("/proc/meminfo")


def test_windows_available_memory_comes_from_global_memory_status(monkeypatch):
    # every memory check on Windows passed: no /proc/meminfo and no os.sysconf
    monkeypatch.setattr(estimates, "_ON_WINDOWS", True)
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(kernel32=_Kernel32(5 << 30)), raising=False)
    monkeypatch.setattr(estimates, "open", _no_proc, raising=False)
    monkeypatch.delattr(estimates.os, "sysconf")
    assert estimates.available_memory() == 5 << 30


def test_a_failed_call_or_no_windll_falls_back(monkeypatch):
    monkeypatch.setattr(estimates, "_ON_WINDOWS", True)
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(kernel32=_Kernel32(5 << 30, succeeds=False)),
                        raising=False)
    assert estimates._windows_available_memory() is None
    monkeypatch.delattr(ctypes, "windll")
    assert estimates._windows_available_memory() is None
    monkeypatch.setattr(estimates, "open", _no_proc, raising=False)
    monkeypatch.delattr(estimates.os, "sysconf")
    assert estimates.available_memory() is None   # (the callers then set no limit)
