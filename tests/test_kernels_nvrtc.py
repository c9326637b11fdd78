"""Every kernel source compiles under NVRTC, the runtime compiler CuPy uses (no GPU needed).

nvcc (tests/test_nqueens_kernel.py) and NVRTC differ: NVRTC has no host compiler and no
system headers. Skipped where no libnvrtc is found (it ships with CUDA toolkits, CuPy
installs and the nvidia-cuda-nvrtc wheels).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import site
import sys
from pathlib import Path

import pytest

from gpuqueens.problems.nqueens.gpu import kernel_options

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "kernels").glob("*.cu"))
# the options gpuqueens passes to CuPy, for each build of the kernel
VARIANTS = [kernel_options(False), kernel_options(True)]


def _find_nvrtc() -> str | None:
    named = ctypes.util.find_library("nvrtc")
    if named:
        return named
    folders = [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
    patterns = [f"{f}/nvidia/cuda_nvrtc/lib/libnvrtc.so*" for f in folders]
    patterns += [f"{f}/nvidia/cu*/lib/libnvrtc.so*" for f in folders]
    patterns += ["/usr/local/cuda*/lib64/libnvrtc.so*", "/usr/local/cuda*/targets/*/lib/libnvrtc.so*"]
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            if "builtins" not in path and "alt" not in path:
                return path
    return None


NVRTC = _find_nvrtc()
pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(NVRTC is None, reason="libnvrtc not found")]


def _load_nvrtc() -> ctypes.CDLL:
    """libnvrtc, with the libnvrtc-builtins beside it loaded first: NVRTC opens that library by
    name at compile time, which fails where its folder (a wheel's) is not on the loader's path."""
    folder = Path(NVRTC).parent
    for builtins in sorted(folder.glob("libnvrtc-builtins.so*")):
        if ".alt." not in builtins.name:
            ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
            break
    return ctypes.CDLL(NVRTC)


def nvrtc_compile(source: str, options: tuple[str, ...]) -> tuple[int, str]:
    """(status, log) of compiling ``source`` for sm_90 with NVRTC."""
    lib = _load_nvrtc()
    program = ctypes.c_void_p()
    status = lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"kernel.cu", 0, None, None)
    assert status == 0, f"nvrtcCreateProgram failed: {status}"
    try:
        args = [o.encode() for o in (*options, "--gpu-architecture=compute_90")]
        status = lib.nvrtcCompileProgram(program, len(args), (ctypes.c_char_p * len(args))(*args))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log)
        return status, log.value.decode(errors="replace")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


@pytest.mark.parametrize("options", VARIANTS, ids=["plain", "count-nodes"])
@pytest.mark.parametrize("source", SOURCES, ids=[p.name for p in SOURCES])
def test_compiles_under_nvrtc_without_warnings(source, options):
    status, log = nvrtc_compile(source.read_text(), options)
    assert status == 0, log
    assert "warning" not in log.lower(), log
