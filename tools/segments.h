/*
 * segments.h: the segments of `dlscan scan --keys` and `--offsets` (segments.c): the key
 * file or the offset file, read alongside the values, chunk by chunk, and where each chunk's
 * segments start. Every function that can fail returns an exit status (cli.h) after printing
 * why.
 *
 * A chunk of m items is split where scan.c can scan it with the library's calls and carry
 * the running total of a segment that crosses chunk edges (dlscan_scan takes no d_init or
 * d_total with segments):
 *
 *     [0, begin)              in no segment (offsets only): the input, converted
 *     [begin, first_head)     the end of the segment the chunk before ended in: a scan
 *                             without segments from the carry, into the carry
 *     [first_head, last_head) whole segments: one segmented scan
 *     [last_head, end)        the last segment's start: a scan without segments from the
 *                             init, into the carry (the next chunk may go on with it)
 *     [end, m)                in no segment (offsets only): the input, converted
 *
 * Any of them may be empty. A scan without segments is one segment over every item: its
 * first chunk is [last_head, end) = [0, m), each later one [begin, first_head) = [0, m). So
 * a chunk is never grown nor cut short, and a segment of any length streams through.
 */
#ifndef DLSCAN_CLI_SEGMENTS_H
#define DLSCAN_CLI_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "files.h"
#include "values.h"

typedef enum segment_kind { SEGMENTS_NONE, SEGMENTS_KEYS, SEGMENTS_OFFSETS } segment_kind;

/* A chunk's items, in the order above. */
typedef struct chunk_segments {
    size_t begin, first_head, last_head, end;
    /* offsets: the segmented scan's num_segments + 1 offsets, relative to first_head, in the
     * buffer that segments_next_chunk was given; empty segments are left out */
    size_t num_segments;
} chunk_segments;

/* The key file or the offset file, and where the chunks have got to. */
typedef struct segment_input {
    segment_kind kind;
    const type_info *key_type; /* keys: --key-type; offsets: uint64 */
    int text;
    input_file file;
    const char *values_name;         /* IN, for messages */
    long long value_count;           /* IN's values where its size tells them, else -1 */
    unsigned long long base;         /* the items of the chunks before */
    unsigned char last_key[8];       /* keys: the chunk before's last key */
    uint64_t *ahead;                 /* offsets: read ahead, `ahead_count` of them, of */
    size_t ahead_count, ahead_next;  /* which the chunks took those before `ahead_next` */
    unsigned long long offsets_read; /* offsets: how many were read */
    uint64_t first, previous;        /* offsets: offsets[0], and the last one read */
    int ended;                       /* offsets: the file has none left */
} segment_input;

/* Opens `path` ('-': standard input) of `kind` (SEGMENTS_NONE: nothing to open) for the
 * values of `in`, of `value_type`. Checks what the sizes of binary files tell before any
 * work: a truncated file, a key file that has fewer or more keys than IN has values. */
int segments_open(segment_input *s, segment_kind kind, const char *path,
                  const type_info *key_type, int text, const input_file *in,
                  const type_info *value_type);
void segments_close(segment_input *s);

/* The next chunk of `m` values (m > 0): reads its m keys into `buffer` (m keys of key_type),
 * or the offsets that fall within it (as size_t: room for m + 1), and splits it. Without
 * segments: one segment over every item. */
int segments_next_chunk(segment_input *s, size_t m, void *buffer, chunk_segments *c);

/* After the last chunk (`n` values in all): no keys are left over, and the offsets left
 * are at most n. */
int segments_finish(segment_input *s, unsigned long long n);

#endif /* DLSCAN_CLI_SEGMENTS_H */
