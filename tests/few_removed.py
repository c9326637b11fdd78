"""Every way to remove a few sticks of a grid, enumerated one by one: the independent check
of the counts with few removals (problem 2 and the table's rows far up in S)."""

import itertools
from collections import Counter


def few_removed(m: int, n: int, removed: int) -> dict[int, int]:
    """{S: ways} over every way to remove exactly ``removed`` sticks of an m×n grid, by
    enumeration (a few sticks only): a removal is valid when no point it touches is left
    with one stick, and a square survives when none of its sides' sticks is removed."""
    sticks = ([("h", r, c) for r in range(m + 1) for c in range(n)]
              + [("v", r, c) for r in range(m) for c in range(n + 1)])
    present = set(sticks)
    squares = [(r, c, k) for k in range(1, min(m, n) + 1)
               for r in range(m - k + 1) for c in range(n - k + 1)]

    def sides(r, c, k):
        return ({("h", r, c + t) for t in range(k)} | {("h", r + k, c + t) for t in range(k)}
                | {("v", r + t, c) for t in range(k)} | {("v", r + t, c + k) for t in range(k)})

    def ends(stick):
        kind, r, c = stick
        return [(r, c), (r, c + 1)] if kind == "h" else [(r, c), (r + 1, c)]

    def degree(point, gone):
        r, c = point
        around = [("h", r, c - 1), ("h", r, c), ("v", r - 1, c), ("v", r, c)]
        return sum(1 for s in around if s in present and s not in gone)

    on_sides = {s: [] for s in sticks}
    for q in squares:
        for s in sides(*q):
            on_sides[s].append(q)
    ways = Counter()
    for gone in map(set, itertools.combinations(sticks, removed)):
        if any(degree(p, gone) == 1 for s in gone for p in ends(s)):
            continue
        ways[len(squares) - len({q for s in gone for q in on_sides[s]})] += 1
    return ways
