"""Problem 1 by evaluation points: the transfer matrix at fixed x modulo primes (NumPy twin
of ``kernels/matchsticks.cu``).

The coefficient transfer (:mod:`.transfer`) carries the whole R axis in every state. Here
the sweep runs at one value x of the count polynomial P(x) = Σ_R X_R x^R modulo a prime p:
one residue per frontier state, and a removed stick multiplies by x. A *lane* is one pair
(p, x); E + 1 lanes per prime (the powers of a root of unity) give P back by interpolation
(:mod:`.interpolation`), and the primes give the counts by the CRT (:mod:`.modular`).

**Half the sweep (mirror join).** Turning the grid left to right maps valid configurations
to valid ones with the same R. With c = w // 2, let S_c be the state after the columns of
points 0..c-1 and S_{c+1} after 0..c (both at a column boundary: up = 0, H = the horizontal
sticks crossing it). The columns c+1..w are the mirror image of columns c..0 for odd w
(w = 2c+1) and of c-1..0 for even w, so

    P(x) = Σ_H S_{c+1}[H] · T[H] · x^-(h+1-|H|),   T = S_{c+1} (odd w), S_c (even w),

where the factor removes the crossing sticks' x, counted on both sides. Only the columns
0..c are swept: about half the work.

**Lazy residues.** States hold values below 2p with p < 2^29 (sums of four stay below
2^32); multiplications by x and x^2 use Shoup's method, ``q = (a·x') >> 32``,
``a·x - q·p``, with ``x' = floor(x·2^32/p)``, exact below 2p. This module does every
operation as the kernel does, in uint64 (so a value that would wrap 32 bits differs), and
the tests compare the two bit for bit.

>>> count_by_removed_evaluated(2, 2)
[1, 4, 10, 8, 7, 4, 4, 0, 4, 0, 0, 0, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...progress import Progress, progress_enabled
from .grid import orient, stick_count
from .interpolation import PRIME_LIMIT, coefficients, evaluation_primes, points, root_of_unity
from .count_bound import count_bound
from .modular import crt

__all__ = ["LANES", "TILE_STEPS", "Pass", "SweepPlan", "sweep_plan", "lane_words", "join_weights",
           "step", "run_pass", "join", "sweep_values", "count_by_removed_evaluated"]

#: Lanes stored side by side for each state (MS_LANES in the kernel).
LANES = 8
#: Point steps per pass of the GPU kernel (a tile of 2^(TILE_STEPS+1) states x 8 lanes).
TILE_STEPS = 10
_BYTE_POPCOUNT = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)


def lane_words(primes, xs) -> np.ndarray:
    """The kernel's lane table: one row (p, x, x', x^2 mod p, (x^2)', 2p, 4p) per lane, uint32
    (x' = floor(x·2^32/p), Shoup's factor)."""
    p = np.asarray(primes, dtype=np.uint64).reshape(-1)
    x = np.asarray(xs, dtype=np.uint64).reshape(-1)
    x2 = x * x % p  # < 2^58
    columns = (p, x, (x << np.uint64(32)) // p, x2, (x2 << np.uint64(32)) // p, 2 * p, 4 * p)
    return np.stack(columns, axis=1).astype(np.uint32)


def join_weights(lanes: np.ndarray, h: int) -> np.ndarray:
    """Per lane and popcount k = 0..h+1 of H: (x^-(h+1-k) mod p, its Shoup factor), uint32
    of shape (lanes, h + 2, 2)."""
    p = lanes[:, 0].astype(np.uint64)
    inverse = np.array([pow(x, -1, q) for q, x in lanes[:, :2].tolist()], dtype=np.uint64)
    weights = np.ones((len(lanes), h + 2), dtype=np.uint64)
    for k in range(h, -1, -1):  # x^-(h+1-k) = x^-(h-k) · x^-1
        weights[:, k] = weights[:, k + 1] * inverse % p
    return np.stack([weights, (weights << np.uint64(32)) // p[:, None]], axis=2).astype(np.uint32)


def _mul(a, w, ws, p):
    return a * w - ((a * ws) >> np.uint64(32)) * p  # Shoup: < 2p, exact in uint64


def _reduce8(s, p2, p4):
    for m in (p4, p2):
        s = np.minimum(s, s - m)  # subtract m when s >= m (else s - m wraps above s)
    return s


def step(v: np.ndarray, h: int, row: int, down: bool, right: bool, lanes: np.ndarray) -> np.ndarray:
    """One point step at ``row`` on states ``v`` of shape (2^(h+2), lanes), uint64 values < 2p.

    Bit 0 of the state index is ``up``, bit row + 1 the frontier stick of the row; the four
    states (left, up) become (right, down) as in ``ms_step`` of the kernel.
    """
    p, x, xs, x2, x2s, p2, p4 = (lanes[:, k].astype(np.uint64) for k in range(7))
    view = v.reshape(1 << (h - row), 2, 1 << row, 2, -1)
    o00, o01, o10, o11 = view[:, 0, :, 0], view[:, 0, :, 1], view[:, 1, :, 0], view[:, 1, :, 1]
    s0 = o00 + o11
    s1 = o01 + o10 + o11
    s2 = s1 + o00
    new = np.zeros_like(view)
    if down and right:
        new[:, 0, :, 0] = _mul(s0, x2, x2s, p)
        new[:, 0, :, 1] = new[:, 1, :, 0] = _mul(s1, x, xs, p)
        new[:, 1, :, 1] = _reduce8(s2, p2, p4)
    elif down or right:
        new[:, 0, :, 0] = _mul(s0, x, xs, p)
        new[:, int(right), :, int(down)] = _reduce8(s1, p2, p4)
    else:
        new[:, 0, :, 0] = _reduce8(s0, p2, p4)
    return new.reshape(v.shape)


@dataclass(frozen=True)
class Pass:
    """``steps`` consecutive point steps from ``first_row`` (wrapping to row 0 of the next
    column after row h); bit k of ``right_mask``: step k's point has a stick to its right."""

    first_row: int
    steps: int
    right_mask: int


def run_pass(v: np.ndarray, h: int, one: Pass, lanes: np.ndarray) -> np.ndarray:
    """The steps of one pass, one after another (the kernel runs them in tiles)."""
    for k in range(one.steps):
        row = (one.first_row + k) % (h + 1)
        v = step(v, h, row, row < h, bool(one.right_mask >> k & 1), lanes)
    return v


@dataclass(frozen=True)
class SweepPlan:
    """The passes of the half sweep over the columns of points 0..w//2 of an h×w grid.
    For even w, the state after the first ``boundary`` passes is S_c, kept for the join."""

    h: int
    w: int
    passes: tuple[Pass, ...]
    boundary: int | None


def sweep_plan(h: int, w: int, tile_steps: int = TILE_STEPS) -> SweepPlan:
    """Chop the half sweep into passes of at most ``tile_steps`` steps (and at most h + 1,
    so that a pass never meets a row twice), split at the boundary S_c for even w.

    >>> plan = sweep_plan(2, 2, 2)
    >>> [(q.first_row, q.steps) for q in plan.passes], plan.boundary
    ([(0, 2), (2, 1), (0, 2), (2, 1)], 2)
    """
    rows = h + 1
    size = max(1, min(tile_steps, rows))
    total = (w // 2 + 1) * rows
    cut = (w // 2) * rows if w % 2 == 0 else None
    passes: list[Pass] = []
    boundary = None
    start = 0
    while start < total:
        if start == cut:
            boundary = len(passes)
        stop = min(start + size, total if cut is None or start >= cut else cut)
        mask = sum(1 << k for k in range(stop - start) if (start + k) // rows < w)
        passes.append(Pass(start % rows, stop - start, mask))
        start = stop
    return SweepPlan(h, w, tuple(passes), boundary)


def join(a: np.ndarray, b: np.ndarray, h: int, lanes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per lane: Σ_H a[H] · b[H] · x^-(h+1-|H|) mod p over the states with up = 0 (uint64)."""
    p = lanes[:, 0].astype(np.uint64)
    frontier = np.arange(1 << (h + 1), dtype=np.int64)
    ones = sum(_BYTE_POPCOUNT[(frontier >> shift) & 255] for shift in range(0, h + 1, 8))
    weight = weights[np.arange(len(lanes))[None, :], ones[:, None], 0].astype(np.uint64)
    left = a[frontier << 1] % p
    right = b[frontier << 1] % p
    terms = (left * right % p) * weight % p
    return terms.sum(axis=0, dtype=np.uint64) % p


def sweep_values(h: int, w: int, lanes: np.ndarray, tile_steps: int = TILE_STEPS) -> np.ndarray:
    """P(x) mod p for every lane (p, x) of ``lanes`` (rows of :func:`lane_words`), by the
    half sweep and the mirror join, on the CPU. Same schedule as the GPU launcher."""
    plan = sweep_plan(h, w, tile_steps)
    state = np.zeros((1 << (h + 2), len(lanes)), dtype=np.uint64)
    state[0] = 1
    kept = None
    for index, one in enumerate(plan.passes):
        if index == plan.boundary:
            kept = state
        state = run_pass(state, h, one, lanes)
    return join(state, state if kept is None else kept, h, lanes, join_weights(lanes, h))


SweepValues = Callable[[int, int, np.ndarray], np.ndarray]


def count_by_removed_evaluated(m: int, n: int, max_removed: int | None = None, *,
                               sweep: SweepValues = sweep_values,
                               lanes_per_batch: int | None = None,
                               check_primes: int = 0, bound: int | None = None,
                               progress: bool | None = False) -> list[int]:
    """Exact counts for R = 0..max_removed (default E) by evaluation points.

    ``sweep(h, w, lanes)`` returns P(x) mod p per lane: :func:`sweep_values` on the CPU, the
    kernel on the GPU (:mod:`.gpu`). The lanes (E + 1 points for each prime) go in batches
    of ``lanes_per_batch`` (a multiple of :data:`LANES`; default all at once). The primes'
    product exceeds ``bound``, an upper bound on every count asked: by default
    :func:`.count_bound.count_bound` on the CPU (the GPU path passes the same bound computed
    on the device).

    ``check_primes`` more primes are swept than the bound needs: every count must then have
    the same value modulo them as the CRT result of the others (a count beyond the bound, or
    a lane that computed a wrong value, would show), else ``ArithmeticError``. ``progress``:
    a bar over the batches (as :func:`gpuqueens.progress.progress_enabled` reads it).

    >>> count_by_removed_evaluated(10, 10, 4, check_primes=1)
    [1, 212, 22278, 1547004, 79847833]
    """
    h, w = orient(m, n)
    sticks = stick_count(h, w)
    top = sticks if max_removed is None else min(max_removed, sticks)
    count = sticks + 1
    if bound is None:
        bound = count_bound(h, w, top)
    needed = len(evaluation_primes(count, bound))
    primes = evaluation_primes(count, bound * (PRIME_LIMIT ** check_primes))
    primes = primes[:needed + check_primes]
    table = lane_words([p for p in primes for _ in range(count)],
                       [x for p in primes for x in points(p, count)])
    padding = -len(table) % LANES  # whole lane groups; the padding repeats the first lane
    table = np.concatenate([table, np.repeat(table[:1], padding, axis=0)])
    batch = len(table) if lanes_per_batch is None else max(LANES, lanes_per_batch // LANES * LANES)
    starts = range(0, len(table), batch)
    swept = []
    with Progress(len(starts), len(table), enabled=progress_enabled(progress),
                  description=f"{h}×{w} by R") as bar:
        for start in starts:
            lanes = table[start:start + batch]
            swept.append(np.asarray(sweep(h, w, lanes), dtype=np.uint64))
            bar.advance(len(lanes))
    values = np.concatenate(swept)
    columns = [coefficients(values[k * count:(k + 1) * count], p, root_of_unity(p, count), top + 1)
               for k, p in enumerate(primes)]
    counts = [crt([int(c) for c in row[:needed]], primes[:needed]) for row in zip(*columns)]
    for k in range(needed, len(primes)):
        wrong = [r for r, c in enumerate(counts) if c % primes[k] != int(columns[k][r])]
        if wrong:
            raise ArithmeticError(f"{m}×{n}: the check prime {primes[k]} disagrees at R = {wrong[:5]}")
    return counts
