/*
 * datatypes.c - derived datatypes exchanged between rank pairs (r, r^1).
 *
 * Built once: MPI_Type_vector (one column of an 8x8 double matrix),
 * MPI_Type_indexed (lower triangle of a 6x6 int matrix), MPI_Type_create_struct
 * (struct rec {int; double[3]; char[6]}, displacements from MPI_Get_address)
 * resized to sizeof(struct rec) with MPI_Type_create_resized; committed with
 * MPI_Type_commit. Per iteration, for each of the three types the even rank of
 * a pair does MPI_Send then MPI_Recv, the odd rank MPI_Recv then MPI_Send
 * (vector -> vector column, indexed -> contiguous ints checked with
 * MPI_Get_count, struct -> struct array). All types freed with MPI_Type_free.
 * With an odd rank count the last rank has no partner and only builds/frees.
 */
#include "tally.h"

#define M 8
#define T 6
#define NREC 4

struct rec {
    int id;
    double val[3];
    char tag[6];
};

static double mval(int r, int it, int i, int j) { return (double)(r * 10000 + it * 100 + i * M + j); }
static int tval(int r, int it, int i, int j) { return r * 10000 + it * 100 + i * T + j; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int partner = rank ^ 1;
    int active = partner < size;

    MPI_Datatype tcol, ttri, trec0, trec;
    MPI(Type_vector, M, 1, M, MPI_DOUBLE, &tcol);
    int blen[T], disp[T];
    for (int i = 0; i < T; i++) {
        blen[i] = i + 1;
        disp[i] = i * T;
    }
    MPI(Type_indexed, T, blen, disp, MPI_INT, &ttri);
    struct rec recs[NREC], rrecs[NREC];
    MPI_Aint base, a[3];
    MPI(Get_address, &recs[0], &base);
    MPI(Get_address, &recs[0].id, &a[0]);
    MPI(Get_address, &recs[0].val, &a[1]);
    MPI(Get_address, &recs[0].tag, &a[2]);
    for (int i = 0; i < 3; i++)
        a[i] -= base;
    int sblen[3] = {1, 3, 6};
    MPI_Datatype stypes[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI(Type_create_struct, 3, sblen, a, stypes, &trec0);
    MPI(Type_create_resized, trec0, 0, (MPI_Aint)sizeof(struct rec), &trec);
    MPI(Type_commit, &tcol);
    MPI(Type_commit, &ttri);
    MPI(Type_commit, &trec);

    static double A[M][M], B[M][M];
    static int TR[T][T], tri[T * (T + 1) / 2];
    int fail = 0;
    long long csum = 0;
    for (int it = 0; it < iters && active; it++) {
        int c = it % M;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < M; j++) {
                A[i][j] = mval(rank, it, i, j);
                B[i][j] = -1;
            }
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                TR[i][j] = tval(rank, it, i, j);
        for (int k = 0; k < NREC; k++) {
            memset(&recs[k], 0, sizeof recs[k]);
            recs[k].id = rank * 100 + it * 10 + k;
            for (int v = 0; v < 3; v++)
                recs[k].val[v] = rank + it * 0.5 + k * 0.25 + v;
            snprintf(recs[k].tag, sizeof recs[k].tag, "r%dk%d", rank % 10, k);
        }
        memset(rrecs, 0, sizeof rrecs);
        memset(tri, 0, sizeof tri);

        MPI_Status st;
        int cnt = -1;
        if (rank % 2 == 0) {
            MPI(Send, &A[0][c], 1, tcol, partner, 1, MPI_COMM_WORLD);
            MPI(Recv, &B[0][c], 1, tcol, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI(Send, &TR[0][0], 1, ttri, partner, 2, MPI_COMM_WORLD);
            MPI(Recv, tri, T * (T + 1) / 2, MPI_INT, partner, 2, MPI_COMM_WORLD, &st);
            MPI(Send, recs, NREC, trec, partner, 3, MPI_COMM_WORLD);
            MPI(Recv, rrecs, NREC, trec, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI(Recv, &B[0][c], 1, tcol, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI(Send, &A[0][c], 1, tcol, partner, 1, MPI_COMM_WORLD);
            MPI(Recv, tri, T * (T + 1) / 2, MPI_INT, partner, 2, MPI_COMM_WORLD, &st);
            MPI(Send, &TR[0][0], 1, ttri, partner, 2, MPI_COMM_WORLD);
            MPI(Recv, rrecs, NREC, trec, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI(Send, recs, NREC, trec, partner, 3, MPI_COMM_WORLD);
        }
        MPI(Get_count, &st, MPI_INT, &cnt);
        if (cnt != T * (T + 1) / 2)
            fail |= 1;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < M; j++) {
                double want = j == c ? mval(partner, it, i, j) : -1;
                if (B[i][j] != want)
                    fail |= 2;
                if (j == c)
                    csum += (long long)B[i][j];
            }
        for (int i = 0, n = 0; i < T; i++)
            for (int j = 0; j <= i; j++, n++) {
                if (tri[n] != tval(partner, it, i, j))
                    fail |= 4;
                csum += tri[n];
            }
        for (int k = 0; k < NREC; k++) {
            char want[6];
            snprintf(want, sizeof want, "r%dk%d", partner % 10, k);
            if (rrecs[k].id != partner * 100 + it * 10 + k || strcmp(rrecs[k].tag, want) != 0)
                fail |= 8;
            for (int v = 0; v < 3; v++)
                if (rrecs[k].val[v] != partner + it * 0.5 + k * 0.25 + v)
                    fail |= 8;
            csum += rrecs[k].id + (long long)(4 * (rrecs[k].val[0] + rrecs[k].val[1] + rrecs[k].val[2]));
        }
    }

    MPI(Type_free, &tcol);
    MPI(Type_free, &ttri);
    MPI(Type_free, &trec);
    MPI(Type_free, &trec0);
    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL check mask %d", fail);
    else if (!active)
        tally_result(rank, "no partner iters=%d", iters);
    else
        tally_result(rank, "partner=%d iters=%d checksum=%lld", partner, iters, csum);
    tally_print(rank);
    return fail != 0;
}
