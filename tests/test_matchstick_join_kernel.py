"""The pairing kernel kernels/matchstick_join.cu, checked without a GPU.

nvcc compiles it for sm_90 (no warning, no spill, no stack), and builds
tests/native/matchstick_join_emulator.cu, which runs the kernel's own ``__host__ __device__``
phases block by block on the CPU. Its hits and residues must equal the NumPy twin
(gpuqueens/problems/matchsticks/join_twin.py) on random groups, descriptors (triangle
weights, columns across several chunks), windows, centre masks and primes.
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import numpy as np
import pytest
from emulators import pointer, sm90_resources
from fake_matchstick_join import shared_library

from gpuqueens.problems.matchsticks import join_twin as twin
from gpuqueens.problems.matchsticks.modular import NARROW_PRIME_LIMIT, primes_below

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed"),
]

KERNEL = Path(__file__).resolve().parent.parent / "kernels" / "matchstick_join.cu"


@pytest.fixture(scope="module")
def emulator():
    lib = ctypes.CDLL(str(shared_library()))
    lib.emulate_matchstick_join_pairs.restype = ctypes.c_int
    return lib


def test_compiles_for_sm90_without_warnings_spills_or_stack(tmp_path):
    registers, frames = sm90_resources(KERNEL, tmp_path)
    assert set(registers) == {"matchstick_join_pairs"}, registers
    assert registers["matchstick_join_pairs"] * twin.BLOCK_ROWS * 4 <= 65536, registers
    assert frames and all(b == 0 for frame in frames for b in frame), frames


def _groups(rng, n, primes, h, bits, top_s, top_r):
    x = rng.integers(0, 1 << 62, size=n, dtype=np.uint64) & np.uint64((1 << bits) - 1 if bits < 64
                                                                     else 2**64 - 1)
    if bits == 64:
        x |= rng.integers(0, 2, size=n, dtype=np.uint64) << np.uint64(63)
    H = rng.integers(0, 1 << (h + 1), size=n)
    s = rng.integers(0, top_s + 1, size=n)
    hs = (H | s << 16).astype(np.uint32)
    r = rng.integers(0, top_r + 1, size=n).astype(np.int32)
    counts = np.stack([rng.integers(0, p, size=n) for p in primes]).astype(np.uint32)
    return twin.GroupArrays(x, hs, r, counts)


def _random_case(seed):
    rng = np.random.default_rng(seed)
    h = int(rng.integers(1, 9))
    bits = int(rng.choice([4, 20, 64]))
    primes = np.array(primes_below(NARROW_PRIME_LIMIT, int(rng.integers(1, 4))), dtype=np.uint64)
    left = _groups(rng, int(rng.integers(1, 700)), primes, h, bits, 6, 9)
    same = seed % 3 == 0
    right = left if same else _groups(rng, int(rng.integers(1, 900)), primes, h, bits, 6, 9)
    max_s = int(rng.integers(0, 20))
    windows, base = [], 0
    for _ in range(max_s + 1):
        lo = int(rng.integers(0, 12))
        hi = lo + int(rng.integers(-1, 6))   # an empty window when hi < lo
        windows.append((lo, hi, base))
        base += max(0, hi - lo + 1)
    bins = max(base, 1)
    blocks = []
    for _ in range(int(rng.integers(1, 6))):
        i0 = int(rng.integers(0, len(left)))
        i1 = min(len(left), i0 + int(rng.integers(1, twin.BLOCK_ROWS + 1)))
        j0 = int(rng.integers(0, len(right)))
        j1 = min(len(right), j0 + int(rng.integers(1, 3 * twin.CHUNK)))
        split = int(rng.integers(j0, j1 + 1))
        blocks.append((i0, i1, j0, j1, split, int(rng.integers(1, 3)) | int(rng.integers(1, 3)) << 8))
    one, zero = twin.centre_masks(h, int(rng.integers(0, 1 << h)))
    return dict(left=left, right=right, blocks=np.array(blocks, dtype=np.int32),
                windows=np.array(windows, dtype=np.int32), level=int(rng.integers(10, 60)),
                bins=bins, valid_one=one, valid_zero=zero, removed_c=int(rng.integers(0, h + 1)),
                primes=primes)


def _emulate(lib, case, shared=None, block=twin.BLOCK_ROWS):
    left, right, primes = case["left"], case["right"], case["primes"]
    bins, count = case["bins"], len(case["blocks"])
    hits = np.zeros(bins, dtype=np.uint64)
    residues = np.zeros((len(primes), bins), dtype=np.uint64)
    need = twin.CHUNK * 16 + 8 * bins * (1 + len(primes))
    primes32 = primes.astype(np.uint32)
    arrays = [np.ascontiguousarray(a) for a in (left.x, left.hs, left.r, left.counts, right.x, right.hs,
                                                 right.r, right.counts, case["blocks"], case["windows"])]
    rc = lib.emulate_matchstick_join_pairs(
        count, block, need if shared is None else shared, *map(pointer, arrays[:4]),
        ctypes.c_longlong(len(left)), *map(pointer, arrays[4:8]), ctypes.c_longlong(len(right)),
        pointer(arrays[8]), ctypes.c_longlong(count), pointer(arrays[9]), len(case["windows"]) - 1,
        case["level"], bins, case["valid_one"], case["valid_zero"], case["removed_c"],
        pointer(primes32), len(primes), pointer(hits), pointer(residues))
    return rc, hits, residues % primes[:, None]


@pytest.mark.parametrize("seed", range(30))
def test_host_build_equals_the_numpy_twin(emulator, seed):
    case = _random_case(seed)
    rc, hits, residues = _emulate(emulator, case)
    assert rc == 0
    want_hits, want_residues = twin.pair_bins(**case)
    assert np.array_equal(hits, want_hits)
    assert np.array_equal(residues, want_residues)
    if seed == 0:
        assert want_hits.sum() > 0  # the random cases do hit


def test_all_64_crossing_bits_count(emulator):
    # 8×8 uses all 64 bits of X: the top bit must count in the popcount
    case = _random_case(5)
    top = np.uint64(1 << 63)
    left = twin.GroupArrays(case["left"].x | top, *[getattr(case["left"], f) for f in ("hs", "r", "counts")])
    right = twin.GroupArrays(case["right"].x | top, *[getattr(case["right"], f) for f in ("hs", "r", "counts")])
    case.update(left=left, right=right)
    rc, hits, residues = _emulate(emulator, case)
    want_hits, want_residues = twin.pair_bins(**case)
    assert rc == 0 and np.array_equal(hits, want_hits) and np.array_equal(residues, want_residues)


@pytest.mark.parametrize("change", ["block", "shared", "rows", "columns"])
def test_launches_outside_the_contract_are_refused(emulator, change):
    case = _random_case(7)
    blocks = case["blocks"].copy()
    if change == "rows":
        blocks[0, 1] = blocks[0, 0] + twin.BLOCK_ROWS + 1
    if change == "columns":
        blocks[0, 3] = len(case["right"]) + 1
    case["blocks"] = blocks
    rc, _, _ = _emulate(emulator, case, shared=64 if change == "shared" else None,
                        block=128 if change == "block" else twin.BLOCK_ROWS)
    assert rc == 1
