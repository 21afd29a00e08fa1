/*
 * randpeers.c - a fresh pseudo-random pairing of the ranks every iteration.
 *
 * Every iteration each rank builds the same permutation of 0..P-1 (Fisher-Yates
 * driven by a 64-bit LCG seeded from a fixed constant and the iteration
 * number), pairs permutation positions 2i and 2i+1, and MPI_Sendrecv's
 * {its rank, its value} with its partner. With odd P the rank at the last
 * position idles that iteration (no MPI call). Values evolve as
 *     v = (31 v + received + 1) mod 1000003   (received = 0 when idle)
 * Each rank runs the serial simulation of all ranks in lockstep, checks every
 * iteration that the received pair is exactly {partner, partner's value}, and
 * at the end that its own value matches the simulation.
 * Deterministic: the pairing depends only on P and the iteration.
 *
 * Per-iteration calls: 1 Sendrecv (even P); with odd P, 0 in the iterations
 * where the rank idles (the RESULT line reports how many).
 */
#include "tally.h"

#define MOD 1000003LL

/* part[r] = partner of rank r in iteration it, or -1 if r idles */
static void pairing(int P, int it, int *perm, int *part)
{
    unsigned long long s = 0x2545F4914F6CDD1DULL ^ ((unsigned long long)(it + 1) * 0x9E3779B97F4A7C15ULL);
    for (int i = 0; i < P; i++)
        perm[i] = i;
    for (int i = P - 1; i > 0; i--) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((s >> 33) % (unsigned long long)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i + 1 < P; i += 2) {
        part[perm[i]] = perm[i + 1];
        part[perm[i + 1]] = perm[i];
    }
    if (P % 2)
        part[perm[P - 1]] = -1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int *perm = malloc(sizeof(int) * (size_t)size), *part = malloc(sizeof(int) * (size_t)size);
    long long *V = malloc(sizeof(long long) * (size_t)size), *Vn = malloc(sizeof(long long) * (size_t)size);
    for (int r = 0; r < size; r++)
        V[r] = (r * 7919LL + 1) % MOD; /* serial state of every rank; V[rank] is this rank's value */

    int idle = 0, bad_it = -1;
    long long v = V[rank], got[2] = {0, 0}, badgot[2] = {0, 0}, sum = 0;
    for (int it = 0; it < iters; it++) {
        pairing(size, it, perm, part);
        int p = part[rank];
        if (p >= 0) {
            long long mine[2] = {rank, v};
            MPI(Sendrecv, mine, 2, MPI_LONG_LONG, p, 3, got, 2, MPI_LONG_LONG, p, 3, MPI_COMM_WORLD,
                MPI_STATUS_IGNORE);
            if ((got[0] != p || got[1] != V[p]) && bad_it < 0) {
                bad_it = it;
                memcpy(badgot, got, sizeof got);
            }
            sum = (sum + got[1]) % MOD;
        } else {
            idle++;
            got[1] = 0;
        }
        v = (31 * v + got[1] + 1) % MOD;
        for (int r = 0; r < size; r++)
            Vn[r] = (31 * V[r] + (part[r] >= 0 ? V[part[r]] : 0) + 1) % MOD;
        long long *t = V; V = Vn; Vn = t;
    }
    int bad = bad_it >= 0 || v != V[rank];
    long long ref = V[rank];
    free(perm); free(part); free(V); free(Vn);

    tally_timed_finalize(rank);
    if (bad_it >= 0)
        tally_result(rank, "FAIL iteration %d: received {%lld, %lld} from the wrong rank or with the wrong value",
                     bad_it, badgot[0], badgot[1]);
    else if (bad)
        tally_result(rank, "FAIL value=%lld expected %lld", v, ref);
    else
        tally_result(rank, "size=%d iters=%d idle=%d value=%lld received_sum=%lld", size, iters, idle, v, sum);
    tally_print(rank);
    return bad;
}
