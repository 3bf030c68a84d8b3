/*
 * compact.h: what the compaction commands share (compact.c): `dlscan select`, `unique` and
 * `run-length-encode` (select.c, unique.c, run_length.c) take scan's options for the type,
 * the format, the backend and the chunks, and stream IN chunk by chunk through one of the
 * library's compaction calls into OUT. Each call leaves its count in the chunk's carry; what
 * crosses a chunk's edge (unique's last item, run-length encoding's open run) is the
 * command's to carry. Every function that can fail returns an exit status (cli.h).
 */
#ifndef DLSCAN_CLI_COMPACT_H
#define DLSCAN_CLI_COMPACT_H

#include <stddef.h>

#include "chunks.h"
#include "cli.h"
#include "files.h"

enum { COMPACT_OWN = 4 }; /* a command's own options that take a value, at most */

typedef struct compact_options {
    const char *command;              /* "select", for messages */
    const type_info *type;            /* --type */
    stream_options stream;            /* --format, --backend, --threads, --chunk-items */
    int quiet;
    const char *in_path, *out_path;   /* "-", NULL: standard input, standard output */
    const char *own[COMPACT_OWN];     /* the values of the command's own options, or NULL */
} compact_options;

/* Parses the options of `command`, whose own options that take a value are `own` (NULL-
 * ended; NULL: none). Returns STATUS_OK, -1 after --help, or an exit status after printing
 * why. */
int parse_compact_options(const char *command, int argc, char **argv, const char *const *own,
                          compact_options *o);

typedef struct compact_stream {
    const compact_options *o;
    input_file in;
    output_file out;
    dlscan_handle_t h;
    int on_gpu;
    chunk_memory m;
    size_t chunk; /* items a chunk */
    int ended;
    progress bar;
} compact_stream;

/* Opens IN and OUT, the handle and a chunk's memory, with `extra_size` bytes an item in the
 * extra buffer (select's flags, run-length encoding's lengths). */
int compact_open(compact_stream *s, const compact_options *o, size_t extra_size);

/* The next chunk of IN in host_in, and on the device for a GPU handle: *n items, 0 at the
 * end. */
int compact_next(compact_stream *s, size_t *n);

/* After the chunk's call: its count (from the carry), and the first `count` items of the
 * out buffer, and `extra_size` bytes an item of the extra one, on the host. */
int compact_fetch(compact_stream *s, size_t *count, size_t extra_size);

/* The message for a failed library call, `call` ("dlscan_unique"). */
int compact_call_failed(const compact_stream *s, const char *call);

/* Ends the stream: with `status` STATUS_OK, OUT is completed; else it is discarded.
 * Frees everything; returns the status. */
int compact_close(compact_stream *s, int status);

#endif /* DLSCAN_CLI_COMPACT_H */
