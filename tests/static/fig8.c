/* fig8.c - the recursive function of Figure 8 of the CYPRESS paper: its structure tree is a
 * pseudo-loop (one iteration per activation) whose recursive calls become branch arms. */
#include <mpi.h>
#include <stdio.h>

static int k = 4, j = 1;
static float total;

void foo(float *buf, int num) {
  if (num == 0)
    return;
  else if (num < k && num > j) {
    MPI_Bcast(buf, 1, MPI_FLOAT, 0, MPI_COMM_WORLD);
    MPI_Reduce(buf, &total, 1, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    foo(buf, num - 1);
  } else {
    MPI_Bcast(buf, 1, MPI_FLOAT, 0, MPI_COMM_WORLD);
    foo(buf, num - 1);
    MPI_Reduce(buf, &total, 1, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
  }
}

int main(int argc, char **argv) {
  int rank;
  float buf = 1.5f;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  foo(&buf, 5);
  if (rank == 0)
    printf("total %.1f\n", total);
  MPI_Finalize();
  return 0;
}
