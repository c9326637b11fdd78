"""The centre join's pairing on the GPU: each centre pattern's groups built on the device
(:mod:`.join_groups`, CuPy array operations), pairs counted by ``kernels/matchstick_join.cu``
(:mod:`.join_twin` is its NumPy twin), for the rounds of the puzzle table
(:func:`table_centre`) and for problem 2, R and S exact (:func:`exact_centre`).

The pipeline is written once over an array module ``xp`` and a *pairing* (the kernel's
launcher, or the twin): with ``xp = numpy`` and the twin it runs on the CPU, pair by pair,
so the tests check every step of it against the CPU's pairing (:func:`.pairing.join_centre`,
BLAS products) without a GPU; the CuPy stand-in of the tests runs the kernel's launches
through a host build of the kernel.

A round's parts go to the device once per process (:func:`join_centre_gpu` keeps them for
the round's units); each centre pattern then builds its groups there, sends the descriptors
of :mod:`.join_blocks` to one launch per batch of primes (several short ones on a GPU
whose driver stops long kernels), and reads back only the bins.
The round's half sweeps run on the device as well (:mod:`.halves` on CuPy arrays); their
parts come back to the host once (a round holds NumPy arrays, whatever ran it) and go up
again here.

Importable without CuPy; CuPy is imported only when the GPU backend runs.

>>> from gpuqueens.problems.matchsticks.pairing import prepare_round
>>> rnd = prepare_round(2, 2, {0: 4, 5: 0}, level=9)
>>> sides = device_sides(np, rnd)
>>> {C: table_centre(sides, rnd, C, twin_pairing) for C in (0, 1, 3)}
{0: {}, 1: {0: (4, 4)}, 3: {5: (0, 1)}}
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...kernels import launch_ranges, load_module
from .grid import centre_removed, centre_weight
from .halves import least_score
from .join_blocks import exact_blocks, table_blocks, windows_for
from .join_groups import DeviceParts, SideGroups, side_groups, side_squares
from .join_twin import CHUNK, GroupArrays, centre_masks, pair_bins
from .modular import crt

__all__ = ["KERNEL_SOURCE", "Sides", "device_sides", "table_centre", "exact_centre",
           "join_centre_gpu", "join_exact_centre_gpu", "release_device_sides", "twin_pairing",
           "kernel_pairing", "SHARED_LIMIT"]

KERNEL_SOURCE = "matchstick_join.cu"
#: Most dynamic shared memory a launch asks for (the chunk and the bins of a prime batch);
#: beyond the portable 48 KiB the launch opts in (an H100 allows 227 KiB).
SHARED_LIMIT = 96 * 1024

#: ``pairing(left, right, blocks, windows, level=, bins=, valid_one=, valid_zero=,
#: removed_c=, primes=)`` -> (hits, residues mod p) as host arrays.
Pairing = Callable[..., tuple[np.ndarray, np.ndarray]]


def twin_pairing(left, right, blocks, windows, **job) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's NumPy twin as a pairing (NumPy groups)."""
    return pair_bins(left, right, blocks, np.asarray(windows, dtype=np.int32), **job)


def shared_bytes(bins: int, primes: int) -> int:
    """Dynamic shared memory of a launch (the kernel's mj_shared_bytes)."""
    return CHUNK * 16 + bins * (1 + primes) * 8


def kernel_pairing(cupy, module) -> Pairing:
    """A pairing that launches ``matchstick_join_pairs`` (CuPy groups)."""
    kernel = module.get_function("matchstick_join_pairs")
    sms = int(cupy.cuda.Device().attributes["MultiProcessorCount"])  # a short first launch: a block each

    def pair(left: GroupArrays, right: GroupArrays, blocks, windows, *, level, bins, valid_one,
             valid_zero, removed_c, primes):
        primes = np.asarray(primes, dtype=np.uint64)
        hits = np.zeros(bins, dtype=np.uint64)
        residues = np.zeros((len(primes), bins), dtype=np.uint64)
        if len(blocks) == 0 or bins == 0:
            return hits, residues
        batch = max(1, min(len(primes), (SHARED_LIMIT - CHUNK * 16) // (8 * bins) - 1))
        if shared_bytes(bins, batch) > SHARED_LIMIT:
            raise ValueError(f"the join's {bins} bins do not fit in shared memory")
        device_blocks = cupy.asarray(np.ascontiguousarray(blocks, dtype=np.int32))
        device_windows = cupy.asarray(np.ascontiguousarray(windows, dtype=np.int32))
        max_s = len(windows) - 1
        for k0 in range(0, len(primes), batch):
            k1 = min(len(primes), k0 + batch)
            shared = shared_bytes(bins, k1 - k0)
            if shared > kernel.max_dynamic_shared_size_bytes:
                kernel.max_dynamic_shared_size_bytes = shared  # beyond 48 KiB: opt in
            out_hits = cupy.zeros(bins, dtype=cupy.uint64)
            out_residues = cupy.zeros((k1 - k0) * bins, dtype=cupy.uint64)
            left_counts = cupy.ascontiguousarray(left.counts[k0:k1])
            right_counts = cupy.ascontiguousarray(right.counts[k0:k1])
            batch_primes = cupy.asarray(primes[k0:k1].astype(np.uint32))
            # every block adds its bins to the global ones, so the blocks may go in several
            # launches: short ones where the driver stops long kernels (a display's GPU), the
            # first of a block per SM
            for a, b in launch_ranges(len(blocks), sms):
                kernel((b - a,), (256,),
                       (left.x, left.hs, left.r, left_counts, np.int64(len(left)),
                        right.x, right.hs, right.r, right_counts, np.int64(len(right)),
                        device_blocks[a:b], np.int64(b - a), device_windows, np.int32(max_s),
                        np.int32(level), np.int32(bins), np.int32(valid_one), np.int32(valid_zero),
                        np.int32(removed_c), batch_primes, np.int32(k1 - k0), out_hits, out_residues),
                       shared_mem=shared)
            hits = out_hits.get()
            residues[k0:k1] = out_residues.get().reshape(k1 - k0, bins) % primes[k0:k1, None]
        return hits, residues

    return pair


@dataclass
class Sides:
    """A round's parts on one array module: the left side and, for odd w, the right side."""

    xp: object
    left: DeviceParts
    right: DeviceParts | None     # None: symmetric (the left parts read mirrored)


def device_sides(xp, rnd) -> Sides:
    """The parts of a round (:class:`.pairing.Round`) on array module ``xp``."""
    left = DeviceParts.of(xp, rnd.left)
    return Sides(xp, left, None if rnd.symmetric else DeviceParts.of(xp, rnd.right))


def _both(sides: Sides, C: int, max_squares: int, primes, every_r: bool = False,
          limit: int | None = None) -> tuple[SideGroups, SideGroups]:
    """Both sides' groups; with ``limit`` (the table) only those that can pair within it."""
    xp, left, right = sides.xp, sides.left, sides.right
    sl = side_squares(xp, left, C)
    sr = None if right is None else side_squares(xp, right, C)
    most_l = most_r = None
    if limit is not None:   # each side up to the limit minus the other side's least score
        low_l = least_score(sl, left.r, max_squares)
        low_r = low_l if right is None else least_score(sr, right.r, max_squares)
        most_l, most_r = limit - low_r, limit - low_l
    gl = side_groups(xp, left, C, max_squares, primes, every_r, most_l, sl)
    if right is None:
        return gl, gl.mirrored(left.xwords_mirrored)
    return gl, side_groups(xp, right, C, max_squares, primes, every_r, most_r, sr)


def _weighted(residues: np.ndarray, primes: np.ndarray, weight: int) -> list[int]:
    return [int(v) * weight % int(p) for v, p in zip(residues, primes)]


def table_centre(sides: Sides, rnd, C: int, pairing: Pairing, stats=None) -> dict[int, tuple[int, int]]:
    """:func:`.pairing.join_centre` on the device: ``{S: (fewest R, count)}`` for the
    configurations whose centre sticks are C or its mirror, every S found within its cap."""
    begin = time.perf_counter()
    h, caps, level, primes = rnd.h, rnd.caps, rnd.level, rnd.primes
    removed_c = centre_removed(C, h)
    gl, gr = _both(sides, C, max(caps), primes, limit=level - 2 * removed_c)
    if stats is not None:
        stats.groups += len(gl.groups)
    blocks = table_blocks(sides.xp, gl.score, gr.score, level - 2 * removed_c, sides.right is None)
    ranges = {q: (rnd.lower[q], c) for q, c in caps.items()}
    windows, bins = windows_for(ranges, max(caps))
    one, zero = centre_masks(h, C)
    hits, residues = pairing(gl.groups, gr.groups, blocks, windows, level=level, bins=bins,
                             valid_one=one, valid_zero=zero, removed_c=removed_c, primes=primes)
    if stats is not None:
        stats.hits += int(hits.sum())
        stats.pairs += int(((blocks[:, 1] - blocks[:, 0]).astype(np.int64)
                            * (blocks[:, 3] - blocks[:, 2])).sum()) if len(blocks) else 0
    weight = centre_weight(C, h)
    found = {}
    for q, (lo, hi, base) in enumerate(windows):
        nz = np.flatnonzero(hits[base: base + hi - lo + 1]) if hi >= lo else []
        if len(nz):
            k = base + int(nz[0])
            found[q] = (lo + int(nz[0]), crt(_weighted(residues[:, k], primes, weight),
                                             rnd.primes_list))
    if stats is not None:
        stats.join_seconds += time.perf_counter() - begin
    return found


def exact_centre(sides: Sides, rnd, C: int, pairing: Pairing, stats=None) -> list[int]:
    """:func:`.exact_join.join_exact_centre` on the device: the residues (one per prime) of
    the configurations whose centre sticks are C or its mirror with exactly R removed and
    S squares. The table's pairing with one bin: groups for every r (the parts' removals
    are exact), sorted by r so that only runs whose r add up to R meet
    (:func:`.join_blocks.exact_blocks`), and the window R..R for S alone."""
    begin = time.perf_counter()
    h, S, R, primes = rnd.h, rnd.squares, rnd.removed, rnd.primes
    removed_c = centre_removed(C, h)
    if R < removed_c:
        return [0] * len(primes)
    gl, gr = _both(sides, C, S, primes, every_r=True)
    if stats is not None:
        stats.groups += len(gl.groups)
    blocks = exact_blocks(sides.xp, gl.groups.r, gl.score, gr.groups.r, gr.score, R - removed_c,
                          S + 2 * (R - removed_c), sides.right is None)
    windows, bins = windows_for({S: (R, R)}, S)
    one, zero = centre_masks(h, C)
    hits, residues = pairing(gl.groups, gr.groups, blocks, windows, level=S + 2 * R, bins=bins,
                             valid_one=one, valid_zero=zero, removed_c=removed_c, primes=primes)
    if stats is not None:
        stats.hits += int(hits.sum())
        stats.join_seconds += time.perf_counter() - begin
    return _weighted(residues[:, windows[S][2]], primes, centre_weight(C, h))


_held: dict = {}   # the round whose parts are on the device, and those parts
_held_lock = threading.Lock()


def _on_device(rnd):
    """The device's copy of the round's parts (made once per round) and the kernel's pairing."""
    from .gpu import cupy_module

    cupy = cupy_module()
    with _held_lock:  # threads of one process share one copy of the round's parts
        if _held.get("round") is not rnd:
            _held.clear()
            _held.update(round=rnd, sides=device_sides(cupy, rnd))
        sides = _held["sides"]
    return sides, kernel_pairing(cupy, load_module(KERNEL_SOURCE, ("-std=c++17",)))


def join_centre_gpu(rnd, C: int, stats=None) -> dict[int, tuple[int, int]]:
    """:func:`.pairing.join_centre` on the current CUDA device; the round's parts stay on
    the device for its other units (until the next round or :func:`release_device_sides`)."""
    sides, pairing = _on_device(rnd)
    return table_centre(sides, rnd, C, pairing, stats)


def join_exact_centre_gpu(rnd, C: int, stats=None) -> list[int]:
    """:func:`.exact_join.join_exact_centre` on the current CUDA device (parts kept as for
    :func:`join_centre_gpu`)."""
    sides, pairing = _on_device(rnd)
    return exact_centre(sides, rnd, C, pairing, stats)


def release_device_sides() -> None:
    """Let go of the round's parts kept on the device."""
    with _held_lock:
        _held.clear()
