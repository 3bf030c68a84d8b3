/*
 * api.c: the public entry points. Each has its arguments checked (checks.c, in the order the
 * header documents) before anything is written or enqueued, then hands over to the handle's
 * backend (gpu_backend.c or cpu_backend.c).
 */
#include <stdlib.h>

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

dlscan_status dlscan_scan(dlscan_handle_t h, const dlscan_scan_args *args, cudaStream_t stream)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dl_scan_request r;
    const dlscan_status status = dl_check_scan(h, args, DL_CHECK_FOR_SCAN, stream, &r);
    return status != DLSCAN_SUCCESS ? status : dl_scan_run(h, &r);
}

/* Grows the handle's descriptors to what request r takes (its tiles, their descriptors each, the
 * words of its values), checking whether `stream` is being captured where they must grow; and
 * makes a GPU operator's program of rows, offsets, keys, columns or runs where r needs it and it has none yet. */
static dlscan_status dl_scan_reserve(dlscan_handle_t h, const dl_scan_request *r, cudaStream_t stream)
{
    if (r->n == 0)
        return DLSCAN_SUCCESS;
    const int program = r->custom ? DL_USER_PROGRAM(r->axis_length, r->axis_stride, r->offsets, r->keys,
                                                    r->num_runs, r->custom->state_bytes)
                                  : DL_USER_PROGRAM_ONE;
    if (r->custom && program != DL_USER_PROGRAM_ONE && r->custom->device_memory) {
        /* (an operator is const to its users; its later programs are made once, as a cache) */
        const dlscan_status status = dl_jit_build(h, (struct dlscan_operator *)r->custom, program);
        if (status != DLSCAN_SUCCESS)
            return status;
    }
    const int words = r->custom ? DL_DESCRIPTOR_WORDS((int)(DL_USER_VALUE(r->custom->state_bytes, DL_USER_LIFTED(program)) / 4))
                                : dl_words_per_tile(r->type);
    return h->backend->reserve(h, r->tiles * r->tile_descriptors, words, stream);
}

dlscan_status dl_scan_run(dlscan_handle_t h, const dl_scan_request *r)
{
    if (r->n == 0 && !r->total && !r->offsets && !r->num_runs)
        return DLSCAN_SUCCESS; /* (a CPU handle still checks the offsets' values) */
    const dlscan_status status = dl_scan_reserve(h, r, r->stream);
    return status != DLSCAN_SUCCESS ? status : h->backend->scan(h, r);
}

dlscan_status dlscan_reserve_scan(dlscan_handle_t h, const dlscan_scan_args *args)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dl_scan_request r;
    const dlscan_status status = dl_check_scan(h, args, DL_CHECK_FOR_RESERVE, NULL, &r);
    return status != DLSCAN_SUCCESS ? status : dl_scan_reserve(h, &r, NULL);
}

dlscan_status dlscan_reduce(dlscan_handle_t h, const void *d_in, void *d_total, size_t n,
                            dlscan_type in_type, dlscan_type out_type, dlscan_op op, const void *init,
                            cudaStream_t stream)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_total = d_total;
    a.n = n;
    a.in_type = in_type;
    a.out_type = out_type;
    a.op = op;
    a.init = init;
    dl_scan_request r;
    const dlscan_status status = dl_check_scan(h, &a, DL_CHECK_FOR_REDUCE, stream, &r);
    return status != DLSCAN_SUCCESS ? status : dl_scan_run(h, &r);
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
