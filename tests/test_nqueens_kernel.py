"""The CUDA kernel kernels/nqueens.cu, checked without a GPU.

nvcc compiles the kernel for sm_90 (errors, warnings, register and spill report), and builds
tests/native/nqueens_host_main.cu, which runs the kernel's ``__host__ __device__`` subtree
search on the CPU. Its prefix weights (3 × the solutions below each prefix) must give the
OEIS counts when summed over all prefixes (with the symmetric search, by Burnside's lemma),
match the NumPy search (``count_prefixes_cpu``) prefix by prefix, and a small pure-Python
reading of docs/nqueens-method.md on deep prefixes of large boards (up to n = 32).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from prefix_samples import random_prefix_subset

from gpuqueens.problems.nqueens.plan import combine
from gpuqueens.problems.nqueens.prefixes import Prefixes, enumerate_prefixes
from gpuqueens.problems.nqueens.symmetric import count_symmetric

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed"),
]

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels" / "nqueens.cu"
HARNESS = ROOT / "tests" / "native" / "nqueens_host_main.cu"
PREFIX_MAGIC = b"NQPREF2\0"

# OEIS A000170 (all solutions) and A002562 (symmetry classes), index n.
from oeis import A000170, A002562

TOTAL = [None, *A000170]  # index n
UNIQUE = [None, *A002562]


# --- building and running the native programs -------------------------------------------


def _nvcc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["nvcc", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def host_harness(tmp_path_factory) -> Path:
    """The host harness, built once per session."""
    binary = tmp_path_factory.mktemp("nqueens_native") / "nqueens_host"
    result = _nvcc("-O2", "-std=c++17", "-o", str(binary), str(HARNESS))
    assert result.returncode == 0, result.stderr
    return binary


def write_prefix_file(path: Path, prefixes) -> None:
    """Write prefixes in the harness's input format (see nqueens_host_main.cu)."""
    with open(path, "wb") as f:
        f.write(PREFIX_MAGIC)
        f.write(np.array([prefixes.n, prefixes.mark], dtype="<u4").tobytes())
        f.write(np.array([len(prefixes)], dtype="<u8").tobytes())
        f.write(prefixes.records().astype("<u4").tobytes())


def harness_weights(binary: Path, prefixes, workdir: Path, split: int = 0) -> np.ndarray:
    """Per-prefix weights from the kernel's search run on the host, each prefix cut into
    work items by ``split`` rows as on the device."""
    src, dst = workdir / "prefixes.bin", workdir / "weights.bin"
    write_prefix_file(src, prefixes)
    result = subprocess.run([str(binary), str(src), str(dst), str(split)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    weights = np.fromfile(dst, dtype="<u8").astype(np.int64)
    assert weights.shape == (len(prefixes),)
    return weights


# --- compile checks ----------------------------------------------------------------------


def _resource_usage(report: str) -> dict[str, dict[str, int]]:
    """Registers, spill bytes and stack frame of each kernel in a ptxas --resource-usage report."""
    usage: dict[str, dict[str, int]] = {}
    current = None
    for line in report.splitlines():
        if m := re.search(r"Function properties for (\w+)", line):
            current = usage.setdefault(m.group(1), {})
        elif current is not None and (m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)):
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        elif current is not None and (m := re.search(r"Used (\d+) registers", line)):
            current["registers"] = int(m.group(1))
    return usage


@pytest.mark.parametrize("defines", [(), ("-DNQ_COUNT_NODES",)], ids=["plain", "count-nodes"])
def test_kernel_compiles_for_sm90_without_spills(tmp_path, defines):
    result = _nvcc("-arch=sm_90", "-cubin", "-O3", "--resource-usage", "-Xptxas", "-warn-spills,-warn-lmem-usage",
                   *defines, "-o", str(tmp_path / "nqueens.cubin"), str(KERNEL))
    report = result.stdout + result.stderr
    print(report)
    assert result.returncode == 0, report
    assert "warning" not in report.lower(), report
    usage = _resource_usage(report)
    assert set(usage) == {"nqueens_count", "nqueens_count_each", "nqueens_expand_count", "nqueens_expand"}, report
    for kernel, info in usage.items():
        assert info["spill_stores"] == 0 and info["spill_loads"] == 0, (kernel, info)
        assert info["stack"] == 0, (kernel, info)  # no local memory at all


def test_symmetric_kernel_compiles_for_sm90_without_spills(tmp_path):
    # its depth-first stack (about 400 bytes) lives in local memory by design: a tiny search
    source = ROOT / "kernels" / "nqueens_symmetric.cu"
    result = _nvcc("-arch=sm_90", "-cubin", "-O3", "--resource-usage", "-Xptxas", "-warn-spills",
                   "-o", str(tmp_path / "nqueens_symmetric.cubin"), str(source))
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "warning" not in report.lower(), report
    usage = _resource_usage(report)
    assert set(usage) == {"nqueens_symmetric", "nqueens_symmetric_each"}, report
    for kernel, info in usage.items():
        assert info["spill_stores"] == 0 and info["spill_loads"] == 0, (kernel, info)


# --- full counts -------------------------------------------------------------------------


def _marks(n: int) -> list[int]:
    return sorted({2, n // 2, n - 1} - {1})


@pytest.mark.parametrize("n", range(4, 13))
def test_all_prefixes_sum_to_oeis(host_harness, tmp_path, n):
    for mark in _marks(n):
        for split in range(min(2, n - 1 - mark) + 1):
            weights = harness_weights(host_harness, enumerate_prefixes(n, mark), tmp_path, split)
            counts = combine({"u0": (int(weights.sum()), 0, 0), "sym": (0, *count_symmetric(n))})
            assert counts == (TOTAL[n], UNIQUE[n]), f"n={n} mark={mark} split={split}"


def test_harness_accepts_an_empty_prefix_set(host_harness, tmp_path):
    empty = enumerate_prefixes(8, 3).take(np.zeros(0, dtype=np.intp))
    assert harness_weights(host_harness, empty, tmp_path).size == 0


# --- prefix by prefix against the NumPy search -------------------------------------------


@pytest.mark.parametrize("seed", range(24))
def test_per_prefix_counts_match_numpy_search(host_harness, tmp_path, seed):
    from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu

    n, mark, subset = random_prefix_subset(seed, 400)
    split = seed % (min(2, n - 1 - mark) + 1)  # the items of a prefix add up to its weight
    weights = harness_weights(host_harness, subset, tmp_path, split)
    np.testing.assert_array_equal(weights, count_prefixes_cpu(subset, per_prefix=True),
                                  err_msg=f"n={n} mark={mark} split={split}")


# --- deep prefixes of large boards (n up to 32) against a plain reading of the spec ---------


def _free(n: int, row: int, left: int, down: int, right: int, b1: int, corner: bool) -> int:
    """Free columns of ``row`` after the case's rules (docs/nqueens-method.md), Python ints."""
    free = ((1 << n) - 1) & ~(left | down | right)
    if corner:
        return free & ~2 if row < b1 else free
    edges = (1 << (n - 1)) | 1
    if row < b1:
        free &= ~edges
    elif row == n - 1 - b1:
        used = down & edges
        free = 0 if used == 0 else (free if used == edges else free & edges)
    if row == n - 1:
        low = (1 << b1) - 1
        free &= ~(low | (low << (n - b1)))
    return free


def _place(n: int, left: int, down: int, right: int, col: int) -> tuple[int, int, int]:
    bit = 1 << col
    return ((left | bit) << 1) & ((1 << n) - 1), down | bit, (right | bit) >> 1


def _bits(value: int) -> list[int]:
    return [k for k in range(value.bit_length()) if value >> k & 1]


def _leaf_weight(pos: list[int], b1: int, corner: bool) -> int:
    """Weight of a leaf: 24 in case C; 24/k in case S, k = edge queens at corner distance B1."""
    if corner:
        return 24
    n = len(pos)
    b2 = n - 1 - b1
    k = 1 + (pos[b2] == 0) + (pos[b1] == n - 1) + (pos[n - 1] == b2)
    return 24 // k


def _reference_weight(n: int, cols: list[int], b1: int, corner: bool) -> int:
    """Weigh the subtree below a prefix by plain recursion over Python ints."""
    left = down = right = 0
    for col in cols:
        left, down, right = _place(n, left, down, right, col)

    def below(row: int, left: int, down: int, right: int, pos: list[int]) -> int:
        if row == n:
            return _leaf_weight(pos, b1, corner)
        return sum(below(row + 1, *_place(n, left, down, right, col), pos + [col])
                   for col in _bits(_free(n, row, left, down, right, b1, corner)))

    return below(len(cols), left, down, right, list(cols))


def _random_prefix(n: int, mark: int, rng: np.random.Generator) -> tuple[list[int], int, bool]:
    """A random legal prefix of rows 0..mark-1 (random walk with restarts)."""
    while True:
        corner = bool(rng.random() < 0.3)
        if corner:
            b1 = int(rng.integers(2, n - 1))
            cols = [0, b1]
        else:
            b1 = int(rng.integers(1, (n - 2) // 2 + 1))
            cols = [b1]
        left = down = right = 0
        for col in cols:
            left, down, right = _place(n, left, down, right, col)
        for row in range(len(cols), mark):
            free = _bits(_free(n, row, left, down, right, b1, corner))
            if not free:
                break
            col = int(rng.choice(free))
            cols.append(col)
            left, down, right = _place(n, left, down, right, col)
        else:
            return cols, b1, corner


def _prefix_set(n: int, mark: int, rows: list[tuple[list[int], int, bool]]) -> Prefixes:
    masks = []
    for cols, _, _ in rows:
        left = down = right = 0
        for col in cols:
            left, down, right = _place(n, left, down, right, col)
        masks.append((left, down, right))
    as32 = lambda k: np.array([m[k] for m in masks], dtype=np.uint32)  # noqa: E731
    return Prefixes(
        n, mark, as32(0), as32(1), as32(2),
        np.array([cols for cols, _, _ in rows], dtype=np.uint8),
        np.array([b1 for _, b1, _ in rows], dtype=np.uint8),
        np.array([corner for _, _, corner in rows], dtype=np.uint8),
    )


@pytest.mark.parametrize("n", [14, 20, 27, 31, 32])
def test_deep_prefixes_of_large_boards(host_harness, tmp_path, n):
    rng = np.random.default_rng(n)
    mark = n - 9
    rows = [_random_prefix(n, mark, rng) for _ in range(40)]
    weights = harness_weights(host_harness, _prefix_set(n, mark, rows), tmp_path, split=n % 3)
    np.testing.assert_array_equal(weights, [_reference_weight(n, *row) for row in rows])
    assert weights.sum() > 0  # the subtrees are not all empty


@pytest.mark.parametrize("n", [16, 32])
def test_deep_prefixes_match_numpy_search(host_harness, tmp_path, n):
    from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu

    rng = np.random.default_rng(1000 + n)
    mark = n - 8
    prefixes = _prefix_set(n, mark, [_random_prefix(n, mark, rng) for _ in range(60)])
    weights = harness_weights(host_harness, prefixes, tmp_path)
    np.testing.assert_array_equal(weights, count_prefixes_cpu(prefixes, per_prefix=True))


def test_rare_leaf_weights_are_exercised(host_harness, tmp_path):
    """Leaves with k = 2, 3 and 4 (weights 12, 8, 6) occur, and agree with the reference."""
    n, mark = 12, 6
    prefixes = enumerate_prefixes(n, mark)
    side = np.flatnonzero(prefixes.corner == 0)
    weights = harness_weights(host_harness, prefixes.take(side), tmp_path)
    # a prefix weight not a multiple of 24 holds a leaf with k > 1
    assert (weights % 24 != 0).sum() > 0
    sample = side[weights % 24 != 0][:30]
    rows = [(list(map(int, prefixes.cols[i])), int(prefixes.b1[i]), False) for i in sample]
    np.testing.assert_array_equal(harness_weights(host_harness, prefixes.take(sample), tmp_path),
                                  [_reference_weight(n, *row) for row in rows])


@pytest.mark.parametrize("n", [14, 16])
def test_row_b1_just_above_row_b2(host_harness, tmp_path, n):
    """Even n, case S with B1 = (n-2)/2: row B2-1 is row B1, which takes the rare path and
    keeps one leaf word for both rows (the smallest n where such prefixes have solutions is
    14, beyond the OEIS sums above)."""
    from gpuqueens.problems.nqueens.cpu import count_prefixes_cpu

    prefixes = enumerate_prefixes(n, 3)
    subset = prefixes.take(np.flatnonzero((prefixes.corner == 0) & (prefixes.b1 == (n - 2) // 2)))
    expected = count_prefixes_cpu(subset, per_prefix=True)
    assert expected.sum() > 0
    for split in range(3):
        np.testing.assert_array_equal(harness_weights(host_harness, subset, tmp_path, split), expected,
                                      err_msg=f"n={n} split={split}")


@pytest.fixture(scope="session")
def node_harness(tmp_path_factory) -> Path:
    """The host harness built with -DNQ_COUNT_NODES, once per session."""
    binary = tmp_path_factory.mktemp("nqueens_nodes") / "nqueens_nodes"
    result = _nvcc("-O2", "-std=c++17", "-DNQ_COUNT_NODES", "-o", str(binary), str(HARNESS))
    assert result.returncode == 0, result.stderr
    return binary


@pytest.mark.parametrize("split", [1, 2])
def test_split_items_keep_the_node_count(node_harness, tmp_path, split):
    """The instrumented build counts every node once, however the prefixes are cut into items."""
    binary = node_harness
    prefixes = enumerate_prefixes(11, 4)
    counts = []
    for s in (0, split):
        src, dst = tmp_path / "p.bin", tmp_path / "w.bin"
        write_prefix_file(src, prefixes)
        subprocess.run([str(binary), str(src), str(dst), str(s)], check=True)
        counts.append(np.fromfile(dst, dtype="<u8").reshape(2, -1))
    np.testing.assert_array_equal(counts[0], counts[1])  # weights and nodes, prefix by prefix
    assert counts[0][1].sum() > 0


def test_plain_search_mode_counts_every_solution(host_harness, tmp_path):
    """corner=1, b1=0 turns every rule off: the subtree holds all solutions, 24 per leaf."""
    n, mark = 8, 2
    rows = [([a, b], 0, True) for a in range(n) for b in range(n) if abs(a - b) > 1]
    weights = harness_weights(host_harness, _prefix_set(n, mark, rows), tmp_path)
    assert int(weights.sum()) == 24 * TOTAL[n]


# --- the warp model in bench/ runs the kernel's loop ------------------------------------


def test_warp_model_replays_the_kernel_loop(tmp_path):
    """bench/simt_model.py replays the kernel's loop and ygch's loop and gives sane figures."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import simt_model

    binary = simt_model.build(tmp_path)
    kernel = simt_model.run_kernel(binary, tmp_path, 11, 4, 1, threads=64)
    split = simt_model.run_kernel(binary, tmp_path, 11, 3, 1, threads=64, split=1)
    ygch = simt_model.run_ygch(binary, 11, 4, 1, threads=64)
    for r in (kernel, split, ygch):
        assert 1 <= r["active_lanes"] <= 32 and r["tail"] >= 1 and r["nodes"] > 0
        assert simt_model.bound_cycles_per_node(r) > 0
    # a warp step of the main path issues head + main + tail for at most 32 nodes
    main = sum(simt_model.KERNEL_COSTS[b][0] for b in ("head", "main", "tail"))
    assert kernel["issued_per_node"] >= main / 32
    assert 0 < kernel["steps_with_leaf"] < 1 and kernel["empty_per_item"] == 0
    assert split["empty_per_item"] > 0  # the device's split has empty items


def test_main_iteration_in_sass(tmp_path):
    """The search loop's main path, read off the sm_90 SASS: the lanes reconverge once per
    iteration (a convergence barrier set at the head, waited on before the restore), no
    select builds the next state (one may set the leaf word at row B2-1), and it stays about
    as short as the warp model assumes."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import simt_model

    if simt_model.sass_tools() is None:
        pytest.skip(f"cuobjdump or nvdisasm not found ({simt_model.SASS_TOOLS_HINT})")
    path = simt_model.main_iteration(simt_model.sass(KERNEL, tmp_path))
    assert path[1].startswith("BSSY") and any(t.startswith("BSYNC") for t in path[-6:]), path
    assert sum(t.split()[0].startswith("SEL") for t in path) <= 1, path
    alu = sum(map(simt_model.is_alu, path))
    print(f"main iteration: {len(path)} instructions, {alu} ALU")
    assert len(path) <= 34 and alu <= 14, path


def test_plot_reads_the_side_by_side_rows():
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import plot_times

    rows = [{"n": 18, "gpuqueens_s": 0.1, "seed_s": None, "ygch_s": 0.3},
            {"n": 19, "gpuqueens_s": 0.4, "seed_s": 7.6, "ygch_s": None}]
    assert plot_times.series(rows, "gpuqueens_s") == ([18, 19], [0.1, 0.4])
    assert plot_times.series(rows, "seed_s") == ([19], [7.6])
