/*
 * bench.c: `dlscan bench`: the throughput sweep, run by a helper program. With a GPU it is
 * the bench harness (bench/bench.c: dlscan against memcpy, CUB and the baselines), without
 * one the CPU sweep (bench/bench_cpu.c: dlscan's CPU backend against a sequential loop and
 * memcpy). Both are installed in libexecdir/dlscan; helpers.c finds them.
 *
 * This command handles --backend and --plot itself and passes the sweep's options on:
 * the GPU harness gets them as given (less --threads, which only the CPU sweep has), with
 * the harness's own --variants, --markdown and --stats; bench_cpu gets them with
 * --message-prefix, so that it reports errors as this command's one line. bench_cpu checks
 * them first (--check), whichever sweep then runs. The sweep writes its CSV to a temporary
 * file in $TMPDIR, for bench/plot.py and for --csv FILE, which this command writes as scan
 * writes OUT (output.c): checked before the sweep, complete or not there at all, and a
 * failed write is exit status 2.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"

/* bench_cpu's options (bench/cpu_sweep.c), which the GPU harness has too, but --threads. */
static const char *const sweep_flags[] = {"--quick", "--exclusive"};
static const char *const sweep_with_value[] = {"--types",   "--op",      "--min-log", "--max-log",
                                               "--repeats", "--threads", "--csv"};

static int is_one_of(const char *name, const char *const names[], size_t count)
{
    for (size_t k = 0; k < count; ++k)
        if (strcmp(name, names[k]) == 0)
            return 1;
    return 0;
}
#define IS_ONE_OF(name, names) is_one_of(name, names, sizeof names / sizeof names[0])

/* The leading arguments of bench_cpu: its messages in this command's words. */
#define SWEEP_PREFIX "--message-prefix", "dlscan: bench"

/* Runs `program` with the `first_count` arguments `first` and then `options`. bench_cpu
 * (`reports_itself`) says what went wrong itself and exits 1 or 2; for the GPU harness
 * (`what`) this command says that it failed. */
static int run_bench_program(const char *what, const char *program, int reports_itself,
                             const char *const first[], int first_count, char **options,
                             int count)
{
    char **args = calloc((size_t)(first_count + count) + 2, sizeof *args);
    if (!args)
        return fail(STATUS_FAILED, "out of memory");
    args[0] = (char *)program;
    if (first_count > 0)
        memcpy(args + 1, first, (size_t)first_count * sizeof *first);
    if (count > 0)
        memcpy(args + 1 + first_count, options, (size_t)count * sizeof *options);
    const int code = run_program(args, 0);
    free(args);
    if (code == STATUS_OK || (reports_itself && (code == STATUS_BAD_INPUT || code == STATUS_FAILED)))
        return code;
    return fail(STATUS_FAILED, "bench: the %s %s %s", what, program,
                code < 0 ? "could not run" : "failed");
}

int cmd_bench(int argc, char **argv, const char *argv0)
{
    backend_choice backend = BACKEND_AUTO;
    const char *plot = NULL, *gpu_only = NULL, *csv = NULL;
    int quiet = 0;
    /* The options for bench_cpu, and for the GPU harness: those given, less this command's. */
    char **sweep = calloc((size_t)argc + 4, sizeof *sweep);
    char **forwarded = calloc((size_t)argc + 4, sizeof *forwarded);
    int sweep_count = 0, forwarded_count = 0, status = STATUS_OK;
    if (!sweep || !forwarded) {
        free(sweep);
        free(forwarded);
        return fail(STATUS_FAILED, "out of memory");
    }
    for (int i = 0; i < argc && status == STATUS_OK; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_usage("bench");
            free(sweep);
            free(forwarded);
            return STATUS_OK;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = 1;
            continue;
        }
        const int is_backend = strcmp(a, "--backend") == 0, is_plot = strcmp(a, "--plot") == 0;
        const int gpu_flag = strcmp(a, "--stats") == 0;
        const int gpu_value = strcmp(a, "--variants") == 0 || strcmp(a, "--markdown") == 0;
        const int sweep_value = IS_ONE_OF(a, sweep_with_value);
        if ((is_backend || is_plot || gpu_value || sweep_value) && i + 1 >= argc) {
            status = fail(STATUS_BAD_INPUT, "bench: %s needs a value", a);
        } else if (is_backend) {
            if (!parse_backend(argv[++i], &backend))
                status = fail(STATUS_BAD_INPUT, "bench: unknown backend '%s' (auto, gpu or cpu)",
                              argv[i]);
        } else if (is_plot) {
            plot = argv[++i];
        } else if (gpu_flag || gpu_value) {
            gpu_only = a;
            forwarded[forwarded_count++] = argv[i];
            if (gpu_value)
                forwarded[forwarded_count++] = argv[++i];
        } else if (strcmp(a, "--csv") == 0) {
            csv = argv[++i]; /* the sweep gets a temporary file */
        } else if (sweep_value || IS_ONE_OF(a, sweep_flags)) {
            for (int k = i; k <= i + sweep_value; ++k) {
                sweep[sweep_count++] = argv[k];
                if (strcmp(a, "--threads") != 0)
                    forwarded[forwarded_count++] = argv[k];
            }
            i += sweep_value;
        } else {
            status = fail(STATUS_BAD_INPUT, "bench: unknown option '%s'; see 'dlscan bench --help'",
                          a);
        }
    }

    /* bench_cpu checks the sweep's values, for either sweep. */
    char sweep_program[4096];
    if (status == STATUS_OK) {
        static const char *const sweep_places[] = {DLSCAN_CLI_LIBEXEC "/bench_cpu",
                                                   "../bench/bench_cpu"};
        static const char *const check[] = {SWEEP_PREFIX, "--check"};
        if (!find_helper("DLSCAN_BENCH_CPU", sweep_places, 2, argv0, sweep_program,
                         sizeof sweep_program))
            status = fail(STATUS_FAILED, "bench: cannot find the CPU bench program bench_cpu "
                                         "(set DLSCAN_BENCH_CPU to bench/bench_cpu in a build tree)");
        else
            status = run_bench_program("CPU bench program", sweep_program, 1, check, 3, sweep,
                                       sweep_count);
    }

    char plot_script[4096] = "";
    if (status == STATUS_OK && plot) {
        static const char *const plot_places[] = {DLSCAN_CLI_LIBEXEC "/plot.py", "plot.py"};
        char *check[] = {"python3", "-c", "import matplotlib", NULL};
        if (!find_helper("DLSCAN_PLOT", plot_places, 2, argv0, plot_script, sizeof plot_script))
            status = fail(STATUS_FAILED, "bench: --plot: cannot find plot.py (set DLSCAN_PLOT to "
                                         "bench/plot.py)");
        else if (run_program(check, 1) != 0)
            status = fail(STATUS_FAILED, "bench: --plot needs python3 with matplotlib");
    }

    int on_gpu = 0;
    if (status == STATUS_OK && backend != BACKEND_CPU) {
        dlscan_handle_t h = NULL;
        status = open_handle(backend, 0, quiet, "running the CPU sweep instead (dlscan's CPU "
                                                "backend, a sequential loop and memcpy)",
                             &h, &on_gpu);
        dlscan_destroy(h);
    }
    if (status == STATUS_OK && !on_gpu && gpu_only)
        status = fail(STATUS_BAD_INPUT, "bench: %s is an option of the GPU bench; this sweep runs "
                                        "on the CPU",
                      gpu_only);

    /* The sweep's CSV goes to a temporary file; --csv FILE is checked before the sweep. */
    output_file csv_out = {0};
    char temp_csv[4096] = "";
    int temp_slot = 0;
    if (status == STATUS_OK && csv)
        status = output_open(&csv_out, csv);
    if (status == STATUS_OK && (plot || csv)) {
        const int fd = temp_create_in_tmpdir("dlscan-bench-XXXXXX", temp_csv, sizeof temp_csv,
                                             &temp_slot);
        if (fd < 0) {
            status = fail(STATUS_FAILED, "cannot create a temporary file for the CSV: %s",
                          strerror(errno));
            temp_csv[0] = '\0';
        } else {
            close(fd);
            sweep[sweep_count++] = forwarded[forwarded_count++] = "--csv";
            sweep[sweep_count++] = forwarded[forwarded_count++] = temp_csv;
        }
    }

    if (status == STATUS_OK && on_gpu) {
        static const char *const bench_places[] = {DLSCAN_CLI_LIBEXEC "/bench", "../bench/bench"};
        char harness[4096];
        if (!find_helper("DLSCAN_BENCH", bench_places, 2, argv0, harness, sizeof harness))
            status = fail(STATUS_FAILED, "bench: cannot find the GPU bench harness (set "
                                         "DLSCAN_BENCH to bench/bench in a build tree)");
        else
            status = run_bench_program("GPU bench harness", harness, 0, NULL, 0, forwarded,
                                       forwarded_count);
    } else if (status == STATUS_OK) {
        static const char *const run[] = {SWEEP_PREFIX};
        status = run_bench_program("CPU bench program", sweep_program, 1, run, 2, sweep,
                                   sweep_count);
    }

    if (status == STATUS_OK && plot) {
        char *plot_argv[] = {"python3", plot_script, temp_csv, (char *)plot, NULL};
        if (run_program(plot_argv, 0) != 0)
            status = fail(STATUS_FAILED, "bench: plot.py could not draw %s", plot);
    }
    if (status == STATUS_OK && csv)
        status = output_append_file(&csv_out, temp_csv);
    if (status == STATUS_OK && csv)
        status = output_commit(&csv_out);
    if (status != STATUS_OK)
        output_discard(&csv_out);
    if (temp_csv[0]) {
        unlink(temp_csv);
        temp_forget(temp_slot);
    }
    free(sweep);
    free(forwarded);
    return status;
}
