/* Computation of known kinds between MPI calls, for the replay's per-interval measurement
 * (`conifer replay`): an MPI call before MPI_Init (MPI_Initialized, as C++ frameworks do),
 * arithmetic between two calls, a sleep and a file read between two others, and more
 * arithmetic to the end. At the end each rank prints the time its thread waited for a CPU
 * in its computation between MPI calls (the kernel's run-queue delay,
 * /proc/thread-self/schedstat, read around each computation), so a test can tell a
 * recording that shared its CPU from a dedicated one, and by how much.
 *
 *   intervals [UNITS]   arithmetic of UNITS million steps between the calls (default 40) */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

/* `units` million dependent floating-point steps: the same work on every run. */
static void arithmetic(long units) {
    double x = 1.0;
    for (long i = 0; i < units * 1000000L; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* Nanoseconds the calling thread has waited on a run queue so far (0 when unknown). */
static long long queue_wait_ns(void) {
    long long ran = 0, waited = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%lld %lld", &ran, &waited) != 2)
        waited = 0;
    fclose(f);
    return waited;
}

/* Reads the whole file at `path`, returning its byte count. */
static long read_file(const char *path) {
    char buf[65536];
    long total = 0;
    size_t n;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        total += (long)n;
    fclose(f);
    return total;
}

int main(int argc, char **argv) {
    long units = argc > 1 ? atol(argv[1]) : 40;
    int initialized = 0, rank = 0;
    MPI_Initialized(&initialized);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long long waited = 0, at = queue_wait_ns();
    arithmetic(units);
    waited += queue_wait_ns() - at;
    MPI_Barrier(MPI_COMM_WORLD);
    at = queue_wait_ns();
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    long bytes = read_file(argv[0]);
    waited += queue_wait_ns() - at;
    MPI_Barrier(MPI_COMM_WORLD);
    at = queue_wait_ns();
    arithmetic(units / 2);
    waited += queue_wait_ns() - at;
    double local = (double)rank, total = 0.0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d: read %ld bytes, sum %.0f, waited for a CPU %lld ns\n", rank, bytes, total,
           waited);
    MPI_Finalize();
    return initialized;
}
