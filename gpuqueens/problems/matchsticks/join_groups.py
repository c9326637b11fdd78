"""A side's *groups* for one centre pattern C, built with array operations only, so that the
same code runs on NumPy arrays (the CPU run of the GPU pairing) and on CuPy arrays (the GPU).

For C, a part (:mod:`.halves`) becomes a group key (H, X, s' = s + the centre squares that C
closes) that keeps the fewest removals r and the count at it (the sweep's semiring), as
:func:`.pairing.join_centre` does on the CPU. The groups come as
:class:`.join_twin.GroupArrays` (what the pairing kernel reads), sorted by the score
s' + 2r for the descriptors of :mod:`.join_blocks`.

The merge sorts one int64 key (the group key, then r) and sums the counts of each run of
equal keys by a cumulative sum (residues below 2^31: fewer than 2^33 of them cannot wrap
uint64), so it needs no ``reduceat``.

>>> import numpy as np
>>> from gpuqueens.problems.matchsticks.halves import half_parts
>>> primes = np.array([2147483647], dtype=np.uint64)
>>> left, _ = half_parts(2, 2, {q: 12 for q in range(6)}, primes)
>>> g = side_groups(np, DeviceParts.of(np, left), 0b11, 5, primes)
>>> len(g.groups), g.score.tolist() == sorted(g.score.tolist())
(5, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .halves import Parts, centre_squares
from .join_twin import GroupArrays
from .keys import run_starts, run_sums

__all__ = ["DeviceParts", "SideGroups", "side_groups", "side_squares"]


@dataclass
class DeviceParts:
    """The arrays of :class:`.halves.Parts` that the groups need, on one array module."""

    hx: Any          # int64 (parts,): H * patterns + X (X: index of the crossing pattern)
    patterns: int
    s: Any           # int64
    r: Any           # int64
    ybits: Any       # uint64 (parts,): bit k set when the part keeps centre square k
    yrows: list      # per centre square: the C sticks it needs
    counts: Any      # uint64 (parts, primes)
    xwords: Any      # uint64 (patterns,): crossing bits
    xwords_mirrored: Any  # the same read as right parts (left side of an even width only)

    @classmethod
    def of(cls, xp, parts: Parts) -> DeviceParts:
        """``parts`` on array module ``xp``."""
        mirrored = None if parts.xwords_mirrored is None else xp.asarray(parts.xwords_mirrored)
        return cls(xp.asarray(parts.hx), len(parts.xwords), xp.asarray(parts.s),
                   xp.asarray(parts.r), xp.asarray(parts.ybits), list(parts.yrows),
                   xp.asarray(parts.counts), xp.asarray(parts.xwords), mirrored)


@dataclass
class SideGroups:
    """One side's groups for one C, sorted by ``score`` = s' + 2r (problem 2's: by r, then
    by score)."""

    groups: GroupArrays
    score: Any
    X: Any               # each group's crossing pattern index (for the mirrored side)

    def mirrored(self, xwords_mirrored) -> SideGroups:
        """The same groups read as the right side of a symmetric join."""
        g = self.groups
        return SideGroups(GroupArrays(xwords_mirrored[self.X], g.hs, g.r, g.counts), self.score,
                          self.X)


def side_squares(xp, parts: DeviceParts, C: int):
    """The parts' squares once C closes the centre squares it completes."""
    return centre_squares(xp, parts.s, parts.ybits, parts.yrows, C)


def side_groups(xp, parts: DeviceParts, C: int, max_squares: int,
                primes: np.ndarray, every_r: bool = False, most: int | None = None,
                squares=None) -> SideGroups:
    """The groups of one side for centre pattern C: the fewest r per group key (the table),
    or with ``every_r`` one group per (group key, r) with all its counts (problem 2, whose
    parts have exact removals). ``most``: only the groups with a score s' + 2r up to it,
    from the parts with s' + 2r up to it (:func:`.pairing.join_centre` says why).
    ``squares``: :func:`side_squares` for C, where the caller has it already."""
    s = side_squares(xp, parts, C) if squares is None else squares
    keep = s <= max_squares
    if most is not None:
        keep &= s + 2 * parts.r <= most
    ok = xp.flatnonzero(keep)
    r = parts.r[ok]
    top = int(r.max()) if len(r) else 0
    group_key = parts.hx[ok] * (max_squares + 1) + s[ok]
    key_r = group_key * (top + 1) + r
    order = xp.argsort(key_r)
    group_key, r, key_r = group_key[order], r[order], key_r[order]
    rows = ok[order]
    if every_r:
        starts, _ = run_starts(xp, key_r)
        counts = run_sums(xp, parts.counts[rows], starts, primes)
    else:
        starts, run = run_starts(xp, group_key)     # the first of a run holds the fewest r
        at_fewest = r == r[starts][run]
        counts = run_sums(xp, parts.counts[rows] * at_fewest[:, None].astype(xp.uint64), starts,
                          primes)
    key, fewest = group_key[starts], r[starts]
    s_group = key % (max_squares + 1)
    hx = key // (max_squares + 1)
    H, X = hx // parts.patterns, hx % parts.patterns
    score = s_group + 2 * fewest
    # by score for the table's staircase; by r, then score, for problem 2's runs of one r
    order = xp.argsort(fewest * (max_squares + 1) + s_group if every_r else score)
    groups = GroupArrays(parts.xwords[X[order]],
                         (H[order] | s_group[order] << 16).astype(xp.uint32),
                         fewest[order].astype(xp.int32),
                         xp.ascontiguousarray(counts[order].T.astype(xp.uint32)))
    return SideGroups(groups, score[order], X[order])
