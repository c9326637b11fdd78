"""Progress of a long run: units done out of total, rate and time left, weighted by cost.

:class:`Progress` draws a tqdm bar (``tqdm.auto``, so a widget in a notebook) when tqdm is
installed and progress is wanted, and does nothing otherwise. Work units differ in cost, so
the bar advances by each unit's *weight* (normalised so that the whole run is worth as many
"units" as it has units): the rate and the time left then follow the work, not the count,
while the exact count of finished units is shown beside the bar.

>>> with Progress(total_units=2, total_weight=3.0, enabled=False) as bar:
...     bar.advance(1.0)
...     bar.advance(2.0)
>>> bar.units_done, bar.weight_done
(2, 3.0)
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from typing import Any

import numpy as np

from .user_frames import user_stacklevel

__all__ = ["Progress", "progress_enabled", "check_progress", "TQDM_HINT"]

#: How to get the progress bar, said once when one is asked for and tqdm is missing (the
#: package is installed from its repository, as the README says, not from PyPI).
TQDM_HINT = 'pip install ".[progress]" in the gpuqueens repository, or pip install tqdm'

_warned_no_tqdm = False


def _in_notebook() -> bool:
    """True inside a Jupyter kernel; looks only if IPython is already imported."""
    ipython_module = sys.modules.get("IPython")
    if ipython_module is None:
        return False
    try:
        shell = ipython_module.get_ipython()  # type: ignore[attr-defined]
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _installed(name: str) -> bool:
    if name in sys.modules:  # imported already, or blocked (None) by a test
        return sys.modules[name] is not None
    return importlib.util.find_spec(name) is not None


def _tqdm_installed() -> bool:
    return _installed("tqdm")


def check_progress(progress: object) -> bool | None:
    """Refuse a ``progress=`` that is not ``True``, ``False`` or ``None`` (NumPy's bools
    included); return it as a ``bool`` or ``None``.

    A string such as ``"no"`` is truthy, so accepting any value would draw a bar the caller
    meant to switch off.

    >>> check_progress(None), check_progress(False), check_progress(np.False_)
    (None, False, False)
    >>> check_progress("no")
    Traceback (most recent call last):
    ...
    TypeError: progress must be True, False or None, not str ('no')
    """
    if progress is None:
        return None
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True, False or None, not {type(progress).__name__} "
                        f"({progress!r})")
    return bool(progress)


def progress_enabled(progress: bool | None) -> bool:
    """Resolve the ``progress=`` argument: ``None`` means "when a person is watching".

    That is, when stderr is a terminal or the code runs in a notebook. The argument is
    checked first (:func:`check_progress`); ``True`` without tqdm installed warns once, per
    process, how to install it (the run goes on without a bar).

    >>> progress_enabled(False)
    False
    """
    global _warned_no_tqdm
    wanted = check_progress(progress)
    if wanted is not None:
        if wanted and not _tqdm_installed() and not _warned_no_tqdm:
            _warned_no_tqdm = True
            warnings.warn(f"no progress bar: it needs tqdm, which is not installed ({TQDM_HINT})",
                          UserWarning, stacklevel=user_stacklevel())
        return wanted
    try:
        is_tty = sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        is_tty = False
    return is_tty or _in_notebook()


#: Bar size when stderr is a terminal that reports no size (0 columns or rows: some serial
#: consoles and containers), where a bar that follows the size would draw nothing.
FALLBACK_SIZE = (80, 24)


def _fixed_size() -> tuple[int, int] | None:
    """:data:`FALLBACK_SIZE` when stderr's terminal reports a size of 0, else ``None``
    (the bar follows the terminal's width as it changes)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # not a terminal, or replaced/closed stderr
        return None
    return FALLBACK_SIZE if size.columns <= 0 or size.lines <= 0 else None


class _DroppingStream:
    """The stream a bar draws on: a write that fails (a full disk, a closed file) is dropped
    and remembered, so that the bar can go away and the count go on. tqdm must never see
    the error: its refresh releases tqdm's global lock only after a drawing that returned, so
    a raising write would leave the lock held and hang every other thread that draws a bar."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.failed = False

    def write(self, text: str) -> int:
        if not self.failed:
            try:
                return self.stream.write(text)
            except (OSError, ValueError):
                self.failed = True
        return len(text)

    def flush(self) -> None:
        if not self.failed:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self.failed = True

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, isatty: the stream's own
        return getattr(self.stream, name)

    # tqdm.write (and tqdm's logging redirection) finds the bars to clear before it writes
    # by comparing their files with its own, e.g. sys.stderr
    def __eq__(self, other: object) -> bool:
        return other is self or other is self.stream

    __hash__ = object.__hash__


def _make_bar(total: float, initial: float, description: str, postfix: str,
              file: _DroppingStream) -> Any | None:
    """A tqdm bar drawn on ``file``, or ``None`` when tqdm is not installed (then progress
    is silent)."""
    notebook = _in_notebook()
    widget = notebook and _installed("ipywidgets")
    try:
        if widget or not notebook:
            from tqdm.auto import tqdm
        else:  # a notebook without ipywidgets: the text bar that tqdm.auto would fall back
            from tqdm.std import tqdm  # to, without its "IProgress not found" warning
    except ImportError:
        return None
    fixed = _fixed_size()
    return tqdm(
        total=total,
        initial=initial,
        desc=description or None,
        unit="unit",
        # a widget moves text meant for sys.stderr itself
        file=file.stream if widget else file,
        dynamic_ncols=fixed is None,
        ncols=fixed and fixed[0],
        nrows=fixed and fixed[1],
        smoothing=0.1,
        bar_format="{l_bar}{bar}| [{elapsed}<{remaining}, {rate_fmt}{postfix}]",
        postfix=postfix,
    )


class Progress:
    """A progress reporter for ``total_units`` work units of summed weight ``total_weight``.

    ``enabled=False`` (or no tqdm) makes every method a no-op apart from the counters.
    ``already_units``/``already_weight`` count units finished before this run (a
    resumed run): they fill the bar but do not count towards the rate.
    """

    def __init__(
        self, total_units: int, total_weight: float, *, enabled: bool, description: str = "",
        already_units: int = 0, already_weight: float = 0.0,
    ) -> None:
        self.total_units = total_units
        self.total_weight = float(total_weight)
        self.units_done = already_units
        self.weight_done = float(already_weight)
        # Scale weights so that the bar's total equals the number of units: its rate is then
        # in "average units per second" and its time left is weighted by cost.
        self._scale = total_units / self.total_weight if self.total_weight > 0 else 0.0
        self._bar = None
        # started with file 2 closed (or pythonw): sys.stderr is None, nowhere to draw a bar
        if enabled and sys.stderr is not None:
            self._stream = _DroppingStream(sys.stderr)
            self._bar = _make_bar(total_units, self.weight_done * self._scale, description,
                                  self._postfix(), self._stream)
            self._drop_if_unwritable()

    def _drop_if_unwritable(self) -> None:
        """The bar is advice: where stderr cannot be written (a full disk, a closed file),
        it goes away, and the count goes on."""
        if self._bar is not None and self._stream.failed:
            self.close()  # its last lines are dropped too; tqdm forgets the bar

    def _postfix(self) -> str:
        return f"{self.units_done}/{self.total_units} units"

    def note(self, text: str) -> None:
        """Show ``text`` after the units until the next unit finishes (work that is not a
        new unit, such as the re-check of stored units: a long unit leaves the bar still)."""
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self._postfix()}, {text}", refresh=True)
            self._drop_if_unwritable()

    def advance(self, weight: float = 1.0) -> None:
        """Count one more finished unit of the given weight."""
        self.units_done += 1
        self.weight_done += weight
        if self._bar is not None:
            self._bar.set_postfix_str(self._postfix(), refresh=False)
            step = weight * self._scale
            if self.units_done == self.total_units:  # end exactly full despite rounding
                step = self._bar.total - self._bar.n
            self._bar.update(step)
            self._drop_if_unwritable()

    def close(self) -> None:
        """Finish the bar (idempotent)."""
        bar, self._bar = self._bar, None
        if bar is not None:
            bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
