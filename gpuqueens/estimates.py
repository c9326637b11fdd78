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
import warnings

from .glibc import heap_free_bytes

__all__ = ["LongRunWarning", "LONG_RUN_SECONDS", "warn_if_long", "check_memory",
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
    (:func:`gpuqueens.glibc.heap_free_bytes`) when there is one, else the physical memory.
    """
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 + heap_free_bytes()
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


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
                      LongRunWarning, stacklevel=stacklevel + 1)
