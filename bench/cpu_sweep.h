/*
 * cpu_sweep.h: the CPU benchmark sweep (issue 3): dlscan's CPU backend next to a plain
 * sequential loop and memcpy on the same machine, for sizes 2^min_log .. 2^max_log, with
 * the ratio of dlscan to the sequential loop. bench_cpu.c runs it as a program of its own,
 * which `dlscan bench` runs where there is no GPU. Method: cpu_sweep.c's top comment.
 */
#ifndef DLSCAN_CPU_SWEEP_H
#define DLSCAN_CPU_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include "dlscan.h"

typedef struct cpu_sweep_options {
    dlscan_type types[6];
    int type_count;
    dlscan_op op;
    int exclusive;
    int min_log, max_log; /* sizes 2^min_log .. 2^max_log items */
    int repeats;          /* timed samples per measurement; the median is reported */
    int threads;          /* the CPU handle's threads; 0: one per online core */
    const char *csv;      /* a CSV file in bench.c's format (bench/plot.py draws it), or NULL */
} cpu_sweep_options;

/* int32, float32, int64 and float64; inclusive sums; 2^16 .. 2^26; 5 repeats; all cores. */
void cpu_sweep_default_options(cpu_sweep_options *o);

/* Parses the sweep option at argv[*i] and its value, if it takes one:
 *   --quick  --types LIST  --op sum|min|max  --exclusive  --min-log N  --max-log N
 *   --repeats N  --threads N  --csv FILE
 * (--quick: 2^16 .. 2^22, 3 repeats). Returns 1 and moves *i past the value when the option
 * is one of these, 0 when it is not, and -1 with a message in `error` when its value is
 * missing or wrong. Call cpu_sweep_check_options() after the last one. */
int cpu_sweep_parse_option(cpu_sweep_options *o, int argc, char **argv, int *i, char *error,
                           size_t error_size);

/* Checks that the sizes and repeats agree. Returns 0, or -1 with a message. */
int cpu_sweep_check_options(const cpu_sweep_options *o, char *error, size_t error_size);

/* Runs the sweep and prints its tables to `table`. Returns 0; 1 if the CSV file cannot be
 * written; 2 if dlscan failed, gave a wrong result or memory ran out (the message says
 * which). */
int cpu_sweep_run(const cpu_sweep_options *o, FILE *table, char *error, size_t error_size);

#endif /* DLSCAN_CPU_SWEEP_H */
