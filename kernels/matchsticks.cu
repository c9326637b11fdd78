// matchsticks.cu - the matchstick transfer matrix evaluated at many points x modulo primes.
//
// Specification: docs/matchsticks.md (problem 1, "evaluation points"). The NumPy twin of
// every function here is gpuqueens/problems/matchsticks/evaluation.py; the tests compare
// the two on random states, through an nvcc host build of this file.
//
// What is computed
// ----------------
// The count polynomial P(x) = sum_R X_R x^R of an h x w grid (X_R: valid configurations
// with R sticks removed) is swept column by column, top to bottom, as in transfer.py, but
// at a fixed x modulo a prime p instead of with the whole R axis: the state is one residue
// per frontier state. A *lane* is one pair (p, x); the host recovers the coefficients from
// E + 1 lanes per prime by interpolation and the counts by the CRT.
//
// State index (h + 2 bits): bit 0 = `up` (the stick from the point above), bit k + 1 =
// frontier stick of row k. The step at row i reads the four states with (bit i+1, bit 0) =
// (left, up) = (l, u) and writes them as (right, down) = (r, d); a configuration survives
// when l + u + d + r != 1, and every absent new stick multiplies by x.
//
// Memory layout: states[group][state][MS_LANES]: the MS_LANES lanes of a group lie side by
// side for each state, so every access below is coalesced whatever bits a pass works on.
//
// Residues are lazy: every stored value is < 2p with p < 2^29, so sums of up to four of
// them stay below 8p < 2^32. Multiplication by the lane's constant x or x^2 uses Shoup's
// method (a precomputed floor(w * 2^32 / p)): for any a < 2^32 it returns a value < 2p
// congruent to a * w, with one high multiply and two low ones.
//
// Kernels
// -------
// matchsticks_pass: `steps` consecutive point steps (rows first_row, first_row + 1, ...,
//   wrapping to row 0 of the next column after row h) in one read and one write of the
//   state. A step only mixes bit 0 and its row's bit, so a block loads a tile of
//   2^(steps + 1) states that differ in exactly those bits (bit 0 and the pass's row bits),
//   for MS_LANES lanes, into shared memory, and runs all the steps there. Threads take
//   MS_GROUP_STEPS steps at a time in registers (16 values each) between shared-memory
//   exchanges. `in` and `out` may be the same buffer (tiles are disjoint). At most 11 steps
//   (a tile of 2^12 states, 128 KiB; 12 steps would need 256 KiB of shared memory).
// matchsticks_join: the mirror join of a half sweep: per lane,
//   sum over frontiers H of a[H] * b[H] * x^-(h + 1 - popcount(H)) mod p, over the states
//   with up = 0; one partial sum per thread, added up by the host.
//
// Every block works through phases separated by barriers (load, step groups, store); each
// phase is a __host__ __device__ function of (thread, threads), so a host program runs the
// same code phase by phase (tests/native/matchsticks_launch_emulator.cu).

typedef unsigned int ms_u32;
typedef unsigned long long ms_u64;

#define MS_LANES 8            // lanes stored side by side (32 bytes per state)
#define MS_GROUP_STEPS 3      // steps a thread runs in registers between exchanges
#define MS_LANE_WORDS 7       // per lane: p, x, shoup(x), x^2 mod p, shoup(x^2), 2p, 4p

struct MsLane {
    ms_u32 p;
    ms_u32 x, xs;    // x and floor(x * 2^32 / p)
    ms_u32 x2, x2s;  // x^2 mod p and floor(x^2 * 2^32 / p)
    ms_u32 p2, p4;   // 2p and 4p, read from the table: the compiler then fuses each
                     // conditional subtraction into one VIADDMNMX instead of IMAD + VIMNMX
};

__host__ __device__ inline MsLane ms_lane(const ms_u32* lane_words, long long lane) {
    const ms_u32* w = lane_words + lane * MS_LANE_WORDS;
    MsLane c;
    c.p = w[0];
    c.x = w[1];
    c.xs = w[2];
    c.x2 = w[3];
    c.x2s = w[4];
    c.p2 = w[5];
    c.p4 = w[6];
    return c;
}

__host__ __device__ inline ms_u32 ms_mulhi(ms_u32 a, ms_u32 b) {
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (ms_u32)(((ms_u64)a * b) >> 32);
#endif
}

__host__ __device__ inline int ms_popcount(ms_u32 v) {
#ifdef __CUDA_ARCH__
    return __popc(v);
#else
    return __builtin_popcount(v);
#endif
}

// a * w mod p, as a value < 2p, for any a < 2^32 (Shoup; ws = floor(w * 2^32 / p), p < 2^31).
__host__ __device__ inline ms_u32 ms_mul(ms_u32 a, ms_u32 w, ms_u32 ws, ms_u32 p) {
    const ms_u32 q = ms_mulhi(a, ws);
    return a * w - q * p;  // exact below 2p, so the wrap modulo 2^32 is harmless
}

// min(s, s - m) with unsigned wrap: subtracts m when s >= m (needs s < m + 2^32 - m).
__host__ __device__ inline ms_u32 ms_sub_if(ms_u32 s, ms_u32 m) {
    const ms_u32 t = s - m;
    return t < s ? t : s;
}

// A value < 8p brought below 2p.
__host__ __device__ inline ms_u32 ms_reduce8(ms_u32 s, const MsLane& c) {
    return ms_sub_if(ms_sub_if(s, c.p4), c.p2);
}

// One point step on the four states of one lane: (v00, v01, v10, v11) indexed by
// (left, up) before and by (right, down) after. `down`/`right`: the point has a stick
// below / to its right (false on the last row / column: that stick is absent, no factor x).
__host__ __device__ inline void ms_step(ms_u32& v00, ms_u32& v01, ms_u32& v10, ms_u32& v11,
                                        bool down, bool right, const MsLane& c) {
    const ms_u32 s0 = v00 + v11;        // no new stick kept: l + u must be 0 or 2  (< 4p)
    const ms_u32 s1 = v01 + v10 + v11;  // one kept: l + u >= 1                      (< 6p)
    const ms_u32 s2 = s1 + v00;         // both kept: anything                       (< 8p)
    if (down && right) {
        const ms_u32 one = ms_mul(s1, c.x, c.xs, c.p);
        v00 = ms_mul(s0, c.x2, c.x2s, c.p);
        v01 = one;
        v10 = one;
        v11 = ms_reduce8(s2, c);
    } else if (down) {  // last column: r = 0
        v00 = ms_mul(s0, c.x, c.xs, c.p);
        v01 = ms_reduce8(s1, c);
        v10 = 0;
        v11 = 0;
    } else if (right) {  // last row: d = 0
        v00 = ms_mul(s0, c.x, c.xs, c.p);
        v10 = ms_reduce8(s1, c);
        v01 = 0;
        v11 = 0;
    } else {
        v00 = ms_reduce8(s0, c);
        v01 = 0;
        v10 = 0;
        v11 = 0;
    }
}

// One pass: which state bits its tile spans and where its blocks' tiles start.
struct MsPass {
    int h;           // rows 0..h, states of h + 2 bits
    int first_row;   // row of step 0
    int steps;       // t: the tile spans bit 0 and the t row bits
    int right_mask;  // bit k: step k's point has a stick to its right
    int straight;    // a: steps before the wrap to row 0 (rows first_row..first_row+a-1)
    int low_outer;   // outer bits placed below first_row + 1 (state bits wrapped + 1 ..)

    __host__ __device__ MsPass(int h_, int first_row_, int steps_, int right_mask_)
        : h(h_), first_row(first_row_), steps(steps_), right_mask(right_mask_) {
        straight = steps < h + 1 - first_row ? steps : h + 1 - first_row;
        low_outer = first_row - (steps - straight);
    }

    // Tiles per lane group: 2^tile_shift (the block index is group << tile_shift | tile).
    __host__ __device__ int tile_shift() const { return h + 1 - steps; }

    __host__ __device__ long long tiles() const { return 1LL << tile_shift(); }

    __host__ __device__ long long state_count() const { return 1LL << (h + 2); }

    // State offsets below are 32-bit: h + 2 <= 32 (far beyond any grid that fits in memory).
    // Word offsets (a state offset times MS_LANES) need 64 bits from h = 28 on.

    // Row and flags of step k.
    __host__ __device__ bool down(int k) const {
        const int row = k < straight ? first_row + k : k - straight;
        return row != h;
    }

    __host__ __device__ bool right(int k) const { return (right_mask >> k) & 1; }

    // State of the tile's first element: the outer index spread over the bits the tile
    // does not span (state bits wrapped+1..first_row, then first_row+straight+1..h+1).
    __host__ __device__ ms_u32 base(ms_u32 outer) const {
        const int wrapped = steps - straight;
        const ms_u32 low = outer & ((1u << low_outer) - 1);
        const ms_u32 high = outer >> low_outer;
        return (low << (wrapped + 1)) | (high << (first_row + straight + 1));
    }

    // Offset of tile element `local` (bit 0: up; bit k + 1: step k's row bit).
    __host__ __device__ ms_u32 offset(ms_u32 local) const {
        const ms_u32 mid = (local >> 1) & ((1u << straight) - 1);
        const ms_u32 wrap = local >> (straight + 1);
        return (local & 1) | (mid << (first_row + 1)) | (wrap << 1);
    }
};

// Shared-memory word of tile element `local`, lane `lane`: local * MS_LANES + lane with the
// two low bits of `local` XORed with bits 2-3 and (swapped) bits 4-5, so that the four
// states a warp touches at once fall in four different groups of 8 banks in every phase
// (docs/matchsticks.md). The map is linear over GF(2): word(a | b) = word(a) ^ word(b) for
// disjoint a and b (lane 0), which the step groups use to address their 16 values with one
// XOR each.
__host__ __device__ inline ms_u32 ms_word(ms_u32 local) {
    const ms_u32 b4 = (local >> 4) & 3;
    const ms_u32 swizzle = ((local >> 2) ^ (b4 >> 1) ^ ((b4 & 1) << 1)) & 3;
    return (local ^ swizzle) * MS_LANES;
}

// Phases 1 and 3: copy the block's tile between the state buffer and shared memory, four
// lanes (16 bytes) at a time. Blocks have 128 or 256 threads (MS_MIN_BLOCK..MS_MAX_BLOCK):
// a round moves `span` = threads / 2 consecutive tile elements, so thread t always moves
// element t / 2 of the round plus a multiple of span. Both address maps are linear in the
// element's bits, so each round only adds the offset of its high bits, pass.offset(local).
// (Not a masked increment over the high state bits: for a pass that wraps to row 0, the
// wrapped rows' state bits lie below the others, so the state order is not the tile order.)
#define MS_MIN_BLOCK 128
#define MS_MAX_BLOCK 256

template <bool Load>
__host__ __device__ inline void ms_move_tile(ms_u32* tile, ms_u32* states, const MsPass& pass,
                                             long long group, long long outer, int thread,
                                             int threads) {
    const ms_u32 span = threads / 2;
    const ms_u32 size = 2u << pass.steps;  // tile elements (states)
    const ms_u32 first = thread / 2;
    if (first >= size) return;
    const int lane = (thread % 2) * 4;
    ms_u32* global = states + (group * pass.state_count() + pass.base((ms_u32)outer)) * MS_LANES +
                     ((ms_u64)pass.offset(first) * MS_LANES + lane);
    ms_u32* shared = tile + ms_word(first) + lane;  // + local * MS_LANES: span >= 64 (no swizzle)
#pragma unroll 4
    for (ms_u32 local = 0; local < size; local += span) {  // unrolled: 4 loads in flight
        const ms_u32 high = pass.offset(local);  // local's bits are disjoint from first's
        uint4* g = (uint4*)(global + (ms_u64)high * MS_LANES);
        uint4* t = (uint4*)(shared + local * MS_LANES);
        if (Load) {
            *t = *g;
        } else {
            *g = *t;
        }
    }
}

// Tile element of register j in a step group starting at step k0: bit 0 of j is `up`,
// bit s + 1 of j is the row bit of step k0 + s (tile bit k0 + s + 1).
__host__ __device__ inline ms_u32 ms_group_local(int j, int k0) {
    return (ms_u32)(j & 1) | ((ms_u32)(j >> 1) << (k0 + 1));
}

// The interior step (a stick below and one to the right), written out without branches:
// most steps of a sweep are interior, and the step groups use this form when all their
// steps are.
__host__ __device__ inline void ms_interior_step(ms_u32& v00, ms_u32& v01, ms_u32& v10,
                                                 ms_u32& v11, const MsLane& c) {
    const ms_u32 s0 = v00 + v11;
    const ms_u32 s1 = v01 + v10 + v11;
    const ms_u32 s2 = s1 + v00;
    const ms_u32 one = ms_mul(s1, c.x, c.xs, c.p);
    v00 = ms_mul(s0, c.x2, c.x2s, c.p);
    v01 = one;
    v10 = one;
    v11 = ms_reduce8(s2, c);
}

// Phase 2: steps k0 .. k0 + K - 1 of the pass. A task is one lane and one setting of the
// tile bits other than bit 0 and the K step bits; it holds its 2^(K+1) states in registers.
// Interior: every one of the K steps is interior (no flag tests in the loop).
template <int K, bool Interior>
__host__ __device__ inline void ms_step_group(ms_u32* tile, const MsLane& c, const MsPass& pass,
                                              int k0, int thread, int threads) {
    ms_u32 offsets[2 << K];  // byte offsets: one XOR gives each value's shared address
#pragma unroll
    for (int j = 0; j < (2 << K); ++j) offsets[j] = ms_word(ms_group_local(j, k0)) * 4;
    bool down[K], right[K];
#pragma unroll
    for (int s = 0; s < K; ++s) {
        down[s] = pass.down(k0 + s);
        right[s] = pass.right(k0 + s);
    }
    const int tasks = (1 << (pass.steps - K)) * MS_LANES;
    for (int task = thread; task < tasks; task += threads) {
        const ms_u32 u = task / MS_LANES;
        const ms_u32 rest = ((u & ((1u << k0) - 1)) << 1) | ((u >> k0) << (k0 + K + 1));
        const ms_u32 byte = (ms_word(rest) + task % MS_LANES) * 4;
        char* base = (char*)tile;
        ms_u32 v[2 << K];
#pragma unroll
        for (int j = 0; j < (2 << K); ++j) v[j] = *(ms_u32*)(base + (byte ^ offsets[j]));
#pragma unroll
        for (int s = 0; s < K; ++s) {
#pragma unroll
            for (int j = 0; j < (2 << K); ++j) {
                if ((j & 1) == 0 && (j & (2 << s)) == 0) {
                    const int l = 2 << s;
                    if (Interior) {
                        ms_interior_step(v[j], v[j | 1], v[j | l], v[j | 1 | l], c);
                    } else {
                        ms_step(v[j], v[j | 1], v[j | l], v[j | 1 | l], down[s], right[s], c);
                    }
                }
            }
        }
#pragma unroll
        for (int j = 0; j < (2 << K); ++j) *(ms_u32*)(base + (byte ^ offsets[j])) = v[j];
    }
}

template <int K>
__host__ __device__ inline void ms_step_group(ms_u32* tile, const MsLane& c, const MsPass& pass,
                                              int k0, int thread, int threads) {
    bool interior = true;
    for (int s = 0; s < K; ++s) interior = interior && pass.down(k0 + s) && pass.right(k0 + s);
    if (interior) {
        ms_step_group<K, true>(tile, c, pass, k0, thread, threads);
    } else {
        ms_step_group<K, false>(tile, c, pass, k0, thread, threads);
    }
}

// The lane of a thread: blocks have a multiple of MS_LANES threads, and the step groups and
// the join hand thread t the tasks t, t + threads, ..., whose lane is t % MS_LANES.
__host__ __device__ inline MsLane ms_thread_lane(const ms_u32* lane_words, long long group,
                                                 int thread) {
    return ms_lane(lane_words, group * MS_LANES + thread % MS_LANES);
}

// Phases of a pass block, with a barrier between consecutive ones: load the tile, one per
// group of MS_GROUP_STEPS steps, store the tile.
__host__ __device__ inline int ms_pass_phases(int steps) {
    return 2 + (steps + MS_GROUP_STEPS - 1) / MS_GROUP_STEPS;
}

// Shared memory of a pass block: the tile, 2^(steps + 1) states of MS_LANES lanes.
__host__ __device__ inline int ms_tile_bytes(int steps) {
    return (2 << steps) * MS_LANES * (int)sizeof(ms_u32);
}

// One thread's part of one phase of pass block `block` (blocks: group-major, then tiles).
__host__ __device__ inline void ms_pass_phase(int phase, ms_u32* tile, const ms_u32* in,
                                              ms_u32* out, const ms_u32* lane_words,
                                              const MsPass& pass, long long block, int thread,
                                              int threads) {
    const long long group = block >> pass.tile_shift();
    const long long outer = block & (pass.tiles() - 1);
    if (phase == 0) {
        ms_move_tile<true>(tile, const_cast<ms_u32*>(in), pass, group, outer, thread, threads);
    } else if (phase == ms_pass_phases(pass.steps) - 1) {
        ms_move_tile<false>(tile, out, pass, group, outer, thread, threads);
    } else {
        const int k0 = (phase - 1) * MS_GROUP_STEPS;
        const MsLane c = ms_thread_lane(lane_words, group, thread);
        const int left = pass.steps - k0;
        if (left >= 3) {
            ms_step_group<3>(tile, c, pass, k0, thread, threads);
        } else if (left == 2) {
            ms_step_group<2>(tile, c, pass, k0, thread, threads);
        } else {
            ms_step_group<1>(tile, c, pass, k0, thread, threads);
        }
    }
}

// The join (a single phase): thread `thread`'s partial sum for its lane over its share of
// the frontiers of chunk `chunk`, reduced mod p.
__host__ __device__ inline ms_u32 ms_join_partial(const ms_u32* a, const ms_u32* b,
                                                  const ms_u32* lane_words,
                                                  const ms_u32* weights, int h, long long group,
                                                  long long chunk, long long chunks, int thread,
                                                  int threads) {
    const int lane = thread % MS_LANES;
    const MsLane c = ms_thread_lane(lane_words, group, thread);
    const long long frontiers = 1LL << (h + 1);
    const long long per_chunk = (frontiers + chunks - 1) / chunks;
    const long long first = chunk * per_chunk;
    const long long last = first + per_chunk < frontiers ? first + per_chunk : frontiers;
    const long long state_base = group * (1LL << (h + 2));
    const ms_u32* wl = weights + (group * MS_LANES + lane) * 2 * (h + 2);
    ms_u64 lo = 0, hi = 0;  // 128-bit sum of products < 4p^2 < 2^60
    for (long long f = first + thread / MS_LANES; f < last; f += threads / MS_LANES) {
        const long long index = (state_base + (f << 1)) * MS_LANES + lane;
        const int k = ms_popcount((ms_u32)f);
        const ms_u32 z = ms_mul(b[index], wl[2 * k], wl[2 * k + 1], c.p);
        const ms_u64 prod = (ms_u64)a[index] * z;
        lo += prod;
        hi += lo < prod;
    }
    const ms_u64 p = c.p;
    const ms_u64 two64 = ((~0ull) % p + 1) % p;  // 2^64 mod p
    return (ms_u32)(((hi % p) * two64 + lo % p) % p);
}

extern "C" __global__ void __launch_bounds__(MS_MAX_BLOCK, 3) matchsticks_pass(
    const ms_u32* in, ms_u32* out, const ms_u32* lane_words, long long groups, int h,
    int first_row, int steps, int right_mask) {
    extern __shared__ uint4 tile_quads[];
    const MsPass pass(h, first_row, steps, right_mask);
    if ((blockIdx.x >> pass.tile_shift()) >= groups) return;
    const int phases = ms_pass_phases(steps);
    for (int phase = 0; phase < phases; ++phase) {
        if (phase > 0) __syncthreads();
        ms_pass_phase(phase, (ms_u32*)tile_quads, in, out, lane_words, pass, blockIdx.x,
                      threadIdx.x, blockDim.x);
    }
}

extern "C" __global__ void __launch_bounds__(MS_MAX_BLOCK) matchsticks_join(
    const ms_u32* a, const ms_u32* b, const ms_u32* lane_words, const ms_u32* weights,
    long long groups, long long chunks, int h, ms_u32* partial) {
    const long long group = blockIdx.x / chunks;
    if (group >= groups) return;
    partial[(long long)blockIdx.x * blockDim.x + threadIdx.x] =
        ms_join_partial(a, b, lane_words, weights, h, group, blockIdx.x % chunks, chunks,
                        threadIdx.x, blockDim.x);
}
