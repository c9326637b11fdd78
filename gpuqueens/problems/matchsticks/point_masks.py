"""A sweep point's work on the open squares, as masks looked up per entry.

At point (i, j) the square-tracking sweep of :mod:`.sweep` settles the squares whose
bottom row is i: for each row pair (r, i) (r < i) the square that opened at column j - u
closes (it survives when the vertical sticks r..i of column j remain, i.e. t <= r), the
others stay open only while the top stick of row r remains, and a new one opens at
column j when its left side is intact. What happens to those groups depends on an entry
only through its t and the frontier bits H of rows 0..i, which sit together in the low
bits of key word 0 (:class:`.keys.KeyLayout` places H, then t, first). So one small table
per point, indexed by those bits, gives for every key word the mask that keeps or clears
the group bits, the bits that open, and the bits whose count is the squares closed; and
whether each (right, down) branch leaves the point valid. A step then costs a few whole-
array operations per word instead of a dozen per group (7×7: seven groups at the bottom
row).

>>> from .keys import KeyLayout, bit_count
>>> layout = KeyLayout(2, 2, max_squares=5)
>>> masks = point_masks(layout, 1, 1)     # point (1, 1): the unit square of row 0 closes
>>> keys = [np.array([0], dtype=U64)]
>>> layout.put(keys, ("g", 0, 1), U64(1))            # open, waiting for its right side
>>> layout.put(keys, "H", U64(0b011))                # rows 0 and 1 have their right stick
>>> layout.put(keys, "t", U64(0))                    # the stick between rows 0..1 remains
>>> index = masks.index(keys)
>>> int(bit_count(np, keys[0] & masks.close[0][index]).sum())   # one square closes
1
>>> kept = keys[0] & masks.keep[0][index] | masks.open[0][index]   # right stick present
>>> layout.get([kept], ("g", 0, 1)).tolist()       # the square of column 1 opens in its slot
[1]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .keys import U64, Field, KeyLayout, table_index

__all__ = ["PointMasks", "point_masks", "unit_square_bits"]


@dataclass(frozen=True)
class PointMasks:
    """The tables of point (i, j), one row per value of :meth:`index`.

    ``keep[w]``, ``open[w]``: key word w after the point, for a right stick present, is
    ``word & keep[w][index] | open[w][index]``; for a right stick missing, ``word & clear[w]``
    (one value: no square with bottom row i stays open). ``close[w]``: the bits whose set
    count is the squares closed. A table or value that would change nothing is ``None``.
    ``valid[index]``: bit ``2·right + down`` set when that branch leaves no grid point with
    exactly one stick.
    """

    i: int
    t_shift: int
    t_mask: int
    keep: tuple
    open: tuple
    close: tuple
    clear: tuple
    valid: np.ndarray

    def index(self, keys: list, xp=np):
        """Each entry's row of the tables: its H bits 0..i, then its t (arrays of module
        ``xp``: :func:`.keys.table_index`)."""
        word = keys[0]
        low = word & U64((2 << self.i) - 1)
        index = low | (((word >> U64(self.t_shift)) & U64(self.t_mask)) << U64(self.i + 1))
        return table_index(xp, index)

    def on(self, xp) -> "PointMasks":
        """The same tables as arrays of module ``xp`` (CuPy: on the current device)."""
        if xp is np:
            return self
        def move(tables):
            return tuple(None if a is None else xp.asarray(a) for a in tables)

        return PointMasks(self.i, self.t_shift, self.t_mask, move(self.keep), move(self.open),
                          move(self.close), self.clear, xp.asarray(self.valid))


def point_masks(layout: KeyLayout, i: int, j: int) -> PointMasks:
    """The tables of point (i, j) for the sweep keys of ``layout`` (cached per layout shape)."""
    return _point_masks(layout.h, layout.w, tuple(sorted(layout.fields.items(), key=repr)), i, j)


@lru_cache(maxsize=256)
def _point_masks(h: int, w: int, fields: tuple, i: int, j: int) -> PointMasks:
    fields = dict(fields)
    frontier, t_field = fields["H"], fields["t"]
    if (frontier.word, frontier.shift, t_field.word, t_field.shift) != (0, 0, 0, h + 1):
        raise ValueError("the sweep key must start with H and then t in word 0")
    words = 1 + max(f.word for f in fields.values())
    size = (2 << i) << t_field.width
    index = np.arange(size, dtype=np.int64)
    top = [((index >> r) & 1).astype(bool) for r in range(i + 1)]   # H bits 0..i
    t = index >> (i + 1)
    ones = (1 << 64) - 1
    keep = [np.full(size, ones, dtype=U64) for _ in range(words)]
    opened = [np.zeros(size, dtype=U64) for _ in range(words)]
    close = [np.zeros(size, dtype=U64) for _ in range(words)]
    clear = [ones] * words
    for r in range(i):
        u = i - r
        f = fields["g", r, u]
        k = f.width
        whole = ((1 << k) - 1) << f.shift
        vertical = t <= r                    # the sticks between rows r..i of column j remain
        clear[f.word] &= ~whole
        keep[f.word][~top[r]] &= U64(ones & ~whole)       # the top stick is gone: none stays
        if j - u >= 0:                       # the square opened at column j - u closes here
            slot = 1 << (f.shift + (j - u) % k)
            keep[f.word] &= U64(ones & ~slot)
            close[f.word][vertical] |= U64(slot)
        if j <= w - u:                       # a square opens at column j
            opened[f.word][top[r] & vertical] |= U64(1 << (f.shift + j % k))
    left = top[i]
    up = t < i
    valid = np.zeros(size, dtype=np.uint8)
    for right in (0, 1):
        for down in (0, 1):
            ok = np.ones(size, dtype=bool) if down + right > 1 else \
                (left.astype(int) + up) != 1 - down - right
            valid |= (ok.astype(np.uint8) << (2 * right + down))
    keep = tuple(None if (a == U64(ones)).all() else a for a in keep)
    opened = tuple(None if not a.any() else a for a in opened)
    close = tuple(None if not a.any() else a for a in close)
    clear = tuple(None if c == ones else U64(c) for c in clear)
    return PointMasks(i, h + 1, (1 << t_field.width) - 1, keep, opened, close, clear, valid)


def unit_square_bits(layout: KeyLayout, keys: list):
    """The open unit squares of each entry, bit r for the one with top row r: their one-bit
    groups lie side by side in one word (the layout places them right after H and t)."""
    first = layout.fields["g", 0, 1]
    if any(layout.fields["g", r, 1] != Field(first.word, first.shift + r, 1)
           for r in range(layout.h)):
        raise ValueError("the sweep key must keep its unit squares' groups side by side")
    return (keys[first.word] >> U64(first.shift)) & U64((1 << layout.h) - 1)
