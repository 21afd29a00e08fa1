/*
 * commgrid.c - communicators whose ids the recorder agrees only among their members, so
 * disjoint ones share an id: every reader must still tell them apart.
 *
 *   ./commgrid [ROUNDS]   (default 3)
 *
 * Phase 1 (the MPI_UNDEFINED split): rank 0 alone gets communicator a, ranks 1..n-1 get b;
 *   10 ring steps on b with MPI_Sendrecv (tag 7), then both are freed.
 * Phase 2 (re-splits): ROUNDS times, MPI_COMM_WORLD is split by colour (rank / (round + 1)) % 2
 *   with key = -rank (reversed order), a ring step (tag 10 + round) and an MPI_Allreduce run
 *   on it, and it is freed; each round's parts have other members (rank 0 is local rank 1 of
 *   {2, 0} in round 0 and of {1, 0} in round 1 at 4 ranks).
 * Phase 3 (a 2D decomposition on a side x side grid, side = floor(sqrt(n)); ranks beyond the
 *   grid take part with MPI_UNDEFINED): rows (colour = row, key = column), columns (colour =
 *   column, key = row) and an "edge" split whose left-edge ranks are singletons (colour =
 *   side + row when column = 0, else column; key = row). On each, ROUNDS ring steps with
 *   MPI_Sendrecv (tags 20, 21, 22) and one MPI_Allreduce.
 * Phase 4 (an inter-communicator pair, n >= 2): the world's halves (colour = rank % 2) are
 *   joined by MPI_Intercomm_create (leaders: local rank 0 of each half, world ranks 0 and 1);
 *   each rank of the even half sends its world rank to the rank of the same local number in
 *   the odd half (tag 30) when there is one; then MPI_Intercomm_merge and an MPI_Allreduce.
 * Phase 5 (wildcards with MPI_STATUS_IGNORE, n >= 2): rank 0 sends tags 5, 6, 7 to rank 1,
 *   which receives with MPI_ANY_TAG and MPI_ANY_SOURCE and MPI_STATUS_IGNORE; then tags 8, 9
 *   (MPI_Irecv with MPI_ANY_TAG, MPI_Waitall with MPI_STATUSES_IGNORE) and 10 (MPI_Irecv with
 *   MPI_ANY_SOURCE, MPI_Wait with MPI_STATUS_IGNORE).
 * Phase 6 (a cancelled wildcard receive, as HPCC's RandomAccess leaves one, n >= 2): rank 1
 *   posts MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG), cancels it and waits for it, then tells
 *   rank 0 (tag 41), which sends it tag 40: a reader that kept the cancelled receive posted
 *   would match that message to it.
 * Each rank prints `RING phase=P world=W sum=S` after each ring (S: the sum of what it got),
 * and `CHECK ok` at the end when every value received was the expected one.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

/* ROUNDS ring steps on comm (when not null): sends the world rank to local rank + 1 and
   checks what comes from local rank - 1 against the world rank the caller expects. */
static void ring(MPI_Comm comm, int world, int tag, int rounds, const int *worlds, int phase)
{
    if (comm == MPI_COMM_NULL)
        return;
    int r, n, sum = 0;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    for (int it = 0; it < rounds; it++) {
        int in = -1;
        MPI_Sendrecv(&world, 1, MPI_INT, (r + 1) % n, tag, &in, 1, MPI_INT, (r + n - 1) % n, tag,
                     comm, MPI_STATUS_IGNORE);
        if (worlds && in != worlds[(r + n - 1) % n])
            failures++;
        sum += in;
    }
    int total = 0;
    MPI_Allreduce(&world, &total, 1, MPI_INT, MPI_SUM, comm);
    printf("RING phase=%d world=%d sum=%d total=%d\n", phase, world, sum, total);
}

/* The world ranks of comm's members, by local rank (the caller frees the array). */
static int *members(MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    int *worlds = malloc(sizeof(int) * (size_t)n);
    MPI_Group g, w;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int *locals = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        locals[i] = i;
    MPI_Group_translate_ranks(g, n, locals, w, worlds);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    free(locals);
    return worlds;
}

static void split_ring(int colour, int key, int world, int tag, int rounds, int phase)
{
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, colour, key, &c);
    if (c != MPI_COMM_NULL) {
        int *worlds = members(c);
        ring(c, world, tag, rounds, worlds, phase);
        free(worlds);
        MPI_Comm_free(&c);
    }
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Phase 1. */
    MPI_Comm a, b;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, rank, &a);
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &b);
    if (b != MPI_COMM_NULL) {
        int *worlds = members(b);
        ring(b, rank, 7, 10, worlds, 1);
        free(worlds);
        MPI_Comm_free(&b);
    }
    if (a != MPI_COMM_NULL)
        MPI_Comm_free(&a);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 2. */
    for (int round = 0; round < rounds; round++)
        split_ring((rank / (round + 1)) % 2, -rank, rank, 10 + round, 1, 2);

    /* Phase 3. */
    int side = 1;
    while ((side + 1) * (side + 1) <= size)
        side++;
    int on_grid = rank < side * side, row = rank / side, col = rank % side;
    MPI_Comm rows, cols, edge;
    MPI_Comm_split(MPI_COMM_WORLD, on_grid ? row : MPI_UNDEFINED, col, &rows);
    MPI_Comm_split(MPI_COMM_WORLD, on_grid ? col : MPI_UNDEFINED, row, &cols);
    MPI_Comm_split(MPI_COMM_WORLD, on_grid ? (col == 0 ? side + row : col) : MPI_UNDEFINED, row,
                   &edge);
    MPI_Comm grid[3] = {rows, cols, edge};
    for (int i = 0; i < 3; i++) {
        if (grid[i] == MPI_COMM_NULL)
            continue;
        int *worlds = members(grid[i]);
        ring(grid[i], rank, 20 + i, rounds, worlds, 3);
        free(worlds);
        MPI_Comm_free(&grid[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 4. */
    if (size >= 2) {
        MPI_Comm half, inter, merged;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99, &inter);
        int local, remote;
        MPI_Comm_rank(inter, &local);
        MPI_Comm_remote_size(inter, &remote);
        if (rank % 2 == 0 && local < remote)
            MPI_Send(&rank, 1, MPI_INT, local, 30, inter);
        else if (rank % 2 == 1) {
            int in = -1;
            MPI_Recv(&in, 1, MPI_INT, local, 30, inter, MPI_STATUS_IGNORE);
            if (in != 2 * local)
                failures++;
        }
        MPI_Intercomm_merge(inter, rank % 2, &merged);
        int total = 0;
        MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, merged);
        if (total != size * (size - 1) / 2)
            failures++;
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* Phase 5. */
    if (size >= 2 && rank < 2) {
        for (int tag = 5; tag <= 7; tag++) {
            int v = tag;
            if (rank == 0)
                MPI_Send(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
            else {
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                if (v != tag)
                    failures++;
            }
        }
        int v[3] = {8, 9, 10};
        if (rank == 0) {
            for (int i = 0; i < 3; i++)
                MPI_Send(&v[i], 1, MPI_INT, 1, v[i], MPI_COMM_WORLD);
        } else {
            MPI_Request r[3];
            /* Through a volatile, so that GCC does not take MPI_STATUSES_IGNORE for an array
               of no statuses (MPICH's mpi.h declares the array parameter's size). */
            MPI_Status *volatile ignore = MPI_STATUSES_IGNORE;
            for (int i = 0; i < 2; i++)
                MPI_Irecv(&v[i], 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &r[i]);
            MPI_Waitall(2, r, ignore);
            MPI_Irecv(&v[2], 1, MPI_INT, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &r[2]);
            MPI_Wait(&r[2], MPI_STATUS_IGNORE);
            if (v[0] != 8 || v[1] != 9 || v[2] != 10)
                failures++;
        }
    }

    /* Phase 6. */
    if (size >= 2 && rank < 2) {
        int v = 40, go = 0;
        if (rank == 1) {
            MPI_Request r;
            MPI_Status st;
            int cancelled = 0;
            MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
            MPI_Cancel(&r);
            MPI_Wait(&r, &st);
            MPI_Test_cancelled(&st, &cancelled);
            if (!cancelled)
                failures++;
            MPI_Send(&go, 1, MPI_INT, 0, 41, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v != 40)
                failures++;
        } else {
            MPI_Recv(&go, 1, MPI_INT, 1, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_INT, 1, 40, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("CHECK ok\n");
    else
        printf("CHECK failed %d\n", failures);
    MPI_Finalize();
    return 0;
}
