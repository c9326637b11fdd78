"""A round in a file that the worker processes of one count share (round_store.py): the
round comes back equal, arrays read-only; one process builds it while the others wait;
a round that cannot be written is built by each process; stores end with their count."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from seed_tables import SEED_4X4

import gpuqueens
from gpuqueens.problems.matchsticks import api
from gpuqueens.problems.matchsticks import round_store
from gpuqueens.problems.matchsticks.pairing import prepare_round
from gpuqueens.problems.matchsticks.round_store import (STORE_PREFIX, RoundStore, open_store,
                                                        read_round, write_round)

pytestmark = pytest.mark.skipif(round_store.fcntl is None, reason="no file locks here")


@dataclass
class _Side:
    keys: np.ndarray
    bits: np.ndarray
    rows: list


@dataclass
class _Round:
    left: _Side
    right: _Side
    counts: np.ndarray
    caps: dict


def _sample_round() -> _Round:
    rng = np.random.default_rng(7)
    side = _Side(rng.integers(0, 2**63, 1001, dtype=np.uint64),
                 rng.random((33, 42), dtype=np.float32), [3, 5, 9])
    counts = np.asfortranarray(rng.integers(0, 2**31, (17, 3), dtype=np.uint64))
    return _Round(side, side, counts, {0: 25, 14: 18})


def test_a_round_comes_back_equal_with_read_only_arrays(tmp_path):
    built = _sample_round()
    write_round(built, tmp_path / "r.round")
    back = read_round(tmp_path / "r.round")
    assert back.right is back.left  # one side kept once, as in a symmetric round
    for got, want in [(back.left.keys, built.left.keys), (back.left.bits, built.left.bits),
                      (back.counts, built.counts)]:
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert not got.flags.writeable
    assert back.left.rows == [3, 5, 9] and back.caps == built.caps
    assert not list(tmp_path.glob("*.partial"))


def test_a_real_round_comes_back_equal(tmp_path):
    rnd = prepare_round(4, 5, {0: 9, 3: 7}, 17)
    write_round(rnd, tmp_path / "r.round")
    back = read_round(tmp_path / "r.round")
    for side in ("left", "right"):
        a, b = getattr(rnd, side), getattr(back, side)
        for name in ("xbits", "xwords", "ybits", "s", "r", "counts", "hx"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), (side, name)
    assert back.caps == rnd.caps and back.primes_list == rnd.primes_list


def _build_marked(marks: str) -> dict:
    with open(marks, "a") as f:
        f.write(f"{os.getpid()}\n")
    return {"parts": np.arange(10**6, dtype=np.int64)}


def _shared_sum(directory: str, marks: str) -> int:
    rnd = RoundStore(directory).shared(("4x4", 17), lambda: _build_marked(marks))
    return int(rnd["parts"].sum())


def test_one_process_builds_while_the_others_wait(tmp_path):
    marks = str(tmp_path / "builds")
    with open_store() as store:
        with multiprocessing.get_context("spawn").Pool(3) as pool:
            sums = pool.starmap(_shared_sum, [(str(store.directory), marks)] * 6)
    assert sums == [sum(range(10**6))] * 6
    assert len(Path(marks).read_text().split()) == 1


def test_a_round_that_cannot_be_written_is_built_by_each_process(tmp_path, monkeypatch):
    def full_disk(value, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(round_store, "write_round", full_disk)
    store, builds = RoundStore(tmp_path), []
    for _ in range(2):
        got = store.shared(("k",), lambda: builds.append(1) or {"a": np.ones(3)})
        assert got["a"].sum() == 3 and got["a"].flags.writeable  # this process's own copy
    assert len(builds) == 2


def _stores_of(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"{STORE_PREFIX}{pid}-*"))


def test_a_store_ends_with_its_count_and_a_killed_counts_store_with_the_next():
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(gone.stdout)
    orphan = Path(tempfile.mkdtemp(prefix=f"{STORE_PREFIX}{dead}-"))
    (orphan / "x.round").write_bytes(b"left by a killed count")
    with open_store() as store:
        assert store.directory.is_dir() and store.directory in _stores_of(os.getpid())
        assert not orphan.exists()
    assert not store.directory.exists()


def test_a_table_on_worker_processes_shares_its_rounds_and_leaves_no_store(monkeypatch, join_only):
    files = []

    @contextlib.contextmanager
    def recorded():
        with open_store() as store:
            yield store
            files.extend(sorted(p.suffix for p in store.directory.iterdir()))

    monkeypatch.setattr(api, "open_store", recorded)
    table = gpuqueens.matchstick_table(4, 4, backend="cpu", workers=2, progress=False)
    assert table.rows == tuple(SEED_4X4)
    rounds = files.count(".round")  # one file per round of the join, whatever the processes
    assert rounds >= 1 and files == [".lock"] * rounds + [".round"] * rounds
    assert not _stores_of(os.getpid())


def test_a_file_system_that_cannot_map_files_gets_a_copy(tmp_path, monkeypatch):
    def cannot_map(*args, **kwargs):
        raise OSError(19, "No such device")

    write_round({"a": np.arange(7)}, tmp_path / "r.round")
    monkeypatch.setattr(round_store.mmap, "mmap", cannot_map)
    back = read_round(tmp_path / "r.round")
    assert back["a"].tolist() == list(range(7)) and not back["a"].flags.writeable
