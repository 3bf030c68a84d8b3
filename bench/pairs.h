/*
 * pairs.h: what bench_pairs.c times next to dlscan for scans whose output type is not the
 * input's (issue 22): the floor, a copy that converts each item (copy_convert.cu), and CUB's
 * inclusive sum accumulating in the output type (cub.cu; cub_missing.c without CUB).
 * Both take the bench's six pairs: uint8 -> int32, uint8 -> int64, int32 -> int64,
 * float16 -> float32, bfloat16 -> float32, int16 -> int32; other pairs return
 * cudaErrorNotSupported. Both only enqueue work on `stream` and return a cudaError_t.
 */
#ifndef DLSCAN_BENCH_PAIRS_H
#define DLSCAN_BENCH_PAIRS_H

#include <stddef.h>

#include "dlscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = in[i] converted to out_type, for i < n: reads n items of in_type, writes n of
 * out_type. in and out must be 16-byte aligned (cudaErrorMisalignedAddress otherwise). */
int bench_copy_convert(dlscan_type in_type, dlscan_type out_type, const void *in, void *out,
                       size_t n, cudaStream_t stream);

/* cub::DeviceScan::InclusiveScan of n < 2^31 items of in_type into out_type with the sum on
 * out_type; temp == NULL asks for *temp_bytes. cudaErrorNotSupported without CUB. */
int bench_cub_pair_scan(dlscan_type in_type, dlscan_type out_type, void *temp, size_t *temp_bytes,
                        const void *in, void *out, size_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_BENCH_PAIRS_H */
