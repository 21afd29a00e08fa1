/*
 * torus.c - 2D PERIODIC 5-point stencil on MPI_COMM_WORLD, neighbours by
 * plain arithmetic (no Cartesian communicator).
 *
 * dims from MPI_Dims_create(P, 2, dims); rank r sits at row-major coordinates
 * (r / dims[1], r % dims[1]); its north, south, west and east neighbours wrap
 * around modulo dims. Every iteration posts 4 MPI_Irecv + 4 MPI_Isend (with 1
 * or 2 ranks along a dimension that is self / the same rank twice; tags
 * disambiguate), MPI_Waitall, updates the block and MPI_Allreduce's its sum.
 *
 * Values are integers mod 1000003 (long long): exact. Every rank recomputes
 * the global periodic grid serially and checks its block and every global sum.
 *
 * Per-iteration calls: 4 Irecv, 4 Isend, 1 Waitall, 1 Allreduce.
 */
#include "tally.h"

#define N 6 /* local block is N x N */
#define MOD 1000003LL
#define U(i, j) u[(i) * (N + 2) + (j)]

static long long init_val(long gi, long gj) { return (gi * 37 + gj * 101 + 5) % MOD; }

int main(int argc, char **argv)
{
    int rank, size, dims[2] = {0, 0};
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    MPI(Dims_create, size, 2, dims);
    int d0 = dims[0], d1 = dims[1], px = rank / d1, py = rank % d1;
    /* d: 0 = north (-x), 1 = south (+x), 2 = west (-y), 3 = east (+y) */
    int nb[4] = {(px + d0 - 1) % d0 * d1 + py, (px + 1) % d0 * d1 + py, px * d1 + (py + d1 - 1) % d1,
                 px * d1 + (py + 1) % d1};

    static long long u[(N + 2) * (N + 2)], un[(N + 2) * (N + 2)], sbuf[4][N], rbuf[4][N];
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            U(i, j) = init_val((long)px * N + i - 1, (long)py * N + j - 1);

    long long lsum = 0, gsum = 0, *hist = malloc(sizeof(long long) * (size_t)iters);
    for (int it = 0; it < iters; it++) {
        MPI_Request req[8];
        for (int a = 0; a < N; a++) {
            sbuf[0][a] = U(1, a + 1);
            sbuf[1][a] = U(N, a + 1);
            sbuf[2][a] = U(a + 1, 1);
            sbuf[3][a] = U(a + 1, N);
        }
        for (int d = 0; d < 4; d++)
            MPI(Irecv, rbuf[d], N, MPI_LONG_LONG, nb[d], d ^ 1, MPI_COMM_WORLD, &req[d]);
        for (int d = 0; d < 4; d++)
            MPI(Isend, sbuf[d], N, MPI_LONG_LONG, nb[d], d, MPI_COMM_WORLD, &req[4 + d]);
        MPI(Waitall, 8, req, MPI_STATUSES_IGNORE);
        for (int a = 0; a < N; a++) {
            U(0, a + 1) = rbuf[0][a];
            U(N + 1, a + 1) = rbuf[1][a];
            U(a + 1, 0) = rbuf[2][a];
            U(a + 1, N + 1) = rbuf[3][a];
        }
        lsum = 0;
        for (int i = 1; i <= N; i++)
            for (int j = 1; j <= N; j++) {
                un[i * (N + 2) + j] = (3 * U(i, j) + U(i - 1, j) + 2 * U(i + 1, j) + U(i, j - 1) + U(i, j + 1) + it) % MOD;
                lsum += un[i * (N + 2) + j];
            }
        memcpy(u, un, sizeof u);
        MPI(Allreduce, &lsum, &gsum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        hist[it] = gsum;
    }

    /* serial periodic reference on the global grid */
    long G0 = (long)d0 * N, G1 = (long)d1 * N;
    long long *g = malloc(sizeof(long long) * (size_t)(G0 * G1)), *gn = malloc(sizeof(long long) * (size_t)(G0 * G1));
#define GI(i, j) (((i) + G0) % G0 * G1 + ((j) + G1) % G1)
    for (long i = 0; i < G0; i++)
        for (long j = 0; j < G1; j++)
            g[GI(i, j)] = init_val(i, j);
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        long long s = 0;
        for (long i = 0; i < G0; i++)
            for (long j = 0; j < G1; j++) {
                gn[GI(i, j)] = (3 * g[GI(i, j)] + g[GI(i - 1, j)] + 2 * g[GI(i + 1, j)] + g[GI(i, j - 1)] +
                                g[GI(i, j + 1)] + it) % MOD;
                s += gn[GI(i, j)];
            }
        bad |= s != hist[it];
        long long *t = g; g = gn; gn = t;
    }
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            bad |= U(i, j) != g[GI((long)px * N + i - 1, (long)py * N + j - 1)];
    free(g);
    free(gn);
    free(hist);

    tally_timed_finalize(rank);
    if (bad)
        tally_result(rank, "FAIL block (%d,%d) or a global sum differs from serial reference", px, py);
    else
        tally_result(rank, "dims=%dx%d coords=%d,%d iters=%d global_sum=%lld local_sum=%lld", d0, d1, px, py, iters,
                     gsum, lsum);
    tally_print(rank);
    return bad;
}
