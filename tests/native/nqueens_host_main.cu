// Host harness for kernels/nqueens.cu: runs the kernel's __host__ __device__ search on the
// CPU, so the kernel logic can be tested without a GPU.
//
//   nqueens_host_main PREFIXES_IN WEIGHTS_OUT [SPLIT]
//
// SPLIT (0, 1 or 2, default 0): the work items cut each prefix into, as in the kernel.
// PREFIXES_IN (little-endian, no padding):
//   char[8] "NQPREF2\0" | uint32 n | uint32 mark | uint64 P
//   | uint32 records[P * 4]   (left, down, right, rule word of each prefix, as the kernel reads them)
// WEIGHTS_OUT:
//   uint64 weights[P]   (and uint64 nodes[P] when built with -DNQ_COUNT_NODES)
//
// Exit status 0 on success, 2 on a usage or file-format error.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../kernels/nqueens.cu"

namespace {

const char kMagic[8] = {'N', 'Q', 'P', 'R', 'E', 'F', '2', '\0'};

struct PrefixFile {
    unsigned n = 0;
    unsigned mark = 0;
    unsigned long long count = 0;
    std::vector<nq_u32> records;
};

bool read_prefixes(const char* path, PrefixFile& file) {
    std::FILE* f = std::fopen(path, "rb");
    if (!f) return false;
    char magic[8];
    bool ok = std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, kMagic, 8) == 0 &&
              std::fread(&file.n, 4, 1, f) == 1 && std::fread(&file.mark, 4, 1, f) == 1 &&
              std::fread(&file.count, 8, 1, f) == 1;
    ok = ok && file.n >= 4 && file.n <= NQ_MAX_N && file.mark >= 2 && file.mark <= file.n - 1;
    if (ok) {
        const unsigned long long words = file.count * NQ_RECORD_WORDS;
        file.records.resize(words);
        ok = words == 0 || std::fread(file.records.data(), 4, words, f) == words;
    }
    std::fclose(f);
    return ok;
}

bool write_array(std::FILE* f, const std::vector<nq_u64>& data) {
    return data.empty() || std::fwrite(data.data(), sizeof(nq_u64), data.size(), f) == data.size();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        std::fprintf(stderr, "usage: %s PREFIXES_IN WEIGHTS_OUT [SPLIT]\n", argv[0]);
        return 2;
    }
    const int split = argc == 4 ? std::atoi(argv[3]) : 0;
    PrefixFile in;
    if (!read_prefixes(argv[1], in)) {
        std::fprintf(stderr, "%s: cannot read a valid prefix file\n", argv[1]);
        return 2;
    }
    const int n = (int)in.n;
    const int mark = (int)in.mark;
    if (split < 0 || split > 2 || mark + split > n - 1) {
        std::fprintf(stderr, "split %d does not fit n=%d mark=%d\n", split, n, mark);
        return 2;
    }
    std::vector<nq_u64> weights(in.count);
    nq_u32 memory[5 * NQ_MAX_N];  // at least nq_thread_words(n, mark + split)
    const NqMemory mem = nq_thread_memory(memory, n, mark + split, 0);
#ifdef NQ_COUNT_NODES
    // node counts are only summed by a worker: count prefix by prefix here
    std::vector<nq_u64> nodes(in.count);
    for (unsigned long long p = 0; p < in.count; ++p) {
        const NqPrefixes one = nq_prefixes(n, mark, split, 1, &in.records[p * NQ_RECORD_WORDS]);
        nq_u64 counter = 0;
        nodes[p] = nq_run_thread(one, &counter, mem, &weights[p]).nodes;
    }
#else
    // one worker over all prefixes, as a GPU thread runs it when it is alone in the grid
    const NqPrefixes set = nq_prefixes(n, mark, split, (long long)in.count, in.records.data());
    nq_u64 counter = 0;
    nq_run_thread(set, &counter, mem, weights.data());
#endif
    std::FILE* f = std::fopen(argv[2], "wb");
    bool ok = f && write_array(f, weights);
#ifdef NQ_COUNT_NODES
    ok = ok && write_array(f, nodes);
#endif
    if (f) ok = (std::fclose(f) == 0) && ok;
    if (!ok) {
        std::fprintf(stderr, "%s: cannot write the weights\n", argv[2]);
        return 2;
    }
    return 0;
}
