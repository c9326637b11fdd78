"""The round a process keeps for its units (round_cache.py): one build per round, shared by
threads, replaced by the next round, forgotten when idle or cleared."""

import threading
import time

import pytest

from gpuqueens.problems.matchsticks import exact_join, round_cache, table
from gpuqueens.problems.matchsticks.round_cache import RoundCache


def _counting_cache():
    built, forgotten = [], []

    def build(*key):
        built.append(key)
        return {"key": key}

    return RoundCache(build, lambda replaced: forgotten.append((len(built), replaced))), \
        built, forgotten


def _wait_until(condition, seconds=5.0):
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.01)
    return condition()


def test_one_build_per_round_and_the_next_round_replaces_it():
    cache, built, forgotten = _counting_cache()
    for _ in range(3):
        with cache.using(4, 5) as rnd:
            assert rnd == {"key": (4, 5)}
    with cache.using(5, 5):
        pass
    # the old round went first, replaced by the next
    assert built == [(4, 5), (5, 5)] and forgotten == [(1, True)]
    cache.clear()
    assert not cache.held and forgotten == [(1, True), (2, False)]
    cache.clear()                                             # nothing held: nothing to free
    assert forgotten == [(1, True), (2, False)]


def test_threads_share_one_build():
    cache, built, _ = _counting_cache()
    start = threading.Barrier(6)
    seen = []

    def unit():
        start.wait()
        with cache.using("r") as rnd:
            seen.append(id(rnd))

    threads = [threading.Thread(target=unit) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == [("r",)] and len(set(seen)) == 1
    cache.clear()


def test_an_idle_round_is_forgotten_but_not_while_a_unit_uses_it(monkeypatch):
    monkeypatch.setattr(round_cache, "IDLE_SECONDS", 0.05)
    cache, built, forgotten = _counting_cache()
    with cache.using(1):
        time.sleep(0.2)
        assert cache.held                      # in use: kept however long the unit takes
    assert _wait_until(lambda: not cache.held) and forgotten == [(1, False)]
    with cache.using(1):                       # used again later: built again
        pass
    assert built == [(1,), (1,)]
    cache.clear()


def test_a_failed_build_keeps_nothing_and_the_cache_goes_on(monkeypatch):
    monkeypatch.setattr(round_cache, "IDLE_SECONDS", 0.05)
    calls = []

    def build(key):
        calls.append(key)
        if key == "bad":
            raise MemoryError("no room")
        return key

    cache = RoundCache(build)
    with pytest.raises(MemoryError):
        with cache.using("bad"):
            pass
    assert not cache.held
    with cache.using("good") as rnd:
        assert rnd == "good"
    assert _wait_until(lambda: not cache.held)   # the idle timer still runs


@pytest.mark.parametrize("solve, units", [
    (table.solve_round_unit, lambda: table.round_units(3, 4, {0: 10, 1: 9}, 20, 1, slack=1)),
    (exact_join.solve_exact_unit, lambda: exact_join.exact_units(3, 4, 9, 1)),
])
def test_a_process_that_solved_units_forgets_their_round_when_idle(monkeypatch, solve, units):
    # a process of the user's own pool or Dask cluster outlives the table: after a unit the
    # round is kept for the next one, then dropped once no unit has come for a while
    monkeypatch.setattr(round_cache, "IDLE_SECONDS", 0.1)
    rounds = table._rounds if solve is table.solve_round_unit else exact_join._rounds
    unit, *_ = units()
    solve(unit.payload)
    assert rounds.held
    assert _wait_until(lambda: not rounds.held)


def test_the_table_and_problem_2_forget_their_round_when_they_end():
    import gpuqueens

    gpuqueens.matchstick_table(3, 4, backend="cpu", workers=1)
    assert not table._rounds.held
    gpuqueens.matchsticks(6, 6, removed=19, squares=0, backend="cpu")
    assert not exact_join._rounds.held


def test_the_rounds_of_a_table_share_one_unit_square_bound_which_goes_when_it_ends(monkeypatch):
    # every round of a table asks for the same bound: the next round keeps it (7×7 with
    # S = 100 rebuilt its tables in 2.7 s in each of its four rounds)
    import gpuqueens
    from gpuqueens.problems.matchsticks import bounds

    built, rounds = [], []
    real_bound, real_prepare = bounds.UnitSquareBound, table.prepare_round
    monkeypatch.setattr(bounds, "UnitSquareBound",
                        lambda *args: built.append(args) or real_bound(*args))
    monkeypatch.setattr(table, "prepare_round",
                        lambda *args, **kw: rounds.append(args[2]) or real_prepare(*args, **kw))
    bounds.unit_square_bound.cache_clear()
    gpuqueens.matchstick_table(4, 8, [35], backend="cpu", workers=1)    # 35 of 70 lost: joined
    assert len(rounds) > 2 and built == [(4, 8, 35)]
    assert bounds.unit_square_bound.cache_info().currsize == 0


def test_a_timer_that_fires_as_a_unit_comes_does_not_drop_the_round(monkeypatch):
    # the idle timer started before a unit came must not expire the round it now uses
    monkeypatch.setattr(round_cache, "IDLE_SECONDS", 3600.0)
    cache, built, _ = _counting_cache()
    with cache.using(1):
        pass
    stale = cache._uses
    with cache.using(1):
        pass
    cache._expire(stale)           # as if the first timer fired late
    assert cache.held and built == [(1,)]
    cache.clear()
