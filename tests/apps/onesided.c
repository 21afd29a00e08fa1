/*
 * onesided.c - one-sided communication with active-target (fence) sync.
 *
 * MPI_Win_allocate of 2 long longs per rank: slot 0 is written by the left
 * neighbour with MPI_Put, slot 1 holds a value published by the owner and read
 * by the right neighbour with MPI_Get. Per iteration: owner stores slot 1,
 * MPI_Win_fence, MPI_Put to right / MPI_Get from left, MPI_Win_fence, check.
 * Ends with MPI_Win_free.
 */
#include "tally.h"

static long long pub(int r, int it) { return (long long)r * 100000 + it * 10 + 1; }
static long long put(int r, int it) { return (long long)r * 100000 + it * 10 + 2; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    long long *mem = NULL;
    MPI_Win win;
    MPI(Win_allocate, (MPI_Aint)(2 * sizeof(long long)), (int)sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD,
        &mem, &win);
    mem[0] = mem[1] = -1;

    int fail = 0;
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        long long origin = put(rank, it), got = -1;
        mem[1] = pub(rank, it);
        MPI(Win_fence, 0, win);
        MPI(Put, &origin, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
        MPI(Get, &got, 1, MPI_LONG_LONG, left, 1, 1, MPI_LONG_LONG, win);
        MPI(Win_fence, 0, win);
        if (mem[0] != put(left, it) || got != pub(left, it))
            fail = 1;
        sum += mem[0] + got;
    }
    MPI(Win_free, &win);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL wrong value in window or from MPI_Get");
    else
        tally_result(rank, "left=%d iters=%d sum=%lld", left, iters, sum);
    tally_print(rank);
    return fail;
}
