"""tests/fake_gpu_run.py: its command line, checked before the emulator is built."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "fake_gpu_run.py"


def run_script(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_help_prints_usage():
    done = run_script("--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:")
    assert "SCRIPT" in done.stdout and "CuPy" in done.stdout


def test_a_missing_script_is_one_clear_line():
    done = run_script()
    assert done.returncode == 2 and done.stderr.splitlines()[-1].endswith("give the script to run, "
                                                                           "e.g. bench/gpu_nqueens.py")
    done = run_script("no_such_script.py", "--help")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].endswith("no such script: no_such_script.py")


def test_without_nvcc_the_error_says_so(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    done = run_script(str(HERE.parent / "bench" / "gpu_nqueens.py"), env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "nvcc was not found" in done.stderr.splitlines()[-1]


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_the_processes_a_script_starts_get_the_stand_in_too(tmp_path):
    # workers=2 asks a fresh interpreter about the GPUs and may start worker processes:
    # each imports cupy anew (it failed with "CuPy is not installed" there)
    script = tmp_path / "workers.py"
    script.write_text("import gpuqueens\n"
                      "r = gpuqueens.nqueens(12, backend='gpu', workers=2)\n"
                      "print(r.total, r.unique)\n")
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run([sys.executable, str(SCRIPT), str(script)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["14200", "1787"]
