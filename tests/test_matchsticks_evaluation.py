"""Problem 1 by evaluation points (the kernel's NumPy twin) against the coefficient transfer."""

import math
import random

import numpy as np
import pytest
from oeis import NO_LEAF_GRID

from gpuqueens.problems.matchsticks import evaluation as ev
from gpuqueens.problems.matchsticks.interpolation import (PRIME_LIMIT, coefficients, evaluation_primes,
                                                          points, root_of_unity)
from gpuqueens.problems.matchsticks.transfer import count_by_removed

GRIDS = [(1, 1), (1, 2), (2, 1), (1, 6), (2, 2), (2, 3), (3, 2), (2, 5), (3, 3), (3, 4), (4, 3),
         (4, 4), (3, 7), (4, 5), (5, 5), (5, 6), (6, 6), (2, 9)]


@pytest.mark.parametrize("m,n", GRIDS)
def test_whole_distribution_equals_the_coefficient_transfer(m, n):
    assert ev.count_by_removed_evaluated(m, n) == count_by_removed(m, n)


@pytest.mark.parametrize("top", [0, 1, 7, 30])
def test_truncated_distributions(top):
    # fewer primes: only C(E, R) for R <= top must be below their product
    assert ev.count_by_removed_evaluated(4, 6, top) == count_by_removed(4, 6, top)


def test_lane_batches_do_not_change_the_result():
    whole = count_by_removed(3, 5)
    for batch in (8, 24, 100):
        assert ev.count_by_removed_evaluated(3, 5, lanes_per_batch=batch) == whole
    for tile in (1, 2, 3):  # any pass length gives the same sweep
        sweep = lambda h, w, lanes, t=tile: ev.sweep_values(h, w, lanes, t)  # noqa: E731
        assert ev.count_by_removed_evaluated(3, 5, sweep=sweep) == whole


@pytest.mark.parametrize("points_per_column", sorted(NO_LEAF_GRID))
def test_totals_beyond_64_bits_match_oeis(points_per_column):
    # the last published term of A301976, A320097, A320099: (k-1) × (len-1) squares
    published = NO_LEAF_GRID[points_per_column]
    squares = (points_per_column - 1, len(published) - 1)
    assert sum(ev.count_by_removed_evaluated(*squares)) == published[-1] > 2**64


def _random_lanes(rng, count, p_choices=None):
    primes = p_choices or evaluation_primes(7, 2**600)
    ps = [rng.choice(primes) for _ in range(count)]
    return ev.lane_words(ps, [rng.randrange(p) for p in ps])


def _reference_step(v, h, row, down, right, lanes):
    """The step with every value reduced, written from the rule (l + u + d + r != 1)."""
    p = [int(q) for q in lanes[:, 0]]
    x = [int(q) for q in lanes[:, 1]]
    out = np.zeros_like(v)
    bit = 1 << (row + 1)
    for state in range(v.shape[0]):
        if state & 1 or state & bit:
            continue
        for r in (0, 1) if right else (0,):
            for d in (0, 1) if down else (0,):
                target = state | (bit if r else 0) | d
                removed = (down and not d) + (right and not r)
                for lft in (0, 1):
                    for up in (0, 1):
                        if lft + up + d + r == 1:
                            continue
                        source = state | (bit if lft else 0) | up
                        for lane in range(v.shape[1]):
                            term = int(v[source, lane]) * pow(x[lane], removed, p[lane])
                            out[target, lane] = (int(out[target, lane]) + term) % p[lane]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_lazy_step_is_congruent_and_below_2p(seed):
    rng = random.Random(seed)
    h = rng.randrange(1, 4)
    lanes = _random_lanes(rng, 3)
    p = lanes[:, 0].astype(np.uint64)
    v = np.array([[rng.randrange(2 * int(q)) for q in p] for _ in range(1 << (h + 2))], dtype=np.uint64)
    for row in range(h + 1):
        for down, right in ((row < h, True), (row < h, False)):
            got = ev.step(v, h, row, down, right, lanes)
            assert np.all(got < 2 * p)
            assert np.array_equal(got % p, _reference_step(v, h, row, down, right, lanes))


def _full_sweep_value(h, w, lanes):
    """P(x) by the whole sweep, every column, no join: the value of the empty frontier."""
    v = np.zeros((1 << (h + 2), len(lanes)), dtype=np.uint64)
    v[0] = 1
    for j in range(w + 1):
        for i in range(h + 1):
            v = ev.step(v, h, i, i < h, j < w, lanes)
    return v[0] % lanes[:, 0].astype(np.uint64)


@pytest.mark.parametrize("h,w", [(1, 1), (1, 2), (2, 3), (2, 4), (3, 3), (3, 6), (4, 5)])
def test_mirror_join_equals_the_whole_sweep(h, w):
    lanes = _random_lanes(random.Random(h * 10 + w), 5)
    assert np.array_equal(ev.sweep_values(h, w, lanes), _full_sweep_value(h, w, lanes))


@pytest.mark.parametrize("h,w,tile", [(1, 1, 10), (3, 4, 2), (4, 7, 3), (6, 6, 10), (2, 2, 1)])
def test_sweep_plan_covers_the_half_sweep_in_order(h, w, tile):
    plan = ev.sweep_plan(h, w, tile)
    rows, steps = h + 1, []
    for one in plan.passes:
        assert 1 <= one.steps <= min(tile, rows)
        steps += [((one.first_row + k) % rows, one.right_mask >> k & 1) for k in range(one.steps)]
    assert steps == [(i, 1) for _ in range(w // 2 + 1) for i in range(rows)]  # j < w: a right stick
    if w % 2:
        assert plan.boundary is None
    else:
        assert sum(q.steps for q in plan.passes[:plan.boundary]) == (w // 2) * rows


def test_primes_and_roots_of_unity():
    for n in (5, 13, 221, 841):
        primes = evaluation_primes(n, 2**200)
        assert all(p % n == 1 and p < PRIME_LIMIT for p in primes) and math.prod(primes) > 2**200
        p = primes[0]
        pts = points(p, n)
        assert len(set(pts)) == n and pow(root_of_unity(p, n), n, p) == 1


def test_interpolation_recovers_random_polynomials():
    rng = random.Random(3)
    for n in (1, 2, 7, 60):
        p = evaluation_primes(n, 1)[0]
        w = root_of_unity(p, n)
        coeffs = [rng.randrange(p) for _ in range(n)]
        values = [sum(c * pow(x, k, p) for k, c in enumerate(coeffs)) % p for x in points(p, n)]
        assert coefficients(values, p, w, n).tolist() == coeffs


def test_check_primes_agree_and_catch_a_wrong_lane():
    assert ev.count_by_removed_evaluated(3, 4, check_primes=2) == count_by_removed(3, 4)

    def one_wrong_lane(h, w, lanes):
        values = ev.sweep_values(h, w, lanes)
        values[-9] = (values[-9] + 1) % lanes[-9, 0]  # a lane of the last (check) prime
        return values

    with pytest.raises(ArithmeticError, match="check prime"):
        ev.count_by_removed_evaluated(3, 4, sweep=one_wrong_lane, check_primes=1)
