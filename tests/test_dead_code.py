"""No dead code: vulture over the package, benchmarks, tests and docs scripts (its settings
and the short list of framework names it must not report are in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vulture")  # in the test extra; skipped only outside it

ROOT = Path(__file__).resolve().parent.parent


def test_vulture_finds_no_dead_code():
    found = subprocess.run([sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True,
                           text=True)
    assert found.returncode == 0, found.stdout + found.stderr
