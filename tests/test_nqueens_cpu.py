"""The NumPy search against an independent brute force and the published sequences."""

import itertools

import numpy as np
import pytest

from gpuqueens.problems.nqueens.cpu import classify_leaves, count_prefixes_cpu
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes, expand_prefixes
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


@pytest.mark.parametrize("n", range(4, 10))
def test_all_marks_match_brute_force(n):
    solutions = brute_force_solutions(n)
    classes = {min(symmetry_images(s)) for s in solutions}
    for mark in range(2, n):
        assert count_prefixes_cpu(enumerate_prefixes(n, mark)) == (len(solutions), len(classes))


@pytest.mark.parametrize("n", range(4, 15))
def test_published_sequences(n):
    assert count_prefixes_cpu(enumerate_prefixes(n)) == (total(n), unique(n))


def test_n15_published():
    assert count_prefixes_cpu(enumerate_prefixes(15)) == (total(15), unique(15))


@pytest.mark.parametrize("n, mark", [(8, 3), (10, 4), (11, 6), (12, 5)])
def test_per_prefix_counts_add_up_and_survive_expansion(n, mark):
    prefixes = enumerate_prefixes(n, mark)
    totals, uniques = count_prefixes_cpu(prefixes, per_prefix=True)
    assert (int(totals.sum()), int(uniques.sum())) == (total(n), unique(n))
    # a random subset counted alone gives exactly its share
    rng = np.random.default_rng(n * 100 + mark)
    pick = np.sort(rng.choice(len(prefixes), size=len(prefixes) // 3, replace=False))
    subset = prefixes.take(pick)
    assert count_prefixes_cpu(subset) == (int(totals[pick].sum()), int(uniques[pick].sum()))
    # expanding the subset deeper does not change its count
    assert count_prefixes_cpu(expand_prefixes(subset, n - 1)) == count_prefixes_cpu(subset)


@pytest.mark.parametrize("n", [6, 7, 8, 9])
def test_class_sizes_match_orbits(n):
    """Every solution's orbit size equals the class size classify_leaves gives its representative."""
    for solution in brute_force_solutions(n):
        images = set(symmetry_images(solution))
        # the lexicographically smallest rotation is kept; the others are refused
        sizes = classify_leaves(np.array([solution]))
        rotations = symmetry_images(solution)[0::2]  # turns 0..3 without flip
        if solution == min(rotations):
            assert sizes[0] == len(images)
        else:
            assert sizes[0] == 0


def test_empty_prefix_set_counts_zero():
    prefixes = enumerate_prefixes(8, 4).take(np.array([], dtype=int))
    assert count_prefixes_cpu(prefixes) == (0, 0)
    totals, uniques = count_prefixes_cpu(prefixes, per_prefix=True)
    assert totals.shape == uniques.shape == (0,)


def test_take_accepts_lists_masks_and_slices():
    prefixes = enumerate_prefixes(8, 3)
    assert len(prefixes.take([])) == 0
    assert len(prefixes.take([0, 2])) == 2
    assert len(prefixes.take(np.arange(len(prefixes)) % 2 == 0)) == (len(prefixes) + 1) // 2
    assert prefixes.take(slice(1, 4)).cols.shape == (3, 3)
