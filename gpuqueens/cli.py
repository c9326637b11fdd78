"""The ``gpuqueens`` command line: each problem's ``cli`` module adds its subcommands.

    gpuqueens nqueens 12                  # total and unique counts, backend and time
    gpuqueens nqueens 20 --checkpoint run.sqlite --progress
    gpuqueens matchstick-table 4 4        # see `gpuqueens --help` for all subcommands
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from ._version import __version__
from .backends import BackendUnavailableError
from .ledger import CheckpointError
from .problems.matchsticks import cli as matchsticks_cli
from .problems.nqueens import cli as nqueens_cli

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuqueens", description="Exact counts of puzzle solutions, on GPU or CPU.")
    parser.add_argument("--version", action="version", version=f"gpuqueens {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in (nqueens_cli.register, matchsticks_cli.register):
        register(commands)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # one plain line for a terminal user instead of Python's file:line warning format
    print(f"gpuqueens: warning: {message}", file=sys.stderr if file is None else file)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.handler(args)
    except (ValueError, TypeError, BackendUnavailableError, CheckpointError) as exc:
        print(f"gpuqueens: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        hint = " (rerun with the same --checkpoint to resume)" if getattr(args, "checkpoint", None) else ""
        print(f"gpuqueens: interrupted{hint}", file=sys.stderr)
        return 130
