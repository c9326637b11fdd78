"""Which pairs a CPU round multiplies (pair_blocks.py): the staircase and the cut blocks."""

import numpy as np
import pytest

from gpuqueens.problems.matchsticks import pair_blocks


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("triangle", [False, True])
def test_the_staircase_covers_every_pair_under_the_limit_with_its_weight(seed, triangle):
    # triangle: a pair inside a block's diagonal square comes in both orders (weight 1),
    # one after it once (weight 2), so each unordered pair weighs 2 in all (a = a: 1)
    rng = np.random.default_rng(seed)
    left = np.sort(rng.integers(0, 40, int(rng.integers(1, 900))))
    right = left if triangle else np.sort(rng.integers(0, 40, int(rng.integers(1, 900))))
    limit = int(rng.integers(0, 80))
    weight = np.zeros((len(left), len(right)), dtype=np.int64)
    for i0, i1, j0, j1 in pair_blocks.staircase(left, right, limit, triangle):
        weight[i0:i1, j0:j1] += 1
        if triangle:
            weight[i0:i1, max(j0, i1):j1] += 1
    needed = left[:, None] + right[None, :] <= limit
    if triangle:
        weight = weight + weight.T - np.diag(np.diag(weight))
        assert set(np.unique(np.diag(weight))) <= {0, 1}
        assert set(np.unique(weight[~np.eye(len(left), dtype=bool)])) <= {0, 2}
    else:
        assert set(np.unique(weight)) <= {0, 1}
    assert (weight[needed] > 0).all()


@pytest.mark.parametrize("symmetric", [False, True])
def test_reaching_blocks_cover_each_pair_that_can_reach_the_least_s_once(symmetric):
    # every pair under the limit that can reach S >= least within the removals is covered;
    # every covered pair weighs what the triangle gives it (symmetric: 2 for a != b over
    # both orders, 1 for a = a)
    rng = np.random.default_rng(7)
    chosen_staircase = 0
    for _ in range(60):
        n = int(rng.integers(1, 700))
        s, p, r = rng.integers(0, 12, n), rng.integers(0, 8, n), rng.integers(0, 6, n)
        base = s + 2 * r
        order = np.argsort(base, kind="stable")
        left = base[order], s[order], p[order], r[order]
        if symmetric:
            right = left
        else:
            s, p, r = rng.integers(0, 12, n), rng.integers(0, 8, n), rng.integers(0, 6, n)
            order = np.argsort(s + 2 * r, kind="stable")
            right = (s + 2 * r)[order], s[order], p[order], r[order]
        (lb, ls, lp, lr), (rb, rs, rp, rr) = left, right
        limit, least, most_r = (int(rng.integers(5, 30)), int(rng.integers(1, 20)),
                                int(rng.integers(0, 11)))
        blocks = pair_blocks.staircase(lb, rb, limit, symmetric)
        picked = pair_blocks.reaching_blocks(blocks, lb, ls, lp, lr, rb, rs, rp, rr, limit, least,
                                         most_r, symmetric)
        if picked is None:   # the staircase as it is
            picked = [(np.arange(i0, i1), np.arange(j0, j1),
                       np.arange(j0, j1) >= i1 if symmetric else None)
                      for i0, i1, j0, j1 in blocks]
            chosen_staircase += 1
        weight = np.zeros((n, n), dtype=np.int64)
        for rows, cols, twice in picked:
            w = np.ones(len(cols), dtype=np.int64) if twice is None else 1 + twice
            np.add.at(weight, (rows[:, None], cols[None, :]), w[None, :])
        if symmetric:
            weight = weight + weight.T - np.diag(np.diag(weight))
            assert set(np.unique(np.diag(weight))) <= {0, 1}
            off = weight[~np.eye(n, dtype=bool)]
            assert set(np.unique(off)) <= {0, 2}
        else:
            assert set(np.unique(weight)) <= {0, 1}
        needed = (lb[:, None] + rb[None, :] <= limit) & (lr[:, None] + rr[None, :] <= most_r) \
            & (ls[:, None] + rs[None, :] + np.minimum(lp[:, None], rp[None, :]) >= least)
        assert (weight[needed] > 0).all()
    assert 0 < chosen_staircase < 60     # both the cut blocks and the staircase as it is


def test_chunks_cover_each_pair_of_a_block_once_with_its_weight(monkeypatch):
    from gpuqueens.problems.matchsticks import pair_blocks

    rng = np.random.default_rng(5)
    for chunk in (1, 3, 8, 50):
        monkeypatch.setattr(pair_blocks, "CHUNK_PAIRS", chunk)
        for _ in range(20):
            rows = slice(3, 3 + int(rng.integers(1, 12)))
            cols = np.sort(rng.choice(40, size=int(rng.integers(1, 15)), replace=False))
            twice = rng.random(len(cols)) < 0.5
            for block in [(rows, cols, twice), (np.arange(rows.start, rows.stop), slice(0, 9),
                                                None)]:
                r, c, t = block
                expected = sorted((a, b, None if t is None else bool(t[k]))
                                  for a in np.arange(40)[r] for k, b in enumerate(np.arange(40)[c]))
                pieces = list(pair_blocks.chunks([block]))
                assert all(pair_blocks._length(pr) * pair_blocks._length(pc) <= chunk
                           for pr, pc, _ in pieces)
                got = sorted((a, b, None if pt is None else bool(pt[k]))
                             for pr, pc, pt in pieces
                             for a in np.arange(40)[pr] for k, b in enumerate(np.arange(40)[pc]))
                assert got == expected
    assert list(pair_blocks.chunks([(slice(2, 2), slice(0, 5), None),
                                    (np.arange(3), np.arange(0), None)])) == []
