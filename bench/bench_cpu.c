/*
 * bench_cpu.c: the CPU benchmark as a program of its own: dlscan's CPU backend next to a
 * plain sequential loop and memcpy on this machine, with the ratio to the sequential loop
 * (the sweep and its method: cpu_sweep.c). `meson test --benchmark` runs it, and so does
 * `dlscan bench` where there is no GPU.
 *
 *   bench_cpu [--quick] [--types int32,float32,int64,float64] [--op sum|min|max]
 *             [--exclusive] [--min-log 16] [--max-log 26] [--repeats 5] [--threads N]
 *             [--csv FILE]
 *
 * Exit status: 0 success, 1 bad options or an unwritable CSV file, 2 dlscan failed or was
 * wrong.
 */
#include <stdio.h>

#include "cpu_sweep.h"

int main(int argc, char **argv)
{
    cpu_sweep_options o;
    cpu_sweep_default_options(&o);
    char error[512] = "";
    for (int i = 1; i < argc; ++i) {
        const int parsed = cpu_sweep_parse_option(&o, argc, argv, &i, error, sizeof error);
        if (parsed == 0)
            snprintf(error, sizeof error, "unknown option '%s'", argv[i]);
        if (parsed != 1) {
            fprintf(stderr, "bench_cpu: %s\nusage: bench_cpu [--quick] [--types LIST] [--op sum|min|max] "
                            "[--exclusive]\n                 [--min-log N] [--max-log N] "
                            "[--repeats N] [--threads N] [--csv FILE]\n",
                    error);
            return 1;
        }
    }
    if (cpu_sweep_check_options(&o, error, sizeof error) != 0) {
        fprintf(stderr, "bench_cpu: %s\n", error);
        return 1;
    }
    const int result = cpu_sweep_run(&o, stdout, error, sizeof error);
    if (result != 0)
        fprintf(stderr, "bench_cpu: %s\n", error);
    return result;
}
