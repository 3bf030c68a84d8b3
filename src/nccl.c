/*
 * nccl.c: libdlscan_nccl (dlscan_nccl.h): dlscan_scan_across over a NCCL communicator, whose
 * all-gather is ncclAllGather of the ranks' totals on the call's stream.
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

dlscan_status dlscan_nccl_scan(dlscan_handle_t h, const dlscan_scan_args *args, ncclComm_t comm,
                               cudaStream_t stream)
{
    char error[200] = "";
    int rank = 0, ranks = 0;
    ncclResult_t result;
    if (!comm)
        snprintf(error, sizeof error, "comm is NULL: dlscan_nccl_scan needs a NCCL communicator");
    else if ((result = ncclCommUserRank(comm, &rank)) != ncclSuccess ||
             (result = ncclCommCount(comm, &ranks)) != ncclSuccess)
        snprintf(error, sizeof error, "the NCCL communicator's rank and size: %s", ncclGetErrorString(result));
    const dlscan_exchange exchange = {rank, ranks, dl_nccl_all_gather, comm, error[0] ? error : NULL};
    return dlscan_scan_across(h, args, &exchange, stream);
}
