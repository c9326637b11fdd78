"""Worker processes: a long count on every core or every GPU of this machine.

A problem's counting call hands its work units to :func:`gpuqueens.runner.run_units`;
:func:`executor_for` decides where they run, from the backend, the ``workers`` and
``executor`` arguments and the size of the job, and starts and ends the processes:

* ``executor=`` given: that executor (then ``workers`` must be ``None``). On the GPU, a
  ``fork`` process pool about to fork from a process where CUDA is initialised is refused
  at once (:mod:`gpuqueens.fork_safety`).
* ``workers=1``, or the default for a small job, or inside a worker process: this process.
* otherwise a :class:`WorkerPool`. On the CPU: this process (a thread, which starts
  working at once) and ``workers - 1`` processes; by default as many as there are usable
  cores. On the GPU: ``workers`` processes, worker ``i`` pinned to visible device
  ``i mod (GPU count)`` through ``CUDA_VISIBLE_DEVICES`` before it touches CUDA; by
  default one per visible GPU. This process then only coordinates: it never initialises
  CUDA (it asks a fresh interpreter what the GPUs are), so it stays free to fork.

Worker processes start with ``spawn``: a fresh interpreter, safe whatever this process
holds (CUDA, threads, locks). Like any spawned process they import the main module first,
so a script must keep its top-level code under ``if __name__ == "__main__":``.

Each unit a worker process solves goes through :class:`WorkerSolve`, which prepares the
process once: on the GPU it checks that CUDA can work there, and it raises glibc's malloc
thresholds (:func:`tune_malloc`), which makes the NumPy search ~25% faster and undoes the
small trim threshold that Dask's nanny sets for its workers (docs/scaling.md).

>>> with executor_for("cpu", workers=1, large=True, units=16) as chosen:
...     chosen.executor is None, chosen.processes
(True, 1)
"""

from __future__ import annotations

import collections
import concurrent.futures
import ctypes
import multiprocessing
import numbers
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from .backends import device_name, gpu_report, requested_backend, resolve_backend
from .estimates import available_memory
from .fork_safety import check_executor, cuda_initialised_here, raise_if_forked_after_cuda

__all__ = ["START_METHOD", "usable_cores", "check_workers", "gpu_runs_here", "choose_backend",
           "executor_for",
           "Workers", "WorkerPool", "WorkerSolve", "WorkerProcessError", "tune_malloc"]

#: How worker processes start: a fresh interpreter (safe with CUDA and threads, same on
#: every OS). Measured on 2 cores: ~0.5-1 s until a worker has imported NumPy and gpuqueens.
START_METHOD = "spawn"


class WorkerProcessError(RuntimeError):
    """A worker process ended abruptly (killed, out of memory, or failed while starting)."""


_BROKEN_HINT = (
    "a gpuqueens worker process ended abruptly (killed, out of memory, or it failed while "
    "starting). If you run a script, keep its top-level code under "
    "`if __name__ == \"__main__\":` (each worker process imports the main module first); "
    "with little memory, use fewer workers (workers=...)."
)


def usable_cores() -> int:
    """The cores this process may run on: ``os.process_cpu_count()`` (Python 3.13+), else
    the scheduler's affinity mask, else ``os.cpu_count()``."""
    process_cpu_count = getattr(os, "process_cpu_count", None)
    if process_cpu_count is not None and process_cpu_count():
        return process_cpu_count()
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on macOS and Windows
        return os.cpu_count() or 1


def check_workers(workers: object, executor: object = None) -> int | None:
    """``workers`` checked: ``None`` or a positive integer, and never together with ``executor``.

    >>> check_workers(None), check_workers(4)
    (None, 4)
    >>> check_workers(2, executor=concurrent.futures.ThreadPoolExecutor(1))
    Traceback (most recent call last):
    ...
    ValueError: pass workers= or executor=, not both: workers=2 starts gpuqueens' own worker processes, executor= uses yours
    """
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"workers must be a positive integer or None, not {workers!r}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1 (1: this process only), not {workers}")
    if executor is not None:
        raise ValueError(f"pass workers= or executor=, not both: workers={workers} starts "
                         "gpuqueens' own worker processes, executor= uses yours")
    return int(workers)


def _in_worker_process() -> bool:
    """A process started by multiprocessing (a pool's worker, a Dask worker): no pools of its own."""
    return multiprocessing.parent_process() is not None


def _wanted(workers: int | None, executor: object, large: bool) -> int | None:
    """How many processes were asked for: a number, or ``None`` for "the whole machine"."""
    if executor is not None:
        return None
    starts_processes = workers != 1 if workers is not None else large
    if starts_processes and getattr(multiprocessing.current_process(), "_inheriting", False):
        # A process being started is importing the main module, whose top level asks for a
        # count with workers: every worker would start the count again. Say how to avoid it.
        raise RuntimeError(
            "a gpuqueens count with worker processes was started while a new process was "
            "importing the main module. Keep the script's top-level code under "
            "`if __name__ == \"__main__\":` (worker processes import the main module first), "
            "or pass workers=1."
        )
    if workers is not None:
        return workers
    if not large or _in_worker_process():
        return 1
    return None


def gpu_runs_here(workers: int | None, executor: object = None, *, large: bool) -> bool:
    """Whether GPU work would run in this process, so that probing CUDA here is harmless.

    Pass the result as ``here=`` to :func:`gpuqueens.backends.resolve_backend`.
    """
    return executor is None and _wanted(workers, executor, large) == 1


def choose_backend(backend: str | None, *, workers: int | None = None,
                   executor: object = None, large_on_gpu: bool) -> str:
    """The backend a count runs on, probing CUDA only where that is safe.

    ``backend="gpu"`` with an executor is taken as it is: the executor's workers check their
    own GPU before their first unit, and this process (perhaps a Dask client on a machine
    without a GPU) never touches CUDA. Otherwise the probe runs in this process when the GPU
    work would run here, else in a fresh process (:func:`gpu_runs_here`).
    """
    if executor is not None and requested_backend(backend) == "gpu":
        return "gpu"
    return resolve_backend(backend, here=gpu_runs_here(workers, executor, large=large_on_gpu))


def _visible_device_ids(count: int) -> list[str]:
    """The ``CUDA_VISIBLE_DEVICES`` value that pins a process to each visible GPU."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return [str(index) for index in range(count)]
    # CUDA takes the list up to its first entry that names no device: `count` entries
    return [item.strip() for item in listed.split(",")][:count]


def _gpu_device_plan(processes: int) -> tuple[str, ...]:
    """Device of each GPU worker: one per visible GPU, round-robin when there are more workers."""
    ids = _visible_device_ids(gpu_report(here=False).count)
    if not ids:
        raise RuntimeError("no visible GPU to pin worker processes to")
    return tuple(ids[index % len(ids)] for index in range(processes))


def _process_count(backend: str, workers: int | None, *, large: bool, units: int,
                   memory_per_worker: float | None) -> int:
    wanted = _wanted(workers, None, large)
    if wanted is None:  # the whole machine
        wanted = gpu_report(here=False).count if backend == "gpu" else usable_cores()
        if memory_per_worker:
            memory = available_memory()
            if memory:
                wanted = min(wanted, int(memory // memory_per_worker))
    return max(1, min(wanted, units))  # never more processes than units


@dataclass(frozen=True)
class Workers:
    """Where the units of one count run, as chosen by :func:`executor_for`.

    ``executor`` is what :func:`~gpuqueens.runner.run_units` gets (``None``: this process);
    ``processes`` the processes solving units (this one included when it solves);
    ``devices`` the ``CUDA_VISIBLE_DEVICES`` of each GPU worker process.
    """

    backend: str
    executor: concurrent.futures.Executor | None = None
    processes: int = 1
    devices: tuple[str, ...] = ()
    external: bool = False

    def solver(self, solve: Callable[[Any], tuple[int, ...]]) -> Callable[[Any], tuple[int, ...]]:
        """``solve`` as the units' solver: wrapped by :class:`WorkerSolve` when other
        processes or threads run it."""
        return solve if self.executor is None else WorkerSolve(solve, self.backend, os.getpid())

    def describe(self) -> str:
        """Where the count ran, for a result's ``device`` field."""
        if self.external:
            return f"{'GPU' if self.backend == 'gpu' else device_name('cpu')} (the executor's workers)"
        if self.executor is None:
            return device_name(self.backend)
        if self.backend == "cpu":
            return f"{device_name('cpu')}, {self.processes} processes"
        report = gpu_report(here=False)
        ids = _visible_device_ids(report.count)
        names = sorted({report.names[ids.index(device)] for device in self.devices})
        used = ", ".join(dict.fromkeys(self.devices))
        return f"{' + '.join(names)} (devices {used}), {self.processes} processes"


@contextmanager
def executor_for(
    backend: str,
    *,
    workers: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    large: bool,
    units: int,
    memory_per_worker: float | None = None,
) -> Iterator[Workers]:
    """Choose where a count's units run, start the worker processes it needs, end them after.

    * ``backend``: the resolved backend, ``"cpu"`` or ``"gpu"``.
    * ``workers``: ``None`` (the whole machine for a ``large`` job, else this process),
      ``1`` (this process), or how many processes solve units.
    * ``executor``: the caller's executor, used as it is (not with ``workers``).
    * ``large``: whether the job is long enough to gain from worker processes, which take
      about a second to start (the problem knows its own costs).
    * ``units``: how many units there are; no more processes than units are started.
    * ``memory_per_worker``: bytes each process needs, to start no more by default than
      this machine's memory holds.

    Yields a :class:`Workers`. On leaving normally, the pool finishes its work and ends;
    on an exception (Ctrl-C included) its worker processes are ended at once.
    """
    workers = check_workers(workers, executor)
    if executor is not None:
        if backend == "gpu":
            check_executor(executor)
        yield Workers(backend, executor, external=True)
        return
    count = _process_count(backend, workers, large=large, units=units,
                           memory_per_worker=memory_per_worker)
    if count <= 1:
        yield Workers(backend)
        return
    if backend == "gpu":
        devices = _gpu_device_plan(count)
        pool = WorkerPool(count, devices=devices)
    else:
        devices = ()
        pool = WorkerPool(count - 1, local=True)
    with pool:
        yield Workers(backend, pool, count, devices)


class WorkerPool(concurrent.futures.Executor):
    """An executor whose tasks wait in one queue and go to whichever worker is free first.

    The workers: this process, if ``local`` (a thread, which starts working at once), and
    ``processes`` processes started with :data:`START_METHOD`, process ``i`` pinned to GPU
    ``devices[i]`` (its ``CUDA_VISIBLE_DEVICES``) when devices are given. ``completed``
    counts the tasks each worker finished ("here", "processes").
    """

    def __init__(self, processes: int, *, local: bool = False, devices: Sequence[str] = ()):
        if processes < 0 or (processes == 0 and not local):
            raise ValueError(f"a worker pool needs at least one worker, got processes={processes}")
        if devices and len(devices) != processes:
            raise ValueError(f"{len(devices)} devices for {processes} processes")
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.completed: collections.Counter[str] = collections.Counter()
        lanes: list[tuple[str, Callable]] = []
        if local:
            lanes.append(("here", self._run_here))
        if processes:
            context = multiprocessing.get_context(START_METHOD)
            pins = None
            if devices:
                pins = context.Queue()
                for device in devices:
                    pins.put(device)
            self._pool = concurrent.futures.ProcessPoolExecutor(
                processes, mp_context=context, initializer=_start_worker, initargs=(pins,))
            for _ in range(processes):  # start them now, while the caller prepares its units
                self._pool.submit(os.getpid)
            lanes += [("processes", self._run_in_process)] * processes
        self._threads = [threading.Thread(target=self._lane, args=lane, daemon=True,
                                          name=f"gpuqueens-worker-{index}")
                         for index, lane in enumerate(lanes)]
        #: read by run_units: how many tasks run at once (it keeps twice as many submitted)
        self._max_workers = len(self._threads)
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _run_here(fn: Callable, args: tuple, kwargs: dict) -> Any:
        return fn(*args, **kwargs)

    def _run_in_process(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        try:
            return self._pool.submit(fn, *args, **kwargs).result()
        except BrokenProcessPool as exc:
            raise WorkerProcessError(_BROKEN_HINT) from exc

    def _lane(self, name: str, run: Callable) -> None:
        while True:
            item = self._tasks.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = run(fn, args, kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)
                self.completed[name] += 1

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
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    def terminate(self) -> None:
        """Stop now: cancel the queued tasks and end the worker processes (their tasks are lost)."""
        self._cancel_queued()
        self._close()
        if self._pool is None:
            return
        end = getattr(self._pool, "terminate_workers", None)  # Python 3.14+
        if end is not None:
            end()
        else:
            for process in list(getattr(self._pool, "_processes", {}).values()):
                process.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __exit__(self, exc_type, exc, traceback) -> bool:
        if exc_type is None:
            self.shutdown(wait=True)
        else:
            self.terminate()  # the units in flight are lost; the checkpoint has the others
        return False


def _start_worker(pins: Any) -> None:
    """Set up a new worker process, before it runs anything (the pool's initializer)."""
    # Ctrl-C is for the coordinating process, which ends its workers; a worker that took
    # it too would only print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if pins is not None:
        device = pins.get(timeout=60)
        if cuda_initialised_here():
            raise RuntimeError("CUDA was initialised in a worker process before it could be pinned "
                               "to its GPU (by code run while importing the main module?)")
        os.environ["CUDA_VISIBLE_DEVICES"] = device  # read by CUDA when it initialises


#: glibc mallopt parameters and the values set in worker processes: glibc's own dynamic
#: maxima on 64-bit systems (the mmap threshold may not exceed 32 MiB).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
TRIM_THRESHOLD_BYTES, MMAP_THRESHOLD_BYTES = 64 << 20, 32 << 20


def tune_malloc() -> bool:
    """Keep freed memory up to 64 MiB for reuse and serve blocks below 32 MiB from the heap
    (glibc only; returns whether it was done).

    The NumPy search allocates and frees arrays of a few MiB at a high rate. With glibc's
    defaults many of them are fresh ``mmap`` s, and with a small trim threshold (Dask's
    nanny sets ``MALLOC_TRIM_THRESHOLD_=65536`` for its workers, which also freezes the
    mmap threshold at 128 KiB) every one is: the pages are faulted in and zeroed again and
    again. Measured on 2 cores (four n=17 CPU units): 9.3 s with Dask's setting, 5.4 s with
    glibc's defaults, 3.8-3.9 s after this call, the same peak memory.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
        mallopt = ctypes.CDLL(None).mallopt
    except (ValueError, OSError, AttributeError):  # not glibc (musl), or no such symbol
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
                and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))


_prepared: set[tuple[int, str]] = set()  # (pid, backend): inherited by forks, so keyed by pid
_malloc_tuned_in: int | None = None


def prepare_process(backend: str, *, worker: bool) -> None:
    """Once per process and backend, before its first unit: tune malloc in a worker process;
    on the GPU, check that CUDA can work here (raises ``CUDAForkError`` or
    ``BackendUnavailableError`` with a message, never a CUDA error from deep inside)."""
    global _malloc_tuned_in
    key = (os.getpid(), backend)
    if key in _prepared:
        return
    if worker and _malloc_tuned_in != os.getpid():
        tune_malloc()
        _malloc_tuned_in = os.getpid()
    if backend == "gpu":
        raise_if_forked_after_cuda()
        resolve_backend("gpu")  # the probe, in this process, where the GPU work runs
    _prepared.add(key)


@dataclass(frozen=True)
class WorkerSolve:
    """A unit solver for other processes (or threads): prepares the process, then solves.

    ``coordinator`` is the pid of the process that runs the count; only other processes
    are tuned (this one is the caller's, left as it is).
    """

    solve: Callable[[Any], tuple[int, ...]]
    backend: str
    coordinator: int

    def __call__(self, payload: Any) -> tuple[int, ...]:
        prepare_process(self.backend, worker=os.getpid() != self.coordinator)
        return self.solve(payload)
