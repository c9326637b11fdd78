"""The benchmarks in bench/ run once, untimed, so that a benchmark that breaks or whose
answer goes wrong is found here and not by whoever times it (``--benchmark-skip``, the
default of this suite, skips them)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_every_benchmark_runs_once_and_checks_its_answer():
    pytest.importorskip("pytest_benchmark")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=-ra",
         "--benchmark-disable", str(ROOT / "bench")],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
