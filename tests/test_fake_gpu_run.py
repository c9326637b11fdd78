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


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_a_scripts_own_folder_is_importable_in_its_processes(tmp_path):
    # as with `python script.py`: bench/device_workers.py hands its worker processes a
    # function of its own module, which they import by name
    (tmp_path / "sibling.py").write_text("import os\n\ndef pid():\n    return os.getpid()\n")
    script = tmp_path / "main.py"
    script.write_text("import multiprocessing, sibling\n"
                      "if __name__ == '__main__':\n"
                      "    with multiprocessing.get_context('spawn').Pool(1) as pool:\n"
                      "        print(pool.apply(sibling.pid) != sibling.pid())\n")
    done = subprocess.run([sys.executable, str(SCRIPT), str(script)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True"]
