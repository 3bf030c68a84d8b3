/*
 * bench_cpu.c: the CPU benchmark as a program of its own: dlscan's CPU backend next to a
 * plain sequential loop and memcpy on this machine, with the ratio to the sequential loop
 * (the sweep and its method: cpu_sweep.c). `meson test --benchmark` runs it, and so does
 * `dlscan bench` where there is no GPU (tools/bench.c, which finds it in libexecdir/dlscan).
 *
 *   bench_cpu [--quick] [--types int32,float32,int64,float64] [--op sum|min|max]
 *             [--exclusive] [--min-log 16] [--max-log 26] [--repeats 5] [--threads N]
 *             [--csv FILE] [--check] [--message-prefix TEXT]
 *
 * --check checks the options and exits without running the sweep. --message-prefix TEXT
 * starts each error message with "TEXT: " instead of "bench_cpu: ", without the usage
 * lines: `dlscan bench` passes 'dlscan: bench', and checks its options with --check even
 * where the GPU harness runs the sweep.
 *
 * Exit status: 0 success, 1 bad options or an unwritable CSV file, 2 dlscan failed or was
 * wrong.
 */
#include <stdio.h>
#include <string.h>

#include "cpu_sweep.h"

static const char *message_prefix; /* NULL: "bench_cpu", with the usage lines */

static int report(int status, const char *error, int with_usage)
{
    fprintf(stderr, "%s: %s\n", message_prefix ? message_prefix : "bench_cpu", error);
    if (with_usage && !message_prefix)
        fputs("usage: bench_cpu [--quick] [--types LIST] [--op sum|min|max] [--exclusive]\n"
              "                 [--min-log N] [--max-log N] [--repeats N] [--threads N] [--csv FILE]\n"
              "                 [--check] [--message-prefix TEXT]\n",
              stderr);
    return status;
}

int main(int argc, char **argv)
{
    cpu_sweep_options o;
    cpu_sweep_default_options(&o);
    char error[512] = "";
    int check = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
            continue;
        }
        if (strcmp(argv[i], "--message-prefix") == 0 && i + 1 < argc) {
            message_prefix = argv[++i];
            continue;
        }
        const int parsed = cpu_sweep_parse_option(&o, argc, argv, &i, error, sizeof error);
        if (parsed == 0)
            snprintf(error, sizeof error, "unknown option '%s'", argv[i]);
        if (parsed != 1)
            return report(1, error, 1);
    }
    if (cpu_sweep_check_options(&o, error, sizeof error) != 0)
        return report(1, error, 0);
    if (check)
        return 0;
    const int result = cpu_sweep_run(&o, stdout, error, sizeof error);
    return result != 0 ? report(result, error, 0) : 0;
}
