"""A check of the matchstick kernels on a GPU against the CPU, before their first use.

The first use of each GPU path in a process on a device first runs it on a small grid and
compares every number with the CPU's:

* ``"transfer"`` (``kernels/matchsticks.cu``, problem 1: the counts by R): the 4×5 and 4×4
  grids (odd and even width), against the CPU's transfer matrix;
* ``"join"`` (``kernels/matchstick_join.cu``, the puzzle table and problem 2): a round of the
  4×4 table's join (caps {S: R} = {0: 9, 1: 8, 2: 8} at level 18, its first round for S =
  0..2), its half sweeps on the device and every centre pattern's pairing, against the
  same round on the CPU. (Problem 2's exact join pairs with the same kernel.)

A device, driver or compiler that gets one wrong is refused with
:class:`~gpuqueens.DeviceCheckError` instead of giving a wrong count. The grids cost
milliseconds on the CPU, once per process, device and path. The callers (the unit solvers
and the public calls) sit above this module, which uses only the pieces below them.
"""

from __future__ import annotations

import functools

from ...backends import DeviceCheckError

__all__ = ["check_device", "CHECK_GRIDS", "CHECK_ROUND"]

#: Grids whose counts by R the transfer check compares.
CHECK_GRIDS = ((4, 5), (4, 4))
#: (h, w, caps {S: largest R}, level) of the join round the join check compares.
CHECK_ROUND = (4, 4, {0: 9, 1: 8, 2: 8}, 18)


def check_device(path: str) -> None:
    """Raise :class:`~gpuqueens.DeviceCheckError` unless the current device runs ``path``
    ("transfer" or "join") on the check grid as the CPU does; the first call per device and
    path in a process checks, later ones return at once."""
    from .gpu import cupy_module

    _check_device_of(cupy_module().cuda.Device().id, path)


@functools.lru_cache(maxsize=None)
def _check_device_of(device_id: int, path: str) -> None:
    try:
        pairs = _transfer_pairs() if path == "transfer" else _join_pairs()
    except (ValueError, MemoryError) as error:  # too little free device memory, even for these
        # (the small grid the message names is the check's, not the count asked for)
        raise ValueError(f"the check of the GPU before its first matchstick count (a small grid "
                         f"on the GPU against the CPU) could not run: {error}") from error
    for what, got, want in pairs:
        if got != want:
            raise DeviceCheckError.wrong(what, got, want)


def _transfer_pairs() -> list[tuple[str, list[int], list[int]]]:
    """(what, on the GPU, on the CPU) for each check grid's counts by R."""
    from .gpu import count_by_removed_gpu
    from .transfer import count_by_removed

    return [(f"the counts by R of the {m}×{n} grid", count_by_removed_gpu(m, n), count_by_removed(m, n))
            for m, n in CHECK_GRIDS]


def _join_pairs() -> list[tuple[str, dict, dict]]:
    """(what, on the GPU, on the CPU) for each centre pattern of the check round."""
    import numpy as np

    from .gpu import cupy_module
    from .gpu_join import join_centre_gpu, release_device_sides
    from .pairing import centre_patterns, join_centre, prepare_round

    h, w, caps, level = CHECK_ROUND
    on_cpu = prepare_round(h, w, caps, level, xp=np)
    on_gpu = prepare_round(h, w, caps, level, xp=cupy_module())
    try:
        return [(f"the {h}×{w} table round's centre pattern {C:0{h}b}", join_centre_gpu(on_gpu, C),
                 join_centre(on_cpu, C)) for C in centre_patterns(h)]
    finally:
        release_device_sides()  # the check's round: not the parts of the count that follows
