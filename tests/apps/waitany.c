/*
 * waitany.c - Irecvs from all peers completed with MPI_Waitany, then with
 * MPI_Testsome.
 *
 * Each iteration has two phases. In each phase every rank posts one MPI_Irecv
 * from every other rank and one MPI_Isend to every other rank.
 *   phase 1: the receives are completed by calling MPI_Waitany (size-1 times),
 *            the sends by MPI_Waitall;
 *   phase 2: the receives are completed by calling MPI_Testsome in a loop until
 *            all are done, the sends by MPI_Waitall.
 * The number of MPI_Testsome calls depends on timing (it is a polling loop),
 * so its COUNT line varies from run to run; every other COUNT is deterministic:
 * per iteration 2*(size-1) Irecv, 2*(size-1) Isend, (size-1) Waitany,
 * 2 Waitall. RESULT lines are deterministic.
 */
#include "tally.h"

static long long payload(int src, int dst, int it, int phase) { return (long long)src * 100000 + dst * 100 + it * 2 + phase; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int np = size - 1; /* number of peers */
    long long *rbuf = calloc((size_t)size, sizeof(long long)), *sbuf = calloc((size_t)size, sizeof(long long));
    MPI_Request *rreq = calloc((size_t)size, sizeof(MPI_Request)), *sreq = calloc((size_t)size, sizeof(MPI_Request));
    int *peer = calloc((size_t)size, sizeof(int)), *idx = calloc((size_t)size, sizeof(int));
    MPI_Status *st = calloc((size_t)size, sizeof(MPI_Status));
    for (int k = 0, p = 0; p < size; p++)
        if (p != rank)
            peer[k++] = p;

    long long sum[2] = {0, 0};
    int fail = 0, completions[2] = {0, 0};
    for (int it = 0; it < iters && !fail; it++) {
        for (int phase = 0; phase < 2; phase++) {
            for (int k = 0; k < np; k++) {
                rbuf[k] = -1;
                MPI(Irecv, &rbuf[k], 1, MPI_LONG_LONG, peer[k], phase, MPI_COMM_WORLD, &rreq[k]);
            }
            for (int k = 0; k < np; k++) {
                sbuf[k] = payload(rank, peer[k], it, phase);
                MPI(Isend, &sbuf[k], 1, MPI_LONG_LONG, peer[k], phase, MPI_COMM_WORLD, &sreq[k]);
            }
            int done = 0;
            while (done < np) {
                if (phase == 0) {
                    int i;
                    MPI(Waitany, np, rreq, &i, &st[0]);
                    if (i == MPI_UNDEFINED || st[0].MPI_SOURCE != peer[i]) {
                        fail = 1;
                        break;
                    }
                    idx[0] = i;
                    done++;
                    completions[0]++;
                } else {
                    int outcount;
                    MPI(Testsome, np, rreq, &outcount, idx, st);
                    if (outcount == MPI_UNDEFINED) {
                        fail = 1;
                        break;
                    }
                    for (int j = 0; j < outcount; j++)
                        if (st[j].MPI_SOURCE != peer[idx[j]])
                            fail = 1;
                    done += outcount;
                    completions[1] += outcount;
                }
            }
            for (int k = 0; k < np; k++) {
                if (rbuf[k] != payload(peer[k], rank, it, phase))
                    fail = 2;
                sum[phase] += rbuf[k];
            }
            MPI(Waitall, np, sreq, MPI_STATUSES_IGNORE);
        }
    }
    free(rbuf); free(sbuf); free(rreq); free(sreq); free(peer); free(idx); free(st);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL %s", fail == 1 ? "bad index/source from Waitany/Testsome" : "wrong payload");
    else
        tally_result(rank, "size=%d iters=%d waitany_completions=%d waitany_sum=%lld testsome_completions=%d testsome_sum=%lld",
                     size, iters, completions[0], sum[0], completions[1], sum[1]);
    tally_print(rank);
    return fail != 0;
}
