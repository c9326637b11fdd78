"""The public functions: results, table printing, backends and bad input."""

import pytest

from gpuqueens.problems.matchsticks import matchstick_counts, matchstick_table, matchsticks


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
    with pytest.raises(error):
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
