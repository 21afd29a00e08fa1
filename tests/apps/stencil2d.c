/*
 * stencil2d.c - 2D 5-point stencil on a NON-periodic process grid.
 *
 * Process grid from MPI_Dims_create (any rank count); neighbours are computed
 * by hand, edges are MPI_PROC_NULL. Every iteration posts MPI_Irecv + MPI_Isend
 * to all 4 neighbours (PROC_NULL ones included), MPI_Waitall, updates, and
 * MPI_Allreduce's a checksum ("residual").
 *
 * Values are integers mod P held in doubles, so every sum is exact and the
 * result is independent of reduction order. Each rank recomputes the whole
 * global grid serially and checks its block.
 *
 * Per-iteration calls: 4 Irecv, 4 Isend, 1 Waitall, 1 Allreduce.
 */
#include "tally.h"

#define NX 8
#define NY 8
#define MODP(v) ((double)((long long)(v) % 1000003LL))
#define U(i, j) u[(i) * (NY + 2) + (j)]

static double init_val(long gi, long gj) { return (double)((gi * 131 + gj * 17 + 7) % 1000003); }

int main(int argc, char **argv)
{
    int rank, size, dims[2] = {0, 0};
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    MPI(Dims_create, size, 2, dims);

    int px = rank / dims[1], py = rank % dims[1];
    /* direction d: 0 = -x (north), 1 = +x (south), 2 = -y (west), 3 = +y (east) */
    int nb[4];
    nb[0] = px > 0 ? rank - dims[1] : MPI_PROC_NULL;
    nb[1] = px < dims[0] - 1 ? rank + dims[1] : MPI_PROC_NULL;
    nb[2] = py > 0 ? rank - 1 : MPI_PROC_NULL;
    nb[3] = py < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL;

    static double u[(NX + 2) * (NY + 2)], un[(NX + 2) * (NY + 2)];
    static double sbuf[4][NX > NY ? NX : NY], rbuf[4][NX > NY ? NX : NY];
    int len[4] = {NY, NY, NX, NX};
    for (int i = 1; i <= NX; i++)
        for (int j = 1; j <= NY; j++)
            U(i, j) = init_val((long)px * NX + i - 1, (long)py * NY + j - 1);

    double lsum = 0, gsum = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Request req[8];
        for (int j = 0; j < NY; j++) {
            sbuf[0][j] = U(1, j + 1);
            sbuf[1][j] = U(NX, j + 1);
        }
        for (int i = 0; i < NX; i++) {
            sbuf[2][i] = U(i + 1, 1);
            sbuf[3][i] = U(i + 1, NY);
        }
        for (int d = 0; d < 4; d++)
            MPI(Irecv, rbuf[d], len[d], MPI_DOUBLE, nb[d], d ^ 1, MPI_COMM_WORLD, &req[d]);
        for (int d = 0; d < 4; d++)
            MPI(Isend, sbuf[d], len[d], MPI_DOUBLE, nb[d], d, MPI_COMM_WORLD, &req[4 + d]);
        MPI(Waitall, 8, req, MPI_STATUSES_IGNORE);
        /* PROC_NULL receives leave rbuf untouched (zero): the boundary value */
        for (int j = 0; j < NY; j++) {
            U(0, j + 1) = rbuf[0][j];
            U(NX + 1, j + 1) = rbuf[1][j];
        }
        for (int i = 0; i < NX; i++) {
            U(i + 1, 0) = rbuf[2][i];
            U(i + 1, NY + 1) = rbuf[3][i];
        }
        lsum = 0;
        for (int i = 1; i <= NX; i++)
            for (int j = 1; j <= NY; j++) {
                double v = 2 * U(i, j) + U(i - 1, j) + U(i + 1, j) + U(i, j - 1) + U(i, j + 1) + 1;
                un[i * (NY + 2) + j] = MODP(v);
                lsum += un[i * (NY + 2) + j];
            }
        for (int i = 1; i <= NX; i++)
            for (int j = 1; j <= NY; j++)
                U(i, j) = un[i * (NY + 2) + j];
        MPI(Allreduce, &lsum, &gsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }

    /* serial reference on the global grid */
    long GX = (long)dims[0] * NX, GY = (long)dims[1] * NY;
    double *g = calloc((size_t)(GX + 2) * (GY + 2), sizeof(double));
    double *gn = calloc((size_t)(GX + 2) * (GY + 2), sizeof(double));
#define G(a, i, j) a[(i) * (GY + 2) + (j)]
    for (long i = 1; i <= GX; i++)
        for (long j = 1; j <= GY; j++)
            G(g, i, j) = init_val(i - 1, j - 1);
    double refsum = 0;
    for (int it = 0; it < iters; it++) {
        refsum = 0;
        for (long i = 1; i <= GX; i++)
            for (long j = 1; j <= GY; j++) {
                double v = 2 * G(g, i, j) + G(g, i - 1, j) + G(g, i + 1, j) + G(g, i, j - 1) + G(g, i, j + 1) + 1;
                G(gn, i, j) = MODP(v);
                refsum += G(gn, i, j);
            }
        double *t = g; g = gn; gn = t;
    }
    int bad = 0;
    for (int i = 1; i <= NX && !bad; i++)
        for (int j = 1; j <= NY && !bad; j++)
            if (U(i, j) != G(g, (long)px * NX + i, (long)py * NY + j))
                bad = 1;
    free(g);
    free(gn);

    tally_timed_finalize(rank);
    if (bad)
        tally_result(rank, "FAIL block (%d,%d) differs from serial reference", px, py);
    else if (gsum != refsum)
        tally_result(rank, "FAIL global_sum %lld != reference %lld", (long long)gsum, (long long)refsum);
    else
        tally_result(rank, "dims=%dx%d iters=%d global_sum=%lld local_sum=%lld", dims[0], dims[1], iters,
                     (long long)gsum, (long long)lsum);
    tally_print(rank);
    return (bad || gsum != refsum) ? 1 : 0;
}
