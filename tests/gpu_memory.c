/* gpu_memory.c: device memory for the shared checks (see gpu_memory.h). */
#include "gpu_memory.h"

static void *gpu_alloc(size_t bytes, void *context)
{
    (void)context;
    void *p = NULL;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

static void gpu_release(void *p, void *context)
{
    (void)context;
    CUDA_OK(cudaFree(p));
}

static void gpu_wait(void *context)
{
    const test_memory *m = context;
    CUDA_OK(cudaStreamSynchronize(m->stream));
    CUDA_OK(cudaGetLastError());
}

static void gpu_upload(void *dst, const void *src, size_t bytes, void *context)
{
    const test_memory *m = context;
    CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, m->stream));
    gpu_wait(context);
}

static void gpu_download(void *dst, const void *src, size_t bytes, void *context)
{
    const test_memory *m = context;
    CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, m->stream));
    gpu_wait(context);
}

static void gpu_fill(void *dst, int byte, size_t bytes, void *context)
{
    const test_memory *m = context;
    CUDA_OK(cudaMemsetAsync(dst, byte, bytes, m->stream));
    gpu_wait(context);
}

test_memory gpu_memory_on(cudaStream_t stream)
{
    test_memory m = {gpu_alloc, gpu_release, gpu_upload, gpu_download, gpu_fill, gpu_wait,
                     NULL,      stream};
    return m;
}

/* `ranks` handles of the current device, each with a stream and memory functions of its own: the
 * across checks of in_type, or (peers) the peer exchange's. */
static void on_ranks(int ranks, int peers, dlscan_type in_type, size_t max_slice, uint64_t *rng)
{
    dlscan_handle_t handles[ACROSS_MAX_RANKS];
    cudaStream_t streams[ACROSS_MAX_RANKS];
    test_memory memories[ACROSS_MAX_RANKS] = {{NULL}};
    for (int r = 0; r < ranks; ++r) {
        CHECK(dlscan_create(&handles[r]) == DLSCAN_SUCCESS, "a handle for rank %d", r);
        CUDA_OK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
        memories[r] = gpu_memory_on(streams[r]);
        memories[r].context = &memories[r];
    }
    if (peers) {
        across_check_peers(handles, memories, ranks, max_slice, rng);
    } else {
        across_check_scans(handles, memories, ranks, in_type, max_slice, rng);
        if (test_type_size(in_type) >= 4) /* compaction's types */
            across_check_select(handles, memories, ranks, in_type, max_slice, rng);
    }
    for (int r = 0; r < ranks; ++r) {
        CUDA_OK(cudaStreamSynchronize(streams[r]));
        CUDA_OK(cudaStreamDestroy(streams[r]));
        dlscan_destroy(handles[r]);
    }
}

void gpu_across_ranks(int ranks, dlscan_type in_type, size_t max_slice, uint64_t *rng)
{
    on_ranks(ranks, 0, in_type, max_slice, rng);
}

void gpu_across_peers(int ranks, size_t max_slice, uint64_t *rng)
{
    on_ranks(ranks, 1, DLSCAN_INT32, max_slice, rng);
}
