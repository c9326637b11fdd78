"""Draw a solution of the classic puzzle: remove 9 sticks from a 4×4 grid so that no square
(of any size) is left, and no grid point touches exactly one stick.

    python docs/figures/matchstick_picture.py            # writes docs/figures/matchsticks-4x4.svg

The script finds every such removal by its own small search (a hitting-set search over the
squares' sides, independent of the library's solvers), checks that their number equals the
library's puzzle table (16 ways), and draws the first one. It needs only gpuqueens.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gpuqueens

M = N = 4
REMOVED = 9
UNIT = 60  # pixels per square side
MARGIN = 30


def sticks(m: int, n: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every stick as its two end points (row, column), horizontal sticks first."""
    horizontal = [((y, x), (y, x + 1)) for y in range(m + 1) for x in range(n)]
    vertical = [((y, x), (y + 1, x)) for y in range(m) for x in range(n + 1)]
    return horizontal + vertical


def squares(m: int, n: int, index: dict) -> list[frozenset[int]]:
    """Every square of every size, as the set of its sides' stick numbers."""
    found = []
    for u in range(1, min(m, n) + 1):
        for y in range(m - u + 1):
            for x in range(n - u + 1):
                sides = set()
                for k in range(u):
                    sides |= {index[(y, x + k), (y, x + k + 1)], index[(y + u, x + k), (y + u, x + k + 1)],
                              index[(y + k, x), (y + k + 1, x)], index[(y + k, x + u), (y + k + 1, x + u)]}
                found.append(frozenset(sides))
    return found


def valid(kept: set[int], all_sticks: list) -> bool:
    """No grid point touches exactly one kept stick."""
    degree: dict[tuple[int, int], int] = {}
    for k in kept:
        for point in all_sticks[k]:
            degree[point] = degree.get(point, 0) + 1
    return all(d != 1 for d in degree.values())


def removals_leaving_no_square(m: int, n: int, removed: int) -> list[frozenset[int]]:
    """Every valid removal of ``removed`` sticks that breaks every square."""
    all_sticks = sticks(m, n)
    index = {stick: k for k, stick in enumerate(all_sticks)}
    all_squares = squares(m, n, index)
    found: set[frozenset[int]] = set()

    def search(chosen: frozenset[int]) -> None:
        intact = [sq for sq in all_squares if not sq & chosen]
        if not intact:
            if len(chosen) == removed:
                found.add(chosen)
            elif len(chosen) < removed:  # more removals that keep every square broken
                extend(chosen)
            return
        if len(chosen) == removed:
            return
        for k in sorted(min(intact, key=len)):  # a smallest intact square: one side must go
            search(chosen | {k})

    def extend(chosen: frozenset[int]) -> None:
        for k in range(len(all_sticks)):
            if k not in chosen:
                search(chosen | {k})

    search(frozenset())
    keep_all = set(range(len(all_sticks)))
    return sorted((r for r in found if valid(keep_all - r, all_sticks)), key=sorted)


def svg(m: int, n: int, removed: frozenset[int]) -> str:
    width, height = max(n * UNIT + 2 * MARGIN, 400), m * UNIT + 2 * MARGIN + 30
    left = (width - n * UNIT) / 2  # the grid centred above the caption
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    for k, ((y0, x0), (y1, x1)) in enumerate(sticks(m, n)):
        ax, ay = left + x0 * UNIT, MARGIN + y0 * UNIT
        bx, by = left + x1 * UNIT, MARGIN + y1 * UNIT
        if k in removed:
            parts.append(f'<line x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}" stroke="#bbbbbb" '
                         'stroke-width="2" stroke-dasharray="4 4"/>')
        else:
            inset = 5  # a gap at each end, so the sticks read as separate matches
            dx, dy = (inset, 0) if y0 == y1 else (0, inset)
            parts.append(f'<line x1="{ax + dx}" y1="{ay + dy}" x2="{bx - dx}" y2="{by - dy}" '
                         'stroke="#c8a165" stroke-width="6" stroke-linecap="round"/>')
            parts.append(f'<circle cx="{bx - dx}" cy="{by - dy}" r="4.5" fill="#b22222"/>')
    caption = f"{m}×{n} grid: {len(removed)} sticks removed (dashed), no square left"
    parts.append(f'<text x="{width / 2}" y="{height - 12}" font-family="sans-serif" font-size="13" '
                 f'text-anchor="middle">{caption}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """No options: the parser gives ``--help`` and refuses stray arguments."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog=f"Writes matchsticks-{M}x{N}.svg next to this script.")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    parse_args(argv)
    solutions = removals_leaving_no_square(M, N, REMOVED)
    fewest, ways = gpuqueens.matchstick_table(M, N, squares=[0], backend="cpu")[0]
    if (fewest, ways) != (REMOVED, len(solutions)):
        print(f"disagreement: the table says fewest R={fewest} in {ways} ways, "
              f"the search found {len(solutions)} ways with R={REMOVED}", file=sys.stderr)
        return 1
    out = Path(__file__).with_name(f"matchsticks-{M}x{N}.svg")
    out.write_text(svg(M, N, solutions[0]))
    print(f"{len(solutions)} ways, as the puzzle table says; drew the first in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
