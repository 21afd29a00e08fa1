/*
 * stencil3d.c - 3D PERIODIC 7-point stencil on a Cartesian communicator.
 *
 * MPI_Dims_create (3D), MPI_Cart_create (periodic, no reorder), MPI_Cart_coords,
 * MPI_Cart_shift x3, MPI_Cart_rank (the +x neighbour again, by its coordinates) and
 * MPI_Cart_sub (the y-z plane, freed at the end). Per iteration: 6 MPI_Irecv + 6 MPI_Isend + MPI_Waitall,
 * then MPI_Allreduce of a checksum. With 1 or 2 ranks along a dimension the
 * neighbours are self / the same rank on both sides; tags disambiguate.
 *
 * Values are integers mod P held in doubles (exact sums); each rank recomputes
 * the global periodic grid serially and checks its block.
 */
#include "tally.h"

#define N 4 /* local block is N x N x N */
#define MODP(v) ((double)((long long)(v) % 1000003LL))
#define L(i, j, k) (((i) * (N + 2) + (j)) * (N + 2) + (k))

static double init_val(long gi, long gj, long gk) { return (double)((gi * 131 + gj * 17 + gk * 7 + 3) % 1000003); }

/* copy face `d` (dim d/2, side d%2) of the interior (or halo) to/from buf */
static void face(double *u, double *buf, int d, int halo, int unpack)
{
    int dim = d / 2, side = d % 2;
    int pos = halo ? (side ? N + 1 : 0) : (side ? N : 1);
    int n = 0;
    for (int a = 1; a <= N; a++)
        for (int b = 1; b <= N; b++) {
            int idx = dim == 0 ? L(pos, a, b) : dim == 1 ? L(a, pos, b) : L(a, b, pos);
            if (unpack)
                u[idx] = buf[n++];
            else
                buf[n++] = u[idx];
        }
}

int main(int argc, char **argv)
{
    int rank, size, crank, dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3];
    MPI_Comm cart;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    MPI(Dims_create, size, 3, dims);
    MPI(Cart_create, MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI(Comm_rank, cart, &crank);
    MPI(Cart_coords, cart, crank, 3, coords);
    int nb[6]; /* d = 2*dim + side: side 0 = minus, 1 = plus */
    for (int dim = 0; dim < 3; dim++)
        MPI(Cart_shift, cart, dim, 1, &nb[2 * dim], &nb[2 * dim + 1]);
    int next_x[3] = {(coords[0] + 1) % dims[0], coords[1], coords[2]}, next_x_rank;
    MPI(Cart_rank, cart, next_x, &next_x_rank);
    if (next_x_rank != nb[1]) {
        fprintf(stderr, "rank %d: MPI_Cart_rank gives %d, MPI_Cart_shift %d\n", rank, next_x_rank, nb[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int plane_dims[3] = {0, 1, 1};
    MPI_Comm plane;
    MPI(Cart_sub, cart, plane_dims, &plane);

    static double u[(N + 2) * (N + 2) * (N + 2)], un[(N + 2) * (N + 2) * (N + 2)];
    static double sbuf[6][N * N], rbuf[6][N * N];
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            for (int k = 1; k <= N; k++)
                u[L(i, j, k)] = init_val((long)coords[0] * N + i - 1, (long)coords[1] * N + j - 1,
                                         (long)coords[2] * N + k - 1);

    double lsum = 0, gsum = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Request req[12];
        for (int d = 0; d < 6; d++)
            face(u, sbuf[d], d, 0, 0);
        /* data sent towards side s arrives from the neighbour on side s^1 */
        for (int d = 0; d < 6; d++)
            MPI(Irecv, rbuf[d], N * N, MPI_DOUBLE, nb[d], d ^ 1, cart, &req[d]);
        for (int d = 0; d < 6; d++)
            MPI(Isend, sbuf[d], N * N, MPI_DOUBLE, nb[d], d, cart, &req[6 + d]);
        MPI(Waitall, 12, req, MPI_STATUSES_IGNORE);
        for (int d = 0; d < 6; d++)
            face(u, rbuf[d], d, 1, 1);
        lsum = 0;
        for (int i = 1; i <= N; i++)
            for (int j = 1; j <= N; j++)
                for (int k = 1; k <= N; k++) {
                    double v = 2 * u[L(i, j, k)] + u[L(i - 1, j, k)] + u[L(i + 1, j, k)] + u[L(i, j - 1, k)] +
                               u[L(i, j + 1, k)] + u[L(i, j, k - 1)] + u[L(i, j, k + 1)] + 1;
                    un[L(i, j, k)] = MODP(v);
                    lsum += un[L(i, j, k)];
                }
        for (int i = 1; i <= N; i++)
            for (int j = 1; j <= N; j++)
                for (int k = 1; k <= N; k++)
                    u[L(i, j, k)] = un[L(i, j, k)];
        MPI(Allreduce, &lsum, &gsum, 1, MPI_DOUBLE, MPI_SUM, cart);
    }

    /* serial periodic reference */
    long G0 = (long)dims[0] * N, G1 = (long)dims[1] * N, G2 = (long)dims[2] * N;
    double *g = malloc(sizeof(double) * (size_t)(G0 * G1 * G2));
    double *gn = malloc(sizeof(double) * (size_t)(G0 * G1 * G2));
#define GI(i, j, k) ((((i) + G0) % G0 * G1 + ((j) + G1) % G1) * G2 + ((k) + G2) % G2)
    for (long i = 0; i < G0; i++)
        for (long j = 0; j < G1; j++)
            for (long k = 0; k < G2; k++)
                g[GI(i, j, k)] = init_val(i, j, k);
    double refsum = 0;
    for (int it = 0; it < iters; it++) {
        refsum = 0;
        for (long i = 0; i < G0; i++)
            for (long j = 0; j < G1; j++)
                for (long k = 0; k < G2; k++) {
                    double v = 2 * g[GI(i, j, k)] + g[GI(i - 1, j, k)] + g[GI(i + 1, j, k)] + g[GI(i, j - 1, k)] +
                               g[GI(i, j + 1, k)] + g[GI(i, j, k - 1)] + g[GI(i, j, k + 1)] + 1;
                    gn[GI(i, j, k)] = MODP(v);
                    refsum += gn[GI(i, j, k)];
                }
        double *t = g; g = gn; gn = t;
    }
    int bad = 0;
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            for (int k = 1; k <= N; k++)
                if (u[L(i, j, k)] != g[GI((long)coords[0] * N + i - 1, (long)coords[1] * N + j - 1,
                                          (long)coords[2] * N + k - 1)])
                    bad = 1;
    free(g);
    free(gn);

    MPI(Comm_free, &plane);
    MPI(Comm_free, &cart);
    tally_timed_finalize(rank);
    int fail = bad || gsum != refsum || crank != rank;
    if (crank != rank)
        tally_result(rank, "FAIL cart rank %d != world rank", crank);
    else if (bad)
        tally_result(rank, "FAIL block (%d,%d,%d) differs from serial reference", coords[0], coords[1], coords[2]);
    else if (gsum != refsum)
        tally_result(rank, "FAIL global_sum %lld != reference %lld", (long long)gsum, (long long)refsum);
    else
        tally_result(rank, "dims=%dx%dx%d coords=%d,%d,%d iters=%d global_sum=%lld local_sum=%lld", dims[0], dims[1],
                     dims[2], coords[0], coords[1], coords[2], iters, (long long)gsum, (long long)lsum);
    tally_print(rank);
    return fail;
}
