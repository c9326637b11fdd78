"""Grid arguments of the matchstick benchmarks: one grid ("7x7") or a list of them
("10-18,20,4x9"), refused with a one-line argparse error when they do not read as grids."""

from __future__ import annotations

import argparse


def parse_grid(text: str) -> tuple[int, int]:
    """``"7x9"`` -> ``(7, 9)``: two sides of at least 1.

    >>> parse_grid("7x9"), parse_grid("8X8")
    ((7, 9), (8, 8))
    """
    try:
        m, n = (int(side) for side in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a grid is MxN, like 7x7, not {text!r}") from None
    if m < 1 or n < 1:
        raise argparse.ArgumentTypeError(f"a grid's sides are at least 1, not {text!r}")
    return m, n


def parse_grids(text: str) -> list[tuple[int, int]]:
    """Grids separated by commas: ``MxN``, ``K`` (the K×K square) or ``LO-HI`` (the squares
    LO×LO to HI×HI).

    >>> parse_grids("5-7,20,4x9")
    [(5, 5), (6, 6), (7, 7), (20, 20), (4, 9)]
    """
    grids: list[tuple[int, int]] = []
    for part in text.split(","):
        part = part.strip()
        if "x" in part.lower():
            grids.append(parse_grid(part))
            continue
        low, dash, high = part.partition("-")
        try:
            sides = range(int(low), int(high) + 1) if dash else [int(part)]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"grids are MxN, K (K×K) or LO-HI (squares), separated by commas, "
                f"like 5-7,4x9; not {part!r}") from None
        if not sides or min(sides) < 1:
            raise argparse.ArgumentTypeError(f"{part!r}: no grid (sides are at least 1, LO <= HI)")
        grids += [(k, k) for k in sides]
    return grids
