/*
 * arrival.c - the same calls, messages arriving in an order the command line picks.
 *
 *   arrival forward|reverse ROUNDS
 *
 * Each round, rank 0 posts one MPI_Irecv from every other rank and completes them with
 * MPI_Waitany, then posts them again and completes them by polling MPI_Testsome; the
 * other ranks each send one int per phase after sleeping 20 ms x rank (forward) or
 * 20 ms x (size - rank) (reverse). Only the order of arrival, so the indices, flags and
 * poll counts of the completion calls, differs between the two orders.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reverse = argc > 1 && strcmp(argv[1], "reverse") == 0;
    int rounds = argc > 2 ? atoi(argv[2]) : 1;
    int n = size - 1, in[64];
    MPI_Request req[64];
    for (int round = 0; round < rounds; round++) {
        for (int phase = 0; phase < 2; phase++) {
            if (rank == 0) {
                for (int k = 0; k < n; k++)
                    MPI_Irecv(&in[k], 1, MPI_INT, k + 1, phase, MPI_COMM_WORLD, &req[k]);
                if (phase == 0) {
                    for (int k = 0; k < n; k++) {
                        int i;
                        MPI_Waitany(n, req, &i, MPI_STATUS_IGNORE);
                    }
                } else {
                    int idx[64], done = 0, count;
                    while (done < n) {
                        MPI_Testsome(n, req, &count, idx, MPI_STATUSES_IGNORE);
                        done += count;
                    }
                }
            } else {
                pause_ms(20L * (reverse ? size - rank : rank));
                MPI_Send(&rank, 1, MPI_INT, 0, phase, MPI_COMM_WORLD);
            }
        }
    }
    MPI_Finalize();
    return 0;
}
