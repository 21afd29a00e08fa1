/* shortcircuit.c - an MPI call only on the false side of an `&&` condition, in a function called
 * from a loop: the arm's block has two predecessors, so its hook needs an edge of its own. */
#include <mpi.h>
#include <stdio.h>

static int skipped;

static void maybe_barrier(int a, int b) {
  if (a > 0 && b > 0)
    skipped++;
  else
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 4; i++)
    maybe_barrier(i % 2, i % 3);
  printf("rank %d skipped %d\n", rank, skipped);
  MPI_Finalize();
  return 0;
}
