/*
 * nccl.c: libdlscan_nccl (dlscan_nccl.h): dlscan_scan_across and dlscan_select_across over a
 * NCCL communicator, whose all-gather is ncclAllGather of the ranks' values on the call's stream,
 * and the peer exchange (dlscan_peers_create) made through it.
 */
#include <stdio.h>

#include "dlscan_nccl.h"

static int dl_nccl_all_gather(void *context, const void *send, void *recv, size_t bytes, int on_device,
                              cudaStream_t stream, char *why, size_t why_size)
{
    if (!on_device) {
        snprintf(why, why_size, "NCCL moves device memory: a CPU handle scans across ranks with dlscan_mpi_scan");
        return 1;
    }
    const ncclResult_t result = ncclAllGather(send, recv, bytes, ncclUint8, (ncclComm_t)context, stream);
    if (result != ncclSuccess) {
        snprintf(why, why_size, "ncclAllGather: %s", ncclGetErrorString(result));
        return 1;
    }
    return 0;
}

/* The exchange over `comm`; `error` gets why where none can be made. */
static dlscan_exchange dl_nccl_exchange(ncclComm_t comm, char *error, size_t error_size)
{
    int rank = 0, ranks = 0;
    ncclResult_t result;
    error[0] = '\0';
    if (!comm)
        snprintf(error, error_size, "comm is NULL: dlscan_nccl_scan and dlscan_nccl_select need a NCCL communicator");
    else if ((result = ncclCommUserRank(comm, &rank)) != ncclSuccess ||
             (result = ncclCommCount(comm, &ranks)) != ncclSuccess)
        snprintf(error, error_size, "the NCCL communicator's rank and size: %s", ncclGetErrorString(result));
    const dlscan_exchange exchange = {rank, ranks, dl_nccl_all_gather, comm, error[0] ? error : NULL};
    return exchange;
}

dlscan_status dlscan_nccl_scan(dlscan_handle_t h, const dlscan_scan_args *args, ncclComm_t comm,
                               cudaStream_t stream)
{
    char error[200];
    const dlscan_exchange exchange = dl_nccl_exchange(comm, error, sizeof error);
    return dlscan_scan_across(h, args, &exchange, stream);
}

dlscan_status dlscan_nccl_select(dlscan_handle_t h, const void *d_in, const unsigned char *d_flags, void *d_out,
                                 size_t *d_num_selected, size_t *d_offset, size_t *d_total_selected, size_t n,
                                 dlscan_type type, dlscan_predicate predicate, const void *operand, ncclComm_t comm,
                                 cudaStream_t stream)
{
    char error[200];
    const dlscan_exchange exchange = dl_nccl_exchange(comm, error, sizeof error);
    return dlscan_select_across(h, d_in, d_flags, d_out, d_num_selected, d_offset, d_total_selected, n, type,
                                predicate, operand, &exchange, stream);
}

dlscan_status dlscan_nccl_peers_create(dlscan_handle_t h, ncclComm_t comm, cudaStream_t stream, dlscan_peers_t *peers)
{
    char error[200];
    const dlscan_exchange bootstrap = dl_nccl_exchange(comm, error, sizeof error);
    return dlscan_peers_create(h, &bootstrap, stream, peers);
}
