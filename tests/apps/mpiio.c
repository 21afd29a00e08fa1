/*
 * mpiio.c - MPI-IO: independent writes, collective read through a file view.
 *
 * usage: mpiio [iters] [dir]   (dir defaults to /tmp)
 * File <dir>/conifer_mpiio_<pid of rank 0>.dat (pid broadcast with MPI_Bcast).
 * Write phase: MPI_File_open(CREATE|WRONLY), per iteration one
 * MPI_File_write_at of BLK ints at block (it*size + rank), MPI_File_close.
 * Read phase: MPI_File_open(RDONLY), MPI_File_get_size, MPI_Type_vector +
 * MPI_Type_commit as filetype, MPI_File_set_view, one MPI_File_read_all of
 * all this rank's blocks, MPI_Get_count, MPI_File_close, MPI_Type_free.
 * Then MPI_Barrier and rank 0 MPI_File_delete.
 */
#define _POSIX_C_SOURCE 200809L
#include "tally.h"
#include <unistd.h>

#define BLK 32

static int val(int r, int it, int i) { return r * 1000000 + it * 1000 + i; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    int pid = (int)getpid();
    MPI(Bcast, &pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char path[4096];
    snprintf(path, sizeof path, "%s/conifer_mpiio_%d.dat", dir, pid);

    int fail = 0, buf[BLK];
    MPI_File fh;
    MPI_Status st;
    if (MPI(File_open, MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fail = 1;
    } else {
        for (int it = 0; it < iters; it++) {
            for (int i = 0; i < BLK; i++)
                buf[i] = val(rank, it, i);
            MPI_Offset off = ((MPI_Offset)it * size + rank) * BLK * (MPI_Offset)sizeof(int);
            if (MPI(File_write_at, fh, off, buf, BLK, MPI_INT, &st) != MPI_SUCCESS)
                fail = 2;
        }
        MPI(File_close, &fh);
    }

    long long sum = 0;
    MPI_Offset fsize = -1;
    int cnt = -1;
    if (!fail &&
        MPI(File_open, MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS) {
        MPI(File_get_size, fh, &fsize);
        if (fsize != (MPI_Offset)iters * size * BLK * (MPI_Offset)sizeof(int))
            fail = 3;
        MPI_Datatype ft;
        MPI(Type_vector, iters, BLK, size * BLK, MPI_INT, &ft);
        MPI(Type_commit, &ft);
        MPI(File_set_view, fh, (MPI_Offset)rank * BLK * (MPI_Offset)sizeof(int), MPI_INT, ft, "native",
            MPI_INFO_NULL);
        int *rbuf = calloc((size_t)iters * BLK, sizeof(int));
        MPI(File_read_all, fh, rbuf, iters * BLK, MPI_INT, &st);
        MPI(Get_count, &st, MPI_INT, &cnt);
        if (cnt != iters * BLK)
            fail = 4;
        for (int it = 0; it < iters; it++)
            for (int i = 0; i < BLK; i++) {
                if (rbuf[it * BLK + i] != val(rank, it, i))
                    fail = 5;
                sum += rbuf[it * BLK + i];
            }
        free(rbuf);
        MPI(File_close, &fh);
        MPI(Type_free, &ft);
    } else if (!fail) {
        fail = 6;
    }
    MPI(Barrier, MPI_COMM_WORLD);
    if (rank == 0)
        MPI(File_delete, path, MPI_INFO_NULL);

    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL stage %d (file %s)", fail, path);
    else
        tally_result(rank, "iters=%d file_bytes=%lld read_ints=%d sum=%lld", iters, (long long)fsize, cnt, sum);
    tally_print(rank);
    return fail != 0;
}
