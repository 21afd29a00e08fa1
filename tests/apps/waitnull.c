/*
 * waitnull.c - request arrays holding MPI_REQUEST_NULL, as HPCC's codes pass
 * them: a slot whose neighbour does not exist is left MPI_REQUEST_NULL and the
 * whole array goes to MPI_Waitall, MPI_Testall, MPI_Waitany and MPI_Waitsome.
 *
 * Ranks form an open chain (no wrap-around): rank 0 has no left neighbour, the
 * last rank no right one. Per iteration (default 3) every rank fills a 4-slot
 * array: [0] MPI_Irecv from the left, [1] MPI_Irecv from the right, [2]
 * MPI_Isend to the left, [3] MPI_Isend to the right, each of 8 ints, with
 * MPI_REQUEST_NULL in the slots of a missing neighbour. Then:
 *   even iterations: MPI_Waitall on the 4 slots;
 *   odd iterations:  MPI_Waitany until it returns MPI_UNDEFINED, then a
 *                    MPI_Testall (flag set at once: every slot is null);
 * then a second exchange completed by MPI_Waitsome until MPI_UNDEFINED.
 * Last, once: an MPI_Irecv from the left (slot 0, the others null) polled by
 * one MPI_Testany before an MPI_Barrier, after which the left neighbour sends:
 * that poll cannot find the message (flag 0, index MPI_UNDEFINED); then
 * MPI_Waitany completes it.
 * Every received value is checked; a RESULT line says OK or FAIL.
 */
#include "tally.h"

#define N 8

static void post(int rank, int size, int it, int *rbuf, int *sbuf, MPI_Request *req)
{
    int nb[2] = {rank - 1, rank + 1};
    for (int s = 0; s < 4; s++)
        req[s] = MPI_REQUEST_NULL;
    for (int d = 0; d < 2; d++) {
        if (nb[d] < 0 || nb[d] >= size)
            continue;
        for (int i = 0; i < N; i++)
            sbuf[d * N + i] = rank * 1000 + it * 10 + d;
        /* The left neighbour's message to its right is tagged 1, and so on. */
        MPI(Irecv, &rbuf[d * N], N, MPI_INT, nb[d], 1 - d, MPI_COMM_WORLD, &req[d]);
        MPI(Isend, &sbuf[d * N], N, MPI_INT, nb[d], d, MPI_COMM_WORLD, &req[2 + d]);
    }
}

static int check(int rank, int size, int it, const int *rbuf)
{
    int nb[2] = {rank - 1, rank + 1}, bad = 0;
    for (int d = 0; d < 2; d++)
        if (nb[d] >= 0 && nb[d] < size)
            for (int i = 0; i < N; i++)
                bad |= rbuf[d * N + i] != nb[d] * 1000 + it * 10 + (1 - d);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 3);
    int rbuf[2 * N], sbuf[2 * N], fail = 0;
    MPI_Request req[4];
    for (int it = 0; it < iters; it++) {
        post(rank, size, it, rbuf, sbuf, req);
        if (it % 2 == 0) {
            MPI(Waitall, 4, req, MPI_STATUSES_IGNORE);
        } else {
            int index, flag;
            do
                MPI(Waitany, 4, req, &index, MPI_STATUS_IGNORE);
            while (index != MPI_UNDEFINED);
            MPI(Testall, 4, req, &flag, MPI_STATUSES_IGNORE);
            fail |= !flag;
        }
        fail |= check(rank, size, it, rbuf);
        post(rank, size, it, rbuf, sbuf, req);
        int outcount, idx[4];
        do
            MPI(Waitsome, 4, req, &outcount, idx, MPI_STATUSES_IGNORE);
        while (outcount != MPI_UNDEFINED);
        fail |= check(rank, size, it, rbuf);
    }
    /* An unsuccessful poll: the message is sent only after the barrier. */
    int index, flag;
    for (int s = 0; s < 4; s++)
        req[s] = MPI_REQUEST_NULL;
    if (rank > 0)
        MPI(Irecv, rbuf, N, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, &req[0]);
    MPI(Testany, 4, req, &index, &flag, MPI_STATUS_IGNORE);
    fail |= rank > 0 && (flag || index != MPI_UNDEFINED);
    MPI(Barrier, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        sbuf[i] = rank;
    if (rank + 1 < size)
        MPI(Send, sbuf, N, MPI_INT, rank + 1, 7, MPI_COMM_WORLD);
    MPI(Waitany, 4, req, &index, MPI_STATUS_IGNORE);
    fail |= rank > 0 && (index != 0 || rbuf[0] != rank - 1);
    MPI(Finalize);
    tally_print(rank);
    tally_result(rank, "%s", fail ? "FAIL" : "OK");
    return fail;
}
