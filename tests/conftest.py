import os
import sys

import pytest

from gpuqueens import workers

sys.path.insert(0, os.path.dirname(__file__))  # lets tests import the shared oeis.py


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
