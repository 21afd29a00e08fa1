/*
 * heapbuf.c - message buffers allocated and freed every iteration.
 *
 * Each iteration allocates a fresh array of 8 long longs, fills it, sends
 * element (it % 4) to the right neighbour and receives into element
 * 4 + (it % 4) from the left one (MPI_Sendrecv), checks the value and frees
 * the array. A tracer that names buffers by heap segment sees the same
 * segment every iteration, at byte offsets 8*(it%4) and 8*(4+it%4).
 * Per iteration: 1 MPI_Sendrecv. Then a 1 MiB anonymous mmap: two MPI_Bcast
 * of one byte at offsets 4096 and 65536, then munmap (a segment freed).
 * Then three MPI_Allreduce from and into a static array (panel[k] into
 * panel[32 + k], k = 0, 3, 17) and one from an initialised static scalar into
 * panel[63]. Static data is one segment to a tracer that names it by the
 * program's data segment; the program prints each buffer's byte distance from
 * panel[0] (STATIC lines) to compare the recorded offsets with.
 */
#define _DEFAULT_SOURCE
#include "tally.h"
#include <sys/mman.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    long long checksum = 0;
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        long long *buf = malloc(8 * sizeof(long long));
        for (int k = 0; k < 8; k++)
            buf[k] = (long long)rank * 100 + it * 10 + k;
        int slot = it % 4;
        MPI(Sendrecv, &buf[slot], 1, MPI_LONG_LONG, right, 3, &buf[4 + slot], 1, MPI_LONG_LONG, left, 3,
            MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (buf[4 + slot] != (long long)left * 100 + it * 10 + slot)
            bad = 1;
        checksum += buf[4 + slot];
        free(buf);
    }

    /* a buffer the program maps itself: one segment, addressed at two offsets */
    char *mapped = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
        bad = 1;
    } else {
        mapped[4096] = (char)(rank == 0 ? 42 : 0);
        mapped[65536] = (char)(rank == 0 ? 43 : 0);
        MPI(Bcast, mapped + 4096, 1, MPI_CHAR, 0, MPI_COMM_WORLD);
        MPI(Bcast, mapped + 65536, 1, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (mapped[4096] != 42 || mapped[65536] != 43)
            bad = 1;
        munmap(mapped, 1 << 20);
    }

    /* buffers in static data: .bss (panel) and .data (lone) */
    static long long panel[64];
    static long long lone = 7;
    const int picks[3] = {0, 3, 17};
    for (int i = 0; i < 3; i++) {
        int k = picks[i];
        panel[k] = rank + k;
        MPI(Allreduce, &panel[k], &panel[32 + k], 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (panel[32 + k] != (long long)size * (size - 1) / 2 + (long long)size * k)
            bad = 1;
        if (rank == 0)
            printf("STATIC %td %td\n", (char *)&panel[k] - (char *)panel, (char *)&panel[32 + k] - (char *)panel);
        fflush(stdout);
    }
    MPI(Allreduce, &lone, &panel[63], 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (panel[63] != 7LL * size)
        bad = 1;
    if (rank == 0)
        printf("STATIC %td %td\n", (char *)&lone - (char *)panel, (char *)&panel[63] - (char *)panel);
    fflush(stdout);

    tally_timed_finalize(rank);
    if (bad)
        tally_result(rank, "FAIL wrong value received");
    else
        tally_result(rank, "iters=%d checksum=%lld", iters, checksum);
    tally_print(rank);
    return bad;
}
