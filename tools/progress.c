/*
 * progress.c: the progress bar of `dlscan scan` (cli.h): on stderr, only where stderr is a
 * terminal (and not --quiet) and the input has taken more than a second, redrawn at most
 * ten times a second; a bar with the percentage where the input's size is known, else the
 * bytes read.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void progress_start(progress *p, int quiet)
{
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->drawn = 0;
    p->start = p->last_draw = seconds_now();
}

void progress_update(progress *p, unsigned long long done_bytes, long long total, int final)
{
    if (!p->enabled)
        return;
    const double now = seconds_now();
    if (!final && (now - p->start < 1.0 || now - p->last_draw < 0.1))
        return;
    if (final && !p->drawn)
        return;
    p->last_draw = now;
    p->drawn = 1;
    const double done = (double)done_bytes, rate = done / (now - p->start + 1e-9);
    if (total > 0) {
        const double fraction = done / (double)total > 1 ? 1 : done / (double)total;
        char bar[31];
        for (int k = 0; k < 30; ++k)
            bar[k] = k < (int)(fraction * 30) ? '#' : '-';
        bar[30] = '\0';
        fprintf(stderr, "\rdlscan: [%s] %3d%%  %.2f of %.2f GB  %.0f MB/s ", bar,
                (int)(fraction * 100), done / 1e9, (double)total / 1e9, rate / 1e6);
    } else {
        fprintf(stderr, "\rdlscan: %.2f GB read  %.0f MB/s ", done / 1e9, rate / 1e6);
    }
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}
