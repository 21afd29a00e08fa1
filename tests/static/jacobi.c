/* jacobi.c - the Jacobi iteration of Figure 3 of the CYPRESS paper: one loop holding four
 * branches, each with one blocking MPI call, exchanging boundary rows with the neighbours. */
#include <mpi.h>
#include <stdio.h>

#define N 64

int main(int argc, char **argv) {
  int rank, size, steps = 5;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rows = N / size;
  double local[N + 2][N], next[N + 2][N];
  for (int r = 0; r < rows + 2; r++)
    for (int c = 0; c < N; c++)
      local[r][c] = (r == 0 || r == rows + 1) ? 0.0 : rank + r * 0.01 + c * 0.001;
  for (int k = 0; k < steps; k++) {
    if (rank < size - 1)
      MPI_Send(local[rows], N, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD);
    if (rank > 0)
      MPI_Recv(local[0], N, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank > 0)
      MPI_Send(local[1], N, MPI_DOUBLE, rank - 1, 1, MPI_COMM_WORLD);
    if (rank < size - 1)
      MPI_Recv(local[rows + 1], N, MPI_DOUBLE, rank + 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 1; r <= rows; r++)
      for (int c = 1; c < N - 1; c++)
        next[r][c] = 0.25 * (local[r - 1][c] + local[r + 1][c] + local[r][c - 1] + local[r][c + 1]);
    for (int r = 1; r <= rows; r++)
      for (int c = 1; c < N - 1; c++)
        local[r][c] = next[r][c];
  }
  double sum = 0, all = 0;
  for (int r = 1; r <= rows; r++)
    for (int c = 0; c < N; c++)
      sum += local[r][c];
  MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("checksum %.6f\n", all);
  MPI_Finalize();
  return 0;
}
