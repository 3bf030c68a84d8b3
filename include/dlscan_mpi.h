/*
 * dlscan_mpi.h: scans across the processes of an MPI communicator (the library libdlscan_mpi,
 * pkg-config dlscan-mpi; built where meson finds MPI). It is dlscan_scan_across (dlscan.h) with
 * MPI_Allgather as the exchange, for CPU handles (host memory) and GPU handles alike.
 *
 *   dlscan_handle_t h;  dlscan_create_cpu(&h, 0);     (or dlscan_create on this rank's GPU)
 *   dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
 *   a.d_in = slice;  a.d_out = out;  a.n = slice_items;  a.in_type = a.out_type = DLSCAN_FLOAT64;
 *   dlscan_mpi_scan(h, &a, MPI_COMM_WORLD, NULL);      (every rank: each its own slice)
 *
 * Each rank's output is its slice of one scan of the ranks' slices in rank order; the rules,
 * the work and the errors are dlscan_scan_across's (dlscan_mpi_select: dlscan_select_across's). On a GPU handle the rank's total goes
 * through the host: the call waits for the slice's reduction on `stream`, gathers the ranks'
 * totals with MPI (host buffers: no CUDA-aware MPI is needed), copies them back and enqueues
 * the rest, so it returns with the slice's scan enqueued, not done. A CPU handle's call is done
 * when it returns. MPI must be initialized; a failed MPI call is DLSCAN_ERROR_EXCHANGE, with
 * MPI's error string in dlscan_last_error (set the communicator's error handler to
 * MPI_ERRORS_RETURN to get it: MPI's default aborts the job).
 */
#ifndef DLSCAN_MPI_H
#define DLSCAN_MPI_H

#include <mpi.h>

#include "dlscan.h"

#ifdef __cplusplus
extern "C" {
#endif

DLSCAN_API dlscan_status dlscan_mpi_scan(dlscan_handle_t h, const dlscan_scan_args *args, MPI_Comm comm,
                                         cudaStream_t stream);

/* dlscan_select_across (dlscan.h) over the communicator: each rank keeps its items and learns
 * its offset in the whole selection (*d_offset) and its size (*d_total_selected, or NULL), in
 * the memory the handle scans; a GPU handle's count goes through the host. */
DLSCAN_API dlscan_status dlscan_mpi_select(dlscan_handle_t h, const void *d_in, const unsigned char *d_flags,
                                           void *d_out, size_t *d_num_selected, size_t *d_offset,
                                           size_t *d_total_selected, size_t n, dlscan_type type,
                                           dlscan_predicate predicate, const void *operand, MPI_Comm comm,
                                           cudaStream_t stream);

/* dlscan_peers_create (dlscan.h) with the communicator as its bootstrap: every rank, once, on a
 * GPU handle. Its exchange then gathers through the GPUs' memory, without MPI or the host. */
DLSCAN_API dlscan_status dlscan_mpi_peers_create(dlscan_handle_t h, MPI_Comm comm, cudaStream_t stream,
                                                 dlscan_peers_t *peers);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_MPI_H */
