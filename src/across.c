/*
 * across.c: a scan of one array spread over ranks (dlscan_scan_across, dlscan.h). Each rank
 * reduces its slice, the caller's exchange all-gathers the ranks' totals, and each rank scans
 * those totals from the init (exclusive: its prefix is the value at its rank) and then its slice
 * from its prefix. Every step but the exchange is a request of the handle's own backend, so on
 * a GPU they are all enqueued on the call's stream. A select across ranks (dlscan_select_across)
 * selects the rank's items, all-gathers the ranks' counts and reduces those before the rank
 * into its offset. The transports are src/nccl.c and src/mpi.c, each in a library of its own.
 */
#include <stdio.h>

#include "internal.h"

/* The all-gather of one value of `bytes` a rank at `send`, into `totals` (ranks values). */
static dlscan_status dl_all_gather(dlscan_handle_t h, const dlscan_exchange *exchange, const void *send,
                                   void *totals, size_t bytes, cudaStream_t stream)
{
    char why[256] = "";
    if (exchange->all_gather(exchange->context, send, totals, bytes, h->backend->device_memory, stream,
                             why, sizeof why) != 0)
        return dl_fail(h, DLSCAN_ERROR_EXCHANGE, "the exchange's all-gather of %zu bytes a rank failed: %s",
                       bytes, why[0] ? why : "(it gave no reason)");
    return DLSCAN_SUCCESS;
}

/* The reduction of `n` values of `type` at `in` (an op sum from 0) into *total: a request of
 * the backend's own (dlscan_reduce's). */
static dlscan_status dl_reduce_values(dlscan_handle_t h, const void *in, size_t n, dlscan_type type,
                                      void *total, cudaStream_t stream)
{
    const dl_scan_request r = {
        .in = in,
        .n = n,
        .tiles = dl_tiles(n, h->backend->tile_items(h, dl_acc_type(type))),
        .tile_descriptors = 1,
        .in_type = type,
        .type = type,
        .acc_type = dl_acc_type(type),
        .op = DLSCAN_SUM,
        .init_bits = dl_identity_bits(type, DLSCAN_SUM),
        .total = total,
        .stream = stream,
    };
    return dl_scan_run(h, &r);
}

dlscan_status dlscan_scan_across(dlscan_handle_t h, const dlscan_scan_args *args,
                                 const dlscan_exchange *exchange, cudaStream_t stream)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dlscan_status status = dl_check_exchange(h, exchange);
    if (status != DLSCAN_SUCCESS)
        return status;
    dl_scan_request r;
    status = dl_check_scan(h, args, DL_CHECK_FOR_SCAN, stream, &r);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (r.keys || r.offsets || r.axis_length)
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                       "dlscan_scan_across takes plain scans: segments (d_keys, d_offsets) and "
                       "axes (axis_length) across ranks are not supported yet");
    if (exchange->ranks == 1)
        return dl_scan_run(h, &r);

    /* The handle's scratch: the slice's total, the ranks' totals, the ranks' prefixes. */
    const size_t size = dl_type_size(r.type), ranks = (size_t)exchange->ranks;
    char *scratch = NULL;
    if ((status = h->backend->scratch(h, size * (1 + 2 * ranks), stream, (void **)&scratch)) !=
        DLSCAN_SUCCESS)
        return status;
    char *local = scratch, *totals = scratch + size, *prefixes = scratch + size * (1 + ranks);

    /* 1. The slice's total, from the identity (the reduction takes no more tiles than r). */
    dl_scan_request reduce = r;
    reduce.out = NULL;
    reduce.exclusive = 0;
    reduce.init = NULL;
    reduce.init_bits = dl_identity_bits(r.type, r.op);
    reduce.total = local;
    status = dl_scan_run(h, &reduce);

    /* 2. Every rank's total. */
    if (status == DLSCAN_SUCCESS)
        status = dl_all_gather(h, exchange, local, totals, size, stream);

    /* 3. Each rank's prefix (init first), and the whole array's total. */
    if (status == DLSCAN_SUCCESS) {
        const size_t tile = h->backend->tile_items(h, r.acc_type);
        const dl_scan_request scan_totals = {
            .in = totals,
            .out = prefixes,
            .n = ranks,
            .tiles = dl_tiles(ranks, tile),
            .tile_descriptors = 1,
            .in_type = r.type,
            .type = r.type,
            .acc_type = r.acc_type,
            .op = r.op,
            .exclusive = 1,
            .init_bits = r.init_bits,
            .init = r.init,
            .total = r.total,
            .stream = stream,
        };
        status = dl_scan_run(h, &scan_totals);
    }

    /* 4. The slice, from its rank's prefix. */
    if (status == DLSCAN_SUCCESS) {
        dl_scan_request slice = r;
        slice.init = prefixes + size * (size_t)exchange->rank;
        slice.total = NULL;
        status = dl_scan_run(h, &slice);
    }
    return status;
}

dlscan_status dlscan_select_across(dlscan_handle_t h, const void *d_in, const unsigned char *d_flags,
                                   void *d_out, size_t *d_num_selected, size_t *d_offset,
                                   size_t *d_total_selected, size_t n, dlscan_type type,
                                   dlscan_predicate predicate, const void *operand,
                                   const dlscan_exchange *exchange, cudaStream_t stream)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dlscan_status status = dl_check_exchange(h, exchange);
    if (status != DLSCAN_SUCCESS || (status = dl_check_compact_type(h, type)) != DLSCAN_SUCCESS ||
        (!d_flags && (status = dl_check_predicate(h, predicate, operand)) != DLSCAN_SUCCESS))
        return status;
    /* The counts' buffers, beside the items (the select checks its own buffers next). */
    const size_t bytes = n * dl_type_size(type), word = sizeof(size_t);
    dl_buffer buffers[5] = {{d_in, bytes, dl_type_size(type), "d_in", 0, NULL},
                            {d_out, bytes, dl_type_size(type), "d_out", 1, d_in},
                            {d_offset, word, word, "d_offset", 1, NULL},
                            {d_num_selected, word, word, "d_num_selected", 1, NULL},
                            {d_total_selected, word, word, "d_total_selected", 1, NULL}};
    const int items = n > 0 ? 2 : 0;
    if ((status = dl_check_buffers(h, buffers + 2 - items, items + (d_total_selected ? 3 : 2))) !=
        DLSCAN_SUCCESS)
        return status;
    /* 1. The rank's own items, and their count. */
    status = d_flags ? dlscan_select_flagged(h, d_in, d_flags, d_out, d_num_selected, n, type, stream)
                     : dlscan_select_if(h, d_in, d_out, d_num_selected, n, type, predicate, operand, stream);
    if (status != DLSCAN_SUCCESS)
        return status;
    /* 2. Every rank's count; 3. those before this rank, and all of them. */
    size_t *counts = NULL;
    const size_t ranks = (size_t)exchange->ranks;
    if ((status = h->backend->scratch(h, ranks * word, stream, (void **)&counts)) != DLSCAN_SUCCESS ||
        (status = dl_all_gather(h, exchange, d_num_selected, counts, word, stream)) != DLSCAN_SUCCESS ||
        (status = dl_reduce_values(h, counts, (size_t)exchange->rank, DLSCAN_UINT64, d_offset, stream)) !=
            DLSCAN_SUCCESS)
        return status;
    return d_total_selected ? dl_reduce_values(h, counts, ranks, DLSCAN_UINT64, d_total_selected, stream)
                            : DLSCAN_SUCCESS;
}
