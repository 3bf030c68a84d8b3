/*
 * files.c: the input files of `dlscan scan` (files.h): raw items, or text with numbers
 * separated by white space, read chunk by chunk; a binary input that starts as text is
 * refused where the binary format is only the default. The output and the signals that
 * remove its temporary file: output.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "files.h"

#include <ctype.h>
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

#define MAX_WORD 256 /* text: longer words are not numbers */

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

/* Whether the input's first bytes are numbers as text: the first TEXT_PROBE of them (all
 * where there are fewer) are digits, signs, points, e or E and white space, with a digit
 * and a newline among them. */
static int looks_like_text(const unsigned char *bytes, size_t size)
{
    const size_t probe = size < TEXT_PROBE ? size : TEXT_PROBE;
    int digit = 0, newline = 0;
    for (size_t k = 0; k < probe; ++k) {
        if (!strchr("0123456789+-.eE \t\r\n", bytes[k]) || bytes[k] == '\0')
            return 0;
        digit |= isdigit(bytes[k]) != 0;
        newline |= bytes[k] == '\n';
    }
    return digit && newline;
}

static int read_binary_chunk(input_file *in, const type_info *type, void *items,
                             size_t max_items, size_t *n)
{
    if (in->refuse_text && in->consumed == 0 && !in->probed) {
        /* the first TEXT_PROBE bytes, however small the chunk; the reads below take them */
        in->probed = fread(in->probe, 1, TEXT_PROBE, in->f);
        if (ferror(in->f))
            return fail(STATUS_BAD_INPUT, "cannot read %s: %s", in->name, strerror(errno));
        if (looks_like_text(in->probe, in->probed)) {
            char shown[48];
            return fail(STATUS_BAD_INPUT, "%s looks like text ('%s'), not binary values: give "
                                          "--format text (or --format binary to take it as "
                                          "binary)",
                        in->name, printable((const char *)in->probe, in->probed, shown));
        }
    }
    const size_t bytes = max_items * type->size;
    size_t got = 0;
    if (in->consumed < in->probed) { /* probed bytes first */
        got = in->probed - (size_t)in->consumed < bytes ? in->probed - (size_t)in->consumed
                                                        : bytes;
        memcpy(items, in->probe + in->consumed, got);
    }
    got += fread((char *)items + got, 1, bytes - got, in->f);
    if (ferror(in->f))
        return fail(STATUS_BAD_INPUT, "cannot read %s: %s", in->name, strerror(errno));
    in->consumed += got;
    if (got % type->size)
        return input_truncated(in, in->consumed, type);
    *n = got / type->size;
    return STATUS_OK;
}

int bad_value(parse_result result, const char *where, const char *text, size_t length,
              const type_info *type)
{
    char shown[48];
    printable(text, length, shown);
    if (result == PARSE_NOT_WHOLE)
        return fail(STATUS_BAD_INPUT, "%s%s is not a whole number, as %s needs", where, shown,
                    type->name);
    if (result == PARSE_OUT_OF_RANGE)
        return fail(STATUS_BAD_INPUT, "%s%s is out of range for %s (%s)", where, shown,
                    type->name, type->range);
    return fail(STATUS_BAD_INPUT, "%s'%s' is not a number of type %s", where, shown, type->name);
}

/* Reads the next word (a run of characters but white space) into `word`, NUL-terminated,
 * and sets in->line to its line. Returns its length, -1 at the end of the input, or -2 for
 * a word longer than MAX_WORD (its first MAX_WORD characters are in `word`). */
static long read_word(input_file *in, char word[MAX_WORD + 1])
{
    int c;
    while ((c = getc_unlocked(in->f)) != EOF && isspace(c)) {
        ++in->consumed;
        in->newlines += c == '\n';
    }
    if (c == EOF)
        return -1;
    in->line = in->newlines + 1;
    long length = 0;
    for (; c != EOF && !isspace(c); c = getc_unlocked(in->f), ++length)
        if (length < MAX_WORD)
            word[length] = (char)c;
    if (c != EOF)
        ungetc(c, in->f);
    in->consumed += (unsigned long long)length;
    word[length < MAX_WORD ? length : MAX_WORD] = '\0';
    return length > MAX_WORD ? -2 : length;
}

static int read_text_chunk(input_file *in, const type_info *type, void *items, size_t max_items,
                           size_t *n)
{
    char word[MAX_WORD + 1], shown[48];
    size_t count = 0;
    while (count < max_items) {
        const long length = read_word(in, word);
        if (length == -1)
            break;
        if (length == -2)
            return fail(STATUS_BAD_INPUT, "%s: line %llu: '%s' is longer than %d characters; "
                                          "expected a number",
                        in->name, in->line, printable(word, MAX_WORD, shown), MAX_WORD);
        scan_value v;
        const parse_result parsed = parse_value(type->type, word, (size_t)length, &v);
        if (parsed != PARSE_OK) {
            char where[4200];
            snprintf(where, sizeof where, "%s: line %llu: ", in->name, in->line);
            return bad_value(parsed, where, word, (size_t)length, type);
        }
        memcpy((char *)items + count * type->size, &v, type->size);
        ++count;
    }
    if (ferror(in->f))
        return fail(STATUS_BAD_INPUT, "cannot read %s: %s", in->name, strerror(errno));
    *n = count;
    return STATUS_OK;
}

int read_chunk(input_file *in, const type_info *type, int text, void *items, size_t max_items,
               size_t *n)
{
    return text ? read_text_chunk(in, type, items, max_items, n)
                : read_binary_chunk(in, type, items, max_items, n);
}
