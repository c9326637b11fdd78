// border_first_nodes.c - how big is the search tree when the border queens are fixed first?
//
// A lead for the GPU engine was to reduce by symmetry the way Q27 and NQueensFAF do: place
// the four border queens first (the queens of row 0, row n-1, column 0 and column n-1),
// keep one "constellation" of each symmetry orbit, weigh its solutions by the orbit's size,
// and search the inner rows. That needs no comparison at the leaves, but is its tree
// smaller than the one gpuqueens searches (docs/nqueens-method.md, cases C and S)?
//
// This program counts, exactly, for one n:
//   * the plain tree: every queen placed by a row-by-row search with no symmetry rule
//     (all rows, and rows 7..n-1, which is what docs/performance.md's node table counts);
//   * the border-first tree: the queens placed in the inner rows, summed over one
//     constellation per orbit, with every square a border queen attacks blocked from the
//     start (the most the border queens can prune). Its total is checked: the sum of
//     orbit size x solutions must equal the plain count.
//
//   mkdir -p out && cc -O2 -o out/border_first_nodes bench/border_first_nodes.c && out/border_first_nodes 16
//
// n = 16 takes about 20 seconds, 17 two minutes, 18 twenty minutes (one core); results in
// docs/performance.md.
#include <stdio.h>
#include <stdlib.h>

typedef unsigned long long u64;

static int n;
static unsigned full;

// The plain tree.
static u64 plain_nodes, plain_nodes_from_row7, plain_solutions;

static void plain(int row, unsigned down, unsigned left, unsigned right) {
    unsigned free = full & ~(down | left | right);
    while (free) {
        unsigned bit = free & -free;
        free ^= bit;
        plain_nodes++;
        if (row >= 7) plain_nodes_from_row7++;
        if (row == n - 1) plain_solutions++;
        else plain(row + 1, down | bit, ((left | bit) << 1) & full, (right | bit) >> 1);
    }
}

// The inner search of one constellation: rows 1..n-2; rows holding a border queen are
// stepped through; blocked[row] holds the squares the border queens attack in that row.
static unsigned border_queen[32], blocked[32];
static u64 inner_nodes;

static u64 inner(int row, unsigned down, unsigned left, unsigned right) {
    if (row == n - 1) return (border_queen[row] & (down | left | right)) ? 0 : 1;
    unsigned bit = border_queen[row];
    if (bit) {
        if (bit & (down | left | right)) return 0;
        return inner(row + 1, down | bit, ((left | bit) << 1) & full, (right | bit) >> 1);
    }
    unsigned free = full & ~(down | left | right | blocked[row]);
    u64 solutions = 0;
    while (free) {
        bit = free & -free;
        free ^= bit;
        inner_nodes++;
        solutions += inner(row + 1, down | bit, ((left | bit) << 1) & full, (right | bit) >> 1);
    }
    return solutions;
}

// A constellation: `top` = column of the row-0 queen, `bottom` = column of the row-(n-1)
// queen, `west` = row of the column-0 queen, `east` = row of the column-(n-1) queen.
typedef struct { int top, bottom, west, east; } Constellation;

static void transform(int t, int r, int c, int* R, int* C) {
    const int m = n - 1;
    switch (t) {
        case 0: *R = r; *C = c; break;
        case 1: *R = c; *C = m - r; break;
        case 2: *R = m - r; *C = m - c; break;
        case 3: *R = m - c; *C = r; break;
        case 4: *R = r; *C = m - c; break;
        case 5: *R = m - r; *C = c; break;
        case 6: *R = c; *C = r; break;
        default: *R = m - c; *C = m - r; break;
    }
}

static int code(Constellation k) { return ((k.top * 32 + k.bottom) * 32 + k.west) * 32 + k.east; }

static Constellation image(int t, Constellation k) {
    const int rows[4] = {0, n - 1, k.west, k.east}, cols[4] = {k.top, k.bottom, 0, n - 1};
    Constellation out = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        int R, C;
        transform(t, rows[i], cols[i], &R, &C);
        if (R == 0) out.top = C;
        if (R == n - 1) out.bottom = C;
        if (C == 0) out.west = R;
        if (C == n - 1) out.east = R;
    }
    return out;
}

static int attack(int r1, int c1, int r2, int c2) {
    if (r1 == r2 && c1 == c2) return 0;  // one queen counted on two borders (a corner)
    return r1 == r2 || c1 == c2 || abs(r1 - r2) == abs(c1 - c2);
}

int main(int argc, char** argv) {
    n = argc > 1 ? atoi(argv[1]) : 12;
    if (n < 5 || n > 20) {
        fprintf(stderr, "usage: border_first_nodes N   (5 <= N <= 20)\n");
        return 2;
    }
    full = (1u << n) - 1;
    plain(0, 0, 0, 0);

    u64 total = 0;
    long orbits = 0;
    for (int a = 0; a < n; a++) for (int b = 0; b < n; b++)
    for (int w = 0; w < n; w++) for (int e = 0; e < n; e++) {
        // a corner queen belongs to two borders
        if ((a == 0) != (w == 0) || (a == n - 1) != (e == 0)) continue;
        if ((b == 0) != (w == n - 1) || (b == n - 1) != (e == n - 1)) continue;
        const int rows[4] = {0, n - 1, w, e}, cols[4] = {a, b, 0, n - 1};
        int ok = 1;
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++)
                if (attack(rows[i], cols[i], rows[j], cols[j])) ok = 0;
        if (!ok) continue;
        Constellation k = {a, b, w, e};
        int least = 1, distinct = 0, seen[8];
        for (int t = 0; t < 8; t++) {
            const int c = code(image(t, k));
            if (c < code(k)) least = 0;
            int known = 0;
            for (int i = 0; i < distinct; i++) known |= seen[i] == c;
            if (!known) seen[distinct++] = c;
        }
        if (!least) continue;  // one constellation per orbit
        orbits++;
        for (int r = 0; r < n; r++) {
            border_queen[r] = 0;
            blocked[r] = 0;
            for (int i = 0; i < 4; i++) {
                if (rows[i] == r) continue;
                const int d = abs(rows[i] - r);
                blocked[r] |= 1u << cols[i];
                if (cols[i] - d >= 0) blocked[r] |= 1u << (cols[i] - d);
                if (cols[i] + d < n) blocked[r] |= 1u << (cols[i] + d);
            }
        }
        for (int i = 0; i < 4; i++) border_queen[rows[i]] |= 1u << cols[i];
        const unsigned q = border_queen[0];
        total += (u64)distinct * inner(1, q, (q << 1) & full, q >> 1);
    }
    if (total != plain_solutions) {
        fprintf(stderr, "n=%d: border-first total %llu != plain %llu\n", n, total, plain_solutions);
        return 1;
    }
    printf("n=%d solutions %llu\n", n, plain_solutions);
    printf("plain tree: %llu nodes (%llu in rows 7..n-1)\n", plain_nodes, plain_nodes_from_row7);
    printf("border first: %ld constellations, %llu inner nodes = %.4f of the plain tree\n",
           orbits, inner_nodes, (double)inner_nodes / plain_nodes);
    return 0;
}
