"""Long runs that survive and scale: work units -> an executor -> a checkpoint -> a progress bar.

A problem splits its count into :class:`WorkUnit` s, each with a stable key and a picklable
payload, and gives :func:`run_units` a picklable ``solve(payload) -> tuple[int, ...]``.
:func:`run_units` solves every unit, in this process or on any
:class:`concurrent.futures.Executor` (threads, processes, or a Dask cluster through
``distributed.Client.get_executor()``), records each result in an optional SQLite ledger
(:mod:`gpuqueens.ledger`) as soon as it arrives, and returns ``{key: result}``. Run again
with the same checkpoint, it solves only the units the ledger does not hold yet.

>>> def solve(payload):  # sum and count of a range of integers
...     return (sum(payload), len(payload))
>>> units = [WorkUnit(f"u{i}", range(10 * i, 10 * i + 10)) for i in range(3)]
>>> results = run_units(units, solve, job={"problem": "demo"}, progress=False)
>>> results
{'u0': (45, 10), 'u1': (145, 10), 'u2': (245, 10)}
>>> tuple(map(sum, zip(*results.values())))
(435, 30)
"""

from __future__ import annotations

import concurrent.futures
import math
import numbers
import os
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .estimates import Pace
from .ledger import CheckpointError, Ledger, canonical_json, stored_keys
from .progress import Progress, progress_enabled
from .run_options import check_executor, check_run_options, executor_workers

__all__ = ["WorkUnit", "run_units", "units_to_solve", "check_result", "check_run_options",
           "check_executor", "executor_workers", "CheckpointError", "InconsistentCountError"]


class InconsistentCountError(RuntimeError):
    """Unit results that no correct search can give (a faulty device, a faulty executor, or
    a checkpoint edited with its checksums recomputed): raised by a problem's combining step
    instead of returning a count made from them."""


@dataclass(frozen=True)
class WorkUnit:
    """One independent piece of a count.

    ``key`` is its stable identity (the same plan must give the same keys, in the same
    order, on every run: the checkpoint relies on it); ``payload`` is the picklable input
    of the solver; ``weight`` is its expected relative cost, used only for the progress
    bar's rate and time left.
    """

    key: str
    payload: Any
    weight: float = 1.0


def check_result(key: str, result: object) -> tuple[int, ...]:
    """Return a unit's result as a tuple of Python ints, or raise ``TypeError``.

    Tuples and lists of integers are accepted, NumPy integer scalars included (converted
    exactly); floats, booleans, strings and anything else are refused, since a count that
    went through a float may already be wrong.

    >>> check_result("u1", (3, 4))
    (3, 4)
    >>> check_result("u1", (3.0, 4))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: work unit 'u1': the solver returned (3.0, 4); ... item 0 is a float
    """
    if not isinstance(result, (tuple, list)):
        raise TypeError(
            f"work unit {key!r}: the solver returned {result!r} ({type(result).__name__}); "
            "a result must be a tuple of integers"
        )
    values = []
    for index, value in enumerate(result):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(
                f"work unit {key!r}: the solver returned {result!r}; a result must be a "
                f"tuple of integers, and item {index} is a {type(value).__name__}"
            )
        values.append(int(value))
    return tuple(values)


def _check_units(units: Sequence[WorkUnit]) -> list[WorkUnit]:
    checked = list(units)
    seen: set[str] = set()
    for unit in checked:
        if not isinstance(unit, WorkUnit):
            raise TypeError(f"work units must be WorkUnit objects, not {type(unit).__name__}")
        if not isinstance(unit.key, str) or not unit.key:
            raise TypeError(f"a work unit key must be a non-empty string, not {unit.key!r}")
        if unit.key in seen:
            raise ValueError(f"work unit key {unit.key!r} appears twice")
        seen.add(unit.key)
        weight = unit.weight
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not (
            math.isfinite(weight) and weight > 0
        ):
            raise ValueError(
                f"work unit {unit.key!r}: weight must be a positive number, not {weight!r}"
            )
    return checked


_BROKEN_POOL = ("(a process of the executor's pool ended abruptly: killed, out of memory, or, with "
                "the spawn or forkserver start method, a script whose top-level code is not under "
                "`if __name__ == \"__main__\":`, which every new process of the pool runs again)")

_CLOSED_EXECUTOR = ("(the executor given as executor= takes no more work: it was shut down, or "
                    "the `with` block that made it has ended; pass one that is open)")


_CANCELLED_UNIT = ("(the executor given as executor= cancelled this unit before it ran: it was "
                   "shut down with cancel_futures=True, or something cancelled its future; with a "
                   "checkpoint, the units finished before are kept and a rerun resumes from them)")


def _unit_note(key: str) -> str:
    return f"(raised while solving work unit {key!r})"


def _add_note(exc: BaseException, note: str) -> None:
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note(note)
    else:  # Python 3.10: kept where 3.11 keeps notes, for whoever reads them
        try:
            exc.__notes__ = [*getattr(exc, "__notes__", []), note]  # type: ignore[attr-defined]
        except (AttributeError, TypeError):  # an exception type that takes no attributes
            pass


class _ResultWidth:
    """Every unit of a run gives as many numbers (the counts that the units add up).

    Checked on every result, stored or new, so that a ledger row edited to another length
    (its checksum recomputed) is refused instead of breaking the caller's sums.
    """

    def __init__(self, checkpoint: str | None, width: int | None = None) -> None:
        self.checkpoint = checkpoint
        self.width = width
        self.first_key = ""   # the unit that set the width ("" when the caller gave it)
        self.from_ledger = False

    def check(self, key: str, result: tuple[int, ...], *, stored: bool) -> None:
        if self.width is None:
            self.width, self.first_key, self.from_ledger = len(result), key, stored
        elif len(result) != self.width:
            size = f"{len(result)} number{'' if len(result) == 1 else 's'}"
            if not self.first_key:
                if stored:
                    raise CheckpointError(
                        f"checkpoint {self.checkpoint} is not trusted: work unit {key!r} holds "
                        f"{size}, but this run's units give {self.width}")
                raise TypeError(f"work unit {key!r}: the solver returned {size}, but this "
                                f"run's units give {self.width}")
            if stored or self.from_ledger:
                what = "holds" if stored else "gives, solved now,"
                raise CheckpointError(
                    f"checkpoint {self.checkpoint} is not trusted: work unit {key!r} {what} "
                    f"{size}, but unit {self.first_key!r} holds {self.width}"
                )
            raise TypeError(f"work unit {key!r}: the solver returned {size}, but unit "
                            f"{self.first_key!r} gave {self.width}; every unit must give as many")


def run_units(
    units: Sequence[WorkUnit],
    solve: Callable[[Any], tuple[int, ...]],
    *,
    job: Mapping[str, Any],
    executor: concurrent.futures.Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    stage: str = "",
    progress: bool | None = None,
    description: str = "",
    max_in_flight: int | None = None,
    recheck: int = 1,
    result_width: int | None = None,
    estimate: float | None = None,
    check: Callable[[str, tuple[int, ...]], None] | None = None,
) -> dict[str, tuple[int, ...]]:
    """Solve every unit with ``solve(unit.payload)`` and return ``{unit.key: result}``.

    * ``job``: the identity of the whole run (problem, parameters, plan), JSON-serialisable;
      stored in the checkpoint so that a checkpoint is never resumed by another run.
    * ``executor``: any :class:`concurrent.futures.Executor` (an object whose ``submit``
      returns a :class:`concurrent.futures.Future`);
      ``None`` solves the units here, one at a time. At most ``max_in_flight`` units
      (default: twice the executor's workers) are submitted at once, so a huge unit list
      does not flood the scheduler. ``solve`` and the payloads must be picklable for
      process pools and Dask.
    * ``checkpoint``: path of an SQLite ledger; units already in it are not solved again,
      and each new result is committed as soon as it arrives. A path that cannot be a
      ledger, another run's ledger, a damaged one, or a read-only one with units still to
      do is refused (:class:`CheckpointError`) before any unit is solved.
    * ``stage``: for a run made of several rounds of units, each round depending on the
      results of the earlier ones: the name of this round. All rounds of a run keep their
      results in the one checkpoint file, each round's unit list checked on its own.
    * ``progress``: ``True``/``False``, or ``None`` for "when stderr is a terminal or in a
      notebook"; anything else is a ``TypeError``. Without tqdm there is no bar (``True``
      then warns once how to install it).
    * ``recheck``: with a checkpoint, how many units to solve again, chosen at random, and
      compare: when the run resumes, ``recheck`` of the units found in the checkpoint
      (solved first, before any new unit when there is no executor), and ``recheck`` of
      the units this run solves (solved last). If a result differs, the checkpoint is
      refused (:class:`CheckpointError` naming the unit and both results) and marked so
      that no later run trusts it. This catches an edited ledger (the row checksums only
      catch accidents) and, on a long GPU run, a faulty device. The cost, with the
      default of 1: one unit's time when a run resumes and one when it solves units; on
      an executor these units run beside the others, so workers do not wait for them.
      ``0`` turns it off.
    * ``result_width``: how many numbers every unit gives, where the caller knows; a stored
      result of another length is refused (:class:`CheckpointError`) even when the stage
      has a single unit, which has no other to be compared with.
    * ``check``: ``check(key, result)`` raises where a unit's result is one that no correct
      unit gives (:class:`InconsistentCountError`); called on each result before it is
      recorded, so that the checkpoint never keeps it, and on each result read from the
      checkpoint (the error then says how to solve that unit again).
    * ``estimate``: the seconds the caller expects the run to take, where it has an
      estimate. A run estimated under an hour whose own pace projects it past one (a
      slower machine than the estimate's) says so once, with a
      :class:`gpuqueens.LongRunWarning` (:class:`gpuqueens.estimates.Pace`).

    Results are tuples of Python ints (see :func:`check_result`), as many for every unit,
    returned in unit order. If a unit fails, the results that had already arrived are
    recorded, units not yet started are cancelled, and the unit's exception propagates.
    """
    units = _check_units(units)
    canonical_json(dict(job))  # a job that cannot be stored is refused with or without a checkpoint
    recheck = check_run_options(executor=executor, progress=progress, recheck=recheck)
    show_bar = progress_enabled(progress)
    if max_in_flight is not None and (
        isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int) or max_in_flight < 1
    ):
        raise ValueError(f"max_in_flight must be a positive integer, not {max_in_flight!r}")

    def solve_all(batch: list[WorkUnit], record: Callable[[WorkUnit, tuple[int, ...]], None]) -> None:
        """Solve ``batch`` here or on the executor, handing each result to ``record``."""
        if executor is None:
            for unit in batch:
                try:
                    result = check_result(unit.key, solve(unit.payload))
                except BaseException as exc:
                    _add_note(exc, _unit_note(unit.key))
                    raise
                record(unit, result)
        else:
            limit = max_in_flight or 2 * executor_workers(executor)
            _run_on_executor(iter(batch), solve, executor, limit, record)

    ledger = Ledger.open(checkpoint, job, units, stage=stage) if checkpoint is not None else None
    try:
        results = ledger.results() if ledger is not None else {}
        width = _ResultWidth(ledger.path if ledger is not None else None, result_width)
        for key, result in results.items():
            width.check(key, result, stored=True)
            if check is not None:
                try:
                    check(key, result)
                except InconsistentCountError as exc:
                    raise InconsistentCountError(
                        f"{exc}. It is stored in checkpoint {ledger.path}: delete that unit's "
                        "row to solve it again (docs/scaling.md, *The re-check*)") from None
        pending = [unit for unit in units if unit.key not in results]
        already_weight = sum(unit.weight for unit in units if unit.key in results)
        # The re-check: some units found in the checkpoint, solved again first, and some of
        # those this run solves, solved again last. On an executor they share the stream of
        # units, so workers never wait for them to finish.
        first: list[_SolveAgain] = []
        last: list[_SolveAgain] = []
        if ledger is not None:
            first = _solve_again([unit for unit in units if unit.key in results], recheck)
            last = _solve_again(pending, recheck)
        early: dict[str, tuple[int, ...]] = {}  # solved again before the first solve arrived

        def compare(key: str, again: tuple[int, ...]) -> None:
            if again != results[key]:
                assert ledger is not None
                ledger.refuse(f"work unit {key!r} was solved again and gave {again}, but the "
                              f"checkpoint holds {results[key]}")

        pace = Pace(description or f"the {job.get('problem', 'run')}'s work units",
                    weight=sum(unit.weight for unit in pending), estimate=estimate)
        with Progress(
            len(units), sum(unit.weight for unit in units),
            enabled=show_bar, description=description,
            already_units=len(results), already_weight=already_weight,
        ) as bar:

            def record(unit: WorkUnit, result: tuple[int, ...]) -> None:
                if isinstance(unit, _SolveAgain):
                    if unit.key in results:
                        compare(unit.key, result)
                    else:
                        early[unit.key] = result
                    return
                # Dask may run a unit twice (a dead worker's tasks are resubmitted), but
                # each submission is one future, read once: a key is recorded once.
                if unit.key in results:
                    raise RuntimeError(f"work unit {unit.key!r} was recorded twice")
                width.check(unit.key, result, stored=False)
                if check is not None:
                    check(unit.key, result)
                if ledger is not None:
                    ledger.record(unit.key, result)
                results[unit.key] = result
                bar.advance(unit.weight)
                pace.advance(unit.weight)
                if unit.key in early:
                    compare(unit.key, early.pop(unit.key))

            if first:  # solved before any new unit: the bar would stand still without a word
                bar.note(f"re-checking {len(first)} stored unit{'s' if len(first) > 1 else ''}")
            solve_all([*first, *pending, *last], record)
    finally:
        if ledger is not None:
            ledger.close()
    return {unit.key: results[unit.key] for unit in units}


def units_to_solve(keys: Sequence[str], checkpoint: str | os.PathLike[str] | None,
                   recheck: int, *, stage: str = "") -> int:
    """How many units :func:`run_units` will solve for a stage with unit ``keys``: those
    the checkpoint does not hold, and up to ``recheck`` each of the stored and of the new
    ones solved again. Told before the run, to start no worker processes for a resumed run
    with little or nothing left; the checkpoint is read without its checks (which
    :func:`run_units` does), so a file it cannot read counts as empty.

    >>> units_to_solve(["u0", "u1", "u2"], None, recheck=1)
    3
    """
    new = len(keys)
    if checkpoint is None:
        return new
    stored = len(stored_keys(checkpoint, stage) & frozenset(keys))
    new -= stored
    return new + min(recheck, stored) + min(recheck, new)


@dataclass(frozen=True)
class _SolveAgain(WorkUnit):
    """A unit solved a second time for the re-check: its result is compared, not recorded."""


def _solve_again(units: list[WorkUnit], count: int) -> list[_SolveAgain]:
    """``count`` of ``units`` (all if fewer), chosen at random, to be solved again.

    The choice comes from the system's random source, so that a ledger edited to pass a
    foreseen choice still meets the check.
    """
    chosen = random.SystemRandom().sample(units, min(count, len(units)))
    return [_SolveAgain(unit.key, unit.payload, unit.weight) for unit in chosen]


#: How often the thread that waits for results wakes up, in seconds (see _run_on_executor).
SIGNAL_CHECK_SECONDS = 0.2


def _run_on_executor(
    pending: Iterator[WorkUnit],
    solve: Callable[[Any], tuple[int, ...]],
    executor: concurrent.futures.Executor,
    limit: int,
    record: Callable[[WorkUnit, tuple[int, ...]], None],
) -> None:
    """Keep up to ``limit`` units in flight; record each result as it completes."""
    in_flight: dict[concurrent.futures.Future[Any], WorkUnit] = {}

    def submit_more() -> None:
        while len(in_flight) < limit:
            unit = next(pending, None)
            if unit is None:
                return
            try:
                future = executor.submit(solve, unit.payload)
            except RuntimeError as exc:   # the standard library's words name no executor
                if not isinstance(exc, concurrent.futures.BrokenExecutor):   # noted below
                    _add_note(exc, _CLOSED_EXECUTOR)
                raise
            if not isinstance(future, concurrent.futures.Future):
                if callable(getattr(future, "cancel", None)):
                    future.cancel()
                kind = type(future)
                raise TypeError(
                    f"executor.submit returned {kind.__module__}.{kind.__qualname__}, not a "
                    "concurrent.futures.Future: gpuqueens waits for the units with "
                    "concurrent.futures.wait, which needs the standard library's futures "
                    "(for Dask, pass client.get_executor())")
            in_flight[future] = unit

    def collect(done: set[concurrent.futures.Future[Any]]) -> BaseException | None:
        """Record every finished future; return the first failure, if any."""
        failure: BaseException | None = None
        for future in done:
            unit = in_flight.pop(future)
            try:
                result = check_result(unit.key, future.result())
            except BaseException as exc:
                if failure is None:
                    _add_note(exc, _unit_note(unit.key))
                    if isinstance(exc, concurrent.futures.process.BrokenProcessPool):
                        _add_note(exc, _BROKEN_POOL)
                    if future.cancelled():
                        _add_note(exc, _CANCELLED_UNIT)
                    failure = exc
                continue
            record(unit, result)
        return failure

    try:
        submit_more()
        while in_flight:
            # Never an untimed wait: a signal (Ctrl-C, SIGTERM) wakes a thread blocked on a
            # lock only when the kernel hands it to that thread, and with other threads in
            # the process (an executor's) a burst of signals may go to them, all of it:
            # Python then runs the handler only once this thread wakes up by itself.
            done, _ = concurrent.futures.wait(
                in_flight, timeout=SIGNAL_CHECK_SECONDS, return_when=concurrent.futures.FIRST_COMPLETED
            )
            # A future the executor cancelled (shutdown(cancel_futures=True)) is done, but
            # wait() never returns it: it waits for a notice that cancel() alone never sends.
            done |= {future for future in in_flight if future.cancelled()}
            if not done:
                continue
            failure = collect(done)
            if failure is not None:
                # Keep what else has finished by now, then stop: nothing new is submitted.
                collect({future for future in in_flight if future.done()})
                raise failure
            submit_more()
    except concurrent.futures.process.BrokenProcessPool as exc:
        if _BROKEN_POOL not in getattr(exc, "__notes__", ()):  # raised by a submission
            _add_note(exc, _BROKEN_POOL)
        _let_broken_pool_end(executor)
        raise
    finally:
        for future in in_flight:
            future.cancel()  # only units not yet started; running ones finish unrecorded


#: How long a broken process pool's manager thread may take to end by itself (it stops the
#: pool's processes) before the runner closes the pipe it may be stuck behind.
BROKEN_POOL_MANAGER_SECONDS = 2.0


def _let_broken_pool_end(executor: concurrent.futures.Executor) -> None:
    """Close the reading end of a broken process pool's call queue, as recent Pythons do
    themselves (CPython issue 94777, fixed in July 2023: 3.11.7 has the fix; Python 3.10 and
    Debian 12's 3.11.2 do not).

    When a worker dies, the pool's thread that feeds the queue can be blocked writing a work
    unit (prefix arrays of 50–300 KB) into a pipe that no process reads any more; the pool's
    manager thread waits for it, and Python waits for the manager at exit: the program
    hangs after printing its error. With the reading end closed the write fails and both
    threads end.

    Only where the manager is still there after a moment: a Python with the fix closes the
    pipe in the manager thread, and closing it here at the same time raced with that (an
    "OSError: Bad file descriptor" traceback from the pool's thread, 5 runs in 14)."""
    if not isinstance(executor, concurrent.futures.ProcessPoolExecutor):
        return
    manager = getattr(executor, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=BROKEN_POOL_MANAGER_SECONDS)
        if not manager.is_alive():
            return
    reader = getattr(getattr(executor, "_call_queue", None), "_reader", None)
    if reader is not None:
        try:
            reader.close()
        except OSError:
            pass
