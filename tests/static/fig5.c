/* fig5.c - the program of Figure 5 of the CYPRESS paper (Zhai et al., SC'14): a loop over an
 * if/else of Send/Recv and a call to bar() (a loop of Bcast), a call to foo() (no MPI), and a
 * Reduce under a branch. main() only adds MPI set-up around the paper's main (fig5_main). */
#include <mpi.h>
#include <stdio.h>

static int myid, size, k = 3, n = 2, m = 5, root = 0, sum;
static int buf[4], sbuf[1], rbuf[1];
static MPI_Comm comm; /* the even ranks, or the odd ranks */

int bar(void) {
  for (int k2 = 0; k2 < n; k2++)
    MPI_Bcast(buf, 4, MPI_INT, root, MPI_COMM_WORLD);
  return 0;
}

int foo(void) {
  for (int j = 0; j < m; j++)
    sum += j;
  return sum;
}

void fig5_main(void) {
  MPI_Status status;
  for (int i = 0; i < k; i++) {
    if (myid % 2 == 0)
      MPI_Send(buf, 4, MPI_INT, myid + 1, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, 4, MPI_INT, myid - 1, 0, MPI_COMM_WORLD, &status);
    bar();
  }
  foo();
  sbuf[0] = myid + buf[0];
  if (myid % 2 == 0)
    MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, root, comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &myid);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, myid % 2, myid, &comm);
  if (myid == 0)
    buf[0] = 7;
  fig5_main();
  printf("rank %d: buf %d sum %d rbuf %d\n", myid, buf[0], sum, rbuf[0]);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
