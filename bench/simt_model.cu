// A host-side model of how 32-lane warps run the search of kernels/nqueens.cu.
//
// It replays the kernel's own per-thread loop (NqWorker::advance, compiled for the host) for
// every lane of many warps in lockstep: at each warp step every live lane does one loop
// iteration, and the warp issues the union of the code blocks its lanes took (divergent
// paths run one after the other). Each block has a cost in SASS instructions, read off the
// disassembly of the sm_90 cubin (bench/simt_model.py prints how; see docs/performance.md).
// Reported: active lanes per issued instruction (ncu's "Avg. Active Threads Per Warp" counts
// the lanes of each issued instruction), issued warp instructions per node, and the tail
// (the longest thread's busy steps over the mean).
//
//   simt_model PREFIXES_IN POLICY THREADS COSTS...
//
// PREFIXES_IN: the host harness format (tests/native/nqueens_host_main.cu). POLICY: "dynamic"
// (threads take the next prefix from a shared counter, as the kernel does) or "static" (thread
// t takes prefixes t, t + THREADS, ..., as the previous kernel did). COSTS: instructions of the
// blocks head, fetch, pop, advance, rules, push, leaf-row, leaf-weight.
// Prints one line of key=value pairs.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../kernels/nqueens.cu"

namespace {

enum Block { HEAD, FETCH, POP, ADVANCE, RULES, PUSH, LEAF_ROW, LEAF_WEIGHT, BLOCKS };

// Which blocks one iteration took, from its NqStep flags and whether a leaf was weighed.
unsigned blocks_of(int did, bool weighed) {
    unsigned b = 1u << HEAD;
    if (did == NQ_STEP_FETCH || did == NQ_STEP_DONE) return b | (1u << FETCH);
    if (did & NQ_STEP_POP) b |= 1u << POP;
    if (did & NQ_STEP_ADVANCE) b |= 1u << ADVANCE;
    if (did & NQ_STEP_LEAF) b |= 1u << LEAF_ROW;
    else if (did & NQ_STEP_ADVANCE) b |= 1u << RULES;
    if (did & NQ_STEP_PUSH) b |= 1u << PUSH;
    if (weighed) b |= 1u << LEAF_WEIGHT;
    return b;
}

// A counter that hands thread t the prefixes t, t + threads, ... (the static policy).
struct StaticCounter {
    long long next;
    long long step;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 + BLOCKS) {
        std::fprintf(stderr, "usage: %s PREFIXES_IN dynamic|static THREADS COSTS(x%d)\n", argv[0], BLOCKS);
        return 2;
    }
    std::FILE* f = std::fopen(argv[1], "rb");
    if (!f) return 2;
    char magic[8];
    unsigned n = 0, mark = 0;
    unsigned long long count = 0;
    if (std::fread(magic, 1, 8, f) != 8 || std::fread(&n, 4, 1, f) != 1 || std::fread(&mark, 4, 1, f) != 1 ||
        std::fread(&count, 8, 1, f) != 1) return 2;
    std::vector<nq_u32> records(count * NQ_RECORD_WORDS);
    if (count && std::fread(records.data(), 4, records.size(), f) != records.size()) return 2;
    std::fclose(f);
    const bool dynamic = std::strcmp(argv[2], "dynamic") == 0;
    const int threads = std::atoi(argv[3]);
    double cost[BLOCKS];
    for (int k = 0; k < BLOCKS; ++k) cost[k] = std::atof(argv[4 + k]);

    const NqPrefixes set = {(int)n, (int)mark, (long long)count, records.data()};
    const int words = nq_stack_words(n, mark) > 0 ? nq_stack_words(n, mark) : 1;
    std::vector<nq_u32> stacks((size_t)threads * words);
    std::vector<NqWorker> lanes(threads);
    std::vector<nq_u64> counters(dynamic ? 1 : threads);
    std::vector<long long> busy(threads, 0);
    for (int t = 0; t < threads; ++t) {
        // static: each lane has its own counter; nq_fetch adds 1, so scale indices by threads
        nq_u64* counter = dynamic ? &counters[0] : &counters[t];
        lanes[t].start(set, counter, &stacks[(size_t)t * words], 1, 0);
    }
    // static policy: prefix t + k * threads for lane t, through a strided view of the records
    std::vector<std::vector<nq_u32>> own;
    std::vector<NqPrefixes> own_sets;
    if (!dynamic) {
        own.resize(threads);
        own_sets.resize(threads);
        for (int t = 0; t < threads; ++t) {
            for (unsigned long long p = t; p < count; p += threads) {
                own[t].insert(own[t].end(), &records[p * NQ_RECORD_WORDS], &records[p * NQ_RECORD_WORDS] + NQ_RECORD_WORDS);
            }
            own_sets[t] = {(int)n, (int)mark, (long long)(own[t].size() / NQ_RECORD_WORDS), own[t].data()};
            lanes[t].start(own_sets[t], &counters[t], &stacks[(size_t)t * words], 1, 0);
        }
    }

    std::vector<char> live(threads, 1);
    double issued = 0, lane_instructions = 0;
    long long warp_steps = 0, steps_total = 0;
    nq_u64 nodes = 0;
    const int warps = (threads + 31) / 32;
    int running = threads;
    long long tick = 0;
    while (running > 0) {
        ++tick;
        for (int w = 0; w < warps; ++w) {
            unsigned union_blocks = 0;
            double lane_cost = 0;
            bool any = false;
            for (int l = 0; l < 32; ++l) {
                const int t = w * 32 + l;
                if (t >= threads || !live[t]) continue;
                any = true;
                const nq_u64 before = lanes[t].s.weight;
                const int did = lanes[t].advance();
                const bool weighed = (did & NQ_STEP_LEAF) && lanes[t].s.weight != before;
                if (did & NQ_STEP_ADVANCE) nodes += 1;
                const unsigned b = blocks_of(did, weighed);
                union_blocks |= b;
                for (int k = 0; k < BLOCKS; ++k) if (b >> k & 1) lane_cost += cost[k];
                busy[t] += 1;
                ++steps_total;
                if (did == NQ_STEP_DONE) {
                    live[t] = 0;
                    --running;
                }
            }
            if (!any) continue;
            ++warp_steps;
            for (int k = 0; k < BLOCKS; ++k) if (union_blocks >> k & 1) issued += cost[k];
            lane_instructions += lane_cost;
        }
    }
    long long longest = 0;
    double mean = 0;
    for (int t = 0; t < threads; ++t) {
        if (busy[t] > longest) longest = busy[t];
        mean += busy[t];
    }
    mean /= threads;
    std::printf("prefixes=%llu threads=%d policy=%s nodes=%llu warp_steps=%lld active_lanes=%.2f "
                "issued_per_node=%.2f lane_instr_per_node=%.2f tail=%.3f ticks=%lld\n",
                count, threads, dynamic ? "dynamic" : "static", nodes, warp_steps,
                issued > 0 ? lane_instructions / issued : 0.0, nodes ? issued / nodes : 0.0,
                nodes ? lane_instructions / nodes : 0.0, mean > 0 ? longest / mean : 0.0, tick);
    return 0;
}
