"""The CUDA searches: kernels/nqueens.cu over a set of prefixes (the weights), and
kernels/nqueens_symmetric.cu for the solutions fixed by rotations (F180, F90).

Same contract as :func:`gpuqueens.problems.nqueens.cpu.count_prefixes_cpu`. The prefixes go
to the device as 16-byte records in large batches. For a count, the device first continues
each prefix up to three rows further (``nqueens_expand``: the host's enumeration, so that the
host's prefixes stay few); then each batch of those records is one launch of a persistent
grid whose threads take records from a global counter and add their per-block sums to one
device buffer, read back once at the end and summed into Python ints on the host, so no
count is ever held in fewer than 64 bits. With ``split`` (and for node counts and per-prefix
weights) the grid's work items are instead a prefix and the ranks of its queens in the next
``split`` rows. CuPy is imported inside the functions: this module imports on machines
without CuPy.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from ...kernels import launch_ranges, stops_long_kernels, wait_for_device
from .prefixes import Prefixes
from .symmetric import SymmetricPrefixes, count_symmetric, symmetric_work

__all__ = ["count_prefixes_gpu", "sum_prefixes_gpu", "choose_split", "items_per_prefix",
           "stack_bytes_per_thread", "kernel_options", "KERNEL_SOURCE", "count_symmetric_gpu",
           "count_symmetric_prefixes_gpu"]

KERNEL_SOURCE = "nqueens.cu"
SYMMETRIC_SOURCE = "nqueens_symmetric.cu"
#: Prefixes the symmetric search is cut into on the host (one GPU thread each): a few
#: thousand fill enough of the device for a search of 10^6..10^9 nodes, in milliseconds.
SYMMETRIC_TARGET_PREFIXES = 1 << 12
#: Threads per block (a multiple of 32).
DEFAULT_BLOCK_SIZE = 128
#: ``block_size`` for the block size at which the device holds the most search threads at
#: once (:func:`widest_block_size`), to compare with the default in benchmarks: on one
#: H200 it was within 2% of the default at n = 18..20 (docs/performance.md, 2026-11-28).
WIDEST = "widest"
#: Prefixes uploaded and launched together (16 bytes each on the device).
BATCH_PREFIXES = 1 << 24
#: Work items aimed at per launch: about 40 per thread an H100 holds, so that the threads
#: taking items from the counter finish close together.
TARGET_ITEMS = 1 << 23
#: Rows left below the deepest split row at least, so that an item is worth its fetch.
MIN_ROWS_BELOW = 8
#: Records the device expands the prefixes to per launch at most (16 bytes each: 1 GiB).
EXPANDED_BATCH = 1 << 26
#: Threads per block of the expansion kernels (one prefix per thread, a grid-stride loop).
EXPAND_BLOCK_SIZE = 256
#: The most rows the device expands the prefixes by (NQ_MAX_EXPAND in the kernel).
MAX_EXPAND = 3


def items_per_prefix(n: int, mark: int, split: int) -> int:
    """Work items the device makes of one prefix at row ``mark`` (``nq_split_radix`` in the
    kernel): the rank of the free square taken in each of the next ``split`` rows, row
    ``mark + k``'s below ``n - mark - k``, the columns its queen can still use.

    >>> items_per_prefix(18, 5, 0), items_per_prefix(18, 5, 1), items_per_prefix(18, 5, 2)
    (1, 13, 156)
    """
    return math.prod(n - mark - k for k in range(split))


def choose_split(n: int, mark: int, count: int, most: int = 2) -> int:
    """Rows (0 to ``most``) the device splits or expands each prefix by: enough work items,
    deep enough subtrees. The split takes at most 2 rows, the device's expansion
    :data:`MAX_EXPAND`: from n = 24 a GPU unit holds so few prefixes (11,965 at n = 24, 393
    at n = 27) that two rows leave fewer records than the device holds threads at n = 27,
    and a unit's time is then that of its longest records.

    >>> choose_split(18, 5, 105541), choose_split(18, 7, 4388716), choose_split(10, 5, 500)
    (2, 1, 0)
    >>> choose_split(27, 5, 393), choose_split(27, 5, 393, most=MAX_EXPAND)
    (2, 3)
    """
    split = 0
    while (split < most and count * items_per_prefix(n, mark, split) < TARGET_ITEMS
           and mark + split + 1 <= n - MIN_ROWS_BELOW):
        split += 1
    return split


_COUNT_NODES_FLAG = "-DNQ_COUNT_NODES"


def stack_bytes_per_thread(n: int, mark: int, split: int = 0) -> int:
    """Shared memory one thread's search needs (``nq_thread_words`` in the kernel): a 16-byte
    saved state per row base..n-2 plus the sentinel, where base = mark + split.

    >>> stack_bytes_per_thread(20, 5, 2)
    208
    """
    base = mark + split
    return 16 * (n - base)


def kernel_options(count_nodes: bool = False) -> tuple[str, ...]:
    """The compiler options of kernels/nqueens.cu (the node-counting build adds a define)."""
    return ("-std=c++17", _COUNT_NODES_FLAG) if count_nodes else ("-std=c++17",)


def _module(count_nodes: bool):
    from ...kernels import load_module

    return load_module(KERNEL_SOURCE, kernel_options(count_nodes))


class DeviceLimits(NamedTuple):
    """What a launch of the search may take on one device."""

    sms: int
    threads_per_sm: int
    blocks_per_sm: int
    shared_per_block: int         # without opting in
    shared_per_block_optin: int   # the most a block may take
    shared_per_sm: int            # what the blocks of one SM share
    reserved_per_block: int       # kept by the system for each block, out of shared_per_sm
    time_limited: bool = False    # the driver stops a kernel that runs too long (a display's GPU)


def _device_limits() -> DeviceLimits:
    """The current device's limits."""
    import cupy

    return _device_limits_of(cupy.cuda.Device().id)


@functools.lru_cache(maxsize=None)
def _device_limits_of(device_id: int) -> DeviceLimits:
    import cupy

    attributes = cupy.cuda.Device(device_id).attributes
    sms = int(attributes["MultiProcessorCount"])
    threads = int(attributes.get("MaxThreadsPerMultiProcessor", 2048))
    blocks = int(attributes.get("MaxBlocksPerMultiprocessor", 32))
    default = int(attributes.get("MaxSharedMemoryPerBlock", 48 * 1024))
    optin = int(attributes.get("MaxSharedMemoryPerBlockOptin", default))
    reserved = int(attributes.get("ReservedSharedMemoryPerBlock", 1024))
    per_sm = int(attributes.get("MaxSharedMemoryPerMultiprocessor", optin + reserved))
    return DeviceLimits(sms, threads, blocks, default, optin, per_sm, reserved, stops_long_kernels(device_id))


def _check_block_size(block_size: int | str, *, widest: bool = True) -> int | str:
    if widest and block_size == WIDEST:
        return block_size
    if not (isinstance(block_size, int) and 32 <= block_size <= 1024 and block_size % 32 == 0):
        also = f" or {WIDEST!r}" if widest else ""
        raise ValueError(f"block_size must be a multiple of 32 from 32 to 1024{also}, got {block_size!r}")
    return block_size


def resident_threads(block_size: int, per_thread: int, static: int, limits: DeviceLimits) -> int:
    """Search threads one SM holds at once in blocks of ``block_size`` threads, each thread
    taking ``per_thread`` bytes of shared memory and each block ``static`` more.

    >>> h100 = DeviceLimits(132, 2048, 32, 48 * 1024, 227 * 1024, 228 * 1024, 1024)
    >>> resident_threads(128, 224, 256, h100), resident_threads(512, 224, 256, h100)
    (896, 1024)
    """
    per_block = block_size * per_thread + static + limits.reserved_per_block
    blocks = min(limits.threads_per_sm // block_size, limits.blocks_per_sm, limits.shared_per_sm // per_block)
    return blocks * block_size


def widest_block_size(per_thread: int, static: int, limits: DeviceLimits) -> int:
    """The block size (a multiple of 32 up to 1024; the smallest of equals) at which one SM
    holds the most search threads at once: larger blocks lose less shared memory to the
    system's share of each block, so that more warps may hide each other's latencies.

    >>> h100 = DeviceLimits(132, 2048, 32, 48 * 1024, 227 * 1024, 228 * 1024, 1024)
    >>> [widest_block_size(16 * (n - 7), 256, h100) for n in (18, 19, 20, 21, 22)]
    [256, 128, 544, 512, 480]
    """
    fits = [b for b in range(32, 1025, 32) if b * per_thread + static <= limits.shared_per_block_optin]
    if not fits:
        raise ValueError(f"no block of 32 threads fits the device's shared memory ({per_thread} bytes a thread)")
    return max(fits, key=lambda b: (resident_threads(b, per_thread, static, limits), -b))


def _prepare_kernel(kernel, n: int, mark: int, block_size: int | str, split: int = 0) -> tuple[int, int]:
    """(block size, dynamic shared memory bytes) of one launch (``block_size`` WIDEST:
    :func:`widest_block_size`); raises if the device cannot give the memory."""
    limits = _device_limits()
    per_thread = stack_bytes_per_thread(n, mark, split)
    static = int(kernel.shared_size_bytes)
    if block_size == WIDEST:
        block_size = widest_block_size(per_thread, static, limits)
    shared = block_size * per_thread
    if shared + static > limits.shared_per_block_optin:
        raise ValueError(
            f"the search stack needs {shared} bytes of shared memory per block "
            f"(n={n}, mark={mark}, split={split}, block_size={block_size}) plus {static} static, but the device "
            f"allows at most {limits.shared_per_block_optin}; use a smaller block_size or a deeper mark"
        )
    if shared + static > limits.shared_per_block:  # beyond the portable 48 KiB: opt in explicitly
        kernel.max_dynamic_shared_size_bytes = shared
    return block_size, shared


def _grid_size(count: int, block_size: int) -> int:
    """A persistent grid: at most the blocks the device can hold at once (blocks beyond
    what fits start only when others end, find no prefix left and return at once)."""
    return max(1, min(math.ceil(count / block_size), _resident_blocks(block_size)))


def _resident_blocks(block_size: int) -> int:
    """Blocks of ``block_size`` threads the device holds at once (the largest grid)."""
    limits = _device_limits()
    return limits.sms * max(1, limits.threads_per_sm // block_size)


def _batches(prefixes: Prefixes):
    """(start, stop, device records, zeroed fetch counter) for batches of at most BATCH_PREFIXES.

    All records go to the device in one copy and all counters are zeroed at once, before the
    first launch: nothing the host does between launches waits for the device."""
    import cupy

    size = len(prefixes)
    records = cupy.asarray(prefixes.records())
    starts = range(0, size, BATCH_PREFIXES)
    counters = cupy.zeros(len(starts), dtype=cupy.uint64)
    for k, start in enumerate(starts):
        stop = min(size, start + BATCH_PREFIXES)
        yield start, stop, records[start:stop], counters[k:k + 1]


def _launch_parts(count: int, records, counter, block_size: int, items: int):
    """``(offset, count, records, zeroed counter)`` of the launches that search ``count``
    records of ``items`` work items each (:func:`~gpuqueens.kernels.launch_ranges`: one
    launch, or short ones where the driver stops long kernels, the first of one item a
    thread the device holds at once, each with a fresh counter)."""
    import cupy

    first = max(1, _resident_blocks(block_size) * block_size // items)
    for start, stop in launch_ranges(count, first):
        whole = stop - start == count
        yield start, stop - start, records[start:stop], counter if whole else cupy.zeros(1, dtype=cupy.uint64)


def _check_prefixes(prefixes: Prefixes) -> None:
    from ..._checks import MAX_N

    if not (4 <= prefixes.n <= MAX_N and 2 <= prefixes.mark <= prefixes.n - 1):
        raise ValueError(f"prefixes need 4 <= n <= {MAX_N} and 2 <= mark <= n-1, "
                         f"got n={prefixes.n}, mark={prefixes.mark}")


def _check_split(prefixes: Prefixes, split: int | None) -> int:
    if split is None:
        return choose_split(prefixes.n, prefixes.mark, len(prefixes))
    if not (isinstance(split, int) and 0 <= split <= 2 and prefixes.mark + split <= prefixes.n - 1):
        raise ValueError(f"split must be 0, 1 or 2 with mark + split <= n - 1, got {split!r}")
    return split


def _work_cut(prefixes: Prefixes, split: int | None, expand: int | None, count_nodes: bool) -> tuple[int, int]:
    """(rows expanded on the device, split rows) of a count: by default the expansion by
    :func:`choose_split`'s rows and no split, or as many rows as it may take on a device
    that stops long kernels (smaller records: a short launch is not held up by one long
    search); ``split`` (and node counts) no expansion."""
    if expand is None:
        if split is not None or count_nodes:
            return 0, _check_split(prefixes, split)
        if _device_limits().time_limited:
            return min(MAX_EXPAND, prefixes.n - 1 - prefixes.mark), 0
        return choose_split(prefixes.n, prefixes.mark, len(prefixes), most=MAX_EXPAND), 0
    if split is not None or count_nodes:
        raise ValueError("expand goes without split and count_nodes")
    if not (isinstance(expand, int) and 0 <= expand <= MAX_EXPAND and prefixes.mark + expand <= prefixes.n - 1):
        raise ValueError(f"expand must be 0 to {MAX_EXPAND} rows with mark + expand <= n - 1, got {expand!r}")
    return expand, 0


def sum_prefixes_gpu(
    prefixes: Prefixes,
    *,
    count_nodes: bool = False,
    block_size: int | str = DEFAULT_BLOCK_SIZE,
    split: int | None = None,
    expand: int | None = None,
) -> tuple[int, ...]:
    """``(weight,)`` summed over all prefixes (3 × the solutions below them), plus the
    search's node count with ``count_nodes=True`` (an instrumented build, for benchmarks).

    By default the device expands the prefixes by :func:`choose_split`'s rows (up to
    :data:`MAX_EXPAND`) and searches the records (no empty work items); ``expand`` (0 to 3 rows, mark + expand <= n - 1)
    chooses the rows instead, for benchmarks of where the search should start. ``split``:
    instead, rows the device cuts each prefix by into work items (0, 1 or 2); node counts
    always take this path (the expanded rows' nodes would be missing)."""
    _check_prefixes(prefixes)
    block_size = _check_block_size(block_size)
    expand, split = _work_cut(prefixes, split, expand, count_nodes)
    words = 2 if count_nodes else 1
    if len(prefixes) == 0:
        return (0,) * words
    import cupy

    module = _module(count_nodes)
    kernel = module.get_function("nqueens_count")
    mark = prefixes.mark + expand  # the rows the search starts below
    block_size, shared = _prepare_kernel(kernel, prefixes.n, mark, block_size, split)
    items = items_per_prefix(prefixes.n, mark, split)
    launches = _expanded_batches(prefixes, expand, module) if expand else (
        (stop - start, records, counter) for start, stop, records, counter in _batches(prefixes))
    max_grid = _resident_blocks(block_size)  # the largest grid of any launch
    block_sums = cupy.zeros(words * max_grid, dtype=cupy.uint64)
    for batch, batch_records, batch_counter in launches:
        for _, count, records, counter in _launch_parts(batch, batch_records, batch_counter, block_size, items):
            kernel(
                (_grid_size(count * items, block_size),), (block_size,),
                (np.int32(prefixes.n), np.int32(mark), np.int32(split), np.int64(count),
                 records, counter, block_sums),
                shared_mem=shared,
            )
    wait_for_device()  # with Ctrl-C heard: a unit may run for hours
    sums = block_sums.get().reshape(max_grid, words)  # one read-back
    return tuple(sum(int(v) for v in sums[:, k].tolist()) for k in range(words))


def _expanded_batches(prefixes: Prefixes, rows: int, module):
    """(count, device records at row mark + rows, zeroed fetch counter) for the launches of a
    count: the prefixes continued ``rows`` rows on the device (``nqueens_expand_count``, a
    running total, ``nqueens_expand``), in batches of whole prefixes of at most
    EXPANDED_BATCH records; the same records, in the same order, as
    ``expand_prefixes(prefixes, prefixes.mark + rows).records()`` on the host."""
    import cupy

    n, mark = prefixes.n, prefixes.mark
    count_children = module.get_function("nqueens_expand_count")
    write_children = module.get_function("nqueens_expand")
    for start, stop, records, _ in _batches(prefixes):
        size = stop - start
        grid = _grid_size(size, EXPAND_BLOCK_SIZE)
        counts = cupy.zeros(size, dtype=cupy.uint64)
        count_children((grid,), (EXPAND_BLOCK_SIZE,),
                       (np.int32(n), np.int32(mark), np.int32(rows), np.int64(size), records, counts))
        ends = cupy.cumsum(counts)
        on_host = ends.get()  # where to cut the batches (8 bytes a prefix)
        a = 0
        while a < size:
            first = int(on_host[a - 1]) if a else 0
            b = max(a + 1, int(np.searchsorted(on_host, first + EXPANDED_BATCH, side="right")))
            total = int(on_host[b - 1]) - first
            if total:
                out = cupy.empty((total, 4), dtype=cupy.uint32)
                write_children((_grid_size(b - a, EXPAND_BLOCK_SIZE),), (EXPAND_BLOCK_SIZE,),
                               (np.int32(n), np.int32(mark), np.int32(rows), np.int64(b - a), records[a:b],
                                ends[a:b], np.int64(first), out))
                yield total, out, cupy.zeros(1, dtype=cupy.uint64)
            a = b


def _weigh_each_gpu(prefixes: Prefixes, block_size: int | str, split: int) -> np.ndarray:
    if len(prefixes) == 0:
        return np.zeros(0, dtype=np.int64)
    import cupy

    kernel = _module(False).get_function("nqueens_count_each")
    block_size, shared = _prepare_kernel(kernel, prefixes.n, prefixes.mark, block_size, split)
    each = cupy.zeros(len(prefixes), dtype=cupy.uint64)
    items = items_per_prefix(prefixes.n, prefixes.mark, split)
    for start, stop, batch_records, batch_counter in _batches(prefixes):
        for offset, count, records, counter in _launch_parts(stop - start, batch_records, batch_counter,
                                                             block_size, items):
            kernel(
                (_grid_size(count * items, block_size),), (block_size,),
                (np.int32(prefixes.n), np.int32(prefixes.mark), np.int32(split), np.int64(count),
                 records, counter, each[start + offset:start + offset + count]),
                shared_mem=shared,
            )
    wait_for_device()
    return each.get().astype(np.int64)  # one read-back; one prefix's weight is far below 2^63


def count_prefixes_gpu(prefixes: Prefixes, *, per_prefix: bool = False, block_size: int | str = DEFAULT_BLOCK_SIZE,
                       split: int | None = None, expand: int | None = None):
    """The weight of the prefixes on the current CUDA device (3 × the solutions below them).

    Returns the summed weight as a Python int, or with ``per_prefix=True`` an int64 array
    with each prefix's weight, exactly as
    :func:`~gpuqueens.problems.nqueens.cpu.count_prefixes_cpu` does. ``split`` and
    ``expand``: as in :func:`sum_prefixes_gpu` (by default the sum expands the prefixes on
    the device, and the per-prefix weights split them by :func:`choose_split`'s rows, at
    most two).
    """
    _check_prefixes(prefixes)
    block_size = _check_block_size(block_size)
    if per_prefix:
        if expand is not None:
            raise ValueError("per-prefix weights take split, not expand")
        return _weigh_each_gpu(prefixes, block_size, _check_split(prefixes, split))
    return sum_prefixes_gpu(prefixes, block_size=block_size, split=split, expand=expand)[0]


def _check_symmetric(prefixes: SymmetricPrefixes) -> None:
    from ..._checks import MAX_N

    if not (4 <= prefixes.n <= MAX_N and 1 <= prefixes.rows <= prefixes.n // 2):
        raise ValueError(f"symmetric prefixes need 4 <= n <= {MAX_N} and 1 <= rows <= n/2, "
                         f"got n={prefixes.n}, rows={prefixes.rows}")


def count_symmetric_prefixes_gpu(prefixes: SymmetricPrefixes, *, per_prefix: bool = False,
                                 block_size: int = DEFAULT_BLOCK_SIZE):
    """What :func:`~gpuqueens.problems.nqueens.symmetric.count_symmetric_below` returns for
    the same prefixes, searched on the current CUDA device: ``(f180, f90)`` as Python ints,
    or with ``per_prefix=True`` two int64 arrays."""
    _check_symmetric(prefixes)
    block_size = _check_block_size(block_size, widest=False)
    size = len(prefixes)
    if size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return (empty, empty.copy()) if per_prefix else (0, 0)
    import cupy

    from ...kernels import load_module

    name = "nqueens_symmetric_each" if per_prefix else "nqueens_symmetric"
    kernel = load_module(SYMMETRIC_SOURCE, kernel_options()).get_function(name)
    records = cupy.asarray(prefixes.records())
    out = cupy.zeros(2 * size if per_prefix else 2, dtype=cupy.uint64)
    kernel((math.ceil(size / block_size),), (block_size,),
           (np.int32(prefixes.n), np.int32(prefixes.rows), np.int64(size), records, out))
    counts = out.get().astype(np.int64)  # one read-back, synchronises; halves of F180 fit in 63 bits
    if per_prefix:
        return counts[0::2].copy(), counts[1::2].copy()
    return int(counts[0]), int(counts[1])


def count_symmetric_gpu(n: int, *, block_size: int = DEFAULT_BLOCK_SIZE) -> tuple[int, int]:
    """``(F180, F90)`` of an n×n board, as :func:`~gpuqueens.problems.nqueens.symmetric.count_symmetric`
    gives them, searched on the GPU below a few thousand host prefixes (a few milliseconds of
    host work instead of the NumPy search's ~1 s at n = 21..23)."""
    if n < 4:
        return count_symmetric(n)
    f180, f90 = count_symmetric_prefixes_gpu(symmetric_work(n, SYMMETRIC_TARGET_PREFIXES), block_size=block_size)
    return 2 * f180, 2 * f90
