/*
 * gpu_memory.h: device memory for the shared checks (scan_check.h's test_memory), used by
 * the Criterion gpu suite (test_gpu.c) and the sanitizer driver (sanitize_gpu.c). Copies
 * and fills are ordered on the memory's stream and complete when they return.
 */
#ifndef DLSCAN_GPU_MEMORY_H
#define DLSCAN_GPU_MEMORY_H

#include <cuda_runtime_api.h>

#include "across_check.h"
#include "check.h"
#include "scan_check.h"

#define CUDA_OK(call)                                                                             \
    do {                                                                                          \
        const cudaError_t cuda_ok_error = (call);                                                 \
        CHECK(cuda_ok_error == cudaSuccess, "%s: %s", #call, cudaGetErrorString(cuda_ok_error));  \
    } while (0)

/* Memory functions working on `stream`; set m.context = &m before use (WITH_MEMORY). */
test_memory gpu_memory_on(cudaStream_t stream);

/* across_check_scans (and, for compaction's types, across_check_select) on `ranks` GPU handles
 * of the current device, each with a stream and memory functions of its own (threads of this
 * process as ranks). */
void gpu_across_ranks(int ranks, dlscan_type in_type, size_t max_slice, uint64_t *rng);

/* across_check_peers on `ranks` such handles: the peer exchange between threads of this process
 * on one GPU (each rank's slots mapped by their pointer). */
void gpu_across_peers(int ranks, size_t max_slice, uint64_t *rng);

#define WITH_MEMORY(m, stream)                                                                    \
    test_memory m = gpu_memory_on(stream);                                                        \
    m.context = &m

#endif /* DLSCAN_GPU_MEMORY_H */
