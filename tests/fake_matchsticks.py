"""The matchstick kernels in the CuPy stand-in (tests/fake_cupy.py).

A launch of ``matchsticks_pass`` or ``matchsticks_join`` is checked like every fake launch
(argument types against the kernel signature, block shape, dynamic shared memory), then
against the kernel's own contract (buffer sizes, a grid that covers every tile, the tile's
shared memory, the block size of its ``__launch_bounds__``), and run by the host emulation
in ``tests/native/matchsticks_launch_emulator.cu`` (the kernel's own phases).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from emulators import NATIVE, build_emulator, emulator_path, pointer
from fake_cupy import EmulatedKernel

LANES, LANE_WORDS, MAX_TILE_STEPS, PASS_BLOCKS, MAX_BLOCK = 8, 7, 11, (128, 256), 256
SOURCE = NATIVE / "matchsticks_launch_emulator.cu"


def build_library(target: Path) -> Path:
    """The emulator as a shared library at ``target`` (nvcc, host code only)."""
    return build_emulator(SOURCE, target)


def shared_library() -> Path:
    """The emulator, built once per process."""
    return emulator_path(SOURCE)


class MatchstickKernel(EmulatedKernel):
    def _run(self, grid, block, args, shared_mem):
        self._need(block % LANES == 0 and block <= MAX_BLOCK,
                   f"block of {block} threads (a multiple of {LANES}, at most {MAX_BLOCK})")
        if self.name == "matchsticks_pass":
            self._need(block in PASS_BLOCKS, f"a pass block has {PASS_BLOCKS} threads, not {block}")
            source, target, lanes, groups, h, first_row, steps, right_mask = args
            groups, h, first_row, steps = int(groups), int(h), int(first_row), int(steps)
            self._need(1 <= steps <= min(h + 1, MAX_TILE_STEPS) and 0 <= first_row <= h,
                       f"steps={steps}, first_row={first_row} for h={h}")
            self._need(grid == groups << (h + 1 - steps), f"grid {grid} does not cover the tiles")
            self._need(shared_mem >= (2 << steps) * LANES * 4, "shared memory below the tile")
            self._need(min(source.size, target.size) >= groups * (LANES << (h + 2)), "states too short")
            self._need(lanes.size >= groups * LANES * LANE_WORDS, "lane table too short")
            rc = self.function(grid, block, shared_mem, pointer(source), pointer(target),
                               pointer(lanes), ctypes.c_longlong(groups), h, first_row, steps,
                               int(right_mask))
        else:
            a, b, lanes, weights, groups, chunks, h, partial = args
            groups, chunks, h = int(groups), int(chunks), int(h)
            self._need(grid == groups * chunks, f"grid {grid} is not {groups} x {chunks} chunks")
            self._need(min(a.size, b.size) >= groups * (LANES << (h + 2)), "states too short")
            self._need(weights.size >= groups * LANES * (h + 2) * 2, "weights too short")
            self._need(partial.size >= grid * block, "partial sums too short")
            rc = self.function(grid, block, shared_mem, pointer(a), pointer(b), pointer(lanes),
                               pointer(weights), ctypes.c_longlong(groups),
                               ctypes.c_longlong(chunks), h, pointer(partial))
        self._need(rc == 0, "the emulator refused the launch")
