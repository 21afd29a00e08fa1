/*
 * halo3d.c - 3D Jacobi on a NON-periodic Cartesian grid: each rank exchanges halos only
 * with the neighbours it has (MPI_Irecv/MPI_Isend per existing face, MPI_Waitall), so
 * corner, edge, face and interior ranks make 3, 4, 5 and 6 exchanges per iteration -
 * different MPI calls - while every rank computes the same 7-point update on its block.
 * The residual is reduced with MPI_Allreduce each iteration; rank 0 prints the last.
 *
 *   halo3d [N [ITERS]]   local block N^3 (default 24), ITERS iterations (default 20)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* MPICH's mpi.h declares MPI_Waitall(..., MPI_Status array_of_statuses[]) and defines
 * MPI_STATUSES_IGNORE as (MPI_Status *)1: GCC >= 11 takes the sentinel for an empty array
 * (-Wstringop-overflow), as in tally.h. */
#if defined(MPICH) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define IDX(i, j, k) ((((size_t)(i)) * (n + 2) + (j)) * (n + 2) + (k))

/* Copies face `f` (dimension f/2, low or high side f%2) between the block `u` and `buf`:
 * the interior layer next to it (unpack 0) or the halo layer (unpack 1). */
static void face(double *u, double *buf, int n, int f, int unpack)
{
    int dim = f / 2, high = f % 2;
    int pos = unpack ? (high ? n + 1 : 0) : (high ? n : 1);
    size_t c = 0;
    for (int a = 1; a <= n; a++)
        for (int b = 1; b <= n; b++, c++) {
            size_t at = dim == 0 ? IDX(pos, a, b) : dim == 1 ? IDX(a, pos, b) : IDX(a, b, pos);
            if (unpack)
                u[at] = buf[c];
            else
                buf[c] = u[at];
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 24, iters = argc > 2 ? atoi(argv[2]) : 20;
    int size, rank, dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
    MPI_Comm cart;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 3, coords);
    int peer[6];
    for (int d = 0; d < 3; d++)
        MPI_Cart_shift(cart, d, 1, &peer[2 * d], &peer[2 * d + 1]);
    size_t cells = (size_t)(n + 2) * (n + 2) * (n + 2), plane = (size_t)n * n;
    double *u = calloc(cells, sizeof *u), *v = calloc(cells, sizeof *v);
    double *out = malloc(6 * plane * sizeof *out), *in = malloc(6 * plane * sizeof *in);
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            for (int k = 1; k <= n; k++)
                u[IDX(i, j, k)] = (double)((coords[0] * n + i) * 7 + (coords[1] * n + j) * 3 + coords[2] * n + k);
    double residual = 0.0;
    for (int it = 0; it < iters; it++) {
        MPI_Request req[12];
        int nreq = 0;
        for (int f = 0; f < 6; f++) {
            if (peer[f] == MPI_PROC_NULL)
                continue;
            face(u, out + f * plane, n, f, 0);
            MPI_Irecv(in + f * plane, (int)plane, MPI_DOUBLE, peer[f], f ^ 1, cart, &req[nreq++]);
            MPI_Isend(out + f * plane, (int)plane, MPI_DOUBLE, peer[f], f, cart, &req[nreq++]);
        }
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
        for (int f = 0; f < 6; f++)
            if (peer[f] != MPI_PROC_NULL)
                face(u, in + f * plane, n, f, 1);
        double local = 0.0;
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++)
                for (int k = 1; k <= n; k++) {
                    size_t c = IDX(i, j, k);
                    v[c] = (u[c - 1] + u[c + 1] + u[c - (n + 2)] + u[c + (n + 2)] +
                            u[c - (size_t)(n + 2) * (n + 2)] + u[c + (size_t)(n + 2) * (n + 2)]) / 6.0;
                    local += (v[c] - u[c]) * (v[c] - u[c]);
                }
        double *t = u;
        u = v;
        v = t;
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
    }
    if (rank == 0)
        printf("halo3d: %d ranks (%dx%dx%d), residual %.6e\n", size, dims[0], dims[1], dims[2], residual);
    free(u);
    free(v);
    free(out);
    free(in);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
