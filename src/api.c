/*
 * api.c: the public entry points. Each checks its arguments, in the order the header
 * documents, before anything is written or enqueued, then hands over to the handle's
 * backend (gpu_backend.c or cpu_backend.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testing.h"

static dlscan_handle_t dl_handle_new(void)
{
    dlscan_handle_t h = calloc(1, sizeof *h);
    if (h)
        h->persistent = 1; /* DLSCAN_OPTION_DETERMINISTIC starts at 0 */
    return h;
}

dlscan_status dlscan_create(dlscan_handle_t *h)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_ARGUMENT;
    *h = NULL;
    dlscan_handle_t handle = dl_handle_new();
    if (!handle)
        return DLSCAN_ERROR_OUT_OF_MEMORY;
    const dlscan_status status = dl_gpu_backend_init(handle);
    if (status != DLSCAN_SUCCESS) {
        free(handle);
        return status;
    }
    *h = handle;
    return DLSCAN_SUCCESS;
}

dlscan_status dlscan_create_cpu(dlscan_handle_t *h, int threads)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_ARGUMENT;
    *h = NULL;
    if (threads < 0 || threads > 4096)
        return DLSCAN_ERROR_INVALID_ARGUMENT;
    dlscan_handle_t handle = dl_handle_new();
    if (!handle)
        return DLSCAN_ERROR_OUT_OF_MEMORY;
    const dlscan_status status = dl_cpu_backend_init(handle, threads);
    if (status != DLSCAN_SUCCESS) {
        free(handle);
        return status;
    }
    *h = handle;
    return DLSCAN_SUCCESS;
}

void dlscan_destroy(dlscan_handle_t h)
{
    if (!h)
        return;
    h->backend->destroy(h);
    free(h);
}

const char *dlscan_backend_name(dlscan_handle_t h) { return h ? h->backend->name : "invalid"; }

/* One pointer argument: not NULL, aligned to `size`, and `bytes` of memory the backend scans. */
static dlscan_status dl_check_buffer(dlscan_handle_t h, const void *p, size_t size, size_t bytes,
                                     const char *what)
{
    const dlscan_status status = dl_check_pointer(h, p, size, what);
    return status != DLSCAN_SUCCESS ? status : h->backend->check_range(h, p, bytes, what);
}

static dlscan_status dl_overlap(dlscan_handle_t h, const char *a_name, const void *a, size_t a_bytes,
                                const char *b_name, const void *b, size_t b_bytes)
{
    return dl_fail(h, DLSCAN_ERROR_OVERLAP, "%s = %p (%zu bytes) and %s = %p (%zu bytes) overlap",
                   a_name, a, a_bytes, b_name, b, b_bytes);
}

/* The arguments of a dlscan_scan_args of args->size bytes in *a: args itself, or `copy` with
 * the fields the caller lacks at their defaults. Fails where the size is not one this library
 * takes. */
static dlscan_status dl_scan_args(dlscan_handle_t h, const dlscan_scan_args *args,
                                  dlscan_scan_args *copy, const dlscan_scan_args **a)
{
    const size_t ours = sizeof *copy;
    if (args->size < DLSCAN_SCAN_ARGS_SIZE_V1)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "args->size = %zu is less than the first version's %zu: start from "
                       "DLSCAN_SCAN_ARGS_INIT",
                       args->size, (size_t)DLSCAN_SCAN_ARGS_SIZE_V1);
    if (args->size != DLSCAN_SCAN_ARGS_SIZE_V1 && args->size != DLSCAN_SCAN_ARGS_SIZE_V2 &&
        args->size < ours)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "args->size = %zu is no version's size (%zu or %zu, or more than this "
                       "library's %zu): start from DLSCAN_SCAN_ARGS_INIT",
                       args->size, (size_t)DLSCAN_SCAN_ARGS_SIZE_V1,
                       (size_t)DLSCAN_SCAN_ARGS_SIZE_V2, ours);
    if (args->size >= ours) { /* a later header's struct: its new fields must be unset */
        const unsigned char *tail = (const unsigned char *)args + ours;
        for (size_t i = 0; i < args->size - ours; ++i)
            if (tail[i])
                return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                               "args->size = %zu: byte %zu is set, in a field this library (%zu "
                               "bytes of dlscan_scan_args) does not know",
                               args->size, ours + i, ours);
        *a = args;
        return DLSCAN_SUCCESS;
    }
    const dlscan_scan_args defaults = DLSCAN_SCAN_ARGS_INIT;
    *copy = defaults;
    memcpy(copy, args, args->size);
    copy->size = ours;
    *a = copy;
    return DLSCAN_SUCCESS;
}

/* A segmented scan's arguments that need no memory: a valid key type (with or without keys),
 * one source of segments, no device init or total, a count of offsets that fits in memory. */
static dlscan_status dl_check_segments(dlscan_handle_t h, const dlscan_scan_args *a)
{
    const dlscan_status status = dl_check_type(h, a->key_type);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (a->d_keys && a->d_offsets)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "d_keys and d_offsets are both set: segments come from one or the other");
    if (!a->d_offsets && a->num_segments)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "num_segments = %zu without d_offsets", a->num_segments);
    if (!a->d_keys && !a->d_offsets)
        return DLSCAN_SUCCESS;
    if (a->d_init || a->d_total)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "%s is set with %s: a segmented scan takes its init from the host (init) "
                       "and leaves no total",
                       a->d_init ? "d_init" : "d_total", a->d_keys ? "d_keys" : "d_offsets");
    if (a->d_keys)
        return DLSCAN_SUCCESS;
    if (a->num_segments >= SIZE_MAX / sizeof(size_t))
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "num_segments = %zu: its offsets do not fit in memory", a->num_segments);
    return DLSCAN_SUCCESS;
}

/* The keys (n of them) or the offsets (num_segments + 1): pointer and alignment, overlaps with
 * the values in and out (before the allocation's bounds: a key range inside d_in is an overlap
 * wherever it ends), then the bounds. The offsets may share memory with d_in, which is only
 * read, but not with d_out. */
static dlscan_status dl_check_segment_buffers(dlscan_handle_t h, const dlscan_scan_args *a,
                                              size_t in_bytes, size_t out_bytes)
{
    dlscan_status status;
    if (a->d_keys) {
        const size_t key_size = dl_type_size(a->key_type), key_bytes = a->n * key_size;
        if (a->n == 0)
            return DLSCAN_SUCCESS;
        if ((status = dl_check_pointer(h, a->d_keys, key_size, "d_keys")) != DLSCAN_SUCCESS)
            return status;
        if (dl_ranges_overlap(a->d_keys, key_bytes, a->d_in, in_bytes))
            return dl_overlap(h, "d_keys", a->d_keys, key_bytes, "d_in", a->d_in, in_bytes);
        if (dl_ranges_overlap(a->d_keys, key_bytes, a->d_out, out_bytes))
            return dl_overlap(h, "d_keys", a->d_keys, key_bytes, "d_out", a->d_out, out_bytes);
        return h->backend->check_range(h, a->d_keys, key_bytes, "d_keys");
    }
    const size_t offset_bytes = (a->num_segments + 1) * sizeof(size_t);
    if ((status = dl_check_pointer(h, a->d_offsets, sizeof(size_t), "d_offsets")) != DLSCAN_SUCCESS)
        return status;
    if (a->n > 0 && dl_ranges_overlap(a->d_offsets, offset_bytes, a->d_out, out_bytes))
        return dl_overlap(h, "d_offsets", a->d_offsets, offset_bytes, "d_out", a->d_out, out_bytes);
    return h->backend->check_range(h, a->d_offsets, offset_bytes, "d_offsets");
}

dlscan_status dlscan_scan(dlscan_handle_t h, const dlscan_scan_args *args, cudaStream_t stream)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    if (!args)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "args is NULL");
    dlscan_scan_args copy;
    const dlscan_scan_args *a = NULL;
    dlscan_status status = dl_scan_args(h, args, &copy, &a);
    if (status != DLSCAN_SUCCESS)
        return status;
    if ((status = dl_check_type(h, a->in_type)) != DLSCAN_SUCCESS ||
        (status = dl_check_type(h, a->out_type)) != DLSCAN_SUCCESS)
        return status;
    if (!dl_op_valid(a->op))
        return dl_fail(h, DLSCAN_ERROR_INVALID_OP,
                       "op = %d is not a dlscan_op (DLSCAN_SUM = 0, DLSCAN_MIN = 1, DLSCAN_MAX = 2)",
                       (int)a->op);
    if (!dl_pair_valid(a->in_type, a->out_type))
        return dl_fail(h, DLSCAN_ERROR_TYPE_PAIR,
                       "%s items into %s: not a pair dlscan scans (dlscan.h, dlscan_scan, lists them)",
                       dl_type_name(a->in_type), dl_type_name(a->out_type));
    if (a->exclusive != 0 && a->exclusive != 1)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "exclusive = %d is not 0 or 1", a->exclusive);
    if (a->init && a->d_init)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "init and d_init are both set: give the init one way");
    const int segmented = a->d_keys || a->d_offsets;
    if ((status = dl_check_segments(h, a)) != DLSCAN_SUCCESS)
        return status;

    const dlscan_type in_type = a->in_type, type = a->out_type, acc = dl_acc_type(type);
    const size_t in_size = dl_type_size(in_type), size = dl_type_size(type), n = a->n;
    const size_t tile =
        segmented ? h->backend->segment_tile_items(h, acc) : h->backend->tile_items(h, acc);
    if ((status = dl_check_count(h, n, type, tile)) != DLSCAN_SUCCESS)
        return status;
    const size_t in_bytes = n * in_size, bytes = n * size;
    if (n > 0) {
        if ((status = dl_check_pointer(h, a->d_in, in_size, "d_in")) != DLSCAN_SUCCESS ||
            (status = dl_check_pointer(h, a->d_out, size, "d_out")) != DLSCAN_SUCCESS)
            return status;
        if (a->d_in == a->d_out && in_size != size)
            return dl_fail(h, DLSCAN_ERROR_OVERLAP,
                           "d_in == d_out = %p: a scan in place needs types of one size, and %s "
                           "items are %zu bytes, %s items %zu",
                           a->d_in, dl_type_name(in_type), in_size, dl_type_name(type), size);
        if (a->d_in != a->d_out && dl_ranges_overlap(a->d_in, in_bytes, a->d_out, bytes))
            return dl_fail(h, DLSCAN_ERROR_OVERLAP,
                           "d_in = %p (%zu bytes) and d_out = %p (%zu bytes) overlap; pass d_out == "
                           "d_in to scan in place",
                           a->d_in, in_bytes, a->d_out, bytes);
        if ((status = h->backend->check_range(h, a->d_in, in_bytes, "d_in")) != DLSCAN_SUCCESS ||
            (a->d_out != a->d_in &&
             (status = h->backend->check_range(h, a->d_out, bytes, "d_out")) != DLSCAN_SUCCESS))
            return status;
    }
    if (segmented && (status = dl_check_segment_buffers(h, a, in_bytes, bytes)) != DLSCAN_SUCCESS)
        return status;
    if (a->d_init) {
        if ((status = dl_check_buffer(h, a->d_init, size, size, "d_init")) != DLSCAN_SUCCESS)
            return status;
        if (n > 0 && dl_ranges_overlap(a->d_init, size, a->d_out, bytes))
            return dl_overlap(h, "d_init", a->d_init, size, "d_out", a->d_out, bytes);
    }
    if (a->d_total) {
        if ((status = dl_check_buffer(h, a->d_total, size, size, "d_total")) != DLSCAN_SUCCESS)
            return status;
        if (n > 0 && dl_ranges_overlap(a->d_total, size, a->d_in, in_bytes))
            return dl_overlap(h, "d_total", a->d_total, size, "d_in", a->d_in, in_bytes);
        if (n > 0 && dl_ranges_overlap(a->d_total, size, a->d_out, bytes))
            return dl_overlap(h, "d_total", a->d_total, size, "d_out", a->d_out, bytes);
        if (a->d_init && a->d_init != a->d_total &&
            dl_ranges_overlap(a->d_total, size, a->d_init, size))
            return dl_overlap(h, "d_total", a->d_total, size, "d_init", a->d_init, size);
    }
    if (n == 0 && !a->d_total && !a->d_offsets)
        return DLSCAN_SUCCESS; /* (a CPU handle still checks the offsets' values) */
    if (n > 0 && (status = h->backend->reserve(h, dl_tiles(n, tile), dl_words_per_tile(type),
                                                stream)) != DLSCAN_SUCCESS)
        return status;

    const uint64_t init_bits = a->init ? dl_bits_read(a->init, type) : dl_identity_bits(type, a->op);
    const dl_scan_request request = {
        .in = a->d_in,
        .out = a->d_out,
        .n = n,
        .in_type = in_type,
        .type = type,
        .acc_type = acc,
        .op = a->op,
        .exclusive = a->exclusive,
        .init_bits = init_bits,
        .init = a->d_init,
        .total = a->d_total,
        .keys = a->d_keys,
        .key_size = a->d_keys ? dl_type_size(a->key_type) : 0,
        .offsets = a->d_offsets,
        .num_segments = a->num_segments,
        .stream = stream,
    };
    return h->backend->scan(h, &request);
}

/* The arguments of the two calls that scan a type into itself. */
static dlscan_scan_args dl_same_type_args(const void *d_in, void *d_out, size_t n, dlscan_type type,
                                          dlscan_op op, int exclusive, const void *init)
{
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_out = d_out;
    a.n = n;
    a.in_type = a.out_type = type;
    a.op = op;
    a.exclusive = exclusive;
    a.init = init;
    return a;
}

dlscan_status dlscan_inclusive_scan(dlscan_handle_t h, const void *d_in, void *d_out, size_t n,
                                    dlscan_type type, dlscan_op op, cudaStream_t stream)
{
    const dlscan_scan_args a = dl_same_type_args(d_in, d_out, n, type, op, 0, NULL);
    return dlscan_scan(h, &a, stream);
}

dlscan_status dlscan_exclusive_scan(dlscan_handle_t h, const void *d_in, void *d_out, size_t n,
                                    dlscan_type type, dlscan_op op, const void *init,
                                    cudaStream_t stream)
{
    const dlscan_scan_args a = dl_same_type_args(d_in, d_out, n, type, op, 1, init);
    return dlscan_scan(h, &a, stream);
}

dlscan_status dlscan_reserve(dlscan_handle_t h, size_t n, dlscan_type type)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dlscan_status status = dl_check_type(h, type);
    if (status != DLSCAN_SUCCESS)
        return status;
    /* Segmented scans take tiles of their own (on a GPU, smaller ones): the smaller tile. */
    const size_t scan_tile = h->backend->tile_items(h, dl_acc_type(type));
    const size_t segment_tile = h->backend->segment_tile_items(h, dl_acc_type(type));
    const size_t tile = segment_tile < scan_tile ? segment_tile : scan_tile;
    if ((status = dl_check_count(h, n, type, tile)) != DLSCAN_SUCCESS || n == 0)
        return status;
    return h->backend->reserve(h, dl_tiles(n, tile), dl_words_per_tile(type), NULL);
}

dlscan_status dlscan_tile_items(dlscan_handle_t h, dlscan_type type, size_t *items)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    const dlscan_status status = dl_check_type(h, type);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (!items)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "items is NULL");
    *items = h->backend->tile_items(h, dl_acc_type(type));
    return DLSCAN_SUCCESS;
}

static dlscan_status dl_check_flag(dlscan_handle_t h, const char *name, long long value)
{
    if (value != 0 && value != 1)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "%s takes 0 or 1, not %lld", name, value);
    return DLSCAN_SUCCESS;
}

/* The release library's answer to the testing build's options (testing.h). */
static dlscan_status dl_testing_only(dlscan_handle_t h, int option)
{
    return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                   "option %d is a testing option: only the testing build of dlscan takes it",
                   option);
}

static dlscan_status dl_set_testing_option(dlscan_handle_t h, int option, long long value)
{
    if (!DL_PROBING)
        return dl_testing_only(h, option);
    switch (option) {
    case DLSCAN_TESTING_OPTION_DELAY_US:
        if (value < 0 || value > 1000000)
            return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                           "DLSCAN_TESTING_OPTION_DELAY_US takes 0 .. 1000000, not %lld", value);
        h->test_delay_us = value;
        return h->backend->set_probe ? h->backend->set_probe(h) : DLSCAN_SUCCESS;
    case DLSCAN_TESTING_OPTION_EPOCH:
        if (!dl_epoch_valid(value))
            return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                           "DLSCAN_TESTING_OPTION_EPOCH takes %u .. %u, not %lld", DL_EPOCH_FIRST,
                           DL_EPOCH_LAST, value);
        return h->backend->set_epoch(h, (uint32_t)value);
    default: /* DLSCAN_TESTING_OPTION_TICKET_BASE */
        if (value < 0 || value > 0xffffffffll)
            return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                           "DLSCAN_TESTING_OPTION_TICKET_BASE takes 0 .. 2^32 - 1, not %lld", value);
        return h->backend->set_ticket_base(h, (uint32_t)value);
    }
}

dlscan_status dlscan_set_option(dlscan_handle_t h, dlscan_option option, long long value)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dlscan_status status;
    switch ((int)option) {
    case DLSCAN_OPTION_DETERMINISTIC:
        if ((status = dl_check_flag(h, "DLSCAN_OPTION_DETERMINISTIC", value)) == DLSCAN_SUCCESS)
            h->deterministic = (int)value;
        return status;
    case DLSCAN_OPTION_LOOKBACK_STATS:
        if ((status = dl_check_flag(h, "DLSCAN_OPTION_LOOKBACK_STATS", value)) != DLSCAN_SUCCESS)
            return status;
        if (value && !DL_PROBING)
            return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                           "DLSCAN_OPTION_LOOKBACK_STATS: this library's kernels carry no counters; "
                           "only the testing build of dlscan counts look-back events");
        h->count_stats = (int)value;
        return h->backend->set_probe ? h->backend->set_probe(h) : DLSCAN_SUCCESS;
    case DLSCAN_OPTION_PERSISTENT:
        if (value == DLSCAN_TESTING_PERSISTENT_ALWAYS && DL_PROBING) {
            h->persistent = (int)value;
            return DLSCAN_SUCCESS;
        }
        if ((status = dl_check_flag(h, "DLSCAN_OPTION_PERSISTENT", value)) == DLSCAN_SUCCESS)
            h->persistent = (int)value;
        return status;
    case DLSCAN_OPTION_CPU_TILE_ITEMS:
        if (!h->backend->set_tile_items)
            return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                           "DLSCAN_OPTION_CPU_TILE_ITEMS is for CPU handles only");
        if (value < 16 || value > (1ll << 20))
            return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                           "DLSCAN_OPTION_CPU_TILE_ITEMS takes 16 .. 2^20, not %lld", value);
        return h->backend->set_tile_items(h, (size_t)value);
    case DLSCAN_TESTING_OPTION_DELAY_US:
    case DLSCAN_TESTING_OPTION_EPOCH:
    case DLSCAN_TESTING_OPTION_TICKET_BASE:
        return dl_set_testing_option(h, (int)option, value);
    }
    return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "option = %d is not a dlscan_option",
                   (int)option);
}

dlscan_status dlscan_get_option(dlscan_handle_t h, dlscan_option option, long long *value)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    if (!value)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "value is NULL");
    switch ((int)option) {
    case DLSCAN_OPTION_DETERMINISTIC: *value = h->deterministic; return DLSCAN_SUCCESS;
    case DLSCAN_OPTION_LOOKBACK_STATS: *value = h->count_stats; return DLSCAN_SUCCESS;
    case DLSCAN_OPTION_PERSISTENT: *value = h->persistent; return DLSCAN_SUCCESS;
    case DLSCAN_OPTION_CPU_TILE_ITEMS:
        if (!h->backend->set_tile_items)
            return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                           "DLSCAN_OPTION_CPU_TILE_ITEMS is for CPU handles only");
        *value = (long long)h->backend->compact_tile_items(h);
        return DLSCAN_SUCCESS;
    case DLSCAN_TESTING_OPTION_DELAY_US:
        if (!DL_PROBING)
            return dl_testing_only(h, (int)option);
        *value = h->test_delay_us;
        return DLSCAN_SUCCESS;
    case DLSCAN_TESTING_OPTION_EPOCH:
    case DLSCAN_TESTING_OPTION_TICKET_BASE:
        if (!DL_PROBING)
            return dl_testing_only(h, (int)option);
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED, "option %d can only be set", (int)option);
    }
    return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "option = %d is not a dlscan_option",
                   (int)option);
}

dlscan_status dlscan_get_lookback_stats(dlscan_handle_t h, dlscan_lookback_stats *stats)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    if (!stats)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "stats is NULL");
    unsigned long long counts[DL_STAT_COUNT];
    const dlscan_status status = h->backend->read_stats(h, counts);
    if (status != DLSCAN_SUCCESS)
        return status;
    stats->lookbacks = counts[DL_STAT_LOOKBACKS];
    stats->waits_on_x = counts[DL_STAT_WAITS_ON_X];
    stats->aggregates_folded = counts[DL_STAT_AGGREGATES_FOLDED];
    stats->stops_at_p = counts[DL_STAT_STOPS_AT_P];
    stats->windows_slid = counts[DL_STAT_WINDOWS_SLID];
    stats->waits_for_p = counts[DL_STAT_WAITS_FOR_P];
    return DLSCAN_SUCCESS;
}

dlscan_status dlscan_reset_lookback_stats(dlscan_handle_t h)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    return h->backend->reset_stats(h);
}
