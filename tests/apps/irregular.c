/*
 * irregular.c - messages of irregular sizes around a ring.
 *
 * Every iteration each rank sends n long longs to rank+1 and receives n from
 * rank-1 (periodic) in one MPI_Sendrecv, where n = count_of(iteration) is drawn
 * from a 64-bit LCG: between 1 and 61, the same on every rank (so the receiver
 * knows it), irregular from one iteration to the next. Element i sent by rank r
 * in iteration it is r * 1000000 + it * 100 + i; every rank checks what it
 * receives. Per iteration: 1 MPI_Sendrecv.
 */
#include "tally.h"

#define MAXN 64

static int count_of(int it)
{
    unsigned long long x = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)it;
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 29;
    return 1 + (int)((x >> 33) % 61);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    long long sbuf[MAXN], rbuf[MAXN], sum = 0;
    int fail = 0;
    for (int it = 0; it < iters; it++) {
        int n = count_of(it);
        for (int i = 0; i < n; i++) {
            sbuf[i] = (long long)rank * 1000000 + it * 100 + i;
            rbuf[i] = -1;
        }
        MPI(Sendrecv, sbuf, n, MPI_LONG_LONG, right, 3, rbuf, n, MPI_LONG_LONG, left, 3, MPI_COMM_WORLD,
            MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            if (rbuf[i] != (long long)left * 1000000 + it * 100 + i)
                fail = 1;
            sum += rbuf[i];
        }
    }

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL wrong data received");
    else
        tally_result(rank, "size=%d iters=%d sum=%lld", size, iters, sum);
    tally_print(rank);
    return fail;
}
