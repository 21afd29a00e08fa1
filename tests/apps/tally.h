/*
 * tally.h - self-counting of MPI calls for the Conifer test apps.
 *
 * Every MPI call in an app is written as
 *     MPI(Isend, buf, n, MPI_DOUBLE, dest, tag, comm, &req);
 *     double t = MPI(Wtime);
 * which increments the counter for "MPI_Isend" (thread-safe, C11 atomics)
 * and then evaluates to the return value of MPI_Isend(...).
 *
 * After MPI_Finalize an app calls tally_print(rank), which prints one line
 *     COUNT rank=<r> <MPI_Name> <n>
 * per MPI function called, sorted by name (strcmp order), each line with a
 * single printf followed by fflush. tally_result() prints a RESULT line the
 * same way.
 *
 * Each app is a single translation unit, so the static table is per app.
 */
#ifndef CONIFER_TALLY_H
#define CONIFER_TALLY_H

#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

/* MPICH's mpi.h declares MPI_Waitall(..., MPI_Status array_of_statuses[]) and
 * defines MPI_STATUSES_IGNORE as (MPI_Status *)1, so GCC >= 11 reports a bogus
 * -Wstringop-overflow for every MPI_Waitall(..., MPI_STATUSES_IGNORE). The apps
 * deliberately pass the sentinel, so silence that one warning for MPICH. */
#if defined(MPICH) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define TALLY_MAX 128

static const char *_Atomic tally_names_[TALLY_MAX];
static atomic_ulong tally_counts_[TALLY_MAX];

/* Find or insert the slot for `name` (lock-free: slots are claimed by CAS
 * and never released) and increment its counter. */
static inline void tally_inc(const char *name)
{
    for (int i = 0; i < TALLY_MAX; i++) {
        const char *n = atomic_load(&tally_names_[i]);
        if (n == NULL) {
            const char *expected = NULL;
            if (atomic_compare_exchange_strong(&tally_names_[i], &expected, name)) {
                atomic_fetch_add(&tally_counts_[i], 1UL);
                return;
            }
            n = expected; /* another thread claimed this slot first */
        }
        if (strcmp(n, name) == 0) {
            atomic_fetch_add(&tally_counts_[i], 1UL);
            return;
        }
    }
    fprintf(stderr, "tally.h: more than %d distinct MPI functions\n", TALLY_MAX);
    abort();
}

/* Count, then call MPI_<fn>(args...); evaluates to its return value. */
#define MPI(fn, ...) (tally_inc("MPI_" #fn), MPI_##fn(__VA_ARGS__))

static inline int tally_cmp_(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Print the COUNT lines, sorted by function name. Call after MPI_Finalize. */
static inline void tally_print(int rank)
{
    const char *names[TALLY_MAX];
    int n = 0;
    for (int i = 0; i < TALLY_MAX; i++) {
        const char *s = atomic_load(&tally_names_[i]);
        if (s == NULL)
            break;
        names[n++] = s;
    }
    qsort(names, (size_t)n, sizeof names[0], tally_cmp_);
    for (int k = 0; k < n; k++) {
        unsigned long c = 0;
        for (int i = 0; i < TALLY_MAX; i++) {
            const char *s = atomic_load(&tally_names_[i]);
            if (s != NULL && strcmp(s, names[k]) == 0) {
                c = atomic_load(&tally_counts_[i]);
                break;
            }
        }
        printf("COUNT rank=%d %s %lu\n", rank, names[k], c);
        fflush(stdout);
    }
}

/* Print one "RESULT rank=<r> <text>" line with a single printf. */
static inline void tally_result(int rank, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void tally_result(int rank, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    printf("RESULT rank=%d %s\n", rank, text);
    fflush(stdout);
}

/* Parse the optional iteration count (first argument). */
static inline int tally_iters(int argc, char **argv, int dflt)
{
    if (argc > 1) {
        int v = atoi(argv[1]);
        if (v > 0)
            return v;
    }
    return dflt;
}

/* Wall-clock seconds (C11 timespec_get): times MPI_Finalize from outside MPI. */
static inline double tally_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* MPI_Finalize, counted, with rank 0 printing `INFO rank=0 finalize_ms=<ms>`. */
static inline void tally_timed_finalize(int rank)
{
    double start = tally_seconds();
    MPI(Finalize);
    if (rank == 0) {
        printf("INFO rank=0 finalize_ms=%.3f\n", (tally_seconds() - start) * 1e3);
        fflush(stdout);
    }
}

#endif
