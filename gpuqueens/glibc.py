"""glibc's malloc, through ctypes, where this process has it (Linux with glibc; not musl,
not other systems): :func:`glibc_function` finds a function, :func:`heap_free_bytes` says
how much freed memory the heap keeps for reuse.

>>> heap_free_bytes() >= 0
True
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["glibc_function", "heap_free_bytes"]


def glibc_function(name: str):
    """glibc's function ``name`` as a ctypes function, or ``None`` without glibc or the
    function (an older glibc)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return None
        return getattr(ctypes.CDLL(None), name)
    except (ValueError, OSError, AttributeError):  # not glibc (musl), or no such symbol
        return None


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def heap_free_bytes() -> int:
    """Bytes that this process's malloc heap holds free for its next blocks (glibc 2.33 or
    later; else 0). The system counts them as used, but this process can fill them again:
    a worker process that keeps large freed blocks (:mod:`gpuqueens.worker_setup`) holds
    gigabytes of them after a large step."""
    mallinfo2 = glibc_function("mallinfo2")
    if mallinfo2 is None:
        return 0
    mallinfo2.argtypes, mallinfo2.restype = [], _Mallinfo2
    info = mallinfo2()
    return int(info.fordblks + info.fsmblks)
