"""Problem 1: valid configurations by number of removed sticks, by a frontier transfer matrix.

The sweep visits the grid points column by column (columns of ``h + 1`` points, h the
shorter side), top to bottom. At point (i, j) its left stick and the stick from above are
already decided; the sweep decides its down and right sticks, and since then all four
sticks at the point are known it rejects degree 1 there and then. The frontier state is

* ``H`` (h+1 bits): bit k says whether the horizontal stick leaving row k of the frontier
  to the right is present (rows above i: sticks right of column j; rows i and below: sticks
  entering column j from the left);
* ``up`` (1 bit): whether the vertical stick from point (i-1, j) down to (i, j) is present.

Counts per state are polynomials in the number of removed sticks: a dense array
``X[H, up, R]``. One point step reads the four sub-arrays with (left, up) = (l, u) at the
current row and writes those with (right, down) = (r, d): a config survives when
``l + u + d + r != 1``, which only depends on ``d + r``, so three sums cover all twelve
allowed (l, u, d, r) combinations, and removing a stick shifts the R axis by one.

All arithmetic is modulo primes (see :mod:`.modular`); the same code runs on NumPy and on
CuPy (``xp``), the GPU path of :mod:`.gpu`.

>>> count_by_removed(1, 2)
[1, 1, 0, 2, 0, 0, 0, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np

from ...progress import Progress, progress_enabled
from .grid import orient, stick_count
from .count_bound import count_bound
from .modular import WIDE_PRIME_LIMIT, binomial_bound, crt, primes_for_bound

__all__ = ["MAX_GPU_TRANSFER_SHORT_SIDE", "count_by_removed", "residues_by_removed", "column_work",
           "state_count"]

#: The GPU runs problem 1 by evaluation points (:mod:`.gpu`), whose memory is 2^(h+2)
#: residues per lane: h = 24 needs 4 GiB for a group of 8 lanes. Beyond it the time grows
#: about 2.5x per unit of h (:func:`.transfer_work.method_cost` projects ~10 minutes for 24×24 on
#: one H100; not measured).
MAX_GPU_TRANSFER_SHORT_SIDE = 24


def state_count(m: int, n: int) -> int:
    """Number of frontier states ``2^(h+1) · 2`` of the dense transfer matrix."""
    h, _ = orient(m, n)
    return 1 << (h + 2)


def _addmod(xp: ModuleType, a, b, p, out=None, scratch=None):
    """(a + b) mod p for residues < p < 2^62: a + b < 2^63 cannot wrap. ``out`` and
    ``scratch``: arrays of the result's shape to compute in, or None for new ones."""
    s = xp.add(a, b, out=out)
    # When s >= p, s - p is the smaller; when s < p, s - p wraps to a huge value.
    return xp.minimum(s, xp.subtract(s, p, out=scratch), out=s)


def column_work(h: int, w: int, length: int) -> list[int]:
    """The work of each point column of :func:`residues_by_removed`: the R values alive
    (``min(decided + 1, length)``) summed over its point steps, for a progress bar.

    >>> column_work(1, 2, 8)
    [4, 10, 15]
    """
    work, decided = [], 0
    for j in range(w + 1):
        total = 0
        for i in range(h + 1):
            total += min(decided + 1, length)
            decided += (i < h) + (j < w)
        work.append(total)
    return work


def residues_by_removed(h: int, w: int, length: int, p: int, xp: ModuleType = np,
                        on_column: Callable[[float], None] | None = None, kept: bool = False):
    """``X[R] mod p`` for R < length: valid configurations of an h×w grid (h <= w); with
    ``kept``, by the number K of sticks kept instead (``X[E - K]``).

    Returns an ``xp`` array of ``length`` uint64 residues. ``on_column(work)`` is called
    after each point column with its :func:`column_work`.
    """
    work = column_work(h, w, length) if on_column is not None else None
    prime = xp.uint64(p)
    states = 1 << (h + 1)
    x = xp.zeros((states, 2, length), dtype=xp.uint64)
    x[0, 0, 0] = 1  # nothing decided: all frontier sticks absent, R = 0
    # Each step writes into the other of two buffers: a fresh array per step (tens of MiB
    # from 12×12 on) would be a fresh mapping whose pages the kernel zeroes again each time.
    spare = xp.empty_like(x)
    # and the sums of a step go to four more of a quarter of the state's size each
    scratch = [xp.empty(states // 2 * length, dtype=xp.uint64) for _ in range(4)]
    decided = 0  # sticks decided so far: bounds the nonzero part of the R (or K) axis
    for j in range(w + 1):
        has_right = j < w
        for i in range(h + 1):
            has_down = i < h
            above, below = 1 << (h - i), 1 << i
            live = min(decided + 1, length)  # R >= live is still all zero
            old = x.reshape(above, 2, below, 2, length)[..., :live]
            o00, o01 = old[:, 0, :, 0], old[:, 0, :, 1]
            o10, o11 = old[:, 1, :, 0], old[:, 1, :, 1]
            # Sums over (left, up) allowed for each number d + r of new sticks kept.
            sums = [buffer[:o00.size].reshape(o00.shape) for buffer in scratch]
            by_kept = [_addmod(xp, o00, o11, prime, sums[0], sums[3])]
            by_kept.append(_addmod(xp, _addmod(xp, o01, o10, prime, sums[1], sums[3]), o11,
                                   prime, sums[1], sums[3]))
            by_kept.append(_addmod(xp, by_kept[1], o00, prime, sums[2], sums[3]))
            x, spare = spare, x
            x.fill(0)
            new = x.reshape(above, 2, below, 2, length)
            for r in (0, 1) if has_right else (0,):
                for d in (0, 1) if has_down else (0,):
                    # sticks removed here (or kept: d and r are 0 where there is no stick)
                    shift = d + r if kept else (has_down and not d) + (has_right and not r)
                    if shift < length:
                        top = min(live + shift, length)
                        new[:, r, :, d, shift:top] = by_kept[d + r][..., : top - shift]
            decided += has_down + has_right
        if work is not None:
            on_column(work[j])
    return x[0, 0]


def count_by_removed(m: int, n: int, max_removed: int | None = None, *,
                     xp: ModuleType = np, progress: bool | None = False,
                     kept: bool = False) -> list[int]:
    """Exact counts of valid configurations with R = 0..max_removed sticks removed (with
    ``kept``: with K = 0..max_removed sticks kept, the counts at R = E - K, the sweep
    truncated at K instead of at R).

    ``max_removed`` defaults to E (the whole distribution). Residues modulo enough primes
    < 2^62 that their product exceeds every count asked (:func:`.count_bound.count_bound`,
    at most C(E, R); by sticks kept, C(E, K)) are combined by the CRT. ``progress``: a bar
    over the sweeps' point columns, one sweep per prime (as
    :func:`gpuqueens.progress.progress_enabled` reads it).

    >>> count_by_removed(2, 2)
    [1, 4, 10, 8, 7, 4, 4, 0, 4, 0, 0, 0, 1]
    >>> count_by_removed(10, 10, 4)
    [1, 212, 22278, 1547004, 79847833]
    >>> count_by_removed(2, 2, 5, kept=True)  # the last six above, from the other end
    [1, 0, 0, 0, 4, 0]
    """
    h, w = orient(m, n)
    sticks = stick_count(h, w)
    top = sticks if max_removed is None else min(max_removed, sticks)
    # (the bound of count_bound holds for counts by R; by K, C(E, K) is the bound)
    bound = binomial_bound(sticks, top) if kept else count_bound(h, w, top, xp=xp)
    primes = primes_for_bound(bound, WIDE_PRIME_LIMIT)
    columns = []
    sweeps = len(primes) * (w + 1)
    with Progress(sweeps, len(primes) * sum(column_work(h, w, top + 1)),
                  enabled=progress_enabled(progress),
                  description=f"{h}×{w} by {'K kept' if kept else 'R'}") as bar:
        for p in primes:
            res = residues_by_removed(h, w, top + 1, p, xp, on_column=bar.advance, kept=kept)
            columns.append([int(v) for v in (res.get() if hasattr(res, "get") else res)])
    return [crt(list(values), primes) for values in zip(*columns)]
