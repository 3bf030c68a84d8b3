/*
 * output.c: the output of the file commands (scan, select, unique, run-length-encode) and of
 * `dlscan bench --csv` (files.h), the signals that remove temporary files, and the standard
 * descriptors held at the start so that no file of the command takes them.
 *
 * A regular file is never half-written: it is written to a temporary file in its directory
 * (a symbolic link's target's, as cp follows links) and renamed into place after the last
 * item, with the replaced file's permissions, owner and group (where the system allows:
 * its hard links, ACLs and extended attributes are not kept); standard output that is a
 * regular file gets the result from an unnamed temporary file in $TMPDIR once it is
 * complete. A pipe, a terminal, a FIFO or a device is written straight, as the result is
 * computed: it may hold part of a result that failed. Every signal that ends the program
 * removes the temporary files first: the handler runs with all those signals blocked, then
 * ends the program with the signal's default action.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"

/* ================================================================ standard descriptors */

static int closed_at_start[3];

void standard_streams_hold(void)
{
    for (int fd = 0; fd < 3; ++fd)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            /* open() takes the lowest free descriptor: this one, as the lower are open */
            const int held = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            closed_at_start[fd] = 1;
            if (held >= 0 && held != fd) /* cannot happen; never keep a stray descriptor */
                close(held);
        }
}

int standard_stream_closed(int fd) { return fd >= 0 && fd < 3 && closed_at_start[fd]; }

/* ================================================================ signals */

/* The temporary files in use (the output's, bench's CSV), which a signal removes. */
#define TEMP_SLOTS 2
static char temp_paths[TEMP_SLOTS][4096];
static volatile sig_atomic_t temp_in_use[TEMP_SLOTS];
static sigset_t cleanup_signals;

static void remove_temps_and_die(int signal_number)
{
    for (int k = 0; k < TEMP_SLOTS; ++k)
        if (temp_in_use[k])
            unlink(temp_paths[k]);
    signal(signal_number, SIG_DFL);
    raise(signal_number); /* blocked until this handler returns; then it ends the program */
}

void output_remove_on_signals(void)
{
    /* The signals whose default action ends the program, but SIGKILL and SIGSTOP. */
    static const int fixed[] = {
        SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT,   SIGBUS,  SIGFPE, SIGUSR1,
        SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU,   SIGXFSZ, SIGSYS, SIGVTALRM,
        SIGPROF,
#ifdef SIGPOLL
        SIGPOLL,
#endif
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
#ifdef SIGPWR
        SIGPWR,
#endif
    };
    sigemptyset(&cleanup_signals);
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; ++k)
        sigaddset(&cleanup_signals, fixed[k]);
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s)
        sigaddset(&cleanup_signals, s);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = remove_temps_and_die;
    action.sa_mask = cleanup_signals;
    for (int s = 1; s <= SIGRTMAX; ++s) {
        struct sigaction old;
        /* Ignored signals stay ignored (nohup), and others' handlers (a sanitizer's) stay. */
        if (sigismember(&cleanup_signals, s) == 1 && sigaction(s, NULL, &old) == 0 &&
            !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            sigaction(s, &action, NULL);
    }
}

/* mkstemp(`path`), with the file on the list of those that signals remove. */
static int temp_create(char *path, int *slot)
{
    sigset_t saved; /* signals wait until the file is on the list */
    sigprocmask(SIG_BLOCK, &cleanup_signals, &saved);
    int k = 0, fd = -1;
    while (k < TEMP_SLOTS && temp_in_use[k])
        ++k;
    if (k == TEMP_SLOTS) {
        errno = EMFILE;
    } else if ((fd = mkstemp(path)) >= 0) {
        snprintf(temp_paths[k], sizeof temp_paths[k], "%s", path);
        temp_in_use[k] = 1;
        *slot = k;
    }
    const int error = errno;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    errno = error;
    return fd;
}

int temp_create_in_tmpdir(const char *name, char *path, size_t size, int *slot)
{
    const char *dir = getenv("TMPDIR");
    if (snprintf(path, size, "%s/%s", dir && *dir ? dir : "/tmp", name) >= (int)size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return temp_create(path, slot);
}

void temp_forget(int slot) { temp_in_use[slot] = 0; }

/* ================================================================ opening */

/* A FIFO, a device, or a file of another kind: written straight. */
static int open_straight(output_file *out)
{
    const int fd = open(out->target, O_WRONLY | O_TRUNC | O_NOCTTY);
    if (fd < 0)
        return fail(STATUS_BAD_INPUT, "cannot open %s: %s", out->name, strerror(errno));
    if (!(out->f = fdopen(fd, "wb"))) {
        close(fd);
        return fail(STATUS_FAILED, "fdopen failed: %s", strerror(errno));
    }
    out->direct = 1;
    return STATUS_OK;
}

/* Standard output: a regular file gets the result only once it is complete, from an unnamed
 * temporary file; anything else as it is computed. */
static int open_stdout(output_file *out)
{
    out->name = "standard output";
    out->is_stdout = 1;
    if (standard_stream_closed(STDOUT_FILENO))
        return fail(STATUS_BAD_INPUT, "standard output is closed; give OUT a file name");
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) {
        out->f = stdout;
        out->direct = 1;
        return STATUS_OK;
    }
    char path[4096];
    int slot;
    const int fd = temp_create_in_tmpdir("dlscan-XXXXXX", path, sizeof path, &slot);
    if (fd < 0)
        return fail(STATUS_FAILED, "cannot create a temporary file for standard output: %s",
                    strerror(errno));
    unlink(path);
    temp_forget(slot);
    if (!(out->f = fdopen(fd, "w+b"))) {
        close(fd);
        return fail(STATUS_FAILED, "fdopen failed: %s", strerror(errno));
    }
    return STATUS_OK;
}

int output_open(output_file *out, const char *path)
{
    memset(out, 0, sizeof *out);
    if (!path)
        return open_stdout(out);
    out->name = path;
    if (!*path)
        return fail(STATUS_BAD_INPUT, "the output path is empty");
    if (snprintf(out->target, sizeof out->target, "%s", path) >= (int)sizeof out->target)
        return fail(STATUS_BAD_INPUT, "%s: the path is too long", path);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        /* As cp does: through the link, replacing its target (which must exist). */
        char *real = realpath(path, NULL);
        if (!real)
            return fail(STATUS_BAD_INPUT, "%s: cannot follow the symbolic link: %s", path,
                        strerror(errno));
        const int too_long = snprintf(out->target, sizeof out->target, "%s", real) >=
                             (int)sizeof out->target;
        free(real);
        if (too_long)
            return fail(STATUS_BAD_INPUT, "%s: the path is too long", path);
    }
    const mode_t mask = umask(0);
    umask(mask);
    out->mode = 0666 & ~mask;
    if (stat(out->target, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fail(STATUS_BAD_INPUT, "%s: is a directory", path);
        if (!S_ISREG(st.st_mode))
            return open_straight(out);
        /* A read-only file is not replaced, as `>` would not write it; root, whom access()
         * lets write anything, is held to the permission bits: one must allow writing. */
        const int writable = access(out->target, W_OK) == 0;
        if (!writable || !(st.st_mode & 0222))
            return fail(STATUS_BAD_INPUT, "cannot write %s: %s", path,
                        strerror(writable ? EACCES : errno));
        out->mode = st.st_mode & 07777; /* keep the replaced file's permissions, */
        out->replaces = 1;              /* and its owner and group where allowed */
        out->owner = st.st_uid;
        out->group = st.st_gid;
    }
    const char *slash = strrchr(out->target, '/');
    const int dir_length = slash ? (int)(slash - out->target) + 1 : 0;
    char temp[sizeof out->temp_path];
    if (snprintf(temp, sizeof temp, "%.*s.%s.dlscan-XXXXXX", dir_length, out->target,
                 slash ? slash + 1 : out->target) >= (int)sizeof temp)
        return fail(STATUS_BAD_INPUT, "%s: the path is too long", path);
    const int fd = temp_create(temp, &out->temp_slot);
    if (fd < 0)
        return fail(STATUS_BAD_INPUT, "%s: cannot create a file in %s: %s", path,
                    dir_length ? "its directory" : "the current directory", strerror(errno));
    memcpy(out->temp_path, temp, sizeof temp);
    if (!(out->f = fdopen(fd, "wb"))) {
        close(fd);
        output_discard(out);
        return fail(STATUS_FAILED, "fdopen failed: %s", strerror(errno));
    }
    return STATUS_OK;
}

int output_refuse_terminal(output_file *out)
{
    if (!out->direct || !isatty(fileno(out->f)))
        return STATUS_OK;
    output_discard(out);
    return fail(STATUS_BAD_INPUT, "%s is a terminal: binary values are not written to one; "
                                  "give --format text, or OUT a file (or redirect)",
                out->name);
}

/* ================================================================ writing, completing */

/* Copies the rest of `from` to `to`. Returns 0, or -1 with errno. */
static int copy_stream(FILE *from, FILE *to)
{
    char block[1 << 16];
    size_t got;
    while ((got = fread(block, 1, sizeof block, from)) > 0)
        if (fwrite(block, 1, got, to) != got)
            return -1;
    return ferror(from) ? -1 : 0;
}

/* Discards the output and says that writing it failed, with `error`'s words. */
static int write_failed(output_file *out, int error)
{
    output_discard(out);
    return fail(STATUS_FAILED, "writing %s failed: %s", out->name, strerror(error));
}

void output_values(output_file *out, const type_info *type, int text, const void *items,
                   size_t n)
{
    if (!text) {
        fwrite(items, type->size, n, out->f);
        return;
    }
    for (size_t i = 0; i < n; ++i)
        write_text_value(out->f, type->type, (const char *)items + i * type->size);
}

int output_chunk_done(output_file *out)
{
    if ((out->direct && fflush(out->f) != 0) || ferror(out->f))
        return write_failed(out, errno);
    return STATUS_OK;
}

int output_append_file(output_file *out, const char *path)
{
    FILE *from = fopen(path, "rb");
    if (!from)
        return fail(STATUS_FAILED, "cannot read %s: %s", path, strerror(errno));
    const int copied = copy_stream(from, out->f);
    const int error = errno;
    fclose(from);
    return copied == 0 ? STATUS_OK : write_failed(out, error);
}

int output_commit(output_file *out)
{
    if (fflush(out->f) != 0 || ferror(out->f))
        return write_failed(out, errno);
    if (out->is_stdout && !out->direct) { /* the unnamed temporary file */
        rewind(out->f);
        if (copy_stream(out->f, stdout) != 0 || fflush(stdout) != 0)
            return write_failed(out, errno);
        output_discard(out);
        return STATUS_OK;
    }
    if (out->direct) {
        const int closed = out->f == stdout ? 0 : fclose(out->f);
        out->f = NULL;
        return closed == 0 ? STATUS_OK : write_failed(out, errno);
    }
    /* The owner first: changing it may clear the set-user-ID and set-group-ID bits. Who may
     * not give a file away (EPERM) keeps it, and so does a file system without owners. */
    const int fd = fileno(out->f);
    if (out->replaces && fchown(fd, out->owner, out->group) != 0 &&
        (errno != EPERM || fchown(fd, (uid_t)-1, out->group) != 0) && errno != EPERM &&
        errno != EINVAL && errno != ENOTSUP)
        return write_failed(out, errno);
    if (fchmod(fd, out->mode) != 0 || fsync(fd) != 0)
        return write_failed(out, errno);
    const int closed = fclose(out->f);
    out->f = NULL;
    if (closed != 0 || rename(out->temp_path, out->target) != 0)
        return write_failed(out, errno);
    temp_forget(out->temp_slot);
    out->temp_path[0] = '\0';
    return STATUS_OK;
}

void output_discard(output_file *out)
{
    if (out->f && out->f != stdout)
        fclose(out->f);
    out->f = NULL;
    if (out->temp_path[0]) {
        unlink(out->temp_path);
        temp_forget(out->temp_slot);
        out->temp_path[0] = '\0';
    }
}
