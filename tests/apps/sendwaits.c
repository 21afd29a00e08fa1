/*
 * sendwaits.c - waits in the calls that complete non-blocking sends (needs >= 2 ranks; ranks
 * above 1 join only the barriers).
 *
 * Phases, each ended by an MPI_Barrier:
 *   1. late receiver: 20 times rank 0 MPI_Isend's 1 MiB (rendezvous everywhere) to rank 1
 *      with tag 1 and completes it with MPI_Wait, while rank 1 computes 2 ms before its
 *      MPI_Recv (Late Receiver on rank 0's MPI_Wait: 20 x 2 ms = 40 ms);
 *   2. late receivers in a Waitall: 20 times rank 0 MPI_Isend's 4 messages of 256 KiB to
 *      rank 1 (tags 10..13) and completes them with one MPI_Waitall, while rank 1 computes
 *      1 ms before receiving them with MPI_Recv (Late Receiver on rank 0's MPI_Waitall:
 *      20 x 1 ms = 20 ms);
 *   3. send completion: 50 times rank 0 MPI_Isend's 8 bytes (eager) to rank 1 with tag 2
 *      and completes it by polling MPI_Test until it says done, while rank 1 receives it
 *      with MPI_Recv after computing 0.2 ms (the completing MPI_Test waits for the send
 *      only to complete: "waiting for send completion").
 * The optional first argument scales the repetition counts (percent, default 100).
 * A RESULT line says OK when every received value is what was sent.
 */
#define _POSIX_C_SOURCE 199309L
#include "tally.h"

#define BIG (1 << 17)   /* doubles: 1 MiB */
#define PART (1 << 15)  /* doubles: 256 KiB */

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Computes (spins on the clock) for `ms` milliseconds. */
static void compute(double ms)
{
    long long until = now_ns() + (long long)(ms * 1e6);
    while (now_ns() < until)
        ;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int percent = tally_iters(argc, argv, 100);
#define REPS(n) ((n) * percent / 100 > 0 ? (n) * percent / 100 : 1)
    double *big = malloc(sizeof(double) * BIG);
    double *parts = malloc(sizeof(double) * PART * 4);
    if (!big || !parts)
        MPI(Abort, MPI_COMM_WORLD, 1);

    for (int i = 0; i < REPS(20); i++) {
        if (rank == 0) {
            MPI_Request req;
            for (int k = 0; k < BIG; k++)
                big[k] = i + k;
            MPI(Isend, big, BIG, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, &req);
            MPI(Wait, &req, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            compute(2.0);
            MPI(Recv, big, BIG, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ok &= big[BIG - 1] == i + BIG - 1;
        }
    }
    MPI(Barrier, MPI_COMM_WORLD);

    for (int i = 0; i < REPS(20); i++) {
        if (rank == 0) {
            MPI_Request reqs[4];
            for (int p = 0; p < 4; p++) {
                parts[p * PART] = i + p;
                MPI(Isend, parts + p * PART, PART, MPI_DOUBLE, 1, 10 + p, MPI_COMM_WORLD,
                    &reqs[p]);
            }
            MPI(Waitall, 4, reqs, MPI_STATUSES_IGNORE);
        } else if (rank == 1) {
            compute(1.0);
            for (int p = 0; p < 4; p++) {
                MPI(Recv, parts + p * PART, PART, MPI_DOUBLE, 0, 10 + p, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE);
                ok &= parts[p * PART] == i + p;
            }
        }
    }
    MPI(Barrier, MPI_COMM_WORLD);

    for (int i = 0; i < REPS(50); i++) {
        double x = i, y = -1;
        if (rank == 0) {
            MPI_Request req;
            int done = 0;
            MPI(Isend, &x, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, &req);
            while (!done)
                MPI(Test, &req, &done, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            compute(0.2);
            MPI(Recv, &y, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ok &= y == i;
        }
    }
    MPI(Barrier, MPI_COMM_WORLD);

    free(big);
    free(parts);
    MPI(Finalize);
    tally_print(rank);
    tally_result(rank, ok ? "OK" : "FAIL a received value differs from what was sent");
    return 0;
}
