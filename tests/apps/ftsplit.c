/*
 * ftsplit.c - the communicators and reductions of NPB FT, whose ranks differ only in the
 * colour and key they pass to MPI_Comm_split and in which of them is the root.
 *
 * MPI_Comm_split(WORLD, 0, rank): one communicator of every rank, in rank order;
 * MPI_Comm_split(WORLD, rank, 0): one of each rank alone. Per iteration: MPI_Alltoall of
 * B long longs per peer on the first, MPI_Allreduce (SUM) of one long long on the second (a
 * rank alone: its own value back), and MPI_Reduce (SUM, root 0) of the iteration's checksum
 * into a local variable every rank passes (only the root's is written, as in FT).
 *
 * Rank 0 checks every reduced checksum against the sum it computes itself.
 *
 * Per-iteration calls: 1 Alltoall, 1 Allreduce, 1 Reduce.
 */
#include "tally.h"

#define B 4

int main(int argc, char **argv)
{
    MPI(Init, &argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 10;
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm all, alone;
    MPI(Comm_split, MPI_COMM_WORLD, 0, rank, &all);
    MPI(Comm_split, MPI_COMM_WORLD, rank, 0, &alone);
    long long *x = malloc(sizeof(long long) * B * (size_t)size);
    long long *y = malloc(sizeof(long long) * B * (size_t)size);
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < B * size; i++)
            x[i] = (long long)rank * 1000 + i + it;
        MPI(Alltoall, x, B, MPI_LONG_LONG, y, B, MPI_LONG_LONG, all);
        long long local = 0, self = 0;
        for (int i = 0; i < B * size; i++)
            local += y[i];
        MPI(Allreduce, &local, &self, 1, MPI_LONG_LONG, MPI_SUM, alone);
        bad |= self != local;
        long long total = 0;
        MPI(Reduce, &local, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            /* y of rank q holds x blocks q of every rank p: p*1000 + q*B + j + it */
            long long expect = 0;
            for (int q = 0; q < size; q++)
                for (int p = 0; p < size; p++)
                    for (int j = 0; j < B; j++)
                        expect += (long long)p * 1000 + q * B + j + it;
            bad |= total != expect;
        }
    }
    free(x);
    free(y);
    MPI(Comm_free, &all);
    MPI(Comm_free, &alone);
    tally_timed_finalize(rank);
    if (bad)
        tally_result(rank, "FAIL a reduction differs from the sum computed here");
    else
        tally_result(rank, "size=%d iters=%d reductions=ok", size, iters);
    tally_print(rank);
    return bad;
}
