/*
 * host.h: host-side helpers that bench_compact.c, bench_segmented.c and bench_axis.c share: a
 * name's index in a list (option parsing), the first item where two arrays differ (checking a
 * call's output against the reference), and the cells of their markdown tables (a time, a
 * ratio of two times). Plain C.
 */
#ifndef DLSCAN_BENCH_HOST_H
#define DLSCAN_BENCH_HOST_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The index of name in names (count of them), or -1. */
static inline int bench_find_name(const char *name, const char *const *names, int count)
{
    for (int k = 0; k < count; ++k)
        if (strcmp(name, names[k]) == 0)
            return k;
    return -1;
}

/* The first item where a and b (n items of `size` bytes) differ, or n: whole chunks compared
 * first, so that a 2^28-item check costs about one memcmp. */
static inline size_t bench_first_difference(const void *a, const void *b, size_t n, size_t size)
{
    const size_t chunk = (size_t)1 << 20;
    for (size_t start = 0; start < n; start += chunk) {
        const size_t items = n - start < chunk ? n - start : chunk;
        const char *x = (const char *)a + start * size, *y = (const char *)b + start * size;
        if (memcmp(x, y, items * size) == 0)
            continue;
        for (size_t i = 0; i < items; ++i)
            if (memcmp(x + i * size, y + i * size, size) != 0)
                return start + i;
    }
    return n;
}

/* A markdown cell: a time per call in us, or `missing` where the variant has none. */
static inline void bench_cell_us(FILE *f, int valid, double us, const char *missing)
{
    if (valid)
        fprintf(f, " %.2f |", us);
    else
        fprintf(f, " %s |", missing);
}

/* A markdown cell: over / under as times (under's calls per second over over's), or "-" where
 * either time is missing (valid == 0). */
static inline void bench_cell_ratio(FILE *f, int valid, double over, double under)
{
    if (valid)
        fprintf(f, " %.3f |", over / under);
    else
        fprintf(f, " - |");
}

#endif /* DLSCAN_BENCH_HOST_H */
