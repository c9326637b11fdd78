// nqueens_symmetric.cu - count the N-Queens solutions fixed by the half turn (F180) and by the
// quarter turn (F90) below host-enumerated prefixes, for Burnside's count of the classes.
//
// Specification: docs/nqueens-method.md ("Classes by Burnside's lemma"). Its NumPy twin is
// gpuqueens/problems/nqueens/symmetric.py (count_symmetric_below); the tests compare the two
// prefix by prefix.
//
// A half-turn-symmetric solution is decided by its top n/2 rows: each queen (r, c) comes with
// its partner (n-1-r, n-1-c), and for odd n the middle row's queen is the centre. The host
// places rows 0..rows-1 (row 0 left of the middle only: the counts are halves) and packs each
// prefix into NQS_RECORD_WORDS words: down (used columns), diag (used diagonals r+c, 64 bits:
// low word, high word), anti (used diagonals c-r+n-1, likewise) and the columns of the placed
// rows, one byte each (16 bytes). One thread searches a prefix's rows rows..n/2-1 depth first
// with a small stack in local memory; a leaf is an F180 placement, and an F90 one if the
// quarter turn (r, c) -> (c, n-1-r) maps it onto itself.
//
// This search is tiny next to the main one (2.4e6 nodes at n = 20, 2.3e7 at n = 22): it is on
// the GPU so that the host's NumPy search (about a second at n = 21..23) leaves the critical
// path, not for its own speed.
//
// Supports 4 <= n <= 32 and 1 <= rows <= n/2.

typedef unsigned int nq_u32;
typedef unsigned long long nq_u64;

#define NQS_RECORD_WORDS 9
#define NQS_MAX_HALF 16

__host__ __device__ inline int nqs_lowest_column(nq_u32 bit) {
#ifdef __CUDA_ARCH__
    return __ffs(bit) - 1;
#else
    return __builtin_ctz(bit);
#endif
}

// Free columns of `row` (and so of its partner row): not attacked, and not on a diagonal
// with the queen's own partner (columns row and n-1-row).
__host__ __device__ inline nq_u32 nqs_free(int n, int row, nq_u32 down, nq_u64 diag, nq_u64 anti) {
    const nq_u32 mask = (nq_u32)((1ull << n) - 1ull);
    const nq_u32 attacked = down | (nq_u32)(diag >> row) | (nq_u32)(anti >> (n - 1 - row));
    return ~attacked & mask & ~((1u << (n - 1 - row)) | (1u << row));
}

// Is the placement whose top rows hold `cols` fixed by the quarter turn? It maps (r, c) to
// (c, n-1-r), so it is when pos[pos[r]] == n-1-r for every top row r (the other rows follow).
__host__ __device__ inline bool nqs_quarter_turn_fixed(int n, const unsigned char* cols) {
    const int half = n / 2;
    for (int r = 0; r < half; ++r) {
        const int c = cols[r];
        const int image = c < half ? cols[c] : (c == half && (n & 1)) ? half : n - 1 - cols[n - 1 - c];
        if (image != n - 1 - r) return false;
    }
    return true;
}

// Add to f180 and f90 the placements below the prefix record `rec` (halves, as on the host).
__host__ __device__ inline void nqs_count(int n, int rows, const nq_u32* rec, nq_u64& f180, nq_u64& f90) {
    const int half = n / 2;
    const bool quarter = (n & 3) <= 1;  // otherwise no solution is fixed by the quarter turn
    unsigned char cols[NQS_MAX_HALF];
    for (int k = 0; k < NQS_MAX_HALF; ++k) cols[k] = (unsigned char)(rec[5 + k / 4] >> (8 * (k % 4)));
    if (rows == half) {  // the prefix is a whole placement
        ++f180;
        f90 += quarter && nqs_quarter_turn_fixed(n, cols);
        return;
    }
    // level k: the untried columns of row k and the masks row k was entered with
    nq_u32 untried[NQS_MAX_HALF], down[NQS_MAX_HALF];
    nq_u64 diag[NQS_MAX_HALF], anti[NQS_MAX_HALF];
    int row = rows;
    down[row] = rec[0];
    diag[row] = rec[1] | (nq_u64)rec[2] << 32;
    anti[row] = rec[3] | (nq_u64)rec[4] << 32;
    untried[row] = nqs_free(n, row, down[row], diag[row], anti[row]);
    for (;;) {
        if (untried[row] == 0) {
            if (row == rows) return;
            --row;
            continue;
        }
        const nq_u32 bit = untried[row] & (0u - untried[row]);
        untried[row] ^= bit;
        const int c = nqs_lowest_column(bit);
        cols[row] = (unsigned char)c;
        if (row + 1 == half) {  // the last top row: a leaf
            ++f180;
            f90 += quarter && nqs_quarter_turn_fixed(n, cols);
            continue;
        }
        const nq_u32 d = down[row] | bit | (1u << (n - 1 - c));
        const nq_u64 d1 = diag[row] | (1ull << (row + c)) | (1ull << (2 * n - 2 - row - c));
        const nq_u64 d2 = anti[row] | (1ull << (n - 1 - row + c)) | (1ull << (n - 1 + row - c));
        ++row;
        down[row] = d;
        diag[row] = d1;
        anti[row] = d2;
        untried[row] = nqs_free(n, row, d, d1, d2);
    }
}

// Sum over prefixes [0, count): sums[0] += the F180 halves, sums[1] += the F90 halves. Any
// grid: each thread takes the prefixes thread, thread + all threads, ...
extern "C" __global__ void nqueens_symmetric(int n, int rows, long long count, const nq_u32* __restrict__ records,
                                             nq_u64* __restrict__ sums) {
    nq_u64 f180 = 0, f90 = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < count; p += stride) {
        nqs_count(n, rows, records + p * NQS_RECORD_WORDS, f180, f90);
    }
    if (f180) atomicAdd(&sums[0], f180);
    if (f90) atomicAdd(&sums[1], f90);
}

// Same search, two counts per prefix (counts[2p], counts[2p+1], zeroed before): for tests.
extern "C" __global__ void nqueens_symmetric_each(int n, int rows, long long count,
                                                  const nq_u32* __restrict__ records, nq_u64* __restrict__ counts) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < count; p += stride) {
        nqs_count(n, rows, records + p * NQS_RECORD_WORDS, counts[2 * p], counts[2 * p + 1]);
    }
}
