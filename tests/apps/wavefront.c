/*
 * wavefront.c - KBA-style discrete-ordinates transport sweep (Sweep3D's pattern).
 *
 * The x-y plane is split over an MPI_Dims_create process grid; z stays whole on
 * every rank and is cut into blocks of NZB planes so the sweep pipelines. For each
 * of the 8 octants and each z block a rank receives the incoming angular fluxes of
 * its upstream x and y neighbours (MPI_Recv), sweeps its cells with the diamond
 * difference scheme for every angle, and sends the outgoing fluxes downstream
 * (MPI_Send). After the 8 octants the largest relative change of the scalar flux
 * is reduced with MPI_Allreduce(MAX) and the source iteration goes on:
 *
 *     while (err > epsi && epsi >= 0) || (its < (int)(-epsi + .99) && epsi < 0)
 *
 * so a tolerance >= 0 means "converge" and a negative one "exactly -epsi
 * iterations" (how such codes are benchmarked). At the end the flux total is
 * reduced to rank 0 (MPI_Reduce), which prints it.
 *
 * The input deck (optional first argument, a file read by rank 0 and broadcast):
 *     nx ny nz      global cells
 *     nang          angles per octant
 *     nzb           z planes per pipelined block
 *     epsi          tolerance (< 0: run exactly -epsi iterations)
 *     maxits        iteration limit
 * Without a deck: 24 24 24 / 4 / 4 / -3 / 50.
 */
#include "tally.h"
#include <math.h>
#include <string.h>

/* What rank 0 reads and broadcasts. */
struct deck {
    int nx, ny, nz, nang, nzb, maxits;
    double epsi;
};

static struct deck read_deck(int rank, int argc, char **argv)
{
    struct deck d = {24, 24, 24, 4, 4, 50, -3.0};
    if (rank == 0 && argc > 1) {
        FILE *in = fopen(argv[1], "r");
        if (!in || fscanf(in, "%d %d %d %d %d %lf %d", &d.nx, &d.ny, &d.nz, &d.nang, &d.nzb,
                          &d.epsi, &d.maxits) != 7) {
            fprintf(stderr, "wavefront: cannot read the input deck %s\n", argv[1]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fclose(in);
    }
    int ints[6] = {d.nx, d.ny, d.nz, d.nang, d.nzb, d.maxits};
    MPI(Bcast, ints, 6, MPI_INT, 0, MPI_COMM_WORLD);
    MPI(Bcast, &d.epsi, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    d.nx = ints[0], d.ny = ints[1], d.nz = ints[2], d.nang = ints[3], d.nzb = ints[4];
    d.maxits = ints[5];
    return d;
}

/* Cells [lo, lo + n) of `total` split over `parts`, part `p`. */
static void share(int total, int parts, int p, int *lo, int *n)
{
    int base = total / parts, extra = total % parts;
    *n = base + (p < extra);
    *lo = p * base + (p < extra ? p : extra);
}

int main(int argc, char **argv)
{
    int rank, size, dims[2] = {0, 0};
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    struct deck d = read_deck(rank, argc, argv);
    MPI(Dims_create, size, 2, dims);
    int pi = rank % dims[0], pj = rank / dims[0];
    int x0, nxl, y0, nyl;
    share(d.nx, dims[0], pi, &x0, &nxl);
    share(d.ny, dims[1], pj, &y0, &nyl);
    int nz = d.nz, na = d.nang, nzb = d.nzb;
    long cells = (long)nxl * nyl * nz;

    double *phi = malloc(cells * sizeof *phi), *phinew = malloc(cells * sizeof *phi);
    double *src = malloc(cells * sizeof *src), *sigt = malloc(cells * sizeof *sigt);
    double *psix = malloc((size_t)nyl * nzb * na * sizeof *psix);
    double *psiy = malloc((size_t)nxl * nzb * na * sizeof *psiy);
    double *psiz = malloc((size_t)nxl * nyl * na * sizeof *psiz);
    double *mu = malloc(na * sizeof *mu), *eta = malloc(na * sizeof *eta);
    for (int m = 0; m < na; m++) {
        mu[m] = (m + 1.0) / (na + 1.0);
        eta[m] = sqrt((1 - mu[m] * mu[m]) / 2);
    }
    for (long c = 0; c < cells; c++) {
        long i = c % nxl + x0, j = c / nxl % nyl + y0, k = c / ((long)nxl * nyl);
        phi[c] = 0;
        sigt[c] = 1.0 + 0.5 * ((i + 2 * j + 3 * k) % 3);
        src[c] = (i < d.nx / 2 && j < d.ny / 2 && k < nz / 2) ? 1.0 : 0.0;
    }
    double dx = 1.0 / d.nx, dy = 1.0 / d.ny, dz = 1.0 / nz, w = 1.0 / (8.0 * na);
    double start = MPI(Wtime), err = 0;
    int its;
    for (its = 1; its <= d.maxits; its++) {
        memset(phinew, 0, cells * sizeof *phinew);
        for (int oct = 0; oct < 8; oct++) {
            int sx = oct & 1 ? -1 : 1, sy = oct & 2 ? -1 : 1, sz = oct & 4 ? -1 : 1;
            int upx = pi - sx, upy = pj - sy, dnx = pi + sx, dny = pj + sy;
            int from_x = upx >= 0 && upx < dims[0] ? upx + pj * dims[0] : MPI_PROC_NULL;
            int from_y = upy >= 0 && upy < dims[1] ? pi + upy * dims[0] : MPI_PROC_NULL;
            int to_x = dnx >= 0 && dnx < dims[0] ? dnx + pj * dims[0] : MPI_PROC_NULL;
            int to_y = dny >= 0 && dny < dims[1] ? pi + dny * dims[0] : MPI_PROC_NULL;
            memset(psiz, 0, (size_t)nxl * nyl * na * sizeof *psiz);
            for (int kb = 0; kb < nz; kb += nzb) {
                int nk = kb + nzb <= nz ? nzb : nz - kb;
                memset(psix, 0, (size_t)nyl * nzb * na * sizeof *psix);
                memset(psiy, 0, (size_t)nxl * nzb * na * sizeof *psiy);
                MPI(Recv, psix, nyl * nk * na, MPI_DOUBLE, from_x, oct, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE);
                MPI(Recv, psiy, nxl * nk * na, MPI_DOUBLE, from_y, oct, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE);
                for (int kk = 0; kk < nk; kk++) {
                    int k = sz > 0 ? kb + kk : nz - 1 - (kb + kk);
                    for (int jj = 0; jj < nyl; jj++) {
                        int j = sy > 0 ? jj : nyl - 1 - jj;
                        for (int ii = 0; ii < nxl; ii++) {
                            int i = sx > 0 ? ii : nxl - 1 - ii;
                            long c = i + (long)nxl * (j + (long)nyl * k);
                            double q = src[c] + 0.5 * sigt[c] * phi[c], sum = 0;
                            for (int m = 0; m < na; m++) {
                                double cx = 2 * mu[m] / dx, cy = 2 * eta[m] / dy;
                                double cz = 2 * eta[m] / dz;
                                double *ax = &psix[(j * nk + kk) * na + m];
                                double *ay = &psiy[(i * nk + kk) * na + m];
                                double *az = &psiz[(j * nxl + i) * na + m];
                                double psi = (q + cx * *ax + cy * *ay + cz * *az) /
                                             (sigt[c] + cx + cy + cz);
                                *ax = 2 * psi - *ax;
                                *ay = 2 * psi - *ay;
                                *az = 2 * psi - *az;
                                sum += psi;
                            }
                            phinew[c] += w * sum;
                        }
                    }
                }
                MPI(Send, psix, nyl * nk * na, MPI_DOUBLE, to_x, oct, MPI_COMM_WORLD);
                MPI(Send, psiy, nxl * nk * na, MPI_DOUBLE, to_y, oct, MPI_COMM_WORLD);
            }
        }
        double change = 0;
        for (long c = 0; c < cells; c++) {
            double rel = fabs(phinew[c] - phi[c]) / (fabs(phinew[c]) > 1e-30 ? fabs(phinew[c]) : 1);
            change = rel > change ? rel : change;
            phi[c] = phinew[c];
        }
        MPI(Allreduce, &change, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("iteration %3d  err %.6e\n", its, err);
        if (!((err > d.epsi && d.epsi >= 0) || (its < (int)(-d.epsi + .99) && d.epsi < 0)))
            break;
    }
    double local = 0, total = 0;
    for (long c = 0; c < cells; c++)
        local += phi[c];
    MPI(Reduce, &local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("grid %dx%dx%d on %dx%d ranks, %d angles per octant: %d iterations\n", d.nx, d.ny,
               nz, dims[0], dims[1], na, its > d.maxits ? d.maxits : its);
        printf("flux total %.10e\n", total * dx * dy * dz);
        printf("time %.3f s\n", MPI(Wtime) - start);
    }
    free(phi), free(phinew), free(src), free(sigt), free(psix), free(psiy), free(psiz);
    free(mu), free(eta);
    MPI(Finalize);
    tally_print(rank);
    return 0;
}
