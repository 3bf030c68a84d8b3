/*
 * compact.c: what the compaction commands share (compact.h): their options, and the stream
 * of chunks from IN through the library into OUT, on the GPU or the CPU backend, written as
 * scan writes (output.c).
 */
#include "compact.h"

#include <string.h>

int parse_compact_options(const char *command, int argc, char **argv, const char *const *own,
                          compact_options *o)
{
    memset(o, 0, sizeof *o);
    o->command = command;
    common_arguments common = {0};
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        int taken;
        const int status = take_common_argument(command, a, &common, &taken);
        if (status != STATUS_OK)
            return status;
        if (taken)
            continue;
        static const char *const with_value[] = {"--type", "--format", "--backend", "--threads",
                                                 "--chunk-items"};
        int known = 0, own_index = -1;
        for (int k = 0; k < 5; ++k)
            known |= strcmp(a, with_value[k]) == 0;
        for (int k = 0; own && own[k]; ++k)
            own_index = strcmp(a, own[k]) == 0 ? k : own_index;
        if (!known && own_index < 0)
            return fail(STATUS_BAD_INPUT, "%s: unknown option '%s'; see 'dlscan %s --help'",
                        command, a, command);
        if (i + 1 >= argc)
            return fail(STATUS_BAD_INPUT, "%s: %s needs a value", command, a);
        const char *value = argv[++i];
        const int stream_status = take_stream_option(command, a, value, &o->stream, &taken);
        if (stream_status != STATUS_OK)
            return stream_status;
        if (own_index >= 0)
            o->own[own_index] = value;
        else if (!taken && !(o->type = find_type(value))) /* --type */
            return fail(STATUS_BAD_INPUT, "%s: unknown type '%s' (" TYPE_NAMES ")", command,
                        value);
    }
    o->in_path = common.in_path, o->out_path = common.out_path, o->quiet = common.quiet;
    if (!o->type)
        return fail(STATUS_BAD_INPUT, "%s: missing --type (" TYPE_NAMES ")", command);
    if (!o->in_path)
        o->in_path = "-";
    if (o->out_path && strcmp(o->out_path, "-") == 0)
        o->out_path = NULL;
    return STATUS_OK;
}

int compact_open(compact_stream *s, const compact_options *o, size_t extra_size)
{
    memset(s, 0, sizeof *s);
    s->o = o;
    char activity[64];
    snprintf(activity, sizeof activity, "running %s on the CPU backend", o->command);
    int status = input_open(&s->in, o->in_path);
    s->in.refuse_text = !o->stream.format_given;
    if (status != STATUS_OK || (status = output_open(&s->out, o->out_path)) != STATUS_OK ||
        (!o->stream.text && (status = output_refuse_terminal(&s->out)) != STATUS_OK) ||
        (status = open_handle(o->stream.backend, o->stream.threads, o->quiet, activity, &s->h,
                              &s->on_gpu)) != STATUS_OK)
        return status;
    /* of the wider of an item and its extra bytes; three device buffers, twice over */
    const size_t wider = o->type->size > extra_size ? o->type->size : extra_size;
    s->chunk = chunk_items_for(&o->stream, &s->in, o->type->size, wider, 6, s->on_gpu);
    progress_start(&s->bar, o->quiet);
    if ((status = chunk_memory_alloc(&s->m, s->on_gpu, s->chunk, o->type->size, o->type->size,
                                     s->chunk * extra_size)) != STATUS_OK)
        return status;
    /* Whether the library compacts the type (the same types for every call): a call of no
     * items says, before any input is read. */
    const dlscan_status called = dlscan_unique(s->h, chunk_working(&s->m, CHUNK_IN),
                                               chunk_working(&s->m, CHUNK_OUT), s->m.carry, 0,
                                               o->type->type, NULL);
    if (called == DLSCAN_ERROR_INVALID_TYPE)
        return fail(STATUS_BAD_INPUT, "%s: %s", o->command, dlscan_last_error(s->h));
    return called == DLSCAN_SUCCESS ? STATUS_OK : compact_call_failed(s, "dlscan_unique");
}

int compact_next(compact_stream *s, size_t *n)
{
    *n = 0;
    if (s->ended)
        return STATUS_OK;
    int status = read_chunk(&s->in, s->o->type, s->o->stream.text, s->m.host_in, s->chunk, n);
    /* a short read is the end of a binary input; text ends with a chunk of nothing */
    s->ended = *n == 0 || (!s->o->stream.text && *n < s->chunk);
    if (status == STATUS_OK)
        status = chunk_copy(&s->m, CHUNK_IN, 1, *n * s->o->type->size);
    progress_update(&s->bar, s->in.consumed, s->in.size, 0);
    return status;
}

int compact_fetch(compact_stream *s, size_t *count, size_t extra_size)
{
    int status = chunk_carry(&s->m, count, sizeof *count);
    if (status == STATUS_OK)
        status = chunk_copy(&s->m, CHUNK_OUT, 0, *count * s->o->type->size);
    if (status == STATUS_OK)
        status = chunk_copy(&s->m, CHUNK_EXTRA, 0, *count * extra_size);
    return status;
}

int compact_call_failed(const compact_stream *s, const char *call)
{
    return fail(STATUS_FAILED, "%s failed: %s", call, dlscan_last_error(s->h));
}

int compact_close(compact_stream *s, int status)
{
    progress_update(&s->bar, s->in.consumed, s->in.size, 1);
    if (status == STATUS_OK)
        status = output_commit(&s->out);
    if (status != STATUS_OK)
        output_discard(&s->out);
    chunk_memory_free(&s->m);
    dlscan_destroy(s->h);
    input_close(&s->in);
    return status;
}
