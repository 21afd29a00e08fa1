/*
 * delays.c - communication with waits built in, and the program's own clock readings.
 *
 * Every rank reads CLOCK_MONOTONIC right after MPI_Init returns and right before it calls
 * MPI_Finalize, and prints the span between the two after MPI_Finalize:
 *     SPAN rank=<r> ns=<n>
 * so a test can compare the trace's reconstruction of the run with the program's own clock.
 * It also reads the clock around each of its MPI_Recv and MPI_Ssend calls and prints, after
 * MPI_Finalize, the time it spent inside each (the recorder's work included):
 *     INSIDE rank=<r> MPI_Recv ns=<n>
 *     INSIDE rank=<r> MPI_Ssend ns=<n>
 *
 * Phases, each separated by an MPI_Barrier (needs >= 2 ranks; ranks above 1 join only the
 * collectives):
 *   1. ping-pong: 200 round trips of 8 bytes between ranks 0 and 1 (MPI_Send / MPI_Recv);
 *   2. late sender: 100 times rank 1 computes 2 ms, then MPI_Send to rank 0, which is
 *      already waiting in MPI_Recv (Late Sender on rank 0: 100 x 2 ms = 0.2 s);
 *   3. late receiver: 50 times rank 0 MPI_Ssend's to rank 1, which computes 1 ms before its
 *      MPI_Recv (Late Receiver on rank 0: 50 x 1 ms = 50 ms);
 *   4. barrier: 20 times the last rank computes 5 ms before MPI_Barrier (Wait at Barrier on
 *      every other rank: 20 x 5 ms = 0.1 s);
 *   5. allreduce: 20 times rank 0 computes 3 ms before MPI_Allreduce (Wait at N x N on every
 *      other rank: 20 x 3 ms = 60 ms);
 *   6. broadcast: 20 times the root (rank 0) computes 2 ms before MPI_Bcast (Late Broadcast
 *      on every other rank: 20 x 2 ms = 40 ms);
 *   7. reduce: 20 times every rank but the root (rank 0) computes 2 ms before MPI_Reduce
 *      (Early Reduce on the root: 20 x 2 ms = 40 ms).
 * The optional first argument scales the repetition counts (percent, default 100).
 */
#define _POSIX_C_SOURCE 199309L
#include "tally.h"

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

/* Time inside the MPI_Recv and MPI_Ssend calls, on the program's own clock. */
static long long inside_recv, inside_ssend;

/* Runs the statement(s) `...`, adding the time they take to `total`. */
#define TIMED(total, ...) \
    do { \
        long long timed_from_ = now_ns(); \
        __VA_ARGS__; \
        total += now_ns() - timed_from_; \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    long long begin = now_ns();
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int percent = tally_iters(argc, argv, 100);
#define REPS(n) ((n) * percent / 100 > 0 ? (n) * percent / 100 : 1)
    double x = rank, y = 0;

    for (int i = 0; i < REPS(200); i++) {
        if (rank == 0) {
            MPI(Send, &x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
            TIMED(inside_recv, MPI(Recv, &y, 1, MPI_DOUBLE, 1, 1,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else if (rank == 1) {
            TIMED(inside_recv, MPI(Recv, &y, 1, MPI_DOUBLE, 0, 1,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI(Send, &x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
        }
    }
    MPI(Barrier, MPI_COMM_WORLD);

    for (int i = 0; i < REPS(100); i++) {
        if (rank == 0) {
            TIMED(inside_recv, MPI(Recv, &y, 1, MPI_DOUBLE, 1, 2,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else if (rank == 1) {
            compute(2.0);
            MPI(Send, &x, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
        }
    }
    MPI(Barrier, MPI_COMM_WORLD);

    for (int i = 0; i < REPS(50); i++) {
        if (rank == 0) {
            TIMED(inside_ssend, MPI(Ssend, &x, 1, MPI_DOUBLE, 1, 3,
                  MPI_COMM_WORLD));
        } else if (rank == 1) {
            compute(1.0);
            TIMED(inside_recv, MPI(Recv, &y, 1, MPI_DOUBLE, 0, 3,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    MPI(Barrier, MPI_COMM_WORLD);

    for (int i = 0; i < REPS(20); i++) {
        if (rank == size - 1)
            compute(5.0);
        MPI(Barrier, MPI_COMM_WORLD);
    }

    for (int i = 0; i < REPS(20); i++) {
        if (rank == 0)
            compute(3.0);
        MPI(Allreduce, &x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI(Barrier, MPI_COMM_WORLD);

    for (int i = 0; i < REPS(20); i++) {
        if (rank == 0)
            compute(2.0);
        MPI(Bcast, &x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    MPI(Barrier, MPI_COMM_WORLD);

    for (int i = 0; i < REPS(20); i++) {
        if (rank != 0)
            compute(2.0);
        MPI(Reduce, &x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }

    long long end = now_ns();
    MPI(Finalize);
    printf("SPAN rank=%d ns=%lld\n", rank, end - begin);
    printf("INSIDE rank=%d MPI_Recv ns=%lld\n", rank, inside_recv);
    printf("INSIDE rank=%d MPI_Ssend ns=%lld\n", rank, inside_ssend);
    fflush(stdout);
    tally_print(rank);
    return 0;
}
