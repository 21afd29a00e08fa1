/* main2.c - the main file of a two-file program: a loop calling exchange() (halo2.c), then an
 * Allreduce. */
#include <mpi.h>
#include <stdio.h>

int exchange(int rank, int size, int value);

int main(int argc, char **argv) {
  int rank, size, total = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int v = rank;
  for (int it = 0; it < 3; it++)
    v = exchange(rank, size, v);
  MPI_Allreduce(&v, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("total %d\n", total);
  MPI_Finalize();
  return 0;
}
