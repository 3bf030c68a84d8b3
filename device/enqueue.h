/*
 * enqueue.h: the one launch every kernel goes through, built-in (tile.cuh, dl_launch) or compiled
 * at run time (src/jit.c): a kernel of one parameter on a stream, where the policy row has them
 * (`dependent`) as a programmatic dependent launch of the stream's previous kernel (block.cuh,
 * dl_grid_dependency; bench/NOTES.md, "Small calls: dependent launches"). Plain C over the CUDA
 * runtime, included by both sides; NVRTC's kernels (user_kernel.cuh) do not see it.
 */
#ifndef DLSCAN_ENQUEUE_H
#define DLSCAN_ENQUEUE_H

#include <cuda_runtime.h>
#include <string.h>

/* Enqueues `kernel`, whose one parameter `params` points to, on `stream`: grid x threads, with
 * `shared` bytes of dynamic shared memory. Returns a cudaError_t as int. */
static inline int dl_enqueue(const void *kernel, const void *params, unsigned grid, unsigned threads,
                             size_t shared, int dependent, cudaStream_t stream)
{
    cudaLaunchAttribute attribute;
    memset((void *)&attribute, 0, sizeof attribute); /* (through void *: C++ deems them non-trivial) */
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config;
    memset((void *)&config, 0, sizeof config);
    config.gridDim.x = grid;
    config.gridDim.y = config.gridDim.z = 1;
    config.blockDim.x = threads;
    config.blockDim.y = config.blockDim.z = 1;
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = dependent ? 1 : 0;
    void *args[1];
    args[0] = (void *)params;
    return (int)cudaLaunchKernelExC(&config, kernel, args);
}

#endif
