/*
 * mpi.c: libdlscan_mpi (dlscan_mpi.h): dlscan_scan_across and dlscan_select_across over an MPI
 * communicator, whose all-gather is MPI_Allgather of the ranks' values in host memory. A GPU
 * handle's values go through the host: copied out once the work before them is done, gathered,
 * copied back (the copies on the call's stream, waited for); and the peer exchange made through
 * it (dlscan_mpi_peers_create). Built with DLSCAN_MPI_CUDA in GPU builds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DLSCAN_MPI_CUDA
#include <cuda_runtime_api.h>
#endif

#include "dlscan_mpi.h"

/* Copies between the host and device memory on `stream`, waited for. */
static int dl_mpi_copy(void *to, const void *from, size_t bytes, int to_device, cudaStream_t stream, char *why,
                       size_t why_size)
{
#ifdef DLSCAN_MPI_CUDA
    cudaError_t error = cudaMemcpyAsync(to, from, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                        stream);
    if (error == cudaSuccess)
        error = cudaStreamSynchronize(stream);
    if (error != cudaSuccess) {
        snprintf(why, why_size, "copying the totals %s the host: %s", to_device ? "from" : "to",
                 cudaGetErrorString(error));
        return 1;
    }
    return 0;
#else
    (void)to, (void)from, (void)bytes, (void)to_device, (void)stream;
    snprintf(why, why_size, "libdlscan_mpi was built without CUDA: it takes CPU handles only");
    return 1;
#endif
}

static int dl_mpi_all_gather(void *context, const void *send, void *recv, size_t bytes, int on_device,
                             cudaStream_t stream, char *why, size_t why_size)
{
    const MPI_Comm comm = *(const MPI_Comm *)context;
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    unsigned char *mine = malloc(bytes), *all = malloc((size_t)ranks * bytes);
    if (!mine || !all) {
        free(mine), free(all);
        snprintf(why, why_size, "host memory for %d values of %zu bytes", ranks, bytes);
        return 1;
    }
    int failed = on_device ? dl_mpi_copy(mine, send, bytes, 0, stream, why, why_size) : (memcpy(mine, send, bytes), 0);
    if (!failed) {
        const int error = MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, comm);
        if (error != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int length = 0;
            MPI_Error_string(error, text, &length);
            snprintf(why, why_size, "MPI_Allgather: %.*s", length, text);
            failed = 1;
        }
    }
    if (!failed) {
        if (on_device)
            failed = dl_mpi_copy(recv, all, (size_t)ranks * bytes, 1, stream, why, why_size);
        else
            memcpy(recv, all, (size_t)ranks * bytes);
    }
    free(mine), free(all);
    return failed;
}

/* The exchange over `*comm`; `error` gets why where none can be made. */
static dlscan_exchange dl_mpi_exchange(MPI_Comm *comm, char *error, size_t error_size)
{
    int rank = 0, ranks = 0, initialized = 0;
    error[0] = '\0';
    MPI_Initialized(&initialized);
    if (!initialized)
        snprintf(error, error_size, "MPI is not initialized: call MPI_Init first");
    else if (*comm == MPI_COMM_NULL)
        snprintf(error, error_size, "comm is MPI_COMM_NULL: dlscan_mpi_scan and dlscan_mpi_select need a communicator");
    else if (MPI_Comm_rank(*comm, &rank) != MPI_SUCCESS || MPI_Comm_size(*comm, &ranks) != MPI_SUCCESS)
        snprintf(error, error_size, "the MPI communicator's rank and size could not be read");
    const dlscan_exchange exchange = {rank, ranks, dl_mpi_all_gather, comm, error[0] ? error : NULL};
    return exchange;
}

dlscan_status dlscan_mpi_scan(dlscan_handle_t h, const dlscan_scan_args *args, MPI_Comm comm, cudaStream_t stream)
{
    char error[200];
    const dlscan_exchange exchange = dl_mpi_exchange(&comm, error, sizeof error);
    return dlscan_scan_across(h, args, &exchange, stream);
}

dlscan_status dlscan_mpi_select(dlscan_handle_t h, const void *d_in, const unsigned char *d_flags, void *d_out,
                                size_t *d_num_selected, size_t *d_offset, size_t *d_total_selected, size_t n,
                                dlscan_type type, dlscan_predicate predicate, const void *operand, MPI_Comm comm,
                                cudaStream_t stream)
{
    char error[200];
    const dlscan_exchange exchange = dl_mpi_exchange(&comm, error, sizeof error);
    return dlscan_select_across(h, d_in, d_flags, d_out, d_num_selected, d_offset, d_total_selected, n, type,
                                predicate, operand, &exchange, stream);
}

dlscan_status dlscan_mpi_peers_create(dlscan_handle_t h, MPI_Comm comm, cudaStream_t stream, dlscan_peers_t *peers)
{
    char error[200];
    const dlscan_exchange bootstrap = dl_mpi_exchange(&comm, error, sizeof error);
    return dlscan_peers_create(h, &bootstrap, stream, peers);
}
