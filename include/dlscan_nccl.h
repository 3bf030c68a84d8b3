/*
 * dlscan_nccl.h: scans across the GPUs of a NCCL communicator (the library libdlscan_nccl,
 * pkg-config dlscan-nccl; built where meson finds NCCL). It is dlscan_scan_across (dlscan.h)
 * with NCCL's all-gather as the exchange: everything is enqueued on `stream`, nothing waits for
 * the device, and a whole call can be captured in a CUDA graph.
 *
 *   ncclComm_t comm;  ... ncclCommInitRank(&comm, ranks, id, rank) on this rank's GPU ...
 *   dlscan_handle_t h;  dlscan_create(&h);            (a GPU handle on the same GPU)
 *   dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
 *   a.d_in = d_slice;  a.d_out = d_out;  a.n = slice_items;  a.in_type = a.out_type = DLSCAN_INT64;
 *   dlscan_nccl_scan(h, &a, comm, stream);          (every rank: each its own slice)
 *
 * Each rank's output is its slice of one scan of the ranks' slices in rank order; the rules,
 * the work and the errors are dlscan_scan_across's (dlscan_nccl_select: dlscan_select_across's). A CPU handle is refused (NCCL moves device
 * memory; dlscan_mpi.h takes CPU handles), as is a NULL communicator: DLSCAN_ERROR_EXCHANGE.
 */
#ifndef DLSCAN_NCCL_H
#define DLSCAN_NCCL_H

#include <nccl.h>

#include "dlscan.h"

#ifdef __cplusplus
extern "C" {
#endif

DLSCAN_API dlscan_status dlscan_nccl_scan(dlscan_handle_t h, const dlscan_scan_args *args, ncclComm_t comm,
                                          cudaStream_t stream);

/* dlscan_select_across (dlscan.h) over the communicator: each rank keeps its items and learns
 * its offset in the whole selection (*d_offset) and its size (*d_total_selected, or NULL), in
 * device memory, without a trip to the host. */
DLSCAN_API dlscan_status dlscan_nccl_select(dlscan_handle_t h, const void *d_in, const unsigned char *d_flags,
                                            void *d_out, size_t *d_num_selected, size_t *d_offset,
                                            size_t *d_total_selected, size_t n, dlscan_type type,
                                            dlscan_predicate predicate, const void *operand, ncclComm_t comm,
                                            cudaStream_t stream);

/* dlscan_peers_create (dlscan.h) with the communicator as its bootstrap: every rank, once. Its
 * exchange (dlscan_peers_exchange, for dlscan_scan_across and dlscan_select_across) then gathers
 * through the GPUs' memory in one small kernel, without NCCL. */
DLSCAN_API dlscan_status dlscan_nccl_peers_create(dlscan_handle_t h, ncclComm_t comm, cudaStream_t stream,
                                                  dlscan_peers_t *peers);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_NCCL_H */
