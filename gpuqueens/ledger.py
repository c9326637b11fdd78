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
gpuqueens.checkpoint_file.CheckpointError: checkpoint ... belongs to a different run: problem: ...
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn, Protocol

from . import _version
from .checkpoint_file import CheckpointError, CheckpointFile, check_checkpoint_path

__all__ = [
    "check_checkpoint_path",
    "stored_job",
    "FORMAT_VERSION",
    "CheckpointError",
    "Ledger",
    "canonical_json",
    "units_digest",
]

#: Version of the table layout; a ledger written with another layout is refused.
FORMAT_VERSION = 2  # 2: stages

# SQLite's header field for "which application owns this file" ("GPQL" in ASCII): lets a
# ledger be recognised even before its tables are read.
_APPLICATION_ID = 0x4750514C
# SQLite's free "user version" header field: set to this when a re-check found a stored
# result that differs from a fresh solve of its unit, so that no later run trusts the file.
_FAILED_RECHECK = 1


class _UnitLike(Protocol):
    key: str
    payload: Any


def canonical_json(value: Any) -> str:
    """Return ``value`` as canonical JSON: sorted keys, no spaces, no NaN.

    The same mapping always gives the same text, so it can be stored and compared.

    >>> canonical_json({"n": 8, "problem": "nqueens", "plan": [1, 2]})
    '{"n":8,"plan":[1,2],"problem":"nqueens"}'
    """
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the job must be JSON-serialisable ({exc})") from exc


def _payload_identity(payload: Any) -> Any:
    """A deterministic, JSON-ready description of a unit payload, for the unit-list digest.

    Plain data (numbers, strings, tuples, lists, dicts, ``range``) and NumPy arrays are
    described exactly; an object with a ``ledger_identity()`` method is described by what
    that returns (so a payload can leave out what may change between runs, such as the
    backend); anything else falls back to ``repr``, which should then be stable.
    """
    if hasattr(payload, "ledger_identity"):
        return _payload_identity(payload.ledger_identity())
    if payload is None or isinstance(payload, (bool, str)):
        return payload
    if isinstance(payload, numbers.Integral):
        return int(payload)
    if isinstance(payload, float):
        return repr(payload)  # keeps nan/inf and every bit of precision
    if isinstance(payload, (bytes, bytearray)):
        return {"bytes": hashlib.sha256(payload).hexdigest()}
    if isinstance(payload, range):
        return {"range": [payload.start, payload.stop, payload.step]}
    if isinstance(payload, (tuple, list)):
        return [_payload_identity(item) for item in payload]
    if isinstance(payload, Mapping):
        return {"map": sorted((repr(k), _payload_identity(v)) for k, v in payload.items())}
    if hasattr(payload, "tobytes") and hasattr(payload, "dtype") and hasattr(payload, "shape"):
        return {
            "array": [str(payload.dtype), list(payload.shape)],
            "sha256": hashlib.sha256(payload.tobytes()).hexdigest(),
        }
    return {"repr": repr(payload)}


def units_digest(units: Iterable[_UnitLike]) -> str:
    """SHA-256 over the ordered unit keys and payloads: changes whenever the plan does.

    >>> from gpuqueens.runner import WorkUnit
    >>> units_digest([WorkUnit("a", 1)]) == units_digest([WorkUnit("a", 1)])
    True
    >>> units_digest([WorkUnit("a", 1)]) == units_digest([WorkUnit("a", 2)])
    False
    """
    digest = hashlib.sha256()
    for unit in units:
        line = canonical_json([unit.key, _payload_identity(unit.payload)])
        digest.update(line.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _row_checksum(run_digest: str, key: str, result_json: str) -> str:
    return hashlib.sha256(f"{run_digest}\n{key}\n{result_json}".encode()).hexdigest()


def _result_json(result: Sequence[int]) -> str:
    values = list(result)
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
        raise TypeError(f"a result must be a sequence of integers, not {result!r}")
    return json.dumps([int(v) for v in values], separators=(",", ":"))


def _parse_result(text: str) -> tuple[int, ...] | None:
    """Parse a stored result; ``None`` when it is not a JSON list of integers."""
    try:
        values = json.loads(text)
    except (TypeError, ValueError, RecursionError):  # RecursionError: hostile nesting
        return None
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        return None
    return tuple(values)


_SCHEMA = """
CREATE TABLE header (
    format_version    INTEGER NOT NULL,
    gpuqueens_version TEXT    NOT NULL,
    job               TEXT    NOT NULL
);
CREATE TABLE stages (
    name         TEXT PRIMARY KEY NOT NULL,
    unit_count   INTEGER NOT NULL,
    units_digest TEXT    NOT NULL
) WITHOUT ROWID;
CREATE TABLE units (
    stage    TEXT NOT NULL,
    key      TEXT NOT NULL,
    result   TEXT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (stage, key)
) WITHOUT ROWID;
"""


def _gpuqueens_version() -> str:
    # Read at call time (not imported by name) so that a test can change it.
    return str(_version.__version__)


def _stage_digest(job_json: str, stage: str, units_digest_: str) -> str:
    """What every row checksum of a stage is keyed on: the run, the stage and its units."""
    return hashlib.sha256(f"{job_json}\n{stage}\n{units_digest_}".encode()).hexdigest()


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
        cls, path: str | os.PathLike[str], job: Mapping[str, Any], units: Sequence[_UnitLike],
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
        stage_digest = _stage_digest(job_json, stage, digest)

        file = CheckpointFile.open(path)
        path = file.path
        db = None
        try:
            if file.read_only is not None and file.is_empty():
                raise CheckpointError(f"checkpoint {path} cannot be written: {file.read_only}, "
                                      "and it holds no results yet")
            db = file.connect()
            results = _initialise_or_verify(
                db, path, job_json, stage, len(units), digest, stage_digest, unit_keys,
                writable=file.read_only is None,
            )
            missing = len(unit_keys - results.keys())
            if file.read_only is not None and missing:
                raise CheckpointError(
                    f"checkpoint {path} cannot be written: {file.read_only}, and {missing} of "
                    f"{len(unit_keys)} work units are still to do. Make it writable (the file "
                    "and its directory), or copy it to a writable place, and run again."
                )
        except BaseException as exc:
            if db is not None:
                db.close()
            file.close()
            if isinstance(exc, sqlite3.OperationalError):  # read-only, locked, I/O: not damage
                raise CheckpointError(f"checkpoint {path} cannot be used: {exc}") from exc
            if isinstance(exc, sqlite3.DatabaseError):  # "malformed", "not a database": damage
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
        text = _result_json(result)
        try:
            self._db.execute(
                "INSERT INTO units (stage, key, result, checksum) VALUES (?, ?, ?, ?)",
                (self.stage, key, text, _row_checksum(self._stage_digest, key, text)),
            )
        except sqlite3.IntegrityError as exc:  # another writer got past the lock
            raise RuntimeError(f"work unit {key!r} is already in {self.path}") from exc
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
                self._db.execute(f"PRAGMA user_version={_FAILED_RECHECK}")
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


def _create(db: sqlite3.Connection, job_json: str, stage: str, unit_count: int, digest: str) -> bool:
    """Write a new ledger's tables, header and first stage if the file has no table yet.

    One exclusive transaction decides "new or existing" and writes them together: a file
    never holds tables without a header. Returns whether the ledger was created.
    """
    db.execute("BEGIN EXCLUSIVE")
    try:
        if db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]:
            db.execute("COMMIT")
            return False
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA application_id={_APPLICATION_ID}")
        db.execute("INSERT INTO header VALUES (?, ?, ?)",
                   (FORMAT_VERSION, _gpuqueens_version(), job_json))
        db.execute("INSERT INTO stages VALUES (?, ?, ?)", (stage, unit_count, digest))
        db.execute("COMMIT")
        return True
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _initialise_or_verify(
    db: sqlite3.Connection, path: str, job_json: str, stage: str, unit_count: int,
    digest: str, stage_digest: str, unit_keys: frozenset[str], *, writable: bool = True,
) -> dict[str, tuple[int, ...]]:
    if writable and _create(db, job_json, stage, unit_count, digest):
        _use_wal(db)
        return {}
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:  # only when read-only: a writable file without tables was created above
        raise CheckpointError(f"checkpoint {path} cannot be written, and it holds no ledger yet")
    application_id = db.execute("PRAGMA application_id").fetchone()[0]
    if application_id != _APPLICATION_ID or "header" not in tables:
        raise CheckpointError(
            f"checkpoint {path} is not a gpuqueens ledger (an SQLite database of something "
            "else); refusing to touch it"
        )
    if db.execute("PRAGMA user_version").fetchone()[0] == _FAILED_RECHECK:
        raise CheckpointError(
            f"checkpoint {path} failed a re-check earlier (a stored result differed from a "
            "fresh solve of its unit), so none of its results is trusted; delete it to start over"
        )
    problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
    if problems != ["ok"]:
        raise CheckpointError(
            f"checkpoint {path} is damaged, not trusted: SQLite integrity check says "
            + "; ".join(problems[:5])
        )
    _check_format(db, path, tables)
    header = db.execute("SELECT gpuqueens_version, job FROM header").fetchall()
    if len(header) != 1:
        raise CheckpointError(
            f"checkpoint {path} is damaged, not trusted: {len(header)} header rows, expected 1"
        )
    _check_same_run(path, header[0], job_json)
    stored_stages = {
        name: (count, stored_digest)
        for name, count, stored_digest in db.execute("SELECT name, unit_count, units_digest FROM stages")
    }
    if stage in stored_stages:
        _check_same_units(path, stage, stored_stages[stage], unit_count, digest)
    elif writable:  # a later stage of this run starts: register its unit list
        db.execute("INSERT INTO stages VALUES (?, ?, ?)", (stage, unit_count, digest))
        stored_stages[stage] = (unit_count, digest)

    results: dict[str, tuple[int, ...]] = {}
    for row_stage, key, text, checksum in db.execute("SELECT stage, key, result, checksum FROM units"):
        known = stored_stages.get(row_stage) if isinstance(row_stage, str) else None
        result = _parse_result(text) if isinstance(text, str) else None
        if (
            known is None
            or not isinstance(key, str)
            or (row_stage == stage and key not in unit_keys)
            or result is None
            or checksum != _row_checksum(_stage_digest(job_json, row_stage, known[1]), key, text)
        ):
            raise CheckpointError(
                f"checkpoint {path} is damaged, not trusted: the row for unit {key!r} fails "
                "its checksum (edited or corrupted)"
            )
        if row_stage == stage:
            results[key] = result
    if writable:
        _use_wal(db)
    return results


def _check_format(db: sqlite3.Connection, path: str, tables: set[str]) -> None:
    """Refuse a ledger of another table layout before reading anything else of it."""
    try:
        rows = db.execute("SELECT format_version FROM header").fetchall()
    except sqlite3.DatabaseError:
        rows = []
    version = rows[0][0] if len(rows) == 1 else None
    if version != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {path} belongs to a different run: ledger format: the checkpoint has "
            f"version {version}, this gpuqueens reads version {FORMAT_VERSION}. Use another "
            "checkpoint file, or delete this one to start over."
        )
    if not {"header", "stages", "units"} <= tables:
        raise CheckpointError(f"checkpoint {path} is damaged, not trusted: tables are missing")


def stored_job(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The job recorded in an existing ledger, or ``None`` if there is no readable one.

    Forgiving, and it never writes: it only lets a caller rebuild the plan a checkpoint
    was started with; :meth:`Ledger.open` still does every check. The file is opened as
    :meth:`Ledger.open` opens it (never waiting on a FIFO, never leaving files behind).
    """
    try:
        file = CheckpointFile.open(path, create=False)
    except (CheckpointError, TypeError):
        return None
    try:
        if file.is_empty():
            return None
        db = file.connect()
        try:
            row = db.execute("SELECT job FROM header").fetchone()
        finally:
            db.close()
        job = json.loads(row[0]) if row else None
    except (CheckpointError, sqlite3.Error, ValueError, TypeError, RecursionError):
        return None
    finally:
        file.close()
    return job if isinstance(job, dict) else None


def _use_wal(db: sqlite3.Connection) -> None:
    # Set only once the file is known to be ours: journal_mode=WAL rewrites the file header.
    # WAL + synchronous=NORMAL: a commit is one append to the WAL, without an fsync.
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")


def _refuse_other_run(path: str, differences: list[str]) -> None:
    if differences:
        raise CheckpointError(
            f"checkpoint {path} belongs to a different run: "
            + "; ".join(differences)
            + ". Use another checkpoint file, or delete this one to start over."
        )


def _check_same_run(path: str, header: tuple[Any, ...], job_json: str) -> None:
    """Refuse a ledger written for another run, naming every difference found."""
    written_by, stored_job_json = header
    differences: list[str] = []
    current = _gpuqueens_version()
    if written_by != current:
        differences.append(
            f"gpuqueens version: the checkpoint was written by {written_by}, this is {current}"
        )
    try:
        stored_job = json.loads(stored_job_json)
    except (TypeError, ValueError, RecursionError):
        stored_job = None
    if not isinstance(stored_job, dict):
        raise CheckpointError(f"checkpoint {path} is damaged, not trusted: unreadable job")
    job = json.loads(job_json)
    for name in sorted(set(stored_job) | set(job)):
        if name not in job:
            differences.append(
                f"{name}: the checkpoint has {stored_job[name]!r}, this run has none"
            )
        elif name not in stored_job:
            differences.append(f"{name}: the checkpoint has none, this run has {job[name]!r}")
        elif stored_job[name] != job[name]:
            differences.append(
                f"{name}: the checkpoint has {stored_job[name]!r}, this run has {job[name]!r}"
            )
    _refuse_other_run(path, differences)


def _check_same_units(
    path: str, stage: str, stored: tuple[Any, Any], unit_count: int, digest: str
) -> None:
    """Refuse a stage whose stored unit list differs from this run's."""
    stored_count, stored_digest = stored
    where = f" of stage {stage!r}" if stage else ""
    if stored_count != unit_count:
        _refuse_other_run(path, [
            f"work units{where}: the checkpoint has {stored_count}, this run has {unit_count}"
        ])
    elif stored_digest != digest:
        _refuse_other_run(path, [
            f"work units{where}: same number ({unit_count}) but different keys or payloads"
        ])
