/*
 * comms.c - communicator management and collectives / p2p on derived comms.
 *
 * MPI_Comm_split (even/odd world ranks), MPI_Comm_dup of the half, per
 * iteration an MPI_Allreduce on the half and an MPI_Bcast on the dup; then an
 * inter-communicator between the halves (MPI_Intercomm_create), per iteration
 * an MPI_Sendrecv with the same-index rank of the other half (when it exists)
 * and an MPI_Allreduce across the inter-communicator; then MPI_Intercomm_merge
 * and an MPI_Allreduce on the merged comm; then MPI_Comm_idup of the half and
 * of MPI_COMM_WORLD (one MPI_Waitall), MPI_Comm_rank on both and an
 * MPI_Sendrecv around the ring on the world duplicate; finally everything is
 * freed.
 * Needs at least 2 ranks.
 */
#include "tally.h"

static long long sum_parity(int size, int parity)
{
    long long s = 0;
    for (int r = parity; r < size; r += 2)
        s += r;
    return s;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    if (size < 2) {
        MPI(Finalize);
        tally_result(rank, "FAIL comms needs at least 2 ranks");
        tally_print(rank);
        return 1;
    }

    int color = rank % 2, hrank, hsize, drank, rsize, mrank, msize;
    MPI_Comm half, dup, inter, merged;
    MPI(Comm_split, MPI_COMM_WORLD, color, rank, &half);
    MPI(Comm_rank, half, &hrank);
    MPI(Comm_size, half, &hsize);
    MPI(Comm_dup, half, &dup);
    MPI(Comm_rank, dup, &drank);

    int fail = 0;
    long long me = rank, s = 0, b = 0, hsum = 0, xsum = 0, isum = 0, msum = 0;
    for (int it = 0; it < iters; it++) {
        MPI(Allreduce, &me, &s, 1, MPI_LONG_LONG, MPI_SUM, half);
        if (s != sum_parity(size, color))
            fail |= 1;
        hsum += s;
        b = drank == 0 ? it * 1000 + color + 7 : -1;
        MPI(Bcast, &b, 1, MPI_LONG_LONG, 0, dup);
        if (b != it * 1000 + color + 7)
            fail |= 2;
    }

    /* local leader: half rank 0; remote leader: world rank 1 (odds) or 0 (evens) */
    MPI(Intercomm_create, half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 99, &inter);
    MPI(Comm_remote_size, inter, &rsize);
    for (int it = 0; it < iters; it++) {
        if (hrank < rsize) {
            long long out = rank * 1000LL + it, in = -1;
            MPI(Sendrecv, &out, 1, MPI_LONG_LONG, hrank, it, &in, 1, MPI_LONG_LONG, hrank, it, inter,
                MPI_STATUS_IGNORE);
            if (in != (2LL * hrank + (1 - color)) * 1000 + it)
                fail |= 4;
            xsum += in;
        }
        MPI(Allreduce, &me, &s, 1, MPI_LONG_LONG, MPI_SUM, inter); /* sum over the remote group */
        if (s != sum_parity(size, 1 - color))
            fail |= 8;
        isum += s;
    }

    MPI(Intercomm_merge, inter, color, &merged); /* evens low, odds high */
    MPI(Comm_rank, merged, &mrank);
    MPI(Comm_size, merged, &msize);
    MPI(Allreduce, &me, &msum, 1, MPI_LONG_LONG, MPI_SUM, merged);
    int nevens = (size + 1) / 2;
    if (msize != size || mrank != (color == 0 ? hrank : nevens + hrank) || msum != (long long)size * (size - 1) / 2)
        fail |= 16;

    /* non-blocking duplicates: of the half and of the world, completed together */
    MPI_Comm ihalf, iworld;
    MPI_Request dreq[2];
    int ihrank, iwrank;
    MPI(Comm_idup, half, &ihalf, &dreq[0]);
    MPI(Comm_idup, MPI_COMM_WORLD, &iworld, &dreq[1]);
    MPI(Waitall, 2, dreq, MPI_STATUSES_IGNORE);
    MPI(Comm_rank, ihalf, &ihrank);
    MPI(Comm_rank, iworld, &iwrank);
    long long right_of_left = -1, mine_out = rank;
    MPI(Sendrecv, &mine_out, 1, MPI_LONG_LONG, (rank + 1) % size, 5, &right_of_left, 1, MPI_LONG_LONG,
        (rank + size - 1) % size, 5, iworld, MPI_STATUS_IGNORE);
    if (ihrank != hrank || iwrank != rank || right_of_left != (rank + size - 1) % size)
        fail |= 32;
    MPI(Comm_free, &iworld);
    MPI(Comm_free, &ihalf);

    MPI(Comm_free, &merged);
    MPI(Comm_free, &inter);
    MPI(Comm_free, &dup);
    MPI(Comm_free, &half);
    tally_timed_finalize(rank);
    if (fail)
        tally_result(rank, "FAIL check mask %d", fail);
    else
        tally_result(rank, "color=%d half=%d/%d remote_size=%d merged=%d/%d iters=%d half_sum=%lld x_sum=%lld inter_sum=%lld merged_sum=%lld",
                     color, hrank, hsize, rsize, mrank, msize, iters, hsum, xsum, isum, msum);
    tally_print(rank);
    return fail != 0;
}
