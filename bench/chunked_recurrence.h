/*
 * chunked_recurrence.h: bench_operator's competitor for batched linear recurrences, the pattern
 * of Mamba's selective-scan kernel (chunked_recurrence.cu).
 */
#ifndef DLSCAN_BENCH_CHUNKED_RECURRENCE_H
#define DLSCAN_BENCH_CHUNKED_RECURRENCE_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* h[t] = a[t] h[t-1] + b[t] along each of `rows` rows of `length` float32 items, each from
 * h = 0: one block per row, chunks carried serially. Enqueued on stream; returns a cudaError_t. */
int bench_chunked_recurrence(const float *a, const float *b, float *h, size_t rows, size_t length,
                             cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_BENCH_CHUNKED_RECURRENCE_H */
