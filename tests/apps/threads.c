/*
 * threads.c - MPI_THREAD_MULTIPLE: two pthreads per rank communicating
 * concurrently, each on its own duplicated communicator.
 *
 * MPI_Init_thread(MPI_THREAD_MULTIPLE); two MPI_Comm_dup of MPI_COMM_WORLD.
 * Thread 0, per iteration: MPI_Irecv from left + MPI_Isend to right +
 * MPI_Waitall. Thread 1, per iteration: MPI_Sendrecv sending left, receiving
 * from right. Threads are joined before the comms are freed and MPI_Finalize.
 * If the library provides less than MPI_THREAD_MULTIPLE an INFO line says so
 * and the two loops run one after the other in the main thread (same calls,
 * same results).
 */
#define _POSIX_C_SOURCE 200809L
#include "tally.h"
#include <pthread.h>

#define LEN 8

struct targ {
    int id, rank, left, right, iters, fail;
    MPI_Comm comm;
    long long sum;
};

static long long val(int r, int t, int it, int i) { return (long long)r * 1000000 + t * 100000 + it * 100 + i; }

static void *worker(void *p)
{
    struct targ *a = p;
    long long sbuf[LEN], rbuf[LEN];
    for (int it = 0; it < a->iters; it++) {
        for (int i = 0; i < LEN; i++) {
            sbuf[i] = val(a->rank, a->id, it, i);
            rbuf[i] = -1;
        }
        int from;
        if (a->id == 0) {
            MPI_Request req[2];
            MPI(Irecv, rbuf, LEN, MPI_LONG_LONG, a->left, it, a->comm, &req[0]);
            MPI(Isend, sbuf, LEN, MPI_LONG_LONG, a->right, it, a->comm, &req[1]);
            MPI(Waitall, 2, req, MPI_STATUSES_IGNORE);
            from = a->left;
        } else {
            MPI(Sendrecv, sbuf, LEN, MPI_LONG_LONG, a->left, it, rbuf, LEN, MPI_LONG_LONG, a->right, it, a->comm,
                MPI_STATUS_IGNORE);
            from = a->right;
        }
        for (int i = 0; i < LEN; i++) {
            if (rbuf[i] != val(from, a->id, it, i))
                a->fail = 1;
            a->sum += rbuf[i];
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI(Init_thread, &argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    struct targ a[2];
    for (int t = 0; t < 2; t++) {
        a[t] = (struct targ){.id = t, .rank = rank, .left = left, .right = right, .iters = iters, .fail = 0, .sum = 0};
        MPI(Comm_dup, MPI_COMM_WORLD, &a[t].comm);
    }
    int multi = provided >= MPI_THREAD_MULTIPLE, fail = 0;
    if (multi) {
        pthread_t th[2];
        int created[2] = {0, 0};
        for (int t = 0; t < 2; t++)
            created[t] = pthread_create(&th[t], NULL, worker, &a[t]) == 0;
        for (int t = 0; t < 2; t++) {
            if (created[t])
                pthread_join(th[t], NULL);
            else
                worker(&a[t]); /* could not start a thread: run the loop here */
        }
    } else {
        worker(&a[0]);
        worker(&a[1]);
    }
    for (int t = 0; t < 2; t++)
        MPI(Comm_free, &a[t].comm);

    tally_timed_finalize(rank);
    if (!multi)
        printf("INFO rank=%d MPI_Init_thread provided=%d < MPI_THREAD_MULTIPLE, ran both loops in the main thread\n",
               rank, provided);
    fflush(stdout);
    fail |= a[0].fail | a[1].fail;
    if (fail)
        tally_result(rank, "FAIL wrong data received by a thread");
    else
        tally_result(rank, "iters=%d thread0_sum=%lld thread1_sum=%lld", iters, a[0].sum, a[1].sum);
    tally_print(rank);
    return fail;
}
