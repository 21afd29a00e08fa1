/*
 * loopargs.c - a ring whose integer arguments follow the loop.
 *
 * Every iteration `it`, each rank posts MPI_Irecv from its left and right
 * neighbours and MPI_Isend to them, all with tag = it and count =
 * 64 << (it % 4) ints (64, 128, 256, 512, 64, ...); its sends read a buffer
 * at an offset that advances by 8 ints an iteration. The two receives and
 * the send to the right are completed with MPI_Waitany, the send to the left
 * is polled with MPI_Testsome until it completes (a small send completes at
 * once, so the poll almost always finds it the first time).
 *
 * Per rank and iteration: 2 Irecv, 2 Isend, 3 Waitany, and at least one
 * Testsome (a polling loop: its COUNT line may vary from run to run). RESULT
 * lines are deterministic: the received data are checked against what the
 * sender wrote.
 */
#include "tally.h"

#define MAX_COUNT 512
#define STRIDE 8

static int value(int sender, int offset) { return sender * 1000000 + offset; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 40);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    size_t span = (size_t)iters * STRIDE + 4 + MAX_COUNT;
    int *sbuf = malloc(span * sizeof(int));
    int *from_left = malloc(MAX_COUNT * sizeof(int)), *from_right = malloc(MAX_COUNT * sizeof(int));
    for (size_t i = 0; i < span; i++)
        sbuf[i] = value(rank, (int)i);

    int fail = 0, polls = 0, indices[4];
    long long checked = 0;
    MPI_Status status, statuses[4];
    for (int it = 0; it < iters && !fail; it++) {
        int count = 64 << (it % 4), base = it * STRIDE;
        MPI_Request req[4];
        MPI(Irecv, from_left, count, MPI_INT, left, it, MPI_COMM_WORLD, &req[0]);
        MPI(Irecv, from_right, count, MPI_INT, right, it, MPI_COMM_WORLD, &req[1]);
        MPI(Isend, sbuf + base, count, MPI_INT, right, it, MPI_COMM_WORLD, &req[2]);
        MPI(Isend, sbuf + base + 4, count, MPI_INT, left, it, MPI_COMM_WORLD, &req[3]);
        for (int k = 0; k < 3; k++) {
            int index;
            MPI(Waitany, 3, req, &index, &status);
            if (index == MPI_UNDEFINED)
                fail = 1;
        }
        for (int outcount = 0; outcount == 0 && !fail;) {
            MPI(Testsome, 1, &req[3], &outcount, indices, statuses);
            polls++;
            if (outcount == MPI_UNDEFINED)
                fail = 1;
        }
        for (int j = 0; j < count; j++) {
            if (from_left[j] != value(left, base + j) || from_right[j] != value(right, base + 4 + j))
                fail = 2;
            checked++;
        }
    }
    free(sbuf); free(from_left); free(from_right);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL %s", fail == 1 ? "MPI_UNDEFINED from Waitany/Testsome" : "wrong payload");
    else
        tally_result(rank, "size=%d iters=%d checked=%lld", size, iters, checked);
    tally_print(rank);
    return fail != 0;
}
