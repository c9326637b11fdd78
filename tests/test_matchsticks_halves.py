"""The half sweeps of the centre join, decoded into parts (halves.py)."""

import numpy as np
import pytest

from gpuqueens.problems.matchsticks.halves import MAX_CROSSING_SQUARES, crossing_squares, half_parts
from gpuqueens.problems.matchsticks.sweep import SweepStats


def test_crossing_squares_straddle_the_centre_line():
    for h, w in [(2, 2), (3, 5), (7, 7), (4, 9)]:
        mid = w // 2
        squares = crossing_squares(h, w)
        assert all(c < mid < c + u and c + u <= w and r + u <= h for r, u, c in squares)
        assert len(set(squares)) == len(squares)
    assert len(crossing_squares(7, 7)) == 42 and len(crossing_squares(7, 100)) == 56
    assert len(crossing_squares(8, 8)) == MAX_CROSSING_SQUARES < len(crossing_squares(8, 9))


def test_a_grid_with_more_crossing_squares_than_bits_is_refused():
    primes = np.array([2147483647], dtype=np.uint64)
    with pytest.raises(ValueError, match="cross the centre line"):
        half_parts(8, 9, {0: 0}, primes)


@pytest.mark.parametrize("h, w", [(3, 1), (4, 2), (0, 3)])
def test_the_longer_side_first_is_refused_with_a_clear_error(h, w):
    # it used to fail deep in the sweep with "negative shift count"
    primes = np.array([2147483647], dtype=np.uint64)
    with pytest.raises(ValueError, match="shorter side first"):
        half_parts(h, w, {0: 4}, primes)


def test_even_widths_share_one_side_odd_widths_do_not():
    primes = np.array([2147483647], dtype=np.uint64)
    caps = {q: 30 for q in range(6)}
    stats = SweepStats()
    left, right = half_parts(3, 4, caps, primes, stats=stats)
    assert right is left and stats.max_states >= len(left.r) > 0
    assert stats.steps == 4 * 2 and stats.entries >= stats.max_states
    left, right = half_parts(3, 5, caps, primes)
    assert right is not left and len(right.r) > 0
    # parts are ordered by (H, X, r)
    for side in (left, right):
        key = np.lexsort((side.r, side.hx))
        assert (key == np.arange(len(key))).all()


def _same_parts(a, b):
    for field in ("xbits", "xbits_mirrored", "xwords", "xwords_mirrored", "ybits", "s", "r",
                  "counts", "hx"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None) == (y is None), field
        if x is not None:
            assert type(y) is np.ndarray and x.dtype == y.dtype and np.array_equal(x, y), field
    assert a.yrows == b.yrows


@pytest.mark.parametrize("h,w,top", [(2, 3, 5), (3, 3, 14), (3, 4, 9), (4, 5, 14)])
def test_half_sweeps_on_the_device_arrays_equal_numpys(h, w, top):
    # The stand-in's arrays take the CuPy path (stable sorts and cumulative sums instead
    # of lexsort and reduceat, the parts copied back): the parts must be NumPy's, bit for bit.
    from fake_cupy import make_fake_cupy

    fake = make_fake_cupy({})
    primes = np.array([2147483647, 2147483629], dtype=np.uint64)
    caps = {q: (2 * h * w + 3 - q) // 2 for q in range(top + 1)}
    for host, device in zip(half_parts(h, w, caps, primes), half_parts(h, w, caps, primes, xp=fake)):
        _same_parts(host, device)


@pytest.mark.parametrize("h,w,removed,squares", [(3, 3, 6, 2), (3, 4, 8, 1), (4, 5, 12, 3)])
def test_exact_half_sweeps_on_the_device_arrays_equal_numpys(h, w, removed, squares):
    from fake_cupy import make_fake_cupy

    from gpuqueens.problems.matchsticks.halves import exact_half_parts

    fake = make_fake_cupy({})
    primes = np.array([2147483647], dtype=np.uint64)
    host = exact_half_parts(h, w, removed, squares, primes)
    device = exact_half_parts(h, w, removed, squares, primes, xp=fake)
    for a, b in zip(host, device):
        _same_parts(a, b)
        assert len(a.r) > 0
