"""The NumPy search against an independent brute force and the published sequences.

The searches count weights (3 × solutions, docs/nqueens-method.md) and the symmetric
solutions; Burnside's lemma turns them into the total and the number of classes.
"""

import itertools

import numpy as np
import pytest

from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu, leaf_weight
from gpuqueens.problems.nqueens.plan import InconsistentCountError, combine
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes, expand_prefixes
from gpuqueens.problems.nqueens.symmetric import count_symmetric
from oeis import total, unique


def brute_force_solutions(n):
    """Every solution as a tuple of columns, by plain backtracking (no bitboards, no symmetry)."""
    solutions, cols = [], []

    def safe(col):
        row = len(cols)
        return all(c != col and abs(c - col) != row - r for r, c in enumerate(cols))

    def place():
        if len(cols) == n:
            solutions.append(tuple(cols))
            return
        for col in range(n):
            if safe(col):
                cols.append(col)
                place()
                cols.pop()

    place()
    return solutions


def symmetry_images(solution):
    """The 8 images of a solution under rotations and reflections, as column tuples."""
    n = len(solution)
    cells = [(r, c) for r, c in enumerate(solution)]
    images = []
    for turns, flip in itertools.product(range(4), (False, True)):
        moved = cells
        for _ in range(turns):
            moved = [(c, n - 1 - r) for r, c in moved]
        if flip:
            moved = [(r, n - 1 - c) for r, c in moved]
        images.append(tuple(c for _, c in sorted(moved)))
    return images


def counts_of(n, weight):
    """(total, unique) from a weight over all prefixes and the symmetric search."""
    return combine({"u0": (weight, 0, 0), "sym": (0, *count_symmetric(n))})


@pytest.mark.parametrize("n", range(4, 10))
def test_all_marks_match_brute_force(n):
    solutions = brute_force_solutions(n)
    classes = {min(symmetry_images(s)) for s in solutions}
    for mark in range(2, n):
        weight = count_prefixes_cpu(enumerate_prefixes(n, mark))
        assert weight == 3 * len(solutions)
        assert counts_of(n, weight) == (len(solutions), len(classes))


@pytest.mark.parametrize("n", range(4, 15))
def test_published_sequences(n):
    assert counts_of(n, count_prefixes_cpu(enumerate_prefixes(n))) == (total(n), unique(n))


def test_n15_published():
    assert counts_of(15, count_prefixes_cpu(enumerate_prefixes(15))) == (total(15), unique(15))


@pytest.mark.parametrize("n, mark", [(8, 3), (10, 4), (11, 6), (12, 5)])
def test_per_prefix_counts_add_up_and_survive_expansion(n, mark):
    prefixes = enumerate_prefixes(n, mark)
    weights = count_prefixes_cpu(prefixes, per_prefix=True)
    assert int(weights.sum()) == 3 * total(n)
    # a random subset counted alone gives exactly its share
    rng = np.random.default_rng(n * 100 + mark)
    pick = np.sort(rng.choice(len(prefixes), size=len(prefixes) // 3, replace=False))
    subset = prefixes.take(pick)
    assert count_prefixes_cpu(subset) == int(weights[pick].sum())
    # expanding the subset deeper does not change its count
    assert count_prefixes_cpu(expand_prefixes(subset, n - 1)) == count_prefixes_cpu(subset)


def passes_the_rules(pos):
    """Whether a full board is searched (docs/nqueens-method.md), read off the board directly.

    Returns the leaf weight it is counted with, or 0 if the search never reaches it.
    """
    n = len(pos)
    row_of = {c: r for r, c in enumerate(pos)}
    if pos[0] == 0:  # case C: row 1 at B1, column 1's queen below row B1
        return 24 if row_of[1] > pos[1] else 0
    b1, b2 = pos[0], n - 1 - pos[0]
    corners = {pos[0], pos[n - 1]} & {0, n - 1}
    if corners or b1 >= b2:
        return 0
    edge_distances = [min(b1, n - 1 - b1), min(pos[n - 1], n - 1 - pos[n - 1]),
                      min(row_of[0], n - 1 - row_of[0]), min(row_of[n - 1], n - 1 - row_of[n - 1])]
    if min(edge_distances) < b1:
        return 0
    return int(leaf_weight(edge_distances.count(b1)))


@pytest.mark.parametrize("n", [5, 6, 7, 8, 9])
def test_leaf_weights_add_up_to_each_class_size(n):
    """For every class, the weights of its members that the search reaches add up to 3 × its size."""
    seen = set()
    for solution in brute_force_solutions(n):
        images = set(symmetry_images(solution))
        if min(images) in seen:
            continue
        seen.add(min(images))
        assert sum(passes_the_rules(image) for image in images) == 3 * len(images), solution


def test_the_rule_reading_is_not_trivial():
    # the check above would pass vacuously if no image ever passed, or if every one did
    assert passes_the_rules((1, 3, 0, 2)) == 6  # n=4, all four edge queens at distance 1
    assert passes_the_rules((2, 0, 3, 1)) == 0  # its mirror image: top queen at B2
    assert passes_the_rules((0, 2, 4, 1, 3)) == 24  # n=5, case C
    assert passes_the_rules((0, 3, 1, 4, 2)) == 0  # its transpose


def fixed_by_turns(n):
    """(F180, F90) by brute force over every solution."""
    f180 = f90 = 0
    for s in brute_force_solutions(n):
        images = symmetry_images(s)  # turns 0..3, each then flipped
        f180 += images[4] == s
        f90 += images[2] == s
    return f180, f90


@pytest.mark.parametrize("n", range(1, 11))
def test_symmetric_search_matches_brute_force(n):
    assert count_symmetric(n) == fixed_by_turns(n)


def test_combine_refuses_inconsistent_results():
    good = {"u0": (3 * 92 - 24, 0, 0), "u1": (24, 0, 0), "sym": (0, 4, 0)}
    assert combine(good) == (92, 12)
    with pytest.raises(InconsistentCountError):
        combine({"u0": (3 * 92 + 1, 0, 0), "sym": (0, 4, 0)})  # not a multiple of 3
    with pytest.raises(InconsistentCountError):
        combine({"u0": (3 * 92, 0, 0), "sym": (0, 5, 0)})  # Burnside's sum not a multiple of 8


def test_empty_prefix_set_counts_zero():
    prefixes = enumerate_prefixes(8, 4).take(np.array([], dtype=int))
    assert count_prefixes_cpu(prefixes) == 0
    assert count_prefixes_cpu(prefixes, per_prefix=True).shape == (0,)


def test_take_accepts_lists_masks_and_slices():
    prefixes = enumerate_prefixes(8, 3)
    assert len(prefixes.take([])) == 0
    assert len(prefixes.take([0, 2])) == 2
    assert len(prefixes.take(np.arange(len(prefixes)) % 2 == 0)) == (len(prefixes) + 1) // 2
    assert prefixes.take(slice(1, 4)).cols.shape == (3, 3)
