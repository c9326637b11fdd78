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

Opening a ledger checks, before any result is trusted, that the file is a gpuqueens ledger,
that it belongs to this run (job, unit list, versions) and that it is not damaged (SQLite's
``integrity_check`` and every row's checksum). Any failure raises :class:`CheckpointError`;
nothing is silently repaired or overwritten.

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
gpuqueens.ledger.CheckpointError: checkpoint ... belongs to a different run: problem: ...
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from . import _version

__all__ = [
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
_SQLITE_MAGIC = b"SQLite format 3\x00"


class CheckpointError(ValueError):
    """A checkpoint file cannot be used: not a ledger, another run's ledger, damaged, busy."""


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
    except (TypeError, ValueError):
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


class _FileLock:
    """An exclusive advisory lock (``flock``) on the ledger file, held while it is open.

    Two runs writing the same ledger would solve the same units twice; the second is
    refused at once instead. Where ``flock`` does not exist (Windows) there is no lock.
    """

    def __init__(self, path: str) -> None:
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise CheckpointError(
                f"checkpoint {path} is in use by another process (only one run may write "
                "a ledger at a time)"
            ) from exc
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


class Ledger:
    """An open checkpoint: the finished units of one run. Use :meth:`open` to get one."""

    def __init__(
        self, path: str, connection: sqlite3.Connection, lock: _FileLock, stage: str,
        stage_digest: str, unit_keys: frozenset[str], results: dict[str, tuple[int, ...]],
    ) -> None:
        self.path = path
        self.stage = stage
        self._db = connection
        self._lock = lock
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
        the stage's results loaded; :class:`CheckpointError` says why one cannot be used.
        """
        path = os.fspath(path)
        if not isinstance(stage, str):
            raise TypeError(f"a stage name must be a string, not {stage!r}")
        job_json = canonical_json(dict(job))
        digest = units_digest(units)
        unit_keys = frozenset(unit.key for unit in units)
        stage_digest = _stage_digest(job_json, stage, digest)

        if os.path.isdir(path):
            raise CheckpointError(f"checkpoint {path} is a directory, not a ledger file")
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path, "rb") as fh:
                if fh.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
                    raise CheckpointError(
                        f"checkpoint {path} is not a gpuqueens ledger (not an SQLite "
                        "database); refusing to overwrite it"
                    )
        else:
            open(path, "ab").close()  # so that the lock has a file to hold

        lock = _FileLock(path)
        try:
            db = sqlite3.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            lock.release()
            raise CheckpointError(f"checkpoint {path} cannot be opened: {exc}") from exc
        try:
            results = _initialise_or_verify(
                db, path, job_json, stage, len(units), digest, stage_digest, unit_keys
            )
        except sqlite3.OperationalError as exc:  # read-only, locked, I/O error: not damage
            db.close()
            lock.release()
            raise CheckpointError(f"checkpoint {path} cannot be used: {exc}") from exc
        except sqlite3.DatabaseError as exc:  # "malformed", "not a database": damage
            db.close()
            lock.release()
            raise CheckpointError(f"checkpoint {path} is damaged, not trusted: {exc}") from exc
        except BaseException:
            db.close()
            lock.release()
            raise
        return cls(path, db, lock, stage, stage_digest, unit_keys, results)

    # -- use -----------------------------------------------------------------------------

    def results(self) -> dict[str, tuple[int, ...]]:
        """The finished units: key -> result (a copy)."""
        return dict(self._results)

    def record(self, key: str, result: Sequence[int]) -> None:
        """Store one finished unit, committed before returning. A key is stored once only."""
        if key not in self._unit_keys:
            raise KeyError(f"{key!r} is not a work unit of this run")
        if key in self._results:
            raise RuntimeError(f"work unit {key!r} was recorded twice")
        text = _result_json(result)
        try:
            self._db.execute(
                "INSERT INTO units (stage, key, result, checksum) VALUES (?, ?, ?, ?)",
                (self.stage, key, text, _row_checksum(self._stage_digest, key, text)),
            )
        except sqlite3.IntegrityError as exc:  # another writer got past the lock
            raise RuntimeError(f"work unit {key!r} is already in {self.path}") from exc
        self._results[key] = tuple(int(value) for value in result)

    def close(self) -> None:
        """Close the database (folding the WAL back into the file) and release the lock."""
        if self._db is not None:
            self._db.close()
            self._db = None  # type: ignore[assignment]
            self._lock.release()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        stage = f", stage {self.stage!r}" if self.stage else ""
        return (f"Ledger({self.path!r}{stage}, {len(self._results)}/{len(self._unit_keys)} "
                "units done)")


def _initialise_or_verify(
    db: sqlite3.Connection, path: str, job_json: str, stage: str, unit_count: int,
    digest: str, stage_digest: str, unit_keys: frozenset[str],
) -> dict[str, tuple[int, ...]]:
    # One exclusive transaction decides "new or existing" and, if new, writes the tables,
    # the header and the stage together: a file never holds tables without a header.
    db.execute("BEGIN EXCLUSIVE")
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA application_id={_APPLICATION_ID}")
            db.execute("INSERT INTO header VALUES (?, ?, ?)",
                       (FORMAT_VERSION, _gpuqueens_version(), job_json))
            db.execute("INSERT INTO stages VALUES (?, ?, ?)", (stage, unit_count, digest))
            db.execute("COMMIT")
            _use_wal(db)
            return {}
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise

    application_id = db.execute("PRAGMA application_id").fetchone()[0]
    if application_id != _APPLICATION_ID or "header" not in tables:
        raise CheckpointError(
            f"checkpoint {path} is not a gpuqueens ledger (an SQLite database of something "
            "else); refusing to touch it"
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
    else:  # a later stage of this run starts: register its unit list
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

    Read-only and forgiving: it only lets a caller rebuild the plan a checkpoint was
    started with; :meth:`Ledger.open` still does every check.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT job FROM header").fetchone()
        finally:
            db.close()
        job = json.loads(row[0]) if row else None
    except (sqlite3.Error, ValueError, TypeError):
        return None
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
    except (TypeError, ValueError):
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
