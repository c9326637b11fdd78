"""The CuPy stand-in (tests/fake_cupy.py) refuses what CuPy refuses: host arrays mixed with
device arrays. Without this, GPU code that mixes them passes here and fails on a GPU.

No kernel runs here, so nothing is compiled; the last tests run gpuqueens' CuPy array code
(the transfer matrix, the centre join's groups) on the stand-in against NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest
from fake_cupy import DeviceArray, make_fake_cupy

from gpuqueens.problems.matchsticks import gpu_join
from gpuqueens.problems.matchsticks.join_blocks import table_blocks
from gpuqueens.problems.matchsticks.pairing import centre_patterns, prepare_round
from gpuqueens.problems.matchsticks.transfer import count_by_removed

REFUSED = r"Unsupported type <class 'numpy\.ndarray'> \(CuPy refuses host arrays mixed"


@pytest.fixture
def cp():
    return make_fake_cupy({})


@pytest.fixture
def dev(cp):
    return cp.asarray(np.arange(6, dtype=np.uint64))


@pytest.fixture
def host():
    return np.arange(6, dtype=np.uint64)


def _on_device(value) -> bool:
    return isinstance(value, DeviceArray)


# -- refused ------------------------------------------------------------------------------

@pytest.mark.parametrize("mix", [
    lambda cp, d, h: d + h,
    lambda cp, d, h: h * d,               # the host array first: NumPy still asks the device array
    lambda cp, d, h: d % h[0:1],
    lambda cp, d, h: d == h,
    lambda cp, d, h: d + np.array(3, dtype=np.uint64),   # 0-d host arrays too
    lambda cp, d, h: cp.minimum(d, h),
    lambda cp, d, h: cp.minimum(h, h),    # a module function on host arrays only
    lambda cp, d, h: np.add(d, d, out=h),
    lambda cp, d, h: cp.concatenate([d, h]),
    lambda cp, d, h: np.concatenate([h, d]),
    lambda cp, d, h: cp.where(d > 2, h, d),
    lambda cp, d, h: cp.stack([d, h]),
    lambda cp, d, h: cp.searchsorted(d, h),
    lambda cp, d, h: d.searchsorted(h),
    lambda cp, d, h: d.dot(h),
    lambda cp, d, h: cp.cumsum(h),
    lambda cp, d, h: cp.ascontiguousarray(h),
], ids=["add", "host-first", "remainder", "compare", "0-d", "ufunc", "ufunc-host-only", "out",
        "concatenate", "np.concatenate", "where", "stack", "searchsorted", "searchsorted-method",
        "dot", "cumsum", "ascontiguousarray"])
def test_host_arrays_mixed_with_device_arrays_are_refused(cp, dev, host, mix):
    with pytest.raises(TypeError, match=REFUSED):
        mix(cp, dev, host)


def test_in_place_operators_refuse_host_arrays(dev, host):
    with pytest.raises(TypeError, match=REFUSED):
        dev += host
    with pytest.raises(TypeError, match=REFUSED):
        dev[1:] -= host[:5]


def test_lists_are_no_operands(cp, dev):
    with pytest.raises(TypeError, match="Unsupported type <class 'list'>"):
        dev + [1] * 6
    with pytest.raises(TypeError, match="Unsupported type <class 'list'>"):
        cp.add([1, 2], 3)


def test_slices_take_no_host_arrays(dev, host):
    for value in (host[:2], [7, 7]):
        with pytest.raises(ValueError, match="cannot be used for fill"):
            dev[1:3] = value
    assert dev.get().tolist() == list(range(6))


def test_device_arrays_are_no_indices(dev):
    with pytest.raises(TypeError, match="not an index"):
        range(dev.max())
    with pytest.raises(TypeError, match="not an index"):
        dev[:dev[2]]
    assert int(dev.max()) == 5 and dev[dev[2]].item() == 2


# -- accepted, and on the device --------------------------------------------------------

def test_scalars_mix_with_device_arrays(dev):
    for result in (dev + np.uint64(3), np.uint64(3) + dev, dev * 2, dev - True, dev / 2.0):
        assert _on_device(result)
    assert (dev + np.uint64(3)).get().tolist() == [3, 4, 5, 6, 7, 8]


def test_results_stay_on_the_device(cp, dev):
    values, inverse = cp.unique(dev % np.uint64(2), return_inverse=True)
    mask = dev > 2
    results = [cp.arange(3), cp.ones(2, dtype=bool), values, inverse, np.concatenate([dev, dev]),
               cp.flatnonzero(mask), *dev.nonzero(), cp.cumsum(dev), dev.argsort(), dev[mask],
               cp.searchsorted(dev, cp.asarray([2]), side="right"), cp.minimum(dev, dev - 1),
               cp.add.reduce(dev), dev.reshape(2, 3).T, cp.ascontiguousarray(dev.reshape(2, 3).T)]
    assert all(_on_device(r) for r in results)


def test_reductions_and_element_reads_are_0d_device_arrays(dev):
    for result in (dev.sum(), dev.max(), dev.argmax(), dev.any(), dev[0], next(iter(dev))):
        assert _on_device(result) and result.ndim == 0
    assert dev.sum() == 15 and f"{dev[2]:3d}" == "  2"


def test_the_host_reaches_the_device_through_asarray_and_index_arrays(cp, dev, host):
    assert _on_device(cp.asarray(host)) and _on_device(cp.array(host)) and _on_device(cp.zeros_like(host))
    assert dev[np.array([0, 2])].get().tolist() == [0, 2]       # host index arrays: CuPy takes them
    assert dev[host > 3].get().tolist() == [4, 5]
    dev[np.array([1, 2])] = np.array([7, 8], dtype=np.uint64)   # and values through them
    dev[3:] = 0
    dev[:1] = dev[1:2]
    assert dev.get().tolist() == [7, 7, 8, 0, 0, 0]


def test_get_and_asnumpy_give_host_copies(cp, dev):
    for copy in (dev.get(), cp.asnumpy(dev)):
        assert type(copy) is np.ndarray
        copy[0] = 9
    assert dev.get()[0] == 0
    assert type(cp.asnumpy([1, 2])) is np.ndarray


def test_out_gives_back_the_callers_array(dev):
    target = dev.copy()
    assert np.add(dev, dev, out=target) is target and target.get().tolist() == list(range(0, 12, 2))


# -- gpuqueens' CuPy array code on the stand-in ------------------------------------------

@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (3, 4)])
def test_the_cupy_transfer_runs_on_the_stand_in(cp, m, n):
    assert count_by_removed(m, n, xp=cp) == count_by_removed(m, n)


def test_the_centre_join_groups_run_on_the_stand_in(cp):
    h, w, level = 3, 4, 25
    rnd = prepare_round(h, w, {q: (level - q) // 2 for q in range(12)}, level)
    on_host, on_device = gpu_join.device_sides(np, rnd), gpu_join.device_sides(cp, rnd)
    for C in centre_patterns(h):
        host_groups = gpu_join._both(on_host, C, max(rnd.caps), rnd.primes)
        device_groups = gpu_join._both(on_device, C, max(rnd.caps), rnd.primes)
        for expected, got in zip(host_groups, device_groups):
            assert _on_device(got.score) and _on_device(got.groups.counts)
            for name in ("x", "hs", "r", "counts"):
                assert np.array_equal(getattr(expected.groups, name), getattr(got.groups, name).get())
            assert np.array_equal(expected.score, got.score.get())
        assert np.array_equal(table_blocks(np, host_groups[0].score, host_groups[1].score, level, False),
                              table_blocks(cp, device_groups[0].score, device_groups[1].score, level, False))
