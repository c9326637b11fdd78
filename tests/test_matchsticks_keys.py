"""Packed keys and merging the entries that share one (keys.py), against plain dicts."""

import functools

import numpy as np
import pytest
from fake_cupy import make_fake_cupy

from gpuqueens.problems.matchsticks.keys import (
    U64, KeyLayout, _summed_bit_count, bit_count, merge_by_sorting, merge_equal_keys)



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


@pytest.mark.parametrize("merge", sorted(MERGES))
def test_a_merge_leaves_its_arguments_as_they_were(merge):
    # the NumPy merge zeroes the counts of entries above the fewest R in place: in its copy
    rng = np.random.default_rng(5)
    n = 500
    keys = [rng.integers(0, 8, n).astype(U64), rng.integers(0, 4, n).astype(U64)]
    counts = rng.integers(0, 1000, (n, 2)).astype(U64)
    removed = rng.integers(0, 5, n)
    rows = rng.permutation(n)
    before = [a.copy() for a in (*keys, counts, removed, rows)]
    MERGES[merge](keys, counts, np.array([1009, 1013], dtype=U64), removed, rows)
    for old, now in zip(before, (*keys, counts, removed, rows)):
        assert np.array_equal(old, now)


def test_bit_count_by_fields_equals_numpys():
    rng = np.random.default_rng(6)
    words = np.concatenate([rng.integers(0, 2**63, 2000, dtype=np.uint64) * U64(2)
                            + rng.integers(0, 2, 2000).astype(U64),
                            np.array([0, 1, 2**63, 2**64 - 1], dtype=U64)])
    expected = [bin(int(x)).count("1") for x in words]
    assert _summed_bit_count(words).tolist() == expected
    assert bit_count(np, words).tolist() == expected
    assert _summed_bit_count(words).dtype == np.int64


@pytest.mark.parametrize("widths", [(64,), (64, 15), (64, 64), (40, 64, 3), (1, 1)])
def test_key_order_sorts_as_lexsort(widths):
    # narrow last words take the run-index path, full 64-bit words the lexsort fallback;
    # few distinct values per word make long runs of equal earlier words
    from gpuqueens.problems.matchsticks.keys import key_order

    rng = np.random.default_rng(len(widths) * 100 + widths[-1])
    for size in (1, 2, 1000):
        keys = [(rng.integers(0, 4, size, dtype=U64) << U64(max(width - 2, 1))) |
                rng.integers(0, 2, size, dtype=U64) for width in widths]
        order = key_order(keys)
        assert sorted(order.tolist()) == list(range(size))
        expected = np.lexsort(keys[::-1])
        for word in keys:
            assert (word[order] == word[expected]).all()
