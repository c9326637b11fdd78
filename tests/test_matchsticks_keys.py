"""Packed keys and merging the entries that share one (keys.py), against plain dicts."""

import functools

import numpy as np
import pytest
from fake_cupy import make_fake_cupy

from gpuqueens.problems.matchsticks.keys import U64, KeyLayout, merge_by_sorting, merge_equal_keys



def _merge_on_device(keys, counts, primes, removed=None, rows=None):
    """The merge on the CuPy stand-in's arrays, read back."""
    fake = make_fake_cupy({})
    on = [None if a is None else fake.asarray(a) for a in (removed, rows)]
    out = merge_equal_keys([fake.asarray(k) for k in keys], fake.asarray(counts), primes,
                           *on, xp=fake)
    return [k.get() for k in out[0]], *(a.get() for a in out[1:])


#: The merge as the CPU runs it, and the CuPy path (sorts and cumulative sums) on NumPy
#: arrays and on the stand-in's device arrays.
MERGES = {
    "numpy": merge_equal_keys,
    "by sorting": functools.partial(merge_by_sorting, np),
    "device": _merge_on_device,
}


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


@pytest.mark.parametrize("merge", MERGES)
def test_merge_matches_a_dict(merge):
    merge_equal_keys = MERGES[merge]
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
