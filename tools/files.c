/*
 * files.c: the input and output files of `dlscan scan` (files.h).
 *
 * Nothing is half-written: OUT is written to a temporary file in its directory and renamed
 * into place after the last item; with OUT = '-' the result goes to an unnamed temporary
 * file and is copied to standard output only after the scan succeeded. A signal that ends
 * the program removes the temporary file first.
 */
#define _POSIX_C_SOURCE 200809L
#include "files.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dlscan's binary files are little-endian; this host is not"
#endif

/* ================================================================ output files */

/* The temporary file of the output being written, removed if a signal ends the program. */
static char pending_temp_path[4096];
static volatile sig_atomic_t have_pending_temp;

static void remove_pending_temp_and_die(int signal_number)
{
    if (have_pending_temp)
        unlink(pending_temp_path);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

void output_remove_on_signals(void)
{
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof signals / sizeof signals[0]; ++k)
        signal(signals[k], remove_pending_temp_and_die);
}

int output_open(output_file *out, const char *path)
{
    memset(out, 0, sizeof *out);
    if (strcmp(path, "-") == 0) {
        if (!(out->f = tmpfile()))
            return fail(STATUS_FAILED, "cannot create a temporary file for standard output: %s",
                        strerror(errno));
        return STATUS_OK;
    }
    out->path = path;
    struct stat existing;
    const mode_t mask = umask(0);
    umask(mask);
    out->mode = 0666 & ~mask;
    if (stat(path, &existing) == 0) {
        if (S_ISDIR(existing.st_mode))
            return fail(STATUS_BAD_INPUT, "%s: is a directory", path);
        out->mode = existing.st_mode & 07777; /* keep the replaced file's permissions */
    }
    const char *slash = strrchr(path, '/');
    const int dir_length = slash ? (int)(slash - path) + 1 : 0;
    if (snprintf(out->temp_path, sizeof out->temp_path, "%.*s.%s.dlscan-XXXXXX", dir_length,
                 path, slash ? slash + 1 : path) >= (int)sizeof out->temp_path)
        return fail(STATUS_BAD_INPUT, "%s: the path is too long", path);
    const int fd = mkstemp(out->temp_path);
    if (fd < 0)
        return fail(STATUS_BAD_INPUT, "%s: cannot create a file in %s: %s", path,
                    dir_length ? "its directory" : "the current directory", strerror(errno));
    memcpy(pending_temp_path, out->temp_path, sizeof pending_temp_path);
    have_pending_temp = 1;
    if (!(out->f = fdopen(fd, "wb"))) {
        close(fd);
        unlink(out->temp_path);
        have_pending_temp = 0;
        return fail(STATUS_FAILED, "fdopen failed: %s", strerror(errno));
    }
    return STATUS_OK;
}

void output_discard(output_file *out)
{
    if (out->f)
        fclose(out->f);
    if (out->path) {
        unlink(out->temp_path);
        have_pending_temp = 0;
    }
    out->f = NULL;
}

int output_commit(output_file *out)
{
    const char *name = out->path ? out->path : "standard output";
    if (fflush(out->f) != 0 || ferror(out->f)) {
        const int saved = errno;
        output_discard(out);
        return fail(STATUS_FAILED, "writing %s failed: %s", name, strerror(saved));
    }
    if (!out->path) {
        rewind(out->f);
        char block[1 << 16];
        size_t got;
        while ((got = fread(block, 1, sizeof block, out->f)) > 0)
            if (fwrite(block, 1, got, stdout) != got)
                break;
        const int failed = ferror(out->f) || ferror(stdout) || fflush(stdout) != 0;
        const int saved = errno;
        output_discard(out);
        return failed ? fail(STATUS_FAILED, "writing standard output failed: %s", strerror(saved))
                      : STATUS_OK;
    }
    if (fchmod(fileno(out->f), out->mode) != 0 || fsync(fileno(out->f)) != 0) {
        const int saved = errno;
        output_discard(out);
        return fail(STATUS_FAILED, "writing %s failed: %s", name, strerror(saved));
    }
    const int closed = fclose(out->f);
    out->f = NULL;
    if (closed != 0 || rename(out->temp_path, out->path) != 0) {
        const int saved = errno;
        output_discard(out);
        return fail(STATUS_FAILED, "writing %s failed: %s", name, strerror(saved));
    }
    have_pending_temp = 0;
    return STATUS_OK;
}

/* ================================================================ input files */

#define MAX_LINE 256 /* text: longer lines cannot hold one number */

int input_open(input_file *in, const char *path)
{
    memset(in, 0, sizeof *in);
    in->size = -1;
    if (strcmp(path, "-") == 0) {
        in->f = stdin;
        in->name = "standard input";
    } else {
        in->name = path;
        if (!(in->f = fopen(path, "rb")))
            return fail(STATUS_BAD_INPUT, "cannot open %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(in->f), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fail(STATUS_BAD_INPUT, "cannot read %s: it is a directory", in->name);
        if (S_ISREG(st.st_mode))
            in->size = (long long)st.st_size;
    }
    return STATUS_OK;
}

void input_close(input_file *in)
{
    if (in->f && in->f != stdin)
        fclose(in->f);
    in->f = NULL;
}

int input_truncated(const input_file *in, unsigned long long bytes, const type_info *type)
{
    return fail(STATUS_BAD_INPUT,
                "%s: truncated binary input: %llu bytes is not a whole number of %s items "
                "(%zu bytes each)",
                in->name, bytes, type->name, type->size);
}

int read_binary_chunk(input_file *in, const type_info *type, void *items, size_t max_items,
                      size_t *n)
{
    const size_t got = fread(items, 1, max_items * type->size, in->f);
    if (ferror(in->f))
        return fail(STATUS_BAD_INPUT, "cannot read %s: %s", in->name, strerror(errno));
    in->consumed += got;
    if (got % type->size)
        return input_truncated(in, in->consumed, type);
    *n = got / type->size;
    return STATUS_OK;
}

/* Reads one line into `line` (without its newline); returns its length, or -1 at the end
 * of the input, or -2 for a line longer than MAX_LINE. */
static long read_line(input_file *in, char line[MAX_LINE + 1])
{
    long length = 0;
    int c;
    while ((c = getc_unlocked(in->f)) != EOF && c != '\n') {
        if (length < MAX_LINE)
            line[length] = (char)c;
        ++length;
    }
    if (c == EOF && length == 0)
        return -1;
    in->consumed += (unsigned long long)length + (c == '\n');
    return length > MAX_LINE ? -2 : length;
}

int read_text_chunk(input_file *in, const type_info *type, void *items, size_t max_items,
                    size_t *n)
{
    char line[MAX_LINE + 1], shown[48];
    size_t count = 0;
    while (count < max_items) {
        const long length = read_line(in, line);
        if (length == -1)
            break;
        ++in->line;
        if (length == -2)
            return fail(STATUS_BAD_INPUT, "%s: line %llu: longer than %d characters; expected one number",
                        in->name, in->line, MAX_LINE);
        const char *start = line, *end = line + length;
        while (start < end && (*start == ' ' || *start == '\t'))
            ++start;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            --end;
        if (start == end)
            return fail(STATUS_BAD_INPUT, "%s: line %llu: empty line; expected a number",
                        in->name, in->line);
        scan_value v;
        switch (parse_value(type->type, start, (size_t)(end - start), &v)) {
        case PARSE_OK: break;
        case PARSE_NOT_A_NUMBER:
            return fail(STATUS_BAD_INPUT, "%s: line %llu: '%s' is not a number of type %s",
                        in->name, in->line, printable(start, (size_t)(end - start), shown),
                        type->name);
        case PARSE_OUT_OF_RANGE:
            return fail(STATUS_BAD_INPUT, "%s: line %llu: %s is out of range for %s (%s)",
                        in->name, in->line, printable(start, (size_t)(end - start), shown),
                        type->name, type->range);
        }
        memcpy((char *)items + count * type->size, &v, type->size);
        ++count;
    }
    if (ferror(in->f))
        return fail(STATUS_BAD_INPUT, "cannot read %s: %s", in->name, strerror(errno));
    *n = count;
    return STATUS_OK;
}
