"""The puzzle table as work units for :func:`gpuqueens.runner.run_units`: checkpoint, resume
and executors for the centre join of :mod:`.join`.

A round of the join (one level K) has one unit per centre stick pattern C (up to its
top-bottom mirror): 36 for 6×6, 72 for 7×7. A unit's result is, for each S of the round,
the fewest R among the configurations with that C and the number of ways at it; the
round's answer is the smallest R over the units with the counts at it added
(:func:`.join.merge_fewest`). All units of a round share the half sweeps, which a process
computes once per round and keeps (one round at a time) for the units it solves.

Rounds run one after the other (a round's caps depend on what the previous ones found),
each as its own run with its own ledger: round 1 in ``checkpoint`` itself, round k in
``checkpoint + ".round<k>"`` (7×7 needs two rounds, the second takes seconds). A resumed
run reads the finished rounds back from their ledgers and goes on where it stopped.

>>> [u.key for u in round_units(2, 2, {0: 4, 1: 3}, level=8, index=1)]
['matchstick-table/2x2/round1/C00', 'matchstick-table/2x2/round1/C01', 'matchstick-table/2x2/round1/C11']
>>> table_rows_by_units(2, 2, range(6))
[(0, 4, 4), (1, 2, 2), (2, 2, 4), (3, 1, 4), (4, None, 0), (5, 0, 1)]
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading

from ...runner import WorkUnit, run_units
from .grid import orient
from .join import (MAX_ENTRIES, JoinStats, centre_patterns, join_centre, prepare_round,
                   merge_fewest, run_levels)

__all__ = ["round_units", "solve_round_unit", "table_rows_by_units", "round_checkpoint"]

JOB_FORMAT = 2  # format 1 was the earlier unit layout by first-column pattern


def round_checkpoint(checkpoint: str | os.PathLike[str] | None, index: int) -> str | None:
    """The ledger file of round ``index``: the checkpoint itself for round 1."""
    if checkpoint is None:
        return None
    return os.fspath(checkpoint) if index == 1 else f"{os.fspath(checkpoint)}.round{index}"


def round_units(h: int, w: int, caps: dict[int, int], level: int, index: int,
                max_entries: int = MAX_ENTRIES) -> list[WorkUnit]:
    """The units of round ``index`` (level K, caps ``{S: largest R}``), one per centre C."""
    caps_list = sorted(caps.items())
    return [
        WorkUnit(f"matchstick-table/{h}x{w}/round{index}/C{C:0{h}b}",
                 {"h": h, "w": w, "caps": caps_list, "level": level, "C": C,
                  "max_entries": max_entries})
        for C in centre_patterns(h)
    ]


_round_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _round(h: int, w: int, caps: tuple[tuple[int, int], ...], level: int, max_entries: int):
    return prepare_round(h, w, dict(caps), level, JoinStats(), max_entries)


def solve_round_unit(payload: dict) -> tuple[int, ...]:
    """One unit: ``(R, count)`` for each S of the round in order, ``R = -1`` where none.

    Picklable, so process pools and Dask can run it; the half sweeps are cached per process.
    """
    caps = tuple((int(q), int(c)) for q, c in payload["caps"])
    with _round_lock:  # threads of one process share one copy of the round's parts
        rnd = _round(payload["h"], payload["w"], caps, payload["level"], payload["max_entries"])
    found = join_centre(rnd, payload["C"], JoinStats())
    return tuple(v for q, _ in caps for v in found.get(q, (-1, 0)))


def _decode(caps: dict[int, int], flat: tuple[int, ...]) -> dict[int, tuple[int, int]]:
    found = {}
    for k, q in enumerate(sorted(caps)):
        r, count = flat[2 * k], flat[2 * k + 1]
        if r >= 0:
            found[q] = (r, count)
    return found


def table_rows_by_units(m: int, n: int, squares, *,
                        checkpoint: str | os.PathLike[str] | None = None,
                        executor: concurrent.futures.Executor | None = None,
                        progress: bool | None = False,
                        max_entries: int = MAX_ENTRIES) -> list[tuple[int, int | None, int]]:
    """The rows of :func:`.join.table_rows_join`, round by round through the runner."""
    wanted = sorted(set(squares))
    h, w = orient(m, n)

    def run_round(caps, level, index):
        units = round_units(h, w, caps, level, index, max_entries)
        job = {"problem": "matchstick-table", "format": JOB_FORMAT, "m": h, "n": w,
               "squares": wanted, "round": index, "level": level,
               "caps": sorted(caps.items())}
        results = run_units(units, solve_round_unit, job=job, executor=executor,
                            checkpoint=round_checkpoint(checkpoint, index), progress=progress,
                            description=f"{h}×{w} table, round {index}")
        found: dict[int, tuple[int, int]] = {}
        for flat in results.values():
            merge_fewest(found, _decode(caps, flat))
        return found

    return run_levels(h, w, wanted, run_round)
