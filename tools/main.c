/*
 * main.c: the `dlscan` command: what this machine's dlscan can do (info.c), prefix scans
 * of files (scan.c), stream compaction of files (select.c, unique.c, run_length.c) and the
 * throughput sweep (bench.c). This file dispatches to them; what they all use (the manual,
 * the error messages) is manual.c's, what the files share cli.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "files.h"

#define COMMANDS "info, scan, select, unique, run-length-encode and bench"

/* dlscan help [COMMAND] */
static int help(const char *command)
{
    const manual_part *part = manual;
    while (command && part->command && strcmp(part->command, command) != 0)
        ++part;
    if (command && !part->command)
        return fail(STATUS_BAD_INPUT, "help: unknown command '%s'; the commands are " COMMANDS,
                    command);
    print_usage(command);
    return STATUS_OK;
}

int main(int argc, char **argv)
{
    standard_streams_hold(); /* before any file is opened */

    /* --name=value is --name value. */
    char **args = calloc(2 * (size_t)argc + 1, sizeof *args);
    if (!args)
        return fail(STATUS_FAILED, "out of memory");
    int count = 0, options_end = 0;
    for (int i = 0; i < argc; ++i) {
        char *equals = argv[i][0] == '-' && argv[i][1] == '-' ? strchr(argv[i], '=') : NULL;
        options_end |= strcmp(argv[i], "--") == 0;
        if (equals && !options_end) {
            *equals = '\0';
            args[count++] = argv[i];
            args[count++] = equals + 1;
        } else {
            args[count++] = argv[i];
        }
    }

    output_remove_on_signals();

    int status;
    const char *command = count > 1 ? args[1] : NULL;
    const int ranks = ranks_start(&argc, &argv);
    if (ranks < 0) {
        status = fail(STATUS_FAILED, "MPI_Init failed (under mpiexec)");
    } else if (ranks > 1 && (!command || strcmp(command, "scan") != 0)) {
        status = ranks_rank() > 0 ? STATUS_BAD_INPUT
                                  : fail(STATUS_BAD_INPUT, "under mpiexec with %d ranks: only 'dlscan "
                                                           "scan' splits its file among the ranks", ranks);
    } else if (!command) {
        status = fail(STATUS_BAD_INPUT, "missing command; the commands are " COMMANDS
                                        " (see 'dlscan --help')");
    } else if (strcmp(command, "scan") == 0) {
        status = cmd_scan(count - 2, args + 2);
    } else if (strcmp(command, "info") == 0) {
        status = cmd_info(count - 2, args + 2);
    } else if (strcmp(command, "select") == 0) {
        status = cmd_select(count - 2, args + 2);
    } else if (strcmp(command, "unique") == 0) {
        status = cmd_unique(count - 2, args + 2);
    } else if (strcmp(command, "run-length-encode") == 0) {
        status = cmd_run_length_encode(count - 2, args + 2);
    } else if (strcmp(command, "bench") == 0) {
        status = cmd_bench(count - 2, args + 2, args[0]);
    } else if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0 ||
               strcmp(command, "-h") == 0) {
        status = help(count > 2 ? args[2] : NULL);
    } else if (strcmp(command, "--version") == 0 || strcmp(command, "-V") == 0) {
        print_version_line();
        status = STATUS_OK;
    } else if (strcmp(command, "--man") == 0) { /* not in the manual: tools/meson.build's */
        print_man_page();
        status = STATUS_OK;
    } else {
        status = fail(STATUS_BAD_INPUT, "%s '%s'; the commands are " COMMANDS " (see "
                                        "'dlscan --help')",
                      command[0] == '-' ? "unknown option" : "unknown command", command);
    }
    if (fflush(stdout) != 0 && status == STATUS_OK)
        status = fail(STATUS_FAILED, "writing standard output failed: %s", strerror(errno));
    free(args);
    ranks_stop();
    return status;
}
