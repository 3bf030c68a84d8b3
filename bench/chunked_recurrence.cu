/*
 * chunked_recurrence.cu: the pattern of Mamba's selective-scan kernel, as bench_operator's
 * competitor for batched float32 linear recurrences h[t] = a[t] h[t-1] + b[t] over [B, L]: one
 * block per row, which walks its row in chunks of 256 threads x 8 items, scans each chunk's
 * (a, b) pairs (each thread its 8 items, then the warps by shuffles, then the block's 8 warps
 * in shared memory) and carries the chunk's last h into the next chunk serially. Each row
 * starts from h = 0. Written here against the same data as dlscan, not taken from Mamba.
 */
#include <cuda_runtime.h>
#include <stddef.h>

#include "chunked_recurrence.h"

#define CHUNK_THREADS 256
#define CHUNK_ITEMS 8

struct pair {
    float a, b;
};

/* (a1, b1) then (a2, b2): (a1 a2, a2 b1 + b2) */
__device__ __forceinline__ pair combine(pair x, pair y) { return pair{x.a * y.a, fmaf(y.a, x.b, y.b)}; }

__global__ void __launch_bounds__(CHUNK_THREADS) chunked_recurrence(const float *a, const float *b, float *h,
                                                                    size_t length)
{
    __shared__ pair warp_total[CHUNK_THREADS / 32];
    __shared__ float carried;
    const size_t row = blockIdx.x;
    const float *ra = a + row * length, *rb = b + row * length;
    float *rh = h + row * length;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (threadIdx.x == 0)
        carried = 0.0f;
    for (size_t chunk = 0; chunk < length; chunk += CHUNK_THREADS * CHUNK_ITEMS) {
        const size_t first = chunk + (size_t)threadIdx.x * CHUNK_ITEMS;
        pair v[CHUNK_ITEMS];
        const bool whole = first + CHUNK_ITEMS <= length && (length % 4) == 0;
        if (whole) {
            const float4 a0 = *reinterpret_cast<const float4 *>(ra + first);
            const float4 a1 = *reinterpret_cast<const float4 *>(ra + first + 4);
            const float4 b0 = *reinterpret_cast<const float4 *>(rb + first);
            const float4 b1 = *reinterpret_cast<const float4 *>(rb + first + 4);
            const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int k = 0; k < CHUNK_ITEMS; ++k)
                v[k] = pair{av[k], bv[k]};
        } else {
#pragma unroll
            for (int k = 0; k < CHUNK_ITEMS; ++k)
                v[k] = first + k < length ? pair{ra[first + k], rb[first + k]} : pair{1.0f, 0.0f};
        }
#pragma unroll
        for (int k = 1; k < CHUNK_ITEMS; ++k)
            v[k] = combine(v[k - 1], v[k]);
        /* the warp's inclusive scan of the threads' totals, then the block's warps */
        pair mine = v[CHUNK_ITEMS - 1];
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            const pair other = {__shfl_up_sync(0xffffffffu, mine.a, d), __shfl_up_sync(0xffffffffu, mine.b, d)};
            if (lane >= d)
                mine = combine(other, mine);
        }
        if (lane == 31)
            warp_total[warp] = mine;
        __syncthreads();
        pair before = {1.0f, carried}; /* the chunk's carry, as a state */
        for (int w = 0; w < warp; ++w)
            before = combine(before, warp_total[w]);
        const pair lane_before = {__shfl_up_sync(0xffffffffu, mine.a, 1), __shfl_up_sync(0xffffffffu, mine.b, 1)};
        if (lane > 0)
            before = combine(before, lane_before);
        float out[CHUNK_ITEMS];
#pragma unroll
        for (int k = 0; k < CHUNK_ITEMS; ++k)
            out[k] = combine(before, v[k]).b;
        if (whole) {
            *reinterpret_cast<float4 *>(rh + first) = make_float4(out[0], out[1], out[2], out[3]);
            *reinterpret_cast<float4 *>(rh + first + 4) = make_float4(out[4], out[5], out[6], out[7]);
        } else {
#pragma unroll
            for (int k = 0; k < CHUNK_ITEMS; ++k)
                if (first + k < length)
                    rh[first + k] = out[k];
        }
        __syncthreads(); /* every thread has read carried and warp_total */
        const size_t last = chunk + CHUNK_THREADS * CHUNK_ITEMS < length ? chunk + CHUNK_THREADS * CHUNK_ITEMS : length;
        if (first < last && last <= first + CHUNK_ITEMS) /* the thread that holds the chunk's last item */
            carried = out[last - 1 - first];
        __syncthreads();
    }
}

extern "C" int bench_chunked_recurrence(const float *a, const float *b, float *h, size_t rows, size_t length,
                                        cudaStream_t stream)
{
    if (rows == 0 || length == 0)
        return 0;
    chunked_recurrence<<<(unsigned)rows, CHUNK_THREADS, 0, stream>>>(a, b, h, length);
    return (int)cudaGetLastError();
}
