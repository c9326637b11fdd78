"""The matchstick subcommands of ``gpuqueens``; :func:`register` adds them to a parser.

    gpuqueens matchsticks 4 4 --removed 9 --squares 0
    gpuqueens matchsticks 7 7 --removed 23 --squares 5 --checkpoint p2.sqlite
    gpuqueens matchstick-counts 12 12 --progress
    gpuqueens matchstick-table 4 4 --squares 0-14
    gpuqueens matchstick-table 7 7 --workers 1
"""

from __future__ import annotations

import argparse
import itertools
import re
import time

from ...cli_options import add_progress_option, add_recheck_option, add_run_options
from .api import (by_removed_backend, matchstick_counts, matchstick_table, matchsticks,
                  square_tracking_backend)

__all__ = ["register", "parse_squares", "handle"]


def parse_squares(text: str) -> list[range]:
    """Parse ``--squares``: ``"0-14"``, ``"3"`` or ``"0,2,5-7"``, as ranges of S.

    The ranges are not expanded here: the table checks each S against the grid's number
    of squares as it reads them, so ``0-1000000000`` is refused at once, not built.

    >>> parse_squares("0,2,5-7")
    [range(0, 1), range(2, 3), range(5, 8)]
    """
    parts = []
    for part in text.split(","):
        found = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", part)  # no signs: "1--2"
        if found is None:
            raise argparse.ArgumentTypeError(
                f"--squares takes numbers and ranges like 0-14 or 1,3,5, not {text!r}")
        first = int(found[1])
        last = int(found[2]) if found[2] is not None else first
        if last < first:
            raise argparse.ArgumentTypeError(f"--squares {part.strip()}: a range goes up, as in {last}-{first}")
        parts.append(range(first, last + 1))
    return parts


def grid_side(text: str) -> int:
    """A side of the grid on the command line (its range is checked later, with the rest);
    "4x4" gets a hint, as the benchmarks write grids that way.

    >>> grid_side("4")
    4
    """
    try:
        return int(text)
    except ValueError:
        rows, x, columns = text.lower().replace("×", "x").partition("x")
        hint = f": give the rows and the columns as two numbers, {rows} {columns}" if x else ""
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number{hint}") from None


def _add_grid(parser) -> None:
    parser.add_argument("m", type=grid_side, help="rows of squares")
    parser.add_argument("n", type=grid_side, help="columns of squares")


def register(subparsers) -> None:
    """Add ``matchsticks``, ``matchstick-counts`` and ``matchstick-table`` to ``subparsers``."""
    one = subparsers.add_parser("matchsticks", help="valid matchstick configurations with R removed (and S squares)")
    _add_grid(one)
    one.add_argument("--removed", type=int, required=True, metavar="R", help="sticks removed")
    one.add_argument("--squares", type=int, default=None, metavar="S", help="squares that survive")
    add_run_options(one)   # progress, checkpoint and workers: for the centre join (S, side 6-7)
    add_recheck_option(one)
    one.set_defaults(handler=handle, matchstick_command="count")

    counts = subparsers.add_parser("matchstick-counts", help="valid configurations for every R")
    _add_grid(counts)
    add_run_options(counts, long_runs=False)
    add_progress_option(counts)
    counts.set_defaults(handler=handle, matchstick_command="counts")

    table = subparsers.add_parser("matchstick-table", help="fewest removals leaving exactly S squares")
    _add_grid(table)
    table.add_argument("--squares", type=parse_squares, default=None, metavar="0-14",
                       help="S values: a range 0-14 or a list 1,3,5, at most the grid's "
                            "number of squares (default 0-14, as far as the grid has squares)")
    add_run_options(table)
    add_recheck_option(table)
    table.set_defaults(handler=handle, matchstick_command="table")


def handle(args: argparse.Namespace) -> int:
    """Run one matchstick subcommand and print the result, the backend and the time."""
    start = time.perf_counter()
    # The counts check their arguments before they choose the backend (and say, once, that
    # there is no GPU): the label below asks again, without a second probe or warning.
    if args.matchstick_command == "count":
        value = matchsticks(args.m, args.n, removed=args.removed, squares=args.squares,
                            backend=args.backend, checkpoint=args.checkpoint,
                            progress=args.progress, recheck=args.recheck, workers=args.workers)
        if args.squares is None:
            backend = by_removed_backend(args.m, args.n, args.removed, args.backend)
        else:
            backend = square_tracking_backend(args.backend)
        what = f"R={args.removed}" + ("" if args.squares is None else f" S={args.squares}")
        text = f"{args.m}×{args.n} {what}: {value}"
    elif args.matchstick_command == "counts":
        values = matchstick_counts(args.m, args.n, backend=args.backend, progress=args.progress)
        backend = by_removed_backend(args.m, args.n, None, args.backend)
        text = "\n".join(f"R={r:<4d} {c}" for r, c in enumerate(values))
        text += f"\ntotal  {sum(values)}"
    else:
        squares = None if args.squares is None else itertools.chain.from_iterable(args.squares)
        table = matchstick_table(args.m, args.n, squares, backend=args.backend,
                                 checkpoint=args.checkpoint, progress=args.progress,
                                 recheck=args.recheck, workers=args.workers)
        text, backend = str(table), table.backend
    seconds = time.perf_counter() - start
    print(text)
    print(f"[{backend}] {seconds:.3f} s", flush=True)
    return 0
