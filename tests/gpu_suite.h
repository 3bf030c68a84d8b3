/*
 * gpu_suite.h: what the Criterion suites on a GPU (test_gpu.c, test_probe.c) share: a handle
 * and stream per test, skipped where there is no GPU, and the element types as parameters.
 */
#ifndef DLSCAN_GPU_SUITE_H
#define DLSCAN_GPU_SUITE_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cuda_runtime_api.h>

#include "dlscan.h"
#include "gpu_memory.h"

/* The parameters of the tests that run once per element type: EVERY_TYPE, the six 32- and
 * 64-bit types that compaction takes; EVERY_SCAN_TYPE, all twelve, which scans take. */
static dlscan_type every_type[] __attribute__((unused)) = {
    DLSCAN_INT32, DLSCAN_UINT32, DLSCAN_INT64, DLSCAN_UINT64, DLSCAN_FLOAT32, DLSCAN_FLOAT64};
#define EVERY_TYPE cr_make_param_array(dlscan_type, every_type, sizeof every_type / sizeof every_type[0])
static dlscan_type every_scan_type[] __attribute__((unused)) = {
    DLSCAN_INT32, DLSCAN_UINT32, DLSCAN_INT64,  DLSCAN_UINT64,  DLSCAN_FLOAT32, DLSCAN_FLOAT64,
    DLSCAN_INT8,  DLSCAN_UINT8,  DLSCAN_INT16, DLSCAN_UINT16, DLSCAN_FLOAT16, DLSCAN_BFLOAT16};
#define EVERY_SCAN_TYPE                                                                           \
    cr_make_param_array(dlscan_type, every_scan_type, sizeof every_scan_type / sizeof every_scan_type[0])

/* A handle on the current device and a non-blocking stream, or a skipped test. */
static inline dlscan_handle_t gpu_handle(cudaStream_t *stream)
{
    dlscan_handle_t h = NULL;
    const dlscan_status status = dlscan_create(&h);
    if (status == DLSCAN_ERROR_NO_DEVICE)
        cr_skip_test("no CUDA device here: the gpu suite needs one (%s)",
                     dlscan_status_string(status));
    cr_assert_eq(status, DLSCAN_SUCCESS, "%s", dlscan_status_string(status));
    CUDA_OK(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
    return h;
}

static inline void gpu_done(dlscan_handle_t h, cudaStream_t stream)
{
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaStreamDestroy(stream));
    dlscan_destroy(h);
}

/* What a test on the GPU begins with: a fresh random seed `rng`, a handle `h` (or a skipped
 * test) with its own `stream`, and device memory `m` on that stream. gpu_done(h, stream)
 * ends it. */
#define GPU_TEST_BEGIN(h, m, stream, rng)                                                         \
    uint64_t rng = test_seed();                                                                   \
    cudaStream_t stream;                                                                          \
    dlscan_handle_t h = gpu_handle(&stream);                                                      \
    WITH_MEMORY(m, stream)

#endif /* DLSCAN_GPU_SUITE_H */
