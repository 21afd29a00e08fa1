/* Fake requests of the slicing runtime (crates/conifer-cli/tests/slice.rs): with argument
 * "skip", the operations on the "fake" buffers are preceded by conifer_slice_skip(), as a
 * sliced program's unmarked calls are, and mixed with real ones in every completion call.
 * Without it every call executes (the same program, unsliced). The checks hold both ways. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

void conifer_slice_skip(void) __attribute__((weak));

static int skipping, rank, failures;

static void skip(void)
{
    if (skipping && conifer_slice_skip)
        conifer_slice_skip();
}

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            printf("FAIL rank %d line %d: %s\n", rank, __LINE__, #c);         \
            failures++;                                                       \
        }                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    skipping = argc > 1 && strcmp(argv[1], "skip") == 0;
    int peer = rank ^ 1, n, index, flag;
    double real_in[8] = {0}, real_out[8] = {0}, fake_in[8] = {0}, fake_out[8] = {0};
    MPI_Request r[4];
    MPI_Status st[4];
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int it = 0; it < 3; it++) {
        /* Waitall over real and fake requests, statuses of the fake receive made up */
        MPI_Irecv(real_in, 8, MPI_DOUBLE, peer, 1, comm, &r[0]);
        skip();
        MPI_Irecv(fake_in, 8, MPI_DOUBLE, peer, 2, comm, &r[1]);
        MPI_Isend(real_out, 8, MPI_DOUBLE, peer, 1, comm, &r[2]);
        skip();
        MPI_Isend(fake_out, 8, MPI_DOUBLE, peer, 2, comm, &r[3]);
        MPI_Waitall(4, r, st);
        MPI_Get_count(&st[1], MPI_DOUBLE, &n);
        CHECK(st[1].MPI_SOURCE == peer && st[1].MPI_TAG == 2 && n == 8);
        for (int i = 0; i < 4; i++)
            CHECK(r[i] == MPI_REQUEST_NULL);

        /* Waitany: a pending fake first */
        MPI_Irecv(real_in, 8, MPI_DOUBLE, peer, 3, comm, &r[0]);
        skip();
        MPI_Irecv(fake_in, 8, MPI_DOUBLE, peer, 4, comm, &r[1]);
        MPI_Isend(real_out, 8, MPI_DOUBLE, peer, 3, comm, &r[2]);
        skip();
        MPI_Isend(fake_out, 8, MPI_DOUBLE, peer, 4, comm, &r[3]);
        MPI_Waitany(4, r, &index, &st[0]);
        if (skipping)
            CHECK(index == 1 && st[0].MPI_TAG == 4 && r[1] == MPI_REQUEST_NULL);
        MPI_Waitall(4, r, MPI_STATUSES_IGNORE);

        /* Testall and Testany: real requests from MPI_PROC_NULL complete at once */
        MPI_Irecv(real_in, 8, MPI_DOUBLE, MPI_PROC_NULL, 5, comm, &r[0]);
        skip();
        MPI_Irecv(fake_in, 8, MPI_DOUBLE, peer, 6, comm, &r[1]);
        skip();
        MPI_Isend(fake_out, 8, MPI_DOUBLE, peer, 6, comm, &r[2]);
        do
            MPI_Testall(3, r, &flag, st);
        while (!flag);
        MPI_Get_count(&st[1], MPI_DOUBLE, &n);
        CHECK(st[1].MPI_SOURCE == peer && st[1].MPI_TAG == 6 && n == 8);
        skip();
        MPI_Irecv(fake_in, 8, MPI_DOUBLE, peer, 7, comm, &r[0]);
        skip();
        MPI_Isend(fake_out, 8, MPI_DOUBLE, peer, 7, comm, &r[1]);
        for (int done = 0; done < 2;) {
            MPI_Testany(2, r, &index, &flag, MPI_STATUS_IGNORE);
            done += flag && index != MPI_UNDEFINED;
        }

        /* Waitsome until every request is done */
        MPI_Irecv(real_in, 8, MPI_DOUBLE, peer, 8, comm, &r[0]);
        skip();
        MPI_Irecv(fake_in, 8, MPI_DOUBLE, peer, 9, comm, &r[1]);
        MPI_Isend(real_out, 8, MPI_DOUBLE, peer, 8, comm, &r[2]);
        skip();
        MPI_Isend(fake_out, 8, MPI_DOUBLE, peer, 9, comm, &r[3]);
        for (int done = 0, out, indices[4]; done < 4; done += out) {
            MPI_Waitsome(4, r, &out, indices, MPI_STATUSES_IGNORE);
            if (out == MPI_UNDEFINED)
                break;
        }

        /* Request_get_status, Request_free and Test on single fakes */
        skip();
        MPI_Irecv(fake_in, 8, MPI_DOUBLE, peer, 10, comm, &r[0]);
        skip();
        MPI_Isend(fake_out, 8, MPI_DOUBLE, peer, 10, comm, &r[1]);
        MPI_Request_get_status(r[0], &flag, &st[0]);
        if (skipping)
            CHECK(flag && st[0].MPI_TAG == 10 && r[0] != MPI_REQUEST_NULL);
        MPI_Request_free(&r[1]);
        CHECK(r[1] == MPI_REQUEST_NULL);
        do
            MPI_Test(&r[0], &flag, &st[0]);
        while (!flag);
        CHECK(r[0] == MPI_REQUEST_NULL && st[0].MPI_TAG == 10);

        /* Cancel: a receive nothing matches (a fake one completes, not cancelled) */
        skip();
        MPI_Irecv(fake_in, 8, MPI_DOUBLE, peer, 12, comm, &r[0]);
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        CHECK(r[0] == MPI_REQUEST_NULL);

        /* blocking receives, a collective that writes nothing, a nonblocking collective */
        skip();
        MPI_Sendrecv(fake_out, 4, MPI_DOUBLE, peer, 11, fake_in, 4, MPI_DOUBLE, peer, 11, comm,
                     &st[0]);
        MPI_Get_count(&st[0], MPI_DOUBLE, &n);
        CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 11 && n == 4);
        double mine = 1, total = -1;
        skip();
        MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
        if (skipping)
            CHECK(total == -1);
        skip();
        MPI_Ibarrier(comm, &r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        CHECK(r[0] == MPI_REQUEST_NULL);
    }
    printf("RESULT rank=%d failures=%d\n", rank, failures);
    MPI_Finalize();
    return 0;
}
