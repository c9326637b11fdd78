"""bench/calibrate_matchsticks.py: its command line (the measurements themselves take minutes)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "calibrate_matchsticks.py"


def run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120)


def test_help_prints_usage_without_measuring():
    done = run_script("--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:")
    assert "cost models" in done.stdout and "# load" not in done.stdout


def test_unknown_arguments_are_refused_before_measuring():
    done = run_script("6", "6")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].endswith("unrecognized arguments: 6 6")


def test_few_squares_prints_the_half_sweeps_of_one_small_s(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("calibrate_matchsticks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.few_squares([(5, 8, [1])], above_limit=10**4)
    printed = capsys.readouterr().out
    assert "5×8, S = 1: AT_BOUND_LIVE 1,628" in printed and "ONE_ABOVE_LIVE past 10,000" in printed
