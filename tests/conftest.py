import os
import sys

import pytest

from gpuqueens import workers

sys.path.insert(0, os.path.dirname(__file__))  # lets tests import the shared oeis.py
from read_only import read_only_helper  # noqa: E402


def pytest_configure(config):
    # the tests decide their backend explicitly; a developer's setting must not leak in
    os.environ.pop("GPUQUEENS_BACKEND", None)


# -- worker pools (tests of workers=) -----------------------------------------------------

@pytest.fixture
def pools(monkeypatch):
    """Every WorkerPool made during the test, in order of creation."""
    made = []

    class RecordedPool(workers.WorkerPool):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(workers, "WorkerPool", RecordedPool)
    return made


@pytest.fixture
def no_pools(monkeypatch):
    """Any WorkerPool started during the test fails it."""
    def refuse(*args, **kwargs):
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(workers, "WorkerPool", refuse)


@pytest.fixture
def keywords_of(monkeypatch):
    """``keywords_of(module, name)``: a dict that keeps the keywords of the calls to
    ``module.name`` during the test (each call still runs)."""
    def spy(module, name: str) -> dict:
        seen: dict = {}
        real = getattr(module, name)

        def recorded(*args, **kwargs):
            seen.update(kwargs)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, recorded)
        return seen

    return spy


# -- the puzzle table ---------------------------------------------------------------------

@pytest.fixture
def join_only(monkeypatch):
    """Every S of a table by the centre join's rounds: the tests of its rounds, workers and
    checkpoints use small grids, whose S would otherwise come from the top sweep."""
    from gpuqueens.problems.matchsticks import top_rows

    monkeypatch.setattr(top_rows, "TOP_DEFICIT", -1)


# -- read-only checkpoints ---------------------------------------------------------------

@pytest.fixture
def read_only_works(tmp_path):
    """A :class:`read_only.ReadOnly` that does stop this process from writing, or the test
    is skipped."""
    helper = read_only_helper(tmp_path)
    if helper is None:
        pytest.skip("neither permission bits nor the immutable attribute stop this process from writing")
    yield helper
    for path in list(helper.locked):  # a failed test leaves nothing pytest cannot delete
        helper.unlock(path)
