"""Creating a ledger's tables, and checking an existing ledger before any result is trusted.

Every check raises :class:`~gpuqueens.checkpoint_file.CheckpointError` with a message that
says what is wrong and what to do; nothing is repaired or overwritten.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from .checkpoint_file import CheckpointError
from .ledger_rows import (APPLICATION_ID, FAILED_RECHECK, FORMAT_VERSION, SCHEMA,
                          gpuqueens_version, parse_result, row_checksum, stage_key)

__all__ = ["initialise_or_verify"]


def create_tables(db: sqlite3.Connection, job_json: str, stage: str, unit_count: int, digest: str) -> bool:
    """Write a new ledger's tables, header and first stage if the file has no table yet.

    One exclusive transaction decides "new or existing" and writes them together: a file
    never holds tables without a header. Returns whether the ledger was created.
    """
    db.execute("BEGIN EXCLUSIVE")
    try:
        if db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]:
            db.execute("COMMIT")
            return False
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        db.execute("INSERT INTO header VALUES (?, ?, ?)",
                   (FORMAT_VERSION, gpuqueens_version(), job_json))
        db.execute("INSERT INTO stages VALUES (?, ?, ?)", (stage, unit_count, digest))
        db.execute("COMMIT")
        return True
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def initialise_or_verify(
    db: sqlite3.Connection, path: str, job_json: str, stage: str, unit_count: int,
    digest: str, stage_digest: str, unit_keys: frozenset[str], *, writable: bool = True,
) -> dict[str, tuple[int, ...]]:
    if writable and create_tables(db, job_json, stage, unit_count, digest):
        use_wal(db)
        return {}
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:  # only when read-only: a writable file without tables was created above
        raise CheckpointError(f"checkpoint {path} cannot be written, and it holds no ledger yet")
    application_id = db.execute("PRAGMA application_id").fetchone()[0]
    if application_id != APPLICATION_ID or "header" not in tables:
        raise CheckpointError(
            f"checkpoint {path} is not a gpuqueens ledger (an SQLite database of something "
            "else); refusing to touch it"
        )
    if db.execute("PRAGMA user_version").fetchone()[0] == FAILED_RECHECK:
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
    check_format(db, path, tables)
    # one header row: check_format saw to it
    check_same_run(path, db.execute("SELECT gpuqueens_version, job FROM header").fetchone(), job_json)
    stored_stages = {
        name: (count, stored_digest)
        for name, count, stored_digest in db.execute("SELECT name, unit_count, units_digest FROM stages")
    }
    if stage in stored_stages:
        check_same_units(path, stage, stored_stages[stage], unit_count, digest)
    elif writable:  # a later stage of this run starts: register its unit list
        db.execute("INSERT INTO stages VALUES (?, ?, ?)", (stage, unit_count, digest))
        stored_stages[stage] = (unit_count, digest)

    results: dict[str, tuple[int, ...]] = {}
    for row_stage, key, text, checksum in db.execute("SELECT stage, key, result, checksum FROM units"):
        known = stored_stages.get(row_stage) if isinstance(row_stage, str) else None
        result = parse_result(text) if isinstance(text, str) else None
        if (
            known is None
            or not isinstance(key, str)
            or (row_stage == stage and key not in unit_keys)
            or result is None
            or checksum != row_checksum(stage_key(job_json, row_stage, known[1]), key, text)
        ):
            raise CheckpointError(
                f"checkpoint {path} is damaged, not trusted: the row for unit {key!r} fails "
                "its checksum (edited or corrupted)"
            )
        if row_stage == stage:
            results[key] = result
    if writable:
        use_wal(db)
    return results


def check_format(db: sqlite3.Connection, path: str, tables: set[str]) -> None:
    """Refuse a ledger of another table layout before reading anything else of it."""
    try:
        rows = db.execute("SELECT format_version FROM header").fetchall()
    except sqlite3.DatabaseError:  # a header of another layout: another version's ledger
        rows = [(None,)]
    if len(rows) != 1:  # deleted or added: this gpuqueens writes exactly one
        raise CheckpointError(
            f"checkpoint {path} is damaged, not trusted: {len(rows)} header rows, expected 1"
        )
    version = rows[0][0]
    if version != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {path} belongs to a different run: ledger format: the checkpoint has "
            f"version {version}, this gpuqueens reads version {FORMAT_VERSION}. Use another "
            "checkpoint file, or delete this one to start over."
        )
    if not {"header", "stages", "units"} <= tables:
        raise CheckpointError(f"checkpoint {path} is damaged, not trusted: tables are missing")



def use_wal(db: sqlite3.Connection) -> None:
    # Set only once the file is known to be ours: journal_mode=WAL rewrites the file header.
    # WAL + synchronous=NORMAL: a commit is one append to the WAL, without an fsync.
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")


def refuse_other_run(path: str, differences: list[str]) -> None:
    if differences:
        raise CheckpointError(
            f"checkpoint {path} belongs to a different run: "
            + "; ".join(differences)
            + ". Use another checkpoint file, or delete this one to start over."
        )


def check_same_run(path: str, header: tuple[Any, ...], job_json: str) -> None:
    """Refuse a ledger written for another run, naming every difference found."""
    written_by, stored_job_json = header
    differences: list[str] = []
    current = gpuqueens_version()
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
    if stored_job.get("problem") != job.get("problem"):  # the rest of the job says little then
        differences.append(f"it records {_short(stored_job)}, this run is {_short(job)}")
        refuse_other_run(path, differences)
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
                + (_format_age(stored_job[name], job[name]) if name == "format" else "")
            )
    refuse_other_run(path, differences)


def _format_age(stored: Any, current: Any) -> str:
    """Words for a job format that changed between gpuqueens versions."""
    if isinstance(stored, int) and isinstance(current, int) and stored != current:
        return (" (the checkpoint was written by an older version of gpuqueens, which split the "
                "work differently)" if stored < current else
                " (the checkpoint was written by a newer version of gpuqueens)")
    return ""


def _short(job: dict[str, Any]) -> str:
    """A job in a few words: its problem and board size (``nqueens n=12``)."""
    size = ", ".join(f"{name}={job[name]!r}" for name in ("m", "n") if name in job)
    return f"{job.get('problem', 'an unnamed problem')}{' ' + size if size else ''}"


def check_same_units(
    path: str, stage: str, stored: tuple[Any, Any], unit_count: int, digest: str
) -> None:
    """Refuse a stage whose stored unit list differs from this run's."""
    stored_count, stored_digest = stored
    where = f" of stage {stage!r}" if stage else ""
    if stored_count != unit_count:
        refuse_other_run(path, [
            f"work units{where}: the checkpoint has {stored_count}, this run has {unit_count}"
        ])
    elif stored_digest != digest:
        refuse_other_run(path, [
            f"work units{where}: same number ({unit_count}) but different keys or payloads"
        ])
