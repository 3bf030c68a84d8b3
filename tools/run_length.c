/*
 * run_length.c: `dlscan run-length-encode`: the runs of equal items of IN (compared bit for
 * bit, as dlscan_run_length_encode compares them): each run's item into OUT and its length
 * (uint64) into --lengths LENFILE, both in --format, streamed chunk by chunk (compact.h).
 * What crosses a chunk's edge is the open run, the last of the chunk before: it is written
 * only once a chunk starts with another item, or at the end; a chunk that starts with its
 * item adds its first run's length to it.
 */
#include <string.h>

#include "compact.h"

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "run lengths are written as uint64");

/* The open run: an item and its length so far. */
typedef struct open_run {
    scan_value item;
    uint64_t length;
    int open;
} open_run;

/* Writes the open run, if any. */
static void write_run(compact_stream *s, output_file *lengths, const open_run *run)
{
    if (!run->open)
        return;
    output_values(&s->out, s->o->type, s->o->stream.text, &run->item, 1);
    output_values(lengths, find_type("uint64"), s->o->stream.text, &run->length, 1);
}

int cmd_run_length_encode(int argc, char **argv)
{
    static const char *const own[] = {"--lengths", NULL};
    compact_options o;
    int status = parse_compact_options("run-length-encode", argc, argv, own, &o);
    if (status != STATUS_OK)
        return status < 0 ? STATUS_OK : status;
    if (!o.own[0])
        return fail(STATUS_BAD_INPUT, "run-length-encode: missing --lengths LENFILE");
    if (strcmp(o.own[0], "-") == 0 && !o.out_path)
        return fail(STATUS_BAD_INPUT, "run-length-encode: OUT and --lengths cannot both be "
                                      "standard output");
    const size_t size = o.type->size;
    const char *lengths_path = strcmp(o.own[0], "-") != 0 ? o.own[0] : NULL;
    output_file lengths = {0};
    compact_stream s;
    status = compact_open(&s, &o, sizeof(size_t));
    if (status == STATUS_OK && (status = output_open(&lengths, lengths_path)) == STATUS_OK &&
        !o.stream.text)
        status = output_refuse_terminal(&lengths);
    open_run run = {{0}, 0, 0};
    size_t n, count;
    while (status == STATUS_OK && (status = compact_next(&s, &n)) == STATUS_OK && n > 0) {
        if (dlscan_run_length_encode(s.h, chunk_working(&s.m, CHUNK_IN),
                                     chunk_working(&s.m, CHUNK_OUT),
                                     chunk_working(&s.m, CHUNK_EXTRA), s.m.carry, n,
                                     o.type->type, NULL) != DLSCAN_SUCCESS) {
            status = compact_call_failed(&s, "dlscan_run_length_encode");
            break;
        }
        if ((status = compact_fetch(&s, &count, sizeof(size_t))) != STATUS_OK)
            break;
        const char *items = s.m.host_out;
        const size_t *run_lengths = s.m.host_extra;
        size_t first = 0;
        if (run.open && memcmp(items, &run.item, size) == 0) /* the open run goes on */
            run.length += run_lengths[first++];
        if (first < count) { /* it ends: the chunk's runs but its last, which stays open */
            write_run(&s, &lengths, &run);
            output_values(&s.out, o.type, o.stream.text, items + first * size, count - 1 - first);
            output_values(&lengths, find_type("uint64"), o.stream.text, run_lengths + first,
                          count - 1 - first);
            memcpy(&run.item, items + (count - 1) * size, size);
            run.length = run_lengths[count - 1];
            run.open = 1;
        }
        if ((status = output_chunk_done(&s.out)) == STATUS_OK)
            status = output_chunk_done(&lengths);
    }
    if (status == STATUS_OK) {
        write_run(&s, &lengths, &run);
        status = output_commit(&lengths);
    }
    if (status != STATUS_OK)
        output_discard(&lengths);
    return compact_close(&s, status);
}
