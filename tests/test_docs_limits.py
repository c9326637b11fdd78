"""The matchstick limits that README.md and docs/matchsticks.md state are the code's: the
shorter sides in the limits table and in the README's sentence equal the constants the
calls check, and a grid one row beyond each limit is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gpuqueens
from gpuqueens.problems.matchsticks.api import MAX_CPU_TRANSFER_SHORT_SIDE
from gpuqueens.problems.matchsticks.exact_join import MAX_EXACT_JOIN_SHORT_SIDE
from gpuqueens.problems.matchsticks.sweep import MAX_EXACT_SHORT_SIDE
from gpuqueens.problems.matchsticks.table import MAX_JOIN_SHORT_SIDE
from gpuqueens.problems.matchsticks.transfer import MAX_GPU_TRANSFER_SHORT_SIDE

ROOT = Path(__file__).resolve().parent.parent


def limits_rows() -> dict[str, str]:
    """The limits table of docs/matchsticks.md: first cell -> second cell."""
    text = (ROOT / "docs" / "matchsticks.md").read_text()
    section = text[text.index("\n## Limits") + 1:]
    rows = {}
    for line in section.splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2:
            rows[cells[0]] = cells[1]
    return rows


def test_the_limits_table_states_the_codes_shorter_sides():
    rows = limits_rows()
    counts = rows["`matchstick_counts`, `matchsticks(removed=R)`"]
    assert f"shorter side ≤ {MAX_CPU_TRANSFER_SHORT_SIDE} on the CPU" in counts
    assert f"≤ {MAX_GPU_TRANSFER_SHORT_SIDE} on the GPU" in counts
    squares = rows["`matchsticks(removed=R, squares=S)`"]
    assert squares.startswith(f"shorter side ≤ {MAX_EXACT_JOIN_SHORT_SIDE} (≤ {MAX_EXACT_SHORT_SIDE}: "
                              "whole-grid sweep")
    table = next(v for k, v in rows.items() if k.startswith("`matchstick_table`"))
    assert table.startswith(f"shorter side ≤ {MAX_JOIN_SHORT_SIDE};")


def test_the_readme_states_the_codes_shorter_sides():
    text = " ".join((ROOT / "README.md").read_text().split())
    sentence = text[text.index("Limits: the shorter side"):]
    found = re.match(r"Limits: the shorter side of a grid may be at most (\d+) for .*? on the "
                     r"CPU \((\d+) on the GPU\), (\d+) for `matchsticks\(removed=R, "
                     r"squares=S\)`.*? and (\d+) for `matchstick_table`", sentence)
    assert found, sentence[:300]
    assert [int(v) for v in found.groups()] == [MAX_CPU_TRANSFER_SHORT_SIDE, MAX_GPU_TRANSFER_SHORT_SIDE,
                                                 MAX_EXACT_JOIN_SHORT_SIDE, MAX_JOIN_SHORT_SIDE]


@pytest.mark.parametrize("call", [
    lambda h: gpuqueens.matchstick_counts(h, h, backend="cpu"),
    lambda h: gpuqueens.matchsticks(h, h, removed=h * 4, backend="cpu"),
])
def test_one_row_beyond_the_cpu_transfer_limit_is_refused(call):
    with pytest.raises(ValueError, match="shorter side"):
        call(MAX_CPU_TRANSFER_SHORT_SIDE + 1)


def test_one_row_beyond_the_square_limits_is_refused():
    h = MAX_EXACT_JOIN_SHORT_SIDE + 1
    with pytest.raises(ValueError, match="shorter side"):
        gpuqueens.matchsticks(h, h, removed=20, squares=3, backend="cpu")
    h = MAX_JOIN_SHORT_SIDE + 1
    with pytest.raises(ValueError, match="shorter side"):
        gpuqueens.matchstick_table(h, h, squares=[0], backend="cpu")
