"""Opening a checkpoint file safely, before SQLite reads a byte of it.

A checkpoint path comes from a user, so it may be anything: empty, in a directory that does
not exist, a named pipe (opening one for reading waits forever for a writer), a device, a
file someone else is writing, or a ledger on a read-only disk. :func:`check_checkpoint_path`
refuses the paths that can never be a checkpoint; :meth:`CheckpointFile.open` then opens the
file itself without blocking, makes sure it is a regular file, takes the one-writer lock and
finds out whether it can be written, all before any work is done. Every refusal is a
:class:`CheckpointError` that says what to do.

A checkpoint that cannot be written (a read-only file or directory, or a read-only ``-wal``
or ``-shm`` file beside it) is opened *immutable*: SQLite reads the file as it is and creates
nothing beside it, so that no read-only ``-wal``/``-shm`` files are left behind to break the
next run. :class:`gpuqueens.ledger.Ledger` uses such a file only when it holds every result
the run needs.

>>> check_checkpoint_path("")
Traceback (most recent call last):
...
gpuqueens.checkpoint_file.CheckpointError: the checkpoint path is empty; give a file name such as "run.sqlite"
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import time
import urllib.parse
import warnings
import weakref
from collections.abc import Callable

from .user_frames import user_stacklevel

__all__ = ["CheckpointError", "CheckpointFile", "check_checkpoint_path", "SIDE_FILES"]

#: The files SQLite keeps beside a database: ``-wal`` and ``-shm`` in WAL mode, ``-journal``
#: while a ledger is being created.
SIDE_FILES = ("-wal", "-shm", "-journal")

# Opening never waits (a FIFO opened for reading would wait for a writer) and is not
# inherited by child processes (which would keep the lock alive after the run ends).
_OPEN_FLAGS = (getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))
_READ_ONLY_ERRORS = (errno.EACCES, errno.EPERM, errno.EROFS)
# A busy lock is tried again for a moment: a worker forked by this process an instant ago
# still holds the lock until its fork hook closes the copy (_drop_inherited_locks).
_LOCK_WAITS = (0.01, 0.04, 0.15, None)


#: The checkpoint files open in this process, whose locks a forked child must not keep.
_open_files: weakref.WeakSet[CheckpointFile] = weakref.WeakSet()


def _drop_inherited_locks() -> None:
    """In a child just forked (a ``ProcessPoolExecutor`` worker with the ``fork`` start
    method): close the inherited lock descriptors. A ``flock`` lives as long as any process
    holds its descriptor, so a worker that kept it would refuse the parent's next opening
    of the same ledger, and outlive a killed parent holding it."""
    for opened in list(_open_files):
        opened.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


class CheckpointError(ValueError):
    """A checkpoint file cannot be used: a bad path, not a ledger, another run's ledger,
    damaged, busy, read-only with work left, or a stored result that fails its re-check."""


def _kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def check_checkpoint_path(path: object) -> str:
    """Return ``path`` as a string, or refuse one that can never be a checkpoint file.

    Refused (:class:`CheckpointError`): an empty path, a directory that does not exist, a
    path through something that is not a directory, a broken symbolic link, and anything
    that exists but is not a regular file (a directory, a FIFO, a device, a socket). Nothing
    is opened or created. A path that is not a ``str`` or :class:`os.PathLike` is a
    ``TypeError``.

    >>> check_checkpoint_path("/no/such/directory/run.sqlite")
    Traceback (most recent call last):
    ...
    gpuqueens.checkpoint_file.CheckpointError: checkpoint /no/such/directory/run.sqlite: the directory /no/such/directory does not exist (create it first)
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"checkpoint must be a file path (a str or os.PathLike), not "
                        f"{type(path).__name__} ({path!r})")
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"checkpoint must be a file path given as text, not {type(path).__name__}")
    if not path:
        raise CheckpointError('the checkpoint path is empty; give a file name such as "run.sqlite"')
    if "\0" in path:
        raise CheckpointError(f"checkpoint path {path!r} contains a NUL character")
    if os.path.basename(path) in ("", ".", ".."):  # "run/", "run/.": a directory's name
        raise CheckpointError(f"checkpoint {path} is a directory's name, not a file's; give "
                              'a file name such as "run.sqlite"')
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.lexists(path):
            raise CheckpointError(f"checkpoint {path} is a symbolic link to a file that does "
                                  "not exist") from None
        if not os.path.isdir(directory):
            raise CheckpointError(f"checkpoint {path}: the directory {directory} does not exist "
                                  "(create it first)") from None
        return path  # a new ledger
    except NotADirectoryError:
        raise CheckpointError(f"checkpoint {path}: {directory} is not a directory") from None
    except OSError as exc:  # no permission to look into the directory, a name too long, ...
        raise CheckpointError(f"checkpoint {path} cannot be used: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise CheckpointError(f"checkpoint {path} is a directory, not a ledger file")
    if not stat.S_ISREG(mode):
        raise CheckpointError(f"checkpoint {path} is {_kind_of(mode)}, not a regular file; "
                              "a checkpoint must be a regular file")
    return path


class CheckpointFile:
    """An open, locked checkpoint file; :meth:`open` gets one, :meth:`connect` reads it.

    ``read_only`` is ``None`` when the run may write the file, else why it cannot (a
    sentence naming the file or directory at fault).
    """

    def __init__(self, path: str, fd: int, read_only: str | None) -> None:
        self.path = path
        self.read_only = read_only
        self._fd: int | None = fd
        self._unlock: Callable[[int], None] | None = None   # where closing does not unlock
        _open_files.add(self)

    @classmethod
    def open(cls, path: object, *, create: bool = True) -> CheckpointFile:
        """Open and lock the checkpoint at ``path``, creating an empty file if ``create``.

        Refuses (:class:`CheckpointError`) what :func:`check_checkpoint_path` refuses, a file
        that cannot be opened at all, a new file in a directory that cannot be written, a
        file that is not an SQLite database (it is left untouched), and a file locked by
        another run.
        """
        path = check_checkpoint_path(path)
        directory = os.path.dirname(os.path.abspath(path))
        read_only = None
        try:
            fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0) | _OPEN_FLAGS, 0o666)
        except OSError as exc:
            exists = os.path.exists(path)
            if exc.errno in _READ_ONLY_ERRORS and not exists:
                raise CheckpointError(f"checkpoint {path} cannot be created: the directory "
                                      f"{directory} is not writable ({exc.strerror})") from None
            if exc.errno not in _READ_ONLY_ERRORS:
                raise CheckpointError(f"checkpoint {path} cannot be opened: "
                                      f"{exc.strerror or exc}") from None
            try:  # an existing file this process may not write: read it as it is
                fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
            except OSError as again:
                raise CheckpointError(f"checkpoint {path} cannot be read: "
                                      f"{again.strerror or again}") from None
            read_only = f"the file {path} is read-only ({exc.strerror})"
        opened = cls(path, fd, read_only)
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):  # replaced between the check and the open
                raise CheckpointError(f"checkpoint {path} is {_kind_of(mode)}, not a regular file")
            head = os.pread(fd, 16, 0) if hasattr(os, "pread") else _read_head(fd)
            if head and head != b"SQLite format 3\x00":
                raise CheckpointError(f"checkpoint {path} is not a gpuqueens ledger (not an "
                                      "SQLite database); refusing to overwrite it")
            opened._lock()
            if opened.read_only is None:
                opened.read_only = _why_not_writable(path, directory)
        except BaseException:
            opened.close()
            raise
        return opened

    def _lock(self) -> None:
        """Hold an exclusive lock while open: a second run on the same file is refused at
        once instead of solving the same units again (and then failing to record them). A
        file system that cannot lock files (some network shares) gets a warning."""
        lock, unlock = _file_locks()
        for wait in _LOCK_WAITS:
            try:
                lock(self._fd)
                self._unlock = unlock
                return
            except OSError as exc:
                if exc.errno not in _HELD_ELSEWHERE:
                    warnings.warn(f"checkpoint {self.path}: its file system cannot lock files "
                                  f"({exc.strerror or exc}), so a second run on the same file at "
                                  "the same time would not be refused; run one at a time",
                                  UserWarning, stacklevel=user_stacklevel())
                    return
                if wait is None:
                    raise CheckpointError(f"checkpoint {self.path} is in use by another run (another "
                                          "process, or another thread of this one; only one run "
                                          "may write a ledger at a time)") from exc
                time.sleep(wait)

    def is_empty(self) -> bool:
        """True for a file without a byte: a new ledger (or one killed while being created)."""
        return self._fd is not None and os.fstat(self._fd).st_size == 0

    def connect(self) -> sqlite3.Connection:
        """An SQLite connection in autocommit mode: read-write, or immutable when read-only."""
        try:
            if self.read_only is None:
                return sqlite3.connect(self.path, isolation_level=None)
            uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro&immutable=1"
            return sqlite3.connect(uri, uri=True, isolation_level=None)
        except sqlite3.Error as exc:
            raise CheckpointError(f"checkpoint {self.path} cannot be opened: {exc}") from exc

    def close(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd is not None:
            if self._unlock is not None:
                with contextlib.suppress(OSError):
                    self._unlock(self._fd)
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None
        _open_files.discard(self)


#: What a lock held by another open file says: flock's EWOULDBLOCK (EAGAIN; EACCES on some
#: systems), Windows' EACCES or EDEADLOCK.
_HELD_ELSEWHERE = frozenset({errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES, errno.EDEADLK})
#: Where the Windows lock lies: one byte far past any data and past SQLite's own lock bytes
#: (at 1 GiB), so that it never stands in SQLite's way (Windows' locks are mandatory); 1 TiB,
#: an offset every file system's seek accepts (2^62 is past ext4's largest file).
WINDOWS_LOCK_OFFSET = 1 << 40


def _file_locks() -> tuple[Callable[[int], None], Callable[[int], None] | None]:
    """``(lock, unlock)`` for an open file's descriptor. ``lock`` takes it exclusively,
    without waiting, or raises ``OSError``: ``flock`` where there is one (closing the
    descriptor releases it: no ``unlock``), else Windows' ``msvcrt.locking`` of one byte at
    :data:`WINDOWS_LOCK_OFFSET`, unlocked before the descriptor closes (Windows may release
    a closed file's locks only a while later, and a count opens its checkpoint again at
    once: first to check it, then to run)."""
    try:
        import fcntl
    except ImportError:
        import msvcrt

        def at_lock_byte(fd: int, mode: int) -> None:
            os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            try:
                msvcrt.locking(fd, mode, 1)
            finally:
                os.lseek(fd, 0, os.SEEK_SET)

        return (lambda fd: at_lock_byte(fd, msvcrt.LK_NBLCK)), (lambda fd: at_lock_byte(fd, msvcrt.LK_UNLCK))
    return (lambda fd: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)), None


def _read_head(fd: int) -> bytes:  # pragma: no cover - where os.pread is missing (Windows)
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 16)


def _make_writable(path: str, system: str = os.name) -> str:
    """How to make a file writable, on this system (``os.name``)."""
    if system == "nt":
        return f"e.g. attrib -r {path}"
    return f"e.g. chmod u+w {path}"


def _why_not_writable(path: str, directory: str) -> str | None:
    """Why SQLite could not write the ledger at ``path`` (whose file is writable), or None.

    SQLite in WAL mode creates ``-wal`` and ``-shm`` files beside the database and needs to
    write them: a read-only directory, or such a file left read-only by an earlier run,
    makes every write fail, so they are found here, before any work is done.
    """
    if not os.access(directory, os.W_OK | os.X_OK):
        return (f"its directory {directory} is read-only (SQLite keeps its -wal and -shm files "
                "beside the checkpoint)")
    for suffix in SIDE_FILES:
        side = path + suffix
        if os.path.lexists(side) and not (os.path.isfile(side) and os.access(side, os.W_OK)):
            return (f"{side} is not a writable file (left by a run that could not write the "
                    f"checkpoint: make it writable, {_make_writable(side)})")
    return None
