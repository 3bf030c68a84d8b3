/*
 * segments.c: the segments of `dlscan scan --keys` and `--offsets` (segments.h): the key
 * file or the offset file, read chunk by chunk next to the values, checked, and each chunk
 * split where its segments start.
 *
 * Keys: a segment is a run of equal keys, compared bit for bit (as the library compares
 * them); a chunk's first key equal to the last key of the chunk before goes on with its
 * segment. Offsets: read ahead in blocks, each checked as it is read (it may not fall, nor
 * pass the number of values where the size of a binary IN tells it; the offsets left at
 * the end, where only the end tells it). Offsets within a chunk become the segmented scan's
 * offsets, relative to its first item, without repeats: an empty segment writes nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "segments.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define OFFSETS_AHEAD 4096 /* offsets read at once */

/* ---------------------------------------------------------------- reading and checking */

/* Keys or offsets in a binary file of known size: `*count` of them, after checking that the
 * size is a whole number of them. *count is -1 where the size is unknown. */
static int binary_count(const segment_input *s, long long *count)
{
    *count = -1;
    if (s->text || s->file.size < 0)
        return STATUS_OK;
    if (s->file.size % (long long)s->key_type->size)
        return input_truncated(&s->file, (unsigned long long)s->file.size, s->key_type);
    *count = s->file.size / (long long)s->key_type->size;
    return STATUS_OK;
}

/* The next offset, not yet taken (*have: 0 at the end of the file), read and checked. */
static int peek_offset(segment_input *s, uint64_t *offset, int *have)
{
    if (s->ahead_next == s->ahead_count && !s->ended) {
        size_t got;
        const int status =
            read_chunk(&s->file, s->key_type, s->text, s->ahead, OFFSETS_AHEAD, &got);
        if (status != STATUS_OK)
            return status;
        s->ahead_count = got;
        s->ahead_next = 0;
        s->ended = got == 0;
        for (size_t k = 0; k < got; ++k, ++s->offsets_read) {
            const uint64_t v = s->ahead[k];
            if (s->offsets_read > 0 && v < s->previous)
                return fail(STATUS_BAD_INPUT, "scan: %s: offsets[%llu] = %llu is less than "
                                              "offsets[%llu] = %llu; offsets may not fall",
                            s->file.name, s->offsets_read, (unsigned long long)v,
                            s->offsets_read - 1, (unsigned long long)s->previous);
            if (s->value_count >= 0 && v > (unsigned long long)s->value_count)
                return fail(STATUS_BAD_INPUT, "scan: %s: offsets[%llu] = %llu is past the end of "
                                              "%s (%lld values)",
                            s->file.name, s->offsets_read, (unsigned long long)v, s->values_name,
                            s->value_count);
            s->previous = v;
        }
    }
    *have = s->ahead_next < s->ahead_count;
    *offset = *have ? s->ahead[s->ahead_next] : 0;
    return STATUS_OK;
}

int segments_open(segment_input *s, segment_kind kind, const char *path,
                  const type_info *key_type, int text, const input_file *in,
                  const type_info *value_type)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    if (kind == SEGMENTS_NONE)
        return STATUS_OK;
    s->key_type = kind == SEGMENTS_KEYS ? key_type : find_type("uint64");
    s->text = text;
    s->values_name = in->name;
    /* The number of values where the size of a binary IN tells it (scan.c has checked that
     * it is a whole number of them). */
    s->value_count = !text && in->size >= 0 ? in->size / (long long)value_type->size : -1;
    long long count;
    int status = input_open(&s->file, path);
    if (status != STATUS_OK || (status = binary_count(s, &count)) != STATUS_OK)
        return status;
    if (kind == SEGMENTS_KEYS) {
        if (count >= 0 && s->value_count >= 0 && count != s->value_count)
            return fail(STATUS_BAD_INPUT, "scan: %s has %lld keys, %s the %lld values in %s "
                                          "(one key per value)",
                        s->file.name, count, count < s->value_count ? "fewer than" : "more than",
                        s->value_count, s->values_name);
        return STATUS_OK;
    }
    if (!(s->ahead = malloc(OFFSETS_AHEAD * sizeof *s->ahead)))
        return fail(STATUS_FAILED, "out of memory");
    int have;
    if ((status = peek_offset(s, &s->first, &have)) != STATUS_OK)
        return status;
    if (!have)
        return fail(STATUS_BAD_INPUT, "scan: %s has no offsets; it needs num_segments + 1 of "
                                      "them, at least one",
                    s->file.name);
    return STATUS_OK;
}

void segments_close(segment_input *s)
{
    input_close(&s->file);
    free(s->ahead);
    s->ahead = NULL;
}

/* ---------------------------------------------------------------- offsets */

/* The offsets in the chunk [base, base + m) become `heads`, relative to base, without
 * repeats; the chunk is split around them. */
static int offsets_chunk(segment_input *s, size_t m, size_t *heads, chunk_segments *c)
{
    const uint64_t base = s->base, chunk_end = base + m;
    size_t count = 0;
    uint64_t v = 0;
    int have = 0, status;
    while ((status = peek_offset(s, &v, &have)) == STATUS_OK && have && v < chunk_end) {
        ++s->ahead_next; /* v >= base: the chunks before took every offset below it */
        const size_t local = (size_t)(v - base);
        if (count == 0 || heads[count - 1] != local)
            heads[count++] = local;
    }
    if (status != STATUS_OK)
        return status;
    /* Items before offsets[0] and, once the file has ended, from its last offset on are in
     * no segment. That last offset, where it falls in this chunk, is the last of `heads`:
     * last_head = end, and the last segment is the segmented scan's. */
    c->begin = s->first <= base ? 0 : s->first - base < m ? (size_t)(s->first - base) : m;
    c->end = m;
    if (!have)
        c->end = s->previous <= base       ? 0
                 : s->previous - base < m ? (size_t)(s->previous - base)
                                          : m;
    if (count == 0) { /* the segment of the chunk before goes on to the end, or none is here */
        c->first_head = c->last_head = c->end;
        c->num_segments = 0;
        return STATUS_OK;
    }
    c->first_head = heads[0];
    c->last_head = heads[count - 1];
    for (size_t k = 0; k < count; ++k)
        heads[k] -= c->first_head;
    c->num_segments = count - 1;
    return STATUS_OK;
}

/* ---------------------------------------------------------------- keys */

/* The chunk's m keys into `keys`; its segments start where a key differs from the one
 * before. */
static int keys_chunk(segment_input *s, size_t m, unsigned char *keys, chunk_segments *c)
{
    const size_t size = s->key_type->size;
    size_t got;
    const int status = read_chunk(&s->file, s->key_type, s->text, keys, m, &got);
    if (status != STATUS_OK)
        return status;
    if (got < m)
        return fail(STATUS_BAD_INPUT, "scan: %s has %llu keys, fewer than the values in %s "
                                      "(one key per value)",
                    s->file.name, s->base + got, s->values_name);
#define SAME_KEY(i, j) (memcmp(keys + (i) * size, keys + (j) * size, size) == 0)
    size_t first = 0, last;
    if (s->base > 0 && memcmp(keys, s->last_key, size) == 0) /* the segment goes on */
        for (first = 1; first < m && SAME_KEY(first, first - 1);)
            ++first;
    for (last = m - 1; last > first && SAME_KEY(last, last - 1);)
        --last;
#undef SAME_KEY
    c->begin = 0;
    c->end = m;
    c->first_head = first;
    c->last_head = first < m ? last : m;
    c->num_segments = 0;
    memcpy(s->last_key, keys + (m - 1) * size, size);
    return STATUS_OK;
}

/* ---------------------------------------------------------------- the chunks */

int segments_next_chunk(segment_input *s, size_t m, void *buffer, chunk_segments *c)
{
    int status = STATUS_OK;
    memset(c, 0, sizeof *c);
    if (s->kind == SEGMENTS_KEYS) {
        status = keys_chunk(s, m, buffer, c);
    } else if (s->kind == SEGMENTS_OFFSETS) {
        status = offsets_chunk(s, m, buffer, c);
    } else { /* one segment: it starts in the first chunk and goes on in every other */
        c->end = m;
        c->first_head = c->last_head = s->base == 0 ? 0 : m;
    }
    s->base += m;
    return status;
}

int segments_finish(segment_input *s, unsigned long long n)
{
    if (s->kind == SEGMENTS_KEYS) {
        scan_value key;
        size_t got;
        const int status = read_chunk(&s->file, s->key_type, s->text, &key, 1, &got);
        if (status != STATUS_OK)
            return status;
        if (got > 0)
            return fail(STATUS_BAD_INPUT, "scan: %s has more keys than the %llu values in %s "
                                          "(one key per value)",
                        s->file.name, n, s->values_name);
    } else if (s->kind == SEGMENTS_OFFSETS) {
        /* Those left rise from the last chunk's end, n: they must all be n. */
        s->value_count = (long long)n;
        uint64_t v = 0;
        int have = 0, status;
        while ((status = peek_offset(s, &v, &have)) == STATUS_OK && have) {
            if (v > n)
                return fail(STATUS_BAD_INPUT, "scan: %s: offsets[%llu] = %llu is past the end "
                                              "of %s (%llu values)",
                            s->file.name, s->offsets_read - (s->ahead_count - s->ahead_next),
                            (unsigned long long)v, s->values_name, n);
            ++s->ahead_next;
        }
        return status;
    }
    return STATUS_OK;
}
