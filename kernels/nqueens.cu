// nqueens.cu - weigh the N-Queens subtrees below host-enumerated board prefixes.
//
// Specification: docs/nqueens-method.md (bit encoding, the case C / case S pruning rules,
// the leaf weights and the prefix record). The host search in gpuqueens/problems/nqueens/cpu.py
// is its NumPy twin and the tests compare the two prefix by prefix.
//
// How it works
// ------------
// The host places the queens of rows 0..mark-1 ("prefixes") and packs each into a 16-byte
// record (left, down, right, rule word). For a count, nqueens_expand (at the end of this
// file) first continues them one or two rows on the device, as the host would, so that the
// work items are many and none is empty. The grid is persistent: each thread takes the next
// work item from a global counter (nq_fetch) whenever its subtree is done.
//
// The search loop (NqWorker::advance, since engine v4) tries exactly one candidate per iteration,
// so that the lanes of a warp stay in step: there is no "back up a row" iteration.
//   * The current row's state (cand, left, down, right) lives in registers, 32-bit words.
//     `left` is never masked (bits past column n-1 are off the board and only move further).
//   * Trying a candidate saves the row's whole state (16 bytes, one shared-memory store) on a
//     per-thread stack if the row has candidates left, then computes the child's state in
//     the same registers. If the child has no free square, the top saved state is restored
//     (one load): the row just saved, or an older one; a restored row always has a candidate
//     left. So the iteration has no select: the restore overwrites the child. The stack's
//     bottom slot is a sentinel whose "row" is past the last (all 32 bits of `down` set) and
//     whose cand is 0: reaching it ends the work item. (Masks are not undone bit by bit: a 32-bit undo loses one bit per
//     row at each end and is wrong after two levels.)
//   * The row is popc(down): no row counter to save.
//   * Rules where they apply. The spec's rules (docs/nqueens-method.md) touch rows above B1
//     (case C: no column 1; case S: no edge column), row B2 (case S) and the last row. Rows
//     whose child is above B1 take a rare path with the static rule, and in case S so do
//     rows B1-1 and B1 (row B1 picks the leaf weights by its queen); the main path applies
//     only case S's rule at row B2, in the form "if an edge column is unused, take an edge
//     column" (one predicated AND); with both edge columns unused there, row B2 takes one
//     and the leaves below are rejected (the spec kills the branch at B2: 2% more nodes).
//   * The last row is descended into (it has at most one candidate); its queen is weighed on
//     the rare path, which tests for it first (a quarter of a warp's steps have a leaf):
//     24/k, k = 1 + the edge queens at corner distance B1 other than the top one (the left
//     queen at (B2, 0), the right one at (B1, n-1), the bottom one at (n-1, B2)); case C
//     with neutral data, so k = 1 and the weight 24. Row B1 (rare path) picks the weights
//     from its k on (two selects); for row B2 the leaf reads `down` as it was before row B2,
//     a register (the "leaf word") set by row B2-1 with the B2 rule (one predicated move),
//     and picks the weight with one byte permute (14 instructions a leaf).
//   * All paths (main, rule rows, leaf, end of item and fetch) meet before the restore, so
//     the lanes of a warp reconverge once per iteration; a lane that fetches its next item
//     does not wait for the other lanes' items.
//   * Shared memory is laid out per warp, [slot][lane] for the saved states, so that the 32
//     lanes of a warp hit 32 different banks and the offsets between slots are compile-time
//     constants. 16 bytes per row and 16 more (the sentinel) per thread: at n = 18 (rows 7
//     on) 9 blocks of 128 threads fit on an H100 SM, at n = 20 8.
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

// Byte `k` (0..3) of `table`: one PRMT on the device (its selector's other nibbles pick the
// zero word's bytes, so the rest of the result is 0).
__host__ __device__ inline nq_u32 nq_byte(nq_u32 table, nq_u32 k) {
#ifdef __CUDA_ARCH__
    return __byte_perm(table, 0u, k + 0x4440u);
#else
    return (table >> (8 * k)) & 0xffu;
#endif
}

__host__ __device__ inline int nq_popc(nq_u32 x) {
#ifdef __CUDA_ARCH__
    return __popc(x);
#else
    return __builtin_popcount(x);
#endif
}

// Shared-memory layout of one thread's search: saved row states of 4 words (slot 0: the
// sentinel) (nq_thread_memory).
// Saved-state slots a search from row `base` needs: one per row base..n-2, plus the sentinel.
__host__ __device__ inline int nq_slots(int n, int base) {
    return n - base;
}

// Words of shared memory one thread needs for a search from row `base`.
__host__ __device__ inline int nq_thread_words(int n, int base) {
    return 4 * nq_slots(n, base);
}

// Addresses of this thread's memory. Device: 32-bit shared-window byte addresses, so that
// a slot is an immediate offset away and every access is one LDS/STS; the
// block's dynamic shared memory is split into one region per warp in which the 32 lanes
// interleave (32 different banks). Host: plain pointers into the thread's own
// nq_thread_words(n, base) words.
#ifdef __CUDA_ARCH__
typedef nq_u32 nq_addr;
#define NQ_SLOT_BYTES 512       // 32 lanes x 16 bytes
#else
typedef nq_u32* nq_addr;
#define NQ_SLOT_BYTES 4     // in words on the host
#endif

struct NqMemory {
    nq_addr slots;   // slot k at slots + k * NQ_SLOT_BYTES (4 words)
};

__host__ __device__ inline NqMemory nq_thread_memory(nq_u32* memory, int n, int base, int thread) {
    NqMemory m;
#ifdef __CUDA_ARCH__
    const nq_u32 region = (nq_u32)__cvta_generic_to_shared(memory) + (thread >> 5) * 32 * 4 * nq_thread_words(n, base);
    m.slots = region + (thread & 31) * 16;
#else
    (void)n;
    (void)base;
    (void)thread;
    m.slots = memory;
#endif
    return m;
}

// The save and the restore of a row state: a stack of 4-word slots, `top` the next free
// one. Predicated rather than branched on the device: push if `w` != 0, pop if `w` == 0
// (one test of the word for the access and the pointer; the compiler can fold it into the
// instruction that computes the word). The load's immediate offset keeps its address
// independent of the pointer update, which lets the compiler predicate it.
__host__ __device__ inline void nq_push_if_nonzero(nq_u32 w, nq_addr& top, nq_u32 a, nq_u32 b, nq_u32 c, nq_u32 d) {
#ifdef __CUDA_ARCH__
    asm volatile("{ .reg .pred q; setp.ne.u32 q, %1, 0; @q st.shared.v4.u32 [%0], {%2, %3, %4, %5};\n\t"
                 "@q add.u32 %0, %0, %6; }"
                 : "+r"(top) : "r"(w), "r"(a), "r"(b), "r"(c), "r"(d), "n"(NQ_SLOT_BYTES) : "memory");
#else
    if (w) {
        top[0] = a;
        top[1] = b;
        top[2] = c;
        top[3] = d;
        top += NQ_SLOT_BYTES;
    }
#endif
}

__host__ __device__ inline void nq_pop_if_zero(nq_u32 w, nq_addr& top, nq_u32& a, nq_u32& b, nq_u32& c, nq_u32& d) {
#ifdef __CUDA_ARCH__
    asm volatile("{ .reg .pred q; setp.eq.u32 q, %5, 0; @q ld.shared.v4.u32 {%0, %1, %2, %3}, [%4+%6];\n\t"
                 "@q add.u32 %4, %4, %6; }"
                 : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(top) : "r"(w), "n"(-NQ_SLOT_BYTES) : "memory");
#else
    if (!w) {
        top -= NQ_SLOT_BYTES;
        a = top[0];
        b = top[1];
        c = top[2];
        d = top[3];
    }
#endif
}

// ~(a | b | c) as one LOP3 (the compiler would split it around other uses of the OR).
__host__ __device__ inline nq_u32 nq_nor3(nq_u32 a, nq_u32 b, nq_u32 c) {
#ifdef __CUDA_ARCH__
    nq_u32 r;
    asm("lop3.b32 %0, %1, %2, %3, 0x01;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    return ~(a | b | c);
#endif
}

// If r == s: word = v, and w &= m if also u != 0. Returns w. One predicated move and one
// predicated LOP3 after the two tests (the compiler would rather build a mask with a select).
__host__ __device__ inline nq_u32 nq_set_and_if(nq_u32 w, nq_u32 m, nq_u32 u, int r, int s, nq_u32& word, nq_u32 v) {
#ifdef __CUDA_ARCH__
    asm("{ .reg .pred q, t; setp.eq.s32 t, %4, %5; @t mov.b32 %1, %6;\n\t"
        "setp.ne.and.u32 q, %3, 0, t; @q and.b32 %0, %0, %2; }"
        : "+r"(w), "+r"(word) : "r"(m), "r"(u), "r"(r), "r"(s), "r"(v));
    return w;
#else
    if (r == s) {
        word = v;
        if (u != 0) w &= m;
    }
    return w;
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
    NQ_STEP_SAVE = 8,       // ...and its row still had candidates: saved it first
    NQ_STEP_RESTORE = 16,   // ...which had none: restored the top saved row
    NQ_STEP_RULE = 32,      // ...in a row whose child has a static rule (the rare path)
    NQ_STEP_LEAF = 64,      // weighed the last row's queen (the rare path), then restored
};

// On the device only "did something" matters: the flags fold to 1 there, saving the
// instructions that would build them; host programs (tests, the warp model) see them all.
#ifdef __CUDA_ARCH__
#define NQ_DID(flags) ((void)(flags), 1)
#else
#define NQ_DID(flags) (flags)
#endif

// The prefixes of one launch: NQ_RECORD_WORDS words each. A thread's work item is a prefix
// and the candidates its queens take in the next `split` rows (0, 1 or 2): the item's digits
// are the ranks of the chosen free squares in those rows, row mark + k's digit in base
// n - mark - k (nq_split_radix: the columns no queen uses yet, which hold every free square
// of that row), row mark's digit the most significant after the prefix; an item whose square
// does not exist is empty. So the device cuts the work n - mark or (n - mark)(n - mark - 1)
// times finer than the host's prefixes, at no host cost (a base of n would leave about twice
// as many items empty, each a pass of the fetch loop).
struct NqPrefixes {
    int n;
    int mark;
    int split;
    long long count;  // prefixes
    long long items;  // count * the radices of the split rows
    const nq_u32* records;
};

// The base of row mark + k's digit in a work item: the columns no queen of rows 0..mark+k-1
// uses, a bound on that row's free squares.
__host__ __device__ inline int nq_split_radix(int n, int mark, int k) {
    return n - mark - k;
}

// One thread's search: its memory, the current item's rules and leaf data, the current row.
// `down` always holds the columns past n-1 too (~mask): they are never free, and
// popc(down) = row + 32 - n, which is 31 exactly on the last row for every n. Rows below
// are written r' = r + 32 - n ("shifted rows").
struct NqSearch {
    // board and memory
    int n;
    int base;          // the first row this thread searches: mark + split
    nq_u32 mask;
    nq_u32 edges;      // the two edge columns
    nq_addr slots;     // saved state k at slots + k * NQ_SLOT_BYTES; slot 0: the sentinel
    nq_addr top;       // the next free slot
    // the current work item
    long long p;       // its prefix
    nq_u64 weight;     // its weight so far
#ifdef NQ_COUNT_NODES
    nq_u64 nodes;
#endif
    // Rows r' in lo..lo+span (up to 30) take the main path, whose only rule is case S's at
    // row B2: at r' == b2m1, if an edge column is unused the child may only take an edge
    // column (and the row keeps `down` before row B2). The other rows take the rare path:
    // the last row (31), the rows whose child is above B1, whose child may not use the
    // columns of `outside` (case C: column 1, case S: the edge columns), and in case S rows
    // B1-1 and B1 (the main rows are one range): at r' == b1r the row picks the leaf weights
    // by its queen. Row B2-1 is a rare row only where it is row B1 (even n, B1 = (n-2)/2);
    // the rare path applies the B2 rule at b2m1 as the main path does.
    int lo;
    nq_u32 span;
    int ruled;         // rows r' < ruled: the child is above B1 and has the static rule
    int b2m1;
    int b1r;
    nq_u32 outside;
    // Leaf data (leaf()): case C and case S through the same code, with neutral values
    nq_u32 last_forbid;    // a last-row queen here weighs 0 (case S's last-row rule; ~0: all)
    nq_u32 b2_bit;         // case S: a last-row queen here is the bottom queen (n-1, B2)
    nq_u32 weights;        // the leaf weights 24/k from k = 1 + the edge queens at corner
                           // distance B1 known at the item's start, one byte each
    nq_u32 leaf_weights;   // the same from row B1's queen on: one byte further if it is the
                           // right queen (B1, n-1) (set at row B1 when searched here)
    nq_u32 before_b2;      // down before row B2 (the leaf word), if searched here (case S; 0
                           // until then); else every column (0x7fffffff): neutral
    // the current row
    nq_u32 cand;       // its untried candidates
    nq_u32 left;       // unmasked
    nq_u32 down;       // with ~mask
    nq_u32 right;

    // Weight of the leaf whose last-row queen is `last`: 24/k (case C: k = 1), 0 if a
    // case-S rule forbids it. Branch-free: the data of case C make every term neutral.
    __host__ __device__ nq_u32 leaf(nq_u32 last) const {
        // before row B2: with no edge column used, row B2 took one edge column and a row
        // below it the other, which the spec forbids (the main path does not check that);
        // with column 0 unused, row B2 took it: the left queen is (B2, 0). The bottom queen
        // and the left one pick the weight among those from row B1's k on (at most 2 more)
        const nq_u32 byte = (last == b2_bit) + (~before_b2 & 1u);
        const nq_u32 w = nq_byte(leaf_weights, byte);
        return (last & last_forbid) != 0u || (before_b2 & edges) == 0u ? 0u : w;
    }

    // After a try in (shifted) row `row` on the rare path: if it is row B1 (its queen is in
    // `down`), the leaf weights from its k on. Row B1 never takes column 0 (the top queen's
    // diagonal attacks it) and the rows above it no edge column, so column n-1 used means
    // the right queen is (B1, n-1). Two selects, no branch.
    __host__ __device__ void weigh_row_b1(int row) {
        const nq_u32 from_b1 = (down & (edges ^ 1u)) != 0u ? weights >> 8 : weights;
        leaf_weights = row == b1r ? from_b1 : leaf_weights;
    }

    // Free squares of row `row` (not shifted) after the device's form of the rules (the
    // same as the search loop's): case C, rows above B1 may not use column 1; case S, rows
    // above B1 may not use an edge column, and row B2 must take an edge column if one is
    // still unused. Used by load() for the split rows and row base.
    __host__ __device__ nq_u32 rule_free(int row, int b1, bool corner, nq_u32 l, nq_u32 d, nq_u32 rt) const {
        const nq_u32 free = ~(l | d | rt);
        if (row < b1) return free & ~outside;
        if (!corner && row == n - 1 - b1 && (outside & ~d) != 0u) return free & outside;
        return free;
    }

    // Load work item `item` (rules and leaf data, the split rows' queens, row base's state). Returns false
    // for an empty item (its chosen square does not exist, or row base has no free square).
    __host__ __device__ bool load(const NqPrefixes& set, long long item) {
        long long index = item;
        int second = 0;
        if (set.split == 2) {
            const int radix = nq_split_radix(n, set.mark, 1);
            second = (int)(index % radix);
            index /= radix;
        }
        int first = 0;
        if (set.split >= 1) {
            const int radix = nq_split_radix(n, set.mark, 0);
            first = (int)(index % radix);
            index /= radix;
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
        // rows below `ruled` have a child with a static rule; the main path starts there in
        // case C and two rows further down in case S (rows B1-1 and B1 on the rare path: row
        // B1 stores a leaf word); case S has B1 < B2 = n-1-B1, so lo <= 30
        ruled = b1 - 1 + shift;
        lo = corner ? ruled : ruled + 2;
        span = (nq_u32)(30 - lo);
        b2m1 = !corner && b2 - 1 >= base ? b2 - 1 + shift : -1;
        b1r = !corner && b1 >= base ? b1 + shift : -1;
        outside = corner ? (b1 == 0 ? 0u : 2u) : edges;  // case C, b1 = 0: the plain search, no rule
        // neutral leaf data (case C: every leaf weighs 24), then case S's
        int k0 = 1;
        b2_bit = 0;
        last_forbid = 0;
        before_b2 = 0x7fffffffu;
        if (!corner) {
            const nq_u32 low = (1u << b1) - 1u;
            last_forbid = low | (low << (n - b1));  // the last row's rule
            b2_bit = 1u << b2;
            k0 += (int)((rule >> NQ_RULE_KNOWN_SHIFT) & 3u);  // edge queens in the prefix rows
            if (b2m1 >= 0) before_b2 = 0u;  // set at row B2-1
        }
        left = rec[0];
        down = rec[1] | ~mask;
        right = rec[2];
        top = slots + NQ_SLOT_BYTES;
        for (int row = set.mark; row <= base; ++row) {  // the split rows mark..base-1, then row base
            if (!corner && row == b2) {  // what the leaf would read before row B2 (see leaf())
                if ((down & edges) == 0u) last_forbid = ~0u;
                k0 += (down & 1u) == 0u;  // the left queen is (B2, 0)
            }
            nq_u32 free = rule_free(row, b1, corner, left, down, right);
            if (row == base) {
                cand = free;
                break;
            }
            const int rank = row == set.mark ? first : second;
            for (int j = 0; j < rank && free != 0; ++j) free &= free - 1u;
            if (free == 0) return false;
#ifdef NQ_COUNT_NODES
            // the node of row mark is counted by the one item of it whose second digit is 0
            nodes += (row == set.mark && set.split == 2) ? second == 0 : 1;
#endif
            const nq_u32 bit = free & (0u - free);
            if (!corner && row == b1 && bit == (1u << (n - 1))) ++k0;  // the right queen
            left = (left | bit) << 1;
            down |= bit;
            right = (right | bit) >> 1;
        }
        weights = NQ_LEAF_WEIGHTS >> (8 * k0 - 8);
        leaf_weights = weights;
        return cand != 0;
    }

    // Try the lowest candidate of the current row (shifted row `row`), its child's columns
    // `forbid` excepted (0 on the main path). Straight-line code on the device: the save is
    // predicated, and the child's state is always computed in place, so there is no select:
    // when the child has no free square (`cand` 0), the caller's restore overwrites it (with
    // the row just saved, if it had candidates left, else the one saved before it). At row
    // B2-1 it sets the leaf word to the child's `down` and applies the B2 rule (one
    // predicated move and one predicated AND). Adds NQ_STEP_SAVE to `did` if it saved the row.
    __host__ __device__ void try_candidate(int row, nq_u32 forbid, int& did) {
        const nq_u32 rest = cand & (cand - 1u);  // (the compiler tests it for the save in the same LOP3)
        const nq_u32 b = cand - rest;            // an IMAD on the FMA pipe (cand ^ rest: a LOP3)
        nq_push_if_nonzero(rest, top, rest, left, down, right);
        if (rest) did |= NQ_STEP_SAVE;
#ifdef NQ_COUNT_NODES
        nodes += 1;
#endif
        // b is a free square: in none of the three masks, so adding it is OR-ing it (no carry).
        // The adds run on the FMA pipe (IMAD) beside the ALU's LOP3s, and `down += b` lets
        // ptxas update `down` in place (with `|=` it paid a register move each iteration).
        left = (left + b) << 1;
        down += b;
        right = (right + b) >> 1;
        nq_u32 free = nq_nor3(left | forbid, down, right);
        // case S, the child is row B2: keep `down` for the leaf; if an edge column is unused,
        // the child must take an edge column (both unused: the leaf rejects what follows, see
        // leaf())
        free = nq_set_and_if(free, outside, outside & ~down, row, b2m1, before_b2, down);
        cand = free;
    }

    // The current row is the last one and `cand` its queen: add the leaf's weight.
    __host__ __device__ void weigh_leaf() {
        const nq_u32 w = leaf(cand);
        weight += w;
#ifdef NQ_COUNT_NODES
        nodes += w != 0;
#endif
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
    long long taken;  // items taken from the counter, empty ones included (for the warp model)

    __host__ __device__ void start(const NqPrefixes& set_, nq_u64* counter_, NqMemory memory, nq_u64* each_) {
        set = set_;
        counter = counter_;
        each = each_;
        sums.weight = 0;
        sums.nodes = 0;
        taken = 0;
        s.n = set.n;
        s.base = set.mark + set.split;
        s.mask = (nq_u32)((1ull << set.n) - 1ull);
        s.edges = (1u << (set.n - 1)) | 1u;
        s.slots = memory.slots;
        // the sentinel: cand 0 on "row" popc(down) = 32, past the last row, which takes the
        // rare path (lo, span) until the first item's load sets them, so the first iteration
        // fetches
        s.top = s.slots;
        nq_push_if_nonzero(1u, s.top, 0u, 0u, 0xffffffffu, 0u);
        s.cand = 0;
        s.down = 0xffffffffu;
        s.lo = 0;
        s.span = 30;
        s.b2m1 = -1;
        s.b1r = -1;
        s.weight = 0;
        s.p = -1;
#ifdef NQ_COUNT_NODES
        s.nodes = 0;
#endif
    }

    // One iteration of the thread's loop: try one candidate (the main path, or the rare one
    // for a row whose child has a static rule), weigh a leaf, or finish the item and fetch
    // the next one; then restore the top saved row if the current row has no candidate. All
    // paths meet before the restore, so the lanes of a warp reconverge there every
    // iteration, and a lane that fetches does not wait for the other lanes' items. Returns
    // the NqStep flags (on the device 1); NQ_STEP_DONE (0) when no item is left.
    // The restore tests `cand` itself on every path (a try leaves the child's free squares
    // there, a leaf clears it, a fetch leaves row base's, never 0): with a separate "go on"
    // word, which differs from `cand` on the leaf and fetch paths, the main path paid a
    // register move every iteration.
    __host__ __device__ int advance() {
        const int row = nq_popc(s.down);  // shifted: 31 on the last row, 32 the sentinel's
        int did;
        if ((nq_u32)(row - s.lo) > s.span) {   // the rare path
            if (row == 31) {                   // the last row's queen (a try that leaves the last
                                               // row without one restores at once), tested first:
                s.weigh_leaf();                // a quarter of the warp's steps have a leaf
                s.cand = 0u;
                did = NQ_STEP_LEAF;
            } else if (row < 31) {             // the child has a static rule, or the row is B1-1 or B1
                did = NQ_STEP_TRY | NQ_STEP_RULE;
                s.try_candidate(row, row < s.ruled ? s.outside : 0u, did);
                s.weigh_row_b1(row);
            } else {                           // the sentinel: the item is done
                did = next_item();
                if (did == NQ_STEP_DONE) return NQ_STEP_DONE;
            }
        } else {                               // the main path
            did = NQ_STEP_TRY;
            s.try_candidate(row, 0u, did);
        }
        if (did & NQ_STEP_TRY) did |= s.cand ? NQ_STEP_PUSH : NQ_STEP_RESTORE;
        nq_pop_if_zero(s.cand, s.top, s.cand, s.left, s.down, s.right);
        return NQ_DID(did);
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
            ++taken;
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
    w.start(set, counter, memory, each);  // the sentinel: the first iteration fetches an item
    while (w.advance() != NQ_STEP_DONE) {
    }
    return w.sums;
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
    for (int k = 0; k < split; ++k) items *= nq_split_radix(n, mark, k);
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

// ---------------------------------------------------------------------------------------------
// Expansion on the device: the host's prefixes at row `mark`, continued `rows` rows further
// (1..NQ_MAX_EXPAND), as records at row mark + rows, in the host's order (a prefix's children
// together, columns ascending row by row). The twin of expand_prefixes(p, mark + rows).records()
// in gpuqueens/problems/nqueens/prefixes.py, rules included: the host's rules (free_squares_mixed
// in rules.py), which drop a case-S branch at row B2 with no edge column used (the search loop
// keeps it and weighs its leaves 0). The search then starts at row mark + rows with split 0:
// its work items are exactly the records, none empty (the split's digits padded each prefix
// to (n - mark)(n - mark - 1) items, most of them empty).

#define NQ_MAX_EXPAND 3

// Free squares of row `row` (before the last) under the host's rules: case C, rows above B1
// may not use column 1; case S, rows above B1 no edge column, and row B2 only an edge column
// while one is unused, none if both are.
__host__ __device__ inline nq_u32 nq_host_rule_free(int n, int row, int b1, bool corner, nq_u32 l, nq_u32 d,
                                                    nq_u32 r) {
    const nq_u32 mask = (nq_u32)((1ull << n) - 1ull);
    const nq_u32 edges = (1u << (n - 1)) | 1u;
    nq_u32 free = ~(l | d | r) & mask;
    if (row < b1) free &= corner ? ~2u : ~edges;
    if (!corner && row == n - 1 - b1) {
        const nq_u32 used = d & edges;
        free = used == 0u ? 0u : (used == edges ? free : free & edges);
    }
    return free;
}

// A board during the expansion: the attack masks of the next row and the edge queens at
// corner distance B1 placed so far (the record's bits 9-10).
struct NqExpandState {
    nq_u32 l, d, r, known;
};

// The board after a queen on `bit` in row `row` (the host's place(); left masked as there).
__host__ __device__ inline NqExpandState nq_expand_place(const NqExpandState& s, nq_u32 bit, int row, int n, int b1,
                                                         bool corner) {
    const nq_u32 mask = (nq_u32)((1ull << n) - 1ull);
    // case S: the left queen at (B2, 0), the right one at (B1, n-1)
    const bool edge_queen = !corner && ((row == n - 1 - b1 && bit == 1u) || (row == b1 && bit == (1u << (n - 1))));
    return {((s.l | bit) << 1) & mask, s.d | bit, (s.r | bit) >> 1, s.known + (nq_u32)edge_queen};
}

// The children of one record `rec` at row mark + rows (rows 1..NQ_MAX_EXPAND): returns how
// many; writes them (4 words each, in order) to `out` unless it is null. One loop per row,
// so that the boards stay in registers.
__host__ __device__ inline long long nq_expand_record(int n, int mark, int rows, const nq_u32* rec, nq_u32* out) {
    const nq_u32 rule = rec[3];
    const bool corner = (rule & NQ_RULE_CORNER) != 0;
    const int b1 = (int)(rule & 0xffu);
    long long children = 0;
    auto emit = [&](const NqExpandState& s) {
        if (out) {
            nq_u32* child = out + NQ_RECORD_WORDS * children;
            child[0] = s.l;
            child[1] = s.d;
            child[2] = s.r;
            child[3] = (rule & ~(3u << NQ_RULE_KNOWN_SHIFT)) | (s.known << NQ_RULE_KNOWN_SHIFT);
        }
        ++children;
    };
    const NqExpandState s0 = {rec[0], rec[1], rec[2], (rule >> NQ_RULE_KNOWN_SHIFT) & 3u};
    for (nq_u32 f0 = nq_host_rule_free(n, mark, b1, corner, s0.l, s0.d, s0.r); f0 != 0u; f0 &= f0 - 1u) {
        const NqExpandState s1 = nq_expand_place(s0, f0 & (0u - f0), mark, n, b1, corner);
        if (rows == 1) {
            emit(s1);
            continue;
        }
        for (nq_u32 f1 = nq_host_rule_free(n, mark + 1, b1, corner, s1.l, s1.d, s1.r); f1 != 0u; f1 &= f1 - 1u) {
            const NqExpandState s2 = nq_expand_place(s1, f1 & (0u - f1), mark + 1, n, b1, corner);
            if (rows == 2) {
                emit(s2);
                continue;
            }
            for (nq_u32 f2 = nq_host_rule_free(n, mark + 2, b1, corner, s2.l, s2.d, s2.r); f2 != 0u; f2 &= f2 - 1u) {
                emit(nq_expand_place(s2, f2 & (0u - f2), mark + 2, n, b1, corner));
            }
        }
    }
    return children;
}

// Write the children of prefix p of `records`: to records out[start ..], start = (p > 0 ?
// ends[p - 1] : first) - first, `ends` the running total of the counts (inclusive) and
// `first` the total before prefix 0.
__host__ __device__ inline void nq_expand_write(int n, int mark, int rows, long long p, const nq_u32* records,
                                                const nq_u64* ends, long long first, nq_u32* out) {
    const long long start = (p > 0 ? (long long)ends[p - 1] : first) - first;
    nq_expand_record(n, mark, rows, records + NQ_RECORD_WORDS * p, out + NQ_RECORD_WORDS * start);
}

// counts[p] = the children of prefix p at row mark + rows, for p in [0, count). Any grid.
extern "C" __global__ void nqueens_expand_count(
    int n, int mark, int rows, long long count, const nq_u32* __restrict__ records, nq_u64* __restrict__ counts) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < count; p += stride) {
        counts[p] = (nq_u64)nq_expand_record(n, mark, rows, records + NQ_RECORD_WORDS * p, 0);
    }
}

// Write the children of prefixes [0, count) (nq_expand_write). Any grid.
extern "C" __global__ void nqueens_expand(
    int n, int mark, int rows, long long count, const nq_u32* __restrict__ records,
    const nq_u64* __restrict__ ends, long long first, nq_u32* __restrict__ out) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < count; p += stride) {
        nq_expand_write(n, mark, rows, p, records, ends, first, out);
    }
}
