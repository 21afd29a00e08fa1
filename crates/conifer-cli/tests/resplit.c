/*
 * resplit.c - a communicator freed and made again with the ranks reversed.
 *
 * Round 0 splits MPI_COMM_WORLD with key = world rank, round 1 with key = size-1-rank, so a
 * rank's position in the second communicator differs from the first while the MPI may give
 * both the same handle. In each, every rank sends its world rank to local rank + 1 (ring)
 * with MPI_Sendrecv and prints `SENT round=R world=W dest=D source=S` (local ranks).
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 2; round++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, 0, round == 0 ? rank : size - 1 - rank, &c);
        int r, n, in = -1;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        int dest = (r + 1) % n, source = (r + n - 1) % n;
        MPI_Sendrecv(&rank, 1, MPI_INT, dest, round, &in, 1, MPI_INT, source, round, c,
                     MPI_STATUS_IGNORE);
        printf("SENT round=%d world=%d dest=%d source=%d\n", round, rank, dest, source);
        fflush(stdout);
        MPI_Comm_free(&c);
    }
    MPI_Finalize();
    return 0;
}
