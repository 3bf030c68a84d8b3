/*
 * stats.h: what the bench programs share to turn samples into a number: a comparison for
 * qsort, the median, and the host's monotonic clock. Plain C (bench_cpu has no CUDA).
 * Files that include it define _POSIX_C_SOURCE first, for clock_gettime.
 */
#ifndef DLSCAN_BENCH_STATS_H
#define DLSCAN_BENCH_STATS_H

#include <stdlib.h>
#include <time.h>

static inline int bench_compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of count values (sorts them). */
static inline double bench_median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, bench_compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

static inline double bench_host_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif /* DLSCAN_BENCH_STATS_H */
