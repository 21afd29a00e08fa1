/*
 * butterfly.c - hand-written recursive doubling and binomial-tree reduction.
 *
 * Needs P a power of two (1, 2, 4, .., 64); otherwise every rank finalizes,
 * prints a FAIL line and exits 1. Per iteration:
 *   (a) allreduce by recursive doubling: for k = 1, 2, 4, .. < P:
 *       MPI_Sendrecv of one long long with r xor k, adding mod 1000003;
 *   (b) reduction to rank 0 along a binomial tree: for k = 1, 2, 4, .. < P:
 *       if r % 2k == k: MPI_Send to r-k (and nothing more this iteration);
 *       else if r % 2k == 0 and r+k < P: MPI_Recv from r+k and add.
 * then v = (17 v + allreduced sum + r) mod 1000003. Integer values: exact.
 * Every rank checks its value and the allreduced sums against a serial
 * simulation; rank 0 also checks every tree-reduced sum.
 *
 * Per-iteration calls: log2(P) Sendrecv, plus rank 0: log2(P) Recv;
 * rank r > 0: 1 Send and ctz(r) Recv (ctz = number of trailing zero bits).
 */
#include "tally.h"

#define MOD 1000003LL

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    if (size & (size - 1)) {
        tally_timed_finalize(rank);
        tally_result(rank, "FAIL butterfly needs a power of two ranks, got %d", size);
        tally_print(rank);
        return 1;
    }

    long long v = rank + 1, a, b, x, ahash = 0, thash = 0;
    for (int it = 0; it < iters; it++) {
        a = v; /* (a) recursive doubling */
        for (int k = 1; k < size; k *= 2) {
            MPI(Sendrecv, &a, 1, MPI_LONG_LONG, rank ^ k, 1, &b, 1, MPI_LONG_LONG, rank ^ k, 1, MPI_COMM_WORLD,
                MPI_STATUS_IGNORE);
            a = (a + b) % MOD;
        }
        x = (v * (rank + 1) + it) % MOD; /* (b) binomial tree to rank 0 */
        for (int k = 1; k < size; k *= 2) {
            if (rank % (2 * k) == k) {
                MPI(Send, &x, 1, MPI_LONG_LONG, rank - k, 2, MPI_COMM_WORLD);
            } else if (rank % (2 * k) == 0 && rank + k < size) {
                MPI(Recv, &b, 1, MPI_LONG_LONG, rank + k, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                x = (x + b) % MOD;
            }
        }
        v = (17 * v + a + rank) % MOD;
        ahash = (ahash * 31 + a) % MOD;
        if (rank == 0)
            thash = (thash * 31 + x) % MOD;
    }

    /* serial reference */
    long long *V = malloc(sizeof(long long) * (size_t)size), refa = 0, reft = 0;
    for (int r = 0; r < size; r++)
        V[r] = r + 1;
    for (int it = 0; it < iters; it++) {
        long long A = 0, X = 0;
        for (int r = 0; r < size; r++) {
            A = (A + V[r]) % MOD;
            X = (X + (V[r] * (r + 1) + it) % MOD) % MOD;
        }
        for (int r = 0; r < size; r++)
            V[r] = (17 * V[r] + A + r) % MOD;
        refa = (refa * 31 + A) % MOD;
        reft = (reft * 31 + X) % MOD;
    }
    int bad = v != V[rank] || ahash != refa || (rank == 0 && thash != reft);
    free(V);

    tally_timed_finalize(rank);
    if (bad)
        tally_result(rank, "FAIL value=%lld allreduce_hash=%lld tree_hash=%lld differ from serial reference "
                     "(allreduce_hash %lld tree_hash %lld)", v, ahash, thash, refa, reft);
    else if (rank == 0)
        tally_result(rank, "size=%d iters=%d value=%lld allreduce_hash=%lld tree_hash=%lld", size, iters, v, ahash,
                     thash);
    else
        tally_result(rank, "size=%d iters=%d value=%lld allreduce_hash=%lld", size, iters, v, ahash);
    tally_print(rank);
    return bad;
}
