/*
 * files.h: the files of `dlscan scan`: the input, read chunk by chunk as raw items or as
 * text, numbers separated by white space (files.c), and the output, also bench's --csv
 * (output.c): a regular file is written to a temporary file and put in place only when
 * complete (removed if a signal ends the program), a pipe or a device as the result is
 * computed.
 * Every function that can fail returns an exit status (cli.h) after printing why.
 */
#ifndef DLSCAN_CLI_FILES_H
#define DLSCAN_CLI_FILES_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "values.h"

/* ---- The input ---- */

#define TEXT_PROBE 64 /* the bytes at the start of a binary input that may show it is text */

typedef struct input_file {
    FILE *f;
    const char *name;            /* the path, or "standard input" */
    long long size;              /* bytes, or -1 where unknown (a pipe) */
    unsigned long long consumed; /* bytes read so far */
    unsigned long long line;     /* text: the line of the last number read */
    unsigned long long newlines; /* text: newlines read so far */
    int refuse_text; /* binary by default, not by --format: refuse a start that is text */
    unsigned char probe[TEXT_PROBE]; /* the start, read to see whether it is text */
    size_t probed;                   /* its bytes */
} input_file;

/* Opens `path` ('-': standard input). */
int input_open(input_file *in, const char *path);
void input_close(input_file *in);

/* The message for a binary input of `bytes` that is not a whole number of items. */
int input_truncated(const input_file *in, unsigned long long bytes, const type_info *type);

/* The message for a value that parse_value refused (`result`, not PARSE_OK): `where` ("IN:
 * line 3: "), then why, with `length` bytes of `text`. Returns STATUS_BAD_INPUT. */
int bad_value(parse_result result, const char *where, const char *text, size_t length,
              const type_info *type);

/* Reads up to `max_items` items; *n is how many (0 at the end). Binary (text 0): raw items;
 * with in->refuse_text, a first chunk that starts as numbers in text do (digits, signs,
 * points, e, white space and a newline, nothing else, in its first 64 bytes) is refused:
 * --format binary takes it. Text: numbers separated by any white space (blank lines too). */
int read_chunk(input_file *in, const type_info *type, int text, void *items, size_t max_items,
               size_t *n);

/* ---- The output ---- */

typedef struct output_file {
    FILE *f;
    const char *name;     /* for messages: the path as given, or "standard output" */
    char target[4096];    /* what the temporary file replaces: the path, or a symlink's target */
    char temp_path[4096]; /* the temporary file next to it; "" where there is none */
    int temp_slot;        /* its place among the files that signals remove */
    int is_stdout;
    int direct; /* written straight: a pipe, terminal or device, a FIFO */
    mode_t mode;
    int replaces;     /* the temporary file replaces a file: give it its owner and group */
    uid_t owner;
    gid_t group;
} output_file;

/* Opens the output `path` (NULL: standard output) after checking what can be checked before
 * the work: an empty path, a directory, a read-only file, a dangling symbolic link (exit
 * status 1). A regular file, or the target of a symbolic link to one (as cp follows it), is
 * written to a temporary file next to it; standard output that is a regular file to an
 * unnamed temporary file in $TMPDIR (default /tmp); anything else straight, as it goes. */
int output_open(output_file *out, const char *path);

/* For binary output: refuses a terminal (as zstd does), closing the output; status 1. */
int output_refuse_terminal(output_file *out);

/* Writes n items of `type`: raw, or as text one a line. A failed write shows at
 * output_chunk_done. */
void output_values(output_file *out, const type_info *type, int text, const void *items,
                   size_t n);

/* Ends a chunk: what is written straight goes out now. Returns an exit status. */
int output_chunk_done(output_file *out);

/* Appends the contents of the file `path` to the output. Returns an exit status. */
int output_append_file(output_file *out, const char *path);

/* Completes the output: renames the temporary file into place, with the replaced file's
 * permissions, and its owner and group where the system allows (a new file: its hard
 * links keep the old contents; ACLs and extended attributes are not copied), or copies it
 * to standard output. */
int output_commit(output_file *out);

/* Removes the temporary file; closes the output. */
void output_discard(output_file *out);

/* ---- The standard descriptors ---- */

/* Puts /dev/null on each of descriptors 0-2 that is closed at the start, so that no file
 * the command opens takes one of them (a temporary OUT read as standard input, a note
 * written into OUT), and remembers which were closed. It is opened the wrong way round
 * (write-only for 0, read-only for 1 and 2), so that using one still fails as the closed
 * descriptor would. */
void standard_streams_hold(void);

/* Whether descriptor `fd` (0-2) was closed at the start. */
int standard_stream_closed(int fd);

/* ---- Temporary files and signals ---- */

/* Makes every signal that would end the program, and that has its default action at the
 * start (ignored ones stay ignored), remove the temporary files in use before it does. */
void output_remove_on_signals(void);

/* Creates a temporary file in $TMPDIR (default /tmp) from `name` ("dlscan-XXXXXX"), which
 * a signal removes until temp_forget(*slot). Returns its descriptor, or -1 with errno. */
int temp_create_in_tmpdir(const char *name, char *path, size_t size, int *slot);

/* The file at `slot` is gone or in place: signals leave it alone. */
void temp_forget(int slot);

#endif /* DLSCAN_CLI_FILES_H */
