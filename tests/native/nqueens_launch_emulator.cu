// Host emulation of the kernels of kernels/nqueens.cu, for tests without a GPU.
//
// Built as a shared library and called through ctypes by tests/fake_cupy.py, which stands in
// for CuPy so that the Python launch code (gpuqueens/problems/nqueens/gpu.py: batches,
// arguments, grid sizes, block sums) runs unchanged. Each function keeps the kernel's launch
// contract: every thread of the grid takes prefixes from the shared counter until none is
// left; `nqueens_count` adds every block's sums to block_sums[NQ_SUM_WORDS * block + k];
// `nqueens_count_each` writes one weight per prefix. The threads run the kernel's own
// __host__ __device__ worker, one loop iteration each in turn (round robin), so prefixes are
// handed out interleaved across threads and blocks as on the device; only the block
// reduction (warp shuffles, shared memory) is replaced by a plain loop, so it is the launch
// contract, not the device reduction, that these tests check.

#include <vector>

#include "../../kernels/nqueens.cu"

namespace {

void emulate(int grid, int block, int n, int mark, int split, long long count, const nq_u32* records,
             nq_u64* counter, nq_u64* block_sums, nq_u64* each) {
    const NqPrefixes set = nq_prefixes(n, mark, split, count, records);
    const int threads = grid * block;
    const int words = nq_thread_words(n, mark + split);
    std::vector<nq_u32> memory((size_t)threads * words);
    std::vector<NqWorker> workers(threads);
    std::vector<int> live;
    for (int t = 0; t < threads; ++t) {
        const NqMemory m = nq_thread_memory(&memory[(size_t)t * words], n, mark + split, t);
        workers[t].start(set, counter, m, each);
        if (workers[t].next_item() != NQ_STEP_DONE) live.push_back(t);
    }
    while (!live.empty()) {  // one iteration of every live thread per round
        size_t kept = 0;
        for (const int t : live) {
            if (workers[t].advance() != NQ_STEP_DONE) live[kept++] = t;
        }
        live.resize(kept);
    }
    if (!block_sums) return;
    for (int t = 0; t < threads; ++t) {
        const int b = t / block;
        block_sums[NQ_SUM_WORDS * b + 0] += workers[t].sums.weight;
#ifdef NQ_COUNT_NODES
        block_sums[NQ_SUM_WORDS * b + 1] += workers[t].sums.nodes;
#endif
    }
}

}  // namespace

// Words of shared memory one thread's search needs (the launch's contract, from the kernel).
extern "C" int emulate_nqueens_thread_words(int n, int base) {
    return nq_thread_words(n, base);
}

extern "C" void emulate_nqueens_count(int grid, int block, int n, int mark, int split, long long count,
                                      const nq_u32* records, nq_u64* counter, nq_u64* block_sums) {
    emulate(grid, block, n, mark, split, count, records, counter, block_sums, 0);
}

extern "C" void emulate_nqueens_count_each(int grid, int block, int n, int mark, int split,
                                           long long count, const nq_u32* records, nq_u64* counter,
                                           nq_u64* weights) {
    emulate(grid, block, n, mark, split, count, records, counter, 0, weights);
}

// The expansion kernels: every thread's grid-stride loop, one thread after another (the
// threads touch disjoint outputs, so the order does not matter).
extern "C" void emulate_nqueens_expand_count(int grid, int block, int n, int mark, int rows, long long count,
                                             const nq_u32* records, nq_u64* counts) {
    const long long stride = (long long)grid * block;
    for (long long t = 0; t < stride; ++t) {
        for (long long p = t; p < count; p += stride) {
            counts[p] = (nq_u64)nq_expand_record(n, mark, rows, records + NQ_RECORD_WORDS * p, 0);
        }
    }
}

extern "C" void emulate_nqueens_expand(int grid, int block, int n, int mark, int rows, long long count,
                                       const nq_u32* records, const nq_u64* ends, long long first, nq_u32* out) {
    const long long stride = (long long)grid * block;
    for (long long t = 0; t < stride; ++t) {
        for (long long p = t; p < count; p += stride) nq_expand_write(n, mark, rows, p, records, ends, first, out);
    }
}
