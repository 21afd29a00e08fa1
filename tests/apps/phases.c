/*
 * phases.c - recording switched off and on by the program: MPI_Pcontrol.
 *
 * A warm-up of 2 ring exchanges (MPI_Sendrecv) runs between MPI_Pcontrol(0) and
 * MPI_Pcontrol(1). Then each iteration reads the clock (MPI_Wtime), makes one ring
 * exchange and one MPI_Allreduce of the ring's values; odd iterations wrap their
 * Allreduce in MPI_Pcontrol(0) ... MPI_Pcontrol(1). A final MPI_Barrier.
 * Every rank checks the Allreduce's sums against the values it can compute itself.
 */
#include "tally.h"

static long long exchange(long long v, int left, int right)
{
    long long w = 0;
    MPI(Sendrecv, &v, 1, MPI_LONG_LONG, right, 3, &w, 1, MPI_LONG_LONG, left, 3, MPI_COMM_WORLD,
        MPI_STATUS_IGNORE);
    return w;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 4);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI(Pcontrol, 0);
    for (int w = 0; w < 2; w++)
        exchange(rank, left, right);
    MPI(Pcontrol, 1);

    int fail = 0;
    double clock = 0;
    for (int it = 0; it < iters; it++) {
        clock += MPI(Wtime);
        long long got = exchange(rank + it, left, right), sum = 0;
        if (got != left + it)
            fail = 1;
        if (it % 2)
            MPI(Pcontrol, 0);
        MPI(Allreduce, &got, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (it % 2)
            MPI(Pcontrol, 1);
        /* sum over ranks r of (r + it) */
        if (sum != (long long)size * (size - 1) / 2 + (long long)size * it)
            fail = 1;
    }
    MPI(Barrier, MPI_COMM_WORLD);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL ring or sum wrong");
    else
        tally_result(rank, "size=%d iters=%d clock_positive=%d", size, iters, clock > 0);
    tally_print(rank);
    return fail;
}
