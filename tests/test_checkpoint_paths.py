"""Checkpoint paths and permissions: every path that cannot hold a ledger is refused with a
CheckpointError before any unit is solved, and nothing is left behind to break a later run.

The read-only cases need permission bits that stop this process from writing; as root they
do not, and those tests skip (a test that could not fail would prove nothing).
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import sqlite3
import stat
import sys
import threading

import pytest

from gpuqueens.checkpoint_file import CheckpointFile, check_checkpoint_path
from gpuqueens.ledger import CheckpointError, Ledger, stored_job
from gpuqueens.runner import WorkUnit, run_units

JOB = {"problem": "toy-paths"}


def toy_units(count: int = 6) -> list[WorkUnit]:
    return [WorkUnit(f"u{i}", i) for i in range(count)]


class Counting:
    def __init__(self) -> None:
        self.solved: list[int] = []

    def __call__(self, payload: int) -> tuple[int]:
        self.solved.append(payload)
        return (payload * payload,)


def refused_before_work(path, match: str) -> CheckpointError:
    solver = Counting()
    with pytest.raises(CheckpointError, match=match) as info:
        run_units(toy_units(), solver, job=JOB, checkpoint=path, progress=False)
    assert solver.solved == []
    return info.value


def half_done(path, done: int = 3) -> None:
    """A ledger of toy_units() with the first ``done`` units finished."""
    def stops(payload):
        if payload == done:
            raise KeyboardInterrupt
        return (payload * payload,)

    with pytest.raises(KeyboardInterrupt):
        run_units(toy_units(), stops, job=JOB, checkpoint=path, progress=False, recheck=0)


def side_files(path) -> list[str]:
    return sorted(p for p in os.listdir(os.path.dirname(path)) if p.startswith(os.path.basename(path) + "-"))


# -- paths that are never a ledger --------------------------------------------------------

def test_empty_path_is_refused():
    refused_before_work("", "the checkpoint path is empty")


def test_missing_directory_is_refused_and_not_created(tmp_path):
    path = tmp_path / "no" / "such" / "run.sqlite"
    error = refused_before_work(path, "directory .*no/such does not exist")
    assert "create it first" in str(error)
    assert not (tmp_path / "no").exists()


def test_path_through_a_file_is_refused(tmp_path):
    (tmp_path / "plain").write_text("x")
    refused_before_work(tmp_path / "plain" / "run.sqlite", "is not a directory")


def test_directory_is_refused(tmp_path):
    refused_before_work(tmp_path, "is a directory")


@pytest.mark.parametrize("name", ["plain/", "plain/.", "missing/", "..", "."])
def test_a_directory_name_is_refused_as_such(tmp_path, name):
    # "plain/" where plain is a file once said "... is not a directory" of the wrong path,
    # and "missing/" "Is a directory" after trying to open it
    (tmp_path / "plain").write_text("x")
    refused_before_work(os.path.join(tmp_path, name), "is a directory's name, not a file's")
    assert not (tmp_path / "missing").exists()


def test_broken_symlink_is_refused(tmp_path):
    link = tmp_path / "link.sqlite"
    link.symlink_to(tmp_path / "missing.sqlite")
    refused_before_work(link, "symbolic link to a file that does not exist")
    assert not (tmp_path / "missing.sqlite").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_is_refused_at_once_and_never_opened(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    outcome = {}

    def attempt():
        try:
            run_units(toy_units(), Counting(), job=JOB, checkpoint=fifo, progress=False)
        except CheckpointError as exc:
            outcome["error"] = str(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "opening a FIFO as a checkpoint hangs"
    assert "named pipe (FIFO), not a regular file" in outcome["error"]
    assert stored_job(fifo) is None  # the forgiving reader does not wait on it either


def test_character_device_is_refused():
    if not os.path.exists(os.devnull) or not stat.S_ISCHR(os.stat(os.devnull).st_mode):
        pytest.skip("no character device at os.devnull")
    refused_before_work(os.devnull, "character device")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_socket_is_refused(tmp_path):
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        try:
            server.bind(str(path))
        except OSError:
            pytest.skip("cannot bind a Unix socket here")
        refused_before_work(path, "a socket, not a regular file")


@pytest.mark.parametrize("bad", [3, b"run.sqlite", ["run.sqlite"], True])
def test_a_path_must_be_text(bad):
    with pytest.raises(TypeError, match="checkpoint must be a file path"):
        check_checkpoint_path(bad)


def test_nul_in_the_path_is_refused():
    refused_before_work("run\0.sqlite", "NUL")


# -- read-only checkpoints --------------------------------------------------------------

def test_read_only_ledger_with_units_to_do_is_refused_before_work(tmp_path, read_only_works):
    path = tmp_path / "run.sqlite"
    half_done(path)
    read_only_works.lock(path)
    error = refused_before_work(path, "cannot be written: the file .* is read-only")
    assert "3 of 6 work units are still to do" in str(error)
    assert side_files(path) == []  # no read-only -wal/-shm left to break the next run
    read_only_works.unlock(path)
    assert run_units(toy_units(), Counting(), job=JOB, checkpoint=path,
                     progress=False)["u5"] == (25,)


def test_read_only_ledger_with_its_log_beside_it_says_to_copy_the_log(tmp_path, read_only_works):
    # a run killed before it folded its write-ahead log into the file: the finished units
    # there cannot be read while the file is read-only, so the message names the log
    path, copy = tmp_path / "run.sqlite", tmp_path / "copy" / "run.sqlite"
    copy.parent.mkdir()
    with Ledger.open(path, JOB, toy_units()) as ledger:
        ledger.record("u0", (0,))
        ledger.record("u1", (1,))
        for name in ("", "-wal"):  # the files as a kill -9 would leave them
            shutil.copyfile(f"{path}{name}", f"{copy}{name}")
    read_only_works.lock(copy)
    error = refused_before_work(copy, "cannot be written")
    assert f"write-ahead log {copy}-wal may hold more finished units" in str(error)


def test_finished_read_only_ledger_can_be_read(tmp_path, read_only_works):
    path = tmp_path / "run.sqlite"
    run_units(toy_units(), Counting(), job=JOB, checkpoint=path, progress=False)
    read_only_works.lock(path)
    solver = Counting()
    results = run_units(toy_units(), solver, job=JOB, checkpoint=path, progress=False)
    assert results == {f"u{i}": (i * i,) for i in range(6)}
    assert len(solver.solved) == 1  # the re-check only; nothing is written
    assert side_files(path) == []
    assert stored_job(path) == JOB and side_files(path) == []


def test_new_ledger_in_a_read_only_directory_is_refused(tmp_path, read_only_works):
    directory = tmp_path / "ro"
    directory.mkdir()
    read_only_works.lock(directory)
    refused_before_work(directory / "run.sqlite", "cannot be created: the directory .* is not writable")
    assert os.listdir(directory) == []
    read_only_works.unlock(directory)


def test_ledger_in_a_read_only_directory_with_units_to_do_is_refused(tmp_path, read_only_works):
    directory = tmp_path / "ro"
    directory.mkdir()
    path = directory / "run.sqlite"
    half_done(path)
    read_only_works.lock(directory)
    refused_before_work(path, "its directory .* is read-only")
    assert os.listdir(directory) == ["run.sqlite"]
    read_only_works.unlock(directory)


def test_read_only_side_file_left_by_an_earlier_run_is_named(tmp_path, read_only_works):
    path = tmp_path / "run.sqlite"
    half_done(path)
    shm = tmp_path / "run.sqlite-shm"
    shm.write_bytes(b"")
    read_only_works.lock(shm)
    error = refused_before_work(path, "run.sqlite-shm is not a writable file")
    assert "chmod u+w" in str(error)
    read_only_works.unlock(shm)
    assert len(run_units(toy_units(), Counting(), job=JOB, checkpoint=path, progress=False)) == 6


def test_windows_is_told_its_own_way_to_make_a_file_writable():
    from gpuqueens import checkpoint_file

    assert checkpoint_file._make_writable("run.sqlite-shm", "nt") == "e.g. attrib -r run.sqlite-shm"
    assert checkpoint_file._make_writable("run.sqlite-shm", "posix") == "e.g. chmod u+w run.sqlite-shm"


# -- other guarantees still hold --------------------------------------------------------

def test_a_file_that_is_not_sqlite_is_left_untouched(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my notes")
    refused_before_work(path, "not a gpuqueens ledger")
    assert path.read_bytes() == b"my notes"


def test_second_writer_is_still_refused(tmp_path):
    path = tmp_path / "run.sqlite"
    with Ledger.open(path, JOB, toy_units()):
        refused_before_work(path, "in use by another run")
        assert stored_job(path) is None  # busy: the forgiving reader gives up


def test_stored_job_does_not_create_files(tmp_path):
    assert stored_job(tmp_path / "new.sqlite") is None
    assert stored_job(tmp_path / "missing" / "new.sqlite") is None
    assert os.listdir(tmp_path) == []


def test_stored_job_reads_a_path_with_uri_characters(tmp_path):
    path = tmp_path / "run #1?.sqlite"
    run_units(toy_units(), Counting(), job=JOB, checkpoint=path, progress=False)
    assert stored_job(path) == JOB


def test_a_failed_write_is_a_checkpoint_error_that_keeps_earlier_units(tmp_path):
    path = tmp_path / "run.sqlite"
    units = toy_units()
    with Ledger.open(path, JOB, units) as ledger:
        ledger.record("u0", (0,))
        real = ledger._db

        class FullDisk:
            def execute(self, *args):
                raise sqlite3.OperationalError("database or disk is full")

        ledger._db = FullDisk()
        with pytest.raises(CheckpointError, match="'u1' could not be recorded .*disk is full.*resume"):
            ledger.record("u1", (1,))
        ledger._db = real
    with Ledger.open(path, JOB, units) as ledger:
        assert ledger.results() == {"u0": (0,)}


def test_checkpoint_file_open_refuses_a_missing_file_without_create(tmp_path):
    with pytest.raises(CheckpointError, match="cannot be opened"):
        CheckpointFile.open(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_unreadable_ledger_is_refused(tmp_path, read_only_works):
    if read_only_works.immutable:
        pytest.skip("no attribute stops root from reading a file")
    path = tmp_path / "run.sqlite"
    half_done(path)
    path.chmod(0o000)
    try:
        refused_before_work(path, "cannot be read: Permission denied")
    finally:
        path.chmod(0o644)


def _hold_until(running, release) -> None:
    running.set()
    release.wait(30)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_keep_the_lock(tmp_path):
    """A ``fork`` pool's worker must not hold the ledger's lock: the parent closes the
    ledger between stages and opens it again, and a worker that outlives a killed parent
    must not lock the next run out."""
    import multiprocessing

    path = os.fspath(tmp_path / "run.sqlite")
    opened = CheckpointFile.open(path)
    fork = multiprocessing.get_context("fork")
    running, release = fork.Event(), fork.Event()
    child = fork.Process(target=_hold_until, args=(running, release))
    child.start()
    try:
        assert running.wait(30)
        opened.close()
        CheckpointFile.open(path).close()  # refused while the child held the lock
    finally:
        release.set()
        child.join(10)
    again = CheckpointFile.open(path)  # and the parent's lock still shuts a second opener out
    with pytest.raises(CheckpointError, match="in use by another run"):
        CheckpointFile.open(path)
    again.close()


# -- locks where flock is missing (Windows) or refused (some network shares) -----------------

class _FakeMsvcrt:
    """Windows' msvcrt.locking: byte ranges locked per file, refused to a second descriptor."""

    LK_UNLCK, LK_NBLCK = 0, 2

    def __init__(self):
        self.held = {}   # (device, inode, offset) -> descriptor

    def locking(self, fd, mode, nbytes):
        assert mode in (self.LK_UNLCK, self.LK_NBLCK) and nbytes == 1
        info = os.fstat(fd)
        where = (info.st_dev, info.st_ino, os.lseek(fd, 0, os.SEEK_CUR))
        if mode == self.LK_UNLCK:
            if self.held.get(where) != fd:
                raise PermissionError(errno.EACCES, "not locked by this descriptor")
            del self.held[where]
        elif self.held.setdefault(where, fd) != fd:
            raise PermissionError(errno.EACCES, "Permission denied")


def test_windows_locks_a_byte_far_past_the_data(tmp_path, monkeypatch):
    # without fcntl no lock was taken: a second run solved the units again, then failed
    # recording them with "work unit 'u02' is already in ..."
    from gpuqueens import checkpoint_file

    fake = _FakeMsvcrt()
    monkeypatch.setitem(sys.modules, "fcntl", None)   # `import fcntl` raises ImportError
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    path = tmp_path / "run.sqlite"
    first = CheckpointFile.open(path)
    try:
        assert [offset for _, _, offset in fake.held] == [checkpoint_file.WINDOWS_LOCK_OFFSET]
        assert os.lseek(first._fd, 0, os.SEEK_CUR) == 0
        with pytest.raises(CheckpointError, match="in use by another run"):
            CheckpointFile.open(path)
    finally:
        first.close()
    assert fake.held == {}   # unlocked before the close: Windows may release it only later
    CheckpointFile.open(path).close()


def test_a_file_system_that_cannot_lock_is_told_and_used(tmp_path, monkeypatch):
    from gpuqueens import checkpoint_file

    def cannot(fd):
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(checkpoint_file, "_file_locks", lambda: (cannot, None))
    with pytest.warns(UserWarning, match="its file system cannot lock files") as said:
        results = run_units(toy_units(), Counting(), job=JOB, checkpoint=tmp_path / "run.sqlite",
                            progress=False)
    assert results == {f"u{i}": (i * i,) for i in range(6)}
    assert said[0].filename == __file__
