"""The centre join's pairing of one round (pairing.py): rounds solved pattern by pattern."""

import pytest

from gpuqueens.problems.matchsticks.bruteforce import brute_table
from gpuqueens.problems.matchsticks.grid import mirror_pattern, square_count, stick_count
from gpuqueens.problems.matchsticks.pairing import (JoinStats, centre_patterns, join_centre,
                                                    prepare_round)
from gpuqueens.problems.matchsticks.table import merge_fewest


def whole_round(h, w, caps, level):
    """One round, every centre pattern joined here: ``{S: (fewest R, count)}``."""
    rnd = prepare_round(h, w, caps, level)
    found, stats = {}, JoinStats()
    for C in centre_patterns(h):
        merge_fewest(found, join_centre(rnd, C, stats))
    return found, stats


def test_centre_patterns_are_one_of_each_mirror_pair():
    for h in range(1, 8):
        patterns = centre_patterns(h)
        assert len({min(c, mirror_pattern(c, h)) for c in range(1 << h)}) == len(patterns)
        assert all(mirror_pattern(c, h) >= c for c in patterns)


def test_a_round_with_every_removal_allowed_is_the_brute_force():
    for h, w in [(1, 3), (2, 3), (2, 4), (3, 3)]:
        everything = range(square_count(h, w) + 1)
        sticks = stick_count(h, w)
        found, stats = whole_round(h, w, {q: sticks for q in everything}, 3 * sticks)
        assert [(q, *found.get(q, (None, 0))) for q in everything] == brute_table(h, w, everything)
        assert stats.pairs >= stats.hits > 0



def test_a_round_above_s_0_decodes_only_pairs_with_enough_squares():
    # a round whose least S is above 0 drops the pairs with fewer squares before decoding
    # them: the same answers as brute force, from fewer hits than a round that asks S = 0
    fewer = []
    for h, w in [(1, 3), (2, 3), (2, 4), (3, 3)]:
        top, sticks = square_count(h, w), stick_count(h, w)
        high = range(top // 3, top + 1)
        found, stats = whole_round(h, w, dict.fromkeys(high, sticks), 3 * sticks)
        assert [(q, *found.get(q, (None, 0))) for q in high] == brute_table(h, w, high)
        _, every = whole_round(h, w, dict.fromkeys(range(top + 1), sticks), 3 * sticks)
        assert 0 < stats.hits <= every.hits
        fewer.append(stats.hits < every.hits)
    assert any(fewer)

def test_a_round_at_a_level_past_4096_counts_no_incompatible_pair():
    # Incompatible centre horizontals add a penalty that must exceed the level; a fixed
    # 4096 let such pairs through once S + 2R could pass it (long grids).
    h, w = 2, 3
    everything = range(square_count(h, w) + 1)
    found, _ = whole_round(h, w, {q: stick_count(h, w) for q in everything}, 5000)
    assert [(q, *found.get(q, (None, 0))) for q in everything] == brute_table(h, w, everything)


@pytest.mark.parametrize("h, w, level", [(4, 4, 30), (4, 5, 34), (5, 5, 44)])
def test_groups_from_the_parts_within_reach_are_the_groups_within_reach(h, w, level):
    # join_centre builds a side's groups only from parts with s' + 2r <= most: they must be
    # exactly the groups of all parts whose base is <= most, with the same counts
    from gpuqueens.problems.matchsticks import pairing

    rnd = pairing.prepare_round(h, w, {q: (level - q) // 2 for q in range(10)}, level)
    for C in pairing.centre_patterns(h):
        s = rnd.right.squares_with_centre(C)
        every = pairing._groups(rnd.right, s, 9, rnd.primes, 1 << 40)
        for most in sorted(set(every.base.tolist()))[::3]:
            kept = pairing._groups(rnd.right, s, 9, rnd.primes, most)
            within = every.base <= most
            assert 0 < len(kept.H) == within.sum()
            key = lambda g: sorted(zip(g.H.tolist(), g.X.tolist(), g.s.tolist(), g.r.tolist(),
                                       map(tuple, g.counts.tolist())))
            assert key(kept) == key(pairing._Groups(*(a[within] for a in (
                every.H, every.s, every.r, every.base, every.X, every.counts))))


@pytest.mark.parametrize("chunk", [1, 5, 64])
def test_products_in_small_chunks_give_the_same_rounds(monkeypatch, chunk):
    # chunks of a pair, of a few pairs (rows and columns cut) and of a few rows each: the
    # same answers as brute force, with and without the cut of a round above S = 0
    from gpuqueens.problems.matchsticks import pair_blocks

    monkeypatch.setattr(pair_blocks, "CHUNK_PAIRS", chunk)
    for h, w in [(2, 3), (2, 4), (3, 3)]:
        top, sticks = square_count(h, w), stick_count(h, w)
        for asked in (range(top + 1), range(top // 3, top + 1)):
            found, stats = whole_round(h, w, dict.fromkeys(asked, sticks), 3 * sticks)
            assert [(q, *found.get(q, (None, 0))) for q in asked] == brute_table(h, w, asked)

