/*
 * copy_convert.cu: the floor of a scan into a wider output type (bench_pairs.c): a copy
 * that reads each item in the input type and writes it converted to the output type, as a
 * single-pass scan must at the least: n * (sizeof(In) + sizeof(Out)) bytes. Instantiated
 * for the bench's six pairs only (pairs.h).
 *
 *   copy_convert_kernel   one block of 256 threads per 256 x 8 packs; a pack is the items of
 *                         16 output bytes (4 or 2), so that both a warp's loads and its 16-byte
 *                         stores are contiguous. Each thread loads its 8 packs (all in flight
 *                         at once), then converts and stores them. The n % (16 / sizeof(Out))
 *                         items after the last pack go one per thread of block 0.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "pairs.h"

#define COPY_THREADS 256
#define COPY_PACKS_PER_THREAD 8 /* independent loads each thread has in flight */

/* N items in one aligned access (N * sizeof(T) bytes: 2 to 16). */
template <typename T, int N> struct alignas(N * sizeof(T)) pack {
    T v[N];
};

/* ---------------------------------------------------------------- GPU kernel */

template <typename In, typename Out>
__global__ void __launch_bounds__(COPY_THREADS)
    copy_convert_kernel(const In *__restrict__ in, Out *__restrict__ out, uint64_t n)
{
    constexpr int items = 16 / sizeof(Out);
    using in_pack = pack<In, items>;
    using out_pack = pack<Out, items>;
    static_assert(sizeof(out_pack) == 16, "one 16-byte store per pack");
    const uint64_t packs = n / items;
    const uint64_t first = (uint64_t)blockIdx.x * COPY_THREADS * COPY_PACKS_PER_THREAD + threadIdx.x;
    in_pack x[COPY_PACKS_PER_THREAD];
#pragma unroll
    for (int k = 0; k < COPY_PACKS_PER_THREAD; ++k) {
        const uint64_t p = first + (uint64_t)k * COPY_THREADS;
        if (p < packs)
            x[k] = reinterpret_cast<const in_pack *>(in)[p];
    }
#pragma unroll
    for (int k = 0; k < COPY_PACKS_PER_THREAD; ++k) {
        const uint64_t p = first + (uint64_t)k * COPY_THREADS;
        if (p < packs) {
            out_pack y;
#pragma unroll
            for (int e = 0; e < items; ++e)
                y.v[e] = static_cast<Out>(x[k].v[e]);
            reinterpret_cast<out_pack *>(out)[p] = y;
        }
    }
    const uint64_t tail = packs * items + threadIdx.x;
    if (blockIdx.x == 0 && tail < n)
        out[tail] = static_cast<Out>(in[tail]);
}

/* ---------------------------------------------------------------- launcher */

template <typename In, typename Out>
static int copy_convert(const void *in, void *out, size_t n, cudaStream_t stream)
{
    const uint64_t packs = n / (16 / sizeof(Out)), packs_per_block = COPY_THREADS * COPY_PACKS_PER_THREAD;
    const uint64_t blocks = packs ? (packs + packs_per_block - 1) / packs_per_block : 1;
    copy_convert_kernel<In, Out><<<(unsigned)blocks, COPY_THREADS, 0, stream>>>(
        static_cast<const In *>(in), static_cast<Out *>(out), n);
    return (int)cudaGetLastError();
}

extern "C" int bench_copy_convert(dlscan_type in_type, dlscan_type out_type, const void *in,
                                  void *out, size_t n, cudaStream_t stream)
{
    if ((uintptr_t)in % 16 || (uintptr_t)out % 16)
        return (int)cudaErrorMisalignedAddress;
    if (n == 0)
        return (int)cudaSuccess;
    if (in_type == DLSCAN_UINT8 && out_type == DLSCAN_INT32)
        return copy_convert<uint8_t, int32_t>(in, out, n, stream);
    if (in_type == DLSCAN_UINT8 && out_type == DLSCAN_INT64)
        return copy_convert<uint8_t, int64_t>(in, out, n, stream);
    if (in_type == DLSCAN_INT32 && out_type == DLSCAN_INT64)
        return copy_convert<int32_t, int64_t>(in, out, n, stream);
    if (in_type == DLSCAN_FLOAT16 && out_type == DLSCAN_FLOAT32)
        return copy_convert<__half, float>(in, out, n, stream);
    if (in_type == DLSCAN_BFLOAT16 && out_type == DLSCAN_FLOAT32)
        return copy_convert<__nv_bfloat16, float>(in, out, n, stream);
    if (in_type == DLSCAN_INT16 && out_type == DLSCAN_INT32)
        return copy_convert<int16_t, int32_t>(in, out, n, stream);
    return (int)cudaErrorNotSupported;
}
