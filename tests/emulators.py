"""Host emulators of the CUDA kernels (tests/native/*_emulator.cu): each kernel's own code
built by nvcc as a host-only shared library, for the CuPy stand-in and the kernel tests."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

NATIVE = Path(__file__).resolve().parent / "native"
KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def build_emulator(source: Path, target: Path) -> Path:
    """``source`` as a shared library at ``target`` (nvcc, host code only)."""
    subprocess.run(["nvcc", "-O2", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-o", str(target),
                    str(source)], check=True, timeout=300)
    return target


@functools.lru_cache(maxsize=None)
def emulator_path(source: Path) -> Path:
    """``source`` built once per version of the native and kernel sources, kept in one folder
    of the temporary directory and shared by every test process.

    (Not a folder per process removed at exit: pool workers and killed processes end without
    running exit handlers, and such folders piled up.) The file is built under another name
    and moved into place, so that processes building at once never load half a library; an
    older build of the same source is removed."""
    digest = hashlib.sha256()
    for path in sorted([*NATIVE.iterdir(), *KERNELS.iterdir()]):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    user = getattr(os, "getuid", lambda: "")()
    folder = Path(tempfile.gettempdir()) / f"gpuqueens-test-emulators-{user}"
    folder.mkdir(exist_ok=True)
    target = folder / f"{source.stem}-{digest.hexdigest()[:16]}.so"
    if not target.exists():
        partial = folder / f"{target.name}.{os.getpid()}.partial"
        build_emulator(source, partial)
        os.replace(partial, target)
        for older in folder.glob(f"{source.stem}-*.so"):
            if older != target:
                older.unlink(missing_ok=True)
    return target


def pointer(array) -> ctypes.c_void_p:
    """A NumPy array's data, for an emulator's pointer argument."""
    return ctypes.c_void_p(array.ctypes.data)


def sm90_resources(kernel: Path, folder: Path) -> tuple[dict[str, int], list[tuple[int, ...]]]:
    """Compile ``kernel`` for sm_90 with every warning an error (the test fails if it does
    not compile cleanly); return the registers of each entry function and, per function,
    its (stack frame, spill stores, spill loads) bytes."""
    import re

    result = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", "--resource-usage", "-Werror",
                             "all-warnings", "-c", str(kernel), "-o", str(folder / "k.o")],
                            capture_output=True, text=True, timeout=300)
    report = result.stdout + result.stderr
    assert result.returncode == 0 and "warning" not in report.lower(), report
    registers = {name: int(count) for name, count in
                 re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", report, re.S)}
    frames = [tuple(map(int, frame)) for frame in re.findall(
        r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", report)]
    return registers, frames
