"""N-Queens checkpoints that must not be trusted, options refused up front, and the
long-run warning: each refused before any work, with a clear message."""

from __future__ import annotations

import json
import sqlite3
import time
import warnings
from contextlib import closing

import pytest

import gpuqueens
from gpuqueens.ledger_rows import row_checksum, stage_key
from gpuqueens.problems import nqueens as nqueens_module
from gpuqueens.problems.nqueens.plan import InconsistentCountError, plan_for, solve_unit, work_units
from gpuqueens.runner import run_units
from oeis import total, unique


def ledger_for(path, n: int, backend: str = "cpu") -> None:
    """A finished checkpoint of n with the plan ``backend`` would make."""
    plan = plan_for(n, backend)
    run_units(work_units(plan, "cpu"), solve_unit, job=plan.job(), checkpoint=path,
              progress=False, recheck=0)


def edit_header_job(path, **changes) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        (text,) = db.execute("SELECT job FROM header").fetchone()
        db.execute("UPDATE header SET job = ?", (json.dumps({**json.loads(text), **changes}),))
    db.close()


def edit_result(path, key: str, add: int) -> tuple[int, ...]:
    """Add ``add`` to a unit's total and recompute the row checksum; return the new result."""
    with closing(sqlite3.connect(path)) as db, db:
        (job_json,) = db.execute("SELECT job FROM header").fetchone()
        (digest,) = db.execute("SELECT units_digest FROM stages").fetchone()
        (text,) = db.execute("SELECT result FROM units WHERE key = ?", (key,)).fetchone()
        result = json.loads(text)
        result[0] += add
        new = json.dumps(result, separators=(",", ":"))
        db.execute("UPDATE units SET result = ?, checksum = ? WHERE key = ?",
                   (new, row_checksum(stage_key(job_json, "", digest), key, new), key))
    db.close()
    return tuple(result)


@pytest.fixture
def no_work(monkeypatch):
    """Fails the test if any unit list is built or any unit solved."""
    def refuse(*args, **kwargs):
        raise AssertionError("work was started")

    monkeypatch.setattr(nqueens_module, "work_units", refuse)
    monkeypatch.setattr(nqueens_module, "run_units", refuse)


@pytest.mark.parametrize("units", [0, -5, 10**12, 2, "4"])
def test_header_plan_that_the_code_does_not_make_is_refused(tmp_path, units, no_work):
    path = tmp_path / "n15.sqlite"
    ledger_for(path, 15)
    edit_header_job(path, units=units)
    start = time.perf_counter()
    with pytest.raises(gpuqueens.CheckpointError) as info:
        gpuqueens.count(15, backend="cpu", checkpoint=path)
    assert time.perf_counter() - start < 10  # refused, not computed (about 0.01 s)
    message = str(info.value)
    assert "holds an N-Queens plan that gpuqueens" in message
    assert f'"units":{json.dumps(units)}' in message and "does not make for n=15" in message


@pytest.mark.parametrize("field", ["unit_row", "units"])
def test_header_with_an_infinite_number_is_refused(tmp_path, field, no_work):
    path = tmp_path / "n15.sqlite"
    ledger_for(path, 15)
    edit_header_job(path, **{field: float("inf")})  # JSON's Infinity: int() overflows on it
    with pytest.raises(gpuqueens.CheckpointError, match="does not make for n=15"):
        gpuqueens.count(15, backend="cpu", checkpoint=path)


def test_header_with_an_infinite_board_size_is_another_run(tmp_path):
    path = tmp_path / "n15.sqlite"
    ledger_for(path, 15)
    edit_header_job(path, n=float("inf"))
    with pytest.raises(gpuqueens.CheckpointError, match="n: the checkpoint has inf, this run has 15"):
        gpuqueens.count(15, backend="cpu", checkpoint=path)


def test_plan_of_another_mark_row_is_refused(tmp_path, no_work):
    path = tmp_path / "n12.sqlite"
    ledger_for(path, 12)
    edit_header_job(path, unit_row=4, units=3)
    with pytest.raises(gpuqueens.CheckpointError, match="does not make for n=12"):
        gpuqueens.count(12, backend="cpu", checkpoint=path)


def test_gpu_started_checkpoint_finishes_on_the_cpu(tmp_path):
    path = tmp_path / "n15.sqlite"
    ledger_for(path, 15, backend="gpu")  # one unit: the plan the GPU makes for n=15
    result = gpuqueens.nqueens(15, backend="cpu", checkpoint=path)
    assert (result.total, result.unique) == (total(15), unique(15))


def test_edited_result_is_caught_by_the_recheck(tmp_path):
    path = tmp_path / "n15.sqlite"
    ledger_for(path, 15)  # four prefix units and the symmetric unit on the CPU plan
    edited = edit_result(path, "u2", 2400)  # Burnside still divides: only the recheck sees it
    with pytest.raises(gpuqueens.CheckpointError) as info:
        gpuqueens.count(15, backend="cpu", checkpoint=path, recheck=5)
    message = str(info.value)
    assert "'u2'" in message and str(edited) in message and "failed its re-check" in message
    with pytest.raises(gpuqueens.CheckpointError, match="failed a re-check earlier"):
        gpuqueens.count(15, backend="cpu", checkpoint=path, recheck=0)


def test_sample_as_large_as_the_plan_rechecks_every_unit(tmp_path):
    path = tmp_path / "n12.sqlite"
    ledger_for(path, 12)  # two units: u0 and the symmetric unit
    edit_result(path, "u0", -24)  # total 8 less: Burnside still divides, only the recheck sees it
    with pytest.raises(gpuqueens.CheckpointError, match="'u0' was solved again and gave"):
        gpuqueens.count(12, backend="cpu", checkpoint=path, recheck=2)


def test_an_edit_missed_by_the_sample_is_still_refused(tmp_path):
    # recheck=1 samples one of the two units; an edit that breaks Burnside's divisibility
    # is refused whichever unit the sample picks.
    path = tmp_path / "n12.sqlite"
    ledger_for(path, 12)
    edit_result(path, "u0", -1)
    with pytest.raises((gpuqueens.CheckpointError, InconsistentCountError)):
        gpuqueens.count(12, backend="cpu", checkpoint=path, recheck=1)


def test_recheck_is_passed_through_and_checked(tmp_path):
    path = tmp_path / "n13.sqlite"
    assert gpuqueens.count(13, backend="cpu", checkpoint=path, recheck=0) == total(13)
    assert gpuqueens.count(13, backend="cpu", checkpoint=path, recheck=5) == total(13)
    for bad, error in ((-1, ValueError), (True, TypeError), ("1", TypeError)):
        with pytest.raises(error, match="recheck"):
            gpuqueens.count(13, backend="cpu", checkpoint=path, recheck=bad)


@pytest.mark.parametrize("option", [{"executor": "pool"}, {"executor": 2},
                                    {"progress": "no"}, {"progress": 1}])
def test_bad_options_are_refused_before_any_work(option, no_work):
    with pytest.raises(TypeError, match="executor must|progress must"):
        gpuqueens.count(20, backend="cpu", **option)
    with pytest.raises(TypeError):
        gpuqueens.count(2, backend="cpu", **option)  # even where there is nothing to run


@pytest.mark.parametrize("checkpoint, match", [("", "path is empty"),
                                               ("/no/such/dir/n.sqlite", "does not exist")])
def test_bad_checkpoint_paths_are_refused_before_any_work(checkpoint, match, no_work):
    with pytest.raises(gpuqueens.CheckpointError, match=match):
        gpuqueens.count(15, backend="cpu", checkpoint=checkpoint)


def test_fifo_checkpoint_is_refused(tmp_path, no_work):
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(gpuqueens.CheckpointError, match="named pipe"):
        gpuqueens.count(15, backend="cpu", checkpoint=fifo)


def test_long_count_warns_before_any_work(no_work):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        with pytest.raises(gpuqueens.LongRunWarning,
                           match="counting n=32 on one CPU core is expected to take about .* years"):
            gpuqueens.count(32, backend="cpu", workers=1)
    assert time.perf_counter() - start < 10


def test_short_counts_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpuqueens.LongRunWarning)
        assert gpuqueens.count(12, backend="cpu") == total(12)


def test_the_warning_points_at_the_callers_line(monkeypatch):
    monkeypatch.setattr(nqueens_module, "run_units", lambda *a, **k: {"u0": (0, 0, 0), "sym": (0, 0, 0)})
    monkeypatch.setattr(nqueens_module, "work_units", lambda *a, **k: [])
    with pytest.warns(gpuqueens.LongRunWarning) as caught:
        gpuqueens.nqueens(24, backend="cpu")
    assert caught[0].filename == __file__


def _set_every_result(path, result: list[int]) -> None:
    """Give every stored unit ``result``, with recomputed checksums (a deliberate edit)."""
    with closing(sqlite3.connect(path)) as db, db:
        (job_json,) = db.execute("SELECT job FROM header").fetchone()
        (digest,) = db.execute("SELECT units_digest FROM stages").fetchone()
        new = json.dumps(result, separators=(",", ":"))
        for (key,) in db.execute("SELECT key FROM units").fetchall():
            db.execute("UPDATE units SET result = ?, checksum = ? WHERE key = ?",
                       (new, row_checksum(stage_key(job_json, "", digest), key, new), key))
    db.close()


@pytest.mark.parametrize("edited", [[], [1, 2], [1, 2, 3, 4]])
def test_every_stored_result_of_another_length_is_refused(tmp_path, edited):
    # every unit alike, so no unit shows the edit against another: the count says the width
    path = tmp_path / "n8.sqlite"
    gpuqueens.nqueens(8, backend="cpu", checkpoint=path, workers=1)
    _set_every_result(path, edited)
    with pytest.raises(gpuqueens.CheckpointError, match="but this run's units give 3"):
        gpuqueens.nqueens(8, backend="cpu", checkpoint=path, workers=1, recheck=0)
