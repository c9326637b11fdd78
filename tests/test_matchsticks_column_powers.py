"""Problem 1 by powers of the column transfer against the sweep, brute force and closed forms."""

from __future__ import annotations

import random

import pytest

import gpuqueens
from gpuqueens.problems.matchsticks import api
from gpuqueens.problems.matchsticks.bruteforce import brute_counts
from gpuqueens.problems.matchsticks.column_powers import count_by_column_powers, power_seconds
from gpuqueens.problems.matchsticks.costs import transfer_cost
from gpuqueens.problems.matchsticks.grid import stick_count
from gpuqueens.problems.matchsticks.transfer import count_by_removed


@pytest.mark.parametrize("m, n", [(1, 1), (1, 2), (2, 2), (1, 4), (2, 3), (3, 3)])
def test_every_count_equals_brute_force(m, n):
    assert count_by_column_powers(m, n, stick_count(m, n)) == brute_counts(m, n)


def test_long_grids_equal_the_sweep():
    rng = random.Random(20261123)
    for _ in range(12):
        h = rng.randint(1, 4)
        w = rng.randint(h, 70 if h < 3 else 20)
        top = rng.randint(0, min(12, stick_count(h, w)))
        assert count_by_column_powers(h, w, top) == count_by_removed(h, w, top), (h, w, top)


@pytest.mark.parametrize("n", [2, 3, 10, 255, 256, 10**7])
def test_one_stick_on_a_strip(n):
    # 1×n: only sticks whose two ends both have three sticks may go: the n - 1 inner
    # verticals and the 2(n - 2) horizontals away from the corners.
    assert count_by_column_powers(1, n, 1) == [1, 3 * n - 5]


def test_long_strip_goes_by_powers_in_the_public_call(monkeypatch):
    def no_sweep(*args, **kwargs):
        raise AssertionError("the sweep ran on a 1×10^7 grid")

    monkeypatch.setattr(api, "count_by_removed", no_sweep)
    assert gpuqueens.matchsticks(1, 10**7, removed=1, backend="cpu") == 3 * 10**7 - 5
    assert gpuqueens.matchsticks(10**7, 1, removed=1, backend="cpu") == 3 * 10**7 - 5


@pytest.mark.parametrize("m, n", [(1, 1), (1, 2), (2, 2), (1, 4), (2, 3), (3, 3)])
def test_counts_by_sticks_kept_equal_brute_force(m, n):
    assert count_by_column_powers(m, n, stick_count(m, n), kept=True) == brute_counts(m, n)[::-1]


def test_counts_by_sticks_kept_on_long_grids_equal_the_sweep():
    rng = random.Random(20261124)
    for _ in range(10):
        h = rng.randint(1, 3)
        w = rng.randint(h, 40 if h < 3 else 12)
        sticks = stick_count(h, w)
        kept = rng.randint(0, min(14, sticks))
        by_removed = count_by_removed(h, w, sticks)
        assert count_by_column_powers(h, w, kept, kept=True) == by_removed[::-1][: kept + 1], (h, w, kept)


def test_few_sticks_kept_go_by_powers_of_kept_sticks_in_the_public_call(monkeypatch):
    # 7 sticks kept of a 1×5000 strip: two adjacent unit squares (4999 ways); truncated at
    # R = E - 7 this took minutes
    def no_sweep(*args, **kwargs):
        raise AssertionError("counted by sticks removed")

    monkeypatch.setattr(api, "count_by_removed", no_sweep)
    monkeypatch.setattr(api, "_way_by_removed", no_sweep)
    sticks = stick_count(1, 5000)
    assert gpuqueens.matchsticks(1, 5000, removed=sticks - 7, backend="cpu") == 4999
    assert gpuqueens.matchsticks(5000, 1, removed=sticks - 7, backend="cpu") == 4999
    assert gpuqueens.matchsticks(1, 5000, removed=sticks - 5, backend="cpu") == 0


@pytest.mark.parametrize("h, w, ways", [(1, 200, {"sweep", "powers"}), (2, 80, {"sweep", "powers"}),
                                        (2, 9, {"sweep"})])
def test_few_sticks_kept_agree_with_the_whole_distribution(h, w, ways, monkeypatch):
    # the R above E/2 with at most 40 sticks kept, counted by sticks kept (by the sweep or
    # by column powers, whichever is the cheaper) once more than 4 are kept
    counts = gpuqueens.matchstick_counts(h, w, backend="cpu")
    sticks = stick_count(h, w)
    used = set()

    def watch(name, count):
        def watched(*args, kept=False, **options):
            used.add(name if kept else f"{name} by R")
            return count(*args, kept=kept, **options)
        monkeypatch.setattr(api, count.__name__, watched)

    watch("sweep", api.count_by_removed)
    watch("powers", api.count_by_column_powers)
    for removed in range(max(sticks // 2 + 1, sticks - 40), sticks + 1):
        assert gpuqueens.matchsticks(h, w, removed=removed, backend="cpu") == counts[removed], \
            (h, w, removed)
    assert used == ways


def test_square_grids_and_whole_distributions_stay_on_the_sweep():
    for h, w, top in [(6, 6, 2), (6, 100, 3), (2, 40, 130), (3, 300, 1000)]:
        assert power_seconds(h, w, top) > transfer_cost(h, w, top, "cpu").seconds, (h, w, top)


def test_few_sticks_kept_on_a_square_grid_go_by_the_sweep_of_kept_sticks(monkeypatch):
    # 10×10 (short side beyond column powers): K <= 12 kept by the CPU sweep truncated at
    # K, against the whole distribution; never the sweep truncated at R
    whole = gpuqueens.matchstick_counts(10, 10, backend="cpu")
    sticks = stick_count(10, 10)
    truncated_at = []
    by_removed = api.count_by_removed

    def watched(m, n, top=None, **options):
        truncated_at.append((top, options.get("kept", False)))
        return by_removed(m, n, top, **options)

    monkeypatch.setattr(api, "count_by_removed", watched)
    for kept in range(5, 13):
        assert gpuqueens.matchsticks(10, 10, removed=sticks - kept, backend="cpu") == whole[sticks - kept]
    assert truncated_at == [(kept, True) for kept in range(5, 13)]
