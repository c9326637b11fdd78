"""The symmetric-search kernels of kernels/nqueens_symmetric.cu in the CuPy stand-in.

A launch of ``nqueens_symmetric`` or ``nqueens_symmetric_each`` is checked like every fake
launch (tests/fake_cupy.py: argument types against the kernel signature, block shape), then
against the kernel's own contract (n, rows, buffer sizes, zeroed per-prefix counts), and run
by the host emulation in ``tests/native/nqueens_symmetric_emulator.cu`` (the kernel's own
search code).
"""

from __future__ import annotations

import ctypes
import functools

from emulators import NATIVE, emulator_path
from fake_cupy import FakeKernel, LaunchError

SOURCE = NATIVE / "nqueens_symmetric_emulator.cu"
RECORD_WORDS = 9


@functools.lru_cache(maxsize=None)
def shared_library() -> ctypes.CDLL:
    """The emulator, built and loaded once per process."""
    library = ctypes.CDLL(str(emulator_path(SOURCE)))
    for name in ("emulate_nqueens_symmetric", "emulate_nqueens_symmetric_each"):
        getattr(library, name).restype = None
    return library


class SymmetricKernel(FakeKernel):
    def __init__(self, name: str, signature):
        library = shared_library()
        super().__init__(name, signature, library, sum_words=2)
        self.shared_size_bytes = 0
        self.function = getattr(library, f"emulate_{name}")

    def _run(self, grid, block, args, shared_mem):
        n, rows, count = int(args[0]), int(args[1]), int(args[2])
        records, output = args[3], args[4]
        if not (4 <= n <= 32 and 1 <= rows <= n // 2):
            raise LaunchError(f"{self.name}: n={n}, rows={rows} (4 <= n <= 32, 1 <= rows <= n/2)")
        if count < 0 or records.size < RECORD_WORDS * count:
            raise LaunchError(f"{self.name}: {records.size} record words for {count} prefixes")
        if self.name == "nqueens_symmetric":
            if output.size != 2:
                raise LaunchError(f"{self.name}: the sums are 2 words, not {output.size}")
        elif output.size < 2 * count or output[:2 * count].any():
            raise LaunchError(f"{self.name}: the counts must be {2 * count} zeroed words")
        pointer = lambda a: ctypes.c_void_p(a.ctypes.data)  # noqa: E731
        self.function(ctypes.c_int(grid), ctypes.c_int(block), ctypes.c_int(n), ctypes.c_int(rows),
                      ctypes.c_longlong(count), pointer(records), pointer(output))
