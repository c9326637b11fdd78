"""gpuqueens.glibc: the freed memory a process's heap keeps counts as memory it can use."""

import subprocess
import sys

import pytest

from gpuqueens import estimates
from gpuqueens.glibc import glibc_function, heap_free_bytes

needs_mallinfo2 = pytest.mark.skipif(glibc_function("mallinfo2") is None,
                                     reason="needs glibc 2.33 or later")


def test_without_glibc_there_is_nothing_free_to_count(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert glibc_function("mallopt") is None and heap_free_bytes() == 0


@needs_mallinfo2
def test_a_freed_block_kept_by_the_heap_is_counted():
    # in a fresh process whose heap keeps large freed blocks (as a worker process's does):
    # 256 MiB allocated and freed is then free in the heap, and in available_memory()
    script = """
import numpy as np
from gpuqueens.estimates import available_memory
from gpuqueens.glibc import heap_free_bytes
from gpuqueens.worker_setup import _mallopt, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD
mallopt = _mallopt()
assert mallopt(M_MMAP_THRESHOLD, 1 << 30) and mallopt(M_TRIM_THRESHOLD, (1 << 31) - 1)
before = heap_free_bytes()
block = np.ones(1 << 25)          # 256 MiB, from the heap
block = None
after = heap_free_bytes()
print(after - before >= 200 << 20, available_memory() >= after)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_available_memory_adds_the_heap_s_free_bytes(monkeypatch):
    monkeypatch.setattr(estimates, "heap_free_bytes", lambda: 0)
    alone = estimates.available_memory()
    monkeypatch.setattr(estimates, "heap_free_bytes", lambda: 5 << 30)
    more = estimates.available_memory()
    assert abs(more - alone - (5 << 30)) < 256 << 20   # the system's figure moves a little
