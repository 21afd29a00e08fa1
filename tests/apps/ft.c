/*
 * ft.c - all-to-all transposes in the style of NAS FT.
 *
 * Rank r holds a P x B block X_r (row p is what it sends to rank p); together
 * the ranks hold a P x P x B array. Per iteration:
 *   1. MPI_Alltoall of B long longs per peer (a global transpose):
 *        Y_r[p] = X_p[r];  X_r[p][k] = (7 Y_r[p][k] + 13 r + 5 p + k + it) mod 1000003
 *   2. MPI_Alltoallv with the same count c = 1 + it % 3 for every peer (it
 *      depends only on the iteration, so the exchange stays regular), sending
 *      the first c elements of each row (sdispls p*B, rdispls p*c):
 *        Z_r[p] = X_p[r][0..c);  X_r[p][j] = (X_r[p][j] + 3 Z_r[p][j]) mod 1000003
 * Integer values: exact. Every rank simulates the global array serially with
 * the same update functions and checks its X_r and a checksum of all it received.
 *
 * Per-iteration calls: 1 Alltoall, 1 Alltoallv.
 */
#include "tally.h"

#define B 4
#define MOD 1000003LL

/* update rank r's block x (P x B) from y, what it received in the Alltoall */
static void step1(long long *x, const long long *y, int r, int P, int it)
{
    for (int p = 0; p < P; p++)
        for (int k = 0; k < B; k++)
            x[p * B + k] = (7 * y[p * B + k] + 13LL * r + 5LL * p + k + it) % MOD;
}

/* update rank r's block x from z (P x c, packed), what it received in the Alltoallv */
static void step2(long long *x, const long long *z, int P, int c)
{
    for (int p = 0; p < P; p++)
        for (int j = 0; j < c; j++)
            x[p * B + j] = (x[p * B + j] + 3 * z[p * c + j]) % MOD;
}

static long long sum(const long long *a, int n, long long acc)
{
    for (int i = 0; i < n; i++)
        acc = (acc + a[i]) % MOD;
    return acc;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20), P = size;
    size_t n = (size_t)P * B;
    long long *x = malloc(sizeof(long long) * n), *y = malloc(sizeof(long long) * n);
    int *counts = malloc(sizeof(int) * (size_t)P), *sdispls = malloc(sizeof(int) * (size_t)P),
        *rdispls = malloc(sizeof(int) * (size_t)P);
    for (size_t i = 0; i < n; i++)
        x[i] = (rank * 1000LL + (long long)i) % MOD;

    long long recvsum = 0;
    for (int it = 0; it < iters; it++) {
        MPI(Alltoall, x, B, MPI_LONG_LONG, y, B, MPI_LONG_LONG, MPI_COMM_WORLD);
        step1(x, y, rank, P, it);
        recvsum = sum(y, P * B, recvsum);
        int c = 1 + it % 3;
        for (int p = 0; p < P; p++) {
            counts[p] = c;
            sdispls[p] = p * B;
            rdispls[p] = p * c;
        }
        MPI(Alltoallv, x, counts, sdispls, MPI_LONG_LONG, y, counts, rdispls, MPI_LONG_LONG, MPI_COMM_WORLD);
        step2(x, y, P, c);
        recvsum = sum(y, P * c, recvsum);
    }

    /* serial reference: the whole P x P x B array, g[r] = X_r */
    long long *g = malloc(sizeof(long long) * n * (size_t)P), refsum = 0;
    long long *h = malloc(sizeof(long long) * n * (size_t)P); /* h[r] = what rank r receives */
    for (int r = 0; r < P; r++)
        for (size_t i = 0; i < n; i++)
            g[r * n + i] = (r * 1000LL + (long long)i) % MOD;
    for (int it = 0; it < iters; it++) {
        int c = 1 + it % 3;
        for (int r = 0; r < P; r++)
            for (int p = 0; p < P; p++)
                memcpy(&h[r * n + (size_t)p * B], &g[p * n + (size_t)r * B], sizeof(long long) * B);
        for (int r = 0; r < P; r++) {
            step1(&g[r * n], &h[r * n], r, P, it);
            if (r == rank)
                refsum = sum(&h[r * n], P * B, refsum);
        }
        for (int r = 0; r < P; r++)
            for (int p = 0; p < P; p++)
                memcpy(&h[r * n + (size_t)p * c], &g[p * n + (size_t)r * B], sizeof(long long) * (size_t)c);
        for (int r = 0; r < P; r++) {
            step2(&g[r * n], &h[r * n], P, c);
            if (r == rank)
                refsum = sum(&h[r * n], P * c, refsum);
        }
    }
    int bad = memcmp(x, &g[(size_t)rank * n], sizeof(long long) * n) != 0 || refsum != recvsum;
    long long xsum = sum(x, P * B, 0);
    free(g); free(h); free(x); free(y); free(counts); free(sdispls); free(rdispls);

    tally_timed_finalize(rank);
    if (bad)
        tally_result(rank, "FAIL block or received checksum %lld (expected %lld) differs from serial reference",
                     recvsum, refsum);
    else
        tally_result(rank, "size=%d iters=%d block_sum=%lld received_sum=%lld", size, iters, xsum, recvsum);
    tally_print(rank);
    return bad;
}
