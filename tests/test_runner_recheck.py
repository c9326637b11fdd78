"""The re-check: stored units solved again on resume and at the end; a difference refuses
the ledger for good. And the options run_units refuses before any work."""

from __future__ import annotations

import concurrent.futures
import json
import sqlite3
from contextlib import closing

import pytest

from gpuqueens.ledger import CheckpointError, canonical_json
from gpuqueens.ledger_rows import row_checksum, stage_key
from gpuqueens.runner import WorkUnit, check_run_options, run_units

JOB = {"problem": "toy-recheck", "plan": "ranges-of-5"}


def toy_units(count: int = 12) -> list[WorkUnit]:
    return [WorkUnit(f"u{i:02d}", range(5 * i, 5 * i + 5)) for i in range(count)]


def toy_solve(payload: range) -> tuple[int, int]:
    return (sum(payload), len(payload))


class Counting:
    """A solver that remembers which units it solved."""

    def __init__(self) -> None:
        self.solved: list[int] = []

    def __call__(self, payload: range) -> tuple[int, int]:
        self.solved.append(payload.start // 5)
        return toy_solve(payload)


def edit_row(path, key: str, result: list[int], stage: str = "") -> None:
    """Change a stored result and recompute its checksum, as a deliberate editor would."""
    with closing(sqlite3.connect(path)) as db, db:
        (job_json,) = db.execute("SELECT job FROM header").fetchone()
        (digest,) = db.execute("SELECT units_digest FROM stages WHERE name = ?", (stage,)).fetchone()
        text = json.dumps(result, separators=(",", ":"))
        checksum = row_checksum(stage_key(job_json, stage, digest), key, text)
        db.execute("UPDATE units SET result = ?, checksum = ? WHERE stage = ? AND key = ?",
                   (text, checksum, stage, key))
    db.close()


def test_fresh_checkpointed_run_rechecks_one_unit_at_the_end(tmp_path):
    solver = Counting()
    units = toy_units()
    results = run_units(units, solver, job=JOB, checkpoint=tmp_path / "r.sqlite", progress=False)
    assert results == {u.key: toy_solve(u.payload) for u in units}
    assert len(solver.solved) == len(units) + 1  # every unit, and one of them again
    assert sorted(set(solver.solved)) == list(range(len(units)))


def test_resumed_run_rechecks_before_new_work_and_at_the_end(tmp_path):
    path = tmp_path / "r.sqlite"
    units = toy_units()
    run_units(units[:0] + units, toy_solve, job=JOB, checkpoint=path, progress=False, recheck=0)
    solver = Counting()
    run_units(units, solver, job=JOB, checkpoint=path, progress=False)
    assert len(solver.solved) == 1  # a finished ledger: one stored unit is solved again

    partial = tmp_path / "partial.sqlite"

    def stops_at_6(payload):
        if payload.start == 30:
            raise KeyboardInterrupt
        return toy_solve(payload)

    with pytest.raises(KeyboardInterrupt):
        run_units(units, stops_at_6, job=JOB, checkpoint=partial, progress=False)
    solver = Counting()
    run_units(units, solver, job=JOB, checkpoint=partial, progress=False, recheck=2)
    assert solver.solved[0] < 6 and solver.solved[1] < 6  # stored units first, before new work
    assert solver.solved[2:8] == list(range(6, 12))
    assert len(solver.solved) == 2 + 6 + 2
    assert len(set(solver.solved[:2]) | set(solver.solved[8:])) == 4  # no unit re-checked twice


def test_no_checkpoint_or_recheck_zero_costs_nothing(tmp_path):
    solver = Counting()
    run_units(toy_units(), solver, job=JOB, progress=False)
    assert len(solver.solved) == 12
    solver = Counting()
    run_units(toy_units(), solver, job=JOB, checkpoint=tmp_path / "r.sqlite", progress=False,
              recheck=0)
    assert len(solver.solved) == 12


def test_recheck_larger_than_the_run_checks_every_unit_once(tmp_path):
    solver = Counting()
    run_units(toy_units(3), solver, job=JOB, checkpoint=tmp_path / "r.sqlite", progress=False,
              recheck=10)
    assert sorted(solver.solved) == [0, 0, 1, 1, 2, 2]


def test_edited_row_with_its_checksum_recomputed_is_caught_and_refused_for_good(tmp_path):
    path = tmp_path / "r.sqlite"
    units = toy_units()
    run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False)
    edit_row(path, "u03", [999, 5])
    with pytest.raises(CheckpointError) as info:
        run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False, recheck=len(units))
    message = str(info.value)
    assert "'u03'" in message and "(85, 5)" in message and "(999, 5)" in message
    assert "failed its re-check" in message
    # Marked in the file: no later run trusts it, whatever its re-check would pick.
    with pytest.raises(CheckpointError, match="failed a re-check earlier"):
        run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False, recheck=0)


def test_single_unit_run_is_always_caught(tmp_path):
    path = tmp_path / "one.sqlite"
    units = toy_units(1)
    run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False)
    edit_row(path, "u00", [0, 0])
    with pytest.raises(CheckpointError, match="'u00'.*gave \\(10, 5\\).*holds \\(0, 0\\)"):
        run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False)


def test_a_faulty_solve_during_the_run_is_caught_at_the_end(tmp_path):
    calls = {"n": 0}

    def first_call_wrong(payload):  # a device that gets one answer wrong, once
        calls["n"] += 1
        total, count = toy_solve(payload)
        return (total + 1, count) if calls["n"] == 1 else (total, count)

    path = tmp_path / "r.sqlite"
    with pytest.raises(CheckpointError, match="'u00'.*gave \\(10, 5\\).*holds \\(11, 5\\)"):
        run_units(toy_units(1), first_call_wrong, job=JOB, checkpoint=path, progress=False)
    with pytest.raises(CheckpointError, match="failed a re-check earlier"):
        run_units(toy_units(1), toy_solve, job=JOB, checkpoint=path, progress=False)


def test_recheck_runs_on_the_executor(tmp_path):
    submitted = []

    class Recording(concurrent.futures.ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            submitted.append(args[0].start // 5)
            return super().submit(fn, *args, **kwargs)

    with Recording(2) as pool:
        run_units(toy_units(), toy_solve, job=JOB, executor=pool, checkpoint=tmp_path / "r.sqlite",
                  progress=False)
    assert len(submitted) == 13


def test_stored_result_of_another_length_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    units = toy_units()
    run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False)
    edit_row(path, "u05", [1])
    with pytest.raises(CheckpointError, match="'u05' holds 1 number, but unit 'u00' holds 2"):
        run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False, recheck=0)


def test_every_stored_result_edited_alike_still_meets_the_fresh_length(tmp_path):
    path = tmp_path / "r.sqlite"
    units = toy_units(2)
    run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False)
    edit_row(path, "u00", [7])
    edit_row(path, "u01", [7])
    with pytest.raises(CheckpointError, match="gave \\(.*holds \\(7,\\)"):
        run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False)


def test_a_single_stored_unit_of_another_length_than_the_caller_knows_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    units = toy_units(1)  # one unit: no other to compare with, the caller says the width
    run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False, result_width=2)
    edit_row(path, "u00", [7])
    with pytest.raises(CheckpointError, match="'u00' holds 1 number, but this run's units give 2"):
        run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False, recheck=0,
                  result_width=2)


def test_a_solver_giving_another_length_than_the_caller_knows_is_an_error():
    with pytest.raises(TypeError, match="the solver returned 2 numbers, but this run's units give 3"):
        run_units(toy_units(1), toy_solve, job=JOB, progress=False, result_width=3)


def test_solver_giving_results_of_different_lengths_is_an_error():
    with pytest.raises(TypeError, match="'u01': the solver returned 1 number, but unit 'u00' gave 2"):
        run_units(toy_units(2), lambda p: (1, 2) if p.start == 0 else (1,), job=JOB,
                  progress=False)


@pytest.mark.parametrize("bad", ["pool", 4, object(), concurrent.futures.ThreadPoolExecutor])
def test_executor_without_submit_is_refused_before_any_work(bad, tmp_path):
    solver = Counting()
    with pytest.raises(TypeError, match="executor must be (a concurrent.futures.Executor|an executor object)"):
        run_units(toy_units(), solver, job=JOB, executor=bad, checkpoint=tmp_path / "r.sqlite",
                  progress=False)
    assert solver.solved == [] and not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize("bad", ["no", "yes", 1, 0, [], "False"])
def test_progress_other_than_a_bool_or_none_is_refused(bad):
    solver = Counting()
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        run_units(toy_units(), solver, job=JOB, progress=bad)
    assert solver.solved == []


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (True, TypeError), (1.0, TypeError),
                                        ("1", TypeError), (None, TypeError)])
def test_recheck_must_be_a_count(bad, error):
    with pytest.raises(error, match="recheck"):
        run_units(toy_units(), toy_solve, job=JOB, progress=False, recheck=bad)
    with pytest.raises(error, match="recheck"):
        check_run_options(recheck=bad)


def test_job_stays_canonical():
    assert canonical_json(JOB) == '{"plan":"ranges-of-5","problem":"toy-recheck"}'


def test_on_an_executor_the_recheck_does_not_hold_back_new_units(tmp_path):
    import threading

    path = tmp_path / "r.sqlite"
    units = toy_units()

    def stops_at_6(payload):
        if payload.start == 30:
            raise KeyboardInterrupt
        return toy_solve(payload)

    with pytest.raises(KeyboardInterrupt):
        run_units(units, stops_at_6, job=JOB, checkpoint=path, progress=False)
    new_unit_started = threading.Event()

    def solver(payload):
        if payload.start < 30:  # a unit from the checkpoint, solved again
            assert new_unit_started.wait(10), "the re-check held back the new units"
        else:
            new_unit_started.set()
        return toy_solve(payload)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = run_units(units, solver, job=JOB, executor=pool, checkpoint=path,
                            progress=False)
    assert results == {u.key: toy_solve(u.payload) for u in units}


def test_a_recheck_that_arrives_before_its_first_solve_is_compared_when_that_arrives(tmp_path):
    import threading

    release = threading.Event()
    calls = {"n": 0}
    lock = threading.Lock()

    def first_solve_slow_and_wrong(payload):
        with lock:
            calls["n"] += 1
            first = calls["n"] == 1
        if first:
            assert release.wait(10)
            return (-1, 5)
        release.set()  # the second solve (the re-check) finishes first
        return toy_solve(payload)

    with concurrent.futures.ThreadPoolExecutor(2) as pool, \
            pytest.raises(CheckpointError, match="'u00' was solved again and gave \\(10, 5\\), "
                                                 "but the checkpoint holds \\(-1, 5\\)"):
        run_units(toy_units(1), first_solve_slow_and_wrong, job=JOB, executor=pool,
                  checkpoint=tmp_path / "r.sqlite", progress=False)


def test_new_result_of_another_length_than_the_stored_ones_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    units = toy_units(3)

    def stops_at_2(payload):
        if payload.start == 10:
            raise KeyboardInterrupt
        return toy_solve(payload)

    with pytest.raises(KeyboardInterrupt):
        run_units(units, stops_at_2, job=JOB, checkpoint=path, progress=False)
    edit_row(path, "u00", [7])
    edit_row(path, "u01", [7])
    with pytest.raises(CheckpointError, match="'u02' gives, solved now, 2 numbers, but unit "
                                              "'u00' holds 1"):
        run_units(units, toy_solve, job=JOB, checkpoint=path, progress=False, recheck=0)
