/*
 * persistent.c - persistent point-to-point requests.
 *
 * Ring neighbours: MPI_Send_init to right (tag 0) and left (tag 1),
 * MPI_Recv_init from left (tag 0) and right (tag 1) - buffers are reused.
 * Per iteration: fill the send buffers, MPI_Startall(4), MPI_Waitall(4),
 * check. At the end MPI_Request_free on all 4 requests.
 */
#include "tally.h"

#define LEN 16

static long long val(int r, int it, int dir, int i) { return (long long)r * 1000000 + it * 1000 + dir * 100 + i; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    static long long s_r[LEN], s_l[LEN], r_l[LEN], r_r[LEN];
    MPI_Request req[4];
    MPI(Recv_init, r_l, LEN, MPI_LONG_LONG, left, 0, MPI_COMM_WORLD, &req[0]);
    MPI(Recv_init, r_r, LEN, MPI_LONG_LONG, right, 1, MPI_COMM_WORLD, &req[1]);
    MPI(Send_init, s_r, LEN, MPI_LONG_LONG, right, 0, MPI_COMM_WORLD, &req[2]);
    MPI(Send_init, s_l, LEN, MPI_LONG_LONG, left, 1, MPI_COMM_WORLD, &req[3]);

    int fail = 0;
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < LEN; i++) {
            s_r[i] = val(rank, it, 0, i);
            s_l[i] = val(rank, it, 1, i);
            r_l[i] = r_r[i] = -1;
        }
        MPI(Startall, 4, req);
        MPI(Waitall, 4, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < LEN; i++) {
            if (r_l[i] != val(left, it, 0, i) || r_r[i] != val(right, it, 1, i))
                fail = 1;
            sum += r_l[i] + r_r[i];
        }
    }
    for (int k = 0; k < 4; k++)
        MPI(Request_free, &req[k]);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL wrong data received");
    else
        tally_result(rank, "left=%d right=%d iters=%d sum=%lld", left, right, iters, sum);
    tally_print(rank);
    return fail;
}
