// Host emulation of the kernels of kernels/nqueens_symmetric.cu, for tests without a GPU.
//
// Built as a shared library and called through ctypes: by tests/fake_nqueens_symmetric.py
// (the CuPy stand-in's launches) and by tests/test_nqueens_symmetric.py (prefix by prefix
// against the NumPy search). Each function keeps the kernel's launch contract: thread t of a
// grid of grid x block threads takes the prefixes t, t + grid x block, ...; the kernel's own
// __host__ __device__ search does the counting, and the atomic adds become plain adds.

#include "../../kernels/nqueens_symmetric.cu"

extern "C" void emulate_nqueens_symmetric(int grid, int block, int n, int rows, long long count,
                                          const nq_u32* records, nq_u64* sums) {
    const long long threads = (long long)grid * block;
    for (long long t = 0; t < threads; ++t) {
        nq_u64 f180 = 0, f90 = 0;
        for (long long p = t; p < count; p += threads) nqs_count(n, rows, records + p * NQS_RECORD_WORDS, f180, f90);
        sums[0] += f180;
        sums[1] += f90;
    }
}

extern "C" void emulate_nqueens_symmetric_each(int grid, int block, int n, int rows, long long count,
                                               const nq_u32* records, nq_u64* counts) {
    const long long threads = (long long)grid * block;
    for (long long t = 0; t < threads; ++t) {
        for (long long p = t; p < count; p += threads) {
            nqs_count(n, rows, records + p * NQS_RECORD_WORDS, counts[2 * p], counts[2 * p + 1]);
        }
    }
}
