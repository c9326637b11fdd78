"""The ``gpuqueens nqueens`` subcommand; :func:`register` adds it to a parser.

    gpuqueens nqueens 12
    gpuqueens nqueens 8 9 10 --unique
    gpuqueens nqueens 20 --checkpoint n20.sqlite --progress
    gpuqueens nqueens 17 --workers 4
"""

from __future__ import annotations

import argparse

from ..._checks import check_board_size
from ...cli_options import add_recheck_option, add_run_options

__all__ = ["register", "handle"]


def register(subparsers) -> None:
    """Add ``nqueens`` to ``subparsers``."""
    queens = subparsers.add_parser("nqueens", help="count n-queens solutions (total and unique)")
    queens.add_argument("n", type=int, nargs="+",
                        help="board size(s), 1..32 (one at a time with --checkpoint: a "
                             "checkpoint file records one run)")
    queens.add_argument("--unique", action="store_true", help="print only the unique count")
    add_run_options(queens)
    add_recheck_option(queens)
    queens.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Count each board size asked for and print the counts, the backend and the time."""
    from . import nqueens

    if args.checkpoint is not None and len(args.n) > 1:
        # A checkpoint records one run; a second board size would meet the first one's ledger.
        raise ValueError("--checkpoint takes one board size at a time (a checkpoint file records "
                         f"one run); got {len(args.n)} sizes")
    for n in args.n:  # every size is checked before the first is counted
        check_board_size(n)
    for n in args.n:
        result = nqueens(n, backend=args.backend, checkpoint=args.checkpoint,
                         progress=args.progress, recheck=args.recheck, workers=args.workers)
        counts = f"unique {result.unique}" if args.unique else f"total {result.total}  unique {result.unique}"
        print(f"n={result.n}  {counts}  [{result.backend}: {result.device}]  {result.seconds:.3f} s", flush=True)
    return 0
