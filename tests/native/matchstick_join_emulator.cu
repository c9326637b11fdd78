// Host emulation of kernels/matchstick_join.cu, for tests without a GPU.
//
// Built as a shared library (nvcc, host code only) and called through ctypes: directly by
// tests/test_matchstick_join_kernel.py (against the NumPy twin on random inputs) and by the
// CuPy stand-in (tests/fake_matchstick_join.py), so that the GPU join of
// gpuqueens/problems/matchsticks/gpu_join.py runs unchanged. A launch is emulated block by
// block; within a block every thread runs one phase before any thread runs the next, which
// is what the kernel's barriers guarantee. The phases are the kernel's own functions.
//
// Return value: 0, or 1 when the launch would be wrong on a device: a block of another size
// than MJ_BLOCK, less dynamic shared memory than the chunk and the bins need, a descriptor
// with more rows than threads, more columns than MJ_MAX_COLUMNS, or rows or columns
// outside the groups, a window whose bins fall outside `bins`.

#include <vector>

#include "../../kernels/matchstick_join.cu"

extern "C" int emulate_matchstick_join_pairs(
        int grid, int block_threads, int shared_mem, const mj_u64* left_x, const mj_u32* left_hs,
        const int* left_r, const mj_u32* left_counts, long long left_n, const mj_u64* right_x,
        const mj_u32* right_hs, const int* right_r, const mj_u32* right_counts, long long right_n,
        const int* blocks, long long block_count, const int* windows, int max_s, int level,
        int bins, int valid_one, int valid_zero, int removed_c, const mj_u32* primes,
        int prime_count, mj_u64* hits, mj_u64* residues) {
    if (block_threads != MJ_BLOCK || shared_mem < mj_shared_bytes(bins, prime_count)) return 1;
    for (int s = 0; s <= max_s; ++s) {
        const int* win = windows + MJ_WINDOW_WORDS * s;
        if (win[0] <= win[1] && (win[2] < 0 || win[2] + win[1] - win[0] >= bins)) return 1;
    }
    for (long long i = 0; i < block_count; ++i) {
        const int* d = blocks + MJ_BLOCK_WORDS * i;
        if (d[0] < 0 || d[1] - d[0] > MJ_BLOCK || d[1] > left_n || d[2] < 0 || d[3] > right_n ||
            d[3] - d[2] > MJ_MAX_COLUMNS) {
            return 1;
        }
    }
    std::vector<mj_u64> memory((mj_shared_bytes(bins, prime_count) + 7) / 8);
    const MjShared sh = mj_shared(memory.data(), bins);
    const MjJob job = {left_x, left_hs, left_r, left_counts, left_n, right_x, right_hs, right_r,
                       right_counts, right_n, windows, max_s, level, bins, valid_one, valid_zero,
                       removed_c, primes, prime_count};
    for (long long index = 0; index < grid; ++index) {
        if (index >= block_count) continue;
        const int* block = blocks + MJ_BLOCK_WORDS * index;
        for (int t = 0; t < block_threads; ++t) mj_clear(sh, bins, prime_count, t, block_threads);
        for (long long c = 0; c < mj_chunks(block); ++c) {
            const long long j0 = block[2] + c * MJ_CHUNK;
            for (int t = 0; t < block_threads; ++t) mj_load(sh, job, j0, block[3], t, block_threads);
            for (int t = 0; t < block_threads; ++t) mj_pair(sh, job, block, j0, t);
        }
        for (int t = 0; t < block_threads; ++t) mj_flush(sh, job, hits, residues, t, block_threads);
    }
    return 0;
}
