/* hybrid.c: MPI + OpenMP (MPI_THREAD_FUNNELED; build with -fopenmp, not in the Makefile).
 *
 * Each rank counts, in an OpenMP parallel reduction, the indices i < 1000 with
 * i % (rank + 2) == 0 (ceil(1000 / (rank + 2)): 500, 334, 250, 200 on ranks 0..3), fills its
 * array in a parallel loop, and every iteration sends that many doubles to its right
 * neighbour with MPI_Sendrecv (receiving up to 1000 from the left), updates the array from
 * what arrived in a parallel loop, reduces a norm over the threads and MPI_Allreduce's it.
 * The message size is computed by the threads (a slice must keep that loop); the norm and
 * the data decide nothing. Rank 0 prints the final norm. Iterations: argv[1] (default 20).
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    double *u = malloc(N * sizeof *u), *halo = malloc(N * sizeof *halo);
    int count = 0;
#pragma omp parallel for reduction(+ : count)
    for (int i = 0; i < N; i++)
        count += i % (rank + 2) == 0;
#pragma omp parallel for
    for (int i = 0; i < N; i++)
        u[i] = rank + i * 1e-3;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double global = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Status st;
        MPI_Sendrecv(u, count, MPI_DOUBLE, right, it, halo, N, MPI_DOUBLE, left, it,
                     MPI_COMM_WORLD, &st);
        int got;
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        double norm = 0;
#pragma omp parallel for reduction(+ : norm)
        for (int i = 0; i < N; i++) {
            u[i] = 0.5 * (u[i] + (i < got ? halo[i] : 0));
            norm += u[i] * u[i];
        }
        MPI_Allreduce(&norm, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("hybrid: %d threads, norm %.6e\n", omp_get_max_threads(), global);
    free(u);
    free(halo);
    MPI_Finalize();
    return 0;
}
