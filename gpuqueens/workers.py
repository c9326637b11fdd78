"""Worker processes: a long count on every core or every GPU of this machine.

A problem's counting call hands its work units to :func:`gpuqueens.runner.run_units`;
:func:`executor_for` decides where they run, from the backend, the ``workers`` and
``executor`` arguments and the size of the job, and starts and ends the processes:

* ``executor=`` given: that executor (then ``workers`` must be ``None``). On the GPU, a
  ``fork`` process pool about to fork from a process where CUDA is initialised is refused
  at once (:mod:`gpuqueens.fork_safety`).
* ``workers=1``, or the default for a small job, or inside a worker process: this process.
* otherwise a :class:`WorkerPool` of ``workers`` processes: by default one per usable
  core on the CPU, one per visible GPU on the GPU, where worker ``i`` is pinned to visible
  device ``i mod (GPU count)`` through ``CUDA_VISIBLE_DEVICES`` before it touches CUDA.
  This process then only coordinates (the ledger, the progress bar): its memory stays its
  own, Ctrl-C stops all work at once, and on the GPU it never initialises CUDA (it asks a
  fresh interpreter what the GPUs are), so it stays free to fork.

Worker processes start with ``spawn`` (:mod:`gpuqueens.worker_pool`): a fresh interpreter,
safe whatever this process holds (CUDA, threads, locks); they do not import the main
module (they run only gpuqueens functions), so a script needs no ``__main__`` guard. Each
unit they solve goes through
:class:`~gpuqueens.worker_setup.WorkerSolve`, which prepares the process once: glibc's
malloc thresholds raised (the NumPy search ~25% faster, and Dask's small trim threshold
undone) and, on the GPU, a check that CUDA can work there.

>>> with executor_for("cpu", workers=1, large=True, units=16) as chosen:
...     chosen.executor is None, chosen.processes
(True, 1)
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import math
import multiprocessing
import numbers
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .backends import device_name, gpu_report, requested_backend, resolve_backend
from .estimates import available_memory
from .fork_safety import check_executor, executor_start_method
from .runner import executor_workers
from .user_frames import user_stacklevel
from .worker_pool import WorkerPool, WorkerProcessError
from .worker_setup import WorkerSolve, prepare_process, tune_malloc

__all__ = ["usable_cores", "check_workers", "gpu_runs_here", "choose_backend",
           "planned_processes", "executor_for", "Workers", "WorkerPool", "WorkerSolve",
           "WorkerProcessError", "tune_malloc", "max_pool_processes"]

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
        what = ("runs the work in this process" if workers == 1 else
                "starts gpuqueens' own worker processes")
        raise ValueError(f"pass workers= or executor=, not both: workers={workers} {what}, "
                         "executor= uses yours")
    return int(workers)


def _in_worker_process() -> bool:
    """A process started by multiprocessing (a pool's worker, a Dask worker): no pools of its own."""
    return multiprocessing.parent_process() is not None


def _refuse_while_importing_main(instead: str) -> None:
    """Refuse a count that would start processes while this process, a new worker of a
    spawn or forkserver pool, imports the main module: its top level asks for the count,
    so every worker would start it again (or Python refuses the processes). Say how to
    avoid it."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError(
            "a gpuqueens count with worker processes was started while a new process was "
            "importing the main module. Keep the script's top-level code under "
            "`if __name__ == \"__main__\":` (the workers of a spawn or forkserver pool import "
            f"the main module first), or {instead}."
        )


def _wanted(workers: int | None, executor: object, large: bool) -> int | None:
    """How many processes were asked for: a number, or ``None`` for "the whole machine"."""
    if executor is not None:
        return None
    starts_processes = workers != 1 if workers is not None else large
    if starts_processes:
        _refuse_while_importing_main("pass workers=1")
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
                   memory_per_worker: float | None, memory_shared: float = 0.0,
                   warn: bool = False) -> int:
    wanted = _wanted(workers, None, large)
    if wanted is None:  # the whole machine
        wanted = gpu_report(here=False).count if backend == "gpu" else usable_cores()
        if memory_per_worker:
            memory = available_memory()
            if memory:
                wanted = min(wanted, int((memory - memory_shared) // memory_per_worker))
    elif backend == "cpu":
        wanted = _at_most_the_cores(wanted, units, warn=warn)
    most = max_pool_processes()
    if workers is not None and wanted > most and units > most and warn:
        warnings.warn(f"workers={workers}: a process pool here holds at most {most} processes; "
                      f"{most} run", UserWarning, stacklevel=user_stacklevel())
    # never more processes than units, nor than a process pool may have (61 on Windows)
    return max(1, min(wanted, units, most))


def max_pool_processes(platform: str | None = None) -> int | float:
    """The most processes a ``ProcessPoolExecutor`` may have here: 61 on Windows (it waits
    on its processes with WaitForMultipleObjects, 64 handles at most), else no limit.

    >>> max_pool_processes("win32"), max_pool_processes("linux")
    (61, inf)
    """
    if (platform or sys.platform) == "win32":
        return getattr(concurrent.futures.process, "_MAX_WINDOWS_WORKERS", 61)
    return math.inf


def _at_most_the_cores(workers: int, units: int, *, warn: bool) -> int:
    """CPU worker processes beyond the usable cores would only share them (each unit is
    pure computation) while each holds an interpreter and NumPy: ``workers=99999`` with
    4096 units would start 4096 of them. Capped, with a warning that says so."""
    cores = usable_cores()
    if workers > cores and units > cores:
        if warn:  # once, where the processes are started
            many = cores > 1
            runs = f"{cores} worker processes run" if many else "this process runs the count"
            warnings.warn(f"workers={workers} is more than the {cores} usable core{'s' * many} of this "
                          f"machine; {runs} (more would only share the core{'s' * many})",
                          UserWarning, stacklevel=user_stacklevel())
        return cores
    return workers


def planned_processes(backend: str, *, workers: int | None = None,
                      executor: concurrent.futures.Executor | None = None, large: bool,
                      units: int, memory_per_worker: float | None = None,
                      memory_shared: float = 0.0) -> int:
    """How many processes :func:`executor_for` will have solve the units (same arguments),
    told before any is started: what a long-run estimate divides the work by. With an
    executor, as many units as it can solve at once, as well as can be told.

    >>> planned_processes("cpu", workers=1, large=True, units=16)
    1
    >>> planned_processes("cpu", workers=4, large=True, units=1)  # never more than units
    1
    """
    workers = check_workers(workers, executor)
    if executor is not None:
        return executor_workers(executor)
    return _process_count(backend, workers, large=large, units=units,
                          memory_per_worker=memory_per_worker, memory_shared=memory_shared)


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
            return f"{device_name('cpu')}, {self.processes} process{'es' * (self.processes != 1)}"
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
    memory_shared: float = 0.0,
    worker_even_alone: bool = False,
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
      this machine's memory holds; ``memory_shared``: bytes needed once, however many
      processes there are (what the processes share, such as a round in a file).
    * ``worker_even_alone``: a ``large`` CPU job whose units run faster in a worker process
      (its malloc set-up, :mod:`gpuqueens.worker_setup`) than in this one by much more than
      the process takes to start: by default it gets a worker process even when the machine
      has room for only one (the 7×7 matchstick table: memory for one ~6.4 GB process).

    Yields a :class:`Workers`. On leaving normally, the pool finishes its work and ends;
    on an exception (Ctrl-C included) its worker processes are ended at once.
    """
    workers = check_workers(workers, executor)
    if executor is not None:
        if executor_start_method(executor) is not None:  # a process pool
            _refuse_while_importing_main("use no process pool there")
        if backend == "gpu":
            check_executor(executor)
        yield Workers(backend, executor, external=True)
        return
    count = _process_count(backend, workers, large=large, units=units,
                           memory_per_worker=memory_per_worker, memory_shared=memory_shared,
                           warn=True)
    alone_in_worker = (worker_even_alone and backend == "cpu" and units >= 1
                       and _wanted(workers, None, large) is None)
    if count <= 1 and not alone_in_worker:
        if backend == "gpu":  # this process runs the GPU work: can CUDA work here?
            prepare_process(backend, worker=False)
        yield Workers(backend)
        return
    devices = _gpu_device_plan(count) if backend == "gpu" else ()
    with WorkerPool(count, devices=devices) as pool:
        yield Workers(backend, pool, count, devices)
