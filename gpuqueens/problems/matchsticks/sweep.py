"""The square-tracking sweep: configurations by removed sticks *and* surviving squares.

A square of size u with top-left grid point (r, c) survives when its left side (the u
vertical sticks of point column c, rows r..r+u-1), its right side (column c+u), its top
(row r, u horizontal sticks from column c) and its bottom (row r+u) all remain. The sweep
of :mod:`.transfer` (points column by column, top to bottom; h = the shorter side) is
extended by what the future needs to know about squares:

* ``t``: the top of the run of present vertical sticks ending at the current point, i.e.
  the smallest t with the sticks between rows t..i of this column all present (``t = i``
  when the stick from above is missing; ``up = t < i``);
* *open squares*: for each row pair (r, r+u), which squares with that top and bottom row
  have an intact left side and intact top/bottom so far and are still waiting for their
  right side. Their left columns c lie in a window of at most ``k = min(u, w-u+1)``
  consecutive columns, so each (r, u) keeps a k-bit *group* indexed by ``c mod k``;
* ``s``: squares completed so far (only squares accumulate, so ``s > S_max`` is dropped).

Everything about squares with rows (r, r+u) in column j is settled at the point
(i = r+u, j), when the vertical sticks r..i-1 (via t), the right stick of row r (already in
the frontier) and that of row i (being decided) are known: the square opened at c = j-u
closes (survives when t <= r), the others stay open when both right sticks are present,
and a new one opens at c = j when its left side is intact and both right sticks present.

The state is a packed bit key (:mod:`.keys`) and the DP is sparse: arrays of keys, merged
after every point by sorting. Two value kinds:

* ``table`` mode (problem 3): per (state, s) the pair (fewest R so far, number of ways to
  reach it with that R), the (min, +) semiring. This is exact because the future of a
  partial configuration depends only on its state: of two partial configurations in the
  same (state, s), the one with more removed sticks can never give the fewest R for any
  final S, so it may be forgotten.
* ``exact`` mode (problem 2): R is part of the key (pruned above the R asked and when the
  sticks left cannot reach it), values are counts.

The public table uses the centre join (:mod:`.table`), which runs this sweep over each half
of the grid; :func:`table_rows_by_sweep` here sweeps the whole grid and serves as an
independent check of the join. :func:`count_exact` answers problem 2.

Counts are residues modulo primes below 2^31 (:mod:`.modular`): a merged group of up to
2^33 residues sums without wrapping ``uint64``; the primes' product exceeds C(E, E/2).

>>> table_rows_by_sweep(2, 2, range(6))
[(0, 4, 4), (1, 2, 2), (2, 2, 4), (3, 1, 4), (4, None, 0), (5, 0, 1)]
>>> count_exact(2, 2, removed=2, squares=1)
2
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...estimates import format_bytes
from .bounds import NoBound, UnitSquareBound
from .square_costs import (SWEEP_COPIES, entry_bytes, live_entry_limit, memory_for_entries,
                           sweep_copies)
from .grid import orient, square_count, stick_count
from .keys import ONE, U64, KeyLayout, bit_count, merge_equal_keys
from .point_masks import PointMasks, point_masks, unit_square_bits
from .modular import NARROW_PRIME_LIMIT, binomial_bound, crt, primes_for_bound

__all__ = ["SweepStats", "step_point", "successor_limit", "sweep", "table_rows_by_sweep",
           "count_exact", "too_many_entries", "TooManyEntries", "MAX_EXACT_SHORT_SIDE",
           "FREE_MEMORY_SHARE", "FEW_LOST"]

#: Measured (docs/matchsticks.md): the live entries grow ~10-30x per unit of the short side
#: (table: 4×4 3·10^4, 5×5 1.1·10^6, 6×6 up to 1.8·10^7 per S and past 2·10^7 for S = 12;
#: problem 2 on 6×6 passes 2·10^7 for mid-range R, e.g. R = 20, S = 2), so problem 2 uses
#: it up to 5 and the centre join of :mod:`.exact_join` beyond. table_rows_by_sweep(6, 6, [S])
#: still works for most single S.
MAX_EXACT_SHORT_SIDE = 5
#: From this short side on, the table runs one sweep per S (measured faster for 6×6).
SEPARATE_SQUARES_FROM = 6
#: Squares lost up to which dropping the entries that can no longer keep S_min squares
#: (``min_squares``) pays: their live entries grow ~1.4-fold per square lost
#: (docs/matchsticks.md, *The rows with few squares lost*).
FEW_LOST = 30
#: A point step finds the successors of this many entries at a time (its temporaries).
SUCCESSOR_SLICE = 1 << 22


@dataclass
class SweepStats:
    """Size of the sparse DP: the most (state, s[, r]) entries alive after a point, the sum
    over points of the entries alive (the work: :mod:`.costs` is calibrated on it), points
    stepped and time."""

    max_states: int = 0
    entries: int = 0
    steps: int = 0
    seconds: float = 0.0

    def add(self, live: int) -> None:
        """Count one point step that left ``live`` entries."""
        self.max_states = max(self.max_states, live)
        self.entries += live
        self.steps += 1


class TooManyEntries(ValueError):
    """A sweep stopped because its live entries (or a point step's successors) outgrew
    what memory holds or the limit it was given."""


def too_many_entries(what: str, live: int, limit: int, words: int, primes: int) -> TooManyEntries:
    """The error of a sweep whose live entries outgrew what memory holds (or the limit)."""
    need = live * entry_bytes(words, primes) * SWEEP_COPIES
    return TooManyEntries(
        f"{what} reached {live:,} live entries, past its limit of {limit:,} (this machine's "
        f"memory for them and their copies: about {format_bytes(need)} would be needed); this "
        "grid is too large for it (see docs/matchsticks.md for the measured growth)")


#: Of the memory free before a point step, the share its merge may fill: the rest is for
#: what the step's other temporaries and other processes may take meanwhile.
FREE_MEMORY_SHARE = 0.8


def successor_limit(limit: int, words: int, primes: int, copies: int,
                    free: float | None = None) -> int:
    """The most successors a point step may merge in a sweep whose live entries may reach
    ``limit`` (what memory holds with their ``copies``): that memory less the step's input,
    over a successor's bytes in the merge (its key words and their sorted copy, its row,
    its removals, the sort order and a copy of its counts); and at most what
    ``FREE_MEMORY_SHARE`` of the ``free`` bytes now (if known) holds. A step can make up to
    four successors per entry before they merge, so a growing sweep passes this before it
    passes ``limit``: without this check it would run out of memory instead of stopping
    with a ``ValueError``.

    >>> successor_limit(1000, 3, 3, 7)      # 6 · 1000 · 56 bytes / (8 · 12 bytes)
    3500
    >>> successor_limit(1000, 3, 3, 7, free=96 * 1000)
    800
    """
    per_successor = 8 * (2 * words + primes + 3)
    most = (copies - 1) * limit * entry_bytes(words, primes) // per_successor
    if free is not None:
        most = min(most, int(free * FREE_MEMORY_SHARE) // per_successor)
    return max(1, most)


def _thresholds(fewest_after: np.ndarray, targets: dict[int, int],
                max_squares: int) -> np.ndarray:
    """``T[σ, s]``: the most removals so far that can still end within a cap, built for
    every state σ and squares so far s <= ``max_squares``.

    ``fewest_after[σ, X]`` is the fewest future removals completing at most X unit squares;
    ``targets`` maps each S still open to its cap (exact mode: the one S to its R).
    ``T[σ, s] = max over S' >= s of targets[S'] - fewest_after[σ, S' - s]`` (-1 where no
    S' >= s: below any removals so far, the entry is cut).
    """
    # An unreachable state holds E + 1, more than any cap: its threshold is negative.
    fewest = fewest_after.astype(np.int64)
    slack_top = fewest.shape[1] - 1
    out = np.full((fewest.shape[0], max_squares + 1), -1, dtype=np.int64)
    for target, cap in targets.items():
        slack = np.minimum(target - np.arange(target + 1), slack_top)
        np.maximum(out[:, : target + 1], cap - fewest[:, slack], out=out[:, : target + 1])
    return out


class EntryThresholds:
    """:func:`_thresholds` looked up per entry instead of built: where the entries times
    the targets are fewer than the table's cells, which have S + 1 columns per state and
    cost more than the entries where few sticks are removed and S is large (5×60 with
    R = 1, S = 876: 21 s of a 31 s count went to building the tables; the table's 7×7 for
    S = 100, cap 1: 3.5 s of thresholds for 57 entries)."""

    def __init__(self, fewest_after, targets: dict[int, int], xp=np):
        self.fewest = xp.asarray(fewest_after)
        self.targets, self.xp = dict(targets), xp

    def __getitem__(self, index):
        small, s_index = index
        xp = self.xp
        top = self.fewest.shape[1] - 1
        out = None
        for target, cap in self.targets.items():
            slack = xp.clip(target - s_index, 0, top)
            value = cap - self.fewest[small, slack].astype(np.int64)
            value = xp.where(s_index <= target, value, -1)    # no S' >= s: cut
            out = value if out is None else xp.maximum(out, value)
        return out if out is not None else xp.full(small.shape, -1, dtype=np.int64)


def thresholds(fewest_after: np.ndarray, targets: dict[int, int], max_squares: int,
               entries: int, xp=np):
    """The thresholds ``T[σ, s]`` of a point step over ``entries`` entries: the table of
    :func:`_thresholds`, or :class:`EntryThresholds` where looking each entry up per target
    costs less than the table's cells (the tests compare the two)."""
    if entries * len(targets) < fewest_after.shape[0] * (max_squares + 1):
        return EntryThresholds(fewest_after, targets, xp)
    return xp.asarray(_thresholds(fewest_after, targets, max_squares))


#: A sweep's entries: key words, sticks removed (fewest, in table mode) and residues.
State = tuple[list[np.ndarray], np.ndarray, np.ndarray]


def step_point(layout: KeyLayout, state: State, i: int, j: int, *, bound: UnitSquareBound | NoBound,
               caps: dict[int, int] | None, max_squares: int, primes: np.ndarray,
               max_removed: int | None = None, undecided: int = 0,
               most_successors: int | None = None, min_squares: int = 0, xp=np) -> State:
    """Advance the sparse DP over grid point (i, j): decide its down and right sticks.

    ``state`` is ``(keys, removed, counts)``; returns the merged new state. Shared by
    :func:`sweep` and the half sweeps of :mod:`.halves`. ``max_removed=None`` is table
    mode; an int is exact mode (``undecided``: sticks not decided after this point).
    ``most_successors``: a ``ValueError`` before the merge when there are more successors
    (:func:`successor_limit`). ``xp``: the module of the state's arrays, NumPy or CuPy (the
    same steps on the GPU).
    """
    keys, removed, counts = state
    # Memory: the successors carry the row of their entry's counts instead of a copy of
    # them, and come from slices of the entries, so that the temporaries of _successors
    # (~25 words an entry) are a slice's; the step's peak is the merge's.
    pieces, found = [], 0
    # once per point, for every slice: the bound's thresholds and the point's tables
    after = bound.after(j * (layout.h + 1) + i)
    targets = caps if max_removed is None else {max_squares: max_removed}
    threshold = thresholds(after, targets, max_squares, len(removed), xp)
    masks = point_masks(layout, i, j).on(xp)
    for a in range(0, len(removed), SUCCESSOR_SLICE):
        pieces.append(_successors(layout, [word[a:a + SUCCESSOR_SLICE] for word in keys],
                                  removed[a:a + SUCCESSOR_SLICE], i, j, bound=bound,
                                  threshold=threshold, masks=masks, max_squares=max_squares,
                                  max_removed=max_removed,
                                  undecided=undecided, min_squares=min_squares, first=a,
                                  xp=xp))
        found += len(pieces[-1][2])
        if most_successors is not None and found > most_successors:  # stop before the merge
            raise TooManyEntries(
                f"{layout.h}×{layout.w}: a point step (column {j}, row {i}) made more than "
                f"{most_successors:,} entries to merge, what the free memory holds; this "
                "count is too large for it here (see docs/matchsticks.md for the measured "
                "growth)")
    if not found:
        return ([xp.zeros(0, dtype=U64) for _ in range(layout.words)],
                xp.zeros(0, dtype=np.int64), xp.zeros((0, len(primes)), dtype=U64))
    new_keys, new_removed, rows = pieces[0] if len(pieces) == 1 else (
        [xp.concatenate(words) for words in zip(*(piece[0] for piece in pieces))],
        xp.concatenate([piece[1] for piece in pieces]),
        xp.concatenate([piece[2] for piece in pieces]))
    del pieces
    if max_removed is None:
        return merge_equal_keys(new_keys, counts, primes, removed=new_removed, rows=rows, xp=xp)
    keys, counts = merge_equal_keys(new_keys, counts, primes, rows=rows, xp=xp)
    return keys, xp.zeros(len(keys[0]), dtype=np.int64), counts  # R lives in the key


def squares_opening_after(h: int, w: int, i: int, j: int) -> int:
    """Squares of an h×w grid that open after point (i, j) of the sweep: a square with rows
    (r, r+u) and left column c opens at point (r+u, c), and points go column by column,
    top to bottom.

    >>> squares_opening_after(2, 2, 0, 0), squares_opening_after(2, 2, 1, 0), squares_opening_after(2, 2, 2, 2)
    (5, 4, 0)
    """
    return sum(1 for u in range(1, min(h, w) + 1) for r in range(h - u + 1)
               for c in range(j, w - u + 1) if c > j or r + u > i)


def _open_squares(layout: KeyLayout, keys: list, xp) -> np.ndarray:
    """The open squares of each entry: the set bits of all its groups."""
    total = None
    for name in layout.groups:
        part = bit_count(xp, layout.get(keys, ("g", *name)))
        total = part if total is None else total + part
    return total.astype(U64)


def _successors(layout: KeyLayout, keys: list, removed, i: int, j: int, *,
                bound: UnitSquareBound | NoBound, threshold, masks: PointMasks, max_squares: int,
                max_removed: int | None, undecided: int, min_squares: int = 0, first: int = 0,
                xp=np):
    """The entries after point (i, j), before equal keys merge: ``(keys, removed, rows)``,
    ``rows[k] - first`` the entry of ``keys`` it comes from (branches right = 0, 1 and
    within each down = 0, 1 one after the other, each in the entries' order).
    ``threshold``: :func:`thresholds` after this point; ``masks``: the point's tables
    (:func:`.point_masks.point_masks`) on module ``xp``."""
    h, w = layout.h, layout.w
    table_mode = max_removed is None
    has_right = j < w
    has_down = i < h
    index = masks.index(keys, xp)
    valid = masks.valid[index]
    # The squares with bottom row i: closed ones counted, the groups kept (right stick
    # present) or cleared (missing), new ones opened, through the point's tables.
    closed = None
    for word, close in zip(keys, masks.close):
        if close is not None:
            part = bit_count(xp, word & close[index])
            closed = part if closed is None else closed + part
    kept = [[word if clear is None else word & clear for word, clear in zip(keys, masks.clear)],
            [word if keep is None else word & keep[index] for word, keep in zip(keys, masks.keep)]]
    for k, opened in enumerate(masks.open):
        if opened is not None:
            kept[1][k] = kept[1][k] | opened[index]
    squares = layout.get(keys, "s")
    if closed is not None:
        closed = closed.astype(U64)
        squares = squares + closed
        # s + closed in place of s: an entry whose s passes the field's width is dropped
        # below (more than max_squares), so the carry into the next field never survives
        s_field = layout.fields["s"]
        more = closed << U64(s_field.shift)
        for version in kept:
            version[s_field.word] = version[s_field.word] + more
        del more
    units_after = [unit_square_bits(layout, version) for version in kept]
    frontier = layout.get(keys, "H") & ~(ONE << U64(i))
    if min_squares:  # the most squares each branch can still end with
        later = squares_opening_after(h, w, i, j)
        possible = [squares + _open_squares(layout, kept[right], xp) + U64(later)
                    for right in (0, 1)]
    s_index = xp.minimum(squares, U64(max_squares)).astype(np.int64)
    alive = squares <= U64(max_squares)
    removed_so_far = None if table_mode else layout.get(keys, "r")
    branches = []  # (right, down, sticks lost, surviving entries)
    for right in (0, 1) if has_right else (0,):
        for down in (0, 1) if has_down else (0,):
            lost = (has_down and not down) + (has_right and not right)
            ok = alive & ((valid & np.uint8(1 << (2 * right + down))) != 0)
            if min_squares:
                ok &= possible[right] >= U64(min_squares)
            if not table_mode:
                r_new = removed_so_far + U64(lost)
                # Too many removed, or too few sticks left to remove the rest.
                ok &= (r_new <= U64(max_removed)) & (r_new + U64(undecided) >= U64(max_removed))
            # Prune by the unit-square relaxation (module bounds): R so far plus the
            # fewest future removals must fit under the cap of some S still open.
            small = bound.index(frontier | U64(right << i), U64(down if has_down else 0),
                                units_after[right])
            so_far = removed + lost if table_mode else r_new.astype(np.int64)
            ok &= so_far <= threshold[small, s_index]
            idx = xp.flatnonzero(ok)
            if len(idx):
                branches.append((right, down, lost, idx))
    total = sum(len(idx) for *_, idx in branches)
    new_keys = [xp.empty(total, dtype=U64) for _ in range(layout.words)]
    new_removed = xp.empty(total, dtype=np.int64)
    rows = xp.empty(total, dtype=np.int64)
    t_field = layout.fields["t"]
    r_field = None if table_mode else layout.fields["r"]
    at = 0
    for right, down, lost, idx in branches:
        end = at + len(idx)
        for word, value in zip(new_keys, kept[right]):
            word[at:end] = value[idx]
        # H's bit i becomes the right stick; t restarts below a missing down stick (at 0
        # past the last row)
        drop, put = 1 << i, right << i
        if not has_down or not down:
            drop |= ((1 << t_field.width) - 1) << t_field.shift
            put |= (i + 1 if has_down else 0) << t_field.shift
        new_keys[0][at:end] &= U64(_ALL & ~drop)
        new_keys[0][at:end] |= U64(put)
        if lost and r_field is not None:  # r <= max_removed was checked: no carry
            new_keys[r_field.word][at:end] += U64(lost << r_field.shift)
        new_removed[at:end] = removed[idx] + lost
        rows[at:end] = idx + first
        at = end
    return new_keys, new_removed, rows


#: Every bit of a key word.
_ALL = (1 << 64) - 1


def sweep(m: int, n: int, *, max_squares: int, max_removed: int | None = None,
          stats: SweepStats | None = None, caps: dict[int, int] | None = None,
          max_entries: int | None = None, min_squares: int = 0,
          announce: tuple[int, float, Callable[[], None]] | None = None, xp=np):
    """Run the sparse DP over the whole grid (on array module ``xp``: NumPy, or CuPy on the
    current device; the results are NumPy arrays).

    ``max_removed=None`` selects table mode; an int selects exact mode for R = max_removed.
    Returns ``(s, removed, residues, primes)`` arrays over the final entries: squares,
    fewest R (table mode) or R (exact mode), and residues. The live entries may not pass
    ``max_entries`` nor what this machine's memory holds (:func:`.square_costs.live_entry_limit`):
    a :class:`TooManyEntries` says so. ``announce=(entries, seconds, call)``: ``call()`` once,
    after the first point step that leaves more live entries or ends later than that.
    """
    h, w = orient(m, n)
    sticks = stick_count(h, w)
    table_mode = max_removed is None
    layout = KeyLayout(h, w, max_squares, None if table_mode else max_removed)
    # exact mode: a final entry's count is at most C(E, R), far below C(E, E/2) when most
    # sticks are removed (5×100, R = 1093: 3 primes, not 36); its other entries' residues
    # are never decoded
    top = binomial_bound(sticks) if table_mode else math.comb(sticks, max_removed)
    primes_list = primes_for_bound(top, NARROW_PRIME_LIMIT)
    primes = xp.asarray(np.array(primes_list, dtype=U64))
    limit = live_entry_limit(max_entries, layout.words, len(primes), memory_for_entries(xp),
                             sweep_copies(xp))
    keys = [xp.zeros(1, dtype=U64) for _ in range(layout.words)]
    removed = xp.zeros(1, dtype=np.int64)
    counts = xp.ones((1, len(primes)), dtype=U64)
    decided = 0
    if table_mode and caps is None:
        caps = {q: sticks for q in range(max_squares + 1)}
    unbounded = table_mode and min(caps.values()) >= sticks
    bound = NoBound() if unbounded else UnitSquareBound(h, w, max_squares)
    stats = stats if stats is not None else SweepStats()
    begin = time.perf_counter()
    for j in range(w + 1):
        has_right = j < w
        for i in range(h + 1):
            has_down = i < h
            decided += has_down + has_right
            keys, removed, counts = step_point(
                layout, (keys, removed, counts), i, j, bound=bound, caps=caps,
                max_squares=max_squares, primes=primes, max_removed=max_removed,
                undecided=sticks - decided, min_squares=min_squares, xp=xp,
                most_successors=successor_limit(limit, layout.words, len(primes),
                                                sweep_copies(xp), memory_for_entries(xp)))
            if len(keys[0]) > limit:
                raise too_many_entries(f"{m}×{n}: the square-tracking sweep (column {j})",
                                       len(keys[0]), limit, layout.words, len(primes))
            stats.add(len(keys[0]))
            if announce is not None and (len(keys[0]) > announce[0]
                                         or time.perf_counter() - begin > announce[1]):
                announce[2]()
                announce = None
    stats.seconds += time.perf_counter() - begin
    s = layout.get(keys, "s").astype(np.int64)
    if not table_mode:
        removed = layout.get(keys, "r").astype(np.int64)
    if xp is not np:  # the few final entries back to the host
        s, removed, counts = xp.asnumpy(s), xp.asnumpy(removed), xp.asnumpy(counts)
    return s, removed, counts, primes_list


def _exact_counts(counts: np.ndarray, primes: list[int]) -> list[int]:
    return [crt([int(v) for v in row], primes) for row in counts]


def table_rows_by_sweep(m: int, n: int, squares, *,
               stats: SweepStats | None = None) -> list[tuple[int, int | None, int]]:
    """Rows ``(S, fewest R, count)`` for each S asked (``(S, None, 0)`` when impossible).

    Iterative deepening on R: each S starts with the cap ``ceil((h·w - S) / 2)`` (every
    unit square beyond S must lose a stick, a stick serves at most two) and the sweep drops
    partial configurations that cannot end at or under the cap of any S still open. An S
    found at or under its cap is exact; the others get a larger cap (+1, +2, +4, ...) and
    another sweep; an S not found with cap E is impossible.
    """
    wanted = sorted(set(squares))
    h, w = orient(m, n)
    if h >= SEPARATE_SQUARES_FROM and len(wanted) > 1:
        # One sweep per S: a single target prunes far harder than the union of 15 targets.
        return [row for q in wanted
                for row in table_rows_by_sweep(m, n, [q], stats=stats)]
    sticks = stick_count(h, w)
    start = UnitSquareBound(h, w, max(wanted)).before_start()
    caps = {q: min(sticks, int(start[min(q, len(start) - 1)])) for q in wanted}
    done: dict[int, tuple[int | None, int]] = {}
    step = 1
    while len(done) < len(wanted):
        pending = {q: caps[q] for q in wanted if q not in done}
        s, removed, counts, primes = sweep(m, n, max_squares=max(pending), stats=stats,
                                           caps=pending)
        found = {int(a): (int(b), c) for a, b, c in zip(s, removed, counts)}
        for q, cap in pending.items():
            if q in found and found[q][0] <= cap:
                done[q] = (found[q][0], crt([int(v) for v in found[q][1]], primes))
            elif cap >= sticks:
                done[q] = (None, 0)
            else:
                caps[q] = min(sticks, cap + step)
        step *= 2
    return [(q, *done[q]) for q in wanted]


def count_exact(m: int, n: int, *, removed: int, squares: int,
                stats: SweepStats | None = None, max_entries: int | None = None,
                announce: tuple[int, float, Callable[[], None]] | None = None, xp=np) -> int:
    """Valid configurations with exactly ``removed`` sticks removed and ``squares`` squares
    (``xp``, ``announce``: see :func:`sweep`; past ``max_entries`` live entries,
    :class:`TooManyEntries`)."""
    if squares > square_count(m, n) or removed > stick_count(m, n):
        return 0
    # with few squares to lose, drop the entries that cannot keep S (8 sticks, S = 30 on
    # 5×5: 2 s, not 22 s); with many, that check costs more than it saves (10, 10: +40%)
    few_lost = square_count(m, n) - squares <= FEW_LOST
    s, r, counts, primes = sweep(m, n, max_squares=squares, max_removed=removed, stats=stats,
                                 min_squares=squares if few_lost else 0,
                                 max_entries=max_entries, announce=announce, xp=xp)
    total = 0
    for a, b, value in zip(s, r, _exact_counts(counts, primes)):
        if a == squares and b == removed:
            total += value
    return total
