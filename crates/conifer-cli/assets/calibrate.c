/* The benchmark `conifer calibrate` compiles with the MPI's compiler wrapper and runs on
 * two ranks (further ranks wait): Netgauge's PRTT method (Hoefler, Lichei, Rehm 2007)
 * between ranks 0 and 1 over message sizes 1 B .. 4 MiB.
 *
 *   calibrate [quick]
 *
 * For each size s, medians over repetitions of
 *   PRTT(1,0,s)   one ping-pong round trip;
 *   PRTT(n,0,s)   n back-to-back MPI_Send of s bytes, then the s-byte reply;
 *   PRTT(n,d,s)   the same, busy-waiting d ns between the sends (d = the round trip);
 *   recv          the duration of an MPI_Recv posted d ns after its message was sent;
 *   self          the duration of an MPI_Sendrecv of s bytes from rank 0 to itself.
 * Rank 0 prints "conifer-calibrate 1 n=N", "lib <MPI library version>", then one line
 * per size: s PRTT(1,0,s) PRTT(n,0,s) PRTT(n,d,s) d recv self (ns). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRAIN 8
#define MAX_SIZE (4 << 20)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void spin(double ns)
{
    double end = now() + ns;
    while (now() < end) {
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One PRTT(n, d, s) on rank 0 (returns ns); rank 1 plays the server (returns 0). */
static double prtt(int rank, char *buf, int s, int n, double d)
{
    if (rank == 0) {
        double t = now();
        for (int i = 0; i < n; i++) {
            if (i > 0 && d > 0)
                spin(d);
            MPI_Send(buf, s, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        }
        MPI_Recv(buf, s, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return now() - t;
    }
    for (int i = 0; i < n; i++)
        MPI_Recv(buf, s, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(buf, s, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    return 0;
}

/* The median of `reps` PRTT(n, d, s) after 2 unmeasured ones (meaningful on rank 0). */
static double measure(int rank, char *buf, int s, int n, double d, int reps, double *v)
{
    for (int r = -2; r < reps; r++) {
        double t = prtt(rank, buf, s, n, d);
        if (r >= 0)
            v[r] = t;
    }
    return rank == 0 ? median(v, reps) : 0;
}

/* The median duration of an MPI_Recv on rank 1 posted d ns after rank 0 sent (meaningful
 * on rank 0, which receives the medians). */
static double late_recv(int rank, char *buf, int s, double d, int reps, double *v)
{
    char ack = 0;
    for (int r = -2; r < reps; r++) {
        if (rank == 0) {
            MPI_Send(buf, s, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&ack, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            spin(d);
            double t = now();
            MPI_Recv(buf, s, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t = now() - t;
            if (r >= 0)
                v[r] = t;
            MPI_Send(&ack, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    double m = rank == 1 ? median(v, reps) : 0;
    if (rank == 1)
        MPI_Send(&m, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    else
        MPI_Recv(&m, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return m;
}

/* The median duration of an MPI_Sendrecv of s bytes from rank 0 to itself (0 elsewhere). */
static double self_exchange(int rank, char *buf, int s, int reps, double *v)
{
    if (rank != 0)
        return 0;
    char *out = buf + MAX_SIZE;
    for (int r = -2; r < reps; r++) {
        double t = now();
        MPI_Sendrecv(buf, s, MPI_BYTE, 0, 4, out, s, MPI_BYTE, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        t = now() - t;
        if (r >= 0)
            v[r] = t;
    }
    return median(v, reps);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "calibrate: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        for (int i = 0; i < len; i++)
            if (lib[i] == '\n' || lib[i] == '\r' || lib[i] == '\t')
                lib[i] = ' ';
        printf("conifer-calibrate 1 n=%d\nlib %.*s\n", TRAIN, len, lib);
    }
    if (rank < 2) {
        char *buf = malloc(2 * (size_t)MAX_SIZE);
        double v[400];
        memset(buf, 1, 2 * (size_t)MAX_SIZE);
        /* Full: every power of two; quick: every power of 8 and 4 KiB, the common eager
         * limit. */
        for (int s = 1; s <= MAX_SIZE; s *= 2) {
            int log2 = __builtin_ctz(s);
            if (quick && log2 % 3 != 0 && s != 4096)
                continue;
            int reps = (64 << 20) / (s + (64 << 10));
            reps = reps < 9 ? 9 : reps > 300 ? 300 : reps;
            if (quick)
                reps = reps / 5 < 5 ? 5 : reps / 5;
            double rtt = measure(rank, buf, s, 1, 0, reps, v);
            if (rank == 0)
                MPI_Send(&rtt, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
            else
                MPI_Recv(&rtt, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double d = rtt + 2000;
            double train = measure(rank, buf, s, TRAIN, 0, reps, v);
            double delayed = measure(rank, buf, s, TRAIN, d, reps, v);
            double recv = late_recv(rank, buf, s, d, reps, v);
            double self = self_exchange(rank, buf, s, reps, v);
            if (rank == 0) {
                printf("%d %.1f %.1f %.1f %.1f %.1f %.1f\n", s, rtt, train, delayed, d, recv, self);
                fflush(stdout);
            }
        }
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
