"""An executor for gpuqueens' worker processes: one queue, taken by whichever worker is free.

The workers are processes started with ``spawn`` (a fresh interpreter: safe whatever this
process holds, CUDA included), each pinned to its own GPU through ``CUDA_VISIBLE_DEVICES``
when devices are given; each runs one task at a time. :func:`gpuqueens.workers.executor_for`
makes one when a count uses the whole machine. A worker ends itself when the process that
started it has ended, even killed (:func:`_end_with_coordinator`).

>>> with WorkerPool(1) as pool:
...     pool.submit(pow, 2, 10).result()
1024
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.spawn
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .fork_safety import cuda_initialised_here

__all__ = ["WorkerPool", "WorkerProcessError"]

# Worker processes start with ``spawn``, a fresh interpreter (safe with CUDA and threads,
# the same on every OS). Measured on 2 busy cores: 0.24 s to start one worker that imports
# NumPy and gpuqueens, 0.30 s for two (forkserver, its server running: 0.18 s and 0.26 s).

#: Our worker processes' names start with this (see :func:`_without_main`).
WORKER_NAME = "gpuqueens-worker"


def _without_main(get_preparation_data: Callable) -> Callable:
    """``multiprocessing.spawn.get_preparation_data`` that leaves the main module out for
    our worker processes (and only for them).

    A spawned process normally imports the main module first, so that it can unpickle what
    the main module defines; a script without an ``if __name__ == "__main__":`` guard then
    runs its top level again in every worker. Our workers only run gpuqueens functions, so
    they skip it: a plain script that calls ``gpuqueens.count`` works as it stands.
    """
    def prepare(name: str, *args: Any, **kwargs: Any) -> dict:
        data = get_preparation_data(name, *args, **kwargs)
        if name.startswith(WORKER_NAME):
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    prepare.gpuqueens_without_main = True  # type: ignore[attr-defined]
    return prepare


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = f"{WORKER_NAME}-{self.name}"

    def start(self) -> None:
        """Start the process with SIGINT blocked, until :func:`_start_worker` ignores it:
        a Ctrl-C in the first moments of a count (in a notebook, to the kernel's whole
        process group) met the new workers still importing, and each printed a traceback.
        The block holds in this thread only while the process starts; a Ctrl-C meanwhile
        waits for it, and is not lost."""
        if not hasattr(signal, "pthread_sigmask"):  # Windows: no such signal to a group
            super().start()
            return
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _WorkerContext(multiprocessing.context.SpawnContext):
    """The ``spawn`` context, with processes named as our workers."""

    Process = _WorkerProcess


def _worker_context() -> multiprocessing.context.BaseContext:
    if not getattr(multiprocessing.spawn.get_preparation_data, "gpuqueens_without_main", False):
        multiprocessing.spawn.get_preparation_data = _without_main(
            multiprocessing.spawn.get_preparation_data)
    return _WorkerContext()


class WorkerProcessError(RuntimeError):
    """A worker process ended abruptly (killed, out of memory, or failed while starting)."""


_BROKEN_HINT = (
    "a gpuqueens worker process ended abruptly (killed, out of memory, or it failed while "
    "starting); with little memory, use fewer workers (workers=...)."
)


class WorkerPool(concurrent.futures.Executor):
    """An executor whose tasks wait in one queue and go to whichever worker process is free.

    ``processes`` processes are started with ``spawn`` at once; process ``i`` is
    pinned to GPU ``devices[i]`` (its ``CUDA_VISIBLE_DEVICES``) when devices are given. Each
    process runs one task at a time (a thread here hands it the next one), so on the GPU
    each device solves one unit at a time. A worker process that dies makes its task fail
    with :class:`WorkerProcessError`. The workers do not import the main module, so a task
    is a function of an importable module (not one defined in a script's ``__main__``).
    """

    def __init__(self, processes: int, *, devices: Sequence[str] = ()):
        if processes < 1:
            raise ValueError(f"a worker pool needs at least one process, got {processes}")
        if devices and len(devices) != processes:
            raise ValueError(f"{len(devices)} devices for {processes} processes")
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        context = _worker_context()
        pins = None
        if devices:
            pins = context.Queue()
            for device in devices:
                pins.put(device)
        self._pool = concurrent.futures.ProcessPoolExecutor(
            processes, mp_context=context, initializer=_start_worker, initargs=(pins, os.getpid()))
        for _ in range(processes):  # start them now, while the caller prepares its units
            self._pool.submit(os.getpid)
        self._threads = [threading.Thread(target=self._feed, daemon=True, name=f"gpuqueens-worker-{index}")
                         for index in range(processes)]
        #: read by run_units: how many tasks run at once (it keeps twice as many submitted)
        self._max_workers = processes
        for thread in self._threads:
            thread.start()

    def _run(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        try:
            return self._pool.submit(fn, *args, **kwargs).result()
        except BrokenProcessPool as exc:
            raise WorkerProcessError(_BROKEN_HINT) from exc

    def _feed(self) -> None:
        """One per process: take the next task, run it in a worker process, report, repeat."""
        while True:
            item = self._tasks.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = self._run(fn, args, kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit to a worker pool after shutdown")
            future: concurrent.futures.Future = concurrent.futures.Future()
            self._tasks.put((future, fn, args, kwargs))
        return future

    def _cancel_queued(self) -> None:
        while True:
            try:
                item = self._tasks.get_nowait()
            except queue.Empty:
                return
            if item is not None and item[0].cancel():
                item[0].set_running_or_notify_cancel()  # so that wait() sees it done

    def _close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for _ in self._threads:
            self._tasks.put(None)  # after the queued tasks: each worker ends when it reaches one

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            self._cancel_queued()
        self._close()
        if wait:
            for thread in self._threads:
                thread.join()
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    def terminate(self) -> None:
        """Stop now: cancel the queued tasks and end the worker processes (their tasks are lost)."""
        self._cancel_queued()
        self._close()
        end = getattr(self._pool, "terminate_workers", None)  # Python 3.14+
        if end is not None:
            end()
        else:
            for process in list(getattr(self._pool, "_processes", {}).values()):
                process.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __exit__(self, exc_type, *exc_info: object) -> bool:
        if exc_type is None:
            self.shutdown(wait=True)
        else:
            self.terminate()  # the units in flight are lost; the checkpoint has the others
        return False


def _start_worker(pins: Any, coordinator: int) -> None:
    """Set up a new worker process, before it runs anything (the pool's initializer)."""
    _end_with_coordinator(coordinator)
    # Ctrl-C is for the coordinating process, which ends its workers; a worker that took
    # it too would only print a traceback of its own. (Blocked since the process started:
    # one that came meanwhile is dropped here, as ignored.)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if pins is not None:
        device = pins.get(timeout=60)
        if cuda_initialised_here():
            raise RuntimeError("CUDA was initialised in a worker process before it could be pinned "
                               "to its GPU")
        os.environ["CUDA_VISIBLE_DEVICES"] = device  # read by CUDA when it initialises


#: How often a worker that is the coordinator's own child checks its parent, in seconds.
PARENT_POLL_SECONDS = 1.0

#: A worker's exit status when it ends itself because its coordinator has ended.
ORPHANED_EXIT_CODE = 1


def _end_with_coordinator(coordinator: int) -> None:
    """End this worker process as soon as ``coordinator`` (the process that started it) has
    ended, however it ended, SIGKILL included: an orphaned worker would go on using cores
    and memory for nobody, and hold the coordinator's stdout open.

    A daemon thread waits on multiprocessing's parent sentinel, a pipe whose write end only
    the coordinator holds (on Windows, the coordinator's process handle): it is ready as
    soon as that process ends, on every OS and with every start method, and costs nothing
    meanwhile. Not ``prctl(PR_SET_PDEATHSIG)``: Linux only, and it fires when the *thread*
    that started the worker ends, which in a pool may come before the pool ends. A child
    the coordinator forked may still hold the pipe, so where the worker is the
    coordinator's own child (``spawn`` on POSIX) the thread also checks its parent pid.
    """
    parent = multiprocessing.parent_process()
    sentinel = parent.sentinel if parent is not None else None
    watch_parent_pid = os.name == "posix" and os.getppid() == coordinator
    if sentinel is None and not watch_parent_pid:
        return  # not started by multiprocessing: nothing to watch
    threading.Thread(target=_watch_coordinator, args=(coordinator, sentinel, watch_parent_pid),
                     daemon=True, name="gpuqueens-coordinator-watch").start()


def _watch_coordinator(coordinator: int, sentinel: Any, watch_parent_pid: bool) -> None:
    """The watching thread: wait until the coordinator has ended, then end this process."""
    poll_seconds = PARENT_POLL_SECONDS if watch_parent_pid else None
    while not _sentinel_ready(sentinel, poll_seconds):
        if watch_parent_pid and os.getppid() != coordinator:  # adopted by init or a subreaper
            break
    os._exit(ORPHANED_EXIT_CODE)  # at once: the unit's result has nobody to go to


def _sentinel_ready(sentinel: Any, timeout: float | None) -> bool:
    if sentinel is None:
        time.sleep(timeout or 0)
        return False
    return bool(multiprocessing.connection.wait([sentinel], timeout))
