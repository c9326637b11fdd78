"""What a checkpoint ledger stores, and what its rows are keyed on.

The table layout (:data:`SCHEMA`, :data:`FORMAT_VERSION`), the canonical JSON of a job, the
digest of a stage's ordered unit list, and the checksum of each stored result. Opening and
checking a ledger file is :mod:`gpuqueens.ledger_checks`; the open ledger is
:class:`gpuqueens.ledger.Ledger`.
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from . import _version

__all__ = ["FORMAT_VERSION", "SCHEMA", "canonical_json", "units_digest", "stage_key",
           "row_checksum", "result_json", "parse_result", "gpuqueens_version"]

#: Version of the table layout; a ledger written with another layout is refused.
FORMAT_VERSION = 2  # 2: stages

# SQLite's header field for "which application owns this file" ("GPQL" in ASCII): lets a
# ledger be recognised even before its tables are read.
APPLICATION_ID = 0x4750514C
# SQLite's free "user version" header field: set to this when a re-check found a stored
# result that differs from a fresh solve of its unit, so that no later run trusts the file.
FAILED_RECHECK = 1



class UnitLike(Protocol):
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


def payload_identity(payload: Any) -> Any:
    """A deterministic, JSON-ready description of a unit payload, for the unit-list digest.

    Plain data (numbers, strings, tuples, lists, dicts, ``range``) and NumPy arrays are
    described exactly; an object with a ``ledger_identity()`` method is described by what
    that returns (so a payload can leave out what may change between runs, such as the
    backend); anything else falls back to ``repr``, which should then be stable.
    """
    if hasattr(payload, "ledger_identity"):
        return payload_identity(payload.ledger_identity())
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
        return [payload_identity(item) for item in payload]
    if isinstance(payload, Mapping):
        return {"map": sorted((repr(k), payload_identity(v)) for k, v in payload.items())}
    if hasattr(payload, "tobytes") and hasattr(payload, "dtype") and hasattr(payload, "shape"):
        return {
            "array": [str(payload.dtype), list(payload.shape)],
            "sha256": hashlib.sha256(payload.tobytes()).hexdigest(),
        }
    return {"repr": repr(payload)}


def units_digest(units: Iterable[UnitLike]) -> str:
    """SHA-256 over the ordered unit keys and payloads: changes whenever the plan does.

    >>> from gpuqueens.runner import WorkUnit
    >>> units_digest([WorkUnit("a", 1)]) == units_digest([WorkUnit("a", 1)])
    True
    >>> units_digest([WorkUnit("a", 1)]) == units_digest([WorkUnit("a", 2)])
    False
    """
    digest = hashlib.sha256()
    for unit in units:
        line = canonical_json([unit.key, payload_identity(unit.payload)])
        digest.update(line.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def row_checksum(run_digest: str, key: str, result_json: str) -> str:
    return hashlib.sha256(f"{run_digest}\n{key}\n{result_json}".encode()).hexdigest()


def result_json(result: Sequence[int]) -> str:
    values = list(result)
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
        raise TypeError(f"a result must be a sequence of integers, not {result!r}")
    return json.dumps([int(v) for v in values], separators=(",", ":"))


def parse_result(text: str) -> tuple[int, ...] | None:
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


SCHEMA = """
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


def gpuqueens_version() -> str:
    # Read at call time (not imported by name) so that a test can change it.
    return str(_version.__version__)


def stage_key(job_json: str, stage: str, units_digest_: str) -> str:
    """What every row checksum of a stage is keyed on: the run, the stage and its units."""
    return hashlib.sha256(f"{job_json}\n{stage}\n{units_digest_}".encode()).hexdigest()

