"""Up-front estimates (costs.py, square_costs.py): oversized requests are refused or announced within a
second, before anything is built; the models follow the sizes they are made of."""

import re
import time
import tracemalloc
import warnings

import pytest

import gpuqueens
import gpuqueens.estimates
from gpuqueens.cli import main
from gpuqueens.problems.matchsticks import costs, square_costs
from gpuqueens.problems.matchsticks.costs import transfer_cost
from gpuqueens.problems.matchsticks.square_costs import (exact_cost, exact_join_cost, table_cost,
                                                         table_live)

GiB = 2**30


@pytest.fixture
def machine(monkeypatch):
    """A machine with 16 GiB free, whatever runs the tests."""
    monkeypatch.setattr(gpuqueens.estimates, "available_memory", lambda: 16 * GiB)
    monkeypatch.setattr(square_costs, "available_memory", lambda: 16 * GiB)


def quickly(call):
    """Run ``call`` with long-run warnings as errors: what it raises (or returns), checked
    to come within a second and to allocate less than 1 GiB."""
    tracemalloc.start()
    begin = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", gpuqueens.LongRunWarning)
            try:
                return call()
            except Exception as exc:  # noqa: BLE001 - the tests look at what came back
                return exc
    finally:
        seconds = time.perf_counter() - begin
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert seconds < 1.0 and peak < GiB, (seconds, peak)


@pytest.mark.parametrize("call, message", [
    (lambda: gpuqueens.matchstick_table(3, 3, squares=range(10**9)), "more than the 14 squares"),
    (lambda: gpuqueens.matchstick_counts(2, 10**6, backend="cpu"), "needs about .* of memory"),
    (lambda: gpuqueens.matchstick_counts(1, 10**5, backend="cpu"), "needs about .* of memory"),
    (lambda: gpuqueens.matchstick_table(7, 100), "live entries .* needs about .* of memory"),
    (lambda: gpuqueens.matchstick_counts(2**64, 2, backend="cpu"), "needs about .* of memory"),
    (lambda: gpuqueens.matchstick_table(2**40, 2), "needs about .* of memory"),
    (lambda: gpuqueens.matchsticks(3, 10**9, removed=5, squares=2), "needs about .* of memory"),
    (lambda: gpuqueens.matchstick_table(10**9, 10**9), "limited to a shorter side of 7"),
    (lambda: gpuqueens.matchsticks(10**9, 10**9, removed=1, squares=1), "shorter side of 7"),
    (lambda: gpuqueens.matchsticks(6, 20, removed=60, squares=3), "live entries .* needs about .* of memory"),
    (lambda: gpuqueens.matchsticks(7, 10**9, removed=5, squares=2),  # what holds the bytes
     r"\(1 live entry in its half sweeps; its unit-square bound's tables, over the "
     r"1,000,000,000 columns of points, .* PiB alone\) needs about .* PiB of memory"),
    (lambda: gpuqueens.matchstick_counts(10**30, 1, backend="cpu"), r"about \d\.\de\+\d+ EiB"),
    (lambda: gpuqueens.matchstick_counts(10**9, 10**9, backend="cpu"), "shorter side of 13"),
])
def test_oversized_requests_are_refused_at_once(machine, call, message):
    outcome = quickly(call)
    assert isinstance(outcome, ValueError) and re.search(message, str(outcome)), outcome


@pytest.mark.parametrize("call", [
    lambda: gpuqueens.matchsticks(7, 10**9, removed=1, backend="cpu"),
    lambda: gpuqueens.matchsticks(1, 10**9, removed=3000, backend="cpu"),  # column powers
    lambda: gpuqueens.matchstick_counts(13, 100, backend="cpu"),
    lambda: gpuqueens.matchstick_table(2, 10**5),   # hours: the time grows about as the width
    lambda: gpuqueens.matchstick_table(4, 3000),    # squared (2×3000 12 s, 4×400 416 s)
    lambda: gpuqueens.matchsticks(7, 7, removed=35, squares=0),
])
def test_long_runs_are_announced_at_once(machine, call):
    outcome = quickly(call)
    assert isinstance(outcome, gpuqueens.LongRunWarning), outcome
    assert "is expected to take about" in str(outcome)


def test_a_long_whole_grid_sweep_is_announced_after_its_first_steps(machine, monkeypatch):
    # its estimate is an upper bound, often far above the time: it speaks once the sweep has
    # run SHORT_SWEEP_SECONDS (here: after its first point step) or passed its entries
    from gpuqueens.problems.matchsticks import api

    monkeypatch.setattr(api, "SHORT_SWEEP_SECONDS", 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        with pytest.raises(gpuqueens.LongRunWarning, match="is expected to take about"):
            gpuqueens.matchsticks(4, 100, removed=496, squares=1)     # 3.7 hours estimated


def test_the_warning_names_the_callers_line(machine, monkeypatch):
    from gpuqueens.problems.matchsticks import api

    def stop(*args, **kwargs):  # the estimate is what is tested, not the run
        raise KeyboardInterrupt

    for name, call in [("table_rows", lambda: gpuqueens.matchstick_table(4, 3000)),
                       ("count_by_removed",
                        lambda: gpuqueens.matchsticks(7, 10**9, removed=1, backend="cpu")),
                       ("count_by_column_powers",
                        lambda: gpuqueens.matchsticks(1, 10**9, removed=3000, backend="cpu")),
                       ("warn_if_long",    # from inside the sweep, after its first step
                        lambda: gpuqueens.matchsticks(5, 100, removed=200, squares=60))]:
        if name == "warn_if_long":
            monkeypatch.setattr(api, "SHORT_SWEEP_SECONDS", 0.0)
            warn = api.warn_if_long

            def stop(*args, warn=warn, **kwargs):
                warn(*args, **kwargs)
                raise KeyboardInterrupt
        monkeypatch.setattr(api, name, stop)
        with pytest.warns(gpuqueens.LongRunWarning) as caught:
            with pytest.raises(KeyboardInterrupt):
                call()
        assert caught[0].filename == __file__, name


def test_reproducers_in_the_shell_are_one_line(machine, capsys):
    for argv in (["matchstick-table", "3", "3", "--squares", "0-1000000000"],
                 ["matchstick-counts", str(2**64), "2", "--backend", "cpu"],
                 ["matchstick-table", "7", "100"],
                 ["matchstick-table", str(2**40), "2"]):
        begin = time.perf_counter()
        assert main(argv) == 2
        assert time.perf_counter() - begin < 1.0
        err = capsys.readouterr().err
        assert err.startswith("gpuqueens: error: ") and err.count("\n") == 1, err


def test_a_long_run_is_announced_in_the_shell(machine, capsys, monkeypatch):
    # the warning is printed as one line before the run; the run itself is not wanted here
    from gpuqueens.problems.matchsticks import api

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "count_by_removed", stop)
    assert main(["matchsticks", "7", str(10**9), "--removed", "1", "--backend", "cpu"]) == 130
    err = capsys.readouterr().err
    assert err.startswith("gpuqueens: warning: the 7×1000000000 transfer matrix (R <= 1, 1 prime)")


def test_transfer_model_grows_with_the_grid_and_the_primes():
    small, wide = transfer_cost(10, 10, 220, "cpu"), transfer_cost(12, 12, 312, "cpu")
    assert small.primes == 3 and wide.primes == 4  # by count_bound: C(E, E/2) needed 4 and 5
    assert wide.memory > 4 * small.memory and wide.seconds > 4 * small.seconds
    few = transfer_cost(10, 10, 16, "cpu")
    assert few.primes == 2 and few.seconds < small.seconds / 4
    assert transfer_cost(1, 10**7, 1, "cpu").memory < 2**20  # two residues a state


def test_gpu_transfer_memory_is_checked_against_the_gpu(machine):
    cost = transfer_cost(18, 18, 684, "gpu")
    assert cost.device_memory == 8 * 2**20 * 4 * 2  # one group of 8 lanes, two buffers: 64 MiB
    with pytest.raises(ValueError, match="on the GPU"):
        costs.check_cost(costs.Cost(cost.what, cost.memory, 0.0, device_memory=cost.device_memory,
                                    device_available=32 * 2**20))


def test_table_live_entries_follow_the_measurements():
    assert table_live(6, 3) == square_costs.TABLE_LIVE[6][3]
    assert table_live(4, 3) < table_live(4, 5) < table_live(4, 6) == square_costs.TABLE_LIVE[4][6]
    assert table_live(4, 1000) == table_live(4, 12)              # saturated
    assert table_live(7, 5) > table_live(7, 4) == 31_000_000     # still growing
    assert table_live(7, 10**12) == square_costs.TABLE_SATURATION[7]
    assert table_live(7, 1) < table_live(7, 4)


def test_table_model_scales_with_the_squares_asked_and_the_width():
    base = table_cost(5, 10, list(range(15)))
    assert table_cost(5, 10, list(range(30))).memory > 1.5 * base.memory
    assert table_cost(5, 30, list(range(15))).seconds > 3 * base.seconds
    assert table_cost(7, 7, list(range(15))).memory > 5 * GiB  # measured: ~6 GB


def test_exact_model_is_small_near_every_stick_removed():
    sticks = gpuqueens.problems.matchsticks.grid.stick_count(2, 255)
    assert exact_cost(2, 255, sticks, 0).seconds < 10
    assert exact_cost(2, 255, sticks // 2, 40).seconds > 10 * exact_cost(2, 255, sticks, 0).seconds


def test_exact_join_model_covers_the_measured_runs():
    # measured (docs/matchsticks.md): 6×6 R = 22, S = 2: 4.0·10^6 live entries, 1.08 GB,
    # 72 s; 7×7 R = 23, S = 5: 9.0·10^6, 1.66 GB, 42 s; the estimate is an upper bound, loose
    # in time near the fewest R, where few pairs multiply (7×7: 35 times) ...
    for h, w, r, s, memory, seconds in [(6, 6, 22, 2, 1.08e9, 72), (7, 7, 23, 5, 1.66e9, 42)]:
        cost = exact_join_cost(h, w, r, s)
        assert memory <= cost.memory <= 4 * memory and seconds <= cost.seconds <= 40 * seconds
    # ... that grows with the R window at the centre line and with the width
    assert exact_join_cost(6, 6, 30, 0).memory > exact_join_cost(6, 6, 19, 0).memory
    assert exact_join_cost(6, 9, 25, 2).memory > 5 * exact_join_cost(6, 6, 22, 2).memory


def test_live_entry_limit_follows_memory():
    assert square_costs.live_entry_limit(None, 2, 3, available=GiB) == GiB // (square_costs.SWEEP_COPIES * 48)
    assert square_costs.live_entry_limit(1000, 2, 3, available=GiB) == 1000


@pytest.mark.parametrize("h, w, top", [(6, 6, None), (10, 10, None), (12, 15, 40), (16, 16, None)])
def test_gpu_estimate_follows_the_methods_own_work_count(h, w, top):
    # the closed form of costs must agree with the exact count of transfer_work
    from gpuqueens.problems.matchsticks import transfer_work

    sticks = h * (w + 1) + w * (h + 1)
    quick = transfer_cost(h, w, sticks if top is None else top, "gpu")
    exact = transfer_work.method_cost(h, w, "gpu", top)
    assert quick.device_memory == exact.bytes
    assert 0.8 < quick.seconds / exact.seconds < 1.25


def test_gpu_method_refuses_grids_with_too_few_primes():
    with pytest.raises(ValueError, match="too many sticks for the GPU method"):
        transfer_cost(20, 2000, 2 * 20 * 2001, "gpu")


def test_a_sweep_on_the_gpu_leaves_room_for_the_device_paths_copies():
    import numpy as np
    from fake_cupy import make_fake_cupy

    fake = make_fake_cupy({})
    assert square_costs.sweep_copies(np) == square_costs.SWEEP_COPIES
    assert square_costs.sweep_copies(fake) == square_costs.DEVICE_SWEEP_COPIES
    assert square_costs.DEVICE_SWEEP_COPIES > square_costs.SWEEP_COPIES  # measured 5.0 + scratch
    limit = square_costs.live_entry_limit(None, 2, 3, available=GiB,
                                          copies=square_costs.sweep_copies(fake))
    assert limit == GiB // (square_costs.DEVICE_SWEEP_COPIES * 48)


def _stop(*args, **kwargs):  # the announcement is what is tested, not the run
    raise KeyboardInterrupt


@pytest.mark.parametrize("m, n, squares", [(6, 6, [26]), (5, 6, [30]), (7, 7, range(20)),
                                           (6, 5, [0, 20, 70])])
def test_a_join_beyond_its_modelled_s_is_announced_before_it_starts(machine, monkeypatch,
                                                                     m, n, squares):
    # measured on one core: 6×6 with S = 26 alone 18 s (14 minutes before the join cut on
    # the least S), where the estimate, modelled on S = 0..14, cannot tell
    from gpuqueens.problems.matchsticks import api

    monkeypatch.setattr(api, "table_rows", _stop)
    with pytest.warns(gpuqueens.LongRunWarning, match="estimated for S <= 14 only") as caught:
        with pytest.raises(KeyboardInterrupt):
            gpuqueens.matchstick_table(m, n, squares, backend="cpu", workers=1)
    assert caught[0].filename == __file__


@pytest.mark.parametrize("m, n, squares", [(5, 5, range(56)), (4, 12, [60]), (6, 6, range(15)),
                                           (6, 6, [61, 91]), (7, 7, [14, 139])])
def test_a_join_within_its_model_or_on_a_small_grid_is_not_announced(machine, monkeypatch,
                                                                     m, n, squares):
    # 5×5 with every S takes 11 s, 4×12 with S = 60 1 s; S with at most 30 squares lost
    # come from the top sweep, not the join
    from gpuqueens.problems.matchsticks import api

    monkeypatch.setattr(api, "table_rows", _stop)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        with pytest.raises(KeyboardInterrupt):
            gpuqueens.matchstick_table(m, n, squares, backend="cpu", workers=1)


@pytest.mark.parametrize("m,n", [(1, 1), (1, 5), (2, 2), (2, 7), (3, 3), (3, 8), (4, 4),
                                 (5, 9), (6, 6), (7, 7), (7, 20)])
def test_least_removals_divide_by_the_most_squares_one_stick_is_a_side_of(m, n):
    from collections import Counter

    from gpuqueens.problems.matchsticks.square_costs import least_removals

    sides = Counter()
    for k in range(1, min(m, n) + 1):
        for r in range(m - k + 1):
            for c in range(n - k + 1):
                for t in range(k):
                    sides.update([("h", r, c + t), ("h", r + k, c + t),
                                  ("v", r + t, c), ("v", r + t, c + k)])
    most = max(sides.values())
    assert [least_removals(m, n, lost) for lost in (0, 1, most, most + 1, 3 * most)] \
        == [0, 1, 1, 2, 3]


@pytest.mark.parametrize("m, n, squares", [(7, 20, [1]), (5, 1000, [3]), (7, 11, [0]), (6, 13, [3]),
                                           (6, 11, [8]), (6, 100, [0])])
def test_a_table_for_a_small_s_is_neither_refused_nor_announced(machine, m, n, squares):
    # each takes 0.6-116 s and 0.1-3.3 GB (docs/matchsticks.md, "Estimates"); before, they
    # were refused as needing 25-985 GiB, their half sweeps taken as those of S = 0..14
    from gpuqueens.problems.matchsticks.api import _table_cost

    assert quickly(lambda: costs.check_cost(_table_cost(m, n, squares))) is None


def test_a_table_is_refused_only_on_what_its_first_round_needs(machine):
    from gpuqueens.problems.matchsticks.api import _table_cost

    cost = _table_cost(7, 20, [1])  # 10,355 live entries at the bound, 1.1·10^6 one above
    assert cost.least_memory < cost.memory / 10
    assert "10,355 live entries in its half sweeps, up to 1,144,486 if its fewest R" in cost.what
    default = _table_cost(7, 7, list(range(15)))  # S = 0..14: as measured, whatever the round
    assert default.least_memory == default.memory


@pytest.mark.parametrize("h, w, s", [(5, 12, 1), (6, 10, 0), (7, 7, 0)])
def test_few_squares_constants_are_what_the_half_sweeps_hold(h, w, s):
    # the most live entries of a round at the unit-square bound and one above, as the
    # table runs them (table.first_round, then the next level); these grids have stopped
    # growing with the width (5×10 to 5×64 and 6×10 to 6×30 the same; 7×7 has the most of
    # 7×7 to 7×20)
    from gpuqueens.problems.matchsticks.pairing import prepare_round
    from gpuqueens.problems.matchsticks.table import first_round

    caps, level = first_round(h, w, [s])
    at_bound = prepare_round(h, w, caps, level, slack=s).sweep.max_states
    above = prepare_round(h, w, {s: caps[s] + 1}, level + 1, slack=s).sweep.max_states
    assert at_bound == square_costs.AT_BOUND_LIVE[h][s]
    assert above == square_costs.ONE_ABOVE_LIVE[h][s]


def test_a_round_above_the_bound_that_outgrows_memory_stops_with_a_clear_error(monkeypatch):
    # 5×12, S = 0: the fewest R lies two above the bound, and the rounds hold 36, 1958 and
    # 42,951 live entries; with memory for the first rounds only the table starts, and the
    # round that outgrows it stops with the sweep's error
    from gpuqueens.problems.matchsticks.sweep import TooManyEntries

    for module in (gpuqueens.estimates, square_costs):
        monkeypatch.setattr(module, "available_memory", lambda: 4 * 2**20)
    with pytest.raises(TooManyEntries, match=r"the 5×12 table, round 3 \(S = 0 with R <= 32\): "
                                             ".* live entries, past its limit"):
        gpuqueens.matchstick_table(5, 12, [0], backend="cpu", workers=1)
