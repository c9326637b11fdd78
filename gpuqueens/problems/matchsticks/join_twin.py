"""The NumPy twin of ``kernels/matchstick_join.cu``: the centre join's pairing, pair by pair.

The kernel and this module compute the same thing from the same inputs (the tests compare
them through an nvcc host build of the kernel, on random inputs): for each *descriptor*
``(i0, i1, j0, j1, jsplit, weights)`` the left groups i0..i1-1 meet the right groups
j0..j1-1, and a pair with

    S = s_a + s_b + popcount(X_a & X_b),  R = r_a + r_b + removed_c,

every centre point of degree != 1 (masks ``valid_one``, ``valid_zero``: :func:`centre_masks`),
S <= max_s, S + 2R <= level and lo_S <= R <= hi_S (``windows[S] = (lo, hi, base)``) is a
hit in bin ``base + R - lo``: one more hit there and ``count_a * count_b * weight`` added
modulo each prime (weight ``weights & 0xff`` below column ``jsplit``, ``weights >> 8`` from
it). Groups are :class:`GroupArrays`: ``x`` (uint64 crossing bits), ``hs`` (uint32,
H | s << 16), ``r`` (int32) and ``counts`` (uint32 residues, one row per prime).

>>> one = GroupArrays(np.array([3], dtype=np.uint64), np.array([1 | 2 << 16], dtype=np.uint32),
...                   np.array([1], dtype=np.int32), np.array([[5]], dtype=np.uint32))
>>> blocks = np.array([[0, 1, 0, 1, 1, 1 | 2 << 8]], dtype=np.int32)
>>> windows = np.array([[0, 9, 0]] * 7, dtype=np.int32)      # S = 0..6: R = 0..9 in bins 0..9
>>> hits, residues = pair_bins(one, one, blocks, windows, level=99, bins=10, valid_one=0,
...                            valid_zero=0, removed_c=0, primes=np.array([7], dtype=np.uint64))
>>> int(hits[2]), int(residues[0, 2])     # S = 2 + 2 + popcount(3) = 6, R = 2, 5 * 5 mod 7
(1, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GroupArrays", "pair_bins", "centre_masks", "popcount64", "BLOCK_ROWS", "MAX_COLUMNS",
           "CHUNK"]

#: The kernel's MJ_BLOCK (threads, so left groups, per descriptor), MJ_MAX_COLUMNS and
#: MJ_CHUNK.
BLOCK_ROWS = 256
MAX_COLUMNS = 1 << 20
CHUNK = 256

_BYTE_BITS = np.array([bin(v).count("1") for v in range(256)], dtype=np.int32)


@dataclass
class GroupArrays:
    """One side's groups as the kernel reads them (NumPy or CuPy arrays)."""

    x: np.ndarray        # uint64: crossing-square bits
    hs: np.ndarray       # uint32: H | s << 16
    r: np.ndarray        # int32: removed sticks (without the centre ones)
    counts: np.ndarray   # uint32 (primes, groups): residues

    def __len__(self) -> int:
        return len(self.r)


def popcount64(values: np.ndarray) -> np.ndarray:
    """Set bits of each uint64 (any NumPy version).

    >>> popcount64(np.array([0, 1, 2**64 - 1], dtype=np.uint64)).tolist()
    [0, 1, 64]
    """
    flat = np.ascontiguousarray(values, dtype=np.uint64)
    return _BYTE_BITS[flat.view(np.uint8)].reshape(*flat.shape, 8).sum(axis=-1)


def centre_masks(h: int, C: int) -> tuple[int, int]:
    """``(valid_one, valid_zero)``: the centre points with one vertical centre stick (one of
    the two horizontals needed) and with none (both or neither).

    >>> centre_masks(2, 0b01)     # point 0: one stick below, point 1: one above, point 2: none
    (3, 4)
    """
    one = zero = 0
    for i in range(h + 1):
        vertical = (i >= 1 and (C >> (i - 1)) & 1) + (i < h and (C >> i) & 1)
        if vertical == 1:
            one |= 1 << i
        elif vertical == 0:
            zero |= 1 << i
    return one, zero


def pair_bins(left: GroupArrays, right: GroupArrays, blocks: np.ndarray, windows: np.ndarray, *,
              level: int, bins: int, valid_one: int, valid_zero: int, removed_c: int,
              primes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(hits, residues)``: hits per bin (uint64) and the residues (uint64, one row per
    prime, reduced mod p) of every descriptor's pairs, as the kernel computes them."""
    max_s = len(windows) - 1
    primes = np.asarray(primes, dtype=np.uint64)
    hits = np.zeros(bins, dtype=np.uint64)
    residues = np.zeros((len(primes), bins), dtype=np.uint64)
    ha_all = (left.hs & 0xFFFF).astype(np.int64)
    hb_all = (right.hs & 0xFFFF).astype(np.int64)
    for i0, i1, j0, j1, split, weights in np.asarray(blocks, dtype=np.int64):
        a = np.arange(i0, i1)
        b = np.arange(j0, j1)
        if len(a) == 0 or len(b) == 0:
            continue
        s = ((left.hs[a] >> 16).astype(np.int64)[:, None] + (right.hs[b] >> 16).astype(np.int64)
             + popcount64(left.x[a][:, None] & right.x[b][None, :]))
        r = left.r[a].astype(np.int64)[:, None] + removed_c + right.r[b].astype(np.int64)
        ha, hb = ha_all[a][:, None], hb_all[b][None, :]
        bad = (~(ha | hb) & valid_one) | ((ha ^ hb) & valid_zero)
        ok = (s + 2 * r <= level) & (s <= max_s) & (bad == 0)
        ia, ib = np.nonzero(ok)
        s, r = s[ia, ib], r[ia, ib]
        lo, hi, base = windows[s, 0], windows[s, 1], windows[s, 2]
        inside = (r >= lo) & (r <= hi)
        ia, ib, bin_ = a[ia[inside]], b[ib[inside]], (base + r - lo)[inside]
        np.add.at(hits, bin_, np.uint64(1))
        weight = np.where(ib < split, weights & 0xFF, (weights >> 8) & 0xFF).astype(np.uint64)
        for k, p in enumerate(primes):
            v = left.counts[k, ia].astype(np.uint64) * right.counts[k, ib].astype(np.uint64) % p
            v = v * weight % p
            sums = np.zeros(bins, dtype=np.uint64)
            np.add.at(sums, bin_, v)       # < 2^31 each: no wrap below 2^33 hits
            residues[k] = (residues[k] + sums % p) % p
    return hits, residues
