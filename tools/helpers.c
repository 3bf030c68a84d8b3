/*
 * helpers.c: the helper programs of the `dlscan` command (cli.h): the bench programs and
 * plot.py, found through an environment variable or next to the command, and run as child
 * processes that it waits for.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* This program's directory, for finding its helpers. */
static int own_directory(char *dir, size_t size, const char *argv0)
{
    const ssize_t length = readlink("/proc/self/exe", dir, size - 1);
    if (length > 0) {
        dir[length] = '\0';
    } else if (strchr(argv0, '/') && strlen(argv0) < size) {
        strcpy(dir, argv0);
    } else {
        return 0;
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return 1;
}

int find_helper(const char *variable, const char *const places[], int place_count,
                const char *argv0, char *path, size_t size)
{
    const char *forced = getenv(variable);
    if (forced && *forced) {
        snprintf(path, size, "%s", forced);
        return access(path, F_OK) == 0;
    }
    char dir[4096];
    const int have_dir = own_directory(dir, sizeof dir, argv0);
    for (int k = 0; k < place_count; ++k) {
        if (places[k][0] == '/')
            snprintf(path, size, "%s", places[k]);
        else if (have_dir)
            snprintf(path, size, "%s/%s", dir, places[k]);
        else
            continue;
        if (access(path, F_OK) == 0)
            return 1;
    }
    return 0;
}

int run_program(char *const argv[], int quiet)
{
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (quiet) {
            FILE *null = fopen("/dev/null", "w");
            if (null) {
                dup2(fileno(null), STDOUT_FILENO);
                dup2(fileno(null), STDERR_FILENO);
            }
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int wait_status;
    while (waitpid(pid, &wait_status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}
