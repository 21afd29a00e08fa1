/* Polls that repeat: a rank tests for a message that cannot have arrived, many times in a
 * row, then releases its partner and tests until the message is there. Rounds 0-3 poll on
 * rank 0, rounds 4-7 on rank 1 (the poller P, its partner Q); round r uses poll kind r % 4:
 *   0 MPI_Testany(2, {NULL, req}) (the request in slot 1),
 *   1 MPI_Test(&req),
 *   2 MPI_Testall(2, {req, NULL}),
 *   3 MPI_Iprobe(Q, r) (then MPI_Recv of the message).
 * In each round P, in order:
 *   MPI_Irecv(from Q, tag r) (not for Iprobe);
 *   FIRST quiet polls from one loop, then FIRST more from a second loop (another call site);
 *     in Test rounds P frees a heap block MPI has seen between the two loops;
 *   MPI_Send(go) to Q, which waits for it before it sends the message;
 *   polls until one finds the message (the others are quiet);
 *   MPI_Recv of the message (Iprobe rounds only);
 * and both ranks end the round in MPI_Barrier. Q: MPI_Recv(go), MPI_Send(message), barrier.
 * P prints `ROUND <r> rank=<P> quiet_after_go=<n>`; every rank `RESULT <rank> failures=<n>`
 * (payload checks). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 8
#define FIRST 100
#define GO_TAG 1000

static int failures;

/* One poll of kind `kind` on the round's request (or message); true when it found it. Inlined,
 * so each loop polls from a call site of its own. */
static inline __attribute__((always_inline)) int poll_once(int kind, MPI_Request *req, int partner,
                                                            int round) {
  int flag = 0, index = -1;
  MPI_Status status;
  MPI_Request pair[2];
  switch (kind) {
  case 0:
    pair[0] = MPI_REQUEST_NULL;
    pair[1] = *req;
    MPI_Testany(2, pair, &index, &flag, &status);
    *req = pair[1];
    if (flag && (index != 1 || status.MPI_SOURCE != partner || status.MPI_TAG != round))
      failures++;
    break;
  case 1:
    MPI_Test(req, &flag, &status);
    if (flag && (status.MPI_SOURCE != partner || status.MPI_TAG != round)) failures++;
    break;
  case 2: {
    MPI_Status statuses[2];
    pair[0] = *req;
    pair[1] = MPI_REQUEST_NULL;
    MPI_Testall(2, pair, &flag, statuses);
    *req = pair[0];
    if (flag && (statuses[0].MPI_SOURCE != partner || statuses[0].MPI_TAG != round)) failures++;
    break;
  }
  default:
    MPI_Iprobe(partner, round, MPI_COMM_WORLD, &flag, &status);
    if (flag && status.MPI_SOURCE != partner) failures++;
  }
  return flag;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int round = 0; round < ROUNDS; round++) {
    int poller = round < ROUNDS / 2 ? 0 : 1, kind = round % 4, message = -1;
    int partner = 1 - rank;
    if (rank == poller) {
      MPI_Request req = MPI_REQUEST_NULL;
      if (kind != 3) MPI_Irecv(&message, 1, MPI_INT, partner, round, MPI_COMM_WORLD, &req);
      int *block = malloc(64);
      if (kind == 1) MPI_Send(&round, 1, MPI_INT, rank, GO_TAG + 1, MPI_COMM_WORLD);
      if (kind == 1) MPI_Recv(block, 1, MPI_INT, rank, GO_TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < FIRST; i++)
        if (poll_once(kind, &req, partner, round)) failures++;
      free(block);
      for (int i = 0; i < FIRST; i++)
        if (poll_once(kind, &req, partner, round)) failures++;
      MPI_Send(&round, 1, MPI_INT, partner, GO_TAG, MPI_COMM_WORLD);
      int quiet = 0;
      while (!poll_once(kind, &req, partner, round)) quiet++;
      if (kind == 3) MPI_Recv(&message, 1, MPI_INT, partner, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (message != 100 + round) failures++;
      printf("ROUND %d rank=%d quiet_after_go=%d\n", round, rank, quiet);
    } else {
      int go = -1, payload = 100 + round;
      MPI_Recv(&go, 1, MPI_INT, partner, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (go != round) failures++;
      MPI_Send(&payload, 1, MPI_INT, partner, round, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  printf("RESULT %d failures=%d\n", rank, failures);
  MPI_Finalize();
  return 0;
}
