"""Any executor keeps working on the GPU, whatever its start method, or fails at once with
a message that says what to do: never a CUDA error from deep inside a worker.

Like CUDA, the stand-in fails every call in a process forked after its parent initialised
it (``cudaErrorInitializationError``); test_a_forked_worker_without_the_check_fails_deep_in_cuda
shows that, so the tests that expect our message would see CUDA's error if the checks were
missing.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import shutil

import pytest
from fake_cupy import CUDARuntimeError
from fake_cupy_site import emulator_libraries, forget_gpu_state, install
from oeis import total

import gpuqueens
from gpuqueens import backends, fork_safety
from gpuqueens.fork_safety import CUDAForkError
from gpuqueens.problems.nqueens import gpu
from gpuqueens.problems.nqueens.prefixes import enumerate_prefixes


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path, tmp_path_factory):
    """``fake_gpu(kernels=False)``: the stand-in with one device, in every process."""
    def make(kernels: bool = False):
        libraries = None
        if kernels:
            if shutil.which("nvcc") is None:
                pytest.skip("nvcc is not installed")
            libraries = emulator_libraries(lambda: tmp_path_factory.mktemp("emulator"))
        return install(monkeypatch, tmp_path / "site", libraries=libraries)

    yield make
    forget_gpu_state()


def pool_of(method: str | None, workers: int = 2) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool with that start method (``None``: this platform's default)."""
    return concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))


@pytest.fixture
def fork_pool():
    with pool_of("fork") as pool:
        yield pool


class OpaqueExecutor(concurrent.futures.Executor):
    """An executor gpuqueens cannot look into (a fork pool behind it)."""

    def __init__(self, inner: concurrent.futures.Executor):
        self._inner = inner

    def submit(self, fn, /, *args, **kwargs):
        return self._inner.submit(fn, *args, **kwargs)


@pytest.mark.parametrize("method", ["fork", None], ids=["fork", "default start method"])
def test_a_process_pool_works_when_this_process_never_touched_cuda(fake_gpu, method):
    # the case: count(20, backend="gpu", executor=ProcessPoolExecutor(2)), here n=11
    fake = fake_gpu(kernels=True)
    with pool_of(method) as pool:
        result = gpuqueens.nqueens(11, backend="gpu", executor=pool)
        assert result.total == total(11) and result.device == "GPU (the executor's workers)"
        assert gpuqueens.count(11, executor=pool) == total(11)  # auto: probed in a fresh process
    assert fake.fake_cuda.initialised_pid is None  # so the pool's forks can use CUDA


def test_a_fork_pool_after_cuda_here_is_refused_at_once(fake_gpu, fork_pool):
    fake_gpu()
    assert backends.gpu_status() == (True, "ok")  # CUDA initialised here, e.g. by an earlier count
    with pytest.raises(CUDAForkError, match="spawn"):
        gpuqueens.count(11, backend="gpu", executor=fork_pool)
    assert not fork_pool._processes  # refused before any worker was forked


def test_cuda_initialised_outside_gpuqueens_is_seen_too(fake_gpu, fork_pool):
    fake = fake_gpu()
    fake.zeros(1)  # the user's own CuPy call: only CUDA's driver knows
    assert fork_safety._initialised_in is None and fork_safety.cuda_initialised_here()
    with pytest.raises(CUDAForkError, match="spawn"):
        gpuqueens.count(11, backend="gpu", executor=fork_pool)
    with pytest.raises(CUDAForkError, match="was forked from a process that had already initialised CUDA"):
        gpuqueens.count(11, backend="gpu", executor=OpaqueExecutor(fork_pool))


def test_an_opaque_fork_executor_fails_in_its_worker_with_the_message(fake_gpu, fork_pool):
    fake_gpu()
    backends.gpu_status()
    with pytest.raises(CUDAForkError, match="forkserver") as error:
        gpuqueens.count(11, backend="gpu", executor=OpaqueExecutor(fork_pool))
    assert "was forked from a process that had already initialised CUDA" in str(error.value)


def test_a_count_inside_a_forked_worker_says_why_it_cannot_use_cuda(fake_gpu, fork_pool):
    # the user's own task, in a fork pool made after CUDA was initialised here
    fake_gpu()
    backends.gpu_status()
    with pytest.raises(CUDAForkError, match="was forked from a process that had already initialised CUDA"):
        fork_pool.submit(gpuqueens.count, 8, backend="gpu").result(timeout=300)


def _matchstick_counts_in_a_fork(backend: str):
    """In the forked worker: the backend a matchstick count resolves to there."""
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        chosen = backends.resolve_backend(backend)
    return chosen, [str(w.message) for w in seen]


def test_matchstick_counts_in_a_forked_worker_say_why_it_cannot_use_cuda(fake_gpu, fork_pool):
    # they once met CUDA's own cudaErrorInitializationError there; "auto" falls back
    fake_gpu()
    backends.gpu_status()
    with pytest.raises(CUDAForkError, match="was forked from a process that had already initialised CUDA"):
        fork_pool.submit(gpuqueens.matchstick_counts, 3, 3, backend="gpu").result(timeout=300)
    with pytest.raises(CUDAForkError, match="forkserver"):
        fork_pool.submit(gpuqueens.matchsticks, 5, 5, removed=12, squares=3,
                         backend="gpu").result(timeout=300)
    chosen, said = fork_pool.submit(_matchstick_counts_in_a_fork, "auto").result(timeout=300)
    assert chosen == "cpu" and any("forked from one that had initialised CUDA" in line
                                   for line in said), said


def test_a_forked_worker_without_the_check_fails_deep_in_cuda(fake_gpu, fork_pool):
    fake_gpu()
    backends.gpu_status()
    with pytest.raises(CUDARuntimeError, match="cudaErrorInitializationError"):
        fork_pool.submit(gpu.count_prefixes_gpu, enumerate_prefixes(8, 3)).result(timeout=300)


def test_a_fork_pool_started_before_cuda_keeps_working(fake_gpu, fork_pool):
    fake_gpu(kernels=True)
    list(fork_pool.map(abs, range(4)))  # its processes are forked now, before CUDA
    backends.gpu_status()
    assert gpuqueens.count(11, backend="gpu", executor=fork_pool) == total(11)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_spawn_and_forkserver_pools_work_after_cuda_here(fake_gpu, method):
    fake_gpu(kernels=True)
    backends.gpu_status()
    with pool_of(method) as pool:
        assert gpuqueens.count(11, backend="gpu", executor=pool) == total(11)


def test_cpu_counts_in_a_fork_pool_are_not_refused(fake_gpu, fork_pool):
    fake_gpu()
    backends.gpu_status()
    assert gpuqueens.count(12, backend="cpu", executor=fork_pool) == total(12)


def test_a_thread_pool_on_the_gpu(fake_gpu):
    fake_gpu(kernels=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        assert gpuqueens.count(11, backend="gpu", executor=pool) == total(11)
