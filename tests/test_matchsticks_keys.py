"""Packed keys and merging the entries that share one (keys.py), against plain dicts."""

import numpy as np

from gpuqueens.problems.matchsticks.keys import U64, KeyLayout, merge_equal_keys


def test_fields_do_not_straddle_words_and_round_trip():
    layout = KeyLayout(7, 7, max_squares=140, max_removed=112)
    assert layout.words >= 2
    assert all(f.shift + f.width <= 64 for f in layout.fields.values())
    rng = np.random.default_rng(1)
    keys = [np.zeros(50, dtype=U64) for _ in range(layout.words)]
    values = {}
    for name, f in layout.fields.items():
        values[name] = rng.integers(0, 1 << f.width, 50, dtype=np.uint64)
        layout.put(keys, name, values[name])
    for name in layout.fields:
        assert (layout.get(keys, name) == values[name]).all()


def test_merge_matches_a_dict():
    rng = np.random.default_rng(7)
    primes = np.array([2147483647, 2147483629], dtype=U64)
    n = 2000
    keys = [rng.integers(0, 5, n).astype(U64), rng.integers(0, 7, n).astype(U64)]
    removed = rng.integers(0, 4, n)
    counts = rng.integers(0, 2147483629, (n, 2)).astype(U64)
    def add(x, y):
        return tuple((a + b) % int(p) for a, b, p in zip(x, y, primes))

    summed, fewest = {}, {}
    for a, b, r, c in zip(*keys, removed, counts.tolist()):
        summed[a, b] = add(summed.get((a, b), (0, 0)), c)
        if (a, b) not in fewest or r < fewest[a, b][0]:
            fewest[a, b] = (r, tuple(c))
        elif r == fewest[a, b][0]:
            fewest[a, b] = (r, add(fewest[a, b][1], c))
    merged, added = merge_equal_keys(keys, counts, primes)
    got = {(a, b): tuple(c) for a, b, c in zip(*merged, added.tolist())}
    assert got == summed and list(got) == sorted(got)
    merged, low, kept = merge_equal_keys(keys, counts, primes, removed=removed)
    assert {(a, b): (r, tuple(c)) for a, b, r, c in zip(*merged, low, kept.tolist())} == fewest
    rows = rng.permutation(n)
    merged, low, kept = merge_equal_keys([k[rows] for k in keys], counts, primes,
                                         removed=removed[rows], rows=rows)
    assert {(a, b): (r, tuple(c)) for a, b, r, c in zip(*merged, low, kept.tolist())} == fewest
