/*
 * files.h: the files of `dlscan scan`: the input, read chunk by chunk as raw items or as
 * text with one number per line, and the output, written to a temporary file and put in
 * place only when complete (removed if a signal ends the program). files.c implements them.
 * Every function that can fail returns an exit status (cli.h) after printing why.
 */
#ifndef DLSCAN_CLI_FILES_H
#define DLSCAN_CLI_FILES_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "values.h"

/* ---- The input ---- */

typedef struct input_file {
    FILE *f;
    const char *name;            /* the path, or "standard input" */
    long long size;              /* bytes, or -1 where unknown (a pipe) */
    unsigned long long consumed; /* bytes read so far */
    unsigned long long line;     /* text: lines read so far */
} input_file;

/* Opens `path` ('-': standard input). */
int input_open(input_file *in, const char *path);
void input_close(input_file *in);

/* The message for a binary input of `bytes` that is not a whole number of items. */
int input_truncated(const input_file *in, unsigned long long bytes, const type_info *type);

/* Reads up to `max_items` raw items; *n is how many. */
int read_binary_chunk(input_file *in, const type_info *type, void *items, size_t max_items,
                      size_t *n);

/* Reads up to `max_items` lines of text, one number each; *n is how many. */
int read_text_chunk(input_file *in, const type_info *type, void *items, size_t max_items,
                    size_t *n);

/* ---- The output ---- */

typedef struct output_file {
    FILE *f;
    const char *path; /* NULL: standard output */
    char temp_path[4096];
    mode_t mode;
} output_file;

/* Opens the temporary file for `path` ('-': an unnamed one for standard output). */
int output_open(output_file *out, const char *path);

/* Removes the temporary file. */
void output_discard(output_file *out);

/* Completes the output: renames the temporary file into place, or copies it to stdout. */
int output_commit(output_file *out);

/* Makes SIGINT, SIGTERM and SIGHUP remove the temporary file of the output being written
 * before they end the program. */
void output_remove_on_signals(void);

#endif /* DLSCAN_CLI_FILES_H */
