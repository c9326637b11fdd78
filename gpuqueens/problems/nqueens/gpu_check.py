"""A check of the GPU search against the NumPy search, before a GPU count is trusted.

The first GPU unit that a process solves on a device first counts two small boards there,
every prefix of n = 13 and n = 14 at row 3, through the same kernels and the same path as a
count (the device's expansion of the prefixes, the search, the symmetric kernel), and
compares each number with the NumPy search on the CPU. A device, driver or compiler that
gets one of them wrong is refused with :class:`~gpuqueens.DeviceCheckError` instead of
giving a wrong count. The boards hold both kinds of prefix (a corner queen or not), rows
B1 searched by the kernel (B1 from row 5 on, below the expanded prefixes) and, for n = 14,
the prefixes whose row B1 is just above row B2. It costs about 0.1 s of CPU time, once per
process and device.
"""

from __future__ import annotations

import functools

from ...backends import DeviceCheckError

__all__ = ["CHECK_BOARDS", "check_device", "device_counts", "reference_counts"]

#: (n, row of the prefixes) of the boards counted on both sides.
CHECK_BOARDS = ((13, 3), (14, 3))


def device_counts(n: int, mark: int) -> tuple[int, int, int]:
    """(weight of every prefix at row ``mark``, F180, F90) of board ``n`` on the current device."""
    from .gpu import count_prefixes_gpu, count_symmetric_gpu
    from .prefixes import enumerate_prefixes

    return (count_prefixes_gpu(enumerate_prefixes(n, mark)), *count_symmetric_gpu(n))


def reference_counts(n: int, mark: int) -> tuple[int, int, int]:
    """The same numbers from the NumPy searches on the CPU.

    >>> reference_counts(8, 3)  # 3 × 92 solutions, 4 fixed by the half turn, none by the quarter
    (276, 4, 0)
    """
    from .cpu import count_prefixes_cpu
    from .prefixes import enumerate_prefixes
    from .symmetric import count_symmetric

    return (count_prefixes_cpu(enumerate_prefixes(n, mark)), *count_symmetric(n))


def check_device() -> None:
    """Raise :class:`~gpuqueens.DeviceCheckError` unless the current device counts the check boards as the
    CPU does; the first call per device in a process checks, later ones return at once."""
    import cupy

    _check_device_of(cupy.cuda.Device().id)


@functools.lru_cache(maxsize=None)
def _check_device_of(device_id: int) -> None:
    for n, mark in CHECK_BOARDS:
        got, want = device_counts(n, mark), reference_counts(n, mark)
        if got != want:
            raise DeviceCheckError.wrong(f"n={n}, prefixes at row {mark}: (weight, F180, F90)", got, want)
