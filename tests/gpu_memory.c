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
