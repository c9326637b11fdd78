"""The ``gpuqueens`` command line: each problem's ``cli`` module adds its subcommands.

    gpuqueens nqueens 12                  # total and unique counts, backend and time
    gpuqueens nqueens 20 --checkpoint run.sqlite --progress
    gpuqueens matchstick-table 4 4        # see `gpuqueens --help` for all subcommands
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from ._version import __version__
from .backends import BackendUnavailableError, DeviceCheckError
from .ledger import CheckpointError
from .worker_pool import WorkerProcessError
from .problems.matchsticks import cli as matchsticks_cli
from .problems.nqueens import cli as nqueens_cli
from .runner import InconsistentCountError

__all__ = ["main", "command", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that help or version text that cannot be written to stdout
    (a full disk) raises the OSError (recent Pythons' argparse drops it silently, 3.11.7 and
    3.12 on, and the command then exited 0 having printed nothing); its subcommands' parsers
    are of this class too."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message and file is not None and file is sys.stdout:
            file.write(message)
            file.flush()
        else:
            super()._print_message(message, file)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpuqueens", description="Exact counts of puzzle solutions, on GPU or CPU.")
    parser.add_argument("--version", action="version", version=f"gpuqueens {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in (nqueens_cli.register, matchsticks_cli.register):
        register(commands)
    for command in commands.choices.values():  # an unknown option gets its command's usage
        command.set_defaults(command_parser=command)
    return parser


def _tell(line: str, file=None) -> None:
    """One line for the user on stderr (or ``file``). Where it cannot be written (file 2
    closed: Python's ``sys.stderr`` is None, and print() would put the line among the
    counts on stdout; a full disk), it is dropped: the counts still go to stdout."""
    file = sys.stderr if file is None else file
    if file is None:
        return
    with contextlib.suppress(OSError, ValueError):
        print(line, file=file, flush=True)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # one plain line for a terminal user instead of Python's file:line warning format
    _tell(f"gpuqueens: warning: {message}", file)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a job scheduler's time limit): the same orderly stop as Ctrl-C."""


@contextlib.contextmanager
def _signals_stop_once(exit_after_stop: bool = False) -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated`, so that worker processes are stopped and the
    checkpoint keeps every finished unit, as on Ctrl-C; and let only the first SIGINT or
    SIGTERM stop the run.

    A second signal of a burst (Ctrl-C twice, or Ctrl-C and a scheduler's SIGTERM) used to
    raise again inside the first one's clean-up: in ``threading``'s lock code (``release
    unlocked lock``), or before the worker processes were ended, which then kept the
    process waiting for them at exit. So the first signal handled raises and decides the
    exit code (two that arrive together, before Python handles either, count as SIGINT,
    the lower number), and later ones are ignored while the stop runs; the handlers are
    put back when :func:`main` returns. With ``exit_after_stop`` (the command), after a
    stop the signal that stopped it gets the system's default action and the other one is
    ignored, while Python exits: a SIGTERM then after Ctrl-C killed it with status 143, not
    130; the same signal again still ends an exit that hangs (a stuck driver call), with
    the same status. (Not Python handlers: Python resets those as it finalizes.) A SIGINT
    that is ignored, or handled by another handler than Python's default (an embedding
    program's), is left alone.
    """
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    stopped_by = None

    def stop(number: int, _frame: object) -> None:
        nonlocal stopped_by
        if stopped_by is not None:  # the stop is under way: a raise now would interrupt its clean-up
            return
        stopped_by = number
        raise Terminated() if number == signal.SIGTERM else KeyboardInterrupt()

    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, stop)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        for number, handler in previous.items():
            if stopped_by is not None and exit_after_stop:
                handler = signal.SIG_DFL if number == stopped_by else signal.SIG_IGN
            signal.signal(number, handler)


def _silence_stdout() -> None:
    """Point stdout at the null device, so that Python's final flush of output nobody can
    read (a closed pipe, a full disk) does not print a second error at exit."""
    try:
        sys.stdout.flush()
    except OSError:
        pass
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def _stdout_is_closed() -> bool:
    """Python sets ``sys.stdout`` to None when the process starts with file 1 closed
    (``gpuqueens nqueens 20 >&-``); print() would then drop the counts without a word."""
    return sys.stdout is None or getattr(sys.stdout, "closed", False)


#: What stdout and stderr get for the characters of gpuqueens' lines that they cannot encode
#: (``PYTHONIOENCODING=ascii``, an ASCII locale): the line, above all the count, still prints.
ASCII_STAND_INS = {"×": "x", "·": "*", "–": "-", "—": "-", "−": "-", "…": "...", "≈": "~",
                   "≤": "<=", "≥": ">=", "²": "^2"}


def _stand_in(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start:error.end]
    return "".join(ASCII_STAND_INS.get(char, "?") for char in text), error.end


codecs.register_error("gpuqueens.stand_in", _stand_in)


@contextlib.contextmanager
def _stand_ins_where_needed() -> Iterator[None]:
    """stdout and stderr write :data:`ASCII_STAND_INS` (else ``?``) for what they cannot
    encode, until :func:`main` returns (where they encode everything, nothing changes)."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        errors = getattr(stream, "errors", None)  # Python's defaults; not a handler of the user's
        if errors in ("strict", "backslashreplace") and hasattr(stream, "reconfigure"):
            with contextlib.suppress(ValueError, OSError):  # a closed stream: told elsewhere
                stream.reconfigure(errors="gpuqueens.stand_in")
                changed.append((stream, errors))
    try:
        yield
    finally:
        for stream, errors in changed:
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors=errors)


def main(argv: Sequence[str] | None = None) -> int:
    with _stand_ins_where_needed():
        return _main(argv)


def command() -> int:
    """The ``gpuqueens`` command (and ``python -m gpuqueens``): :func:`main`, after which,
    if a signal stopped the run, a later signal ends the process at once with the same
    exit status (see :func:`_signals_stop_once`)."""
    with _stand_ins_where_needed():
        return _main(None, exit_after_stop=True)


def _main(argv: Sequence[str] | None, exit_after_stop: bool = False) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        parser.error(f"unrecognized arguments: {argv[0]} (the command comes first: "
                     "gpuqueens COMMAND [options], e.g. gpuqueens nqueens 12 --backend cpu)")
    try:
        args, unknown = parser.parse_known_args(argv)
    except BrokenPipeError:  # `gpuqueens --help | head -1`: quiet, as for the counts
        _silence_stdout()
        return 128 + signal.SIGPIPE if hasattr(signal, "SIGPIPE") else 1
    except OSError as exc:  # --help or --version could not be written (a full disk)
        _silence_stdout()
        _tell(f"gpuqueens: error: {exc}")
        return 1
    if unknown:
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if _stdout_is_closed():
        _tell("gpuqueens: error: standard output is closed: the counts could not be printed")
        return 1
    with _signals_stop_once(exit_after_stop):  # around the except clauses too: they run the stop's last steps
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; its exit code (README: Exit codes), a failure told in one line."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.handler(args)
    except (ValueError, TypeError, BackendUnavailableError, CheckpointError) as exc:
        _tell(f"gpuqueens: error: {exc}")
        return 2
    except KeyboardInterrupt as stop:
        hint = " (rerun with the same --checkpoint to resume)" if getattr(args, "checkpoint", None) else ""
        terminated = isinstance(stop, Terminated)
        _tell(f"gpuqueens: {'terminated' if terminated else 'interrupted'}{hint}")
        return 128 + signal.SIGTERM if terminated else 130
    except (DeviceCheckError, InconsistentCountError) as exc:  # a faulty device: one line
        _tell(f"gpuqueens: error: {exc}")
        return 1
    except WorkerProcessError as exc:  # killed (out of memory?): one line, as for the errors above
        notes = "".join(f" {note}" for note in getattr(exc, "__notes__", ()))
        hint = "; the checkpoint keeps the finished units: rerun the same command to resume" if getattr(
            args, "checkpoint", None) else ""
        _tell(f"gpuqueens: error: {exc}{notes}{hint}")
        return 1
    except BrokenPipeError:  # the reader went away (`gpuqueens nqueens 8 9 | head -1`): stop quietly
        _silence_stdout()
        return 128 + signal.SIGPIPE if hasattr(signal, "SIGPIPE") else 1
    except OSError as exc:  # the output could not be written (a full disk), or another system error
        _silence_stdout()
        _tell(f"gpuqueens: error: {exc}")
        return 1
