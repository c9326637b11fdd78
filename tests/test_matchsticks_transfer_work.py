"""The cost model of problem 1: its work counts follow the methods' own plans and primes."""

import math

import pytest

from gpuqueens.problems.matchsticks import evaluation
from gpuqueens.problems.matchsticks import transfer_work as cost
from gpuqueens.problems.matchsticks.count_bound import count_bound
from gpuqueens.problems.matchsticks.grid import stick_count
from gpuqueens.problems.matchsticks.interpolation import evaluation_primes
from gpuqueens.problems.matchsticks.modular import primes_for_bound


@pytest.mark.parametrize("m,n,top", [(3, 4, None), (5, 2, None), (6, 6, 10), (4, 7, 0), (7, 9, None)])
def test_evaluation_work_counts_the_lanes_steps_and_passes_that_run(m, n, top, monkeypatch):
    seen = []

    def recording_sweep(h, w, lanes):
        seen.append((h, w, len(lanes)))
        return evaluation.sweep_values(h, w, lanes)

    evaluation.count_by_removed_evaluated(m, n, top, sweep=recording_sweep)
    work = cost.evaluation_work(m, n, top)
    h, w = min(m, n), max(m, n)
    plan = evaluation.sweep_plan(h, w)
    assert seen == [(h, w, work.lanes)] and work.lanes % 8 == 0
    assert work.primes == len(evaluation_primes(stick_count(m, n) + 1, count_bound(m, n, top)))
    assert work.steps == (w // 2 + 1) * (h + 1) and work.passes == len(plan.passes)
    assert work.updates == work.lanes * 2 ** (h + 2) * work.steps
    buffers = 2 if w % 2 == 0 else 1
    assert work.lane_bytes == 2 ** (h + 2) * 4 * buffers
    assert work.moved_bytes == 4 * work.lanes * 2 ** (h + 2) * (2 * work.passes + buffers + 1)


def test_coefficient_work_counts_live_entries():
    # 1×1: steps at 4 points with 0, 2, 3, 4 sticks decided before them
    work = cost.coefficient_work(1, 1)
    assert work.primes == len(primes_for_bound(count_bound(1, 1)))
    assert work.updates == 8 * (1 + 3 + 4 + 5) * work.primes
    assert work.array_bytes == 8 * 5 * 8
    assert cost.coefficient_work(1, 1, 1).updates == 8 * (1 + 2 + 2 + 2) * 1


def test_method_cost_grows_with_the_grid_and_refuses_unknown_backends():
    for backend in ("cpu", "gpu"):
        costs = [cost.method_cost(h, 12, backend) for h in range(2, 12)]
        assert all(a.seconds < b.seconds and a.bytes <= b.bytes for a, b in zip(costs, costs[1:]))
        assert cost.method_cost(6, 6, backend, 3).seconds < cost.method_cost(6, 6, backend).seconds
    with pytest.raises(ValueError, match="backend"):
        cost.method_cost(3, 3, "tpu")


def test_gpu_memory_is_one_group_of_lanes():
    h, w = 20, 20
    bytes_, _ = cost.method_cost(h, w, "gpu")
    assert bytes_ == 8 * 2 ** (h + 2) * 4 * 2  # even w keeps S_c beside the running state
    assert cost.method_cost(20, 21, "gpu").bytes == bytes_ // 2


def test_the_two_numbers_of_the_documented_sizes():
    # docs/matchsticks.md and docs/performance.md quote these: device bytes and instructions
    work = {s: cost.evaluation_work(s, s) for s in (16, 18, 20)}
    assert [w.primes for w in work.values()] == [15, 19, 24]  # C(E, E/2) needed 19, 24, 29
    assert [round(w.moved_bytes / 1e12, 2) for w in work.values()] == [0.3, 2.35, 17.27]
    memory, compute = work[20].floors()
    assert 5.7 < memory < 5.8 and 3.6 < compute < 3.7


def test_the_bound_is_computed_where_cheap_and_fitted_beyond():
    assert cost.method_bound(12, 14, 80) == count_bound(12, 14, 80)
    # 18×18 by the fit: the same primes as the bound's sweep gives (measured: 543.2 bits)
    fitted = cost.method_bound(18, 18, 684)
    assert 543.1 < math.log2(fitted) < 543.3
    assert len(evaluation_primes(685, fitted)) == 19


def test_method_cost_counts_the_bound_sweep():
    # a short R range sweeps 14 values of x instead of one
    updates, steps = cost.bound_updates(10, 10, 220)
    assert (updates, steps) == (2 ** 12 * 121, 121)
    assert cost.bound_updates(10, 10, 40)[0] == 14 * updates
