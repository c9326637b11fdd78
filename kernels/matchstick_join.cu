// matchstick_join.cu - the centre join's pairing for the matchstick puzzle table (problem 3):
// every pair of a left and a right group of one centre pattern, tested exactly.
//
// Specification: docs/matchsticks.md ("The join on the GPU"). The NumPy twin of this file is
// gpuqueens/problems/matchsticks/join_twin.py; the tests compare the two on random inputs,
// through an nvcc host build of this file (tests/native/matchstick_join_emulator.cu).
//
// What is computed
// ----------------
// A *group* is a half of the grid up to the centre line with the centre sticks C fixed
// (pairing.py, join_groups.py): its crossing-square bits X (one uint64), its h+1 horizontal
// sticks on the centre line H, its squares s and removed sticks r, and its count as one
// residue per prime (< 2^31). A left group a and a right group b form configurations with
//
//     S = s_a + s_b + popcount(X_a & X_b),   R = r_a + r_b + removed_c,
//
// valid when every centre point has degree != 1: at a point with one vertical centre stick
// one of H_a, H_b must be there (mask `valid_one`), at a point with none both or neither
// (mask `valid_zero`). A valid pair is a *hit* when S <= max_s, R lies in the window
// [lo_S, hi_S] of its S and S + 2R <= level (the cheap test, done first; level is at least
// every S + 2 hi_S, so it loses no hit). Hits go to bin base_S + R - lo_S: the kernel adds
// 1 to hits[bin] and count_a * count_b * weight mod p to residues[k][bin] for each prime.
//
// Work: `blocks` lists descriptors (i0, i1, j0, j1, jsplit, weights): the left groups
// i0..i1-1 (at most MJ_BLOCK) against the right groups j0..j1-1 (at most MJ_MAX_COLUMNS); a
// pair weighs (weights & 0xff) when b < jsplit, (weights >> 8) otherwise (the symmetric
// join's triangle counts off-diagonal pairs twice). One thread block per descriptor, one
// thread per left group; the right groups come through shared memory MJ_CHUNK at a time.
//
// Exactness: S and R are integers formed exactly (no floating point). Residues are < p < 2^31,
// so count_a * count_b < 2^62 and its remainder < 2^31, doubled and reduced: < 2^31. A block
// adds at most MJ_BLOCK * MJ_MAX_COLUMNS = 2^28 of them per bin in shared memory (< 2^59),
// reduces the sum mod p and adds it (< 2^31) to the global bin: 2^32 blocks could not wrap
// uint64. The host reduces the global bins mod p.
//
// Every block runs phases separated by barriers (clear the bins; per chunk: load, pair;
// flush); each phase is a __host__ __device__ function of (thread, threads), so a host
// program runs the same code phase by phase.

typedef unsigned int mj_u32;
typedef unsigned long long mj_u64;

#define MJ_BLOCK 256                 // threads per block: left groups per descriptor
#define MJ_CHUNK 256                 // right groups per shared-memory chunk
#define MJ_MAX_COLUMNS (1 << 20)     // right groups per descriptor (bounds the shared sums)
#define MJ_BLOCK_WORDS 6             // i0, i1, j0, j1, jsplit, weights
#define MJ_WINDOW_WORDS 3            // per S: lo, hi, bin base

// One right group in shared memory: 16 bytes, read by a whole warp at once (broadcast).
struct MjColumn {
    mj_u64 x;
    mj_u32 hs;   // H | s << 16
    int r;
};

// The shared memory of a block: the chunk, then the bins (hits, then residues per prime).
struct MjShared {
    MjColumn* chunk;
    mj_u64* hits;
    mj_u64* sums;
};

__host__ __device__ inline int mj_shared_bytes(int bins, int primes) {
    return MJ_CHUNK * (int)sizeof(MjColumn) + bins * (1 + primes) * (int)sizeof(mj_u64);
}

__host__ __device__ inline MjShared mj_shared(void* base, int bins) {
    MjShared sh;
    sh.chunk = reinterpret_cast<MjColumn*>(base);
    sh.hits = reinterpret_cast<mj_u64*>(sh.chunk + MJ_CHUNK);
    sh.sums = sh.hits + bins;
    return sh;
}

__host__ __device__ inline int mj_popcount64(mj_u64 v) {
#ifdef __CUDA_ARCH__
    return __popcll(v);
#else
    return __builtin_popcountll(v);
#endif
}

__host__ __device__ inline void mj_add_shared(mj_u64* target, mj_u64 value) {
#ifdef __CUDA_ARCH__
    atomicAdd(target, value);
#else
    *target += value;
#endif
}

__host__ __device__ inline void mj_add_global(mj_u64* target, mj_u64 value) {
#ifdef __CUDA_ARCH__
    atomicAdd(target, value);
#else
    *target += value;
#endif
}

// The arguments every phase reads.
struct MjJob {
    const mj_u64* left_x;
    const mj_u32* left_hs;
    const int* left_r;
    const mj_u32* left_counts;   // [prime][group]
    long long left_n;
    const mj_u64* right_x;
    const mj_u32* right_hs;
    const int* right_r;
    const mj_u32* right_counts;
    long long right_n;
    const int* windows;          // [S][lo, hi, base] for S = 0..max_s
    int max_s, level, bins, valid_one, valid_zero, removed_c;
    const mj_u32* primes;
    int prime_count;
};

// Phase 0: clear the block's bins.
__host__ __device__ inline void mj_clear(const MjShared& sh, int bins, int primes, int t, int threads) {
    for (int k = t; k < bins * (1 + primes); k += threads) sh.hits[k] = 0;
}

// Phase 1 of a chunk: thread t loads right group j0 + t (if below j1).
__host__ __device__ inline void mj_load(const MjShared& sh, const MjJob& job, long long j0, long long j1,
                                        int t, int threads) {
    for (int c = t; c < MJ_CHUNK; c += threads) {
        long long j = j0 + c;
        if (j < j1) {
            MjColumn col;
            col.x = job.right_x[j];
            col.hs = job.right_hs[j];
            col.r = job.right_r[j];
            sh.chunk[c] = col;
        }
    }
}

// A hit: add one to its bin, and count_a * count_b * weight mod p for each prime.
__host__ __device__ inline void mj_hit(const MjShared& sh, const MjJob& job, long long a, long long b,
                                       int bin, int weight) {
    mj_add_shared(&sh.hits[bin], 1ull);
    for (int k = 0; k < job.prime_count; ++k) {
        const mj_u64 p = job.primes[k];
        mj_u64 v = (mj_u64)job.left_counts[k * job.left_n + a] * job.right_counts[k * job.right_n + b] % p;
        if (weight == 2) {
            v += v;
            if (v >= p) v -= p;
        }
        mj_add_shared(&sh.sums[k * job.bins + bin], v);
    }
}

// Phase 2 of a chunk: thread t pairs its left group i0 + t with the chunk's columns.
__host__ __device__ inline void mj_pair(const MjShared& sh, const MjJob& job, const int* block,
                                        long long j0, int t) {
    const long long a = (long long)block[0] + t;
    if (a >= block[1]) return;
    const long long j1 = block[3];
    const long long split = block[4];
    const int low_weight = block[5] & 0xff, high_weight = (block[5] >> 8) & 0xff;
    const mj_u64 xa = job.left_x[a];
    const mj_u32 hsa = job.left_hs[a];
    const int ha = (int)(hsa & 0xffffu);
    const int sa = (int)(hsa >> 16);
    const int ra = job.left_r[a] + job.removed_c;
    const int n = (int)(j1 - j0 < MJ_CHUNK ? j1 - j0 : MJ_CHUNK);
    for (int c = 0; c < n; ++c) {
        const MjColumn col = sh.chunk[c];
        const int hb = (int)(col.hs & 0xffffu);
        const int s = sa + (int)(col.hs >> 16) + mj_popcount64(xa & col.x);
        const int r = ra + col.r;
        const int bad = (~(ha | hb) & job.valid_one) | ((ha ^ hb) & job.valid_zero);
        if (s + 2 * r > job.level || s > job.max_s || bad) continue;
        const int* win = job.windows + MJ_WINDOW_WORDS * s;
        if (r < win[0] || r > win[1]) continue;
        const long long b = j0 + c;
        mj_hit(sh, job, a, b, win[2] + r - win[0], b < split ? low_weight : high_weight);
    }
}

// Phase 3: add the block's bins to the global ones (the sums reduced mod p first).
__host__ __device__ inline void mj_flush(const MjShared& sh, const MjJob& job, mj_u64* hits,
                                         mj_u64* residues, int t, int threads) {
    for (int k = t; k < job.bins; k += threads) {
        if (sh.hits[k]) mj_add_global(&hits[k], sh.hits[k]);
    }
    for (int k = t; k < job.bins * job.prime_count; k += threads) {
        const mj_u64 v = sh.sums[k] % (mj_u64)job.primes[k / job.bins];
        if (v) mj_add_global(&residues[k], v);
    }
}

__host__ __device__ inline long long mj_chunks(const int* block) {
    return ((long long)block[3] - block[2] + MJ_CHUNK - 1) / MJ_CHUNK;
}

extern "C" __global__ void __launch_bounds__(MJ_BLOCK) matchstick_join_pairs(
        const mj_u64* left_x, const mj_u32* left_hs, const int* left_r, const mj_u32* left_counts,
        long long left_n, const mj_u64* right_x, const mj_u32* right_hs, const int* right_r,
        const mj_u32* right_counts, long long right_n, const int* blocks, long long block_count,
        const int* windows, int max_s, int level, int bins, int valid_one, int valid_zero,
        int removed_c, const mj_u32* primes, int prime_count, mj_u64* hits, mj_u64* residues) {
    extern __shared__ __align__(16) unsigned char mj_memory[];
    const long long index = blockIdx.x;
    if (index >= block_count) return;
    const MjJob job = {left_x, left_hs, left_r, left_counts, left_n, right_x, right_hs, right_r,
                       right_counts, right_n, windows, max_s, level, bins, valid_one, valid_zero,
                       removed_c, primes, prime_count};
    const int* block = blocks + MJ_BLOCK_WORDS * index;
    const MjShared sh = mj_shared(mj_memory, bins);
    const int t = threadIdx.x, threads = blockDim.x;
    mj_clear(sh, bins, prime_count, t, threads);
    const long long chunks = mj_chunks(block);
    for (long long c = 0; c < chunks; ++c) {
        const long long j0 = block[2] + c * MJ_CHUNK;
        __syncthreads();  // the previous chunk is paired (and the bins cleared)
        mj_load(sh, job, j0, block[3], t, threads);
        __syncthreads();
        mj_pair(sh, job, block, j0, t);
    }
    __syncthreads();
    mj_flush(sh, job, hits, residues, t, threads);
}
