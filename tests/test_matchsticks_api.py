"""The public functions: results, table printing, backends and bad input."""

import warnings

import numpy as np
import pytest

import gpuqueens
from gpuqueens import estimates
from gpuqueens.problems.matchsticks import matchstick_counts, matchstick_table, matchsticks
from gpuqueens.problems.matchsticks.bruteforce import brute_counts
from gpuqueens.problems.matchsticks.grid import square_count, stick_count
from gpuqueens.problems.matchsticks.sweep import count_exact


def test_exported_from_package():
    import gpuqueens.problems.matchsticks as package

    assert set(package.__all__) == {"matchsticks", "matchstick_counts", "matchstick_table",
                                    "MatchstickTable"}


def test_counts_and_single_values_agree():
    counts = matchstick_counts(3, 4, backend="cpu")
    assert len(counts) == 3 * 5 + 4 * 4 + 1
    assert all(matchsticks(4, 3, removed=r, backend="cpu") == counts[r] for r in (0, 5, 17, 31))


def test_removed_and_squares():
    assert matchsticks(4, 4, removed=9, squares=1, backend="cpu") == 4972
    assert matchsticks(4, 4, removed=8, squares=1, backend="cpu") == 0


def test_table_object():
    table = matchstick_table(4, 4, backend="cpu")
    assert len(table) == 15 and table[13] == (3, 8)
    assert "fewest R" in str(table) and "4972" in str(table)
    assert str(table).isascii()   # print(table) works on an ASCII console too
    assert repr(table).startswith("MatchstickTable(m=4, n=4")
    assert "<table>" in table._repr_html_()
    with pytest.raises(KeyError):
        table[99]


def test_table_beyond_total_squares_is_refused():
    # 1×1 has one square: S = 2 or 5 can never be (refused, as in matchsticks())
    with pytest.raises(ValueError, match="more than the 1 squares of a 1×1 grid"):
        matchstick_table(1, 1, squares=[0, 1, 2, 5], backend="cpu")
    assert matchstick_table(1, 1, squares=[0, 1], backend="cpu").rows == ((0, 4, 1), (1, 0, 1))


def test_default_squares_stop_at_the_grid_s_squares():
    assert matchstick_table(1, 1, backend="cpu").rows == ((0, 4, 1), (1, 0, 1))
    assert [s for s, _, _ in matchstick_table(4, 4, backend="cpu").rows] == list(range(15))


def test_backend_from_environment(monkeypatch):
    monkeypatch.setenv("GPUQUEENS_BACKEND", "cpu")
    assert matchstick_counts(1, 1) == [1, 0, 0, 0, 1]
    monkeypatch.setenv("GPUQUEENS_BACKEND", "tpu")
    with pytest.raises(ValueError, match="GPUQUEENS_BACKEND"):
        matchstick_counts(1, 1)


@pytest.mark.parametrize("call", [
    lambda **kw: matchstick_counts(2, 2, **kw)[3],
    lambda **kw: matchsticks(2, 2, removed=3, **kw),
    lambda **kw: matchsticks(2, 2, removed=3, squares=0, **kw),
    lambda **kw: matchstick_table(2, 2, squares=[0], **kw).rows[0][2],
])
def test_every_call_reads_the_backend_alike(monkeypatch, call):
    """Counting by squares once took the backend more strictly than the other calls."""
    expected = call(backend="cpu")
    assert call(backend=" CPU ") == expected
    monkeypatch.setenv("GPUQUEENS_BACKEND", " cpu ")
    assert call() == expected
    with pytest.raises(TypeError, match="backend must be a string"):
        call(backend=5)
    with pytest.raises(ValueError, match="not one of auto, cpu, gpu"):
        call(backend="fast")


@pytest.mark.parametrize("call,error", [
    (lambda: matchstick_counts(0, 3, backend="cpu"), ValueError),
    (lambda: matchstick_counts(2.0, 3, backend="cpu"), TypeError),
    (lambda: matchstick_counts(True, 3, backend="cpu"), TypeError),
    (lambda: matchstick_counts("2", 3, backend="cpu"), TypeError),
    (lambda: matchsticks(2, 2, removed=13, backend="cpu"), ValueError),
    (lambda: matchsticks(2, 2, removed=-1, backend="cpu"), ValueError),
    (lambda: matchsticks(2, 2, removed=1.5, backend="cpu"), TypeError),
    (lambda: matchsticks(2, 2, removed=1, squares=6, backend="cpu"), ValueError),
    (lambda: matchsticks(2, 2, removed=1, squares=-1, backend="cpu"), ValueError),
    (lambda: matchstick_table(2, 2, squares=[-1], backend="cpu"), ValueError),
    (lambda: matchstick_table(2, 2, squares=[], backend="cpu"), ValueError),
    (lambda: matchstick_table(2, 2, squares=[1.0], backend="cpu"), TypeError),
    (lambda: matchstick_counts(2, 2, backend="fast"), ValueError),
])
def test_bad_input(call, error):
    # a TypeError must come from the argument checks (named), not from deeper down
    with pytest.raises(error, match="must be" if error is TypeError else None):
        call()


def test_too_large_grids_are_refused_with_the_limit():
    with pytest.raises(ValueError, match="limited to a shorter side"):
        matchstick_counts(14, 14, backend="cpu")
    with pytest.raises(ValueError, match="limited to a shorter side of 7"):
        matchstick_table(8, 9, backend="cpu")
    with pytest.raises(ValueError, match="limited to a shorter side of 7"):
        matchsticks(8, 8, removed=30, squares=3, backend="cpu")


def test_counting_by_squares_stays_on_the_cpu_unless_the_gpu_is_asked(monkeypatch):
    import gpuqueens.backends

    def no_probe():
        raise AssertionError("auto counts by squares on the CPU: no probe")

    monkeypatch.setattr(gpuqueens.backends, "gpu_status", no_probe)
    assert matchstick_table(2, 2, [0], backend="auto").backend == "cpu"  # small: no probe
    assert matchsticks(2, 2, removed=4, squares=0, backend="auto") == 4
    monkeypatch.setattr(gpuqueens.backends, "gpu_status", lambda: (False, "no device in this test"))
    with pytest.raises(gpuqueens.BackendUnavailableError, match="no device in this test"):
        matchsticks(2, 2, removed=4, squares=0, backend="gpu")
    monkeypatch.setenv("GPUQUEENS_BACKEND", "gpu")
    with pytest.raises(gpuqueens.BackendUnavailableError, match="no device in this test"):
        matchsticks(2, 2, removed=4, squares=0)


def test_the_table_on_gpu_without_one_is_refused(monkeypatch):
    import gpuqueens.backends

    monkeypatch.setattr(gpuqueens.backends, "gpu_status", lambda: (False, "no device in this test"))
    with pytest.raises(gpuqueens.BackendUnavailableError, match="no device in this test"):
        matchstick_table(2, 2, [0], backend="gpu")
    monkeypatch.setenv("GPUQUEENS_BACKEND", "gpu")
    with pytest.raises(gpuqueens.BackendUnavailableError):
        matchstick_table(2, 2, [0])
    with pytest.raises(ValueError, match="not one of"):
        matchstick_table(2, 2, [0], backend="tpu")


# -- argument types: what each parameter takes, and clear refusals -------------------------

@pytest.mark.parametrize("squares", [3, np.int64(3)])
def test_table_squares_as_one_integer_is_refused_with_the_way_to_ask(squares):
    with pytest.raises(TypeError, match=r"squares must be a collection .*\[3\].*range\(4\)"):
        matchstick_table(2, 2, squares=squares, backend="cpu")


@pytest.mark.parametrize("squares", [{0: 1}, "01", b"\x00", 3.0, -1, True, object()])
def test_table_squares_of_the_wrong_type_are_refused(squares):
    with pytest.raises(TypeError, match="squares must be a collection of integer S values"):
        matchstick_table(2, 2, squares=squares, backend="cpu")


@pytest.mark.parametrize("squares,error", [([True], TypeError), ([0, 1.0], TypeError),
                                           ([0, -1], ValueError)])
def test_table_bad_s_values_name_the_parameter(squares, error):
    with pytest.raises(error, match="each S in squares"):
        matchstick_table(2, 2, squares=squares, backend="cpu")


@pytest.mark.parametrize("m,n,squares,message", [
    # the grid is refused before its S values are read (this hung, building 10^17 of them)
    (10**6, 10**6, range(10**17), "limited to a shorter side of 7"),
    (8, 10**6, range(10**7), "limited to a shorter side of 7"),
    # a range is checked by its ends, and refused when the list of its S values cannot fit
    (7, 10**9, range(10**9), r"the list of the 1,000,000,000 S values asked needs about"),
])
def test_a_huge_request_of_s_values_is_refused_at_once(m, n, squares, message, monkeypatch):
    monkeypatch.setattr(estimates, "available_memory", lambda: 16 * 2**30)
    with pytest.raises(ValueError, match=message):
        matchstick_table(m, n, squares=squares, backend="cpu")


def test_a_range_of_s_values_is_the_same_request_as_its_list():
    assert (matchstick_table(2, 3, squares=range(8, -1, -1), backend="cpu").rows
            == matchstick_table(2, 3, squares=list(range(9)), backend="cpu").rows)
    with pytest.raises(ValueError, match="S=9 is more than the 8 squares of a 2×3 grid"):
        matchstick_table(2, 3, squares=range(10), backend="cpu")


@pytest.mark.parametrize("call", [
    lambda: matchsticks(2, 2, removed=True, backend="cpu"),
    lambda: matchsticks(2, 2, removed=3, squares=False, backend="cpu"),
    lambda: matchsticks(2, 2, removed=3, squares=[1], backend="cpu"),
    lambda: matchstick_counts(2, True, backend="cpu"),
    lambda: matchstick_table(2, 2, [0], recheck=True, backend="cpu"),
    lambda: matchstick_table(2, 2, [0], workers=True, backend="cpu"),
])
def test_bools_and_lists_are_not_integers(call):
    with pytest.raises(TypeError):
        call()


def test_numpy_integers_are_taken_as_integers():
    two, three, one = np.int64(2), np.int32(3), np.uint8(1)
    assert matchsticks(two, two, removed=three, backend="cpu") == matchsticks(2, 2, removed=3, backend="cpu")
    assert matchsticks(two, 2, removed=three, squares=one, backend="cpu") == \
        matchsticks(2, 2, removed=3, squares=1, backend="cpu")
    assert matchstick_counts(one, np.int16(1), backend="cpu") == [1, 0, 0, 0, 1]
    table = matchstick_table(two, 2, squares=np.array([0, 5]), workers=np.int64(1),
                             recheck=np.int64(0), backend="cpu")
    assert table.rows == ((0, 4, 4), (5, 0, 1)) and table[np.int64(5)] == (0, 1)


# -- R = 0 and R = E: closed forms, whatever the grid's size ------------------------------

@pytest.fixture
def no_sweeps(monkeypatch):
    """Any count that would sweep the grid fails the test."""
    import gpuqueens.problems.matchsticks.api as api

    def refuse(*args, **kwargs):
        raise AssertionError("a sweep started for a count with a closed form")

    for name in ("_way_by_removed", "_way_by_few_kept", "count_exact", "count_exact_join"):
        monkeypatch.setattr(api, name, refuse)


@pytest.mark.usefixtures("no_sweeps")
@pytest.mark.parametrize("m, n", [(1, 10**5), (2, 10**6), (10**6, 10**6), (8, 9)])
def test_nothing_or_everything_removed_needs_no_sweep(m, n):
    sticks, total = stick_count(m, n), square_count(m, n)
    assert matchsticks(m, n, removed=0, backend="cpu") == 1
    assert matchsticks(m, n, removed=0, squares=total, backend="cpu") == 1
    assert matchsticks(m, n, removed=0, squares=0, backend="cpu") == 0
    assert matchsticks(m, n, removed=0, squares=total - 1, backend="cpu") == 0
    assert matchsticks(m, n, removed=sticks, backend="cpu") == 1
    assert matchsticks(m, n, removed=sticks, squares=0, backend="cpu") == 1
    assert matchsticks(m, n, removed=sticks, squares=1, backend="cpu") == 0
    for kept in (1, 2, 3):  # too few sticks for a cycle
        assert matchsticks(m, n, removed=sticks - kept, backend="cpu") == 0
        assert matchsticks(m, n, removed=sticks - kept, squares=0, backend="cpu") == 0
    assert matchsticks(m, n, removed=sticks - 4, backend="cpu") == m * n  # a unit square
    assert matchsticks(m, n, removed=sticks - 4, squares=1, backend="cpu") == m * n
    assert matchsticks(m, n, removed=sticks - 4, squares=0, backend="cpu") == 0


@pytest.mark.parametrize("m, n", [(1, 1), (1, 4), (2, 2), (2, 3), (3, 3)])
def test_closed_forms_agree_with_the_sweep(m, n):
    sticks = stick_count(m, n)
    for removed in {0, *range(max(sticks - 4, 0), sticks + 1)}:
        assert matchsticks(m, n, removed=removed, backend="cpu") == \
            matchstick_counts(m, n, backend="cpu")[removed]
        for squares in range(square_count(m, n) + 1):
            assert matchsticks(m, n, removed=removed, squares=squares, backend="cpu") == \
                count_exact(m, n, removed=removed, squares=squares)


def test_closed_forms_keep_the_backend_checks(monkeypatch):
    import gpuqueens.backends

    monkeypatch.setattr(gpuqueens.backends, "gpu_status", lambda: (False, "no device in this test"))
    with pytest.raises(gpuqueens.BackendUnavailableError):
        matchsticks(2, 2, removed=0, squares=5, backend="gpu")
    with pytest.raises(ValueError, match="not one of"):
        matchsticks(2, 2, removed=0, backend="tpu")


def test_a_count_long_whatever_its_entries_warns_before_it_starts(monkeypatch):
    import gpuqueens.problems.matchsticks.api as api
    from gpuqueens.problems.matchsticks import square_costs

    class Started(Exception):
        pass

    def started(*args, **kwargs):
        raise Started

    monkeypatch.setattr(api, "count_exact", started)
    for module in (estimates, square_costs):   # its bound's tables: 1.2 GiB
        monkeypatch.setattr(module, "available_memory", lambda: 16 * 2**30)
    # its 2·10^7 point steps alone: 1.7 hours (1×10^5, with 3 primes for C(E, E - 5), takes
    # 54 s; it took an hour when its primes were C(E, E/2)'s)
    m, n = 1, 10**7
    with pytest.warns(gpuqueens.LongRunWarning), pytest.raises(Started):
        matchsticks(m, n, removed=stick_count(m, n) - 5, squares=0, backend="cpu")


@pytest.mark.parametrize("m,n,removed,squares", [(4, 25, 10, 227), (3, 60, 50, 346),
                                                 (4, 30, 129, 286)])
def test_a_count_its_sweep_ends_at_once_is_not_announced_as_long(m, n, removed, squares,
                                                                 monkeypatch):
    # an S these R cannot leave: the unit-square bound prunes every entry in the first
    # steps; the estimate said an hour (an upper bound; the centre join: 0 too for 4×25,
    # in 48 s) on a machine with 32 GiB (it takes the live entries as at most what memory
    # holds: less on a smaller machine)
    from gpuqueens.problems.matchsticks import square_costs

    for module in (estimates, square_costs):
        monkeypatch.setattr(module, "available_memory", lambda: 32 * 2**30)
    assert square_costs.exact_cost(m, n, removed, squares).seconds > estimates.LONG_RUN_SECONDS
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        assert matchsticks(m, n, removed=removed, squares=squares, backend="cpu") == 0


def test_a_table_is_looked_up_by_s():
    table = matchstick_table(2, 2, squares=[0, 4, 5], backend="cpu")
    assert (0 in table, np.int64(5) in table, 3 in table, True in table, "0" in table) == (
        True, True, False, False, False)
    assert table[np.int64(0)] == (4, 4) and (0, 4, 4) in table.rows
    with pytest.raises(TypeError, match="S must be an integer, not str"):
        table["0"]
    with pytest.raises(TypeError, match="S must be an integer, not bool"):
        table[True]
    with pytest.raises(KeyError, match="S=3 was not computed"):
        table[3]


def test_counts_where_the_system_does_not_say_how_much_memory_is_free(monkeypatch):
    # (Windows: no /proc/meminfo and no os.sysconf) the choice between ways divided None by 2
    import gpuqueens.problems.matchsticks.api as api

    monkeypatch.setattr(api, "available_memory", lambda: None)
    assert matchstick_counts(2, 3, backend="cpu") == brute_counts(2, 3)
    sticks = 5000 + 2 * 5001
    assert matchsticks(1, 5000, removed=sticks - 7, backend="cpu") == 4999   # by sticks kept
