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
//   simt_model PREFIXES_IN POLICY THREADS LOOP COSTS...
//
// PREFIXES_IN: the host harness format (tests/native/nqueens_host_main.cu). POLICY: "dynamic"
// (threads take the next prefix from a shared counter, as the kernel does) or "static" (thread
// t takes prefixes t, t + THREADS, ..., as the previous kernel did). LOOP: "v2" (this kernel:
// COSTS are the blocks head, fetch, pop, advance, rules, push, leaf-row, leaf-weight) or "v1"
// (the previous kernel, for calibration: one pop or one candidate per iteration, the last row
// descended into, a case-S leaf compared with its rotations; COSTS are head, fetch, pop,
// advance, (unused), push, case-C leaf, case-S leaf). The v1 iterations are derived from the
// v2 steps: the same tree walked in the same order.
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
    if (argc != 5 + BLOCKS) {
        std::fprintf(stderr, "usage: %s PREFIXES_IN dynamic|static THREADS v1|v2 COSTS(x%d)\n", argv[0], BLOCKS);
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
    const bool v1 = std::strcmp(argv[4], "v1") == 0;
    double cost[BLOCKS];
    for (int k = 0; k < BLOCKS; ++k) cost[k] = std::atof(argv[5 + k]);

    const NqPrefixes set = nq_prefixes((int)n, (int)mark, 0, (long long)count, records.data());
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
            own_sets[t] = nq_prefixes((int)n, (int)mark, 0, (long long)(own[t].size() / NQ_RECORD_WORDS), own[t].data());
            lanes[t].start(own_sets[t], &counters[t], &stacks[(size_t)t * words], 1, 0);
        }
    }

    std::vector<char> live(threads, 1);
    std::vector<std::vector<unsigned>> pending(threads);
    double issued = 0, lane_instructions = 0;
    long long warp_steps = 0, steps_total = 0;
    nq_u64 nodes = 0;
    const int warps = (threads + 31) / 32;
    std::vector<long long> warp_life(warps, 0);  // the tick of each warp's last step
    int running = threads;
    long long tick = 0;
    std::vector<int> live_warps(warps);
    for (int w = 0; w < warps; ++w) live_warps[w] = w;
    while (running > 0) {
        ++tick;
        size_t kept = 0;
        for (size_t i = 0; i < live_warps.size(); ++i) {
            const int w = live_warps[i];
            unsigned union_blocks = 0;
            double lane_cost = 0;
            bool any = false;
            for (int l = 0; l < 32; ++l) {
                const int t = w * 32 + l;
                if (t >= threads || !live[t]) continue;
                any = true;
                unsigned b;
                if (v1 && !pending[t].empty()) {  // a v1 iteration left over from the last v2 step
                    b = pending[t].back();
                    pending[t].pop_back();
                } else {
                    const nq_u64 before = lanes[t].s.weight;
                    const int did = lanes[t].advance();
                    const bool weighed = (did & NQ_STEP_LEAF) && lanes[t].s.weight != before;
                    if (did & NQ_STEP_ADVANCE) nodes += 1;
                    if (did == NQ_STEP_DONE) {
                        live[t] = 0;
                        --running;
                    }
                    if (v1) {
                        // the v1 iterations of this step, last first (pending is a stack)
                        const unsigned head = 1u << HEAD;
                        std::vector<unsigned> seq;
                        if (did == NQ_STEP_FETCH || did == NQ_STEP_DONE) seq.push_back(head | 1u << FETCH);
                        if (did & NQ_STEP_POP) seq.push_back(head | 1u << POP);
                        if (did & NQ_STEP_ADVANCE) {
                            if (weighed) {  // v1 pushed into the last row, weighed the leaf, popped
                                const bool corner = lanes[t].s.bottom_bit == 0;
                                seq.push_back(head | 1u << ADVANCE | 1u << PUSH);
                                seq.push_back(head | 1u << (corner ? LEAF_ROW : LEAF_WEIGHT));
                                seq.push_back(head | 1u << POP);
                            } else {
                                seq.push_back(head | 1u << ADVANCE | ((did & NQ_STEP_PUSH) ? 1u << PUSH : 0u));
                            }
                        }
                        for (size_t k = seq.size(); k-- > 1;) pending[t].push_back(seq[k]);
                        b = seq[0];
                    } else {
                        b = blocks_of(did, weighed);
                    }
                }
                union_blocks |= b;
                for (int k = 0; k < BLOCKS; ++k) if (b >> k & 1) lane_cost += cost[k];
                busy[t] += 1;
                ++steps_total;
                if (!live[t] && !pending[t].empty()) {  // finish its v1 iterations first
                    live[t] = 1;
                    ++running;
                }
            }
            if (!any) continue;
            live_warps[kept++] = w;
            ++warp_steps;
            warp_life[w] = tick;
            for (int k = 0; k < BLOCKS; ++k) if (union_blocks >> k & 1) issued += cost[k];
            lane_instructions += lane_cost;
        }
        live_warps.resize(kept);
    }
    long long longest = 0;
    double mean = 0;
    for (int t = 0; t < threads; ++t) {
        if (busy[t] > longest) longest = busy[t];
        mean += busy[t];
    }
    mean /= threads;
    double life_mean = 0;
    long long life_max = 0;
    for (int w = 0; w < warps; ++w) {
        life_mean += warp_life[w];
        if (warp_life[w] > life_max) life_max = warp_life[w];
    }
    life_mean /= warps;
    std::printf("prefixes=%llu threads=%d policy=%s nodes=%llu warp_steps=%lld active_lanes=%.2f "
                "issued_per_node=%.2f lane_instr_per_node=%.2f tail=%.3f ticks=%lld warp_life_ratio=%.3f\n",
                count, threads, dynamic ? "dynamic" : "static", nodes, warp_steps,
                issued > 0 ? lane_instructions / issued : 0.0, nodes ? issued / nodes : 0.0,
                nodes ? lane_instructions / nodes : 0.0, mean > 0 ? longest / mean : 0.0, tick,
                life_max > 0 ? life_mean / life_max : 0.0);
    return 0;
}
