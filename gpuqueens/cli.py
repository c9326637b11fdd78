"""The ``gpuqueens`` command line: one subcommand per problem.

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
from .backends import BACKENDS, BackendUnavailableError
from .ledger import CheckpointError

__all__ = ["main", "build_parser"]


def add_run_options(parser: argparse.ArgumentParser, *, long_runs: bool = True) -> None:
    """Options the subcommands share: the backend, and for long runs progress and checkpoint."""
    parser.add_argument("--backend", choices=BACKENDS, default=None,
                        help="where to run (default: $GPUQUEENS_BACKEND, else auto: GPU if usable)")
    if long_runs:
        parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                            help="show a progress bar (default: when stderr is a terminal)")
        parser.add_argument("--checkpoint", metavar="PATH", default=None,
                            help="SQLite file recording finished work units; rerun to resume")


def _run_nqueens(args: argparse.Namespace) -> int:
    from .problems.nqueens import nqueens

    for n in args.n:
        result = nqueens(n, backend=args.backend, checkpoint=args.checkpoint, progress=args.progress)
        counts = f"unique {result.unique}" if args.unique else f"total {result.total}  unique {result.unique}"
        print(f"n={result.n}  {counts}  [{result.backend}: {result.device}]  {result.seconds:.3f} s", flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuqueens", description="Exact counts of puzzle solutions, on GPU or CPU.")
    parser.add_argument("--version", action="version", version=f"gpuqueens {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    queens = commands.add_parser("nqueens", help="count n-queens solutions (total and unique)")
    queens.add_argument("n", type=int, nargs="+", help="board size(s), 1..32")
    queens.add_argument("--unique", action="store_true", help="print only the unique count")
    add_run_options(queens)
    queens.set_defaults(handler=_run_nqueens)

    from .problems.matchsticks.cli import register

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
