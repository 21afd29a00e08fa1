/*
 * ring.c - pass a value around a ring with MPI_Sendrecv.
 *
 * Each iteration every rank sends its value to rank+1 and receives from
 * rank-1 (periodic) in one MPI_Sendrecv, then mixes it:
 *     v = (received * 31 + rank + 1) mod 1000003
 * Every rank simulates the whole ring serially to check its final value.
 * Per iteration: 1 MPI_Sendrecv.
 */
#include "tally.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    long long v = rank + 1, w = 0, sum = 0;
    for (int it = 0; it < iters; it++) {
        MPI(Sendrecv, &v, 1, MPI_LONG_LONG, right, 7, &w, 1, MPI_LONG_LONG, left, 7, MPI_COMM_WORLD,
            MPI_STATUS_IGNORE);
        v = (w * 31 + rank + 1) % 1000003;
        sum += w;
    }

    /* serial reference */
    long long *a = malloc(sizeof(long long) * (size_t)size), *b = malloc(sizeof(long long) * (size_t)size);
    long long refsum = 0;
    for (int r = 0; r < size; r++)
        a[r] = r + 1;
    for (int it = 0; it < iters; it++) {
        refsum += a[left];
        for (int r = 0; r < size; r++)
            b[r] = (a[(r + size - 1) % size] * 31 + r + 1) % 1000003;
        long long *t = a; a = b; b = t;
    }
    int fail = a[rank] != v || refsum != sum;
    long long ref = a[rank];
    free(a);
    free(b);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL value=%lld sum=%lld expected value=%lld sum=%lld", v, sum, ref, refsum);
    else
        tally_result(rank, "size=%d iters=%d value=%lld sum=%lld", size, iters, v, sum);
    tally_print(rank);
    return fail;
}
