// A host-side model of how 32-lane warps run an N-Queens search loop.
//
// It replays a per-thread search loop for every lane of many warps in lockstep and counts,
// per warp step, what the warp issues: the union of the code blocks its lanes took
// (divergent blocks run one after the other), the ALU-pipe share of those instructions, and
// the shared-memory wavefronts (a 16-byte access costs one wavefront per quarter-warp that
// has an active lane, a 4-byte access one per instruction). Block costs are SASS counts read
// off the sm_90 disassembly (bench/simt_model.py holds them and says how they were counted).
//
//   simt_model kernel PREFIXES_IN SPLIT THREADS (ISSUED ALU) x 9
//   simt_model ygch N ROWS SAMPLE THREADS LOOP LOOP_ALU FETCH
//
// kernel: the loop of kernels/nqueens.cu (NqWorker::advance, its own code compiled for the
// host), work items taken from a shared counter; the 9 cost pairs are those of its blocks
// head, main, rare, rule, last, leaf, fetch, empty, tail. PREFIXES_IN: the host harness
// format (tests/native/nqueens_host_main.cu); SPLIT: the rows the device cuts each prefix by
// (as gpu.choose_split), whose empty items cost one pass of the fetch loop each.
// ygch: the loop of the public counter ygch/n_queens as its kernel runs it (one candidate per
// iteration, every row's whole state in shared memory, mirror symmetry only, first ROWS rows
// placed on the host; a lane that finishes its subproblem waits for the rest of its warp,
// then the warp takes 32 new subproblems). Every SAMPLE-th subproblem is modelled.
//
// Prints key=value pairs: nodes (candidates tried below the items), warp_steps,
// active_lanes (lanes per issued instruction, as ncu's "Avg. Active Threads Per Warp"),
// issued/alu/wavefronts per node, tail (longest thread's busy steps over the mean); kernel also
// the share of warp steps that ran each rare block.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <vector>

#include "../kernels/nqueens.cu"

namespace {

struct Totals {
    double issued = 0, alu = 0, lanes = 0, wavefronts = 0;
    long long warp_steps = 0;
    unsigned long long nodes = 0;
};

int quarters(unsigned lanes) {
    int q = 0;
    for (int k = 0; k < 4; ++k) q += ((lanes >> (8 * k)) & 0xffu) != 0;
    return q;
}

void print(const char* loop, const Totals& t, long long threads, double tail, long long ticks) {
    const double nodes = t.nodes ? (double)t.nodes : 1.0;
    std::printf("loop=%s threads=%lld nodes=%llu warp_steps=%lld active_lanes=%.2f issued_per_node=%.3f "
                "alu_per_node=%.3f wavefronts_per_node=%.3f tail=%.3f ticks=%lld\n",
                loop, threads, t.nodes, t.warp_steps, t.issued > 0 ? t.lanes / t.issued : 0.0, t.issued / nodes,
                t.alu / nodes, t.wavefronts / nodes, tail, ticks);
}

// Costs of the blocks of NqWorker::advance() (SASS instructions, and those on the ALU pipe).
struct Block {
    double issued = 0, alu = 0;
};
// in the order of the command line: head, main, rare, rule, last, leaf, fetch, empty, tail
// (empty: an item taken from the counter whose square does not exist, taken again)
enum { HEAD, MAIN, RARE, RULE, LAST, LEAF, FETCH, EMPTY, TAIL, BLOCKS };

int run_kernel(int argc, char** argv) {
    if (argc != 5 + 2 * BLOCKS) return 2;
    std::FILE* f = std::fopen(argv[2], "rb");
    if (!f) return 2;
    char magic[8];
    unsigned n = 0, mark = 0;
    unsigned long long count = 0;
    if (std::fread(magic, 1, 8, f) != 8 || std::fread(&n, 4, 1, f) != 1 || std::fread(&mark, 4, 1, f) != 1 ||
        std::fread(&count, 8, 1, f) != 1) return 2;
    std::vector<nq_u32> records(count * NQ_RECORD_WORDS);
    if (count && std::fread(records.data(), 4, records.size(), f) != records.size()) return 2;
    std::fclose(f);
    const int split = std::atoi(argv[3]);
    const int threads = std::atoi(argv[4]);
    Block cost[BLOCKS];
    for (int b = 0; b < BLOCKS; ++b) {
        cost[b].issued = std::atof(argv[5 + 2 * b]);
        cost[b].alu = std::atof(argv[6 + 2 * b]);
    }

    const NqPrefixes set = nq_prefixes((int)n, (int)mark, split, (long long)count, records.data());
    const int base = (int)mark + split;
    const int words = nq_thread_words((int)n, base);
    std::vector<nq_u32> memory((size_t)threads * words);
    std::vector<NqWorker> lanes(threads);
    nq_u64 counter = 0;
    std::vector<char> live(threads, 1);
    std::vector<long long> busy(threads, 0);
    for (int t = 0; t < threads; ++t) {
        lanes[t].start(set, &counter, nq_thread_memory(&memory[(size_t)t * words], (int)n, base, t), 0);
    }
    Totals tot;
    double leaf_steps = 0, fetch_steps = 0, rule_steps = 0, main_steps = 0, empty_items = 0, items = 0;
    const int warps = (threads + 31) / 32;
    long long tick = 0;
    bool any_live = true;
    while (any_live) {
        any_live = false;
        ++tick;
        for (int w = 0; w < warps; ++w) {
            // lanes taking each block this step; save lanes of the two try blocks; restore lanes
            unsigned took[BLOCKS] = {};
            unsigned save_main = 0, save_rule = 0, restore = 0;
            long long max_empty = 0;
            for (int l = 0; l < 32; ++l) {
                const int t = w * 32 + l;
                if (t >= threads || !live[t]) continue;
                const unsigned bit = 1u << l;
                const long long taken = lanes[t].taken;
                const int did = lanes[t].advance();
                ++busy[t];
                took[HEAD] |= bit;
                // items taken beyond one are empty ones, each a pass of the fetch loop: the warp
                // issues the empty block once for each pass of its slowest lane
                const long long empty = lanes[t].taken - taken - 1;
                if (empty > 0) {
                    max_empty = std::max(max_empty, empty);
                    empty_items += (double)empty;
                }
                if (did == NQ_STEP_DONE) {  // the fetch found no item: the lane leaves the loop
                    live[t] = 0;
                    took[RARE] |= bit;
                    took[LAST] |= bit;
                    took[FETCH] |= bit;
                    continue;
                }
                if (did == NQ_STEP_FETCH) items += 1;
                took[TAIL] |= bit;
                if (did & NQ_STEP_TRY) {
                    ++tot.nodes;
                    const bool rule = did & NQ_STEP_RULE;
                    if (rule) {  // the rare path tests for the last row first
                        took[RARE] |= bit;
                        took[LAST] |= bit;
                    }
                    took[rule ? RULE : MAIN] |= bit;
                    if (did & NQ_STEP_SAVE) (rule ? save_rule : save_main) |= bit;
                    if (did & NQ_STEP_RESTORE) restore |= bit;
                } else {
                    took[RARE] |= bit;
                    if (!(did & NQ_STEP_LEAF)) took[LAST] |= bit;
                    took[did & NQ_STEP_LEAF ? LEAF : FETCH] |= bit;
                    if (did & NQ_STEP_LEAF) restore |= bit;
                }
            }
            if (!took[HEAD]) continue;
            any_live = true;
            ++tot.warp_steps;
            double issued = 0, alu = 0;
            for (int b = 0; b < BLOCKS; ++b) {
                if (!took[b]) continue;
                issued += cost[b].issued;
                alu += cost[b].alu;
                tot.lanes += cost[b].issued * __builtin_popcount(took[b]);
            }
            issued += cost[EMPTY].issued * (double)max_empty;
            alu += cost[EMPTY].alu * (double)max_empty;
            tot.lanes += cost[EMPTY].issued * (double)max_empty;  // mostly one lane
            // shared memory: each try block saves 16 bytes per saving lane, the tail restores
            // (the leaf words are registers)
            double wave = 0;
            if (took[MAIN]) wave += quarters(save_main);
            if (took[RULE]) wave += quarters(save_rule);
            wave += quarters(restore);
            tot.issued += issued;
            tot.alu += alu;
            tot.wavefronts += wave;
            main_steps += took[MAIN] != 0;
            rule_steps += took[RULE] != 0;
            leaf_steps += took[LEAF] != 0;
            fetch_steps += took[FETCH] != 0;
        }
    }
    long long longest = 0;
    double mean = 0;
    for (int t = 0; t < threads; ++t) {
        longest = std::max(longest, busy[t]);
        mean += busy[t];
    }
    mean /= threads;
    print("v5", tot, threads, mean > 0 ? longest / mean : 0.0, tick);
    const double steps = tot.warp_steps ? (double)tot.warp_steps : 1.0;
    std::printf("steps_with_main=%.4f steps_with_rule=%.4f steps_with_leaf=%.4f steps_with_fetch=%.4f "
                "nodes_per_step=%.3f empty_per_item=%.3f nodes_per_item=%.1f\n", main_steps / steps,
                rule_steps / steps, leaf_steps / steps, fetch_steps / steps, tot.nodes / steps,
                items ? empty_items / items : 0.0, items ? tot.nodes / items : 0.0);
    return 0;
}

// ygch/n_queens, described from its source: subproblems are the placements of its first
// ROWS rows with row 0's queen in the left half (for odd n also: in the middle column with
// row 1's queen left of it); each is searched to the end, one candidate per loop iteration,
// the last row counted with a popcount. Returns the iterations of the subproblems in the
// sampled groups of 32 consecutive ones (every SAMPLE-th group: a warp's 32 lanes take
// consecutive subproblems, which are alike).
void ygch_subproblems(int n, int rows, int sample, std::vector<long long>& iters) {
    const nq_u32 mask = (1u << n) - 1u;
    struct Walk {
        int n;
        nq_u32 mask;
        int rows;
        int sample;
        std::vector<long long>* out;
        mutable long long index = 0;
        bool wanted() const { return (index++ / 32) % sample == 0; }
        long long below(int row, nq_u32 l, nq_u32 d, nq_u32 r) const {  // iterations below
            if (row >= n - 1) return 0;
            long long it = 0;
            nq_u32 c = mask & ~(l | d | r);
            while (c) {
                const nq_u32 b = c & (0u - c);
                c ^= b;
                ++it;  // one try at `row`; its child row is searched unless it is the last
                it += below(row + 1, ((l | b) << 1) & mask, d | b, (r | b) >> 1);
            }
            return it;
        }
        void place(int row, nq_u32 l, nq_u32 d, nq_u32 r, nq_u32 allowed) const {
            nq_u32 c = allowed & ~(l | d | r);
            while (c) {
                const nq_u32 b = c & (0u - c);
                c ^= b;
                const nq_u32 nl = ((l | b) << 1) & mask, nd = d | b, nr = (r | b) >> 1;
                if (row + 1 == rows) {
                    if (wanted()) out->push_back(below(rows, nl, nd, nr));
                }
                else place(row + 1, nl, nd, nr, mask);
            }
        }
    } walk{n, mask, rows, sample, &iters};
    walk.place(0, 0, 0, 0, (1u << (n / 2)) - 1u);
    if (n & 1) {
        const nq_u32 mid = 1u << (n / 2);
        const nq_u32 l = (mid << 1) & mask, r = mid >> 1;
        nq_u32 c = ((1u << ((n - 2) / 2)) - 1u) & ~(l | mid | r);
        while (c) {
            const nq_u32 b = c & (0u - c);
            c ^= b;
            const nq_u32 nl = ((l | b) << 1) & mask, nd = mid | b, nr = (r | b) >> 1;
            if (rows == 2) {
                if (walk.wanted()) iters.push_back(walk.below(2, nl, nd, nr));
            }
            else walk.place(2, nl, nd, nr, mask);
        }
    }
}

int run_ygch(int argc, char** argv) {
    if (argc != 9) return 2;
    const int n = std::atoi(argv[2]), rows = std::atoi(argv[3]), sample = std::atoi(argv[4]);
    const int threads = std::atoi(argv[5]);
    const double loop = std::atof(argv[6]), loop_alu = std::atof(argv[7]), fetch = std::atof(argv[8]);
    std::vector<long long> iters;
    ygch_subproblems(n, rows, sample, iters);
    // warps take 32 consecutive subproblems when they are free; a round lasts as long as its
    // longest lane; per iteration the warp loads the top state (16 bytes, every active lane),
    // writes its cand back (4 bytes) and pushes the child (16 bytes, most lanes)
    const int warps = std::max(1, threads / 32);
    std::priority_queue<std::pair<long long, int>, std::vector<std::pair<long long, int>>, std::greater<>> ready;
    for (int w = 0; w < warps; ++w) ready.push({0, w});
    Totals tot;
    size_t next = 0;
    long long end = 0;
    std::vector<long long> busy(warps * 32, 0);
    while (next < iters.size()) {
        auto [time, w] = ready.top();
        ready.pop();
        long long longest = 0, sum = 0;
        for (int l = 0; l < 32 && next < iters.size(); ++l, ++next) {
            longest = std::max(longest, iters[next]);
            sum += iters[next];
            busy[w * 32 + l] += iters[next];
        }
        tot.nodes += (unsigned long long)sum;
        tot.warp_steps += longest;
        tot.issued += longest * loop + fetch;
        tot.alu += longest * loop_alu + fetch / 2;
        tot.lanes += sum * loop + 32 * fetch;
        tot.wavefronts += longest * 9.0;  // 4 (load) + 1 (cand) + 4 (push): quarters mostly all active
        ready.push({time + longest, w});
        end = std::max(end, time + longest);
    }
    long long longest = 0;
    double mean = 0;
    for (long long b : busy) {
        longest = std::max(longest, b);
        mean += b;
    }
    mean /= busy.size();
    print("ygch", tot, threads, mean > 0 ? longest / mean : 0.0, end);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "kernel") == 0) return run_kernel(argc, argv);
    if (argc > 1 && std::strcmp(argv[1], "ygch") == 0) return run_ygch(argc, argv);
    std::fprintf(stderr, "usage: %s kernel PREFIXES_IN SPLIT THREADS (ISSUED ALU) x 9 blocks\n"
                         "       %s ygch N ROWS SAMPLE THREADS LOOP LOOP_ALU FETCH\n", argv[0], argv[0]);
    return 2;
}
