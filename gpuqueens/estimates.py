"""Up-front estimates of a count's time and memory: refuse what cannot fit, warn what is long.

Every problem estimates its cost from the sizes before it builds anything, from rates and
sizes measured on real machines (each problem documents its own model), and calls

* :func:`check_memory` with the bytes it will hold: a ``ValueError`` with the estimate
  when they exceed what this machine has;
* :func:`warn_if_long` with the seconds it expects: a :class:`LongRunWarning` with the
  estimate when a run will take longer than about an hour (``LONG_RUN_SECONDS``).

>>> format_duration(42.0), format_duration(5400), format_duration(3.2e7), format_duration(1e12)
('42 s', '1.5 hours', '1.0 years', '31,688 years')
"""

from __future__ import annotations

import os
import time
import warnings

from .glibc import heap_free_bytes
from .user_frames import user_stacklevel

__all__ = ["LongRunWarning", "LONG_RUN_SECONDS", "warn_if_long", "Pace", "check_memory",
           "available_memory", "format_duration", "format_bytes"]

#: Runs expected to take longer than this (seconds) are announced with a LongRunWarning.
LONG_RUN_SECONDS = 3600.0


class LongRunWarning(UserWarning):
    """A count is expected to take longer than about an hour (the message gives the
    estimate), or may take that long where the estimate cannot tell (the message says why)."""


def format_duration(seconds: float) -> str:
    """A rough, readable duration: seconds, minutes, hours, days or years."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400.0), ("hours", 3600.0),
                       ("minutes", 60.0)):
        if seconds >= size:
            value = seconds / size
            return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
    return f"{seconds:.0f} s"


def format_bytes(size: float) -> str:
    """A readable size in binary units.

    >>> format_bytes(3 * 2**30), format_bytes(2.5 * 2**50), format_bytes(1e40)
    ('3.0 GiB', '2.5 PiB', '8.7e+21 EiB')
    """
    for unit, scale in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30),
                        ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 1e4 else f"{value:.1e} {unit}"
    return f"{size:.0f} B"


def available_memory() -> int | None:
    """Bytes of memory this process can still use, as well as the system says; ``None`` if unknown.

    Linux's ``MemAvailable`` with the freed memory this process's heap keeps for reuse
    (:func:`gpuqueens.glibc.heap_free_bytes`) when there is one; Windows' available
    physical memory; else (macOS) the physical memory, free or not.
    """
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 + heap_free_bytes()
    except (OSError, ValueError, IndexError):
        pass
    windows = _windows_available_memory()
    if windows is not None:
        return windows
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


_ON_WINDOWS = os.name == "nt"


def _windows_available_memory() -> int | None:
    """``ullAvailPhys`` of Windows' ``GlobalMemoryStatusEx``; None elsewhere (no
    ``ctypes.windll``) or when the call fails; a 32-bit process's free address space if
    that is less. Without it every memory check on Windows
    passed, and the 7×7 table started a 6.4 GB worker process per core."""
    if not _ON_WINDOWS:
        return None
    try:
        import ctypes
    except ImportError:  # a Python built without ctypes
        return None
    windll = getattr(ctypes, "windll", None)
    if windll is None:
        return None

    class MemoryStatusEx(ctypes.Structure):
        _fields_ = [("dwLength", ctypes.c_uint32), ("dwMemoryLoad", ctypes.c_uint32),
                    ("ullTotalPhys", ctypes.c_uint64), ("ullAvailPhys", ctypes.c_uint64),
                    ("ullTotalPageFile", ctypes.c_uint64), ("ullAvailPageFile", ctypes.c_uint64),
                    ("ullTotalVirtual", ctypes.c_uint64), ("ullAvailVirtual", ctypes.c_uint64),
                    ("ullAvailExtendedVirtual", ctypes.c_uint64)]

    status = MemoryStatusEx()
    status.dwLength = ctypes.sizeof(MemoryStatusEx)
    try:
        if not windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return None
    except (AttributeError, OSError):
        return None
    # a 32-bit process can use no more than its own address space leaves
    return int(min(status.ullAvailPhys, status.ullAvailVirtual))


def check_memory(what: str, needed: float, *, available: float | None = None,
                 where: str = "this machine") -> None:
    """Raise ``ValueError`` when ``needed`` bytes exceed ``available`` (default: this machine's).

    >>> check_memory("a 2×2 table", 1e3)
    >>> check_memory("a huge table", 1e15, available=1e12)
    Traceback (most recent call last):
    ...
    ValueError: a huge table needs about 909.5 TiB of memory, but this machine has 931.3 GiB available
    """
    if available is None:
        available = available_memory()
    if available is not None and needed > available:
        raise ValueError(f"{what} needs about {format_bytes(needed)} of memory, but {where} has "
                         f"{format_bytes(available)} available")


def warn_if_long(what: str, seconds: float, *, stacklevel: int = 2) -> None:
    """Warn with a :class:`LongRunWarning` when ``seconds`` exceeds :data:`LONG_RUN_SECONDS`.

    ``stacklevel`` counts from the caller of this function, as for :func:`warnings.warn`.
    """
    if seconds > LONG_RUN_SECONDS:
        warnings.warn(f"{what} is expected to take about {format_duration(seconds)}",
                      LongRunWarning, stacklevel=user_stacklevel())  # (the stack: only now)


class Pace:
    """Watches a run that was estimated at under :data:`LONG_RUN_SECONDS`: once its own
    pace projects it past that (a slower machine or GPU than the estimate's, or a count
    the model underrates), one :class:`LongRunWarning` says so, with the projection.

    ``what`` names the run, ``weight`` is the work still to do when it starts (in the
    units' weights) and ``estimate`` its estimated seconds (``None``: nothing to watch;
    above the threshold: it was announced before it started). The pace is judged from
    :data:`PACE_MIN_SECONDS` on, past the set-up of the first units.

    >>> pace = Pace("a toy run", weight=100, estimate=50)
    >>> pace.advance(1, now=pace.start + 5), pace.advance(1, now=pace.start + 59)  # early; 49 min
    (False, False)
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     pace.advance(2, now=pace.start + 150)  # 4 of 100 in 150 s: 62 minutes in all
    True
    >>> str(seen[0].message)
    'a toy run: this run did 4% of its work in 2.5 minutes; at that pace it takes about 1.0 hours (estimated at 50 s before it started)'
    """

    def __init__(self, what: str, *, weight: float, estimate: float | None) -> None:
        self.what, self.weight, self.estimate = what, float(weight), estimate
        self.done = 0.0
        self.start = time.monotonic()
        self.watching = estimate is not None and estimate <= LONG_RUN_SECONDS and weight > 0

    def advance(self, weight: float, *, now: float | None = None) -> bool:
        """Count ``weight`` more work done; warn (once, at the user's line that started the
        run) and return ``True`` when the pace projects the run past :data:`LONG_RUN_SECONDS`."""
        if not self.watching:
            return False
        self.done += weight
        elapsed = (time.monotonic() if now is None else now) - self.start
        if elapsed < PACE_MIN_SECONDS or self.done <= 0:
            return False
        projected = elapsed * self.weight / self.done
        if projected <= LONG_RUN_SECONDS:
            return False
        self.watching = False
        warnings.warn(f"{self.what}: this run did {self.done / self.weight:.0%} of its work in "
                      f"{format_duration(elapsed)}; at that pace it takes about "
                      f"{format_duration(projected)} (estimated at "
                      f"{format_duration(self.estimate)} before it started)",
                      LongRunWarning, stacklevel=user_stacklevel())  # (the stack: only now)
        return True


#: A run's pace is judged from this many seconds on (:class:`Pace`): earlier, the first
#: units' set-up (worker processes, kernel compiles) weighs too much.
PACE_MIN_SECONDS = 30.0
