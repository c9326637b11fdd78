"""A sweep point's tables (point_masks.py) against the rule they encode, entry by entry."""

import dataclasses

import numpy as np
import pytest

from gpuqueens.problems.matchsticks.keys import U64, KeyLayout, bit_count
from gpuqueens.problems.matchsticks.point_masks import point_masks, unit_square_bits


def _random_keys(layout: KeyLayout, n: int, rng) -> list[np.ndarray]:
    keys = [np.zeros(n, dtype=U64) for _ in range(layout.words)]
    for name, f in layout.fields.items():
        top = layout.h + 1 if name == "t" else 1 << f.width   # t runs 0..h
        layout.put(keys, name, rng.integers(0, top, n, dtype=np.uint64))
    return keys


def _settled(layout: KeyLayout, i: int, j: int, H: int, t: int, groups: dict):
    """Point (i, j) by its definition (sweep.py's module docstring): the squares closed,
    the groups with bottom row i when the right stick of row i remains, and the valid
    (right, down) branches."""
    closed, after = 0, {}
    for r in range(i):
        u, k = i - r, layout.groups[r, i - r]
        group = groups[r, u]
        vertical = t <= r
        if j - u >= 0:
            slot = (j - u) % k
            closed += vertical and (group >> slot) & 1
            group &= ~(1 << slot)
        if not (H >> r) & 1:
            group = 0
        elif j <= layout.w - u and vertical:
            group |= 1 << (j % k)
        after[r, u] = group
    left, up = (H >> i) & 1, int(t < i)
    valid = {(right, down) for right in (0, 1) for down in (0, 1)
             if down + right > 1 or left + up != 1 - down - right}
    return closed, after, valid


@pytest.mark.parametrize("h, w", [(1, 3), (2, 2), (3, 4), (4, 4), (5, 7), (7, 7)])
def test_point_tables_settle_each_entry_as_the_rule_says(h, w):
    layout = KeyLayout(h, w, max_squares=h * w)
    rng = np.random.default_rng(h * 10 + w)
    keys = _random_keys(layout, 120, rng)
    for j in range(w + 1):
        for i in range(h + 1):
            masks = point_masks(layout, i, j)
            index = masks.index(keys)
            kept = [word if keep is None else word & keep[index]
                    for word, keep in zip(keys, masks.keep)]
            kept = [word if opened is None else word | opened[index]
                    for word, opened in zip(kept, masks.open)]
            cleared = [word if clear is None else word & clear
                       for word, clear in zip(keys, masks.clear)]
            closed = sum(bit_count(np, word & close[index])
                         for word, close in zip(keys, masks.close) if close is not None)
            for e in range(len(index)):
                entry = [word[e:e + 1] for word in keys]
                H, t = (int(layout.get(entry, name)[0]) for name in ("H", "t"))
                groups = {g: int(layout.get(entry, ("g", *g))[0]) for g in layout.groups}
                want_closed, want_after, want_valid = _settled(layout, i, j, H, t, groups)
                assert int(np.asarray(closed)[e] if np.ndim(closed) else closed) == want_closed
                valid = {(right, down) for right in (0, 1) for down in (0, 1)
                         if masks.valid[index[e]] >> (2 * right + down) & 1}
                assert valid == want_valid, (i, j, H, t)
                for g in layout.groups:
                    one = [word[e:e + 1] for word in kept]
                    none = [word[e:e + 1] for word in cleared]
                    expected = want_after.get(g, groups[g])
                    assert int(layout.get(one, ("g", *g))[0]) == expected, (i, j, g)
                    assert int(layout.get(none, ("g", *g))[0]) == (0 if g in want_after
                                                                   else groups[g])
                for name in ("H", "t", "s"):   # the tables leave the other fields alone
                    assert layout.get(kept, name)[e] == layout.get(keys, name)[e]


def test_unit_square_bits_gather_the_unit_groups():
    layout = KeyLayout(6, 7, max_squares=112)
    keys = _random_keys(layout, 200, np.random.default_rng(3))
    expected = sum(layout.get(keys, ("g", r, 1)) << U64(r) for r in range(6))
    assert (unit_square_bits(layout, keys) == expected).all()


def test_layouts_with_fields_elsewhere_are_refused():
    layout = KeyLayout(3, 3, max_squares=14)
    layout.fields["t"] = dataclasses.replace(layout.fields["t"], shift=20)
    with pytest.raises(ValueError, match="H and then t"):
        point_masks(layout, 1, 1)
    layout = KeyLayout(3, 3, max_squares=14)
    layout.fields["g", 2, 1] = dataclasses.replace(layout.fields["g", 2, 1], shift=40)
    with pytest.raises(ValueError, match="side by side"):
        unit_square_bits(layout, [np.zeros(1, dtype=U64)])
