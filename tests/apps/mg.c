/*
 * mg.c - communication skeleton of NAS Parallel Benchmark MG (multigrid
 * V-cycle) on a NON-periodic 3D process grid.
 *
 * Process grid from MPI_Dims_create (any rank count); neighbours are computed
 * by hand per level (no Cartesian communicator), -1 where there is none. Level
 * 0 is the finest (NF^3 local points); each level halves the local extent down
 * to 1 point, after which the process grid itself coarsens: on a level of
 * stride s only ranks whose three coordinates are multiples of s hold a point
 * (NPB's "dead" processors), and neighbours are s ranks away. With NF = 8 and
 * LEVELS = 6 the local extents are 8,4,2,1,1,1 and the strides 1,1,1,1,2,4.
 *
 * comm3(level) as in NPB: a dead rank zeroes its grid and returns; otherwise
 * for each axis: MPI_Irecv from each neighbour that exists, pack + MPI_Send to
 * each neighbour that exists, MPI_Wait + unpack each posted receive. Faces
 * include the halo of the axes already exchanged, so message lengths are
 * n*n, (n+2)*n, (n+2)^2 on axes 0,1,2 of a level with n local points.
 *
 * Per iteration (NPB mg3P + resid + norm): comm3 of the residual on level 0;
 * down: restrict (27-point rprj3) to each coarser level + comm3; coarsest:
 * MPI_Allreduce of the residual sum, smooth, comm3; up: interpolate (trilinear,
 * or injection where the process grid coarsens) + smooth + comm3 on each finer
 * level; then the finest residual and an MPI_Allreduce of its sum (the
 * "norm"). At the end an MPI_Reduce of the sum and a position-weighted sum of
 * the solution to rank 0.
 *
 * Values are integers mod P held in doubles, so every sum is exact and
 * independent of reduction order. After MPI_Finalize rank 0 reruns the same
 * V-cycles serially on the global grid of every level and checks every
 * iteration's norm and the reduced sums.
 */
#include "tally.h"

#define LEVELS 6 /* grid levels, 0 = finest */
#define NF 8     /* local points per dimension on the finest level (power of 2) */
#define P 1000003LL
#define MODP(v) ((double)((long long)(v) % P))
/* element (i,j,k), each in -1..e[d] (halo included), of a grid with interior extents e[3] */
#define IX(e, i, j, k) ((((size_t)(i) + 1) * (size_t)((e)[1] + 2) + ((size_t)(j) + 1)) * (size_t)((e)[2] + 2) + ((size_t)(k) + 1))

typedef struct {
    int e[3];     /* interior extents (local: n,n,n; reference: the global grid) */
    int s;        /* process-grid stride of the level */
    int active;   /* this rank holds points on the level */
    int nb[3][2]; /* neighbour rank per axis and direction (0 = minus, 1 = plus), -1 = none */
    double *u, *r;
    double *sbuf, *rbuf[2];
} Level;

static size_t vol(const int e[3]) { return (size_t)(e[0] + 2) * (size_t)(e[1] + 2) * (size_t)(e[2] + 2); }

static void zero3(double *a, const int e[3]) { memset(a, 0, vol(e) * sizeof *a); }

static double init_u(long i, long j, long k) { return (double)((i * 131 + j * 17 + k * 7 + 3) % P); }
static double init_v(long i, long j, long k) { return (double)((i * 29 + j * 101 + k * 53 + 11) % P); }

/* Sum of the interior; with off != NULL weighted by the global position (off + local index). */
static double sum3(const double *a, const int e[3], const long *off)
{
    double s = 0;
    for (int i = 0; i < e[0]; i++)
        for (int j = 0; j < e[1]; j++)
            for (int k = 0; k < e[2]; k++) {
                double w = 1;
                if (off)
                    w = (double)(1 + ((off[0] + i) * 7 + (off[1] + j) * 13 + (off[2] + k) * 29) % 101);
                s += w * a[IX(e, i, j, k)];
            }
    return s;
}

/* r = v - A u (A = 6u - the 6 neighbours) mod P; returns the sum of r. */
static double resid(const double *u, const double *v, double *r, const int e[3])
{
    double s = 0;
    for (int i = 0; i < e[0]; i++)
        for (int j = 0; j < e[1]; j++)
            for (int k = 0; k < e[2]; k++) {
                double t = v[IX(e, i, j, k)] + 6 * ((double)P - u[IX(e, i, j, k)]) + u[IX(e, i - 1, j, k)] +
                           u[IX(e, i + 1, j, k)] + u[IX(e, i, j - 1, k)] + u[IX(e, i, j + 1, k)] +
                           u[IX(e, i, j, k - 1)] + u[IX(e, i, j, k + 1)];
                r[IX(e, i, j, k)] = MODP(t);
                s += r[IX(e, i, j, k)];
            }
    return s;
}

/* Smoother: u += 2r + the 6 neighbours of r + add, mod P. */
static void psinv(const double *r, double *u, const int e[3], long long add)
{
    for (int i = 0; i < e[0]; i++)
        for (int j = 0; j < e[1]; j++)
            for (int k = 0; k < e[2]; k++) {
                double t = u[IX(e, i, j, k)] + 2 * r[IX(e, i, j, k)] + r[IX(e, i - 1, j, k)] + r[IX(e, i + 1, j, k)] +
                           r[IX(e, i, j - 1, k)] + r[IX(e, i, j + 1, k)] + r[IX(e, i, j, k - 1)] +
                           r[IX(e, i, j, k + 1)] + (double)add;
                u[IX(e, i, j, k)] = MODP(t);
            }
}

/* Restriction: coarse K = sum over d in {-1,0,1}^3 of (2-|d0|)(2-|d1|)(2-|d2|) * fine(2K+d). */
static void rprj3(const double *rf, const int ef[3], double *rc, const int ec[3])
{
    for (int i = 0; i < ec[0]; i++)
        for (int j = 0; j < ec[1]; j++)
            for (int k = 0; k < ec[2]; k++) {
                double t = 0;
                for (int di = -1; di <= 1; di++)
                    for (int dj = -1; dj <= 1; dj++)
                        for (int dk = -1; dk <= 1; dk++)
                            t += (2 - abs(di)) * (2 - abs(dj)) * (2 - abs(dk)) *
                                 rf[IX(ef, 2 * i + di, 2 * j + dj, 2 * k + dk)];
                rc[IX(ec, i, j, k)] = MODP(t);
            }
}

/* Prolongation, added to uf. Trilinear without the halving (an odd fine index
 * takes coarse K and K+1 per axis); where the process grid coarsens (inject),
 * only even fine points take coarse(K) and the odd ones, which live on ranks
 * dead on the coarse level, get nothing. */
static void interp(const double *uc, const int ec[3], double *uf, const int ef[3], int inject)
{
    if (inject) {
        for (int i = 0; i < ec[0]; i++)
            for (int j = 0; j < ec[1]; j++)
                for (int k = 0; k < ec[2]; k++)
                    uf[IX(ef, 2 * i, 2 * j, 2 * k)] = MODP(uf[IX(ef, 2 * i, 2 * j, 2 * k)] + uc[IX(ec, i, j, k)]);
        return;
    }
    for (int i = 0; i < ef[0]; i++)
        for (int j = 0; j < ef[1]; j++)
            for (int k = 0; k < ef[2]; k++) {
                double t = uf[IX(ef, i, j, k)];
                for (int a = 0; a <= (i & 1); a++)
                    for (int b = 0; b <= (j & 1); b++)
                        for (int c = 0; c <= (k & 1); c++)
                            t += uc[IX(ec, i / 2 + a, j / 2 + b, k / 2 + c)];
                uf[IX(ef, i, j, k)] = MODP(t);
            }
}

/* Copy the plane `pos` of `axis` to (unpack = 0) or from (unpack = 1) buf: the
 * interior of the later axes, interior + halo of the earlier ones (already
 * exchanged), so edges and corners of the halo are filled too. */
static int face(double *u, int n, int axis, int pos, double *buf, int unpack)
{
    const int e[3] = {n, n, n};
    int lo1 = axis >= 1 ? -1 : 0, hi1 = axis >= 1 ? n : n - 1;
    int lo2 = axis == 2 ? -1 : 0, hi2 = axis == 2 ? n : n - 1;
    int m = 0;
    for (int p = lo1; p <= hi1; p++)
        for (int q = lo2; q <= hi2; q++) {
            size_t x = axis == 0 ? IX(e, pos, p, q) : axis == 1 ? IX(e, p, pos, q) : IX(e, p, q, pos);
            if (unpack)
                u[x] = buf[m++];
            else
                buf[m++] = u[x];
        }
    return m;
}

/* Halo exchange of u on one level (NPB comm3: ready / give3 / take3 per axis). */
static void comm3(Level *lv, double *u)
{
    if (!lv->active) { /* a dead rank on a coarse level */
        zero3(u, lv->e);
        return;
    }
    int n = lv->e[0];
    for (int axis = 0; axis < 3; axis++) {
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int len = axis == 0 ? n * n : axis == 1 ? (n + 2) * n : (n + 2) * (n + 2);
        /* data sent towards direction d arrives from the neighbour on side d^1 */
        for (int dir = 0; dir < 2; dir++)
            if (lv->nb[axis][dir] != -1)
                MPI(Irecv, lv->rbuf[dir], len, MPI_DOUBLE, lv->nb[axis][dir], 2 * axis + (dir ^ 1), MPI_COMM_WORLD,
                    &req[dir]);
        for (int dir = 0; dir < 2; dir++)
            if (lv->nb[axis][dir] != -1) {
                face(u, n, axis, dir ? n - 1 : 0, lv->sbuf, 0);
                MPI(Send, lv->sbuf, len, MPI_DOUBLE, lv->nb[axis][dir], 2 * axis + dir, MPI_COMM_WORLD);
            }
        for (int dir = 0; dir < 2; dir++)
            if (lv->nb[axis][dir] != -1) {
                MPI(Wait, &req[dir], MPI_STATUS_IGNORE);
                face(u, n, axis, dir ? n : -1, lv->rbuf[dir], 1);
            }
    }
}

/* One V-cycle (NPB mg3P). lv[0].r holds the residual; improves lv[0].u. */
static void mg3P(Level *lv)
{
    comm3(&lv[0], lv[0].r);
    for (int l = 0; l < LEVELS - 1; l++) { /* down: restrict the residual */
        if (lv[l + 1].active)
            rprj3(lv[l].r, lv[l].e, lv[l + 1].r, lv[l + 1].e);
        comm3(&lv[l + 1], lv[l + 1].r);
    }
    Level *c = &lv[LEVELS - 1]; /* coarsest: "solve" */
    double lsum = c->active ? sum3(c->r, c->e, NULL) : 0, gsum = 0;
    MPI(Allreduce, &lsum, &gsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (c->active) {
        zero3(c->u, c->e);
        psinv(c->r, c->u, c->e, (long long)gsum % P);
    }
    comm3(c, c->u);
    for (int l = LEVELS - 2; l >= 0; l--) { /* up: interpolate the correction, smooth */
        if (lv[l].active) {
            if (l > 0)
                zero3(lv[l].u, lv[l].e);
            if (lv[l + 1].active)
                interp(lv[l + 1].u, lv[l + 1].e, lv[l].u, lv[l].e, lv[l + 1].s > lv[l].s);
            psinv(lv[l].r, lv[l].u, lv[l].e, 0);
        }
        comm3(&lv[l], lv[l].u);
    }
}

/* Local extent n and process-grid stride s of level l. */
static void level_shape(int l, int *n, int *s)
{
    *n = NF;
    *s = 1;
    for (int m = 0; m < l; m++) {
        if (*n > 1)
            *n /= 2;
        else
            *s *= 2;
    }
}

/* Serial rerun on the global grids (zero outside). Returns 0 if every norm
 * and both reduced sums match, else a description in why. */
static int reference(const int dims[3], int iters, const double *norms, const double tot[2], char *why, size_t wn)
{
    Level g[LEVELS];
    for (int l = 0; l < LEVELS; l++) {
        int n, s;
        level_shape(l, &n, &s);
        for (int a = 0; a < 3; a++)
            g[l].e[a] = (dims[a] + s - 1) / s * n;
        g[l].s = s;
        g[l].u = calloc(vol(g[l].e), sizeof(double));
        g[l].r = calloc(vol(g[l].e), sizeof(double));
    }
    const int *e0 = g[0].e;
    double *v = calloc(vol(e0), sizeof(double));
    for (int i = 0; i < e0[0]; i++)
        for (int j = 0; j < e0[1]; j++)
            for (int k = 0; k < e0[2]; k++) {
                g[0].u[IX(e0, i, j, k)] = init_u(i, j, k);
                v[IX(e0, i, j, k)] = init_v(i, j, k);
            }
    resid(g[0].u, v, g[0].r, e0);
    int bad = 0;
    for (int it = 0; it < iters && !bad; it++) {
        for (int l = 0; l < LEVELS - 1; l++)
            rprj3(g[l].r, g[l].e, g[l + 1].r, g[l + 1].e);
        Level *c = &g[LEVELS - 1];
        double gsum = sum3(c->r, c->e, NULL);
        zero3(c->u, c->e);
        psinv(c->r, c->u, c->e, (long long)gsum % P);
        for (int l = LEVELS - 2; l >= 0; l--) {
            if (l > 0)
                zero3(g[l].u, g[l].e);
            interp(g[l + 1].u, g[l + 1].e, g[l].u, g[l].e, g[l + 1].s > g[l].s);
            psinv(g[l].r, g[l].u, g[l].e, 0);
        }
        double norm = resid(g[0].u, v, g[0].r, e0);
        if (norm != norms[it]) {
            snprintf(why, wn, "norm at iteration %d: %lld != reference %lld", it, (long long)norms[it],
                     (long long)norm);
            bad = 1;
        }
    }
    const long zero[3] = {0, 0, 0};
    double usum = sum3(g[0].u, e0, NULL), uwsum = sum3(g[0].u, e0, zero);
    if (!bad && (usum != tot[0] || uwsum != tot[1])) {
        snprintf(why, wn, "u_sum %lld u_wsum %lld != reference %lld %lld", (long long)tot[0], (long long)tot[1],
                 (long long)usum, (long long)uwsum);
        bad = 1;
    }
    for (int l = 0; l < LEVELS; l++) {
        free(g[l].u);
        free(g[l].r);
    }
    free(v);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, dims[3] = {0, 0, 0};
    MPI(Init, &argc, &argv);
    MPI(Comm_rank, MPI_COMM_WORLD, &rank);
    MPI(Comm_size, MPI_COMM_WORLD, &size);
    int iters = tally_iters(argc, argv, 20);
    MPI(Dims_create, size, 3, dims);

    /* row-major rank <-> coords, as MPI_Cart_create would number them */
    const int stride[3] = {dims[1] * dims[2], dims[2], 1};
    const int co[3] = {rank / stride[0], rank / stride[1] % dims[1], rank % dims[2]};
    Level lv[LEVELS];
    int active_levels = 0;
    for (int l = 0; l < LEVELS; l++) {
        int n, s;
        level_shape(l, &n, &s);
        lv[l].e[0] = lv[l].e[1] = lv[l].e[2] = n;
        lv[l].s = s;
        lv[l].active = co[0] % s == 0 && co[1] % s == 0 && co[2] % s == 0;
        active_levels += lv[l].active;
        for (int a = 0; a < 3; a++) {
            lv[l].nb[a][0] = lv[l].active && co[a] - s >= 0 ? rank - s * stride[a] : -1;
            lv[l].nb[a][1] = lv[l].active && co[a] + s < dims[a] ? rank + s * stride[a] : -1;
        }
        lv[l].u = calloc(vol(lv[l].e), sizeof(double));
        lv[l].r = calloc(vol(lv[l].e), sizeof(double));
        size_t fmax = (size_t)(n + 2) * (size_t)(n + 2);
        lv[l].sbuf = malloc(fmax * sizeof(double));
        lv[l].rbuf[0] = malloc(fmax * sizeof(double));
        lv[l].rbuf[1] = malloc(fmax * sizeof(double));
    }
    const int *e0 = lv[0].e;
    const long off[3] = {(long)co[0] * NF, (long)co[1] * NF, (long)co[2] * NF};
    double *v = calloc(vol(e0), sizeof(double));
    for (int i = 0; i < NF; i++)
        for (int j = 0; j < NF; j++)
            for (int k = 0; k < NF; k++) {
                lv[0].u[IX(e0, i, j, k)] = init_u(off[0] + i, off[1] + j, off[2] + k);
                v[IX(e0, i, j, k)] = init_v(off[0] + i, off[1] + j, off[2] + k);
            }

    double *norms = calloc((size_t)iters, sizeof(double));
    comm3(&lv[0], lv[0].u);
    resid(lv[0].u, v, lv[0].r, e0);
    for (int it = 0; it < iters; it++) {
        mg3P(lv);
        double lnorm = resid(lv[0].u, v, lv[0].r, e0);
        MPI(Allreduce, &lnorm, &norms[it], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double loc[2] = {sum3(lv[0].u, e0, NULL), sum3(lv[0].u, e0, off)}, tot[2] = {0, 0};
    MPI(Reduce, loc, tot, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    tally_timed_finalize(rank);
    char why[256] = "";
    int fail = rank == 0 ? reference(dims, iters, norms, tot, why, sizeof why) : 0;
    long long norm = (long long)norms[iters - 1];
    if (fail)
        tally_result(rank, "FAIL %s", why);
    else if (rank == 0)
        tally_result(rank, "dims=%dx%dx%d coords=%d,%d,%d levels=%d active_levels=%d iters=%d norm=%lld u_sum=%lld "
                           "u_wsum=%lld reference=ok",
                     dims[0], dims[1], dims[2], co[0], co[1], co[2], LEVELS, active_levels, iters, norm,
                     (long long)tot[0], (long long)tot[1]);
    else
        tally_result(rank, "dims=%dx%dx%d coords=%d,%d,%d levels=%d active_levels=%d iters=%d norm=%lld local_u_sum=%lld",
                     dims[0], dims[1], dims[2], co[0], co[1], co[2], LEVELS, active_levels, iters, norm,
                     (long long)loc[0]);
    for (int l = 0; l < LEVELS; l++) {
        free(lv[l].u);
        free(lv[l].r);
        free(lv[l].sbuf);
        free(lv[l].rbuf[0]);
        free(lv[l].rbuf[1]);
    }
    free(v);
    free(norms);
    tally_print(rank);
    return fail;
}
