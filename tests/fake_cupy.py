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
* everything else (``zeros``, ``minimum``, ``concatenate``, dtypes, ...) is NumPy's, so the
  CuPy array code (the matchstick transfer matrix, the centre join's groups) runs too, held
  to what CuPy refuses, since NumPy would let it pass:

  - what the module's functions give, and what ufuncs, operators, methods, indexing and NumPy
    functions (``np.concatenate``, as CuPy's ``__array_function__``) make of device arrays,
    are device arrays, NumPy scalars among them as 0-d arrays (CuPy's reductions and element
    reads stay on the device); ``asnumpy(a)`` and ``a.get()`` give host copies;
  - a host array (a plain NumPy array, 0-d ones too) mixed with device arrays in a ufunc or
    operator (also as ``out=``), a NumPy function, a method (``searchsorted``, ``dot``) or a
    function of the module raises CuPy's ``TypeError: Unsupported type <class
    'numpy.ndarray'>``; so does a list as an operand. Python and NumPy scalars are fine, and
    so are host arrays given to ``asarray``, ``array`` and the ``*_like`` functions;
  - as in CuPy, host index arrays (integer or boolean) are accepted, and through them host
    values can be assigned (``a[host_index] = host_values``); assigning a host array or a
    list through slices (``a[1:] = host``) raises CuPy's ``ValueError``;
  - a device array has no ``__index__`` (``range(a.max())``, ``a[:a.max()]``): use ``int()``;
  - not caught (NumPy has no hook for them): host code reading a device array without
    ``.get()`` (``np.asarray(a)``, ``host[...] = a``, ``host[a]``), which CuPy refuses; and
    stricter than CuPy: a host 0-d array on the left of a comparison with a device array
    (CuPy takes its value), a host array given to a function that CuPy happens to run on
    the host (it returns a NumPy array there, which then fails on the device);
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
    "MaxSharedMemoryPerMultiprocessor": 228 * 1024,
    "ReservedSharedMemoryPerBlock": 1024,
    "MaxBlocksPerMultiprocessor": 32,
}
_C_SCALARS = {"int": np.int32, "long long": np.int64}
_C_POINTEES = {"nq_u32": np.uint32, "unsigned char": np.uint8, "nq_u64": np.uint64,
               "int": np.int32, "ms_u32": np.uint32, "ms_u64": np.uint64,
               "mj_u32": np.uint32, "mj_u64": np.uint64}


_PYTHON_SCALARS = (bool, int, float, complex)
#: the fake ``cupy``'s NumPy functions that take host arrays: the copies to the device, and
#: the ``*_like`` ones (they read only the shape and dtype)
_HOST_INPUT = {"asarray", "array", "asanyarray", "zeros_like", "ones_like", "empty_like", "full_like"}


def _refusal(where: str, value) -> TypeError:
    return TypeError(f"{where}: Unsupported type {type(value)} (CuPy refuses host arrays mixed "
                     f"with device arrays; move them with cupy.asarray)")


def _is_host_array(value) -> bool:
    return isinstance(value, np.ndarray) and not isinstance(value, DeviceArray)


def _refuse_host(where: str, args, kwargs) -> None:
    """TypeError for a plain NumPy array among ``args`` and ``kwargs`` (also in lists and tuples)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, (list, tuple)):
            _refuse_host(where, value, {})
        elif _is_host_array(value):
            raise _refusal(where, value)


def _plain(value):
    """Device arrays (also in lists and tuples) as plain NumPy views, for NumPy to run on."""
    if isinstance(value, DeviceArray):
        return value.view(np.ndarray)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_plain(item) for item in value)
    return value


def _on_device(result):
    """A result as CuPy gives it: arrays, NumPy scalars (as 0-d arrays: CuPy's reductions and
    element reads stay on the device) and the arrays of tuples and lists are device arrays."""
    if isinstance(result, DeviceArray):
        return result
    if isinstance(result, (np.ndarray, np.generic)):
        return np.asarray(result).view(DeviceArray)
    if isinstance(result, tuple) and hasattr(result, "_fields"):  # a named tuple (unique_all)
        return type(result)(*map(_on_device, result))
    if isinstance(result, (list, tuple)):
        return type(result)(map(_on_device, result))
    return result


def _is_advanced_index(key) -> bool:
    """Whether CuPy reads ``key`` as advanced indexing (an index array, a list or a bool)."""
    return any(isinstance(part, (np.ndarray, list, bool, np.bool_))
               for part in (key if isinstance(key, tuple) else (key,)))


class DeviceArray(np.ndarray):
    """A "device" array: NumPy memory that, like CuPy's, is read back with ``.get()`` and is
    not mixed with host arrays (see the module docstring)."""

    def get(self) -> np.ndarray:
        return np.array(self.view(np.ndarray), copy=True)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        for value in inputs:
            if isinstance(value, (list, tuple)) or _is_host_array(value):
                raise _refusal(ufunc.__name__, value)
            if not isinstance(value, (DeviceArray, np.generic, *_PYTHON_SCALARS)):
                return NotImplemented
        _refuse_host(ufunc.__name__, (), kwargs)  # out=, where=
        plain = {key: _plain(value) for key, value in kwargs.items()}
        result = getattr(ufunc, method)(*map(_plain, inputs), **plain)
        out = kwargs.get("out")
        if out:  # the caller's own arrays, as NumPy returns them
            return out[0] if len(out) == 1 else out
        return _on_device(result)

    # == and != by hand: NumPy 1.x turns the TypeError of __array_ufunc__ into a warning there
    def __eq__(self, other):
        if isinstance(other, (list, tuple)) or _is_host_array(other):
            raise _refusal("equal", other)
        return super().__eq__(other)

    def __ne__(self, other):
        if isinstance(other, (list, tuple)) or _is_host_array(other):
            raise _refusal("not_equal", other)
        return super().__ne__(other)

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(func.__name__, args, kwargs)
        plain = {key: _plain(value) for key, value in kwargs.items()}
        result = super().__array_function__(func, types, _plain(args), plain)
        if "out" in kwargs and result is plain["out"]:
            return kwargs["out"]
        return _on_device(result)

    def __getitem__(self, key):
        # CuPy copies host index arrays to the device (accepted) and reads one element as a
        # 0-d device array
        return _on_device(super().__getitem__(_plain(key)))

    def __setitem__(self, key, value):
        if not isinstance(value, DeviceArray) and isinstance(value, (np.ndarray, list, tuple)) \
                and np.ndim(value) > 0 and not _is_advanced_index(key):
            # CuPy copies a host value in only through an index array; through slices it
            # fills with a scalar and refuses anything larger
            raise ValueError(f"non-scalar {type(value).__name__} cannot be used for fill (CuPy "
                             f"refuses host arrays mixed with device arrays; use cupy.asarray)")
        super().__setitem__(_plain(key), _plain(value))

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    def __index__(self):
        # CuPy's arrays have none: range(a.max()) or a[:n] with a device n fail there
        raise TypeError("a device array is not an index: convert it with int()")

    def __repr__(self):
        return repr(self.get())

    def __str__(self):
        return str(self.get())

    def __format__(self, spec):
        return format(self.get(), spec)

    # NumPy runs these methods without its dispatch: through the functions, so that
    # host arguments are refused and results stay on the device
    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side=side, sorter=sorter)

    def dot(self, b, out=None):
        return np.dot(self, b, out=out)

    def nonzero(self):
        return np.nonzero(self)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return np.argmin(self, axis=axis, out=out, keepdims=keepdims)


def _device(array) -> DeviceArray:
    return np.asarray(array).view(DeviceArray)


class DeviceFunction:
    """A NumPy function or ufunc as the fake ``cupy``'s: it refuses host arrays (unless it
    copies to the device, :data:`_HOST_INPUT`) and gives its arrays as device arrays."""

    def __init__(self, function, name: str, host_input: bool = False):
        self.function, self.name, self.host_input = function, name, host_input

    def __call__(self, *args, **kwargs):
        if not self.host_input:
            _refuse_host(self.name, args, kwargs)
            if isinstance(self.function, np.ufunc):  # CuPy's ufuncs take no lists either
                for value in args:
                    if isinstance(value, (list, tuple)):
                        raise _refusal(self.name, value)
        return _on_device(self.function(*args, **kwargs))

    def __getattr__(self, name):  # a ufunc's reduce, accumulate, ...
        value = getattr(self.function, name)
        if callable(value) and not isinstance(value, type):
            return DeviceFunction(value, f"{self.name}.{name}", self.host_input)
        return value


def _numpy_attribute(name: str):
    """What the fake ``cupy`` has under ``name``: NumPy's, its functions as device functions
    (dtypes, scalar types and constants as they are)."""
    value = getattr(np, name)
    if callable(value) and not isinstance(value, type):
        return DeviceFunction(value, name, name in _HOST_INPUT)
    return value


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
        self._run(grid[0], block[0], [_plain(a) for a in args], shared_mem)  # the kernel's own memory
        self.launches.append((grid[0], block[0], shared_mem))

    def _run(self, grid, block, args, shared_mem):
        n, mark, split, count = int(args[0]), int(args[1]), int(args[2]), int(args[3])
        if not (0 <= split <= 2 and mark + split <= n - 1):
            raise LaunchError(f"{self.name}: split={split} does not fit n={n}, mark={mark}")
        needed = block * 4 * self.library.emulate_nqueens_thread_words(n, mark + split)  # nq_thread_words
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


class ExpandKernel(FakeKernel):
    """``nqueens_expand_count`` / ``nqueens_expand`` of kernels/nqueens.cu: the emulator runs
    the kernel's own per-prefix functions over the grid-stride loop, after the launch
    contract's checks (enough records, counts, running totals and output words)."""

    def _run(self, grid, block, args, shared_mem):
        n, mark, rows, count = int(args[0]), int(args[1]), int(args[2]), int(args[3])
        if not (1 <= rows <= 3 and 2 <= mark and mark + rows <= n - 1):
            raise LaunchError(f"{self.name}: rows={rows} does not fit n={n}, mark={mark}")
        records = args[4]
        if records.size < 4 * count:
            raise LaunchError(f"{self.name}: {records.size} record words for {count} prefixes")
        ints = [ctypes.c_int(v) for v in (grid, block, n, mark, rows)]
        if self.name == "nqueens_expand_count":
            counts = args[5]
            if counts.size < count:
                raise LaunchError(f"{self.name}: {counts.size} counts for {count} prefixes")
            self.library.emulate_nqueens_expand_count(*ints, ctypes.c_longlong(count),
                                                      *(ctypes.c_void_p(a.ctypes.data) for a in (records, counts)))
            return
        ends, first, out = args[5], int(args[6]), args[7]
        if ends.size < count:
            raise LaunchError(f"{self.name}: {ends.size} running totals for {count} prefixes")
        written = (int(ends[count - 1]) - first) if count else 0
        if out.size < 4 * written:
            raise LaunchError(f"{self.name}: {out.size} output words for {written} records")
        self.library.emulate_nqueens_expand(*ints, ctypes.c_longlong(count), ctypes.c_void_p(records.ctypes.data),
                                            ctypes.c_void_p(ends.ctypes.data), ctypes.c_longlong(first),
                                            ctypes.c_void_p(out.ctypes.data))


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
        if name.startswith("nqueens_expand"):
            return self._kernel(name, lambda: ExpandKernel(name, signatures[name], library, 0))
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
        out = _plain(args[0])
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


#: The stand-in's one stream: launches run when they are made, so it is never busy.
FAKE_STREAM = "null stream"


class FakeEvent:
    """As ``cupy.cuda.Event``: recorded on a stream, ``done`` once the work before it is.
    The stand-in's launches are synchronous, so a recorded event is done at once."""

    def __init__(self, **options):  # block, disable_timing, interprocess: nothing to do
        self.recorded = False

    def record(self, stream=None):
        self.recorded = True

    @property
    def done(self) -> bool:
        if not self.recorded:
            raise AssertionError("the stand-in's event was asked before it was recorded")
        return True


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
    module.__getattr__ = _numpy_attribute  # dtypes, ufuncs and functions are NumPy's
    module.ndarray = DeviceArray
    module.asarray = driver_call(lambda a, dtype=None: _device(np.array(_plain(a), dtype=dtype, copy=True)))
    module.asnumpy = lambda a, stream=None: a.get() if isinstance(a, DeviceArray) else np.asarray(a)
    module.zeros = driver_call(lambda shape, dtype=float: _device(np.zeros(shape, dtype=dtype)))
    module.ascontiguousarray = driver_call(DeviceFunction(np.ascontiguousarray, "ascontiguousarray"))
    module.zeros_like = driver_call(lambda a, dtype=None: _device(np.zeros_like(_plain(a), dtype=dtype)))
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
                                        runtime=runtime, driver=driver, Event=FakeEvent,
                                        get_current_stream=driver_call(lambda: FAKE_STREAM),
                                        # host arrays have no pools to turn off
                                        set_allocator=lambda allocator=None: None,
                                        set_pinned_memory_allocator=lambda allocator=None: None)
    module.fake_cuda = cuda  # for tests: the fake driver's state
    return module


@contextmanager
def fake_cupy_installed(monkeypatch, libraries: dict[str, Path], *caches,
                        device_checks: bool = False) -> Iterator[types.ModuleType]:
    """The stand-in as this process's ``cupy`` for one test (``monkeypatch`` undoes it), with
    the GPU probe's, the kernel loader's, the device checks' and ``caches``' cached answers
    forgotten before and after. The checks of a device before its first use
    (``problems/*/gpu_check.py``) are skipped unless ``device_checks``: a test then sees
    only the launches and the work of what it calls (tests/test_*_gpu_check.py test them)."""
    from gpuqueens import backends, kernels, worker_setup
    from gpuqueens.problems.matchsticks import gpu_check as matchstick_check
    from gpuqueens.problems.nqueens import gpu_check as nqueens_check

    fake = make_fake_cupy(libraries)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    # a process prepared for the GPU here is not prepared for the tests after this one
    monkeypatch.setattr(worker_setup, "_prepared", set())
    if not device_checks:
        monkeypatch.setattr(nqueens_check, "check_device", lambda: None)
        monkeypatch.setattr(matchstick_check, "check_device", lambda path: None)
    caches = (backends.gpu_status, kernels._load, kernels._stops_long_kernels, nqueens_check._check_device_of,
              matchstick_check._check_device_of, *caches)
    for cache in caches:
        cache.cache_clear()
    try:
        yield fake
    finally:
        for cache in caches:
            cache.cache_clear()
