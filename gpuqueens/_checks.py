"""Argument checks shared by every problem: one place for types, ranges and messages."""

from __future__ import annotations

import numbers

__all__ = ["MAX_N", "check_int", "check_board_size"]

#: Largest N-Queens board: rows and attack masks are 32-bit words.
MAX_N = 32


def check_int(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is a true integer within ``[low, high]``.

    ``bool`` is refused (``True`` is not a board size) and so are floats, even integral
    ones, and strings: silently rounding a user's input could give a wrong answer.

    >>> check_int("n", 8, low=1)
    8
    >>> check_int("n", 8.0)
    Traceback (most recent call last):
    ...
    TypeError: n must be an integer, not float (8.0)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__} ({value!r})")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high}, got {value}")
    return value


def check_board_size(n: object) -> int:
    """Check an N-Queens board size: an integer from 1 to :data:`MAX_N`."""
    if isinstance(n, numbers.Integral) and not isinstance(n, bool) and int(n) > MAX_N:
        raise ValueError(
            f"n={int(n)} is larger than the largest supported board, n={MAX_N} "
            f"(rows are {MAX_N}-bit words)"
        )
    return check_int("n", n, low=1)
