// Host emulation of the two kernels of kernels/nqueens.cu, for tests without a GPU.
//
// Built as a shared library and called through ctypes by tests/fake_cupy.py, which stands in
// for CuPy so that the Python launch code (gpuqueens/problems/nqueens/gpu.py: batches,
// arguments, grid sizes, block sums) runs unchanged. Each function keeps the kernel's launch
// contract: thread t of the grid takes prefixes t, t + threads, ...; `nqueens_count` adds every
// block's sums to block_sums[NQ_SUM_WORDS * block + k]; `nqueens_count_each` writes one
// (total, unique) per prefix. The search is the kernel's own __host__ __device__ function;
// only the block reduction (warp shuffles, shared memory) is replaced by a plain loop, so it is
// the launch contract, not the device reduction, that these tests check.

#include "../../kernels/nqueens.cu"

extern "C" int emulate_sum_words() { return NQ_SUM_WORDS; }

extern "C" void emulate_nqueens_count(
    int grid, int block, int n, int mark, long long count,
    const nq_u32* left, const nq_u32* down, const nq_u32* right, const unsigned char* cols,
    const unsigned char* b1, const unsigned char* corner, nq_u64* block_sums) {
    const NqPrefixes set = {n, mark, count, left, down, right, cols, b1, corner};
    const NqEachOut none = {0, 0};
    const long long threads = (long long)grid * block;
    nq_u32 stack[2 * NQ_MAX_N];
    for (int b = 0; b < grid; ++b) {
        NqCounts sums;
        nq_clear(sums);
        for (int t = 0; t < block; ++t) {
            nq_add(sums, nq_count_prefixes(set, (long long)b * block + t, threads, stack, 1, none));
        }
        block_sums[NQ_SUM_WORDS * b + 0] += sums.total;
        block_sums[NQ_SUM_WORDS * b + 1] += sums.unique;
#ifdef NQ_COUNT_NODES
        block_sums[NQ_SUM_WORDS * b + 2] += sums.nodes;
#endif
    }
}

extern "C" void emulate_nqueens_count_each(
    int grid, int block, int n, int mark, long long count,
    const nq_u32* left, const nq_u32* down, const nq_u32* right, const unsigned char* cols,
    const unsigned char* b1, const unsigned char* corner, nq_u64* totals, nq_u64* uniques) {
    const NqPrefixes set = {n, mark, count, left, down, right, cols, b1, corner};
    const NqEachOut each = {totals, uniques};
    const long long threads = (long long)grid * block;
    nq_u32 stack[2 * NQ_MAX_N];
    for (long long t = 0; t < threads; ++t) {
        nq_count_prefixes(set, t, threads, stack, 1, each);
    }
}
