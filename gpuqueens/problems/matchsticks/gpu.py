"""The GPU path of problem 1: ``kernels/matchsticks.cu`` launched through CuPy.

Same sweep as :func:`.evaluation.sweep_values` (its NumPy twin), on device buffers laid out
``[group][state][8 lanes]`` of uint32: one ``matchsticks_pass`` launch per pass of the sweep
plan (in place, except that for even w the pass after the boundary writes a second buffer,
so that S_c stays for the join), then ``matchsticks_join`` writes one partial sum per
thread, which the host adds up modulo p. Lanes go in batches that fit in device memory.

Importable without CuPy; CuPy is imported only when the GPU backend runs.
"""

from __future__ import annotations

import math

import numpy as np

from ...backends import device_free_bytes
from ...estimates import format_bytes
from ...kernels import wait_for_device, watchdog_explained
from .count_bound import count_bound
from .evaluation import LANES, TILE_STEPS, count_by_removed_evaluated, join_weights, sweep_plan
from .grid import orient
from .transfer import MAX_GPU_TRANSFER_SHORT_SIDE

__all__ = ["KERNEL_SOURCE", "BLOCK_SIZE", "MAX_TILE_STEPS", "count_by_removed_gpu", "sweep_values_gpu",
           "lanes_per_batch", "cupy_module", "array_module"]

KERNEL_SOURCE = "matchsticks.cu"
#: Threads per block of both kernels (their __launch_bounds__), a multiple of LANES.
BLOCK_SIZE = 256
#: Longest pass the kernel takes: a tile of 2^12 states × 8 lanes is 128 KiB of shared memory.
MAX_TILE_STEPS = 11
#: Fraction of the free device memory the state buffers may take.
MEMORY_FRACTION = 0.85
#: The join's blocks: about this many per SM over all lane groups.
JOIN_BLOCKS_PER_SM = 8


def cupy_module():
    """The ``cupy`` module."""
    import cupy

    return cupy


def array_module(backend: str):
    """The array module a backend's array code runs on: CuPy for ``"gpu"``, else NumPy.

    >>> array_module("cpu") is np
    True
    """
    return cupy_module() if backend == "gpu" else np


def _module():
    from ...kernels import load_module

    return load_module(KERNEL_SOURCE, ("-std=c++17",))


def state_bytes_per_lane(h: int, w: int) -> int:
    """Device memory one lane needs: 2^(h+2) uint32 states, twice for even w (S_c kept)."""
    return (1 << (h + 2)) * 4 * (2 if w % 2 == 0 else 1)


def lanes_per_batch(h: int, w: int, free_bytes: int) -> int:
    """Lanes (a multiple of 8) whose states fit in ``MEMORY_FRACTION`` of ``free_bytes``."""
    groups = int(free_bytes * MEMORY_FRACTION) // (state_bytes_per_lane(h, w) * LANES)
    if groups < 1:
        need = state_bytes_per_lane(h, w) * LANES
        # a ValueError, as every memory refusal before the work (the CLI: one line, exit 2)
        raise ValueError(f"{h}×{w}: one group of {LANES} lanes needs {format_bytes(need)} of "
                         f"device memory, {format_bytes(free_bytes)} are free")
    return groups * LANES


def _launch_pass(kernel, source, target, lanes, groups: int, h: int, one) -> None:
    tiles = 1 << (h + 1 - one.steps)
    shared = (2 << one.steps) * LANES * 4
    if shared > kernel.max_dynamic_shared_size_bytes:
        kernel.max_dynamic_shared_size_bytes = shared  # beyond the portable 48 KiB: opt in
    kernel((groups * tiles,), (BLOCK_SIZE,),
           (source, target, lanes, np.int64(groups), np.int32(h), np.int32(one.first_row),
            np.int32(one.steps), np.int32(one.right_mask)),
           shared_mem=shared)


def _join_chunks(h: int, groups: int, sms: int) -> int:
    per_block = BLOCK_SIZE // LANES  # frontiers a block visits at once, per lane
    most = max(1, (1 << (h + 1)) // per_block)
    return max(1, min(most, math.ceil(JOIN_BLOCKS_PER_SM * sms / groups)))


def sweep_values_gpu(h: int, w: int, lanes: np.ndarray, tile_steps: int = TILE_STEPS) -> np.ndarray:
    """P(x) mod p for every lane of ``lanes`` (a multiple of 8 rows of
    :func:`.evaluation.lane_words`) on the current CUDA device."""
    if not 1 <= h <= MAX_GPU_TRANSFER_SHORT_SIDE:  # the sizes the kernel is checked for
        raise ValueError(f"the shorter side must be 1..{MAX_GPU_TRANSFER_SHORT_SIDE}, got {h}")
    cupy = cupy_module()
    module = _module()
    groups = len(lanes) // LANES
    if groups * LANES != len(lanes):
        raise ValueError(f"{len(lanes)} lanes: the kernel takes whole groups of {LANES}")
    if not 1 <= tile_steps <= MAX_TILE_STEPS:
        raise ValueError(f"tile_steps must be 1..{MAX_TILE_STEPS}, got {tile_steps}")
    plan = sweep_plan(h, w, tile_steps)
    device_lanes = cupy.asarray(np.ascontiguousarray(lanes, dtype=np.uint32))
    state = cupy.zeros((groups, 1 << (h + 2), LANES), dtype=cupy.uint32)
    state[:, 0, :] = 1  # nothing decided yet: every frontier stick absent, P = 1
    kept = None
    step = module.get_function("matchsticks_pass")
    for index, one in enumerate(plan.passes):
        if index == plan.boundary:  # S_c: keep it, continue in a second buffer
            kept, state = state, cupy.zeros_like(state)
            _launch_pass(step, kept, state, device_lanes, groups, h, one)
        else:
            _launch_pass(step, state, state, device_lanes, groups, h, one)
    weights = cupy.asarray(join_weights(lanes, h))
    sms = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
    chunks = _join_chunks(h, groups, sms)
    partial = cupy.zeros(groups * chunks * BLOCK_SIZE, dtype=cupy.uint32)
    module.get_function("matchsticks_join")(
        (groups * chunks,), (BLOCK_SIZE,),
        (state, state if kept is None else kept, device_lanes, weights, np.int64(groups),
         np.int64(chunks), np.int32(h), partial))
    wait_for_device()  # with Ctrl-C heard while a group's passes run
    # partial sums are < p < 2^29: adding up to 2^35 of them cannot wrap uint64
    sums = partial.get().astype(np.uint64).reshape(groups, chunks * BLOCK_SIZE // LANES, LANES)
    return sums.sum(axis=1).reshape(-1) % lanes[:, 0].astype(np.uint64)


def count_by_removed_gpu(m: int, n: int, max_removed: int | None = None, *,
                         check_primes: int = 0, progress: bool | None = False) -> list[int]:
    """Exact counts for R = 0..max_removed (default E) on the current CUDA device
    (``check_primes``, ``progress``: see :func:`.evaluation.count_by_removed_evaluated`). The bound that
    sets the number of primes (:func:`.count_bound.count_bound`, a float64 sweep) runs on
    the device too: on the host it would take ~20 s at 20×20."""
    h, w = orient(m, n)
    if h > MAX_GPU_TRANSFER_SHORT_SIDE:
        raise ValueError(f"{m}×{n}: the GPU transfer is limited to a shorter side of "
                         f"{MAX_GPU_TRANSFER_SHORT_SIDE}; got {h}")
    cupy = cupy_module()
    with watchdog_explained():  # its passes are not cut into short launches
        bound = count_bound(h, w, max_removed, xp=cupy)  # before the batch size reads free memory
        return count_by_removed_evaluated(m, n, max_removed, sweep=sweep_values_gpu,
                                          lanes_per_batch=lanes_per_batch(h, w, device_free_bytes(cupy)),
                                          check_primes=check_primes, bound=bound,
                                          progress=progress)
