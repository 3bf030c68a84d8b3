/*
 * files.c: the input files of `dlscan scan` (files.h): raw items or text with one number a
 * line, read chunk by chunk. The output and the signals that remove its temporary file:
 * output.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dlscan's binary files are little-endian; this host is not"
#endif

/* ================================================================ input files */

#define MAX_LINE 256 /* text: longer lines cannot hold one number */

int input_open(input_file *in, const char *path)
{
    memset(in, 0, sizeof *in);
    in->size = -1;
    if (strcmp(path, "-") == 0) {
        if (standard_stream_closed(STDIN_FILENO))
            return fail(STATUS_BAD_INPUT, "standard input is closed; give IN a file name");
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
