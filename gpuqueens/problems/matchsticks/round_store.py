"""One prepared round of a centre join in a file that the worker processes of a count share.

A round's parts are the same for all its units (7×7: 1.2 GB), but building them takes a
minute and ~6 GB at its peak (the half sweeps). Kept per process (:mod:`.round_cache`),
every worker process builds its own copy at the same time: the build's memory times the
processes, so a machine with more cores than memory (8 cores, 16 GB) runs a 7×7 table in
one process. Through a store, the first process that needs a round builds it and writes
its arrays to a file; the others wait for it and map the file. One build, one copy of the
parts in memory (the system's page cache, shared), and each process holds only its own
pairing's arrays (7×7: ~0.5 GB).

The store is a directory of its own in the temporary directory (``TMPDIR``), removed when
the count ends; one left by a count that was killed is removed by the next count (its
owner's process id is in its name). Only the worker processes a count starts itself use
it: an executor's processes may be on other machines, and keep a round each as before.

>>> import numpy as np
>>> with open_store() as store:
...     built = []
...     build = lambda: built.append(1) or {"parts": np.arange(5), "level": 51}
...     first = store.shared(("7x7", 51), build)
...     again = store.shared(("7x7", 51), build)       # another process, say: no new build
...     print(first["parts"], again["level"], len(built), first["parts"].flags.writeable)
[0 1 2 3 4] 51 1 False
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import pickle
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from ...glibc import glibc_function

try:  # POSIX; elsewhere every process keeps its own round, as without a store
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["RoundStore", "open_store", "write_round", "read_round", "STORE_PREFIX"]

#: The store directories' names: this prefix, the owner's process id, a dash, a random tail.
STORE_PREFIX = "gpuqueens-rounds-"
_ALIGN = 64  # each array starts on a cache line of the file
_HEADER = struct.Struct("<QQ")  # the pickle's length, the number of arrays


class RoundStore:
    """The rounds of one count, each built once by the first process that asks for it."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)

    def shared(self, key: tuple, build: Callable[[], Any]) -> Any:
        """The round of ``key``: read from the store (its arrays mapped read-only), or
        built here by ``build()`` and written there first. Another process building the
        same round is waited for; a round that cannot be written (a full disk) is
        returned as built, and the next process tries again."""
        name = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
        path = self.directory / f"{name}.round"
        unwritable = self.directory / f"{name}.unwritable"
        with open(self.directory / f"{name}.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if path.exists():
                    return read_round(path)
                if not unwritable.exists():
                    built = build()
                    try:
                        write_round(built, path)
                    except OSError:  # the next processes build their own, side by side
                        with contextlib.suppress(OSError):
                            unwritable.touch()
                        return built
                    del built
                    _give_back_heap()
                    return read_round(path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        return build()


@contextlib.contextmanager
def open_store() -> Iterator[RoundStore | None]:
    """A new store for one count (``None`` where files cannot be locked or the
    temporary directory cannot be written), removed when the count ends."""
    if fcntl is None:
        yield None
        return
    _remove_orphans()
    try:
        directory = tempfile.mkdtemp(prefix=f"{STORE_PREFIX}{os.getpid()}-")
    except OSError:
        yield None
        return
    try:
        yield RoundStore(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def write_round(value: Any, path: Path) -> None:
    """``value`` into one file: its pickle with the NumPy arrays out of band, then the
    arrays' bytes, each aligned to 64 bytes (written beside ``path``, then renamed)."""
    arrays: list[pickle.PickleBuffer] = []
    head = pickle.dumps(value, protocol=5, buffer_callback=arrays.append)
    views = [a.raw() for a in arrays]
    spans, offset = [], _aligned(_HEADER.size + len(head) + 16 * len(views))
    for v in views:
        spans.append((offset, v.nbytes))
        offset = _aligned(offset + v.nbytes)
    partial = path.with_suffix(".partial")
    try:
        with open(partial, "wb") as f:
            f.write(_HEADER.pack(len(head), len(views)))
            f.write(head)
            for start, size in spans:
                f.write(struct.pack("<QQ", start, size))
            for (start, _), v in zip(spans, views):
                f.seek(start)
                f.write(v)
            f.truncate(offset)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def read_round(path: Path) -> Any:
    """What :func:`write_round` wrote, its arrays read-only views of the mapped file (or
    of a copy in memory, where the file system cannot map files)."""
    with open(path, "rb") as f:
        try:
            whole: mmap.mmap | bytes = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError:
            whole = f.read()
    view = memoryview(whole)
    size, count = _HEADER.unpack_from(view)
    head = bytes(view[_HEADER.size:_HEADER.size + size])
    spans = [struct.unpack_from("<QQ", view, _HEADER.size + size + 16 * k) for k in range(count)]
    return pickle.loads(head, buffers=[view[start:start + n] for start, n in spans])


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _give_back_heap() -> None:
    """Return the build's freed memory to the system: a worker process keeps large freed
    blocks for reuse (:mod:`gpuqueens.worker_setup`), gigabytes after a half sweep, which
    the other processes' pairings now need."""
    trim = glibc_function("malloc_trim")
    if trim is not None:
        trim(0)


def _remove_orphans() -> None:
    """Remove the stores of counts whose process is gone (killed before it could)."""
    try:
        entries = list(Path(tempfile.gettempdir()).glob(f"{STORE_PREFIX}*"))
    except OSError:
        return
    for entry in entries:
        owner = entry.name[len(STORE_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, alive
        return True
    return True
