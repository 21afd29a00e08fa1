/*
 * cells.c - cells of unequal size per rank, as NPB SP and BT's multipartition.
 *
 * A periodic line of N = P*S*10 + 7 planes is cut into P*S cells (S = 3): cell c
 * has 11 planes when c < 7, else 10. In stage s rank r works on cell
 * c(r, s) = s*P + (r + s) mod P, so which ranks hold a large cell changes from
 * stage to stage, and message lengths depend on the rank and the stage. Each
 * stage: MPI_Irecv from the left neighbour (FACE doubles per plane of the
 * neighbour's cell), MPI_Isend of FACE doubles per plane of the own cell to the
 * right neighbour, MPI_Wait on the receive with a status (received bytes
 * checked against the sender's cell), MPI_Wait on the send without one. Tags
 * are the stage; buffers start at a fixed place per stage. Per iteration:
 * 3 x (Irecv, Isend, Wait, Wait); at the end an
 * MPI_Allreduce of every rank's sum of what it received, checked against the
 * serial sum of every cell's data.
 *
 * Every rank makes the same calls in the same order; only counts and received
 * byte counts differ between ranks (and within a rank between stages).
 */
#include "tally.h"

#define S 3
#define FACE 16
#define BIG 11

static int planes(int cell) { return cell < 7 ? BIG : BIG - 1; }

/* The value plane element i of cell c holds in iteration it. */
static double datum(int c, int i, int it) { return (double)((c * 131 + i * 7 + it) % 1009); }

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double *out = malloc(sizeof(double) * S * BIG * FACE), *in = malloc(sizeof(double) * S * BIG * FACE);
    double sum = 0;
    int fail = 0;

    for (int it = 0; it < iters; it++) {
        for (int s = 0; s < S; s++) {
            int mine = s * size + (rank + s) % size, theirs = s * size + (left + s) % size;
            int n = planes(mine) * FACE, m = planes(theirs) * FACE;
            double *o = out + s * BIG * FACE, *i = in + s * BIG * FACE;
            for (int k = 0; k < n; k++)
                o[k] = datum(mine, k, it);
            MPI_Request req[2];
            MPI_Status st;
            MPI(Irecv, i, m, MPI_DOUBLE, left, s, MPI_COMM_WORLD, &req[0]);
            MPI(Isend, o, n, MPI_DOUBLE, right, s, MPI_COMM_WORLD, &req[1]);
            /* The send's status is left out: what MPI puts there is undefined (MPICH leaves
             * it as it was), and recording it would tell ranks apart by garbage. */
            MPI(Wait, &req[0], &st);
            MPI(Wait, &req[1], MPI_STATUS_IGNORE);
            int got;
            MPI(Get_count, &st, MPI_DOUBLE, &got);
            fail |= got != m;
            for (int k = 0; k < m; k++) {
                fail |= i[k] != datum(theirs, k, it);
                sum += i[k];
            }
        }
    }
    double total;
    MPI(Allreduce, &sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    /* serial reference: every cell is received once per iteration */
    double ref = 0;
    for (int it = 0; it < iters; it++)
        for (int c = 0; c < size * S; c++)
            for (int k = 0; k < planes(c) * FACE; k++)
                ref += datum(c, k, it);
    fail |= total != ref;
    free(out);
    free(in);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL total=%.0f expected %.0f", total, ref);
    else
        tally_result(rank, "size=%d iters=%d total=%.0f", size, iters, total);
    tally_print(rank);
    return fail;
}
