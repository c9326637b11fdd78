import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # lets tests import the shared oeis.py


def pytest_configure(config):
    # the tests decide their backend explicitly; a developer's setting must not leak in
    os.environ.pop("GPUQUEENS_BACKEND", None)
