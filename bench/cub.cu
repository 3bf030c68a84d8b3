// cub.cu: CUB, the library dlscan measures itself against, as the benches call it:
// cub::DeviceScan as a variant of bench.c (the comparison the paper's figure makes), its
// inclusive sum into a wider type for bench_pairs.c (pairs.h: six pairs, nothing more, as
// each costs compile time), cub::DeviceSelect, DeviceRunLengthEncode and
// DeviceReduce::ReduceByKey for bench_compact.c (int32 and int64 items; reduce-by-key sums
// with int32 / int32, int64 / int64 and int32 / float64 keys / values),
// DeviceScan::InclusiveSumByKey and InclusiveScanByKey for bench_segmented.c (int32 and int64
// keys; int32, int64, float32 and float64 values), and cub::DeviceSegmentedScan over offsets
// for bench_axis.c (int32, int64, float32 and float64 items; CUB 3.3 and newer, which a newer
// CCCL's headers give through -Dcccl_include: with the toolkit's older CUB the call reports
// cudaErrorNotSupported). The one C++ file of dlscan; built only where CUB headers are found.
// Scan counts are passed as int, as a CUB user would for the bench's sizes (up to 2^30);
// compaction counts as 64-bit integers, but run-length encoding's, which CUB takes as an int;
// segment counts as CUB's int64.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/version.cuh>
#if CUB_VERSION >= 300300 // DeviceSegmentedScan first appears in CUB 3.3.0
#include <cub/device/device_segmented_scan.cuh>
#define BENCH_HAVE_SEGMENTED_SCAN 1
#endif
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdio.h>

#include "pairs.h"
#include "variants.h"

namespace {

struct cub_state {
    dlscan_type type;
    dlscan_op op;
    int exclusive;
    void *temp;
    size_t temp_bytes;
};

// The identity of op, as dlscan defines it (floats: infinities).
template <typename T> T identity_of(dlscan_op op)
{
    using limits = cuda::std::numeric_limits<T>;
    if (op == DLSCAN_SUM)
        return T(0);
    if (limits::has_infinity)
        return op == DLSCAN_MIN ? limits::infinity() : -limits::infinity();
    return op == DLSCAN_MIN ? limits::max() : limits::lowest();
}

// One call (or, with temp == NULL, the temp-storage query) for T and a count type N.
template <typename T, typename N>
cudaError_t call_typed(const cub_state *s, void *temp, size_t &bytes, const void *in, void *out,
                       N n, cudaStream_t stream)
{
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    const T init = identity_of<T>(s->op);
    switch (s->op) {
    case DLSCAN_SUM:
        return s->exclusive ? cub::DeviceScan::ExclusiveSum(temp, bytes, x, y, n, stream)
                            : cub::DeviceScan::InclusiveSum(temp, bytes, x, y, n, stream);
    case DLSCAN_MIN:
        return s->exclusive
                   ? cub::DeviceScan::ExclusiveScan(temp, bytes, x, y, cuda::minimum<>{}, init, n, stream)
                   : cub::DeviceScan::InclusiveScan(temp, bytes, x, y, cuda::minimum<>{}, n, stream);
    case DLSCAN_MAX:
        return s->exclusive
                   ? cub::DeviceScan::ExclusiveScan(temp, bytes, x, y, cuda::maximum<>{}, init, n, stream)
                   : cub::DeviceScan::InclusiveScan(temp, bytes, x, y, cuda::maximum<>{}, n, stream);
    }
    return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t call_sized(const cub_state *s, void *temp, size_t &bytes, const void *in, void *out,
                       size_t n, cudaStream_t stream)
{
    if (n >= (size_t(1) << 31))
        return cudaErrorInvalidValue;
    return call_typed<T, int>(s, temp, bytes, in, out, int(n), stream);
}

cudaError_t call(const cub_state *s, void *temp, size_t &bytes, const void *in, void *out,
                 size_t n, cudaStream_t stream)
{
    switch (s->type) {
    case DLSCAN_INT32: return call_sized<int>(s, temp, bytes, in, out, n, stream);
    case DLSCAN_UINT32: return call_sized<unsigned>(s, temp, bytes, in, out, n, stream);
    case DLSCAN_INT64: return call_sized<long long>(s, temp, bytes, in, out, n, stream);
    case DLSCAN_UINT64: return call_sized<unsigned long long>(s, temp, bytes, in, out, n, stream);
    case DLSCAN_FLOAT32: return call_sized<float>(s, temp, bytes, in, out, n, stream);
    case DLSCAN_FLOAT64: return call_sized<double>(s, temp, bytes, in, out, n, stream);
    default: break; // bench.c scans the six 32- and 64-bit types
    }
    return cudaErrorInvalidValue;
}

int supports(dlscan_type, dlscan_op, int) { return 1; }

int prepare(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n)
{
    cub_state *s = new cub_state{type, op, exclusive, nullptr, 0};
    *state = s;
    cudaError_t error = call(s, nullptr, s->temp_bytes, nullptr, nullptr, max_n, 0);
    if (error == cudaSuccess)
        error = cudaMalloc(&s->temp, s->temp_bytes ? s->temp_bytes : 1);
    return (int)error;
}

int run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    cub_state *s = static_cast<cub_state *>(state);
    size_t bytes = s->temp_bytes;
    return (int)call(s, s->temp, bytes, in, out, n, stream);
}

void release(void *state)
{
    cub_state *s = static_cast<cub_state *>(state);
    if (s)
        cudaFree(s->temp);
    delete s;
}

const bench_variant cub_variant = {"cub", "cub::DeviceScan (two kernels per call)", 0, supports,
                                   prepare, run, release};

} // namespace

extern "C" const bench_variant *bench_cub_variant(void) { return &cub_variant; }

extern "C" const char *bench_cub_version(void)
{
    static char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
             CUB_SUBMINOR_VERSION);
    return version;
}

namespace {

// An inclusive sum of In items into Out. CUB accumulates in the type of op(In, In), so the
// sum on Out (not cuda::std::plus<>, whose uint8 + uint8 is an int) makes the accumulator Out.
template <typename In, typename Out>
cudaError_t pair_scan(void *temp, size_t &bytes, const void *in, void *out, size_t n,
                      cudaStream_t stream)
{
    using sum = cuda::std::plus<Out>;
    static_assert(cuda::std::is_same_v<cuda::std::decay_t<cuda::std::invoke_result_t<sum, In, In>>, Out>,
                  "CUB's accumulator is the output type");
    if (n >= (size_t(1) << 31))
        return cudaErrorInvalidValue;
    return cub::DeviceScan::InclusiveScan(temp, bytes, static_cast<const In *>(in),
                                          static_cast<Out *>(out), sum{}, int(n), stream);
}

} // namespace

extern "C" int bench_cub_pair_scan(dlscan_type in_type, dlscan_type out_type, void *temp,
                                   size_t *temp_bytes, const void *in, void *out, size_t n,
                                   cudaStream_t stream)
{
    size_t &bytes = *temp_bytes;
    if (in_type == DLSCAN_UINT8 && out_type == DLSCAN_INT32)
        return (int)pair_scan<unsigned char, int>(temp, bytes, in, out, n, stream);
    if (in_type == DLSCAN_UINT8 && out_type == DLSCAN_INT64)
        return (int)pair_scan<unsigned char, long long>(temp, bytes, in, out, n, stream);
    if (in_type == DLSCAN_INT32 && out_type == DLSCAN_INT64)
        return (int)pair_scan<int, long long>(temp, bytes, in, out, n, stream);
    if (in_type == DLSCAN_FLOAT16 && out_type == DLSCAN_FLOAT32)
        return (int)pair_scan<__half, float>(temp, bytes, in, out, n, stream);
    if (in_type == DLSCAN_BFLOAT16 && out_type == DLSCAN_FLOAT32)
        return (int)pair_scan<__nv_bfloat16, float>(temp, bytes, in, out, n, stream);
    if (in_type == DLSCAN_INT16 && out_type == DLSCAN_INT32)
        return (int)pair_scan<short, int>(temp, bytes, in, out, n, stream);
    return (int)cudaErrorNotSupported;
}

namespace {

// select_if's predicate as bench_compact.c sets it: in[i] < threshold.
template <typename T> struct below {
    T threshold;
    __device__ bool operator()(const T &x) const { return x < threshold; }
};

// select_flagged, select_if, unique and run-length encoding of T items (call as in
// bench_cub_compact). Run lengths are size_t; Encode counts items in an int.
template <typename T>
cudaError_t compact_items(int call, void *temp, size_t &bytes, const void *in,
                          const unsigned char *flags, void *out, void *lengths, size_t *num,
                          size_t n, long long threshold, cudaStream_t stream)
{
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    const long long count = (long long)n;
    switch (call) {
    case 0: return cub::DeviceSelect::Flagged(temp, bytes, x, flags, y, num, count, stream);
    case 1:
        return cub::DeviceSelect::If(temp, bytes, x, y, num, count, below<T>{T(threshold)}, stream);
    case 2: return cub::DeviceSelect::Unique(temp, bytes, x, y, num, count, stream);
    case 3:
        if (n >= (size_t(1) << 31))
            return cudaErrorInvalidValue;
        return cub::DeviceRunLengthEncode::Encode(temp, bytes, x, y, static_cast<size_t *>(lengths),
                                                  num, int(n), stream);
    }
    return cudaErrorInvalidValue;
}

// Reduce-by-key, sums of V values over runs of equal K keys.
template <typename K, typename V>
cudaError_t reduce_by_key(void *temp, size_t &bytes, const void *keys, const void *values,
                          void *keys_out, void *sums, size_t *num, size_t n, cudaStream_t stream)
{
    const K *k = static_cast<const K *>(keys);
    const V *x = static_cast<const V *>(values);
    return cub::DeviceReduce::ReduceByKey(temp, bytes, k, static_cast<K *>(keys_out), x,
                                          static_cast<V *>(sums), num, ::cuda::std::plus<>{},
                                          (long long)n, stream);
}

} // namespace

extern "C" int bench_cub_compact(int call, dlscan_type type, dlscan_type value_type, void *temp,
                                 size_t *temp_bytes, const void *in, const unsigned char *flags,
                                 const void *values, void *out, void *out2, size_t *num, size_t n,
                                 long long threshold, cudaStream_t stream)
{
    size_t &b = *temp_bytes;
    if (call == 4) {
        if (type == DLSCAN_INT32 && value_type == DLSCAN_INT32)
            return (int)reduce_by_key<int, int>(temp, b, in, values, out, out2, num, n, stream);
        if (type == DLSCAN_INT64 && value_type == DLSCAN_INT64)
            return (int)reduce_by_key<long long, long long>(temp, b, in, values, out, out2, num, n,
                                                            stream);
        if (type == DLSCAN_INT32 && value_type == DLSCAN_FLOAT64)
            return (int)reduce_by_key<int, double>(temp, b, in, values, out, out2, num, n, stream);
        return (int)cudaErrorNotSupported;
    }
    if (call < 0 || call > 4)
        return (int)cudaErrorInvalidValue;
    if (type == DLSCAN_INT32)
        return (int)compact_items<int>(call, temp, b, in, flags, out, out2, num, n, threshold,
                                       stream);
    if (type == DLSCAN_INT64)
        return (int)compact_items<long long>(call, temp, b, in, flags, out, out2, num, n, threshold,
                                             stream);
    return (int)cudaErrorNotSupported;
}

namespace {

// The scan by key of bench_segmented.c: runs of equal keys (K, compared with ==) are the
// segments; the sum, or the running min or max, of V values within each.
template <typename K, typename V>
cudaError_t scan_by_key(dlscan_op op, void *temp, size_t &bytes, const void *keys,
                        const void *values, void *out, size_t n, cudaStream_t stream)
{
    const K *k = static_cast<const K *>(keys);
    const V *x = static_cast<const V *>(values);
    V *y = static_cast<V *>(out);
    if (n >= (size_t(1) << 31))
        return cudaErrorInvalidValue;
    switch (op) {
    case DLSCAN_SUM:
        return cub::DeviceScan::InclusiveSumByKey(temp, bytes, k, x, y, int(n),
                                                  ::cuda::std::equal_to<>{}, stream);
    case DLSCAN_MIN:
        return cub::DeviceScan::InclusiveScanByKey(temp, bytes, k, x, y, cuda::minimum<>{}, int(n),
                                                   ::cuda::std::equal_to<>{}, stream);
    case DLSCAN_MAX:
        return cub::DeviceScan::InclusiveScanByKey(temp, bytes, k, x, y, cuda::maximum<>{}, int(n),
                                                   ::cuda::std::equal_to<>{}, stream);
    }
    return cudaErrorInvalidValue;
}

template <typename K>
cudaError_t scan_by_key_values(dlscan_type value_type, dlscan_op op, void *temp, size_t &bytes,
                               const void *keys, const void *values, void *out, size_t n,
                               cudaStream_t stream)
{
    switch (value_type) {
    case DLSCAN_INT32: return scan_by_key<K, int>(op, temp, bytes, keys, values, out, n, stream);
    case DLSCAN_INT64: return scan_by_key<K, long long>(op, temp, bytes, keys, values, out, n, stream);
    case DLSCAN_FLOAT32: return scan_by_key<K, float>(op, temp, bytes, keys, values, out, n, stream);
    case DLSCAN_FLOAT64: return scan_by_key<K, double>(op, temp, bytes, keys, values, out, n, stream);
    default: break;
    }
    return cudaErrorNotSupported;
}

} // namespace

extern "C" int bench_cub_scan_by_key(dlscan_type key_type, dlscan_type value_type, dlscan_op op,
                                     void *temp, size_t *temp_bytes, const void *keys,
                                     const void *values, void *out, size_t n, cudaStream_t stream)
{
    size_t &bytes = *temp_bytes;
    switch (key_type) {
    case DLSCAN_INT32:
        return (int)scan_by_key_values<int>(value_type, op, temp, bytes, keys, values, out, n, stream);
    case DLSCAN_INT64:
        return (int)scan_by_key_values<long long>(value_type, op, temp, bytes, keys, values, out, n,
                                                  stream);
    default: break;
    }
    return (int)cudaErrorNotSupported;
}

#ifdef BENCH_HAVE_SEGMENTED_SCAN
namespace {

// The segmented scan of bench_axis.c: segment k is the T items begin[k] .. end[k] - 1, scanned
// from the operator's identity (exclusive: out[begin[k]] is the identity, as dlscan's exclusive
// scans without init); CUB gives each segment one block.
template <typename T>
cudaError_t segmented_scan(dlscan_op op, int exclusive, void *temp, size_t &bytes, const void *in,
                           void *out, const size_t *begin, const size_t *end, size_t num_segments,
                           cudaStream_t stream)
{
    using cub::DeviceSegmentedScan;
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    const auto count = static_cast<::cuda::std::int64_t>(num_segments);
    const T init = identity_of<T>(op);
    switch (op) {
    case DLSCAN_SUM:
        return exclusive ? DeviceSegmentedScan::ExclusiveSegmentedSum(temp, bytes, x, y, begin, end,
                                                                      count, stream)
                         : DeviceSegmentedScan::InclusiveSegmentedSum(temp, bytes, x, y, begin, end,
                                                                      count, stream);
    case DLSCAN_MIN:
        return exclusive ? DeviceSegmentedScan::ExclusiveSegmentedScan(temp, bytes, x, y, begin, end, count,
                                                                       cuda::minimum<>{}, init, stream)
                         : DeviceSegmentedScan::InclusiveSegmentedScan(temp, bytes, x, y, begin, end, count,
                                                                       cuda::minimum<>{}, stream);
    case DLSCAN_MAX:
        return exclusive ? DeviceSegmentedScan::ExclusiveSegmentedScan(temp, bytes, x, y, begin, end, count,
                                                                       cuda::maximum<>{}, init, stream)
                         : DeviceSegmentedScan::InclusiveSegmentedScan(temp, bytes, x, y, begin, end, count,
                                                                       cuda::maximum<>{}, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace
#endif

extern "C" int bench_cub_segmented_scan(dlscan_type type, dlscan_op op, int exclusive, void *temp,
                                        size_t *temp_bytes, const void *in, void *out,
                                        const size_t *begin_offsets, const size_t *end_offsets,
                                        size_t num_segments, cudaStream_t stream)
{
#ifdef BENCH_HAVE_SEGMENTED_SCAN
    size_t &bytes = *temp_bytes;
    switch (type) {
    case DLSCAN_INT32:
        return (int)segmented_scan<int>(op, exclusive, temp, bytes, in, out, begin_offsets, end_offsets,
                                        num_segments, stream);
    case DLSCAN_INT64:
        return (int)segmented_scan<long long>(op, exclusive, temp, bytes, in, out, begin_offsets,
                                              end_offsets, num_segments, stream);
    case DLSCAN_FLOAT32:
        return (int)segmented_scan<float>(op, exclusive, temp, bytes, in, out, begin_offsets,
                                          end_offsets, num_segments, stream);
    case DLSCAN_FLOAT64:
        return (int)segmented_scan<double>(op, exclusive, temp, bytes, in, out, begin_offsets,
                                           end_offsets, num_segments, stream);
    default: break;
    }
    return (int)cudaErrorNotSupported;
#else
    (void)type, (void)op, (void)exclusive, (void)temp, (void)temp_bytes, (void)in, (void)out;
    (void)begin_offsets, (void)end_offsets, (void)num_segments, (void)stream;
    return (int)cudaErrorNotSupported; // CUB before 3.3 has no DeviceSegmentedScan
#endif
}
