// Host harness for kernels/nqueens.cu: runs the kernel's __host__ __device__ subtree search
// on the CPU, one prefix at a time, so the kernel logic can be tested without a GPU.
//
//   nqueens_host_main PREFIXES_IN COUNTS_OUT
//
// PREFIXES_IN (little-endian, no padding):
//   char[8] "NQPREF1\0" | uint32 n | uint32 mark | uint64 P
//   | uint32 left[P] | uint32 down[P] | uint32 right[P] | uint8 b1[P] | uint8 corner[P]
//   | uint8 cols[P * mark]  (row-major: prefix p's columns are cols[p*mark .. p*mark+mark-1])
// COUNTS_OUT:
//   uint64 totals[P] | uint64 uniques[P]   (and uint64 nodes[P] when built with -DNQ_COUNT_NODES)
//
// Exit status 0 on success, 2 on a usage or file-format error.

#include <cstdio>
#include <cstring>
#include <vector>

#include "../../kernels/nqueens.cu"

namespace {

const char kMagic[8] = {'N', 'Q', 'P', 'R', 'E', 'F', '1', '\0'};

struct PrefixFile {
    unsigned n = 0;
    unsigned mark = 0;
    unsigned long long count = 0;
    std::vector<nq_u32> left, down, right;
    std::vector<unsigned char> b1, corner, cols;
};

template <typename T>
bool read_array(std::FILE* f, std::vector<T>& out, unsigned long long size) {
    out.resize(size);
    return size == 0 || std::fread(out.data(), sizeof(T), size, f) == size;
}

template <typename T>
bool write_array(std::FILE* f, const std::vector<T>& data) {
    return data.empty() || std::fwrite(data.data(), sizeof(T), data.size(), f) == data.size();
}

bool read_prefixes(const char* path, PrefixFile& file) {
    std::FILE* f = std::fopen(path, "rb");
    if (!f) return false;
    char magic[8];
    bool ok = std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, kMagic, 8) == 0 &&
              std::fread(&file.n, 4, 1, f) == 1 && std::fread(&file.mark, 4, 1, f) == 1 &&
              std::fread(&file.count, 8, 1, f) == 1;
    ok = ok && file.n >= 4 && file.n <= NQ_MAX_N && file.mark >= 2 && file.mark <= file.n - 1;
    const unsigned long long p = file.count;
    ok = ok && read_array(f, file.left, p) && read_array(f, file.down, p) &&
         read_array(f, file.right, p) && read_array(f, file.b1, p) &&
         read_array(f, file.corner, p) && read_array(f, file.cols, p * file.mark);
    std::fclose(f);
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s PREFIXES_IN COUNTS_OUT\n", argv[0]);
        return 2;
    }
    PrefixFile in;
    if (!read_prefixes(argv[1], in)) {
        std::fprintf(stderr, "%s: cannot read a valid prefix file\n", argv[1]);
        return 2;
    }
    const int n = (int)in.n;
    const int mark = (int)in.mark;
    std::vector<nq_u64> totals(in.count), uniques(in.count);
#ifdef NQ_COUNT_NODES
    std::vector<nq_u64> nodes(in.count);
#endif
    nq_u32 stack[2 * NQ_MAX_N];
    const NqPrefixes set = {n, mark, (long long)in.count, in.left.data(), in.down.data(),
                            in.right.data(), in.cols.data(), in.b1.data(), in.corner.data()};
#ifdef NQ_COUNT_NODES
    // node counts are only summed by the worker loop: count prefix by prefix here
    for (unsigned long long p = 0; p < in.count; ++p) {
        const NqPrefixes one = {n, mark, 1, &in.left[p], &in.down[p], &in.right[p],
                                &in.cols[p * in.mark], &in.b1[p], &in.corner[p]};
        const NqEachOut each = {&totals[p], &uniques[p]};
        nodes[p] = nq_count_prefixes(one, 0, 1, stack, 1, each).nodes;
    }
#else
    // one worker over all prefixes, as a GPU thread runs it (step 1 instead of the grid size)
    const NqEachOut each = {totals.data(), uniques.data()};
    nq_count_prefixes(set, 0, 1, stack, 1, each);
#endif
    std::FILE* f = std::fopen(argv[2], "wb");
    bool ok = f && write_array(f, totals) && write_array(f, uniques);
#ifdef NQ_COUNT_NODES
    ok = ok && write_array(f, nodes);
#endif
    if (f) ok = (std::fclose(f) == 0) && ok;
    if (!ok) {
        std::fprintf(stderr, "%s: cannot write the counts\n", argv[2]);
        return 2;
    }
    return 0;
}
