"""The CUDA kernels kernels/matchsticks.cu, checked without a GPU.

nvcc compiles the kernels for sm_90 (no warning, no spill, registers for three blocks of 256
threads per SM), and builds tests/native/matchsticks_launch_emulator.cu (fake_matchsticks.py),
which runs the kernels' own ``__host__ __device__`` phases block by block on the CPU. A pass
and the join must equal the NumPy twin (gpuqueens/problems/matchsticks/evaluation.py) bit for bit on
random lazy states, for random passes (rows, lengths, wrap to the next column, right-stick
masks), in place and into a poisoned buffer.
"""

from __future__ import annotations

import ctypes
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from emulators import sm90_resources
from fake_matchsticks import shared_library

from gpuqueens.problems.matchsticks import evaluation as ev
from gpuqueens.problems.matchsticks import gpu
from gpuqueens.problems.matchsticks.interpolation import evaluation_primes

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed"),
]

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels" / "matchsticks.cu"
POISON = 0xDEADBEEF


@pytest.fixture(scope="module")
def emulator():
    lib = ctypes.CDLL(str(shared_library()))
    lib.emulate_matchsticks_pass.restype = ctypes.c_int
    lib.emulate_matchsticks_join.restype = ctypes.c_int
    return lib


def test_compiles_for_sm90_without_warnings_or_spills(tmp_path):
    usage, frames = sm90_resources(KERNEL, tmp_path)
    assert set(usage) == {"matchsticks_pass", "matchsticks_join"}, usage
    assert len(frames) == 2 and all(b == 0 for frame in frames for b in frame), frames
    assert usage["matchsticks_pass"] * 256 * 3 <= 65536, usage  # three blocks per SM


def _pointer(array):
    return ctypes.c_void_p(array.ctypes.data)


def _to_device(v, groups):  # (states, lanes) -> [group][state][8 lanes] uint32
    return np.ascontiguousarray(v.reshape(v.shape[0], groups, ev.LANES).transpose(1, 0, 2)
                                .astype(np.uint32))


def _from_device(d):
    groups, states, lanes = d.shape
    return d.transpose(1, 0, 2).reshape(states, groups * lanes).astype(np.uint64)


def _random_case(seed):
    rng = random.Random(seed)
    h = rng.randrange(1, 10)
    groups = rng.randrange(1, 3)
    primes = evaluation_primes(7, 2**900)
    ps = [rng.choice(primes) for _ in range(groups * ev.LANES)]
    lanes = ev.lane_words(ps, [rng.randrange(p) for p in ps])
    p = lanes[:, 0].astype(np.uint64)
    np_rng = np.random.default_rng(seed)
    v = np_rng.integers(0, 2**62, size=(1 << (h + 2), len(ps)), dtype=np.uint64) % (2 * p)
    return rng, h, groups, lanes, v


@pytest.mark.parametrize("seed", range(40))
def test_pass_equals_the_numpy_twin_on_random_states(emulator, seed):
    rng, h, groups, lanes, v = _random_case(seed)
    steps = rng.randrange(1, min(h + 1, gpu.MAX_TILE_STEPS) + 1)
    one = ev.Pass(rng.randrange(h + 1), steps, rng.randrange(1 << steps))
    want = ev.run_pass(v, h, one, lanes)
    source = _to_device(v, groups)
    in_place = seed % 2 == 0
    target = source if in_place else np.full_like(source, POISON)
    grid = groups << (h + 1 - steps)
    block = rng.choice([128, 256])
    rc = emulator.emulate_matchsticks_pass(grid, block, (2 << steps) * 32, _pointer(source), _pointer(target),
                                           _pointer(lanes), ctypes.c_longlong(groups), h, one.first_row,
                                           steps, one.right_mask)
    assert rc == 0
    assert np.array_equal(_from_device(target), want)


@pytest.mark.parametrize("block,shared", [(128, 63), (64, 1024), (512, 1024)])
def test_pass_refuses_launches_outside_its_contract(emulator, block, shared):
    # a tile of 2 steps needs 8 states × 32 bytes; a pass block has 128 or 256 threads
    _, h, groups, lanes, v = _random_case(1)
    d = _to_device(v, groups)
    rc = emulator.emulate_matchsticks_pass(groups << (h - 1), block, shared, _pointer(d), _pointer(d),
                                           _pointer(lanes), ctypes.c_longlong(groups), h, 0, 2, 3)
    assert rc == 1


@pytest.mark.parametrize("seed", range(12))
def test_join_equals_the_numpy_twin_on_random_states(emulator, seed):
    rng, h, groups, lanes, v = _random_case(100 + seed)
    other = np.random.default_rng(seed).permutation(v)  # a second lazy state
    weights = ev.join_weights(lanes, h)
    want = ev.join(v, other, h, lanes, weights)
    chunks = rng.choice([1, 3, 1 << (h + 1)])
    block = rng.choice([8, 64, 256])
    partial = np.full(groups * chunks * block, POISON, dtype=np.uint32)
    a, b = _to_device(v, groups), _to_device(other, groups)  # held: ctypes keeps only addresses
    rc = emulator.emulate_matchsticks_join(groups * chunks, block, 0, _pointer(a), _pointer(b), _pointer(lanes),
                                           _pointer(weights), ctypes.c_longlong(groups),
                                           ctypes.c_longlong(chunks), h, _pointer(partial))
    assert rc == 0
    p = lanes[:, 0].astype(np.uint64)
    assert np.all(partial < np.repeat(p.reshape(groups, 1, ev.LANES), chunks * block // ev.LANES, axis=1)
                  .reshape(-1))
    sums = partial.astype(np.uint64).reshape(groups, -1, ev.LANES).sum(axis=1).reshape(-1) % p
    assert np.array_equal(sums, want)
