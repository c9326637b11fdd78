// nqueens.cu - count N-Queens solutions below host-enumerated board prefixes.
//
// Specification: docs/nqueens-method.md (bit encoding, the case C / case S pruning rules,
// the leaf symmetry check and the prefix format). This file follows it exactly; the host
// search in gpuqueens/problems/nqueens/cpu.py is its NumPy twin and the tests compare the two.
//
// How it works
// ------------
// The host places the queens of rows 0..mark-1 ("prefixes"). Each GPU thread takes every
// (threads)-th prefix and walks the subtree of rows mark..n-1 depth first, without
// recursion, in a single loop that loads the thread's next prefix when a subtree is done
// (so no thread waits at an inner loop's exit for the slowest subtree of its warp):
//
//   * The attack masks of the current row live in registers. `left` is a 64-bit word that is
//     never masked, and `right` is kept in the upper half of a 64-bit word, so a shift never
//     drops a bit and both can be undone exactly when the search backs up a row
//     (left = (left' >> 1) ^ bit, right = (right' << 1) ^ bit, down = down' ^ bit).
//   * A small per-thread stack holds, for each row mark..n-2, the candidates still to try
//     and the queen placed there. The stack is addressed as base[k * stride]: the kernel puts
//     it in dynamic shared memory with stride = blockDim.x (neighbouring threads use
//     neighbouring banks), a host program can use a local array with stride 1.
//   * The placed queens double as the board for the leaf check: the prefix rows come from
//     the `cols` array, rows mark..n-2 from the stack, the last row from a register.
//   * The free squares of each row are cut by the rules of the prefix's case (corner queen:
//     column 1 is barred above row B1; side queen: edge columns barred above row B1, the
//     edge rule at row B2, the corner squares barred in the last row). In case C every leaf
//     is the representative of a class of 8. In case S a leaf is compared with its 90, 180
//     and 270 degree rotations (only those whose top queen is also at column B1) and counted
//     only when it is the lexicographically smallest, with class size 2, 4 or 8.
//
// Every count is 64-bit. `nqueens_count` adds each block's (total, unique) to
// block_sums[2 * blockIdx.x + {0, 1}], so several launches can accumulate into the same
// buffer; `nqueens_count_each` writes one (total, unique) per prefix for tests.
//
// Compile-time option: -DNQ_COUNT_NODES also counts the queens placed by the search (one per
// node of the subtree below each prefix); nqueens_count then keeps 3 words per block
// (total, unique, nodes). This instrumented build is for benchmarks, not for production.
//
// Plain search: a prefix with corner = 1 and b1 = 0 is searched with no pruning rule at all
// (case C's rule bars column 1 only in rows < B1), and every leaf adds 8 to total and 1 to
// unique. The benchmark uses this to count the nodes of the unreduced backtracking search.
//
// Supports 4 <= n <= 32 and 2 <= mark <= n - 1 (the host answers smaller n itself).

typedef unsigned int nq_u32;
typedef unsigned long long nq_u64;

#define NQ_MAX_N 32

struct NqCounts {
    nq_u64 total;   // solutions, every member of every class
    nq_u64 unique;  // symmetry classes
#ifdef NQ_COUNT_NODES
    nq_u64 nodes;   // queens placed in rows mark..n-1
#endif
};

__host__ __device__ inline int nq_bit_index(nq_u32 bit) {
#ifdef __CUDA_ARCH__
    return __ffs(bit) - 1;
#else
    return __builtin_ctz(bit);
#endif
}

// The placed queens of one leaf, row by row: prefix rows from `cols`, the thread's own rows
// from the stack and the last row from a register.
struct NqBoard {
    int n;
    int mark;
    const unsigned char* prefix_cols;  // columns of rows 0..mark-1
    const nq_u32* placed;              // placed bit of row mark + k at placed[k * step]
    int step;
    nq_u32 last_bit;                   // queen of row n-1

    __host__ __device__ int col(int row) const {
        if (row < mark) return prefix_cols[row];
        if (row == n - 1) return nq_bit_index(last_bit);
        return nq_bit_index(placed[(row - mark) * step]);
    }

    // Row of the queen in column `c` (every column holds exactly one queen at a leaf).
    __host__ __device__ int row_of(int c) const {
        for (int row = 0; row < n - 1; ++row) {
            if (col(row) == c) return row;
        }
        return n - 1;
    }
};

enum NqOrder { NQ_BOARD_SMALLER, NQ_EQUAL, NQ_ROTATION_SMALLER };

// Compare the leaf with its rotation by `quarter_turns` (1, 2 or 3) lexicographically,
// row 0 first, where R90[i] = n-1-inv[i], R180[i] = n-1-pos[n-1-i], R270[i] = inv[n-1-i].
__host__ __device__ inline NqOrder nq_compare_rotation(const NqBoard& board, int quarter_turns) {
    const int n = board.n;
    for (int i = 0; i < n; ++i) {
        int rotated;
        if (quarter_turns == 1) {
            rotated = n - 1 - board.row_of(i);
        } else if (quarter_turns == 2) {
            rotated = n - 1 - board.col(n - 1 - i);
        } else {
            rotated = board.row_of(n - 1 - i);
        }
        const int own = board.col(i);
        if (own != rotated) return own < rotated ? NQ_BOARD_SMALLER : NQ_ROTATION_SMALLER;
    }
    return NQ_EQUAL;
}

// Case S leaf: 0 if a rotation is smaller (not the representative), else the class size.
// The pre-tests skip rotations whose row 0 is not B1: those are larger at row 0.
__host__ __device__ inline int nq_side_class_size(const NqBoard& board, int b1) {
    const int n = board.n;
    const int b2 = n - 1 - b1;
    bool equal_r90 = false;
    bool equal_r180 = false;
    if (board.col(b2) == 0) {
        const NqOrder order = nq_compare_rotation(board, 1);
        if (order == NQ_ROTATION_SMALLER) return 0;
        equal_r90 = (order == NQ_EQUAL);
    }
    if (board.col(n - 1) == b2) {
        const NqOrder order = nq_compare_rotation(board, 2);
        if (order == NQ_ROTATION_SMALLER) return 0;
        equal_r180 = (order == NQ_EQUAL);
    }
    if (board.col(b1) == n - 1) {
        if (nq_compare_rotation(board, 3) == NQ_ROTATION_SMALLER) return 0;
    }
    return equal_r90 ? 2 : (equal_r180 ? 4 : 8);
}

// The pruning rules of one case, applied to the free squares of a row.
struct NqRules {
    int n;
    int b1;
    int b2;
    bool corner;
    nq_u32 edges;      // the two edge columns (case S)
    nq_u32 last_deny;  // columns closer than B1 to a corner, barred in the last row (case S)

    __host__ __device__ NqRules(int n_, int b1_, bool corner_)
        : n(n_), b1(b1_), b2(n_ - 1 - b1_), corner(corner_) {
        edges = (nq_u32)((1ull << (n_ - 1)) | 1ull);
        const nq_u64 low = (1ull << b1_) - 1ull;
        last_deny = (nq_u32)(low | (low << (n_ - b1_)));
    }

    // Free squares of `row` after the rules; `down` is the column mask for that row.
    __host__ __device__ nq_u32 apply(int row, nq_u32 free, nq_u32 down) const {
        if (corner) {
            return row < b1 ? (free & ~2u) : free;
        }
        if (row < b1) return free & ~edges;
        if (row == b2) {
            const nq_u32 used = down & edges;
            if (used == 0) return 0;
            return used == edges ? free : (free & edges);
        }
        if (row == n - 1) return free & ~last_deny;
        return free;
    }
};

// The prefixes of one launch (device pointers in a kernel, host pointers in the harness).
struct NqPrefixes {
    int n;
    int mark;
    long long count;
    const nq_u32* left;
    const nq_u32* down;
    const nq_u32* right;
    const unsigned char* cols;    // count x mark, row-major
    const unsigned char* b1;
    const unsigned char* corner;
};

// Where per-prefix counts go; null pointers when only the sums are wanted.
struct NqEachOut {
    nq_u64* total;
    nq_u64* unique;
};

__host__ __device__ inline void nq_clear(NqCounts& c) {
    c.total = 0;
    c.unique = 0;
#ifdef NQ_COUNT_NODES
    c.nodes = 0;
#endif
}

__host__ __device__ inline void nq_add(NqCounts& into, const NqCounts& c) {
    into.total += c.total;
    into.unique += c.unique;
#ifdef NQ_COUNT_NODES
    into.nodes += c.nodes;
#endif
}

// Count the subtrees (rows mark..n-1) below prefixes first, first+step, first+2*step, ...
// and return their sums. Everything happens in ONE loop: when a thread finishes a subtree it
// loads its next prefix inside the same loop instead of leaving an inner loop, so the
// threads of a warp never wait for each other at a loop exit; their work stays in step.
// `stack` holds 2 * (n-1-mark) words at stack[k * stride]: entry 2d is the untried
// candidates of row mark+d, entry 2d+1 the queen placed there.
__host__ __device__ inline NqCounts nq_count_prefixes(
    const NqPrefixes& set, long long first, long long step,
    nq_u32* stack, int stride, NqEachOut each) {
    NqCounts sums;
    NqCounts mine;  // the current prefix's counts
    nq_clear(sums);
    nq_clear(mine);
    const int n = set.n;
    const int mark = set.mark;
    const nq_u32 mask = (nq_u32)((1ull << n) - 1ull);
    const int last_row = n - 1;
    const int words = 2 * stride;  // distance between two rows' entries
    nq_u32* untried = stack;
    nq_u32* placed = stack + stride;

    long long p = first;
    if (p >= set.count) return sums;
    // state of the search, (re)loaded for every prefix
    NqRules rules(n, set.b1[p], set.corner[p] != 0);
    NqBoard board = {n, mark, set.cols + p * mark, placed, words, 0u};
    nq_u64 left = set.left[p];                     // unmasked: bits above n-1 kept for undo
    nq_u32 down = set.down[p];
    nq_u64 right = ((nq_u64)set.right[p]) << 32;   // right mask in the upper half
    int row = mark;
    nq_u32 cand = rules.apply(row, mask & ~(set.left[p] | down | set.right[p]), down);

    for (;;) {
        if (cand != 0) {
            const nq_u32 bit = cand & (0u - cand);
            cand ^= bit;
#ifdef NQ_COUNT_NODES
            mine.nodes += 1;
#endif
            if (row == last_row) {
                if (rules.corner) {
                    mine.total += 8;
                    mine.unique += 1;
                } else {
                    board.last_bit = bit;
                    const int size = nq_side_class_size(board, rules.b1);
                    mine.total += (nq_u64)size;
                    mine.unique += (size != 0);
                }
                continue;
            }
            const nq_u64 next_left = (left | bit) << 1;
            const nq_u32 next_down = down | bit;
            const nq_u64 next_right = (right | ((nq_u64)bit << 32)) >> 1;
            const nq_u32 attacked = (nq_u32)next_left | next_down | (nq_u32)(next_right >> 32);
            const nq_u32 next_free = rules.apply(row + 1, mask & ~attacked, next_down);
            if (next_free == 0) continue;  // dead end: try the next candidate of this row
            const int depth = row - mark;
            untried[depth * words] = cand;
            placed[depth * words] = bit;
            left = next_left;
            down = next_down;
            right = next_right;
            cand = next_free;
            ++row;
        } else if (row > mark) {  // back up one row
            --row;
            const int depth = row - mark;
            const nq_u32 bit = placed[depth * words];
            cand = untried[depth * words];
            left = (left >> 1) ^ bit;
            down ^= bit;
            right = (right << 1) ^ ((nq_u64)bit << 32);
        } else {  // prefix p is finished: record it and load the next one
            if (each.total) {
                each.total[p] = mine.total;
                each.unique[p] = mine.unique;
            }
            nq_add(sums, mine);
            nq_clear(mine);
            p += step;
            if (p >= set.count) break;
            rules = NqRules(n, set.b1[p], set.corner[p] != 0);
            board.prefix_cols = set.cols + p * mark;
            left = set.left[p];
            down = set.down[p];
            right = ((nq_u64)set.right[p]) << 32;
            cand = rules.apply(row, mask & ~(set.left[p] | down | set.right[p]), down);
        }
    }
    return sums;
}

// Words of stack per thread for a given n and mark.
__host__ __device__ inline int nq_stack_words(int n, int mark) {
    return 2 * (n - 1 - mark);
}

__device__ inline nq_u64 nq_warp_sum(nq_u64 value) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    return value;
}

// Words of block_sums per block: (total, unique), plus nodes in an instrumented build.
#ifdef NQ_COUNT_NODES
#define NQ_SUM_WORDS 3
#else
#define NQ_SUM_WORDS 2
#endif

// Sum each word of `sums` over the block and add it to block_sums[NQ_SUM_WORDS*blockIdx.x + k].
// Plain adds suffice: each block owns its slots, and launches on one stream run in order.
// blockDim.x must be a multiple of 32 and at most 1024.
__device__ inline void nq_add_block_sums(nq_u64 (&sums)[NQ_SUM_WORDS], nq_u64* block_sums) {
    __shared__ nq_u64 warp_sums[NQ_SUM_WORDS][32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    for (int k = 0; k < NQ_SUM_WORDS; ++k) {
        const nq_u64 sum = nq_warp_sum(sums[k]);
        if (lane == 0) warp_sums[k][warp] = sum;
    }
    __syncthreads();
    if (warp != 0) return;
    const int warps = (int)(blockDim.x >> 5);
    for (int k = 0; k < NQ_SUM_WORDS; ++k) {
        const nq_u64 sum = nq_warp_sum(lane < warps ? warp_sums[k][lane] : 0ull);
        if (lane == 0) block_sums[NQ_SUM_WORDS * blockIdx.x + k] += sum;
    }
}


// Count prefixes [0, count) and add each block's sums to block_sums (NQ_SUM_WORDS words per
// block: total, unique[, nodes]). Dynamic shared memory: blockDim.x * nq_stack_words(n, mark)
// * 4 bytes. Thread t of the grid takes prefixes t, t + threads, t + 2 * threads, ...
extern "C" __global__ void nqueens_count(
    int n, int mark, long long count,
    const nq_u32* __restrict__ left, const nq_u32* __restrict__ down,
    const nq_u32* __restrict__ right, const unsigned char* __restrict__ cols,
    const unsigned char* __restrict__ b1, const unsigned char* __restrict__ corner,
    nq_u64* __restrict__ block_sums) {
    extern __shared__ nq_u32 nq_stacks[];
    const NqPrefixes set = {n, mark, count, left, down, right, cols, b1, corner};
    const NqEachOut none = {0, 0};
    const NqCounts c = nq_count_prefixes(
        set, (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x,
        nq_stacks + threadIdx.x, (int)blockDim.x, none);
#ifdef NQ_COUNT_NODES
    nq_u64 sums[NQ_SUM_WORDS] = {c.total, c.unique, c.nodes};
#else
    nq_u64 sums[NQ_SUM_WORDS] = {c.total, c.unique};
#endif
    nq_add_block_sums(sums, block_sums);
}

// Same search, one (total, unique) per prefix: for tests and debugging.
extern "C" __global__ void nqueens_count_each(
    int n, int mark, long long count,
    const nq_u32* __restrict__ left, const nq_u32* __restrict__ down,
    const nq_u32* __restrict__ right, const unsigned char* __restrict__ cols,
    const unsigned char* __restrict__ b1, const unsigned char* __restrict__ corner,
    nq_u64* __restrict__ totals, nq_u64* __restrict__ uniques) {
    extern __shared__ nq_u32 nq_stacks[];
    const NqPrefixes set = {n, mark, count, left, down, right, cols, b1, corner};
    const NqEachOut each = {totals, uniques};
    nq_count_prefixes(set, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                      (long long)gridDim.x * blockDim.x, nq_stacks + threadIdx.x,
                      (int)blockDim.x, each);
}
