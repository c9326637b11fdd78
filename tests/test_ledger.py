"""The SQLite checkpoint: creation, resume, refusal of other runs and of damaged files."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

import gpuqueens
from gpuqueens.ledger import CheckpointError, Ledger, canonical_json, units_digest
from gpuqueens.runner import WorkUnit

JOB = {"problem": "toy", "n": 8, "plan": "ranges-of-10"}


def make_units(count: int = 20) -> list[WorkUnit]:
    return [WorkUnit(f"u{i:03d}", range(10 * i, 10 * i + 10)) for i in range(count)]


def fill(path, units, count=None, job=JOB):
    with Ledger.open(path, job, units) as ledger:
        for unit in units[:count]:
            ledger.record(unit.key, (sum(unit.payload), len(unit.payload)))


def test_new_ledger_records_and_resumes(tmp_path):
    path = tmp_path / "run.sqlite"
    units = make_units()
    fill(path, units, count=5)
    with Ledger.open(path, JOB, units) as ledger:
        assert ledger.results() == {u.key: (sum(u.payload), 10) for u in units[:5]}
        ledger.record(units[5].key, (1, 2))
        assert "6/20" in repr(ledger)
    with Ledger.open(path, JOB, units) as ledger:
        assert len(ledger.results()) == 6


def test_huge_and_negative_integers_round_trip(tmp_path):
    units = make_units(1)
    big = (2**200 + 1, -(3**90), 0)
    with Ledger.open(tmp_path / "big.sqlite", JOB, units) as ledger:
        ledger.record("u000", big)
    with Ledger.open(tmp_path / "big.sqlite", JOB, units) as ledger:
        assert ledger.results() == {"u000": big}


def test_key_recorded_twice_or_unknown_is_an_error(tmp_path):
    units = make_units(2)
    with Ledger.open(tmp_path / "l.sqlite", JOB, units) as ledger:
        ledger.record("u000", (1,))
        with pytest.raises(RuntimeError, match="recorded twice"):
            ledger.record("u000", (1,))
        with pytest.raises(KeyError):
            ledger.record("nope", (1,))


def test_a_unit_another_run_recorded_meanwhile_is_a_checkpoint_error(tmp_path, monkeypatch):
    # two runs at once on a file system that cannot lock files: the second's record was a
    # bare RuntimeError (a traceback in the shell)
    from gpuqueens import checkpoint_file

    monkeypatch.setattr(checkpoint_file, "_file_locks", lambda: (lambda fd: None, None))
    units = make_units(2)
    path = tmp_path / "l.sqlite"
    with Ledger.open(path, JOB, units) as first, Ledger.open(path, JOB, units) as second:
        first.record("u000", (1,))
        with pytest.raises(CheckpointError, match="'u000' was recorded by another run on the same file"):
            second.record("u000", (1,))


@pytest.mark.parametrize(
    "job, named",
    [
        ({**JOB, "n": 9}, "n: the checkpoint has 8, this run has 9"),
        ({**JOB, "problem": "nqueens"}, "it records toy n=8, this run is nqueens n=8"),
        ({**JOB, "plan": "other"}, "plan:"),
        ({**JOB, "unique": True}, "unique: the checkpoint has none"),
    ],
)
def test_other_job_is_refused_naming_the_difference(tmp_path, job, named):
    path = tmp_path / "run.sqlite"
    units = make_units()
    fill(path, units, count=3)
    with pytest.raises(CheckpointError, match="belongs to a different run") as info:
        Ledger.open(path, job, units)
    assert named in str(info.value)


def test_other_unit_list_is_refused(tmp_path):
    path = tmp_path / "run.sqlite"
    units = make_units()
    fill(path, units, count=3)
    with pytest.raises(CheckpointError, match="work units: the checkpoint has 20, this run has 21"):
        Ledger.open(path, JOB, make_units(21))
    changed = units[:-1] + [WorkUnit(units[-1].key, range(3))]
    with pytest.raises(CheckpointError, match="different keys or payloads"):
        Ledger.open(path, JOB, changed)


def test_other_gpuqueens_version_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "run.sqlite"
    units = make_units()
    fill(path, units, count=3)
    monkeypatch.setattr(gpuqueens._version, "__version__", "99.0.0")
    with pytest.raises(CheckpointError, match="gpuqueens version: .* this is 99.0.0"):
        Ledger.open(path, JOB, units)


def test_garbage_file_is_not_a_ledger_and_is_left_alone(tmp_path):
    path = tmp_path / "garbage.sqlite"
    garbage = bytes(range(256)) * 40
    path.write_bytes(garbage)
    with pytest.raises(CheckpointError, match="not a gpuqueens ledger"):
        Ledger.open(path, JOB, make_units())
    assert path.read_bytes() == garbage


def test_other_sqlite_database_is_not_a_ledger(tmp_path):
    path = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(CheckpointError, match="not a gpuqueens ledger"):
        Ledger.open(path, JOB, make_units())


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_database_without_tables_becomes_a_ledger(tmp_path, journal):
    # What a process killed while creating a ledger leaves behind (the creating transaction
    # never committed): an empty file, or an SQLite file without tables.
    path = tmp_path / "half.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA journal_mode={journal}")
    db.close()
    units = make_units()
    fill(path, units, count=2)
    with Ledger.open(path, JOB, units) as ledger:
        assert len(ledger.results()) == 2


def test_empty_file_becomes_a_ledger(tmp_path):
    path = tmp_path / "empty.sqlite"
    path.touch()
    with Ledger.open(path, JOB, make_units()) as ledger:
        assert ledger.results() == {}


@pytest.mark.parametrize("edit, named", [
    ("UPDATE units SET result = '[999,10]' WHERE key = 'u002'", "'u002'"),
    # a flipped bit in a row: Python's sqlite3 calls it an OperationalError, as it does a
    # locked or read-only file, but it is damage
    ("UPDATE units SET checksum = CAST(X'ff00fe' AS TEXT) WHERE key = 'u002'", "decode"),
    ("DELETE FROM header", "0 header rows, expected 1"),
    ("INSERT INTO header SELECT * FROM header", "2 header rows, expected 1"),
], ids=["edited result", "not UTF-8", "header deleted", "header added"])
def test_an_edited_ledger_is_refused_as_damaged(tmp_path, edit, named):
    path = tmp_path / "run.sqlite"
    units = make_units()
    fill(path, units, count=5)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(edit)
    db.close()
    with pytest.raises(CheckpointError, match=f"damaged, not trusted.*{named}"):
        Ledger.open(path, JOB, units)


def test_row_copied_from_another_run_is_refused(tmp_path):
    units = make_units()
    fill(tmp_path / "a.sqlite", units, count=1, job={**JOB, "n": 1})
    fill(tmp_path / "b.sqlite", units, count=0)
    with closing(sqlite3.connect(tmp_path / "a.sqlite")) as a, a, closing(sqlite3.connect(tmp_path / "b.sqlite")) as b, b:
        b.execute("INSERT INTO units VALUES (?, ?, ?, ?)", a.execute("SELECT * FROM units").fetchone())
    a.close(), b.close()
    with pytest.raises(CheckpointError, match="damaged, not trusted"):
        Ledger.open(tmp_path / "b.sqlite", JOB, units)


def test_overwritten_pages_are_refused_as_damaged(tmp_path):
    path = tmp_path / "run.sqlite"
    units = [WorkUnit(f"unit-{i:05d}-" + "x" * 40, range(i)) for i in range(400)]
    fill(path, units)
    data = bytearray(path.read_bytes())
    assert len(data) > 4 * 4096
    data[2 * 4096 : 3 * 4096] = b"\xa5" * 4096  # garbage over a whole page past the header
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged, not trusted"):
        Ledger.open(path, JOB, units)


def test_second_writer_is_refused_while_the_first_is_open(tmp_path):
    path = tmp_path / "run.sqlite"
    units = make_units()
    with Ledger.open(path, JOB, units):
        with pytest.raises(CheckpointError, match="in use by another run"):
            Ledger.open(path, JOB, units)
    Ledger.open(path, JOB, units).close()  # free again once closed


def test_job_must_be_json(tmp_path):
    with pytest.raises(TypeError, match="JSON-serialisable"):
        Ledger.open(tmp_path / "l.sqlite", {"x": object()}, make_units())
    assert canonical_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'


def test_units_digest_depends_on_order_keys_and_payloads():
    units = make_units(3)
    assert units_digest(units) == units_digest(make_units(3))
    assert units_digest(units) != units_digest(units[::-1])
    assert units_digest([WorkUnit("a", (1, 2))]) != units_digest([WorkUnit("a", (1, 3))])
    assert units_digest([WorkUnit("a", 1)]) != units_digest([WorkUnit("b", 1)])
    np = pytest.importorskip("numpy")
    one, two = np.arange(4, dtype=np.uint32), np.arange(4, dtype=np.uint64)
    assert units_digest([WorkUnit("a", one)]) == units_digest([WorkUnit("a", one.copy())])
    assert units_digest([WorkUnit("a", one)]) != units_digest([WorkUnit("a", two)])


def test_record_refuses_results_that_are_not_integers(tmp_path):
    with Ledger.open(tmp_path / "l.sqlite", JOB, make_units(1)) as ledger:
        for bad in [("3",), (1.5,), (True,)]:
            with pytest.raises(TypeError, match="integers"):
                ledger.record("u000", bad)
        ledger.record("u000", (3,))


def test_stages_share_one_file_and_are_checked_separately(tmp_path):
    path = tmp_path / "run.sqlite"
    first, second = make_units(3), make_units(5)
    fill(path, first, count=3)
    with Ledger.open(path, JOB, second, stage="round2") as ledger:
        assert ledger.results() == {}
        ledger.record("u001", (7, 7))
    with Ledger.open(path, JOB, first) as ledger:  # the first stage is untouched
        assert len(ledger.results()) == 3
    with Ledger.open(path, JOB, second, stage="round2") as ledger:
        assert ledger.results() == {"u001": (7, 7)}
        assert "stage 'round2'" in repr(ledger)
    with pytest.raises(CheckpointError, match="work units of stage 'round2': the checkpoint has 5"):
        Ledger.open(path, JOB, make_units(4), stage="round2")
    with pytest.raises(CheckpointError, match="belongs to a different run"):
        Ledger.open(path, {**JOB, "n": 9}, second, stage="round2")


def test_row_moved_to_another_stage_is_refused(tmp_path):
    path = tmp_path / "run.sqlite"
    units = make_units(3)
    fill(path, units, count=1)
    Ledger.open(path, JOB, units, stage="later").close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE units SET stage = 'later'")
    db.close()
    with pytest.raises(CheckpointError, match="damaged, not trusted.*'u000'"):
        Ledger.open(path, JOB, units, stage="later")


def test_ledger_of_an_older_format_is_refused_by_version(tmp_path):
    path = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA application_id=1196446028")
        db.execute("CREATE TABLE header (format_version, gpuqueens_version, job, unit_count, units_digest)")
        db.execute("CREATE TABLE units (key, result, checksum)")
        db.execute("INSERT INTO header VALUES (1, '0.1.0', '{}', 0, '')")
    db.close()
    with pytest.raises(CheckpointError, match="ledger format: the checkpoint has version 1"):
        Ledger.open(path, JOB, make_units())


def test_hostile_nesting_is_refused_not_a_crash(tmp_path):
    from gpuqueens.ledger import stored_job

    path = tmp_path / "run.sqlite"
    units = make_units()
    fill(path, units, count=2)
    deep = "[" * 200_000 + "]" * 200_000  # json.loads would recurse past Python's limit
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE units SET result = ? WHERE key = 'u001'", (deep,))
    db.close()
    with pytest.raises(CheckpointError, match="damaged, not trusted.*'u001'"):
        Ledger.open(path, JOB, units)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE header SET job = ?", (deep,))
    db.close()
    assert stored_job(path) is None
    with pytest.raises(CheckpointError, match="damaged, not trusted: unreadable job"):
        Ledger.open(path, JOB, units)


def test_stored_keys_are_read_forgivingly(tmp_path):
    # only for sizing a resumed run's pool: anything unreadable is no key, never an error
    from gpuqueens.ledger import stored_keys

    path = tmp_path / "run.sqlite"
    units = make_units()
    fill(path, units, count=2)
    with Ledger.open(path, JOB, make_units(3), stage="second") as ledger:
        ledger.record("u000", (1, 2))
    assert stored_keys(path) == {"u000", "u001"}
    assert stored_keys(path, "second") == {"u000"}
    assert stored_keys(path, "third") == frozenset()
    text = tmp_path / "notes.txt"
    text.write_text("not a ledger")
    for unreadable in (tmp_path / "missing.sqlite", text, tmp_path):
        assert stored_keys(unreadable) == frozenset()
