/* Per-call cost microbenchmarks for `make bench`.
 *   micro comm_rank N   N calls of MPI_Comm_rank
 *   micro p2p N         N iterations of Irecv+Isend with both ring neighbours, Waitall
 *   micro allreduce N   N Allreduces of one 8-byte double
 *   micro nested N      N iterations of a loop over 4 levels, each taking one of two branches
 *                       by a bit of the iteration number (a binary counter): MPI_Type_size of
 *                       the level's datatype, or MPI_Comm_rank. Cheap calls in an irregular
 *                       order, so the recorder's compression is most of the cost (4 calls/iter).
 * Rank 0 prints `NS_PER_ITER <ns>`: the loop's wall time (clock_gettime, after a barrier),
 * divided by N, as the maximum over ranks. The loop runs 16 iterations first, untimed. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Iterations run before the timed loop. */
#define WARM_UP 16

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Runs iterations [from, to) of loop `kind` between ring neighbours `left` and `right`;
 * returns 0, or -1 for an unknown loop. */
static int run_loop(const char *kind, long from, long to, int left, int right) {
  double sendbuf[2] = {1.0, 2.0}, recvbuf[2];
  MPI_Request reqs[4];
  MPI_Status statuses[4];
  int r;
  if (strcmp(kind, "comm_rank") == 0) {
    for (long i = from; i < to; i++) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  } else if (strcmp(kind, "p2p") == 0) {
    for (long i = from; i < to; i++) {
      MPI_Irecv(&recvbuf[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &reqs[0]);
      MPI_Irecv(&recvbuf[1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[1]);
      MPI_Isend(&sendbuf[0], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &reqs[2]);
      MPI_Isend(&sendbuf[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[3]);
      MPI_Waitall(4, reqs, statuses);
    }
  } else if (strcmp(kind, "nested") == 0) {
    MPI_Datatype types[4] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE};
    int bytes;
    for (long i = from; i < to; i++) {
      for (int level = 0; level < 4; level++) {
        if ((i >> level) & 1)
          MPI_Type_size(types[level], &bytes);
        else
          MPI_Comm_rank(MPI_COMM_WORLD, &r);
      }
    }
  } else if (strcmp(kind, "allreduce") == 0) {
    for (long i = from; i < to; i++)
      MPI_Allreduce(&sendbuf[0], &recvbuf[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  } else {
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: micro comm_rank|p2p|allreduce|nested N\n");
    MPI_Finalize();
    return 2;
  }
  const char *kind = argv[1];
  long n = atol(argv[2]);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  /* Warm-up: every call of the loop made once (16 iterations cover the nested loop's
   * branches), so one-time costs (a wrapper's first call, a signature's first recording)
   * stay out of the per-call times. */
  if (run_loop(kind, 0, WARM_UP, left, right) != 0) {
    if (rank == 0) fprintf(stderr, "micro: unknown benchmark %s\n", kind);
    MPI_Finalize();
    return 2;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double start = now_ns();
  run_loop(kind, 0, n, left, right);
  double elapsed = now_ns() - start, slowest;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("NS_PER_ITER %.1f\n", slowest / (double)n);
  MPI_Finalize();
  return 0;
}
