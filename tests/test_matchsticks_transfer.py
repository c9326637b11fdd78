"""Problem 1 (the transfer matrix) against the brute force, symmetry and the seed's numbers."""

import functools

import pytest
from oeis import NO_LEAF_GRID

from gpuqueens.problems.matchsticks.bruteforce import brute_counts
from gpuqueens.problems.matchsticks.evaluation import count_by_removed_evaluated
from gpuqueens.problems.matchsticks.transfer import count_by_removed, residues_by_removed, state_count

SMALL = [(1, 1), (1, 2), (1, 5), (2, 2), (2, 3), (3, 2), (2, 4), (3, 3), (1, 7)]


@functools.lru_cache(maxsize=None)
def brute(m, n):
    return brute_counts(m, n)


@pytest.mark.parametrize("m,n", SMALL)
def test_matches_brute_force(m, n):
    assert count_by_removed(m, n) == brute(m, n)


@pytest.mark.parametrize("m,n", [(4, 2), (7, 1), (3, 2)])
def test_transposed_grids_match_the_brute_force_of_the_grid_as_drawn(m, n):
    # the transfer turns every grid its short side first; the brute force does not
    assert count_by_removed(m, n) == brute(n, m)


def test_truncation_agrees_with_full_distribution():
    full = count_by_removed(4, 5)
    for top in (0, 3, 11, 49):
        assert count_by_removed(4, 5, top) == full[: top + 1]


def test_ten_by_ten_first_terms_and_beyond_64_bits():
    counts = count_by_removed(10, 10, 16)
    assert counts[:5] == [1, 212, 22278, 1547004, 79847833]  # the seed's table
    # past 2^64: checked by the second method (evaluation points and interpolation)
    assert counts[13] == count_by_removed_evaluated(10, 10, 13)[13] == 135871476036610693224 > 2**64


def test_seed_mt231_rows():
    # Seed table MT231: 4×4 R=9..11 and 5×5 R=7, R=9 as printed; its 5×5 R=8 row repeats
    # the R=9 value (typo): the right value is 360504625.
    assert count_by_removed(4, 4)[9:12] == [4975368, 7082522, 8502064]
    assert count_by_removed(5, 5)[7:10] == [78494904, 360504625, 1382703980]


@pytest.mark.parametrize("points", sorted(NO_LEAF_GRID))
def test_totals_match_published_no_leaf_subgraph_counts(points):
    # Summed over R, the valid configurations of an (k-1)×(n-1) grid of squares are the
    # subgraphs of the k×n grid graph with no vertex of degree 1 (OEIS, see tests/oeis.py);
    # the later terms pass 2^64.
    published = NO_LEAF_GRID[points]
    ours = [sum(count_by_removed(points - 1, n - 1)) for n in range(2, len(published) + 1)]
    assert ours == published[1:]


def test_single_prime_residues_are_reduced():
    p = 1000003
    residues = residues_by_removed(3, 3, 25, p)
    assert all(0 <= int(v) < p for v in residues)
    assert [int(v) for v in residues] == [c % p for c in brute(3, 3)]


def test_state_count():
    assert state_count(10, 4) == 1 << 6


# -- progress over the sweeps (problem 1 takes minutes from 12×12 on the CPU) ------------

def test_column_work_is_reported_once_per_column():
    from gpuqueens.problems.matchsticks.transfer import column_work

    reported = []
    plain = residues_by_removed(2, 3, 18, 1_000_003)
    with_bar = residues_by_removed(2, 3, 18, 1_000_003, on_column=reported.append)
    assert (plain == with_bar).all()
    assert reported == column_work(2, 3, 18) and len(reported) == 4
    assert column_work(2, 3, 3)[-1] == 3 * 3     # R alive is capped by the length asked


def test_counts_draw_a_bar_only_when_asked(capsys):
    pytest.importorskip("tqdm")
    import re

    import gpuqueens

    quiet = gpuqueens.matchstick_counts(3, 4, backend="cpu", progress=False)
    assert capsys.readouterr().err == ""
    shown = gpuqueens.matchstick_counts(3, 4, backend="cpu", progress=True)
    err = capsys.readouterr().err
    done = re.findall(r"(\d+)/(\d+) units", err)[-1]
    # one sweep of 5 point columns per prime, all of them done
    assert "3×4 by R" in err and "100%" in err and done[0] == done[1] and int(done[0]) % 5 == 0
    assert shown == quiet
    assert gpuqueens.matchsticks(4, 3, removed=5, backend="cpu", progress=True) == quiet[5]
    assert "3×4 by R" in capsys.readouterr().err
    with pytest.raises(TypeError, match="progress"):
        gpuqueens.matchstick_counts(3, 4, backend="cpu", progress="yes")


def test_evaluation_batches_draw_a_bar(capsys):
    pytest.importorskip("tqdm")
    values = count_by_removed_evaluated(3, 3, lanes_per_batch=8, progress=True)
    err = capsys.readouterr().err
    assert values == count_by_removed(3, 3)
    assert "3×3 by R" in err and "100%" in err


@pytest.mark.parametrize("m, n", [(1, 1), (2, 2), (1, 4), (2, 3), (3, 3)])
def test_counts_by_sticks_kept_equal_brute_force(m, n):
    assert count_by_removed(m, n, kept=True) == brute_counts(m, n)[::-1]


@pytest.mark.parametrize("h, w, top", [(4, 5, 9), (6, 6, 14), (5, 9, 0), (3, 7, 60)])
def test_counts_by_sticks_kept_are_the_counts_by_removed_from_the_other_end(h, w, top):
    whole = count_by_removed(h, w)
    assert count_by_removed(h, w, top, kept=True) == whole[::-1][: top + 1]
    assert count_by_removed(w, h, top, kept=True) == whole[::-1][: top + 1]
