"""The pairing launches' descriptors (gpuqueens/problems/matchsticks/join_blocks.py) against
brute force: every pair that can count is covered with the right weight, and problem 2's
descriptors test no pair whose removals cannot add up."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from gpuqueens.problems.matchsticks.join_blocks import exact_blocks, table_blocks
from gpuqueens.problems.matchsticks.join_twin import BLOCK_ROWS, MAX_COLUMNS


def covered(blocks) -> Counter:
    """(a, b) -> weight summed over the descriptors."""
    weights = Counter()
    for i0, i1, j0, j1, split, w in np.asarray(blocks, dtype=np.int64).reshape(-1, 6):
        assert i1 - i0 <= BLOCK_ROWS and j1 - j0 <= MAX_COLUMNS
        for a in range(i0, i1):
            for b in range(j0, j1):
                weights[a, b] += int(w & 0xFF if b < split else w >> 8)
    return weights


def expected(wanted, left: int, right: int, symmetric: bool) -> Counter:
    """The weight each pair must get: 1 per ordered pair; a symmetric join counts (a, b)
    and (b, a) through whichever of the two its descriptors hold."""
    out = Counter()
    for a in range(left):
        for b in range(right):
            if wanted(a, b):
                out[(min(a, b), max(a, b)) if symmetric else (a, b)] += 1
    return out


def folded(weights: Counter, symmetric: bool) -> Counter:
    if not symmetric:
        return weights
    out = Counter()
    for (a, b), w in weights.items():
        out[min(a, b), max(a, b)] += w
    return out


def groups(rng, size: int, top_r: int):
    """Groups sorted by r, then score (problem 2's order); scores s + 2r."""
    r = np.sort(rng.integers(0, top_r + 1, size))
    s = rng.integers(0, 12, size)
    order = np.lexsort((s, r))
    r, s = r[order], s[order]
    return r.astype(np.int32), (s + 2 * r).astype(np.int64)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("symmetric", [False, True])
def test_table_blocks_cover_the_staircase(seed, symmetric):
    rng = np.random.default_rng(seed)
    left = np.sort(rng.integers(0, 30, 300))
    right = left if symmetric else np.sort(rng.integers(0, 30, 200))
    limit = 25
    got = folded(covered(table_blocks(np, left, right, limit, symmetric)), symmetric)
    want = expected(lambda a, b: left[a] + right[b] <= limit, len(left), len(right), symmetric)
    assert all(got[pair] == w for pair, w in want.items())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("removed", [0, 3, 6])
def test_exact_blocks_cover_the_pairs_whose_removals_add_up(seed, symmetric, removed):
    rng = np.random.default_rng(seed)
    lr, ls = groups(rng, 300, 7)
    rr, rs = (lr, ls) if symmetric else groups(rng, 250, 7)
    limit = 10 + 2 * removed
    blocks = exact_blocks(np, lr, ls, rr, rs, removed, limit, symmetric)
    weights = covered(blocks)
    assert all(lr[a] + rr[b] == removed for a, b in weights)   # no pair wasted on r
    want = expected(lambda a, b: lr[a] + rr[b] == removed and ls[a] + rs[b] <= limit,
                    len(lr), len(rr), symmetric)
    got = folded(weights, symmetric)
    assert want and all(got[pair] == w for pair, w in want.items())
