// nqueens.cu - weigh the N-Queens subtrees below host-enumerated board prefixes.
//
// Specification: docs/nqueens-method.md (bit encoding, the case C / case S pruning rules,
// the leaf weights and the prefix record). This file follows it exactly; the host search in
// gpuqueens/problems/nqueens/cpu.py is its NumPy twin and the tests compare the two.
//
// How it works
// ------------
// The host places the queens of rows 0..mark-1 ("prefixes") and packs each into a 16-byte
// record (left, down, right, rule word). The grid is persistent: each thread takes the next
// prefix from a global counter (nq_fetch) whenever its subtree is done, so no thread idles
// while work is left. A thread walks the subtree of rows mark..n-2 depth first, without
// recursion, in a loop whose body is one step (nq_step): back up a row if the current row
// has no candidate left, then try the next candidate. The last row is never descended
// into: its free squares are counted directly (it has at most one).
//
//   * The attack masks of the current row live in registers. `left` is a 64-bit word that is
//     never masked, and `right` is kept in the upper half of a 64-bit word, so a shift never
//     drops a bit and both can be undone exactly when the search backs up a row
//     (left = (left' >> 1) ^ bit, right = (right' << 1) ^ bit, down = down' ^ bit).
//   * A per-thread stack holds, for each row mark..n-3, the candidates still to try and the
//     queen placed there, at stack[k * stride]: the kernel puts it in dynamic shared memory
//     with stride = blockDim.x (neighbouring threads use neighbouring banks, no conflicts), a
//     host program can use a local array with stride 1.
//   * The case rules become per-prefix masks before the loop: `top_allow` for rows < B1,
//     the edge rule at row B2 (case S), `last_allow` for the last row.
//   * No leaf is compared with its images. A case-C leaf weighs 24; a case-S leaf weighs
//     24/k, k = 1 + the number of other edge queens at corner distance B1 (the left queen at
//     (B2, 0), the right one at (B1, n-1), the bottom one at (n-1, B2)). The weights of a
//     class's members that the search finds add up to 3 x the class size, so the weights of
//     all prefixes add up to 3 x total; the host gets the classes by Burnside's lemma.
//
// Every count is 64-bit. `nqueens_count` adds each block's weight to block_sums[blockIdx.x]
// (several launches may accumulate into one buffer); `nqueens_count_each` writes one weight
// per prefix, for tests.
//
// Compile-time option: -DNQ_COUNT_NODES also counts the queens placed by the search, one per
// node of the subtree below each prefix, the last row included; nqueens_count then keeps 2
// words per block (weight, nodes). This instrumented build is for benchmarks only.
//
// Plain search: a prefix with corner = 1 and b1 = 0 is searched with no pruning rule at all,
// every leaf weighing 24. The benchmark uses this to count the nodes of the unreduced search.
//
// Supports 4 <= n <= 32, 2 <= mark and mark + split <= n - 1 (the host answers smaller n).

typedef unsigned int nq_u32;
typedef unsigned long long nq_u64;

#define NQ_MAX_N 32
// Words of one prefix record: left, down, right, rule.
#define NQ_RECORD_WORDS 4
// Rule word: bits 0-7 B1, bit 8 corner (case C), bits 9-10 the edge queens at corner
// distance B1 among the prefix rows, other than the top one (case S).
#define NQ_RULE_CORNER (1u << 8)
#define NQ_RULE_KNOWN_SHIFT 9

// Leaf weights 24/k for k = 1..4, one byte each.
#define NQ_LEAF_WEIGHTS ((24u) | (12u << 8) | (8u << 16) | (6u << 24))

__host__ __device__ inline nq_u64 nq_leaf_weight(int k) {
    return (NQ_LEAF_WEIGHTS >> (8 * (k - 1))) & 0xffu;
}

// The next prefix index for this thread. Device: one global atomic counter shared by the grid.
// Host: a plain counter (one host thread at a time runs a search).
__host__ __device__ inline long long nq_fetch(nq_u64* counter) {
#ifdef __CUDA_ARCH__
    return (long long)atomicAdd(counter, 1ull);
#else
    return (long long)(*counter)++;
#endif
}

// each[p] += value: items of one prefix may be searched by different threads.
__host__ __device__ inline void nq_add_to(nq_u64* into, nq_u64 value) {
#ifdef __CUDA_ARCH__
    atomicAdd(into, value);
#else
    *into += value;
#endif
}

// What one step of the search did (for the warp model in bench/, and the loop's exit).
enum NqStep {
    NQ_STEP_DONE = 0,       // no prefix left: the thread's work is over
    NQ_STEP_FETCH = 1,      // loaded the next prefix
    NQ_STEP_ADVANCE = 2,    // tried a candidate (placed it, or found it dead, or counted a leaf)
    NQ_STEP_POP = 4,        // backed up a row (and may have tried a candidate too)
    NQ_STEP_PUSH = 8,       // the candidate had a child row: descended
    NQ_STEP_LEAF = 16,      // the candidate's last row was counted
};

// On the device only "did something" matters: the flags fold to 1 there, saving the
// instructions that would build them; host programs (tests, the warp model) see them all.
#ifdef __CUDA_ARCH__
#define NQ_DID(flags) 1
#else
#define NQ_DID(flags) (flags)
#endif

// The prefixes of one launch: NQ_RECORD_WORDS words each. A thread's work item is a prefix
// and the candidates its queens take in the next `split` rows (0, 1 or 2): item i is prefix
// i / n^split with the digits of i % n^split (base n, row mark first) as the rank of the
// chosen free square in each of those rows; an item whose square does not exist is empty.
// So the device cuts the work n or n^2 times finer than the host's prefixes, at no host cost.
struct NqPrefixes {
    int n;
    int mark;
    int split;
    long long count;  // prefixes
    long long items;  // count * n^split
    const nq_u32* records;
};

// One thread's search: the current prefix's rules, the current row's masks, the stack.
struct NqSearch {
    // board and launch
    int n;
    int mark;         // the prefixes' row
    int base;         // the first row this thread searches: mark + split
    nq_u32 mask;
    nq_u32* stack;    // untried candidates of row base + d at stack[d * words], its queen
    int stride;       // at stack[d * words + stride]
    int words;        // 2 * stride
    nq_u32* top;      // &stack[(row - base) * words]: the current row's slot
    // the current prefix
    long long p;
    nq_u64 weight;     // its weight so far
#ifdef NQ_COUNT_NODES
    nq_u64 nodes;
#endif
    int b1;            // rows < b1 use top_allow
    int b2;            // the edge rule's row (case S), or 0: never reached below a prefix
    nq_u32 top_allow;
    nq_u32 last_allow;
    nq_u32 bottom_bit; // the bottom queen at corner distance B1 (case S), or 0
    int known;         // 1 + edge queens at corner distance B1 among the rows above base
    int left_row;      // row of the left queen at distance B1 (B2) when searched here, else -1
    int right_row;     // row of the right queen at distance B1 (B1) when searched here, else -1
    // the current row
    int row;
    nq_u32 cand;
    nq_u32 down;
    nq_u64 left;       // unmasked
    nq_u64 right;      // in the upper half

    // Free squares of row `r` after the case rules, given that row's masks.
    __host__ __device__ nq_u32 allowed(int r, nq_u32 free, nq_u32 down_r) const {
        if (r < b1) free &= top_allow;
        if (r == b2) {  // case S: both edge columns used by the end of row B2
            const nq_u32 edges = (1u << (n - 1)) | 1u;
            const nq_u32 used = down_r & edges;
            free = used == 0 ? 0u : (used == edges ? free : free & edges);
        }
        return free;
    }

    // Weight of the leaf whose last-row queen is `last` (0: no leaf), with `bit` placed in
    // row n-2 (when that row is searched here).
    __host__ __device__ nq_u64 leaf(nq_u32 last, nq_u32 bit) const {
        if (last == 0) return 0;
        int k = known + (last == bottom_bit);
        if (right_row >= 0) {
            const nq_u32 at = right_row == n - 2 ? bit : stack[(right_row - base) * words + stride];
            k += at == (1u << (n - 1));
        }
        if (left_row >= 0) {
            const nq_u32 at = left_row == n - 2 ? bit : stack[(left_row - base) * words + stride];
            k += at == 1u;
        }
        return nq_leaf_weight(k);
    }

    // Place `bit` in the current row without recording it on the stack (the split rows).
    __host__ __device__ void place_fixed(nq_u32 bit) {
        if (row == b1 && bit == (1u << (n - 1)) && bottom_bit != 0) ++known;  // right queen, case S
        if (row == b2 && bit == 1u) ++known;                                  // left queen, case S
        left = (left | bit) << 1;
        down |= bit;
        right = (right | ((nq_u64)bit << 32)) >> 1;
        ++row;
    }

    // Load work item `item`: its prefix's rules, the split rows' queens and the masks of row
    // base. Leaves cand = 0 (nothing to search) for an empty item.
    __host__ __device__ void load(const NqPrefixes& set, long long item) {
        // the item's digits: the rank of its square in row mark (first) and mark + 1 (second)
        long long index = item;
        int second = 0;
        if (set.split == 2) {
            second = (int)(index % n);
            index /= n;
        }
        int first = 0;
        if (set.split >= 1) {
            first = (int)(index % n);
            index /= n;
        }
        const nq_u32* rec = set.records + index * NQ_RECORD_WORDS;
        const nq_u32 rule = rec[3];
        const bool corner = (rule & NQ_RULE_CORNER) != 0;
        p = index;
        weight = 0;
#ifdef NQ_COUNT_NODES
        nodes = 0;
#endif
        b1 = (int)(rule & 0xffu);
        const nq_u32 edges = (1u << (n - 1)) | 1u;
        const nq_u32 low = (1u << b1) - 1u;
        if (corner) {
            b2 = 0;
            top_allow = mask & ~2u;
            last_allow = mask;
            bottom_bit = 0;
            known = 1;
        } else {
            b2 = n - 1 - b1;
            top_allow = mask & ~edges;
            last_allow = mask & ~(low | (low << (n - b1)));
            bottom_bit = 1u << b2;
            known = 1 + (int)((rule >> NQ_RULE_KNOWN_SHIFT) & 3u);
        }
        left_row = (!corner && b2 >= base) ? b2 : -1;
        right_row = (!corner && b1 >= base) ? b1 : -1;
        row = mark;
        top = stack;
        left = rec[0];
        down = rec[1];
        right = ((nq_u64)rec[2]) << 32;
        cand = 0;
        for (int k = 0; k < set.split; ++k) {  // the item's queens in rows mark..base-1
            nq_u32 free = allowed(row, mask & ~((nq_u32)left | down | (nq_u32)(right >> 32)), down);
            const int rank = k == 0 ? first : second;
            for (int j = 0; j < rank && free != 0; ++j) free &= free - 1u;
            if (free == 0) {  // no such square: an empty item, finished at once
                row = base;
                return;
            }
#ifdef NQ_COUNT_NODES
            // the node of row mark is counted by the one item of it whose second digit is 0
            nodes += (k == 0 && set.split == 2) ? second == 0 : 1;
#endif
            place_fixed(free & (0u - free));
        }
        const nq_u32 free = mask & ~((nq_u32)left | down | (nq_u32)(right >> 32));
        if (base == n - 1) {  // the item reaches the last row: count it here
            weight = leaf(free & last_allow, 0u);
#ifdef NQ_COUNT_NODES
            nodes += weight != 0;
#endif
        } else {
            cand = allowed(base, free, down);
        }
    }

    // One step: back up while the row is exhausted (once), then try one candidate.
    // Returns the NqStep flags of what was done; the caller handles NQ_STEP_FETCH itself.
    __host__ __device__ int step() {
        int done = 0;
        if (cand == 0) {
            if (row == base) return 0;  // subtree finished: the caller fetches
            --row;
            top -= words;
            const nq_u32 bit = top[stride];
            cand = top[0];
            left = (left >> 1) ^ bit;
            down ^= bit;
            right = (right << 1) ^ ((nq_u64)bit << 32);
            done = NQ_DID(NQ_STEP_POP);
            if (cand == 0) return done;
        }
        const nq_u32 bit = cand & (0u - cand);
        cand ^= bit;
#ifdef NQ_COUNT_NODES
        nodes += 1;
#endif
        const nq_u64 next_left = (left | bit) << 1;
        const nq_u32 next_down = down | bit;
        const nq_u64 next_right = (right | ((nq_u64)bit << 32)) >> 1;
        const nq_u32 free = mask & ~((nq_u32)next_left | next_down | (nq_u32)(next_right >> 32));
        if (row + 1 == n - 1) {  // the child is the last row: count its queen, if any
            const nq_u64 w = leaf(free & last_allow, bit);
            weight += w;
#ifdef NQ_COUNT_NODES
            nodes += w != 0;
#endif
            return NQ_DID(done | NQ_STEP_ADVANCE | NQ_STEP_LEAF);
        }
        const nq_u32 next_cand = allowed(row + 1, free, next_down);
        if (next_cand == 0) return NQ_DID(done | NQ_STEP_ADVANCE);  // dead end
        top[0] = cand;
        top[stride] = bit;
        top += words;
        left = next_left;
        down = next_down;
        right = next_right;
        cand = next_cand;
        ++row;
        return NQ_DID(done | NQ_STEP_ADVANCE | NQ_STEP_PUSH);
    }
};

// Per-thread results: the weight of all prefixes it searched (and nodes, when counted).
struct NqSums {
    nq_u64 weight;
    nq_u64 nodes;
};

// One thread's whole share of a launch: it takes work items from `counter` until none is
// left, searches each, adds its weight to `sums` and (if `each` is not null, zeroed before
// the launch) to each[p] of its prefix p. The stack holds nq_stack_words(n, mark) words at
// stack[k * stride].
struct NqWorker {
    NqPrefixes set;
    nq_u64* counter;
    nq_u64* each;
    NqSearch s;
    NqSums sums;

    __host__ __device__ void start(const NqPrefixes& set_, nq_u64* counter_, nq_u32* stack, int stride,
                                   nq_u64* each_) {
        set = set_;
        counter = counter_;
        each = each_;
        sums.weight = 0;
        sums.nodes = 0;
        s.n = set.n;
        s.mark = set.mark;
        s.base = set.mark + set.split;
        s.mask = (nq_u32)((1ull << set.n) - 1ull);
        s.stride = stride;
        s.words = 2 * stride;
        s.stack = stack;
        s.top = stack;
        s.cand = 0;
        s.row = s.base;
        s.weight = 0;
#ifdef NQ_COUNT_NODES
        s.nodes = 0;
#endif
        s.p = -1;  // no prefix yet: the first advance() fetches one
    }

    // One iteration of the thread's loop: a search step, or, when the current subtree is
    // finished, its bookkeeping and the fetch of the next prefix. Returns the NqStep flags
    // of what was done; NQ_STEP_DONE (0) when no prefix is left.
    __host__ __device__ int advance() {
        const int did = s.step();
        if (did != 0) return did;
        if (s.p >= 0) {  // the subtree of the item is finished: add it to its prefix
            if (each && s.weight != 0) nq_add_to(each + s.p, s.weight);
            sums.weight += s.weight;
#ifdef NQ_COUNT_NODES
            sums.nodes += s.nodes;
#endif
        }
        const long long item = nq_fetch(counter);
        if (item >= set.items) {
            s.p = -1;
            return NQ_STEP_DONE;
        }
        s.load(set, item);
        return NQ_STEP_FETCH;
    }
};

__host__ __device__ inline NqSums nq_run_thread(
    const NqPrefixes& set, nq_u64* counter, nq_u32* stack, int stride, nq_u64* each) {
    NqWorker w;
    w.start(set, counter, stack, stride, each);
    while (w.advance() != NQ_STEP_DONE) {
    }
    return w.sums;
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

// Words of block_sums per block: the weight, plus nodes in an instrumented build.
#ifdef NQ_COUNT_NODES
#define NQ_SUM_WORDS 2
#else
#define NQ_SUM_WORDS 1
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

// The prefixes of a launch with their work items.
__host__ __device__ inline NqPrefixes nq_prefixes(int n, int mark, int split, long long count,
                                                  const nq_u32* records) {
    long long items = count;
    for (int k = 0; k < split; ++k) items *= n;
    const NqPrefixes set = {n, mark, split, count, items, records};
    return set;
}

// Weigh prefixes [0, count) (`records`: NQ_RECORD_WORDS words each), cut into work items by
// `split` (0..2, mark + split <= n - 1), and add each block's sums to block_sums
// (NQ_SUM_WORDS words per block). `counter` must be 0 at the launch. Dynamic shared memory:
// blockDim.x * nq_stack_words(n, mark) * 4 bytes. Any grid size works; a persistent grid (the
// blocks the device holds at once) is meant.
extern "C" __global__ void nqueens_count(
    int n, int mark, int split, long long count, const nq_u32* __restrict__ records,
    nq_u64* __restrict__ counter, nq_u64* __restrict__ block_sums) {
    extern __shared__ nq_u32 nq_stacks[];
    const NqPrefixes set = nq_prefixes(n, mark, split, count, records);
    const NqSums c = nq_run_thread(set, counter, nq_stacks + threadIdx.x, (int)blockDim.x, 0);
#ifdef NQ_COUNT_NODES
    nq_u64 sums[NQ_SUM_WORDS] = {c.weight, c.nodes};
#else
    nq_u64 sums[NQ_SUM_WORDS] = {c.weight};
#endif
    nq_add_block_sums(sums, block_sums);
}

// Same search, one weight per prefix (`weights` zeroed before the launch): for tests.
extern "C" __global__ void nqueens_count_each(
    int n, int mark, int split, long long count, const nq_u32* __restrict__ records,
    nq_u64* __restrict__ counter, nq_u64* __restrict__ weights) {
    extern __shared__ nq_u32 nq_stacks[];
    const NqPrefixes set = nq_prefixes(n, mark, split, count, records);
    nq_run_thread(set, counter, nq_stacks + threadIdx.x, (int)blockDim.x, weights);
}
