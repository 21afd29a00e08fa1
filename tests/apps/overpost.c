/*
 * overpost.c - receives posted larger than the messages that arrive, as NAS
 * MG's halo exchange posts them (one buffer sized for the largest face, filled
 * by smaller faces), on a periodic ring of any size >= 2.
 *
 * Every receive posts CAP = 1024 doubles (8192 bytes). Per iteration `it`
 * (0-based, ITERS iterations, default 5), every rank:
 *   phase A: MPI_Irecv from its left (tag 1) and from its right (tag 2), then
 *            MPI_Send of 100 + 10*it doubles to its right (tag 1) and to its
 *            left (tag 2), then MPI_Wait on each receive WITH a status;
 *   phase B: MPI_Isend of 50 doubles to its right (tag 3), MPI_Recv from its
 *            left (tag 3) with MPI_STATUS_IGNORE, MPI_Wait on the send;
 *   phase C: MPI_Irecv from its right (tag 4), MPI_Isend of 25 doubles to its
 *            left (tag 4), MPI_Waitall of both with MPI_STATUSES_IGNORE.
 * At the end one MPI_Barrier.
 *
 * Bytes, per rank, over ITERS = 5 iterations:
 *   sent     = phase A 2 * 8 * sum(100 + 10*it, it = 0..4) = 2 * 8 * 600 = 9600
 *            + phase B 8 * 50 * 5 = 2000 + phase C 8 * 25 * 5 = 1000
 *            = 12600 bytes, and the same 12600 bytes arrive;
 *   posted   = 4 receives * 8192 bytes * 5 = 163840 bytes.
 * On 4 ranks: 50400 bytes sent and received, 655360 bytes of receive capacity
 * posted (13x what arrives). Of what arrives, phase A's 9600 bytes per rank are
 * in the recorded statuses; phases B and C ignore theirs.
 *
 * Each rank checks every received value and the status counts of phase A; a
 * RESULT line says how many bytes the rank sent and received.
 */
#include "tally.h"

#define CAP 1024

static double value(int src, int it, int tag, int i) { return src * 1e6 + it * 1e4 + tag * 1e3 + i; }

static void fill(double *b, int n, int src, int it, int tag)
{
    for (int i = 0; i < n; i++)
        b[i] = value(src, it, tag, i);
}

static int check(const double *b, int n, int src, int it, int tag)
{
    for (int i = 0; i < n; i++)
        if (b[i] != value(src, it, tag, i))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 5);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double *rl = malloc(CAP * sizeof(double)), *rr = malloc(CAP * sizeof(double));
    double *sl = malloc(CAP * sizeof(double)), *sr = malloc(CAP * sizeof(double));
    long long sent = 0, received = 0;
    int fail = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Request req[2];
        MPI_Status st[2];
        int n = 100 + 10 * it, counts[2];
        /* phase A */
        MPI(Irecv, rl, CAP, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI(Irecv, rr, CAP, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
        fill(sr, n, rank, it, 1);
        MPI(Send, sr, n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
        fill(sl, n, rank, it, 2);
        MPI(Send, sl, n, MPI_DOUBLE, left, 2, MPI_COMM_WORLD);
        MPI(Wait, &req[0], &st[0]);
        MPI(Wait, &req[1], &st[1]);
        MPI(Get_count, &st[0], MPI_DOUBLE, &counts[0]);
        MPI(Get_count, &st[1], MPI_DOUBLE, &counts[1]);
        fail |= counts[0] != n || counts[1] != n;
        fail |= check(rl, n, left, it, 1) | check(rr, n, right, it, 2);
        sent += 2 * 8 * n;
        received += 8LL * (counts[0] + counts[1]);
        /* phase B */
        fill(sr, 50, rank, it, 3);
        MPI(Isend, sr, 50, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &req[0]);
        MPI(Recv, rl, CAP, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI(Wait, &req[0], MPI_STATUS_IGNORE);
        fail |= check(rl, 50, left, it, 3);
        sent += 8 * 50;
        received += 8 * 50;
        /* phase C */
        MPI(Irecv, rr, CAP, MPI_DOUBLE, right, 4, MPI_COMM_WORLD, &req[0]);
        fill(sl, 25, rank, it, 4);
        MPI(Isend, sl, 25, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &req[1]);
        MPI(Waitall, 2, req, MPI_STATUSES_IGNORE);
        fail |= check(rr, 25, right, it, 4);
        sent += 8 * 25;
        received += 8 * 25;
    }
    MPI(Barrier, MPI_COMM_WORLD);
    MPI(Finalize);
    tally_print(rank);
    tally_result(rank, "sent=%lld received=%lld %s", sent, received, fail ? "FAIL" : "OK");
    free(rl);
    free(rr);
    free(sl);
    free(sr);
    return fail;
}
