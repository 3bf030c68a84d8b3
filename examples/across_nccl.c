/*
 * across_nccl.c: one array spread over GPUs, scanned where it lies (dlscan_nccl.h): one MPI
 * process per GPU, NCCL between them. Each rank fills its slice on its GPU (2^24 + rank items of
 * 1), scans it across the ranks on its stream, and checks its last item against the count of
 * items up to it. MPI only starts the processes and hands out NCCL's id; the scan itself goes
 * over NCCL, with nothing waiting for the host until the check.
 *
 *   mpicc across_nccl.c $(pkg-config --cflags --libs dlscan-nccl) -lnccl -o across_nccl
 *   mpiexec -n 2 ./across_nccl
 */
#include <stdio.h>

#include <cuda_runtime.h>
#include <mpi.h>

#include <dlscan_nccl.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 0, devices = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        if (rank == 0)
            printf("no GPU here: nothing to do\n");
        MPI_Finalize();
        return 0;
    }
    cudaSetDevice(rank % devices);

    ncclUniqueId id;
    if (rank == 0)
        ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    ncclCommInitRank(&comm, ranks, id, rank);

    const size_t n = ((size_t)1 << 24) + (size_t)rank;
    int *d_in = NULL, *d_out = NULL;
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaMalloc((void **)&d_in, n * sizeof *d_in);
    cudaMalloc((void **)&d_out, n * sizeof *d_out);
    int one = 1;
    cudaMemcpy(d_in, &one, sizeof one, cudaMemcpyHostToDevice); /* the first item ... */
    for (size_t filled = 1; filled < n; filled *= 2)              /* ... doubled up to n */
        cudaMemcpy(d_in + filled, d_in, (filled < n - filled ? filled : n - filled) * sizeof *d_in,
                   cudaMemcpyDeviceToDevice);

    dlscan_handle_t h = NULL;
    dlscan_status status = dlscan_create(&h); /* on this rank's GPU */
    if (status == DLSCAN_SUCCESS) {
        dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
        a.d_in = d_in;
        a.d_out = d_out;
        a.n = n;
        a.in_type = a.out_type = DLSCAN_INT32;
        status = dlscan_nccl_scan(h, &a, comm, stream); /* every rank, its own slice */
    }
    int last = 0;
    cudaMemcpyAsync(&last, d_out + n - 1, sizeof last, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    long long want = 0; /* the items up to this rank's last: every slice before it, and its own */
    for (int r = 0; r <= rank; ++r)
        want += ((long long)1 << 24) + r;
    const int ok = status == DLSCAN_SUCCESS && last == want;
    printf("rank %d: %zu items, the running count at its last %d (%s)\n", rank, n, last,
           ok ? "right" : status == DLSCAN_SUCCESS ? "wrong" : dlscan_last_error(h));
    dlscan_destroy(h);
    cudaFree(d_in);
    cudaFree(d_out);
    ncclCommDestroy(comm);
    MPI_Finalize();
    return ok ? 0 : 1;
}
