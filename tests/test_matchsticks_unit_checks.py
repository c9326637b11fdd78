"""unit_checks.py: unit results no correct join gives are refused before they are combined,
from an executor (a faulty worker or device) and from an edited checkpoint alike."""

import concurrent.futures
import math
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest

from gpuqueens.ledger_rows import row_checksum, stage_key
from gpuqueens.problems.matchsticks.bruteforce import rs_histogram
from gpuqueens.problems.matchsticks.exact_join import count_exact_join
from gpuqueens.problems.matchsticks.grid import stick_count
from gpuqueens.problems.matchsticks.modular import NARROW_PRIME_LIMIT, binomial_bound, primes_for_bound
from gpuqueens.problems.matchsticks.table import table_rows
from gpuqueens.problems.matchsticks.unit_checks import check_count, check_fewest, check_residues
from gpuqueens.runner import InconsistentCountError


class Altering(concurrent.futures.Executor):
    """Solves each unit here and hands back ``alter(result)``: a worker that computes wrong."""

    def __init__(self, alter):
        self.alter = alter

    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()
        future.set_result(self.alter(fn(*args, **kwargs)))
        return future


def exact_primes(m, n, removed):
    return primes_for_bound(binomial_bound(stick_count(m, n), removed), NARROW_PRIME_LIMIT)


def test_residues_must_be_below_their_primes_one_per_prime():
    check_residues("a", (0, 6), [5, 7])
    check_residues("b", (4, 0), [5, 7])
    for bad in ((5, 0), (-1, 0), (0, 7)):
        with pytest.raises(InconsistentCountError, match="'b' returned residue"):
            check_residues("b", bad, [5, 7])
    with pytest.raises(InconsistentCountError, match="returned 1 residues for 2 primes"):
        check_residues("a", (0,), [5, 7])


def test_a_count_is_at_most_every_way_to_remove_its_sticks():
    assert check_count(math.comb(12, 5), sticks=12, removed=5, what="x") == math.comb(12, 5)
    assert check_count(0, sticks=12, removed=5, what="x") == 0
    with pytest.raises(InconsistentCountError, match=f"only {math.comb(12, 5)} ways"):
        check_count(math.comb(12, 5) + 1, sticks=12, removed=5, what="x")
    with pytest.raises(InconsistentCountError):
        check_count(-1, sticks=12, removed=5, what="x")


def test_fewest_pairs_are_none_or_a_capped_r_with_some_ways():
    caps = {0: 9, 3: 7}  # the pairs come in increasing S: S = 0, then S = 3
    check_fewest("a", (9, 16, -1, 0), caps, sticks=40, what="t")
    check_fewest("b", (-1, 0, 7, 168), caps, sticks=40, what="t")
    for bad in ((10, 16, -1, 0),            # R above the round's cap
                (9, 0, -1, 0),              # an R with no way
                (-1, 3, -1, 0),             # ways with no R
                (9, 16, 7, math.comb(40, 7) + 1),  # more ways than C(E, R)
                (9, 16, -1)):               # a pair missing
        with pytest.raises(InconsistentCountError, match="'a' returned"):
            check_fewest("a", bad, caps, sticks=40, what="t")


def test_a_residue_off_its_range_from_a_worker_is_refused_and_not_recorded(tmp_path):
    expected = rs_histogram(3, 3)[5, 3]
    assert count_exact_join(3, 3, removed=5, squares=3, run={"executor": Altering(tuple)}) == expected
    p = exact_primes(3, 3, 5)[0]
    off = Altering(lambda r: (r[0] + p, *r[1:]))  # the same count modulo p, but not a residue
    path = tmp_path / "p2.sqlite"
    with pytest.raises(InconsistentCountError, match=f"modulo {p}"):
        count_exact_join(3, 3, removed=5, squares=3, run={"executor": off, "checkpoint": path})
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT COUNT(*) FROM units").fetchone() == (0,)  # the checkpoint keeps none
    db.close()
    assert count_exact_join(3, 3, removed=5, squares=3, run={"checkpoint": path}) == expected


def test_residues_that_add_up_to_more_than_every_removal_are_refused(monkeypatch):
    # one unit's residues moved so that the CRT lands on C(E, R) + 1: a count no grid has
    sticks = stick_count(3, 3)
    primes = exact_primes(3, 3, 5)
    target = math.comb(sticks, 5) + 1
    assert target < math.prod(primes)
    shift = target - rs_histogram(3, 3)[5, 3]
    moved = Altering(lambda r: tuple((v + shift) % p for v, p in zip(r, primes)))
    first_only = {"done": False}

    def once(result):
        if first_only["done"]:
            return tuple(result)
        first_only["done"] = True
        return moved.alter(result)

    with pytest.raises(InconsistentCountError, match=f"add up to {target} ways"):
        count_exact_join(3, 3, removed=5, squares=3, run={"executor": Altering(once)})


def test_a_table_round_whose_worker_reports_an_r_past_its_cap_is_refused():
    # 5×6: every S by the rounds of the join (no top sweep), one unit per centre pattern
    wrong = Altering(lambda r: tuple(v + 100 if k == 0 and v >= 0 else v for k, v in enumerate(r)))
    with pytest.raises(InconsistentCountError, match=r"the 5×6 table, round \d: unit .* returned R = 1\d\d"):
        table_rows(5, 6, [0], run={"executor": wrong})


def test_an_edited_checkpoint_of_a_count_by_squares_fails_in_one_line(tmp_path):
    # a residue moved past its prime, the row checksum recomputed: the shell says so in one
    # line with exit code 1, as for a faulty device, instead of printing a count
    path = tmp_path / "p2.sqlite"
    command = [sys.executable, "-m", "gpuqueens", "matchsticks", "6", "6", "--removed", "17",
               "--squares", "4", "--backend", "cpu", "--no-progress", "--checkpoint", str(path)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and first.stdout.startswith("6×6 R=17 S=4: 371612\n"), first.stderr
    p = exact_primes(6, 6, 17)[0]
    with closing(sqlite3.connect(path)) as db, db:
        (job,) = db.execute("SELECT job FROM header").fetchone()
        stage, digest = db.execute("SELECT name, units_digest FROM stages").fetchone()
        key, text = db.execute("SELECT key, result FROM units ORDER BY key LIMIT 1").fetchone()
        values = [int(v) for v in text.strip("[]").split(",")]
        values[0] += p
        new = "[" + ",".join(map(str, values)) + "]"
        db.execute("UPDATE units SET result = ?, checksum = ? WHERE key = ?",
                   (new, row_checksum(stage_key(job, stage, digest), key, new), key))
    db.close()
    again = subprocess.run([*command, "--recheck", "0"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.startswith("gpuqueens: error: ") and f"modulo {p}" in again.stderr
    assert f"It is stored in checkpoint {path}: delete that unit's row" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
