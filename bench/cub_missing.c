/* cub_missing.c: what cub.cu provides, where CUB headers were not found: nothing. */
#include "pairs.h"
#include "variants.h"

const bench_variant *bench_cub_variant(void) { return NULL; }

const char *bench_cub_version(void) { return "not built"; }

int bench_cub_compact(int call, dlscan_type type, dlscan_type value_type, void *temp,
                      size_t *temp_bytes, const void *in, const unsigned char *flags,
                      const void *values, void *out, void *out2, size_t *num, size_t n,
                      long long threshold, cudaStream_t stream)
{
    (void)call, (void)type, (void)value_type, (void)temp, (void)temp_bytes, (void)in, (void)flags;
    (void)values, (void)out, (void)out2, (void)num, (void)n, (void)threshold, (void)stream;
    return 801; /* cudaErrorNotSupported */
}

int bench_cub_pair_scan(dlscan_type in_type, dlscan_type out_type, void *temp, size_t *temp_bytes,
                        const void *in, void *out, size_t n, cudaStream_t stream)
{
    (void)in_type, (void)out_type, (void)temp, (void)temp_bytes, (void)in, (void)out, (void)n;
    (void)stream;
    return 801; /* cudaErrorNotSupported */
}

int bench_cub_scan_by_key(dlscan_type key_type, dlscan_type value_type, dlscan_op op, void *temp,
                          size_t *temp_bytes, const void *keys, const void *values, void *out,
                          size_t n, cudaStream_t stream)
{
    (void)key_type, (void)value_type, (void)op, (void)temp, (void)temp_bytes, (void)keys;
    (void)values, (void)out, (void)n, (void)stream;
    return 801; /* cudaErrorNotSupported */
}

int bench_cub_segmented_scan(dlscan_type type, dlscan_op op, int exclusive, void *temp,
                             size_t *temp_bytes, const void *in, void *out,
                             const size_t *begin_offsets, const size_t *end_offsets,
                             size_t num_segments, cudaStream_t stream)
{
    (void)type, (void)op, (void)exclusive, (void)temp, (void)temp_bytes, (void)in, (void)out;
    (void)begin_offsets, (void)end_offsets, (void)num_segments, (void)stream;
    return 801; /* cudaErrorNotSupported */
}
