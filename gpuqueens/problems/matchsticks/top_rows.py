"""The table's rows with few squares lost: one whole-grid sweep kept to the configurations
that can still end with at least S_min squares.

The centre join (:mod:`.table`) finds an S at a level K >= S + 2R, so a large S costs it
a high level even when R is small, and an S that no configuration has (5×5: S = 48, 49
and 51..54) makes it climb to every stick removed (S = 48 alone ran past a minute). Here the
square-tracking sweep (:mod:`.sweep`, table mode with no cap on R) drops every partial
configuration whose squares completed, still open and yet to open add up to less than
S_min (``min_squares``). What is left are the configurations that lose at most
D = total - S_min squares, few when D is small whatever R is, and the sweep ends with the
fewest R and its count for every S from S_min up, an impossible S being one that no entry
reaches. 5×5 from S = 25 (D = 30): 7 s on one core, all 31 rows.

Which S go this way (:func:`top_squares`): those that lose at most ``TOP_DEFICIT``
squares (every S of a grid with at most that many squares, up to 4×4); the join answers
the others.

>>> top_squares(5, 5, [0, 14, 24, 25, 48, 55])
[25, 48, 55]
>>> top_rows(2, 2, [3, 4, 5])
[(3, 1, 4), (4, None, 0), (5, 0, 1)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...runner import WorkUnit
from .grid import orient, square_count, stick_count
from .modular import crt
from .sweep import FEW_LOST, sweep

__all__ = ["TOP_DEFICIT", "top_squares", "split_squares", "top_unit", "solve_top_unit", "top_rows"]

#: Most squares lost for an S answered by the top sweep: its live entries grow ~1.4-fold
#: per square lost (docs/matchsticks.md): 2.4·10^6 at 30 on 5×5 (7 s), fewer on larger grids.
TOP_DEFICIT = FEW_LOST


def top_squares(h: int, w: int, wanted: list[int]) -> list[int]:
    """The S of ``wanted`` that the top sweep answers: at most ``TOP_DEFICIT`` squares lost
    (an S above the grid's squares is left to the join, which answers it at once)."""
    total = square_count(h, w)
    return [q for q in wanted if 0 <= total - q <= TOP_DEFICIT]


def split_squares(h: int, w: int, wanted: list[int]) -> tuple[list[int], list[int]]:
    """``(top, rest)``: the S of ``wanted`` for the top sweep, and those for the join.

    >>> split_squares(5, 5, [0, 25, 55])
    ([25, 55], [0])
    """
    top = top_squares(h, w, wanted)
    return top, [q for q in wanted if q not in top]


def top_unit(h: int, w: int, squares: list[int]) -> WorkUnit:
    """The one work unit of the top sweep for the S in ``squares``."""
    h, w = orient(h, w)
    return WorkUnit(f"matchstick-table/{h}x{w}/top{min(squares)}",
                    {"h": h, "w": w, "squares": sorted(squares)})


def solve_top_unit(payload: Mapping[str, Any], backend: str = "cpu") -> tuple[int, ...]:
    """``(R, count)`` for each S of the unit in order, ``R = -1`` where no configuration has
    that S; ``backend="gpu"``: the sweep's steps on the current CUDA device (CuPy)."""
    from .gpu import array_module

    h, w, squares = payload["h"], payload["w"], payload["squares"]
    total = square_count(h, w)
    caps = dict.fromkeys(range(min(squares), total + 1), stick_count(h, w))
    s, removed, counts, primes = sweep(h, w, max_squares=total, caps=caps,
                                       min_squares=min(squares), xp=array_module(backend))
    found = {int(q): (int(r), crt([int(v) for v in row], primes))
             for q, r, row in zip(s, removed, counts)}
    return tuple(v for q in squares for v in found.get(q, (-1, 0)))


def top_rows(h: int, w: int, squares: list[int]) -> list[tuple[int, int | None, int]]:
    """Rows ``(S, fewest R, count)`` (``(S, None, 0)`` when impossible) for the S asked,
    by the top sweep in this process."""
    squares = sorted(set(squares))
    flat = solve_top_unit(top_unit(h, w, squares).payload)
    return [(q, flat[2 * k] if flat[2 * k] >= 0 else None, flat[2 * k + 1])
            for k, q in enumerate(squares)]
