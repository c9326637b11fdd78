"""The picture script of docs/figures finds the puzzle's removals by its own search: it must
agree with the puzzle table (an independent check of the table's S = 0 row, too)."""

import subprocess
import sys
from pathlib import Path

import pytest

import gpuqueens
from scripts import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "figures" / "matchstick_picture.py"


@pytest.fixture(scope="module")
def picture():
    return load_script("docs/figures/matchstick_picture.py")


@pytest.mark.parametrize("m, n", [(1, 1), (2, 2), (2, 3), (3, 3)])
def test_search_agrees_with_the_table(picture, m, n):
    fewest, ways = gpuqueens.matchstick_table(m, n, squares=[0], backend="cpu")[0]
    assert len(picture.removals_leaving_no_square(m, n, fewest)) == ways
    assert picture.removals_leaving_no_square(m, n, fewest - 1) == []


def test_svg_draws_every_stick(picture):
    removed = picture.removals_leaving_no_square(2, 2, 4)[0]
    text = picture.svg(2, 2, removed)
    assert text.startswith("<svg") and text.count("<line") == 12
    assert text.count("stroke-dasharray") == len(removed) == 4


def run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120)


def test_help_prints_usage_and_draws_nothing():
    picture_file = SCRIPT.with_name("matchsticks-4x4.svg")
    before = picture_file.stat().st_mtime_ns
    done = run_script("--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:")
    assert "4×4 grid" in done.stdout and picture_file.stat().st_mtime_ns == before


def test_unknown_arguments_are_refused_in_one_line():
    done = run_script("--size", "5")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].endswith("unrecognized arguments: --size 5")
