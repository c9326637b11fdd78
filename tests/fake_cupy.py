"""A stand-in for CuPy that runs gpuqueens' GPU path on the CPU, for machines without a GPU.

``make_fake_cupy(libraries)`` returns a module object to put in ``sys.modules["cupy"]``.
It gives the subset of CuPy that gpuqueens uses, checked the way a real launch would fail:

* device arrays are NumPy arrays of a subclass with ``.get()``; a plain NumPy array passed to
  a kernel is refused (CuPy cannot pass host memory to a kernel);
* ``RawModule(code=..., options=...).get_function(name)`` gives a kernel whose launch checks
  the arguments against the ``extern "C" __global__`` signature parsed from the CUDA source
  (count, NumPy scalar type of each value parameter, dtype of each pointer), the block size,
  the dynamic shared memory (enough for the search stack, and at most the portable 48 KiB
  unless ``max_dynamic_shared_size_bytes`` was raised, never above the opt-in limit) and the
  array lengths; then it runs the kernel's launch contract through the host emulation in
  ``tests/native/nqueens_launch_emulator.cu`` (the kernel's own search code); the
  matchstick kernels go to ``tests/fake_matchsticks.py`` and
  ``tests/fake_matchstick_join.py``, and the symmetric search's to
  ``tests/fake_nqueens_symmetric.py`` instead;
* ``RawKernel`` runs only the backend probe's kernel;
* everything else (``zeros``, ``minimum``, dtypes, ...) is NumPy's, returning device arrays,
  so the CuPy path of the matchstick transfer matrix runs too;
* ``make_fake_cupy(libraries, devices=k)`` has k devices, of which CUDA shows those listed in
  ``CUDA_VISIBLE_DEVICES`` (read when "CUDA" initialises, as CUDA does); each device's
  ``pciBusID`` is 0x10 + its physical index, so a test can tell which one a process uses;
* like CUDA, the first call that needs the driver initialises it, and a process forked
  after that fails every such call with ``cudaErrorInitializationError``; before it,
  ``cuda.driver.ctxGetCurrent()`` raises ``CUDA_ERROR_NOT_INITIALIZED``;
* with ``FAKE_CUPY_LAUNCH_LOG`` set to a file, each kernel launch appends a line
  "pid physical-device" to it.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

FAKE_DEVICE_NAME = "Fake H100 (host emulation)"
FAKE_FREE_BYTES = 80 * 2**30  # what memGetInfo reports as free and total
ATTRIBUTES = {  # an H100 SXM's values
    "MultiProcessorCount": 132,
    "MaxThreadsPerMultiProcessor": 2048,
    "MaxSharedMemoryPerBlock": 48 * 1024,
    "MaxSharedMemoryPerBlockOptin": 227 * 1024,
}
_C_SCALARS = {"int": np.int32, "long long": np.int64}
_C_POINTEES = {"nq_u32": np.uint32, "unsigned char": np.uint8, "nq_u64": np.uint64,
               "int": np.int32, "ms_u32": np.uint32, "ms_u64": np.uint64,
               "mj_u32": np.uint32, "mj_u64": np.uint64}


class DeviceArray(np.ndarray):
    """A "device" array: NumPy memory that, like CuPy's, is read back with ``.get()``."""

    def get(self) -> np.ndarray:
        return np.array(self, copy=True).view(np.ndarray)


def _device(array) -> DeviceArray:
    return np.asarray(array).view(DeviceArray)


def kernel_signatures(code: str) -> dict[str, list[tuple[str, object]]]:
    """``{kernel: [(kind, type), ...]}`` with kind "scalar" or "pointer", from CUDA source."""
    signatures = {}
    for name, params in re.findall(r'extern\s+"C"\s+__global__\s+void\s+'
                                    r'(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)', code):
        parsed = []
        for param in params.split(","):
            text = " ".join(param.replace("__restrict__", "").replace("const", "").split())
            if "*" in text:
                pointee = text.split("*")[0].strip()
                parsed.append(("pointer", _C_POINTEES[pointee]))
            else:
                c_type = text.rsplit(" ", 1)[0]
                parsed.append(("scalar", _C_SCALARS[c_type]))
        signatures[name] = parsed
    return signatures


class LaunchError(RuntimeError):
    """A launch the real device would reject (or that would read or write out of bounds)."""


class FakeKernel:
    def __init__(self, name: str, signature, library, sum_words: int):
        self.name = name
        self.signature = signature
        self.library = library
        self.sum_words = sum_words
        self.shared_size_bytes = 2 * 8 * 32  # about the kernel's static warp sums
        self.max_dynamic_shared_size_bytes = ATTRIBUTES["MaxSharedMemoryPerBlock"] - self.shared_size_bytes
        self.launches: list[tuple[int, int, int]] = []
        self.on_launch = None  # set by the module: the fake driver's check and launch log

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        if self.on_launch is not None:
            self.on_launch()
        grid, block = tuple(grid), tuple(block)
        if len(grid) != 1 or len(block) != 1 or grid[0] < 1 or not 1 <= block[0] <= 1024:
            raise LaunchError(f"{self.name}: bad launch shape grid={grid} block={block}")
        if len(args) != len(self.signature):
            raise LaunchError(f"{self.name}: {len(args)} arguments for {len(self.signature)} parameters")
        for k, (value, (kind, c_type)) in enumerate(zip(args, self.signature)):
            if kind == "scalar" and type(value) is not c_type:
                raise LaunchError(f"{self.name}: argument {k} is {type(value).__name__}, "
                                  f"the kernel takes {np.dtype(c_type).name}")
            if kind == "pointer":
                if not isinstance(value, DeviceArray):
                    raise LaunchError(f"{self.name}: argument {k} is not a device array")
                if value.dtype != c_type or not value.flags.c_contiguous:
                    raise LaunchError(f"{self.name}: argument {k} is {value.dtype}, "
                                      f"the kernel takes {np.dtype(c_type).name}*")
        if shared_mem > self.max_dynamic_shared_size_bytes:
            raise LaunchError(f"{self.name}: {shared_mem} bytes of dynamic shared memory, but the "
                              f"kernel allows {self.max_dynamic_shared_size_bytes}")
        if shared_mem + self.shared_size_bytes > ATTRIBUTES["MaxSharedMemoryPerBlockOptin"]:
            raise LaunchError(f"{self.name}: shared memory beyond the device's opt-in limit")
        self._run(grid[0], block[0], args, shared_mem)
        self.launches.append((grid[0], block[0], shared_mem))

    def _run(self, grid, block, args, shared_mem):
        n, mark, split, count = int(args[0]), int(args[1]), int(args[2]), int(args[3])
        if not (0 <= split <= 2 and mark + split <= n - 1):
            raise LaunchError(f"{self.name}: split={split} does not fit n={n}, mark={mark}")
        base = mark + split  # nq_thread_words in the kernel: 16-byte slots, then one word per row
        needed = block * 4 * (4 * (n - base) + (n - 1 - base))
        if shared_mem < needed:
            raise LaunchError(f"{self.name}: {shared_mem} bytes of shared memory, the stacks need {needed}")
        records, counter, output = args[4], args[5], args[6]
        if records.size < 4 * count:
            raise LaunchError(f"{self.name}: {records.size} record words for {count} prefixes")
        if counter.size != 1 or int(counter[0]) != 0:
            raise LaunchError(f"{self.name}: the prefix counter must be one zeroed word")
        if self.name == "nqueens_count":
            if output.size < self.sum_words * grid:
                raise LaunchError(f"{self.name}: block_sums too short for {grid} blocks")
        elif output.size < count or output[:count].any():
            raise LaunchError(f"{self.name}: the weights must be {count} zeroed words")
        pointers = [ctypes.c_void_p(a.ctypes.data) for a in (records, counter, output)]
        function = getattr(self.library, f"emulate_{self.name}")
        function(ctypes.c_int(grid), ctypes.c_int(block), ctypes.c_int(n), ctypes.c_int(mark),
                 ctypes.c_int(split), ctypes.c_longlong(count), *pointers)


class EmulatedKernel(FakeKernel):
    """A kernel whose launch runs ``emulate_<name>`` of a host emulator (returning an int
    status) after its own contract checks (:meth:`_need`); no static shared memory."""

    def __init__(self, name: str, signature, library):
        super().__init__(name, signature, library, sum_words=0)
        self.shared_size_bytes = 0
        self.max_dynamic_shared_size_bytes = 48 * 1024
        self.function = getattr(library, f"emulate_{name}")
        self.function.restype = ctypes.c_int

    def _need(self, ok: bool, message: str) -> None:
        if not ok:
            raise LaunchError(f"{self.name}: {message}")


class FakeRawModule:
    def __init__(self, *, code: str, options: tuple[str, ...] = (), libraries=None):
        self.code, self.options = code, tuple(options)
        self.libraries = libraries
        self.kernels: dict[str, FakeKernel] = {}
        self.on_launch = None

    def compile(self, log_stream=None):
        pass  # nothing to build: the emulator libraries are built by the caller

    def get_function(self, name: str) -> FakeKernel:
        signatures = kernel_signatures(self.code)
        if name not in signatures:
            raise LaunchError(f"no kernel {name!r} in the module")
        if name.startswith("matchstick_join_"):  # kernels/matchstick_join.cu: tests/fake_matchstick_join.py
            from fake_matchstick_join import JoinKernel

            return self._kernel(name, lambda: JoinKernel(name, signatures[name],
                                                         self.libraries["matchstick_join"]))
        if name.startswith("matchsticks_"):  # kernels/matchsticks.cu: tests/fake_matchsticks.py
            from fake_matchsticks import MatchstickKernel

            return self._kernel(name, lambda: MatchstickKernel(name, signatures[name],
                                                               self.libraries["matchsticks"]))
        if name.startswith("nqueens_symmetric"):  # kernels/nqueens_symmetric.cu: tests/fake_nqueens_symmetric.py
            from fake_nqueens_symmetric import SymmetricKernel

            return self._kernel(name, lambda: SymmetricKernel(name, signatures[name]))
        counting = "-DNQ_COUNT_NODES" in self.options
        library = self.libraries["nodes" if counting else "plain"]
        return self._kernel(name, lambda: FakeKernel(name, signatures[name], library,
                                                     2 if counting else 1))

    def _kernel(self, name: str, make) -> FakeKernel:
        """The module's kernel ``name``, made on first use and wired to the driver's log."""
        if name not in self.kernels:
            self.kernels[name] = make()
            self.kernels[name].on_launch = self.on_launch
        return self.kernels[name]


class FakeProbeKernel:
    def __init__(self, code: str, name: str, options=()):
        if name != "gpuqueens_probe":
            raise LaunchError(f"the fake CuPy runs only the backend probe, not {name!r}")

    def __call__(self, grid, block, args, shared_mem=0):
        out = args[0]
        out[: block[0]] = np.arange(1, block[0] + 1, dtype=out.dtype)


class CUDARuntimeError(RuntimeError):
    """As CuPy's ``cupy.cuda.runtime.CUDARuntimeError``."""


class CUDADriverError(RuntimeError):
    """As CuPy's ``cupy.cuda.driver.CUDADriverError``."""


class FakeCuda:
    """The driver's state in one process: initialised or not, by whom, and the visible devices."""

    def __init__(self, devices: int):
        self.physical = devices
        self.initialised_pid: int | None = None
        self.visible: list[int] = []
        self.current = 0

    def touch(self) -> None:
        """A call that needs the driver: initialise it, or fail as CUDA does after a fork."""
        if self.initialised_pid is None:
            self.initialised_pid = os.getpid()
            self.visible.clear()
            for item in os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(self.physical)))).split(","):
                item = item.strip()  # CUDA stops at the first entry that names no device
                if not item.isdigit() or int(item) >= self.physical or int(item) in self.visible:
                    break
                self.visible.append(int(item))
        elif self.initialised_pid != os.getpid():
            raise CUDARuntimeError("cudaErrorInitializationError: initialization error")

    def check_device(self, device: int) -> int:
        self.touch()
        if not 0 <= device < len(self.visible):
            raise CUDARuntimeError(f"cudaErrorInvalidDevice: device {device} of {len(self.visible)}")
        return device

    def launched(self) -> None:
        self.touch()
        log = os.environ.get("FAKE_CUPY_LAUNCH_LOG")
        if log:
            with open(log, "a") as out:
                out.write(f"{os.getpid()} {self.visible[self.current]}\n")

    def ctx_get_current(self) -> int:
        if self.initialised_pid is None:
            raise CUDADriverError("CUDA_ERROR_NOT_INITIALIZED: initialization error")
        return 0

    def properties(self, device: int) -> dict:
        index = self.check_device(device)  # first: it may initialise the visible list
        physical = self.visible[index]
        return {"name": FAKE_DEVICE_NAME.encode(), "pciBusID": 0x10 + physical,
                "pciDeviceID": 0, "pciDomainID": 0}


class FakeDevice:
    def __init__(self, device=None, *, cuda: FakeCuda | None = None):
        self.cuda = cuda or FakeCuda(1)
        self.cuda.touch()
        self.id = self.cuda.current if device is None else self.cuda.check_device(int(device))
        self.attributes = dict(ATTRIBUTES)

    def __enter__(self):
        self._previous = self.cuda.current
        self.cuda.current = self.id
        return self

    def __exit__(self, *exc):
        self.cuda.current = self._previous
        return False

    def use(self):
        self.cuda.current = self.id


def make_fake_cupy(libraries: dict[str, Path], devices: int = 1) -> types.ModuleType:
    """A module that passes for ``cupy``; ``libraries``: emulator builds, "plain" and "nodes"
    (may be empty for tests that launch no search kernel); ``devices``: physical devices."""
    loaded = {}
    for key, path in libraries.items():
        lib = ctypes.CDLL(str(path))
        for name in ("emulate_nqueens_count", "emulate_nqueens_count_each"):
            if hasattr(lib, name):
                getattr(lib, name).restype = None
        loaded[key] = lib

    cuda = FakeCuda(devices)

    def driver_call(function):  # like CuPy: these calls initialise CUDA (or fail after a fork)
        def call(*args, **kwargs):
            cuda.touch()
            return function(*args, **kwargs)
        return call

    def raw_module(*, code, options=()):
        cuda.touch()
        module = FakeRawModule(code=code, options=options, libraries=loaded)
        module.on_launch = cuda.launched
        return module

    module = types.ModuleType("cupy")
    module.__getattr__ = lambda name: getattr(np, name)  # dtypes and ufuncs are NumPy's
    module.ndarray = DeviceArray
    module.asarray = driver_call(lambda a, dtype=None: _device(np.array(a, dtype=dtype, copy=True)))
    module.zeros = driver_call(lambda shape, dtype=float: _device(np.zeros(shape, dtype=dtype)))
    module.ascontiguousarray = driver_call(lambda a, dtype=None: _device(np.ascontiguousarray(a, dtype=dtype)))
    module.zeros_like = driver_call(lambda a, dtype=None: _device(np.zeros_like(a, dtype=dtype)))
    module.asnumpy = lambda a: np.array(a, copy=True).view(np.ndarray)
    module.RawModule = raw_module
    module.RawKernel = driver_call(FakeProbeKernel)
    runtime = types.SimpleNamespace(
        getDeviceCount=driver_call(lambda: len(cuda.visible)),
        getDeviceProperties=cuda.properties,
        memGetInfo=driver_call(lambda: (FAKE_FREE_BYTES, FAKE_FREE_BYTES)),
        CUDARuntimeError=CUDARuntimeError,
    )
    driver = types.SimpleNamespace(ctxGetCurrent=cuda.ctx_get_current, CUDADriverError=CUDADriverError)
    module.cuda = types.SimpleNamespace(Device=lambda device=None: FakeDevice(device, cuda=cuda),
                                        runtime=runtime, driver=driver)
    module.fake_cuda = cuda  # for tests: the fake driver's state
    return module


@contextmanager
def fake_cupy_installed(monkeypatch, libraries: dict[str, Path], *caches) -> Iterator[types.ModuleType]:
    """The stand-in as this process's ``cupy`` for one test (``monkeypatch`` undoes it), with
    the GPU probe's, the kernel loader's and ``caches``' cached answers forgotten before and
    after."""
    from gpuqueens import backends, kernels

    fake = make_fake_cupy(libraries)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    caches = (backends.gpu_status, kernels._load, *caches)
    for cache in caches:
        cache.cache_clear()
    try:
        yield fake
    finally:
        for cache in caches:
            cache.cache_clear()
