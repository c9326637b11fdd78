"""The puzzle table (problem 3): rounds of the centre join, each run as work units.

For each S asked the table gives the fewest sticks R whose removal leaves exactly S squares
(in a valid configuration) and the number of ways. The centre join (:mod:`.halves`,
:mod:`.pairing`) finds, in a round at *level* K, every configuration with S + 2R <= K
(the seed's "2R+S"): per S, the fewest R up to (K - S) // 2 and the count at it.

Levels: the first is one above max_S (S + 2L(S)), L the unit-square lower bound of
:mod:`.bounds` (at most two above the least: S far apart wait for their own level), each
S capped at most one above L(S); an S not found at level K has fewest
R above its cap, and the next round runs at the least S + 2L(S) still open, with only the
open S it can find (so later rounds are small);
an S not found with every stick removable is impossible. The S that lose at most 30 of
the grid's squares, among them every S that no configuration has on the grids tried,
come from one whole-grid sweep instead (:mod:`.top_rows`), before the rounds.

Work units: a round has one unit per centre stick pattern C (up to its top-bottom mirror;
36 for 6×6, 72 for 7×7). A unit's result is, for each S of the round, the fewest R among
the configurations with that C and the number of ways at it; the round's answer is the
smallest R over the units with the counts at it added (:func:`merge_fewest`). The units
of a round share the half sweeps, which a process computes once per round and keeps for
the units it solves (:mod:`.round_cache`: forgotten after a minute without a unit), or
which one of the worker processes started for the table builds for all of them
(:mod:`.round_store`). Every
round goes through :func:`gpuqueens.runner.run_units` (progress, checkpoint, executors), as
one *stage* of one run: a checkpoint is one file, and a resumed run reads the finished
rounds back and goes on where it stopped.

>>> [u.key for u in round_units(2, 2, {0: 4, 1: 3}, level=8, index=1)]
['matchstick-table/2x2/round1/C00', 'matchstick-table/2x2/round1/C01', 'matchstick-table/2x2/round1/C11']
>>> table_rows(2, 2, range(6))
[(0, 4, 4), (1, 2, 2), (2, 2, 4), (3, 1, 4), (4, None, 0), (5, 0, 1)]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...runner import WorkUnit, run_units
from ...worker_setup import keep_large_blocks
from .bounds import unit_square_bound
from .grid import orient, square_count, stick_count
from .pairing import JoinStats, Round, centre_patterns, join_centre, prepare_round
from .round_cache import RoundCache, forget_join_leftovers
from .sweep import TooManyEntries
from .top_rows import solve_top_unit, split_squares, top_unit
from .unit_checks import check_count, check_fewest

__all__ = ["table_rows", "run_levels", "first_round", "merge_fewest", "round_units", "solve_round_unit",
           "MAX_JOIN_SHORT_SIDE"]

#: Largest shorter side the join answers. 7×7 takes 154 s on 2 cores, 6.3 GB a process, with
#: 3.1·10^7 live entries (2026-11-24); 8×8 would need ~10 times the memory.
MAX_JOIN_SHORT_SIDE = 7
#: 5: S far apart each at its own level; 4: the S with few squares lost first,
#: as a stage "top" (:mod:`.top_rows`); 3: one checkpoint file, a ledger stage per round
#: (2: a file per round; 1: sweep units).
JOB_FORMAT = 5

Rows = list[tuple[int, int | None, int]]


def merge_fewest(into: dict[int, tuple[int, int]], more: dict[int, tuple[int, int]]) -> None:
    """Add ``more``'s ``{S: (fewest R, count)}`` to ``into``: the smaller R wins, counts add
    on a tie (the configurations of different centre patterns are different).

    >>> found = {0: (4, 1)}
    >>> merge_fewest(found, {0: (4, 3), 1: (2, 5)}); merge_fewest(found, {1: (1, 1)})
    >>> found
    {0: (4, 4), 1: (1, 1)}
    """
    for q, (r, c) in more.items():
        old = into.get(q)
        if old is None or r < old[0]:
            into[q] = (r, c)
        elif r == old[0]:
            into[q] = (r, old[1] + c)


def run_levels(h: int, w: int, wanted: list[int],
               run_round: Callable[[dict[int, int], int, int], dict[int, tuple[int, int]]]) -> Rows:
    """The rounds of the join: ``run_round(caps, level, index)`` returns ``{S: (R, count)}``
    for one round; rounds go on until every S asked is found or proved impossible.

    The first level is one above the largest S + 2L(S) (L the unit-square lower bound)
    when the S asked have S + 2L(S) within one of each other, as S = 0..14 have on every
    grid joined; else two above the least, and the S far above wait for their own level
    (5×5, S = 1, 18 and 38 in one table: 23 s at the largest's level for all, 2.6 s so).
    Each S is capped at R <= (K - S) // 2, so at most L(S) + 1, and a round asks only the
    S that it can find. After a round, an S not found has fewest R above its cap, and the next
    level is the least S + 2L(S) left. L steps by one: a round costs several times the one below it
    (5×5, S = 21: 0.7 s at R <= 4, 5.3 s at 5, 26 s at 6), so a round past the fewest R
    costs more than all the rounds below it. An S that no configuration has climbs to
    every stick removed, one round a step (4×4: 75 rounds, a minute); those S lose few
    squares, and the table answers them by its top sweep instead (:mod:`.top_rows`).
    """
    sticks = stick_count(h, w)
    done, lower, level = _first_level(h, w, wanted)
    index = 0
    while len(done) < len(wanted):
        caps = _round_caps(sticks, level, {q: lower[q] for q in wanted if q not in done})
        index += 1
        found = run_round(caps, level, index)
        for q in caps:
            if q in found:
                done[q] = found[q]
            elif caps[q] >= sticks:
                done[q] = (None, 0)
            else:
                lower[q] = max(lower[q], caps[q] + 1)
        level = min((q + 2 * lower[q] for q in wanted if q not in done), default=level)
    return [(q, *done[q]) for q in wanted]


def _first_level(h: int, w: int, wanted: list[int]):
    """(the S asked that the grid cannot have, done; the lower bound L(S) of the others; the
    first round's level)."""
    top = square_count(h, w)
    done: dict[int, tuple[int | None, int]] = {q: (None, 0) for q in wanted if q > top}
    start = unit_square_bound(h, w, max(wanted)).before_start()
    lower = {q: int(start[min(q, len(start) - 1)]) for q in wanted if q not in done}
    # one above the largest S + 2L(S), as long as the S asked lie within one of each other
    # (every S = 0..14 of every grid joined does): else the S far above wait for their level
    least = [q + 2 * lower[q] for q in lower]
    level = min(max(least, default=0) + 1, min(least, default=0) + 2)
    return done, lower, level


def _round_caps(sticks: int, level: int, lower: dict[int, int]) -> dict[int, int]:
    """The caps ``{S: largest R}`` of a round at ``level`` for the open S (``lower``: their
    L(S)). The level is at most two above any open S + 2L(S), so no cap passes L(S) + 1 (a
    cap far above an S's bound costs much: 5×6, S = 0 at R <= 20 5.7 s, at R <= 16 0.1 s);
    an S whose bound is above (K - S) // 2 cannot be found at this level: not asked."""
    caps = {q: min(sticks, (level - q) // 2) for q in lower}
    return {q: c for q, c in caps.items() if c >= lower[q]}


def first_round(h: int, w: int, wanted: list[int]) -> tuple[dict[int, int], int]:
    """The caps ``{S: largest R}`` and the level of the first round that :func:`run_levels`
    runs for the S asked (for sampling a round of a grid too large to finish).

    >>> first_round(4, 4, [0, 1, 2])
    ({0: 9, 1: 8, 2: 8}, 18)
    """
    _, lower, level = _first_level(h, w, wanted)
    return _round_caps(stick_count(h, w), level, lower), level


def round_units(h: int, w: int, caps: dict[int, int], level: int, index: int,
                max_entries: int | None = None, slack: int = 0) -> list[WorkUnit]:
    """The units of round ``index`` (level K, caps ``{S: largest R}``), one per centre C.
    ``slack``: the largest S of the table (every round then shares one unit-square bound)."""
    caps_list = sorted(caps.items())
    return [
        WorkUnit(f"matchstick-table/{h}x{w}/round{index}/C{C:0{h}b}",
                 {"h": h, "w": w, "caps": caps_list, "level": level, "C": C,
                  "max_entries": max_entries, "slack": slack})
        for C in centre_patterns(h)
    ]


def _prepare(h: int, w: int, caps: tuple[tuple[int, int], ...], level: int,
             max_entries: int | None, slack: int, backend: str) -> Round:
    from .gpu import array_module  # "gpu": the half sweeps on the device too

    keep_large_blocks()  # in a worker process: the sweeps' arrays are hundreds of MiB
    return prepare_round(h, w, dict(caps), level, max_entries, slack, xp=array_module(backend))


#: The round whose units this process solves (its half sweeps, built by its first unit).
_rounds = RoundCache(_prepare, forget_join_leftovers)


def _round_key(payload: Mapping[str, Any], backend: str) -> tuple:
    caps = tuple((int(q), int(c)) for q, c in payload["caps"])
    return (payload["h"], payload["w"], caps, payload["level"], payload["max_entries"],
            payload["slack"], backend)


def solve_round_unit(payload: Mapping[str, Any], stats: JoinStats | None = None,
                     backend: str = "cpu", store: str | None = None) -> tuple[int, ...]:
    """One unit: ``(R, count)`` for each S of the round in order, ``R = -1`` where none.
    ``backend="gpu"``: the half sweeps and the pairing run on the current CUDA device
    (:mod:`.halves` on CuPy arrays, :mod:`.gpu_join`), with the same result.

    Picklable, so process pools and Dask can run it; the half sweeps are kept per process
    (:mod:`.round_cache`), and built once for the processes of one machine that share the
    ``store`` directory (:mod:`.round_store`).
    """
    if backend == "gpu":
        from .gpu_check import check_device

        check_device("join")  # the first use in a process on a device: against the CPU
    with _rounds.using(*_round_key(payload, backend), store=store) as rnd:
        if backend == "gpu":
            from .gpu_join import join_centre_gpu

            found = join_centre_gpu(rnd, payload["C"], stats)
        else:
            found = join_centre(rnd, payload["C"], stats)
    return tuple(v for q, _ in payload["caps"] for v in found.get(q, (-1, 0)))


def _decode(caps: dict[int, int], flat: tuple[int, ...]) -> dict[int, tuple[int, int]]:
    found = {}
    for k, q in enumerate(sorted(caps)):
        r, count = flat[2 * k], flat[2 * k + 1]
        if r >= 0:
            found[q] = (r, count)
    return found


def table_rows(m: int, n: int, squares: Iterable[int], *, run: Mapping[str, Any] | None = None,
               max_entries: int | None = None, stats: JoinStats | None = None,
               wrap_solver: Callable[[Callable], Callable] | None = None,
               backend: str = "cpu", store: str | None = None, top_sweep: bool = True) -> Rows:
    """Rows ``(S, fewest R, count)`` for each S asked (``(S, None, 0)`` when impossible) of
    an m×n grid, through :func:`gpuqueens.runner.run_units`: the S with few squares lost
    by the top sweep (:mod:`.top_rows`, one unit), the others round by round.

    ``run``: the runner's options (``checkpoint``, ``executor``, ``progress``, ...), passed
    on unchanged to every stage. ``max_entries`` limits the half sweeps' live entries below
    what memory holds. ``stats`` adds up the join's sizes and times; it sees only the units
    solved in this process, so it is refused with an executor. ``wrap_solver``: turns the
    unit solver into the one the executor runs (:meth:`gpuqueens.workers.Workers.solver`).
    ``backend``: where the units run, ``"cpu"`` or ``"gpu"`` (half sweeps and pairing).
    ``store``: a :mod:`.round_store` directory that the worker processes share (CPU only).
    ``top_sweep=False``: every S by the join (the tests compare the two ways).
    """
    wanted = sorted(set(squares))
    h, w = orient(m, n)
    # few squares lost: by the top sweep, not the join
    top, rest = split_squares(h, w, wanted) if top_sweep else ([], wanted)
    run = dict(run or {})
    if stats is not None and run.get("executor") is not None:
        raise ValueError("stats are gathered in this process only: not with an executor")
    job = {"problem": "matchstick-table", "format": JOB_FORMAT, "m": h, "n": w,
           "squares": wanted}
    sticks = stick_count(h, w)
    solve = functools.partial(solve_round_unit, stats=stats, backend=backend, store=store)
    if wrap_solver is not None:
        solve = wrap_solver(solve)

    def run_round(caps: dict[int, int], level: int, index: int) -> dict[int, tuple[int, int]]:
        units = round_units(h, w, caps, level, index, max_entries, slack=max(rest))
        what = f"the {h}×{w} table, round {index}"
        try:
            results = run_units(units, solve, job=job, stage=f"round{index}",
                                description=f"{h}×{w} table, round {index}",
                                result_width=2 * len(caps),
                                check=functools.partial(check_fewest, caps=caps, sticks=sticks,
                                                        what=what),
                                **run)
        except TooManyEntries as exc:  # say which round: the rounds before it fitted
            shown = ", ".join(f"S = {q} with R <= {c}" for q, c in sorted(caps.items())[:3])
            more = ", ..." if len(caps) > 3 else ""
            raise TooManyEntries(f"{what} ({shown}{more}): {exc}") from exc
        if stats is not None:
            with _rounds.using(*_round_key(units[0].payload, backend)) as rnd:
                stats.add_round(rnd)
        found: dict[int, tuple[int, int]] = {}
        for flat in results.values():
            merge_fewest(found, _decode(caps, flat))
        for q, (r, count) in found.items():
            check_count(count, sticks=sticks, removed=r, what=f"{what}, S = {q}")
        return found

    rows: dict[int, tuple[int, int | None, int]] = {}
    if top:  # one unit, a stage of its own, before the rounds
        top_solve = functools.partial(solve_top_unit, backend=backend)
        if wrap_solver is not None:
            top_solve = wrap_solver(top_solve)
        unit = top_unit(h, w, top)
        check = functools.partial(check_fewest, caps=dict.fromkeys(top, sticks), sticks=sticks,
                                  what=f"the {h}×{w} table")
        flat = run_units([unit], top_solve, job=job, stage="top",
                         description=f"{h}×{w} table, S from {min(top)}",
                         result_width=2 * len(top), check=check, **run)[unit.key]
        found = _decode(dict.fromkeys(top), flat)
        rows.update({q: (q, *found[q]) if q in found else (q, None, 0) for q in top})
    try:
        if rest:
            rows.update({row[0]: row for row in run_levels(h, w, rest, run_round)})
        return [rows[q] for q in wanted]
    finally:  # this process's copies of the last round's parts and of the bound
        _rounds.clear()
        unit_square_bound.cache_clear()
