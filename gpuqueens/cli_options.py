"""Command-line options that every problem's subcommands share, in one place below them.

Each problem's ``cli`` module adds its subcommands with these options; the top-level
:mod:`gpuqueens.cli` only assembles the parser and turns errors into one-line messages.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .backends import BACKENDS

__all__ = ["add_run_options", "add_progress_option", "add_recheck_option"]


def add_run_options(parser: argparse.ArgumentParser, *, long_runs: bool = True) -> None:
    """The backend, and for long runs (work units through the runner) progress, checkpoint
    and workers."""
    parser.add_argument("--backend", type=_backend_name, choices=BACKENDS, default=None,
                        help="where to run, in any case (default: $GPUQUEENS_BACKEND, else "
                             "auto: GPU if usable)")
    if long_runs:
        add_progress_option(parser)
        parser.add_argument("--checkpoint", metavar="PATH", default=None,
                            help="SQLite file recording finished work units; rerun to resume")
        parser.add_argument("--workers", type=_whole_number_from(1), default=None, metavar="K",
                            help="processes that solve work units: 1 = this one only; on the "
                                 "CPU at most one per core (default: every GPU, or every "
                                 "core, for long runs)")


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress``: for every subcommand whose call takes ``progress=``."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar (needs tqdm; default: when stderr is a "
                             "terminal)")


def _backend_name(text: str) -> str:
    # as the Python API and GPUQUEENS_BACKEND take it: any case, spaces around ignored
    return text.strip().lower()


def _whole_number_from(low: int) -> Callable[[str], int]:
    """A parser of whole numbers from ``low`` up, for argparse's ``type=``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"takes a whole number from {low} up, not {text!r}")
        return value

    return parse


def add_recheck_option(parser: argparse.ArgumentParser) -> None:
    """``--recheck K``: for subcommands whose call takes ``recheck=`` (with ``--checkpoint``)."""
    parser.add_argument("--recheck", type=_whole_number_from(0), default=1, metavar="K",
                        help="with --checkpoint: solve K work units again, at random, and "
                             "refuse the checkpoint if one differs: K stored ones when "
                             "resuming, K of this run's at the end (default 1, about one "
                             "unit's time each; 0: off)")
