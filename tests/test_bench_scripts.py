"""The bench scripts fail with one line that says what is missing, never a traceback: no
seed tool, no CuPy, a board size out of range, a missing argument; and the device run's
build step fails when any of its commands does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def run(*command: str, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=ROOT, stdin=subprocess.DEVNULL)


def one_line_error(done: subprocess.CompletedProcess, code: int) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines, done.stdout
    return lines[-1]


def cupy_that(tmp_path, body: str) -> dict:
    """An environment whose ``import cupy`` runs `body` (e.g. fails, or never returns),
    whether or not CuPy is installed."""
    site = tmp_path / "site"
    (site / "cupy").mkdir(parents=True)
    (site / "cupy" / "__init__.py").write_text(body)
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=str(site) + (os.pathsep + path if path else ""))


@pytest.fixture
def without_cupy(tmp_path):
    """An environment in which ``import cupy`` fails, whether or not CuPy is installed."""
    return cupy_that(tmp_path, 'raise ImportError("no CuPy here")\n')


def test_cpu_vs_seed_without_the_seed_tool(tmp_path):
    line = one_line_error(run(sys.executable, str(BENCH / "cpu_vs_seed.py"), "10",
                              "--seed-tool", str(tmp_path / "missing.sh")), 1)
    assert "no seed tool" in line and "prepare_peers.sh" in line


def test_cpu_vs_seed_when_the_seed_tool_fails(tmp_path):
    tool = tmp_path / "seed.sh"
    tool.write_text("echo 'nvcc: command not found' >&2\nexit 127\n")
    line = one_line_error(run(sys.executable, str(BENCH / "cpu_vs_seed.py"), "10",
                              "--seed-tool", str(tool)), 1)
    assert "failed" in line and "exit 127" in line and "nvcc: command not found" in line


@pytest.mark.parametrize("script, args", [
    ("gpu_nqueens.py", ["--nmin", "8", "--nmax", "8", "--no-cold"]),
    ("gpu_matchsticks.py", ["--grids", "3"]),
    ("gpu_matchstick_table.py", ["--grids", "3"]),
    ("gpu_matchstick_sample.py", ["5x5"]),
    ("gpu_sanitize.py", []),
])
def test_gpu_scripts_without_cupy(without_cupy, script, args):
    line = one_line_error(run(sys.executable, str(BENCH / script), *args, env=without_cupy), 1)
    assert "needs CuPy" in line and 'pip install ".[cuda12]"' in line
    assert "tests/fake_gpu_run.py" in line  # the dry run without a GPU
    done = run(sys.executable, str(BENCH / script), "--help", env=without_cupy)
    assert done.returncode == 0 and done.stdout.startswith("usage:")


def test_gpu_nqueens_host_side_needs_no_cupy(without_cupy):
    done = run(sys.executable, str(BENCH / "gpu_nqueens.py"), "--host-side", "--nmin", "8",
               "--nmax", "8", env=without_cupy)
    assert done.returncode == 0 and "n=8: host side" in done.stdout, done.stderr


@pytest.mark.parametrize("args, message", [
    (["--nmin", "12", "--nmax", "10"], "--nmin 12 is above --nmax 10"),
    (["--repeats", "0"], "--repeats 0: at least 1 timed run per n"),
])
def test_gpu_nqueens_refuses_an_empty_benchmark(args, message):
    line = one_line_error(run(sys.executable, str(BENCH / "gpu_nqueens.py"), "--host-side", *args), 2)
    assert message in line


@pytest.mark.parametrize("bound", ["--nmin", "--nmax"])
def test_gpu_nqueens_refuses_a_board_out_of_range(bound):
    args = {"--nmin": "8", "--nmax": "8", bound: "40"}
    line = one_line_error(run(sys.executable, str(BENCH / "gpu_nqueens.py"), "--host-side",
                              *[v for item in args.items() for v in item]), 2)
    assert f"{bound} 40 is outside 1..32" in line


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("args", [[], ["a", "b", "c"]])
def test_prepare_peers_prints_its_usage(args):
    line = one_line_error(run("bash", str(BENCH / "prepare_peers.sh"), *args), 2)
    assert line.startswith("usage: bash bench/prepare_peers.sh SEED_DIR [YGCH_CLONE]")


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("git") is None, reason="needs bash and git")
@pytest.mark.parametrize("args, code, start", [(["--engine"], 2, "usage: bash bench/prepare_peers.sh --engine"),
                                               (["--engine", "no-such-commit"], 1, "prepare_peers: no-such-commit")])
def test_prepare_peers_engine_needs_a_commit(args, code, start):
    line = one_line_error(run("bash", str(BENCH / "prepare_peers.sh"), *args), code)
    assert line.startswith(start)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_device_run_help_says_what_to_install():
    done = run("bash", str(BENCH / "device_run.sh"), "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert 'pip install ".[test,cuda12]"' in text and 'pip install ".[bench]"' in text
    assert 'nvcc (CUDA toolkit) for "build"' in text


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_device_run_build_fails_when_any_command_fails(tmp_path):
    # stand-ins: python succeeds at everything, nvcc answers --version and fails to build;
    # the step's last command succeeds, so only a step that checks every command fails
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, body in (("python", "exit 0"),
                       ("nvcc", 'if [ "$1" = --version ]; then echo release; exit 0; fi; exit 1')):
        (tools / name).write_text(f"#!/bin/sh\n{body}\n")
        (tools / name).chmod(0o755)
    system = os.pathsep.join(str(Path(shutil.which(tool)).parent) for tool in ("tail", "tee", "dirname"))
    env = dict(os.environ, PATH=f"{tools}{os.pathsep}{system}")
    done = run("bash", str(BENCH / "device_run.sh"), "--steps", "build", "--out", str(tmp_path / "out"),
               env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "nvcc could not build the cubin" in done.stdout
    assert "(status 1)" in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None,
                    reason="needs bash and timeout")
def test_device_run_skips_the_timing_steps_when_the_engine_fails_its_smoke_check(tmp_path):
    env = cupy_that(tmp_path, 'raise ImportError("no device here")\n')
    out = tmp_path / "out"
    done = run("bash", str(BENCH / "device_run.sh"), "--steps", "smoke bench direct ncu table",
               "--out", str(out), env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the timing steps are skipped" in done.stdout
    assert "not run (the reason in brackets): bench(smoke) ncu(smoke) direct(smoke)" in done.stdout
    assert not (out / "ours.json").exists()


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None,
                    reason="needs bash and timeout")
def test_device_run_stops_a_step_that_hangs_and_keeps_to_its_budget(tmp_path):
    # an engine that never answers: the smoke step is stopped when the budget is spent, the
    # steps after it are not run, and the table says why
    env = cupy_that(tmp_path, "import time\ntime.sleep(3600)\n")
    out = tmp_path / "out"
    done = run("bash", str(BENCH / "device_run.sh"), "--budget", "12", "--steps", "smoke bench tests table",
               "--out", str(out), env=env, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"device_run: stopped after 1[12] s: \S*python3? bench/gpu_nqueens.py", done.stdout)
    assert "not run (the reason in brackets): bench(budget) tests(budget)" in done.stdout
    assert "(status 1)" in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("budget", ["-1", "ten", ""])
def test_device_run_refuses_a_budget_that_is_not_whole_seconds(budget):
    done = run("bash", str(BENCH / "device_run.sh"), "--budget", budget, "--steps", "table")
    assert done.returncode == 2 and "--budget takes whole seconds" in done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("big, says", [("23x", "takes board sizes"), ("", "takes board sizes"),
                                       ("22 28", "from 4 to 27"), ("3", "from 4 to 27")])
def test_device_run_refuses_a_big_n_without_an_oeis_count(big, says):
    done = run("bash", str(BENCH / "device_run.sh"), "--big", big, "--steps", "big")
    assert done.returncode == 2 and says in done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_device_run_refuses_a_step_it_does_not_have():
    # a misspelt step would otherwise run nothing and say nothing
    done = run("bash", str(BENCH / "device_run.sh"), "--steps", "smoke bnech table")
    assert done.returncode == 2 and "no step 'bnech'" in done.stderr and "bench" in done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_device_run_takes_the_interpreter_from_PYTHON(tmp_path):
    # a system with python3 and no python: the steps run $PYTHON (else python, else python3)
    marker = tmp_path / "ran"
    fake = tmp_path / "my-python"
    fake.write_text(f'#!/bin/sh\necho "$@" >> "{marker}"\nexit 1\n')
    fake.chmod(0o755)
    done = run("bash", str(BENCH / "device_run.sh"), "--steps", "smoke table", "--out", str(tmp_path / "out"),
               env=dict(os.environ, PYTHON=str(fake)))
    assert done.returncode == 1
    assert "bench/gpu_nqueens.py --nmin 4" in marker.read_text()


@pytest.mark.parametrize("script, args, says", [
    ("gpu_matchsticks.py", ["--grids", "3x"], "a grid is MxN, like 7x7, not '3x'"),
    ("gpu_matchsticks.py", ["--grids", "0"], "no grid"),
    ("gpu_matchsticks.py", ["--grids", "4,25"], "--grids 25x25: the GPU transfer is limited to a shorter side of 24"),
    ("gpu_matchstick_table.py", ["--grids", "8"], "bench/gpu_matchstick_sample.py samples"),
    ("gpu_matchstick_sample.py", ["3x3", "--backend", "cpu", "--squares", "99"],
     "a 3×3 grid has 14 squares; no S asked is possible"),
    ("gpu_matchstick_sample.py", ["2x2", "--backend", "cpu", "--patterns", "all"],
     "nothing to sample"),
    ("gpu_nqueens.py", ["--nmin", "4", "--nmax", "6", "--path", "direct", "--split", "2"],
     "--split 2: no n in 4..6 leaves room below its mark row"),
])
def test_matchstick_and_nqueens_scripts_refuse_what_they_cannot_run(without_cupy, script, args, says):
    # refused before CuPy is looked for: the same line on a GPU machine
    line = one_line_error(run(sys.executable, str(BENCH / script), *args, env=without_cupy), 2)
    assert says in line


def test_gpu_matchstick_sample_help_is_whole_sentences():
    done = run(sys.executable, str(BENCH / "gpu_matchstick_sample.py"), "--help")
    description = done.stdout.split("\n\n")[1]
    assert done.returncode == 0 and description.rstrip().endswith(".")


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_unit_records_spread_counts_each_records_nodes():
    done = run(sys.executable, str(BENCH / "gpu_unit_records.py"), "--nmin", "10", "--nmax", "11",
               "--spread", timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:]]
    assert [r[0] for r in rows] == ["10", "11"]
    assert all(float(r[2]) >= float(r[3]) >= 1 for r in rows)  # largest >= p99.99 >= mean
    refused = run(sys.executable, str(BENCH / "gpu_unit_records.py"), "--nmin", "21", "--nmax", "21", "--spread")
    assert refused.returncode == 2 and "10 <= --nmin <= --nmax <= 20" in refused.stderr
