/*
 * variants.h: what a scan implementation provides to the bench harness (bench.c). Each
 * variant is one curve of the plot: dlscan, cudaMemcpyAsync (the ceiling), CUB
 * (cub_scan.cu) and the seed algorithms written here as baselines (baselines.cu).
 */
#ifndef DLSCAN_BENCH_VARIANTS_H
#define DLSCAN_BENCH_VARIANTS_H

#include <stddef.h>

#include "dlscan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_variant {
    const char *name;
    const char *description; /* one line for the CSV header */
    int is_copy;             /* 1: validated as a copy of the input (memcpy), not a scan */
    /* Whether the variant implements (type, op, exclusive). */
    int (*supports)(dlscan_type type, dlscan_op op, int exclusive);
    /* Allocates what calls of up to max_n items need; returns 0 or a cudaError_t. */
    int (*prepare)(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n);
    /* Enqueues one scan of n items from d_in to d_out on stream; returns 0 or a cudaError_t.
     * It must not synchronize: back-to-back calls are timed. */
    int (*run)(void *state, const void *d_in, void *d_out, size_t n, cudaStream_t stream);
    void (*release)(void *state);
} bench_variant;

/* CUB's DeviceScan (cub_scan.cu; NULL where CUB headers were not found) and its version. */
const bench_variant *bench_cub_variant(void);
const char *bench_cub_version(void); /* "not built" without CUB */

/* The lines that open a GPU bench's output (provenance.c), into out[size]. */
struct cudaDeviceProp;
void bench_provenance(char *out, size_t size, const struct cudaDeviceProp *prop, const char *operation);

/* CUB's compaction calls for bench_compact.c (cub.cu). call: 0 select_flagged
 * (DeviceSelect::Flagged), 1 select_if (DeviceSelect::If, in[i] < threshold), 2 unique
 * (DeviceSelect::Unique), 3 run-length encode (DeviceRunLengthEncode::Encode, size_t
 * lengths into out2), 4 reduce-by-key (DeviceReduce::ReduceByKey, sums into out2): the
 * numbers of compact_call (tests/compact_check.h). Items (keys) of type int32 or int64;
 * reduce-by-key takes (type, value_type) = (int32, int32), (int64, int64) or (int32,
 * float64). Counts are 64-bit but for Encode's, an int: n >= 2^31 gives
 * cudaErrorInvalidValue. temp == NULL asks for *temp_bytes. Returns a cudaError_t
 * (cudaErrorNotSupported for other types and without CUB). */
int bench_cub_compact(int call, dlscan_type type, dlscan_type value_type, void *temp,
                      size_t *temp_bytes, const void *in, const unsigned char *flags,
                      const void *values, void *out, void *out2, size_t *num, size_t n,
                      long long threshold, cudaStream_t stream);

/* CUB's scan by key for bench_segmented.c (cub.cu): cub::DeviceScan::InclusiveSumByKey (sum)
 * or InclusiveScanByKey (min, max) of n < 2^31 values of value_type (int32, int64, float32,
 * float64) with keys of key_type (int32, int64), compared with ==; temp == NULL asks for
 * *temp_bytes. Returns a cudaError_t (cudaErrorNotSupported for other types and without CUB). */
int bench_cub_scan_by_key(dlscan_type key_type, dlscan_type value_type, dlscan_op op, void *temp,
                          size_t *temp_bytes, const void *keys, const void *values, void *out,
                          size_t n, cudaStream_t stream);

/* CUB's segmented scan over offsets for bench_axis.c (cub.cu): cub::DeviceSegmentedScan's
 * InclusiveSegmentedSum and ExclusiveSegmentedSum (sum), InclusiveSegmentedScan and
 * ExclusiveSegmentedScan (min and max: cuda::minimum, cuda::maximum; the exclusive one from the
 * operator's identity) of type (int32, int64, float32, float64) items. Segment k is the items
 * begin_offsets[k] .. end_offsets[k] - 1, k < num_segments, the offsets in device memory; CUB
 * gives each segment one block. temp == NULL asks for *temp_bytes. Returns a cudaError_t:
 * cudaErrorNotSupported for other types, with a CUB older than 3.3 (the toolkit's, where
 * -Dcccl_include names no newer CCCL) and without CUB. */
int bench_cub_segmented_scan(dlscan_type type, dlscan_op op, int exclusive, void *temp,
                             size_t *temp_bytes, const void *in, void *out,
                             const size_t *begin_offsets, const size_t *end_offsets,
                             size_t num_segments, cudaStream_t stream);

/* The seed algorithms as baselines (baselines.cu): sets *count, returns the array. */
const bench_variant *bench_baseline_variants(int *count);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_BENCH_VARIANTS_H */
