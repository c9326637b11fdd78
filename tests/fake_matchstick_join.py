"""The centre join's pairing kernel in the CuPy stand-in (tests/fake_cupy.py).

A launch of ``matchstick_join_pairs`` is checked like every fake launch (argument types
against the kernel signature, block shape, dynamic shared memory), then against the
kernel's contract (one block per descriptor, MJ_BLOCK threads, array lengths, shared memory
for the chunk and the bins), and run by the host emulation in
``tests/native/matchstick_join_emulator.cu`` (the kernel's own phases).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from emulators import NATIVE, build_emulator, emulator_path, pointer
from fake_cupy import EmulatedKernel

BLOCK, BLOCK_WORDS, WINDOW_WORDS, CHUNK_BYTES = 256, 6, 3, 256 * 16
SOURCE = NATIVE / "matchstick_join_emulator.cu"


def build_library(target: Path) -> Path:
    """The emulator as a shared library at ``target`` (nvcc, host code only)."""
    return build_emulator(SOURCE, target)


def shared_library() -> Path:
    """The emulator, built once per process."""
    return emulator_path(SOURCE)


class JoinKernel(EmulatedKernel):
    def _run(self, grid, block, args, shared_mem):
        (left_x, left_hs, left_r, left_counts, left_n, right_x, right_hs, right_r, right_counts,
         right_n, blocks, block_count, windows, max_s, level, bins, valid_one, valid_zero,
         removed_c, primes, prime_count, hits, residues) = args
        left_n, right_n, block_count = int(left_n), int(right_n), int(block_count)
        max_s, bins, prime_count = int(max_s), int(bins), int(prime_count)
        self._need(block == BLOCK, f"a block has {BLOCK} threads, not {block}")
        self._need(grid == block_count, f"grid {grid} is not one block per descriptor ({block_count})")
        self._need(shared_mem >= CHUNK_BYTES + 8 * bins * (1 + prime_count), "shared memory below "
                   "the chunk and the bins")
        self._need(min(left_x.size, left_hs.size, left_r.size) >= left_n, "left groups too short")
        self._need(min(right_x.size, right_hs.size, right_r.size) >= right_n, "right groups too short")
        self._need(left_counts.size >= prime_count * left_n, "left counts too short")
        self._need(right_counts.size >= prime_count * right_n, "right counts too short")
        self._need(blocks.size >= BLOCK_WORDS * block_count, "descriptors too short")
        self._need(windows.size >= WINDOW_WORDS * (max_s + 1), "windows too short")
        self._need(primes.size >= prime_count, "primes too short")
        self._need(hits.size >= bins and residues.size >= bins * prime_count, "bins too short")
        rc = self.function(grid, block, shared_mem, *[pointer(a) for a in (left_x, left_hs, left_r, left_counts)],
                           ctypes.c_longlong(left_n),
                           *[pointer(a) for a in (right_x, right_hs, right_r, right_counts)],
                           ctypes.c_longlong(right_n), pointer(blocks), ctypes.c_longlong(block_count),
                           pointer(windows), max_s, int(level), bins, int(valid_one), int(valid_zero),
                           int(removed_c), pointer(primes), prime_count, pointer(hits),
                           pointer(residues))
        self._need(rc == 0, "the emulator refused the launch")
