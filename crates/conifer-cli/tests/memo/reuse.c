/* Calls with the same raw arguments whose recorded inputs must differ: the objects behind
 * the arguments changed in between. Each round, on every rank independently (messages to
 * itself):
 *   datatype: two types A, B made; Sendrecv with B; both freed (A, then B); type C made,
 *             which the MPI's free list usually places at B's handle; Sendrecv with C.
 *             Conifer names types lowest-first: B is type 1, C is type 0.
 *   buffer:   two heap blocks P, Q; Sendrecv from P, then from Q; both freed (P, then Q);
 *             block R allocated, which malloc usually places at Q's address; Sendrecv from
 *             R. Conifer names segments lowest-first on first use: P is segment 0, Q 1, and
 *             R, after both were freed, 0.
 *   comm:     two duplicates D, E of MPI_COMM_WORLD; Sendrecv on E; both freed (D, then E);
 *             duplicate F made, usually at E's handle; Sendrecv on F. F gets D's freed id.
 * Prints `REUSED <rank> types=<n> blocks=<n> comms=<n>` (in how many rounds the handle or
 * address came back) and `RESULT <rank> failures=<n>` (payload checks). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

/* One message of `count` ints to itself, checked. */
static void self_exchange(const int *send, int count, MPI_Datatype type, MPI_Comm comm) {
  int rank, recv[4] = {0, 0, 0, 0};
  MPI_Comm_rank(comm, &rank);
  MPI_Sendrecv(send, count, type, rank, 7, recv, count, type, rank, 7, comm, MPI_STATUS_IGNORE);
  for (int i = 0; i < count; i++)
    if (recv[i] != send[i]) failures++;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  int values[2] = {rank + 1, rank + 2};
  int types_reused = 0, blocks_reused = 0, comms_reused = 0;
  for (int round = 0; round < rounds; round++) {
    MPI_Datatype a, b, c;
    MPI_Type_contiguous(2, MPI_INT, &a);
    MPI_Type_commit(&a);
    MPI_Type_contiguous(2, MPI_INT, &b);
    MPI_Type_commit(&b);
    self_exchange(values, 1, b, MPI_COMM_WORLD);
    MPI_Datatype was_b = b;
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MPI_Type_contiguous(2, MPI_INT, &c);
    MPI_Type_commit(&c);
    types_reused += c == was_b;
    self_exchange(values, 1, c, MPI_COMM_WORLD);
    MPI_Type_free(&c);

    int *p = malloc(64), *q = malloc(64);
    p[0] = rank + 5;
    q[0] = rank + 3;
    self_exchange(p, 1, MPI_INT, MPI_COMM_WORLD);
    self_exchange(q, 1, MPI_INT, MPI_COMM_WORLD);
    int *was_q = q;
    free(p);
    free(q);
    int *r = malloc(64);
    r[0] = rank + 4;
    blocks_reused += r == was_q;
    self_exchange(r, 1, MPI_INT, MPI_COMM_WORLD);
    free(r);

    MPI_Comm d, e, f;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    self_exchange(values, 1, MPI_INT, e);
    MPI_Comm was_e = e;
    MPI_Comm_free(&d);
    MPI_Comm_free(&e);
    MPI_Comm_dup(MPI_COMM_WORLD, &f);
    comms_reused += f == was_e;
    self_exchange(values, 1, MPI_INT, f);
    MPI_Comm_free(&f);
  }
  printf("REUSED %d types=%d blocks=%d comms=%d\n", rank, types_reused, blocks_reused,
         comms_reused);
  printf("RESULT %d failures=%d\n", rank, failures);
  MPI_Finalize();
  return 0;
}
