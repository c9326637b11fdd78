"""The SQLite checkpoint of a long run: which work units are finished, and their results.

A ledger is one SQLite file per run, with three tables:

* ``header``: one row naming the run it belongs to: the ledger format version, the
  gpuqueens version that wrote it and the job mapping as canonical JSON;
* ``stages``: one row per stage of the run (a run whose later units depend on earlier
  results, such as the rounds of the matchstick table, has several; most runs have one,
  named ``""``): the stage name, its number of work units and a SHA-256 digest of its
  ordered unit keys and payloads;
* ``units``: one row per finished unit: ``stage`` and ``key`` (together the primary key),
  ``result`` (a JSON list of integers) and ``checksum`` (SHA-256 of the stage digest, the
  key and the result).

One process writes it (the coordinator of the run) and commits once per finished unit, so a
run killed at any moment loses at most the units that were still being solved. The
database runs in WAL mode with ``synchronous=NORMAL``: a commit survives the death of the
process; after a power cut the last few commits may be gone, but the file stays consistent,
and the units they held are simply solved again.

Opening a ledger checks, before any result is trusted, that the path can hold one (see
:mod:`gpuqueens.checkpoint_file`: no FIFO, device or missing directory; a read-only ledger
only when no unit is left to do), that the file is a gpuqueens ledger, that it belongs to
this run (job, unit list, versions) and that it is not damaged (SQLite's
``integrity_check`` and every row's checksum). Any failure raises :class:`CheckpointError`;
nothing is silently repaired or overwritten. The checksums catch accidents only: the
runner also solves a few stored units again (:func:`gpuqueens.runner.run_units`'s
``recheck``) and, when one differs, marks the ledger with :meth:`Ledger.refuse` so that no
later run trusts it.

>>> import os, tempfile
>>> from gpuqueens.runner import WorkUnit
>>> path = os.path.join(tempfile.mkdtemp(), "run.sqlite")
>>> units = [WorkUnit("a", 1), WorkUnit("b", 2)]
>>> with Ledger.open(path, {"problem": "demo"}, units) as ledger:
...     ledger.record("a", (10, 1))
>>> with Ledger.open(path, {"problem": "demo"}, units) as ledger:
...     ledger.results()
{'a': (10, 1)}
>>> with Ledger.open(path, {"problem": "demo"}, [WorkUnit("c", 3)], stage="second") as ledger:
...     ledger.results()    # a later stage of the same run, in the same file
{}
>>> Ledger.open(path, {"problem": "other"}, units)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
gpuqueens.checkpoint_file.CheckpointError: checkpoint ... belongs to a different run: it records demo, this run is other. ...
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from .checkpoint_file import CheckpointError, CheckpointFile, check_checkpoint_path
from .ledger_checks import initialise_or_verify
from .ledger_rows import (FAILED_RECHECK, FORMAT_VERSION, UnitLike, canonical_json,
                          result_json, row_checksum, stage_key, units_digest)

__all__ = [
    "check_checkpoint_path",
    "stored_job",
    "stored_keys",
    "FORMAT_VERSION",
    "CheckpointError",
    "Ledger",
    "canonical_json",
    "units_digest",
]


class Ledger:
    """An open checkpoint: the finished units of one run. Use :meth:`open` to get one.

    ``writable`` is False for a read-only checkpoint that already holds every result of the
    stage (it can be read, not written).
    """

    def __init__(
        self, file: CheckpointFile, connection: sqlite3.Connection, stage: str,
        stage_digest: str, unit_keys: frozenset[str], results: dict[str, tuple[int, ...]],
    ) -> None:
        self.path = file.path
        self.stage = stage
        self.writable = file.read_only is None
        self._file = file
        self._db = connection
        self._stage_digest = stage_digest
        self._unit_keys = unit_keys
        self._results = results

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], job: Mapping[str, Any], units: Sequence[UnitLike],
        *, stage: str = "",
    ) -> Ledger:
        """Open the ledger at ``path`` for stage ``stage`` of the run ``job`` with ``units``,
        creating the file or the stage if needed.

        A missing file, an empty file, or an SQLite database without any table (a process
        killed while creating one) becomes a new ledger. An existing ledger is checked and
        the stage's results loaded. :class:`CheckpointError` says why one cannot be used: a
        path that cannot be a ledger file (see :func:`check_checkpoint_path`), another run's
        or a damaged ledger, one in use by another run, one that failed a re-check, or one
        that cannot be written (a read-only file or directory) while units are still to do.
        Nothing is solved before these checks, so no work is lost to them.
        """
        if not isinstance(stage, str):
            raise TypeError(f"a stage name must be a string, not {stage!r}")
        job_json = canonical_json(dict(job))
        digest = units_digest(units)
        unit_keys = frozenset(unit.key for unit in units)
        stage_digest = stage_key(job_json, stage, digest)

        file = CheckpointFile.open(path)
        path = file.path
        db = None
        try:
            if file.read_only is not None and file.is_empty():
                raise CheckpointError(f"checkpoint {path} cannot be written: {file.read_only}, "
                                      "and it holds no results yet")
            db = file.connect()
            results = initialise_or_verify(
                db, path, job_json, stage, len(units), digest, stage_digest, unit_keys,
                writable=file.read_only is None,
            )
            missing = len(unit_keys - results.keys())
            if file.read_only is not None and missing:
                raise CheckpointError(
                    f"checkpoint {path} cannot be written: {file.read_only}, and {missing} of "
                    f"{len(unit_keys)} work units are still to do. Make it writable (the file "
                    "and its directory), or copy it to a writable place, and run again."
                    + _unread_journal(path)
                )
        except BaseException as exc:
            if db is not None:
                db.close()
            file.close()
            if isinstance(exc, sqlite3.OperationalError) and not _undecodable(exc):
                # read-only, locked, I/O: not damage
                raise CheckpointError(f"checkpoint {path} cannot be used: {exc}") from exc
            if isinstance(exc, sqlite3.DatabaseError):  # "malformed", "not a database",
                # a text that is not UTF-8 (a flipped bit in a stored row): damage
                raise CheckpointError(f"checkpoint {path} is damaged, not trusted: {exc}") from exc
            raise
        return cls(file, db, stage, stage_digest, unit_keys, results)

    # -- use -----------------------------------------------------------------------------

    def results(self) -> dict[str, tuple[int, ...]]:
        """The finished units: key -> result (a copy)."""
        return dict(self._results)

    def record(self, key: str, result: Sequence[int]) -> None:
        """Store one finished unit, committed before returning. A key is stored once only.

        A write that fails (a full disk, an I/O error) is a :class:`CheckpointError`; the
        units recorded before it stay in the ledger.
        """
        if key not in self._unit_keys:
            raise KeyError(f"{key!r} is not a work unit of this run")
        if key in self._results:
            raise RuntimeError(f"work unit {key!r} was recorded twice")
        if not self.writable:
            raise CheckpointError(f"checkpoint {self.path} is read-only: {key!r} cannot be recorded")
        text = result_json(result)
        try:
            self._db.execute(
                "INSERT INTO units (stage, key, result, checksum) VALUES (?, ?, ?, ?)",
                (self.stage, key, text, row_checksum(self._stage_digest, key, text)),
            )
        except sqlite3.IntegrityError as exc:  # another writer got past the lock
            raise CheckpointError(
                f"checkpoint {self.path}: work unit {key!r} was recorded by another run on the "
                "same file meanwhile (one whose file system could not lock it); the ledger keeps "
                "that run's result: run one at a time, and run again to finish") from exc
        except sqlite3.Error as exc:
            raise CheckpointError(
                f"checkpoint {self.path}: work unit {key!r} could not be recorded ({exc}); the "
                "units recorded before it are kept: fix the cause and run again to resume"
            ) from exc
        self._results[key] = tuple(int(value) for value in result)

    def refuse(self, reason: str) -> NoReturn:
        """Mark the ledger as failed (when it can be written) and raise :class:`CheckpointError`.

        For a stored result that a re-check contradicts: every later opening of the file is
        refused too, since any of its results may be wrong.
        """
        if self.writable:
            try:
                self._db.execute(f"PRAGMA user_version={FAILED_RECHECK}")
            except sqlite3.Error:
                pass  # the refusal below still stands
        raise CheckpointError(
            f"checkpoint {self.path} failed its re-check: {reason}. None of its results is "
            "trusted (edited, or computed by a faulty device); delete it to start over."
        )

    def close(self) -> None:
        """Close the database (folding the WAL back into the file) and release the lock."""
        if self._db is not None:
            self._db.close()
            self._db = None  # type: ignore[assignment]
            self._file.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        stage = f", stage {self.stage!r}" if self.stage else ""
        return (f"Ledger({self.path!r}{stage}, {len(self._results)}/{len(self._unit_keys)} "
                "units done)")



def stored_job(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The job recorded in an existing ledger, or ``None`` if there is no readable one.

    Forgiving, and it never writes: it only lets a caller rebuild the plan a checkpoint
    was started with; :meth:`Ledger.open` still does every check. The file is opened as
    :meth:`Ledger.open` opens it (never waiting on a FIFO, never leaving files behind).
    """
    row = _read_forgiving(path, lambda db: db.execute("SELECT job FROM header").fetchone())
    try:
        job = json.loads(row[0]) if row else None
    except (ValueError, TypeError, RecursionError):
        return None
    return job if isinstance(job, dict) else None


def stored_keys(path: str | os.PathLike[str], stage: str = "") -> frozenset[str]:
    """The keys of the units an existing ledger holds for ``stage`` (none if there is no
    readable ledger).

    Forgiving and never writing, like :func:`stored_job`: what it says is not trusted,
    only used to tell how much work a resumed run has left (how many worker processes to
    start) before :meth:`Ledger.open` checks the file.
    """
    rows = _read_forgiving(path, lambda db: db.execute(
        "SELECT key FROM units WHERE stage = ?", (stage,)).fetchall())
    return frozenset(row[0] for row in rows or () if isinstance(row[0], str))


def _read_forgiving(path: str | os.PathLike[str], read: Callable[[sqlite3.Connection], Any]) -> Any:
    """``read(connection)`` on an existing, non-empty ledger file, or ``None`` if it cannot
    be read (no such file, not a database, another layout)."""
    try:
        file = CheckpointFile.open(path, create=False)
    except (CheckpointError, TypeError):
        return None
    try:
        if file.is_empty():
            return None
        db = file.connect()
        try:
            return read(db)
        finally:
            db.close()
    except (CheckpointError, sqlite3.Error):
        return None
    finally:
        file.close()


def _undecodable(exc: sqlite3.OperationalError) -> bool:
    """Python's sqlite3 reports a stored text that is not UTF-8 as an OperationalError
    ("Could not decode to UTF-8 column ..."), the class it gives a locked or read-only
    file; a ledger only ever stores UTF-8, so such a text is damage."""
    return "decode" in str(exc).lower()


def _unread_journal(path: str) -> str:
    """Words for a read-only ledger with a write-ahead log beside it (a run killed before
    it folded the log into the file): the log may hold finished units that a read-only
    file cannot take in, so they count as still to do."""
    try:
        if os.path.getsize(path + "-wal") > 0:
            return (f" Its write-ahead log {path}-wal may hold more finished units, read once "
                    "the file is writable: copy the log with it.")
    except OSError:
        pass
    return ""
