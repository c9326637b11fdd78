"""The public N-Queens API: answers, the result object, bad input, checkpoints."""

import concurrent.futures

import pytest

import gpuqueens
from gpuqueens.problems.nqueens.plan import combine, plan_for, solve_unit, work_units
from oeis import total, unique


@pytest.mark.parametrize("n", range(1, 13))
def test_count_cpu_matches_published(n):
    assert gpuqueens.count(n, backend="cpu") == total(n)
    assert gpuqueens.count(n, unique=True, backend="cpu") == unique(n)


def test_result_object():
    result = gpuqueens.nqueens(8, backend="cpu")
    assert (result.n, result.total, result.unique, result.backend) == (8, 92, 12, "cpu")
    assert result.seconds >= 0 and "CPU" in result.device
    assert "92" in str(result) and "cpu" in str(result)
    assert "<table>" in result._repr_html_() and "92" in result._repr_html_()


def test_counts_are_python_ints():
    result = gpuqueens.nqueens(10, backend="cpu")
    assert type(result.total) is int and type(result.unique) is int


@pytest.mark.parametrize("bad", [True, False, 8.0, "8", None, 3 + 0j, [8]])
def test_non_integer_sizes_are_refused(bad):
    with pytest.raises(TypeError, match="integer"):
        gpuqueens.count(bad, backend="cpu")


@pytest.mark.parametrize("bad", [0, -1, -100])
def test_too_small_sizes_are_refused(bad):
    with pytest.raises(ValueError, match="at least 1"):
        gpuqueens.count(bad, backend="cpu")


@pytest.mark.parametrize("bad", [33, 64, 10**9])
def test_too_large_sizes_are_refused_with_the_limit(bad):
    with pytest.raises(ValueError, match="n=32"):
        gpuqueens.count(bad, backend="cpu")
    assert gpuqueens.MAX_N == 32


def test_numpy_integers_are_accepted():
    np = pytest.importorskip("numpy")
    assert gpuqueens.count(np.int64(6), backend="cpu") == 4


def test_unique_must_be_a_bool():
    with pytest.raises(TypeError):
        gpuqueens.count(8, unique="yes", backend="cpu")
    with pytest.raises(TypeError):
        gpuqueens.count(8, unique=1, backend="cpu")


def test_numpy_bools_are_accepted_for_unique():
    np = pytest.importorskip("numpy")
    assert gpuqueens.count(8, unique=np.bool_(True), backend="cpu") == 12
    assert gpuqueens.count(8, unique=np.bool_(False), backend="cpu") == 92


@pytest.mark.parametrize("n", range(1, 8))
def test_boards_below_the_prefix_search_are_enumerated_exactly(n):
    """The arrangement count used below the prefix search, checked where both work too."""
    from gpuqueens.problems.nqueens import _small_board

    assert _small_board(n) == (total(n), unique(n))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_small_boards_keep_and_check_their_checkpoint(tmp_path, n):
    path = tmp_path / "run.sqlite"
    assert gpuqueens.count(n, backend="cpu", checkpoint=path) == total(n)
    assert path.exists()
    assert gpuqueens.count(n, backend="cpu", checkpoint=path) == total(n)
    with pytest.raises(gpuqueens.CheckpointError, match="different run"):
        gpuqueens.count(5, backend="cpu", checkpoint=path)
    other = tmp_path / "other.sqlite"
    gpuqueens.count(6, backend="cpu", checkpoint=other)
    with pytest.raises(gpuqueens.CheckpointError, match="different run"):
        gpuqueens.count(n, backend="cpu", checkpoint=other)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        gpuqueens.count(8, backend="tpu")


def test_backend_names_take_any_case_and_surrounding_spaces(monkeypatch):
    assert gpuqueens.count(6, backend=" CPU ") == 4
    monkeypatch.setenv("GPUQUEENS_BACKEND", "Cpu\n")
    assert gpuqueens.nqueens(6).backend == "cpu"


def test_units_partition_the_prefixes():
    """Units cover every prefix once (plus the symmetric unit), so their results give the answer."""
    for n in (9, 16, 20):
        plan = plan_for(n, "cpu")
        units = work_units(plan, "cpu")
        assert len(units) == plan.unit_count + 1
        assert len({u.key for u in units}) == len(units)
        if n <= 16:
            results = {u.key: solve_unit(u.payload) for u in units}
            assert combine(results) == (total(n), unique(n))


def test_checkpoint_resume_and_executor(tmp_path):
    path = tmp_path / "run.sqlite"
    first = gpuqueens.nqueens(11, backend="cpu", checkpoint=path)
    again = gpuqueens.nqueens(11, backend="cpu", checkpoint=path)
    assert (first.total, first.unique) == (again.total, again.unique) == (total(11), unique(11))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        assert gpuqueens.count(11, backend="cpu", executor=pool) == total(11)


def test_checkpoint_of_another_size_is_refused(tmp_path):
    path = tmp_path / "run.sqlite"
    gpuqueens.count(9, backend="cpu", checkpoint=path)
    with pytest.raises(gpuqueens.CheckpointError):
        gpuqueens.count(10, backend="cpu", checkpoint=path)


def test_checkpoint_identity_ignores_the_backend():
    """A run checkpointed on one backend can be resumed on the other: same unit digest."""
    from gpuqueens.ledger import units_digest

    plan = plan_for(21, "gpu")
    assert units_digest(work_units(plan, "cpu")) == units_digest(work_units(plan, "gpu"))
    other = plan_for(20, "gpu")
    assert units_digest(work_units(plan, "cpu")) != units_digest(work_units(other, "cpu"))


def test_resume_keeps_the_plan_of_the_checkpoint(tmp_path):
    """A checkpoint started with another plan (as the GPU would choose) is resumed with it."""
    from gpuqueens.problems.nqueens import _resumed_plan
    from gpuqueens.runner import run_units

    plan = plan_for(15, "gpu")  # not the CPU default for n=15 (one unit, not four)
    assert plan != plan_for(15, "cpu")
    path = tmp_path / "gpu-started.sqlite"
    units = work_units(plan, "cpu")
    run_units(units, solve_unit, job=plan.job(), checkpoint=path, progress=False)
    assert _resumed_plan(path, 15) == plan
    assert _resumed_plan(path, 16) is None
    assert gpuqueens.count(15, backend="cpu", checkpoint=path) == total(15)


def test_the_count_watches_its_pace_against_its_estimate(keywords_of):
    # run_units gets the estimate, so that a machine slower than the estimate's says so
    from gpuqueens.problems import nqueens as nqueens_module
    from gpuqueens.problems.nqueens.estimate import estimated_seconds

    seen = keywords_of(nqueens_module, "run_units")
    assert gpuqueens.count(12, backend="cpu", workers=1) == total(12)
    assert seen["estimate"] == estimated_seconds(12, "cpu", 1)
