// Host emulation of the kernels of kernels/matchsticks.cu, for tests without a GPU.
//
// Built as a shared library (nvcc, host code only) and called through ctypes: directly by
// tests/test_matchsticks_kernel.py (against the NumPy twin on random states) and by the CuPy
// stand-in tests/fake_cupy.py, so that the launcher gpuqueens/problems/matchsticks/gpu.py
// runs unchanged. A launch is emulated block by block; within a block every thread runs
// one phase before any thread runs the next, which is what the kernel's barriers
// guarantee. The phases themselves are the kernel's own __host__ __device__ functions.
//
// Return value: 0, or 1 when the launch would be wrong on a device (too little shared
// memory for the tile; a pass block that is not 128 or 256 threads, a join block that is
// not a multiple of MS_LANES up to 256).

#include <vector>

#include "../../kernels/matchsticks.cu"

extern "C" int emulate_matchsticks_pass(int grid, int block, int shared_mem, const ms_u32* in,
                                        ms_u32* out, const ms_u32* lane_words, long long groups,
                                        int h, int first_row, int steps, int right_mask) {
    if (shared_mem < ms_tile_bytes(steps) || (block != MS_MIN_BLOCK && block != MS_MAX_BLOCK)) return 1;
    const MsPass pass(h, first_row, steps, right_mask);
    std::vector<uint4> shared(ms_tile_bytes(steps) / sizeof(uint4));
    ms_u32* tile = reinterpret_cast<ms_u32*>(shared.data());
    for (long long b = 0; b < grid; ++b) {
        if ((b >> pass.tile_shift()) >= groups) continue;
        for (int phase = 0; phase < ms_pass_phases(steps); ++phase) {
            for (int t = 0; t < block; ++t) {
                ms_pass_phase(phase, tile, in, out, lane_words, pass, b, t, block);
            }
        }
    }
    return 0;
}

extern "C" int emulate_matchsticks_join(int grid, int block, int shared_mem, const ms_u32* a,
                                        const ms_u32* b, const ms_u32* lane_words,
                                        const ms_u32* weights, long long groups,
                                        long long chunks, int h, ms_u32* partial) {
    (void)shared_mem;
    if (block % MS_LANES != 0 || block > MS_MAX_BLOCK) return 1;
    for (long long g = 0; g < grid; ++g) {
        if (g / chunks >= groups) continue;
        for (int t = 0; t < block; ++t) {
            partial[g * block + t] =
                ms_join_partial(a, b, lane_words, weights, h, g / chunks, g % chunks, chunks, t, block);
        }
    }
    return 0;
}
