// nqueens.cu - weigh the N-Queens subtrees below host-enumerated board prefixes.
//
// Specification: docs/nqueens-method.md (bit encoding, the case C / case S pruning rules,
// the leaf weights and the prefix record). The host search in gpuqueens/problems/nqueens/cpu.py
// is its NumPy twin and the tests compare the two prefix by prefix.
//
// How it works
// ------------
// The host places the queens of rows 0..mark-1 ("prefixes") and packs each into a 16-byte
// record (left, down, right, rule word). The grid is persistent: each thread takes the next
// work item from a global counter (nq_fetch) whenever its subtree is done.
//
// The search loop (NqSearch::step) tries exactly one candidate per iteration, so that the
// lanes of a warp stay in step: there is no "back up a row" iteration.
//   * The current row's state (cand, left, down, right) lives in registers, 32-bit words.
//     `left` is never masked (bits past column n-1 are off the board and only move further).
//   * Descending from a row that still has candidates saves that row's whole state (16 bytes,
//     one shared-memory store) on a per-thread stack; a row with no candidate left is not
//     saved. When the current row runs out of candidates without descending, the top saved
//     state is restored (one load), and that row always has a candidate left. The stack's
//     bottom slot is a sentinel whose row is the last row and whose cand is 0: restoring it
//     ends the work item. (Masks are not undone bit by bit: a 32-bit undo loses one bit per
//     row at each end and is wrong after two levels.)
//   * The row is popc(down): no row counter to save. The case rules for the child row are a
//     range test on it (case S: rows outside B1..B2 may not use an edge column; case C: rows
//     below B1 may not use column 1) plus, in case S at row B2, "take the unused edge column".
//     They prune exactly the branches the rules of the spec prune, give the same leaves, and
//     a few more nodes (rows after B2 find out one row later that an edge column is missing).
//   * The last row is descended into (it has at most one candidate); trying it is a leaf.
//     Leaves and the end of an item take a separate, rarely taken branch. A case-C leaf
//     weighs 24; a case-S leaf weighs 24/k, k = 1 + the edge queens at corner distance B1
//     other than the top one (the left queen at (B2, 0), the right one at (B1, n-1), the
//     bottom one at (n-1, B2)): the queen of each searched row is stored in a per-row array
//     (one store per iteration) so that a leaf can read rows B1 and B2.
//   * Shared memory is laid out per warp, [slot][lane] for the saved states and [row][lane]
//     for the queens, so that the 32 lanes of a warp hit 32 different banks and the offsets
//     between slots and rows are compile-time constants.
//
// Every count is 64-bit. `nqueens_count` adds each block's weight to block_sums[blockIdx.x]
// (several launches may accumulate into one buffer); `nqueens_count_each` adds one weight per
// prefix, for tests.
//
// Compile-time option: -DNQ_COUNT_NODES also counts the nodes of the search (the candidates
// tried in rows mark..n-2, plus the leaves); nqueens_count then keeps 2 words per block
// (weight, nodes). This instrumented build is for benchmarks only.
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

__host__ __device__ inline int nq_popc(nq_u32 x) {
#ifdef __CUDA_ARCH__
    return __popc(x);
#else
    return __builtin_popcount(x);
#endif
}

// Shared-memory layout of one thread's search: saved row states of 4 words (slot 0: the
// sentinel), then the queen of each row base..n-2, one word each (nq_thread_memory).
// Saved-state slots a search from row `base` needs: one per row base..n-2, plus the sentinel.
__host__ __device__ inline int nq_slots(int n, int base) {
    return n - base;
}

// Words of shared memory one thread needs for a search from row `base`.
__host__ __device__ inline int nq_thread_words(int n, int base) {
    return 4 * nq_slots(n, base) + (n - 1 - base);
}

// Addresses of this thread's memory. Device: 32-bit shared-window byte addresses, so that
// a slot or a row is one IMAD or an immediate offset away and every access is one
// LDS/STS; the block's dynamic shared memory is split into one region per warp in which
// the 32 lanes interleave (32 different banks). Host: plain pointers into the thread's own
// nq_thread_words(n, base) words.
#ifdef __CUDA_ARCH__
typedef nq_u32 nq_addr;
#define NQ_SLOT_BYTES 512   // 32 lanes x 16 bytes
#define NQ_ROW_BYTES 128    // 32 lanes x 4 bytes
#else
typedef nq_u32* nq_addr;
#define NQ_SLOT_BYTES 4     // in words on the host
#define NQ_ROW_BYTES 1
#endif

struct NqMemory {
    nq_addr slots;   // slot k at slots + k * NQ_SLOT_BYTES (4 words)
    nq_addr queens;  // the queen of row r (base <= r <= n-2) at queens + (r - base) * NQ_ROW_BYTES
};

__host__ __device__ inline NqMemory nq_thread_memory(nq_u32* memory, int n, int base, int thread) {
    const int slots = nq_slots(n, base);
    NqMemory m;
#ifdef __CUDA_ARCH__
    const nq_u32 region = (nq_u32)__cvta_generic_to_shared(memory) + (thread >> 5) * 32 * 4 * nq_thread_words(n, base);
    m.slots = region + (thread & 31) * 16;
    m.queens = region + slots * NQ_SLOT_BYTES + (thread & 31) * 4;
#else
    (void)thread;
    m.slots = memory;
    m.queens = memory + 4 * slots;
#endif
    return m;
}

// One word, and four words if `p` (predicated: no branch on the device).
__host__ __device__ inline void nq_store(nq_addr at, nq_u32 v) {
#ifdef __CUDA_ARCH__
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(at), "r"(v) : "memory");
#else
    *at = v;
#endif
}

__host__ __device__ inline nq_u32 nq_load(nq_addr at) {
#ifdef __CUDA_ARCH__
    nq_u32 v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(at) : "memory");
    return v;
#else
    return *at;
#endif
}

__host__ __device__ inline void nq_store4_if(bool p, nq_addr at, nq_u32 a, nq_u32 b, nq_u32 c, nq_u32 d) {
#ifdef __CUDA_ARCH__
    asm volatile("{ .reg .pred q; setp.ne.u32 q, %0, 0; @q st.shared.v4.u32 [%1], {%2, %3, %4, %5}; }"
                 ::"r"((nq_u32)p), "r"(at), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
#else
    if (p) {
        at[0] = a;
        at[1] = b;
        at[2] = c;
        at[3] = d;
    }
#endif
}

__host__ __device__ inline void nq_load4_if(bool p, nq_addr at, nq_u32& a, nq_u32& b, nq_u32& c, nq_u32& d) {
#ifdef __CUDA_ARCH__
    asm("{ .reg .pred q; setp.ne.u32 q, %4, 0; @q ld.shared.v4.u32 {%0, %1, %2, %3}, [%5]; }"
                 : "+r"(a), "+r"(b), "+r"(c), "+r"(d) : "r"((nq_u32)p), "r"(at) : "memory");
#else
    if (p) {
        a = at[0];
        b = at[1];
        c = at[2];
        d = at[3];
    }
#endif
}

// The next work item for this thread. Device: one global atomic counter shared by the grid.
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
    NQ_STEP_DONE = 0,       // no work item left: the thread's work is over
    NQ_STEP_FETCH = 1,      // finished an item (or started) and loaded the next one
    NQ_STEP_TRY = 2,        // tried a candidate of rows base..n-2
    NQ_STEP_PUSH = 4,       // ...which had a child row: descended
    NQ_STEP_SAVE = 8,       // ...and its row still had candidates: saved it
    NQ_STEP_RESTORE = 16,   // the row ran out of candidates: restored the top saved row
    NQ_STEP_LEAF = 32,      // tried the last row's queen: a leaf (then restored)
    NQ_STEP_END = 64,       // restored the sentinel: the work item is finished
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

// One thread's search: its memory, the current item's rules and leaf data, the current row.
// `down` always holds the columns past n-1 too (~mask): they are never free, and
// popc(down) = row + 32 - n, which is 31 exactly on the last row for every n. Rows below
// are written r' = r + 32 - n ("shifted rows").
struct NqSearch {
    // board and memory
    int n;
    int base;          // the first row this thread searches: mark + split
    nq_u32 mask;
    nq_addr slots;     // saved state k at slots + k * NQ_SLOT_BYTES; slot 0: the sentinel
    nq_addr queens;    // the queen of shifted row r' at queens + r' * NQ_ROW_BYTES
    nq_addr top;       // the next free slot
    // the current work item
    long long p;       // its prefix
    nq_u64 weight;     // its weight so far
#ifdef NQ_COUNT_NODES
    nq_u64 nodes;
#endif
    // rules for the child of shifted row r': if (unsigned)(r' - lo1) > span the child may not
    // use the columns of `outside`; at r' == b2m1 it must take an edge column of `edges`
    // that is still unused, if there is one (case S)
    int lo1;
    nq_u32 span;
    nq_u32 outside;
    int b2m1;
    nq_u32 edges;      // case S: both edge columns; case C: 0
    // leaf data, used only at leaves: bits 0-7 B1, 8-15 B2, 16-17 edge queens at distance
    // B1 known above `base`, bit 18 case C, bit 19 row B1 searched here, bit 20 row B2 too
    nq_u32 leafinfo;
    // the current row
    nq_u32 cand;       // its untried candidates
    nq_u32 left;       // unmasked
    nq_u32 down;       // with ~mask
    nq_u32 right;

    // Weight of the leaf whose last-row queen is `last` (0 if the last-row rule forbids it).
    __host__ __device__ nq_u64 leaf(nq_u32 last) const {
        if (leafinfo & (1u << 18)) return 24;  // case C
        const int b1 = (int)(leafinfo & 0xffu);
        const int b2 = (int)((leafinfo >> 8) & 0xffu);
        const nq_u32 low = (1u << b1) - 1u;
        if (last & (low | (low << (n - b1)))) return 0;  // the last row's rule (case S)
        int k = 1 + (int)((leafinfo >> 16) & 3u) + (last == (1u << b2));
        if (leafinfo & (1u << 19)) k += nq_load(queens + (b1 + 32 - n) * NQ_ROW_BYTES) == (1u << (n - 1));
        if (leafinfo & (1u << 20)) k += nq_load(queens + (b2 + 32 - n) * NQ_ROW_BYTES) == 1u;
        return nq_leaf_weight(k);
    }

    // Free squares of the child of shifted row r whose masks are l, d (with ~mask), rt.
    __host__ __device__ nq_u32 child_free(int r, nq_u32 l, nq_u32 d, nq_u32 rt) const {
        nq_u32 forbid = (nq_u32)(r - lo1) > span ? outside : 0u;
        const nq_u32 unused = edges & ~d;
        if (r == b2m1 && unused != 0) forbid = ~unused;  // row B2 takes the unused edge
        return ~(l | d | rt | forbid);
    }

    // Load work item `item` (rules, the split rows' queens, row base's state). Returns false
    // for an empty item (its chosen square does not exist, or row base has no free square).
    __host__ __device__ bool load(const NqPrefixes& set, long long item) {
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
        const int b1 = (int)(rule & 0xffu);
        const int b2 = n - 1 - b1;
        const int shift = 32 - n;
        p = index;
        weight = 0;
#ifdef NQ_COUNT_NODES
        nodes = 0;
#endif
        int known = (int)((rule >> NQ_RULE_KNOWN_SHIFT) & 3u);
        lo1 = b1 - 1 + shift;  // the child rows from B1 on are inside the range
        if (corner) {          // rows below B1 may not use column 1
            span = 64;
            outside = b1 == 0 ? 0u : 2u;  // b1 = 0: the plain search, no rule at all
            b2m1 = -1;
            edges = 0;
            leafinfo = 1u << 18;
        } else {               // rows B1..B2 may use an edge column, the others not
            span = (nq_u32)(b2 - b1);
            edges = (1u << (n - 1)) | 1u;
            outside = edges;
            b2m1 = b2 - 1 + shift;
            leafinfo = (nq_u32)b1 | ((nq_u32)b2 << 8) | (b1 >= base ? 1u << 19 : 0u) |
                       (b2 >= base ? 1u << 20 : 0u);
        }
        left = rec[0];
        down = rec[1] | ~mask;
        right = rec[2];
        top = slots + NQ_SLOT_BYTES;
        int row = set.mark;
        for (int k = 0; k < set.split; ++k, ++row) {  // the item's queens in rows mark..base-1
            nq_u32 free = child_free(row - 1 + shift, left, down, right);
            const int rank = k == 0 ? first : second;
            for (int j = 0; j < rank && free != 0; ++j) free &= free - 1u;
            if (free == 0) return false;
#ifdef NQ_COUNT_NODES
            // the node of row mark is counted by the one item of it whose second digit is 0
            nodes += (k == 0 && set.split == 2) ? second == 0 : 1;
#endif
            const nq_u32 bit = free & (0u - free);
            if (!corner && row == b1 && bit == (1u << (n - 1))) ++known;  // the right queen
            if (!corner && row == b2 && bit == 1u) ++known;               // the left queen
            left = (left | bit) << 1;
            down |= bit;
            right = (right | bit) >> 1;
        }
        if (!corner) leafinfo |= (nq_u32)known << 16;
        cand = child_free(base - 1 + shift, left, down, right);
        return cand != 0;
    }

    // One iteration: a leaf or the end of the item (rare), else try one candidate of the
    // current row, descend if it has a child row, and otherwise stay on the row or restore
    // the top saved row. Straight-line code on the device: the descent is selects, the
    // save and the restore are predicated, so the lanes of a warp stay together.
    // Returns the NqStep flags of what was done (on the device 1), 0 when the item is done.
    __host__ __device__ int step() {
        const int row = nq_popc(down);  // shifted: 31 on the last row
        if (row == 31) {  // rare: the last row's queen, or the sentinel
            if (cand == 0) return 0;
            const nq_u64 w = leaf(cand);
            weight += w;
#ifdef NQ_COUNT_NODES
            nodes += w != 0;
#endif
            top -= NQ_SLOT_BYTES;
            nq_load4_if(true, top, cand, left, down, right);
            return NQ_DID(NQ_STEP_LEAF);
        }
        const nq_u32 b = cand & (0u - cand);
        const nq_u32 rest = cand ^ b;
#ifdef NQ_COUNT_NODES
        nodes += 1;
#endif
        const nq_u32 next_left = (left | b) << 1;
        const nq_u32 next_right = (right | b) >> 1;
        const nq_u32 next_down = down | b;
        nq_u32 forbid = (nq_u32)(row - lo1) > span ? outside : 0u;
        const nq_u32 unused = edges & ~next_down;
        if (row == b2m1 && unused != 0) forbid = ~unused;  // row B2 takes the unused edge
        const nq_u32 free = ~(next_left | next_right | next_down | forbid);
        nq_store(queens + row * NQ_ROW_BYTES, b);
        const bool push = free != 0;
        const bool save = push && rest != 0;
        const bool back = !push && rest == 0;
        nq_store4_if(save, top, rest, left, down, right);
        if (save) top += NQ_SLOT_BYTES;
        if (back) top -= NQ_SLOT_BYTES;
        if (push) {
            left = next_left;
            down = next_down;
            right = next_right;
        }
        cand = push ? free : rest;
        nq_load4_if(back, top, cand, left, down, right);
        return NQ_DID(NQ_STEP_TRY | (push ? NQ_STEP_PUSH : 0) | (save ? NQ_STEP_SAVE : 0) |
                      (back ? NQ_STEP_RESTORE : 0));
    }
};

// Per-thread results: the weight of all items it searched (and nodes, when counted).
struct NqSums {
    nq_u64 weight;
    nq_u64 nodes;
};

// One thread's whole share of a launch: it takes work items from `counter` until none is
// left, searches each, adds its weight to `sums` and (if `each` is not null, zeroed before
// the launch) to each[p] of its prefix p. `slots` and `queens`: this thread's memory
// (nq_thread_memory).
struct NqWorker {
    NqPrefixes set;
    nq_u64* counter;
    nq_u64* each;
    NqSearch s;
    NqSums sums;

    __host__ __device__ void start(const NqPrefixes& set_, nq_u64* counter_, NqMemory memory, nq_u64* each_) {
        set = set_;
        counter = counter_;
        each = each_;
        sums.weight = 0;
        sums.nodes = 0;
        s.n = set.n;
        s.base = set.mark + set.split;
        s.mask = (nq_u32)((1ull << set.n) - 1ull);
        s.slots = memory.slots;
        s.queens = memory.queens - (s.base + 32 - set.n) * NQ_ROW_BYTES;  // indexed by shifted rows
        // the sentinel: cand 0 on a row with popc(down) = 31
        nq_store4_if(true, s.slots, 0u, 0u, 0x7fffffffu, 0u);
        s.cand = 0;
        s.down = 0x7fffffffu;
        s.top = s.slots + NQ_SLOT_BYTES;
        s.weight = 0;
        s.p = -1;
#ifdef NQ_COUNT_NODES
        s.nodes = 0;
#endif
    }

    // One iteration of the thread's loop: a search step, or, when the current item is
    // finished, its bookkeeping and the fetch of the next item. Returns the NqStep flags;
    // NQ_STEP_DONE (0) when no item is left.
    __host__ __device__ int advance() {
        const int did = s.step();
        if (did != 0) return did;
        return next_item();
    }

    __host__ __device__ int next_item() {
        if (s.p >= 0) {  // the item is finished: add it to its prefix
            if (each && s.weight != 0) nq_add_to(each + s.p, s.weight);
            sums.weight += s.weight;
#ifdef NQ_COUNT_NODES
            sums.nodes += s.nodes;
#endif
        }
        for (;;) {
            const long long item = nq_fetch(counter);
            if (item >= set.items) {
                s.p = -1;
                return NQ_STEP_DONE;
            }
            if (s.load(set, item)) return NQ_STEP_FETCH;
#ifdef NQ_COUNT_NODES
            sums.nodes += s.nodes;  // the split rows of an item that ends there
#endif
        }
    }
};

__host__ __device__ inline NqSums nq_run_thread(const NqPrefixes& set, nq_u64* counter, NqMemory memory,
                                                nq_u64* each) {
    NqWorker w;
    w.start(set, counter, memory, each);
    if (w.next_item() == NQ_STEP_DONE) return w.sums;
    for (;;) {
        if (w.s.step() != 0) continue;
        if (w.next_item() == NQ_STEP_DONE) return w.sums;
    }
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
// blockDim.x * nq_thread_words(n, mark + split) * 4 bytes; blockDim.x a multiple of 32. Any
// grid size works; a persistent grid (the blocks the device holds at once) is meant.
extern "C" __global__ void nqueens_count(
    int n, int mark, int split, long long count, const nq_u32* __restrict__ records,
    nq_u64* __restrict__ counter, nq_u64* __restrict__ block_sums) {
    extern __shared__ nq_u32 nq_memory[];
    const NqPrefixes set = nq_prefixes(n, mark, split, count, records);
    const NqMemory memory = nq_thread_memory(nq_memory, n, mark + split, (int)threadIdx.x);
    const NqSums c = nq_run_thread(set, counter, memory, 0);
#ifdef NQ_COUNT_NODES
    nq_u64 sums[NQ_SUM_WORDS] = {c.weight, c.nodes};
#else
    nq_u64 sums[NQ_SUM_WORDS] = {c.weight};
#endif
    nq_add_block_sums(sums, block_sums);
}

// Same search, one weight per prefix added to `weights` (zeroed before the launch): for tests.
extern "C" __global__ void nqueens_count_each(
    int n, int mark, int split, long long count, const nq_u32* __restrict__ records,
    nq_u64* __restrict__ counter, nq_u64* __restrict__ weights) {
    extern __shared__ nq_u32 nq_memory[];
    const NqPrefixes set = nq_prefixes(n, mark, split, count, records);
    const NqMemory memory = nq_thread_memory(nq_memory, n, mark + split, (int)threadIdx.x);
    nq_run_thread(set, counter, memory, weights);
}
