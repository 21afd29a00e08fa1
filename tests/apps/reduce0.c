/*
 * reduce0.c - 2D PERIODIC 5-point stencil on a Cartesian communicator, ending
 * with rooted collectives to rank 0.
 *
 * MPI_Dims_create (2D), MPI_Cart_create (periodic, no reorder), MPI_Cart_coords,
 * MPI_Cart_shift x2. Per iteration: 4 MPI_Sendrecv on the Cartesian
 * communicator (face d to neighbour d, the opposite halo from the opposite
 * neighbour; with 1 or 2 ranks along a dimension that is self / the same
 * rank twice, tags disambiguate). After the loop, on MPI_COMM_WORLD: an
 * MPI_Reduce (SUM, root 0) of a checksum (the local block sums of every
 * iteration added up) and an MPI_Gather to rank 0 of each rank's final local sum.
 *
 * Values are integers mod 1000003 (long long): everything is exact. Every
 * rank recomputes the global periodic grid serially and checks its block;
 * rank 0 also checks the reduced checksum and every gathered local sum.
 *
 * Per-iteration calls: 4 Sendrecv.
 */
#include "tally.h"

#define N 6 /* local block is N x N */
#define MOD 1000003LL
#define U(i, j) u[(i) * (N + 2) + (j)]

static long long init_val(long gi, long gj) { return (gi * 131 + gj * 17 + 7) % MOD; }

/* copy face d (0 = -dim0, 1 = +dim0, 2 = -dim1, 3 = +dim1) of the interior or halo to/from buf */
static void face(long long *u, long long *buf, int d, int halo, int unpack)
{
    int pos = halo ? (d % 2 ? N + 1 : 0) : (d % 2 ? N : 1);
    for (int a = 0; a < N; a++) {
        long long *p = d < 2 ? &U(pos, a + 1) : &U(a + 1, pos);
        if (unpack)
            *p = buf[a];
        else
            buf[a] = *p;
    }
}

int main(int argc, char **argv)
{
    int rank, size, crank, dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2], nb[4];
    MPI_Comm cart;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    MPI(Dims_create, size, 2, dims);
    MPI(Cart_create, MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI(Comm_rank, cart, &crank);
    MPI(Cart_coords, cart, crank, 2, coords);
    MPI(Cart_shift, cart, 0, 1, &nb[0], &nb[1]);
    MPI(Cart_shift, cart, 1, 1, &nb[2], &nb[3]);

    static long long u[(N + 2) * (N + 2)], un[(N + 2) * (N + 2)], sbuf[N], rbuf[N];
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            U(i, j) = init_val((long)coords[0] * N + i - 1, (long)coords[1] * N + j - 1);

    long long lsum = 0, check = 0;
    for (int it = 0; it < iters; it++) {
        for (int d = 0; d < 4; d++) {
            face(u, sbuf, d, 0, 0);
            MPI(Sendrecv, sbuf, N, MPI_LONG_LONG, nb[d], d, rbuf, N, MPI_LONG_LONG, nb[d ^ 1], d, cart,
                MPI_STATUS_IGNORE);
            face(u, rbuf, d ^ 1, 1, 1);
        }
        lsum = 0;
        for (int i = 1; i <= N; i++)
            for (int j = 1; j <= N; j++) {
                un[i * (N + 2) + j] = (2 * U(i, j) + U(i - 1, j) + U(i + 1, j) + U(i, j - 1) + U(i, j + 1) + 1) % MOD;
                lsum += un[i * (N + 2) + j];
            }
        memcpy(u, un, sizeof u);
        check += lsum;
    }
    long long gcheck = 0, *gathered = malloc(sizeof(long long) * (size_t)size);
    MPI(Reduce, &check, &gcheck, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI(Gather, &lsum, 1, MPI_LONG_LONG, gathered, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);

    /* serial periodic reference on the global grid */
    long G0 = (long)dims[0] * N, G1 = (long)dims[1] * N;
    long long *g = malloc(sizeof(long long) * (size_t)(G0 * G1)), *gn = malloc(sizeof(long long) * (size_t)(G0 * G1));
#define GI(i, j) (((i) + G0) % G0 * G1 + ((j) + G1) % G1)
    for (long i = 0; i < G0; i++)
        for (long j = 0; j < G1; j++)
            g[GI(i, j)] = init_val(i, j);
    long long refcheck = 0;
    for (int it = 0; it < iters; it++) {
        for (long i = 0; i < G0; i++)
            for (long j = 0; j < G1; j++) {
                gn[GI(i, j)] = (2 * g[GI(i, j)] + g[GI(i - 1, j)] + g[GI(i + 1, j)] + g[GI(i, j - 1)] +
                                g[GI(i, j + 1)] + 1) % MOD;
                refcheck += gn[GI(i, j)];
            }
        long long *t = g; g = gn; gn = t;
    }
    int bad = crank != rank, badgather = -1;
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            bad |= U(i, j) != g[GI((long)coords[0] * N + i - 1, (long)coords[1] * N + j - 1)];
    for (int r = 0; rank == 0 && r < size && badgather < 0; r++) { /* row-major Cartesian ranks */
        long long s = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                s += g[GI((long)(r / dims[1]) * N + i, (long)(r % dims[1]) * N + j)];
        if (s != gathered[r])
            badgather = r;
    }
    free(g);
    free(gn);
    free(gathered);

    MPI(Comm_free, &cart);
    tally_timed_finalize(rank);
    int fail = bad || badgather >= 0 || (rank == 0 && gcheck != refcheck);
    if (bad)
        tally_result(rank, "FAIL block (%d,%d) differs from serial reference (cart rank %d)", coords[0], coords[1],
                     crank);
    else if (badgather >= 0)
        tally_result(rank, "FAIL gathered local sum of rank %d differs from serial reference", badgather);
    else if (fail)
        tally_result(rank, "FAIL reduced checksum %lld != reference %lld", gcheck, refcheck);
    else if (rank == 0)
        tally_result(rank, "dims=%dx%d coords=%d,%d iters=%d local_sum=%lld checksum=%lld gathered=ok", dims[0],
                     dims[1], coords[0], coords[1], iters, lsum, gcheck);
    else
        tally_result(rank, "dims=%dx%d coords=%d,%d iters=%d local_sum=%lld", dims[0], dims[1], coords[0], coords[1],
                     iters, lsum);
    tally_print(rank);
    return fail;
}
