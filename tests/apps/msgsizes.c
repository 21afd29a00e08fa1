/*
 * msgsizes.c - messages of known sizes, so a test can check the byte counts
 * recorded in their receive statuses against the sizes sent.
 *
 * Ranks pair up (2k sends, 2k+1 receives; an odd last rank only counts).
 * Each iteration the sender sends, for every entry i of SIZES, SIZES[i] bytes
 * as MPI_BYTE with tag i, then SIZES[i] / 4 ints as MPI_INT with tag 100 + i.
 * The receiver takes the bytes with MPI_Recv(MPI_ANY_TAG) into a buffer larger
 * than any message, and the ints with MPI_Irecv(MPI_ANY_TAG) + MPI_Wait; it
 * checks every status's MPI_Get_count itself. So in every MPI_Recv status the
 * received bytes are SIZES[tag], and in every MPI_Wait status 4 * (SIZES[tag -
 * 100] / 4).
 */
#include "tally.h"

static const int SIZES[] = {0, 1, 7, 8, 1000, 65536, (1 << 20) + 3};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
#define MAXBYTES ((1 << 20) + 64)

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    char *buf = calloc(MAXBYTES, 1);
    int fail = 0;
    long long received = 0;
    int receiver = rank % 2 == 1, sender = rank % 2 == 0 && rank + 1 < size;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < NSIZES; i++) {
            if (sender) {
                MPI(Send, buf, SIZES[i], MPI_BYTE, rank + 1, i, MPI_COMM_WORLD);
                MPI(Send, buf, SIZES[i] / 4, MPI_INT, rank + 1, 100 + i, MPI_COMM_WORLD);
            } else if (receiver) {
                MPI_Status st;
                MPI_Request req;
                int count;
                MPI(Recv, buf, MAXBYTES, MPI_BYTE, rank - 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                MPI(Get_count, &st, MPI_BYTE, &count);
                if (st.MPI_TAG != i || count != SIZES[i])
                    fail = 1;
                received += count;
                MPI(Irecv, buf, MAXBYTES / 4, MPI_INT, rank - 1, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
                MPI(Wait, &req, &st);
                MPI(Get_count, &st, MPI_INT, &count);
                if (st.MPI_TAG != 100 + i || count != SIZES[i] / 4)
                    fail = 1;
                received += 4LL * count;
            }
        }
    }
    free(buf);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL a status's tag or count differs from the message sent");
    else
        tally_result(rank, "size=%d iters=%d received_bytes=%lld", size, iters, received);
    tally_print(rank);
    return fail != 0;
}
