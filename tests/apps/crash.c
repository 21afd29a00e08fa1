/*
 * crash.c - a run that ends early, for Conifer's partial traces.
 *
 *   crash MODE ITERATIONS CRASH_AT
 *
 * Every rank does ITERATIONS rounds of { MPI_Sendrecv with its ring neighbours;
 * MPI_Allreduce of one double }. In round CRASH_AT (0-based), before its
 * Sendrecv, rank 1 ends the run according to MODE:
 *   segv   dereferences a null pointer (SIGSEGV)
 *   abort  calls MPI_Abort(MPI_COMM_WORLD, 3)
 *   exit   calls exit(0) without MPI_Finalize
 * The other ranks block in that round's Sendrecv or Allreduce until the
 * launcher stops them. Rank 1 prints "CRASHING rank=1 round=K" first, so a
 * test knows what its partial record must hold: MPI_Init, MPI_Comm_rank,
 * MPI_Comm_size, then K x (MPI_Sendrecv, MPI_Allreduce), then MPI_Abort in
 * abort mode. With CRASH_AT >= ITERATIONS nothing goes wrong.
 */
#include "tally.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: crash segv|abort|exit ITERATIONS CRASH_AT\n");
        return 2;
    }
    const char *mode = argv[1];
    int iterations = atoi(argv[2]);
    int crash_at = atoi(argv[3]);
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double mine = rank, theirs = 0, sum = 0;
    for (int i = 0; i < iterations; i++) {
        if (rank == 1 && i == crash_at) {
            printf("CRASHING rank=1 round=%d\n", i);
            fflush(stdout);
            if (strcmp(mode, "segv") == 0) {
                volatile int *nowhere = NULL;
                *nowhere = 1;
            } else if (strcmp(mode, "abort") == 0) {
                MPI(Abort, MPI_COMM_WORLD, 3);
            } else {
                exit(0);
            }
        }
        MPI(Sendrecv, &mine, 1, MPI_DOUBLE, right, 0, &theirs, 1, MPI_DOUBLE, left, 0,
            MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI(Allreduce, &theirs, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI(Finalize);
    tally_print(rank);
    return 0;
}
