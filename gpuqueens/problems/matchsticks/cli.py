"""The matchstick subcommands of ``gpuqueens``; :func:`register` adds them to a parser.

    gpuqueens matchsticks 4 4 --removed 9 --squares 0
    gpuqueens matchstick-counts 10 10
    gpuqueens matchstick-table 4 4 --squares 0-14
"""

from __future__ import annotations

import argparse
import time

from ...backends import resolve_backend
from ...cli_options import add_run_options

__all__ = ["register", "parse_squares", "handle"]


def parse_squares(text: str) -> list[int]:
    """Parse ``--squares``: ``"0-14"``, ``"3"`` or ``"0,2,5-7"``.

    >>> parse_squares("0,2,5-7")
    [0, 2, 5, 6, 7]
    """
    values: set[int] = set()
    try:
        for part in text.split(","):
            low, dash, high = part.strip().partition("-")
            values.update(range(int(low), int(high) + 1) if dash else [int(low)])
    except ValueError:
        raise argparse.ArgumentTypeError(f"--squares takes numbers and ranges like 0-14 or 1,3,5, not {text!r}")
    return sorted(values)


def register(subparsers) -> None:
    """Add ``matchsticks``, ``matchstick-counts`` and ``matchstick-table`` to ``subparsers``."""
    one = subparsers.add_parser("matchsticks", help="valid matchstick configurations with R removed (and S squares)")
    one.add_argument("m", type=int, help="rows of squares")
    one.add_argument("n", type=int, help="columns of squares")
    one.add_argument("--removed", type=int, required=True, metavar="R", help="sticks removed")
    one.add_argument("--squares", type=int, default=None, metavar="S", help="squares that survive")
    add_run_options(one, long_runs=False)
    one.set_defaults(handler=handle, matchstick_command="count")

    counts = subparsers.add_parser("matchstick-counts", help="valid configurations for every R")
    counts.add_argument("m", type=int)
    counts.add_argument("n", type=int)
    add_run_options(counts, long_runs=False)
    counts.set_defaults(handler=handle, matchstick_command="counts")

    table = subparsers.add_parser("matchstick-table", help="fewest removals leaving exactly S squares")
    table.add_argument("m", type=int)
    table.add_argument("n", type=int)
    table.add_argument("--squares", type=parse_squares, default=list(range(15)), metavar="0-14",
                       help="S values: a range 0-14 or a list 1,3,5 (default 0-14)")
    add_run_options(table)
    table.set_defaults(handler=handle, matchstick_command="table")


def handle(args: argparse.Namespace) -> int:
    """Run one matchstick subcommand and print the result, the backend and the time."""
    from . import matchstick_counts, matchstick_table, matchsticks

    backend = resolve_backend(args.backend)
    start = time.perf_counter()
    if args.matchstick_command == "count":
        value = matchsticks(args.m, args.n, removed=args.removed, squares=args.squares, backend=backend)
        what = f"R={args.removed}" + ("" if args.squares is None else f" S={args.squares}")
        text = f"{args.m}×{args.n} {what}: {value}"
    elif args.matchstick_command == "counts":
        values = matchstick_counts(args.m, args.n, backend=backend)
        text = "\n".join(f"R={r:<4d} {c}" for r, c in enumerate(values))
        text += f"\ntotal  {sum(values)}"
    else:
        text = str(matchstick_table(args.m, args.n, args.squares, backend=backend,
                                    checkpoint=args.checkpoint, progress=args.progress))
        backend = "cpu"  # the square-tracking DP always runs on the CPU
    seconds = time.perf_counter() - start
    print(text)
    print(f"[{backend}] {seconds:.3f} s", flush=True)
    return 0
