/*
 * across.c: a scan of one array spread over ranks (dlscan_scan_across, dlscan.h). Each rank
 * reduces its slice, the caller's exchange all-gathers the ranks' totals, and each rank scans
 * those totals from the init (exclusive: its prefix is the value at its rank) and then its slice
 * from its prefix. Every step but the exchange is a request of the handle's own backend, so on
 * a GPU they are all enqueued on the call's stream. The transports are src/nccl.c and
 * src/mpi.c, each in a library of its own.
 */
#include <stdio.h>

#include "internal.h"

dlscan_status dlscan_scan_across(dlscan_handle_t h, const dlscan_scan_args *args,
                                 const dlscan_exchange *exchange, cudaStream_t stream)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    if (!exchange)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "exchange is NULL");
    if (exchange->error)
        return dl_fail(h, DLSCAN_ERROR_EXCHANGE, "%s", exchange->error);
    if (exchange->ranks < 1 || exchange->rank < 0 || exchange->rank >= exchange->ranks)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "exchange->rank = %d of ranks = %d: a rank is 0 .. ranks - 1", exchange->rank,
                       exchange->ranks);
    if (!exchange->all_gather)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "exchange->all_gather is NULL");
    dl_scan_request r;
    dlscan_status status = dl_check_scan(h, args, 0, stream, &r);
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
    if (status == DLSCAN_SUCCESS) {
        char why[256] = "";
        if (exchange->all_gather(exchange->context, local, totals, size, h->backend->device_memory,
                                 stream, why, sizeof why) != 0)
            status = dl_fail(h, DLSCAN_ERROR_EXCHANGE, "the exchange's all-gather of %zu bytes a rank failed: %s",
                             size, why[0] ? why : "(it gave no reason)");
    }

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
