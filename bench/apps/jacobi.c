/*
 * jacobi.c - compute-heavy Jacobi sweeps on a 400x400 grid per rank with one
 * MPI_Allreduce of the residual per sweep: the untraced speed of a `conifer cc`
 * build against the plain compiler's. Usage: jacobi [sweeps]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 400

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, sweeps = argc > 1 ? atoi(argv[1]) : 400;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static double u[N + 2][N + 2], v[N + 2][N + 2];
    for (int j = 0; j < N + 2; j++)
        u[0][j] = 1.0;
    double total = 0;
    for (int s = 0; s < sweeps; s++) {
        double local = 0;
        for (int i = 1; i <= N; i++)
            for (int j = 1; j <= N; j++) {
                v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
                local += v[i][j] > 0 ? v[i][j] : -v[i][j];
            }
        for (int i = 1; i <= N; i++)
            for (int j = 1; j <= N; j++)
                u[i][j] = v[i][j];
        MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("residual %.6f\n", total);
    MPI_Finalize();
    return 0;
}
