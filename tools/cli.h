/*
 * cli.h: what the files of the `dlscan` command share. main.c dispatches to the commands
 * (info.c, scan.c, select.c, unique.c, run_length.c, bench.c); manual.c holds the manual
 * and the error convention, which they all use; manpage.c turns the manual into the man
 * page; backend.c picks the backend, helpers.c finds and runs helper programs, progress.c
 * draws the progress bar, ranks.c the MPI job of `mpiexec -n P dlscan scan`.
 * values.h has the element types and their numbers, files.h the input and output files
 * (files.c, output.c), segments.h the keys and offsets of segmented scans (segments.c),
 * chunks.h a chunk's memory, compact.h what the compaction commands share (compact.c).
 *
 * The command talks to the library only through dlscan.h, plus the CUDA runtime for device
 * memory and device properties in builds with the GPU backend (DLSCAN_CLI_HAVE_CUDA, which
 * tools/meson.build defines).
 */
#ifndef DLSCAN_CLI_H
#define DLSCAN_CLI_H

#include <stddef.h>

#include "dlscan.h"

/* Where the installed command finds its helper programs (the bench programs and plot.py),
 * relative to its own directory (or absolute); tools/meson.build sets it. */
#ifndef DLSCAN_CLI_LIBEXEC
#define DLSCAN_CLI_LIBEXEC "../libexec/dlscan"
#endif

/* ---- manual.c: exit statuses, errors, the manual; the commands (one file each) ---- */

enum { STATUS_OK = 0, STATUS_BAD_INPUT = 1, STATUS_FAILED = 2 };

/* Prints "dlscan: <message>" on stderr and returns `status`. */
int fail(int status, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* What the commands that read and write files take alike: IN and OUT (arguments that are
 * not options, or anything after "--"), "--", -q/--quiet and -h/--help. */
typedef struct common_arguments {
    const char *in_path, *out_path; /* in the order given; NULL: not given */
    int positional_only;            /* after "--" */
    int quiet;
} common_arguments;

/* Takes `a` into *common where it is one of them (*taken: 1), else leaves it (*taken: 0).
 * Returns STATUS_OK, -1 after printing the manual of `command` for --help, or an exit
 * status after printing why (a third IN or OUT). */
int take_common_argument(const char *command, const char *a, common_arguments *common,
                         int *taken);

/* The manual, on stdout: the whole of it (command NULL), or one command's part. */
void print_usage(const char *command);
void print_version_line(void); /* "dlscan X.Y.Z (library X.Y.Z)" */

/* The manual's parts: the commands' sections ("  dlscan scan ..." and their options), then
 * the lines on help and the version, the exit statuses, and the examples. One line of usage
 * for each command ("dlscan scan --type T ..."); the last entries are NULL. */
typedef struct manual_part {
    const char *command; /* "info", "scan", ...; NULL for the parts of every command */
    const char *usage;   /* NULL for those */
    const char *text;
} manual_part;
extern const manual_part manual[];

/* ---- manpage.c: the man page, dlscan.1 (dlscan --man; tools/meson.build installs it) ---- */

void print_man_page(void);

int cmd_info(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_unique(int argc, char **argv);
int cmd_run_length_encode(int argc, char **argv);
int cmd_bench(int argc, char **argv, const char *argv0);

/* ---- backend.c: --backend and the handle ---- */

typedef enum backend_choice { BACKEND_AUTO, BACKEND_GPU, BACKEND_CPU } backend_choice;

/* "auto", "gpu" or "cpu"; 0 for anything else. */
int parse_backend(const char *text, backend_choice *choice);

/* The options with a value that the file commands (scan, select, unique,
 * run-length-encode) take alike (manual.c, beside take_common_argument). */
typedef struct stream_options {
    int text, format_given;         /* --format */
    backend_choice backend;         /* --backend */
    int threads;                    /* --threads */
    unsigned long long chunk_items; /* --chunk-items; 0: the backend's default */
} stream_options;

/* Takes option `a` with its `value` into *s where it is one of them (*taken: 1), else leaves
 * it (*taken: 0). Returns STATUS_OK, or an exit status after printing why (a bad value). */
int take_stream_option(const char *command, const char *a, const char *value, stream_options *s,
                       int *taken);

/* Why dlscan_create found no GPU, in the CUDA runtime's words where it has any. */
void no_gpu_reason(char *reason, size_t size);

/* Creates the handle that `choice` asks for. `activity` ("scanning on the CPU backend")
 * ends the note that auto mode prints when it falls back to the CPU backend, unless
 * `quiet`, in a build with the GPU backend (one without it says nothing). */
int open_handle(backend_choice choice, int threads, int quiet, const char *activity,
                dlscan_handle_t *h, int *on_gpu);

/* ---- ranks.c: the MPI job under mpiexec (one rank elsewhere) ---- */

/* Initializes MPI where mpiexec started this process, in a build with the MPI binding. Returns
 * the ranks (1 outside an MPI job), or -1 where MPI_Init failed. */
int ranks_start(int *argc, char ***argv);
int ranks_rank(void);
int ranks_count(void);
/* dlscan_mpi_scan over the job's ranks (dlscan_scan with one rank). */
dlscan_status ranks_scan(dlscan_handle_t h, const dlscan_scan_args *a);
/* The largest of the ranks' statuses, on every rank. */
int ranks_worst(int status);
/* count bytes from rank 0 to every rank. */
void ranks_share(void *bytes, size_t count);
void ranks_stop(void);

/* ---- helpers.c: helper programs ---- */

/* A helper: the environment variable's path, else the first of `places` (relative to this
 * program's directory, or absolute) that exists. */
int find_helper(const char *variable, const char *const places[], int place_count,
                const char *argv0, char *path, size_t size);

/* Runs a program and waits for it. Returns its exit status, or -1 if it could not run. */
int run_program(char *const argv[], int quiet);

/* ---- progress.c: the progress bar ---- */

typedef struct progress {
    int enabled; /* stderr is a terminal, and not --quiet */
    int drawn;
    double start, last_draw;
} progress;

void progress_start(progress *p, int quiet);

/* Draws the bar for `done` bytes of `total` (-1: unknown) when the input has taken more
 * than a second, at most ten times a second; `final` ends it. */
void progress_update(progress *p, unsigned long long done, long long total, int final);

#endif /* DLSCAN_CLI_H */
