"""An independent puzzle table for grids one or two squares high, however long.

It shares no code and no idea of state with the library's sweeps: it walks the grid one
*column of squares* at a time, deciding that column's horizontal sticks and the vertical
line on its right together, and remembers the last vertical lines and the last column of
horizontal sticks whole, so that every point's degree and every square's border are read
off directly, as the brute force does. Per remembered state and number of squares so far
it keeps the fewest sticks removed and the number of ways at it (exact Python ints).

>>> thin_table(1, 2, 2)   # S = 0: drop the middle stick; S = 1: drop three sticks, 2 ways
[(0, 1, 1), (1, 3, 2), (2, 0, 1)]
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

NEVER = np.iinfo(np.int64).max // 2  # "no configuration"; more than any count of sticks


def _bit(word: int, k: int) -> int:
    return (word >> k) & 1


def _all(word: int, low: int, count: int) -> bool:
    """Bits low..low+count-1 of word are all set."""
    mask = ((1 << count) - 1) << low
    return word & mask == mask


def _line_valid(h: int, left: int, right: int, line: int) -> bool:
    """No point of a vertical line has degree 1.

    ``left``/``right``: horizontal sticks of the columns on either side (bit y: row y of
    points); ``line``: its own vertical sticks (bit y: between points y and y+1).
    """
    for y in range(h + 1):
        degree = _bit(left, y) + _bit(right, y)
        degree += (y > 0 and _bit(line, y - 1)) + (y < h and _bit(line, y))
        if degree == 1:
            return False
    return True


def _squares_ending(h: int, lines: tuple, columns: tuple) -> int:
    """Squares whose right side is ``lines[-1]``: ``lines`` are the last vertical lines
    (None: left of the grid), ``columns`` the horizontal sticks between them."""
    found = 0
    for u in range(1, h + 1):
        if u >= len(lines) or lines[-1 - u] is None:
            break
        left, right, tops = lines[-1 - u], lines[-1], columns[-u:]
        for y in range(h - u + 1):
            if (_all(left, y, u) and _all(right, y, u)
                    and all(_bit(c, y) and _bit(c, y + u) for c in tops)):
                found += 1
    return found


@functools.lru_cache(maxsize=None)
def _moves(h: int, state: tuple) -> list[tuple[tuple, int, int]]:
    """From ``state = (lines, column)``: every next column and line that keeps the current
    line valid, as ``(next state, sticks removed, squares completed)``."""
    lines, column = state
    out = []
    for across, line in itertools.product(range(1 << (h + 1)), range(1 << h)):
        if not _line_valid(h, column or 0, across, lines[-1]):
            continue
        # squares ending at the new line use the last h columns of horizontals
        history = lines + (line,)
        closed = _squares_ending(h, history, _columns(state, across))
        lost = (h + 1 - bin(across).count("1")) + (h - bin(line).count("1"))
        out.append(((history[1:], across), lost, closed))
    return out


def _columns(state: tuple, across: int) -> tuple:
    # h <= 2: squares span at most two columns, the remembered one and the new one
    _, column = state
    return (column, across) if column is not None else (across,)


def _transitions(h: int):
    """Every state reachable from the leftmost line, and the moves between them as arrays
    ``(source, target, sticks removed, squares completed)`` over state indices."""
    starts = [((None,) * (h - 1) + (first,), None) for first in range(1 << h)]
    index = {state: k for k, state in enumerate(starts)}
    edges = []
    todo = list(starts)
    while todo:
        state = todo.pop()
        for target, lost, closed in _moves(h, state):
            if target not in index:
                index[target] = len(index)
                todo.append(target)
            edges.append((index[state], index[target], lost, closed))
    source, target, lost, closed = (np.array(column, dtype=np.int64) for column in zip(*edges))
    return starts, index, source, target, lost, closed


def thin_table(h: int, w: int, max_squares: int) -> list[tuple[int, int | None, int]]:
    """Rows ``(S, fewest R, ways)`` for S = 0..max_squares of an h×w grid, h in (1, 2)."""
    assert h in (1, 2) and w >= 1
    width = max_squares + 1
    starts, index, source, target, lost, closed = _transitions(h)
    fewest = np.full((len(index), width), NEVER, dtype=np.int64)
    ways = np.zeros((len(index), width), dtype=object)
    for state in starts:
        first = state[0][-1]
        fewest[index[state], 0], ways[index[state], 0] = h - bin(first).count("1"), 1
    s = np.arange(width)
    for _ in range(w):
        # every (move, s) pair: from (source, s) to (target, s + closed) with lost more sticks
        move, before = np.nonzero((fewest[source] != NEVER) & (s + closed[:, None] < width))
        frm = source[move] * width + before
        to = target[move] * width + before + closed[move]
        removed = fewest.ravel()[frm] + lost[move]
        fewest = np.full(fewest.size, NEVER, dtype=np.int64)
        np.minimum.at(fewest, to, removed)
        at_fewest = removed == fewest[to]
        counts = np.zeros(fewest.size, dtype=object)
        np.add.at(counts, to[at_fewest], ways.ravel()[frm[at_fewest]])
        fewest, ways = fewest.reshape(len(index), width), counts.reshape(len(index), width)
    best = np.full(width, NEVER, dtype=np.int64)
    total = np.zeros(width, dtype=object)
    for (lines, column), k in index.items():
        if not _line_valid(h, column or 0, 0, lines[-1]):  # the last line: nothing to its right
            continue
        better = fewest[k] < best
        tie = (fewest[k] == best) & (fewest[k] != NEVER)
        total[tie] += ways[k][tie]
        total[better] = ways[k][better]
        best[better] = fewest[k][better]
    return [(q, None, 0) if best[q] == NEVER else (q, int(best[q]), int(total[q]))
            for q in range(width)]


def thin_counts(h: int, w: int, removed: int, max_squares: int) -> list[int]:
    """Configurations of an h×w grid with exactly ``removed`` sticks removed and S squares,
    for S = 0..max_squares: the walk of :func:`thin_table` with whole polynomials in R
    (cut at ``removed``) instead of the fewest R. Slower: meant for h = 1."""
    assert h in (1, 2) and w >= 1
    width, depth = max_squares + 1, removed + 1
    starts, index, source, target, lost, closed = _transitions(h)
    counts = np.zeros((len(index), width, depth), dtype=object)
    for state in starts:
        gone = h - bin(state[0][-1]).count("1")
        if gone < depth:
            counts[index[state], 0, gone] = 1
    for _ in range(w):
        following = np.zeros_like(counts)
        for a, b, r, s in zip(source, target, lost, closed):
            if r < depth and s < width:
                following[b, s:, r:] += counts[a, : width - s, : depth - r]
        counts = following
    total = np.zeros(width, dtype=object)
    for (lines, column), k in index.items():
        if _line_valid(h, column or 0, 0, lines[-1]):
            total += counts[k, :, removed]
    return [int(v) for v in total]
