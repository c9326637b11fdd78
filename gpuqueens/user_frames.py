"""Where a warning points: the user's line, not ours.

A warning raised deep inside a count should name the line of the caller's code that started
it, as Python's own warnings do, however many of our functions (and the standard library's
context managers around them) lie between.
"""

from __future__ import annotations

import os
import sys

__all__ = ["user_stacklevel"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# Frames of these standard modules wrap ours (a @contextmanager's __enter__): not the user's.
_WRAPPERS = frozenset({"contextlib"})


def _ours(frame) -> bool:
    return frame.f_code.co_filename.startswith(_PACKAGE_DIR) or frame.f_globals.get("__name__") in _WRAPPERS


def user_stacklevel() -> int:
    """``stacklevel`` for a warning raised by our caller that points at the first frame
    outside gpuqueens: the user's call, however many of our functions lie between.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("here", UserWarning, stacklevel=user_stacklevel())
    >>> seen[0].filename.startswith(_PACKAGE_DIR)
    False
    """
    frame, level = sys._getframe(1), 1  # 1: the function that warns
    while frame is not None and _ours(frame):
        frame, level = frame.f_back, level + 1
    return level
