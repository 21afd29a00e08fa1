/* NPB-style Jacobi solver for replay (PHANTOM) tests: a 2D Laplace problem split into row
 * blocks, halo rows exchanged with Irecv/Isend/Waitall, a boundary column sent to the
 * neighbour below with a strided (derived) datatype, and a residual norm reduced with
 * MPI_Allreduce that decides when to stop — so the number of iterations depends on the data
 * received. Parameters come from rank 0 by MPI_Bcast; ranks of even and odd row blocks form
 * communicators of their own (MPI_Comm_split); the final checksums are gathered at rank 0.
 *
 *   jacobi [N [TOL [MAXITER [WORK]]]]   N×N grid (default 96), tolerance (default 1e-3),
 *                                       iteration cap (default 2000), sweeps of extra
 *                                       computation per iteration (default 1)
 *
 * Every rank prints one line of results (iterations, residual, its checksum, MPI_TAG_UB, a
 * packing size on its split communicator): the output a replay of the rank must reproduce.
 * JACOBI_PERTURB=R makes rank R send other data than its
 * own (a divergence a replay must catch).
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Parameters: read on rank 0, broadcast as one int array and one double. */
    int params[3] = {96, 2000, 1};
    double tol = 1e-3;
    if (rank == 0) {
        if (argc > 1) params[0] = atoi(argv[1]);
        if (argc > 2) tol = atof(argv[2]);
        if (argc > 3) params[1] = atoi(argv[3]);
        if (argc > 4) params[2] = atoi(argv[4]);
    }
    MPI_Bcast(params, 3, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&tol, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const int n = params[0], maxiter = params[1], work = params[2];
    const char *perturb = getenv("JACOBI_PERTURB");
    const int perturbed = perturb != NULL && atoi(perturb) == rank;

    MPI_Comm parity;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &parity);
    int parity_rank, parity_size;
    MPI_Comm_rank(parity, &parity_rank);
    MPI_Comm_size(parity, &parity_size);

    /* Rows [lo, hi) of the grid, plus one halo row above and below. */
    const int rows = n / size + (rank < n % size);
    const int lo = rank * (n / size) + (rank < n % size ? rank : n % size);
    const int cols = n;
    double *u = calloc((size_t)(rows + 2) * cols, sizeof *u);
    double *v = calloc((size_t)(rows + 2) * cols, sizeof *v);
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < cols; j++)
            u[i * cols + j] = (lo + i - 1 == 0 || j == 0) ? 1.0 : 0.0;

    /* Every fourth element of a row: a strided column sample sent down each iteration. */
    MPI_Datatype strided;
    MPI_Type_vector(cols / 4, 1, 4, MPI_DOUBLE, &strided);
    MPI_Type_commit(&strided);
    double *sample = calloc((size_t)cols, sizeof *sample);

    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double t0 = MPI_Wtime();
    double residual = 0.0;
    int iter = 0;
    while (iter < maxiter) {
        MPI_Request req[4];
        MPI_Status statuses[4];
        MPI_Irecv(&u[0], cols, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&u[(rows + 1) * cols], cols, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &req[1]);
        if (perturbed) u[cols] += 1.0;
        MPI_Isend(&u[cols], cols, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(&u[rows * cols], cols, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, statuses);

        MPI_Status status;
        MPI_Sendrecv(&u[rows * cols], 1, strided, down, 3, sample, 1, strided, up, 3,
                     MPI_COMM_WORLD, &status);

        double local = 0.0;
        for (int sweep = 0; sweep < work; sweep++) {
            local = 0.0;
            for (int i = 1; i <= rows; i++) {
                for (int j = 1; j < cols - 1; j++) {
                    const int g = lo + i - 1;
                    if (g == 0 || g == n - 1) {
                        v[i * cols + j] = u[i * cols + j];
                        continue;
                    }
                    double x = 0.25 * (u[(i - 1) * cols + j] + u[(i + 1) * cols + j] +
                                       u[i * cols + j - 1] + u[i * cols + j + 1]);
                    double d = x - u[i * cols + j];
                    local += d * d;
                    v[i * cols + j] = x;
                }
                v[i * cols] = u[i * cols];
                v[i * cols + cols - 1] = u[i * cols + cols - 1];
            }
        }
        double *t = u;
        u = v;
        v = t;
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        residual = sqrt(residual);
        iter++;
        if (residual < tol) break;
    }
    double elapsed = MPI_Wtime() - t0;

    double checksum = 0.0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < cols; j++) checksum += u[i * cols + j] * (double)(j + 1);
    double parity_sum = 0.0;
    MPI_Allreduce(&checksum, &parity_sum, 1, MPI_DOUBLE, MPI_SUM, parity);
    double *all = rank == 0 ? malloc((size_t)size * sizeof *all) : NULL;
    MPI_Gather(&checksum, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double total = 0.0;
    if (rank == 0)
        for (int r = 0; r < size; r++) total += all[r];

    /* A predefined attribute and a packing size on a communicator of the program's own. */
    int *tag_ub = NULL, found = 0, packed = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
    MPI_Pack_size(3, MPI_DOUBLE, parity, &packed);

    printf("rank %d: iterations %d residual %.6e checksum %.9e parity %d/%d sum %.9e "
           "sample %.6e total %.9e time %.6f tag_ub %d packed %d\n",
           rank, iter, residual, checksum, parity_rank, parity_size, parity_sum,
           sample[0] + sample[4], total, elapsed, found ? *tag_ub : -1, packed);
    free(all);
    free(sample);
    free(u);
    free(v);
    MPI_Type_free(&strided);
    MPI_Comm_free(&parity);
    MPI_Finalize();
    return 0;
}
