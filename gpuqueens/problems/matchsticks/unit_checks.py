"""What a correct unit of the centre join can return, checked before it is recorded.

A count by squares and a puzzle table add up the results of many work units, which reach
this process from its own search, from an executor's workers (on their GPUs), or from a
checkpoint. A faulty device, a faulty executor or a checkpoint edited with its row
checksums recomputed can hand back a result that no correct unit gives, and combined it
would be a wrong number: one residue off turns a count by squares into garbage of the size
of the primes' product. These checks refuse the impossible with
:class:`gpuqueens.runner.InconsistentCountError` (as N-Queens' Burnside check does), each
unit's result before the runner records it (``run_units(check=...)``) and when it is read
from a checkpoint: a residue not below its prime; a fewest R above its round's cap, an R
without ways or ways without an R; and, once the units are added up, a count above
C(E, R) (every way to remove R of the E sticks). A wrong value that is still possible
passes; the checkpoint's re-check samples units for those.

>>> check_residues("C0", (3, 4), [5, 7])
>>> check_residues("C0", (5, 4), [5, 7])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
gpuqueens.runner.InconsistentCountError: unit 'C0' returned residue 5 modulo 5, which no count has; ...
>>> check_count(6, sticks=4, removed=2, what="a 1×1 grid")
6
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ...runner import InconsistentCountError

__all__ = ["check_residues", "check_count", "check_fewest"]

_BLAME = "a device, an executor or a checkpoint gave a wrong result"


def check_residues(key: str, result: Sequence[int], primes: Sequence[int]) -> None:
    """A unit's residues are in ``[0, p)`` for their primes, one per prime."""
    if len(result) != len(primes):
        raise InconsistentCountError(
            f"unit {key!r} returned {len(result)} residues for {len(primes)} primes; {_BLAME}")
    for value, p in zip(result, primes):
        if not 0 <= value < p:
            raise InconsistentCountError(
                f"unit {key!r} returned residue {value} modulo {p}, which no count has; {_BLAME}")


def check_count(count: int, *, sticks: int, removed: int, what: str) -> int:
    """``count`` itself if it can be a number of ways to remove ``removed`` of ``sticks``
    sticks: ``0 <= count <= C(sticks, removed)``."""
    most = math.comb(sticks, removed) if 0 <= removed <= sticks else 0
    if not 0 <= count <= most:
        raise InconsistentCountError(
            f"{what}: the units add up to {count} ways to remove {removed} sticks, but there "
            f"are only {most} ways to remove {removed} of its {sticks} sticks at all; {_BLAME}")
    return count


def check_fewest(key: str, flat: Sequence[int], caps: Mapping[int, int], *, sticks: int, what: str) -> None:
    """A unit's ``(R, count)`` pairs, one per S of ``caps`` in increasing S: ``(-1, 0)``
    where the unit found none, else ``0 <= R <= caps[S]`` and ``1 <= count <= C(E, R)``."""
    squares = sorted(caps)
    if len(flat) != 2 * len(squares):
        raise InconsistentCountError(
            f"{what}: unit {key!r} returned {len(flat)} values for {len(squares)} S; {_BLAME}")
    for k, q in enumerate(squares):
        r, count = flat[2 * k], flat[2 * k + 1]
        if r == -1 and count == 0:
            continue
        if not 0 <= r <= caps[q] or not 1 <= count <= math.comb(sticks, r):
            raise InconsistentCountError(
                f"{what}: unit {key!r} returned R = {r} with {count} ways for S = {q}, which no "
                f"configuration gives (R at most {caps[q]} here, and at most C({sticks}, R) "
                f"ways); {_BLAME}")
