/*
 * ep.c - embarrassingly parallel kernel in the style of NAS EP, with rooted
 * collectives.
 *
 * Rank 0 MPI_Bcast's a seed parameter. Each rank then runs its own 64-bit LCG
 * (seeded from the parameter and its rank) and per iteration draws NPAIRS
 * pairs (a, b) in [0, 2^15), counting the hits a^2 + b^2 < 2^30 and summing
 * a + b mod 1000003; one MPI_Allreduce (2 long longs, SUM) per iteration
 * combines the tallies into a history hash. At the end: MPI_Reduce (SUM, root
 * 0) of every rank's hit count, MPI_Gather to rank 0 of every rank's final LCG
 * state; rank 0 then recomputes all ranks serially, checks the reduced and
 * gathered values, and MPI_Scatter's to every rank its expected (hits, hash),
 * which each rank checks against its own.
 *
 * Integer arithmetic only: every value is exact.
 * Per-iteration calls: 1 Allreduce.
 */
#include "tally.h"

#define NPAIRS 256
#define MOD 1000003LL
typedef unsigned long long u64;

static u64 seed_of(long long param, int r) { return (u64)param * 2654435761ULL + (u64)r * 0x9E3779B97F4A7C15ULL + 1; }

/* 15 random bits */
static long long lcg(u64 *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (long long)(*s >> 49);
}

/* one iteration of rank-local work: t[0] = hits, t[1] = sum of a + b mod MOD */
static void draw(u64 *s, long long t[2])
{
    t[0] = t[1] = 0;
    for (int i = 0; i < NPAIRS; i++) {
        long long a = lcg(s), b = lcg(s);
        t[0] += a * a + b * b < (1LL << 30);
        t[1] = (t[1] + a + b) % MOD;
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);

    long long param = rank == 0 ? 271828 : 0;
    MPI(Bcast, &param, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    u64 s = seed_of(param, rank);
    long long hits = 0, hash = 0, t[2], g[2];
    for (int it = 0; it < iters; it++) {
        draw(&s, t);
        hits += t[0];
        MPI(Allreduce, t, g, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        hash = (hash * 31 + g[0] * 7 + g[1]) % MOD;
    }

    long long total = 0, *expect = malloc(sizeof(long long) * 2 * (size_t)size), mine[2];
    u64 *states = malloc(sizeof(u64) * (size_t)size);
    MPI(Reduce, &hits, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI(Gather, &s, 1, MPI_UNSIGNED_LONG_LONG, states, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    int badroot = -1; /* rank 0: first rank whose gathered state is wrong, or size for the reduced total */
    if (rank == 0) {
        /* serial reference of every rank, with the fixed parameter */
        u64 *rs = malloc(sizeof(u64) * (size_t)size);
        long long refhash = 0, reftotal = 0;
        for (int r = 0; r < size; r++) {
            rs[r] = seed_of(271828, r);
            expect[2 * r] = 0;
        }
        for (int it = 0; it < iters; it++) {
            long long gt[2] = {0, 0};
            for (int r = 0; r < size; r++) {
                draw(&rs[r], t);
                expect[2 * r] += t[0];
                gt[0] += t[0];
                gt[1] += t[1];
            }
            refhash = (refhash * 31 + gt[0] * 7 + gt[1]) % MOD;
        }
        for (int r = size - 1; r >= 0; r--) {
            expect[2 * r + 1] = refhash;
            reftotal += expect[2 * r];
            if (rs[r] != states[r])
                badroot = r;
        }
        if (badroot < 0 && reftotal != total)
            badroot = size;
        free(rs);
    }
    MPI(Scatter, expect, 2, MPI_LONG_LONG, mine, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    free(expect);
    free(states);

    tally_timed_finalize(rank);
    int fail = badroot >= 0 || mine[0] != hits || mine[1] != hash;
    if (badroot >= 0 && badroot < size)
        tally_result(rank, "FAIL gathered LCG state of rank %d differs from serial reference", badroot);
    else if (badroot == size)
        tally_result(rank, "FAIL reduced hit count %lld differs from serial reference", total);
    else if (fail)
        tally_result(rank, "FAIL hits=%lld hash=%lld expected hits=%lld hash=%lld", hits, hash, mine[0], mine[1]);
    else if (rank == 0)
        tally_result(rank, "size=%d iters=%d hits=%lld hash=%lld total_hits=%lld", size, iters, hits, hash, total);
    else
        tally_result(rank, "size=%d iters=%d hits=%lld hash=%lld", size, iters, hits, hash);
    tally_print(rank);
    return fail;
}
