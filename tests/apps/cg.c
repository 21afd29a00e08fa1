/*
 * cg.c - the communication of NAS CG on a q x q process grid.
 *
 * Needs P = q*q with q a power of two (1, 4, 16, 64 ranks); otherwise every
 * rank finalizes, prints a FAIL line and exits 1. Rank r = row*q + col holds
 * a vector v of L long longs. Per iteration:
 *   1. transpose exchange: MPI_Sendrecv of v with partner = (r mod q)*q + r/q
 *      (diagonal ranks are their own partner and still call MPI_Sendrecv);
 *      t = (3 w + r + i + it) mod 1000003 from the received w;
 *   2. row sum of t by recursive doubling inside the row: for k = 1, 2, 4, .. < q:
 *      MPI_Sendrecv with r xor k, adding the received vector mod 1000003;
 *   then v = (s + 5 v + col) mod 1000003, s the row sum.
 * Integer values: exact. Every rank simulates all ranks serially and checks
 * its final vector and the history of its row sums.
 *
 * Per-iteration calls: 1 + log2(q) Sendrecv (2 at 4 ranks, 3 at 16, 4 at 64).
 */
#include "tally.h"

#define L 4
#define MOD 1000003LL

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int q = 1;
    while (q * q < size)
        q *= 2;
    if (q * q != size) {
        tally_timed_finalize(rank);
        tally_result(rank, "FAIL cg needs a square of a power of two ranks (1, 4, 16, 64), got %d", size);
        tally_print(rank);
        return 1;
    }
    int row = rank / q, col = rank % q, partner = col * q + row;

    long long v[L], w[L], t[L], s[L], hash = 0;
    for (int i = 0; i < L; i++)
        v[i] = (rank * 10LL + i) % MOD;
    for (int it = 0; it < iters; it++) {
        MPI(Sendrecv, v, L, MPI_LONG_LONG, partner, 1, w, L, MPI_LONG_LONG, partner, 1, MPI_COMM_WORLD,
            MPI_STATUS_IGNORE);
        for (int i = 0; i < L; i++)
            s[i] = (3 * w[i] + rank + i + it) % MOD;
        for (int k = 1; k < q; k *= 2) {
            MPI(Sendrecv, s, L, MPI_LONG_LONG, rank ^ k, 2, t, L, MPI_LONG_LONG, rank ^ k, 2, MPI_COMM_WORLD,
                MPI_STATUS_IGNORE);
            for (int i = 0; i < L; i++)
                s[i] = (s[i] + t[i]) % MOD;
        }
        for (int i = 0; i < L; i++)
            v[i] = (s[i] + 5 * v[i] + col) % MOD;
        hash = (hash * 31 + s[0] + s[L - 1]) % MOD;
    }

    /* serial reference: V[r] for every rank, S[row] the row sums */
    long long *V = malloc(sizeof(long long) * L * (size_t)size), *S = malloc(sizeof(long long) * L * (size_t)q);
    long long refhash = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < L; i++)
            V[r * L + i] = (r * 10LL + i) % MOD;
    for (int it = 0; it < iters; it++) {
        memset(S, 0, sizeof(long long) * L * (size_t)q);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < L; i++)
                S[r / q * L + i] = (S[r / q * L + i] + (3 * V[(r % q * q + r / q) * L + i] + r + i + it) % MOD) % MOD;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < L; i++)
                V[r * L + i] = (S[r / q * L + i] + 5 * V[r * L + i] + r % q) % MOD;
        refhash = (refhash * 31 + S[row * L] + S[row * L + L - 1]) % MOD;
    }
    int bad = memcmp(v, &V[rank * L], sizeof v) != 0 || hash != refhash;
    free(V);
    free(S);

    tally_timed_finalize(rank);
    if (bad)
        tally_result(rank, "FAIL v[0]=%lld hash=%lld differ from serial reference (hash %lld)", v[0], hash, refhash);
    else
        tally_result(rank, "grid=%dx%d row=%d col=%d partner=%d iters=%d v0=%lld hash=%lld", q, q, row, col, partner,
                     iters, v[0], hash);
    tally_print(rank);
    return bad;
}
