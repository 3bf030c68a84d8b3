/*
 * scan_kernel.cu: the single-pass inclusive/exclusive scan kernel and its launcher.
 *
 * One block per tile; the grid covers the input in one launch. Each thread holds
 * ROWS x VEC items in registers: ROWS 16-byte loads (VEC items each), one per row, the 32
 * lanes of a warp side by side in a row, so each warp load is 512 contiguous bytes. Each
 * item is read once and written once.
 *
 *   1. take a tile from the counter (tile.cuh);
 *   2. load it into registers;
 *   3. reduce each lane's row, and get every row's exclusive prefix over the whole input
 *      through warp scans, a block scan and the look-back (tile.cuh, lookback.h);
 *   4. scan each row in registers from its prefix and store it;
 *   5. count the block done (the last one resets the counter for the next call).
 *
 * Pointers that are not 16-byte aligned take the same kernel with element-wide accesses
 * (VECTOR_ACCESS = false). Build-time knobs for tuning: DL_SCAN_THREADS,
 * DL_SCAN_ROWS_4B, DL_SCAN_ROWS_8B, DL_SCAN_STREAMING (cache-streaming hints).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "launch.h"
#include "lookback.h"
#include "ops.cuh"
#include "tile.cuh"

#ifndef DL_SCAN_THREADS
#define DL_SCAN_THREADS 256
#endif
#ifndef DL_SCAN_ROWS_4B
#define DL_SCAN_ROWS_4B 4
#endif
#ifndef DL_SCAN_ROWS_8B
#define DL_SCAN_ROWS_8B 4
#endif
#ifndef DL_SCAN_STREAMING
#define DL_SCAN_STREAMING 1
#endif

template <typename T> struct dl_scan_shape {
    static constexpr int threads = DL_SCAN_THREADS;
    static constexpr int warps = threads / 32;
    static constexpr int vec = 16 / sizeof(T); /* items per 16-byte access */
    static constexpr int rows = sizeof(T) == 4 ? DL_SCAN_ROWS_4B : DL_SCAN_ROWS_8B;
    static constexpr int items_per_warp = 32 * vec * rows;
    static constexpr int tile_items = threads * vec * rows;
};

template <typename T, int VEC> union dl_vector {
    uint4 raw;
    T item[VEC];
};

/* Loads one row (VEC items from idx on); items past n read as the identity. */
template <typename T, typename Op, int VEC, bool VECTOR_ACCESS>
__device__ __forceinline__ void dl_load_row(const T *in, uint64_t idx, uint64_t n, bool whole,
                                            T (&v)[VEC])
{
    if (VECTOR_ACCESS && (whole || idx + VEC <= n)) {
        dl_vector<T, VEC> u;
        const uint4 *p = reinterpret_cast<const uint4 *>(in + idx);
        u.raw = DL_SCAN_STREAMING ? __ldcs(p) : *p;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            v[e] = u.item[e];
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        v[e] = (whole || idx + e < n) ? in[idx + e] : Op::identity();
}

template <typename T, int VEC, bool VECTOR_ACCESS>
__device__ __forceinline__ void dl_store_row(T *out, uint64_t idx, uint64_t n, bool whole,
                                             const T (&v)[VEC])
{
    if (VECTOR_ACCESS && (whole || idx + VEC <= n)) {
        dl_vector<T, VEC> u;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            u.item[e] = v[e];
        uint4 *p = reinterpret_cast<uint4 *>(out + idx);
        if (DL_SCAN_STREAMING)
            __stcs(p, u.raw);
        else
            *p = u.raw;
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        if (whole || idx + e < n)
            out[idx + e] = v[e];
}

/* One block per tile: see the file comment. */
template <typename T, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_THREADS) dl_scan_kernel(const dl_scan_params p)
{
    using S = dl_scan_shape<T>;
    __shared__ dl_tile_shared<T, S::warps, LEFT_FOLD> sh;
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;

    uint32_t tile, epoch;
    dl_tile_take(p.control, sh, &tile, &epoch);

    const T *in = static_cast<const T *>(p.in);
    T *out = static_cast<T *>(p.out);
    const uint64_t tile_base = (uint64_t)tile * S::tile_items;
    const bool whole = tile_base + S::tile_items <= p.n;
    const uint64_t warp_base = tile_base + (uint64_t)warp * S::items_per_warp;

    T v[S::rows][S::vec];
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
        dl_load_row<T, Op, S::vec, VECTOR_ACCESS>(in, warp_base + (uint64_t)(r * 32 + lane) * S::vec,
                                                  p.n, whole, v[r]);

    T lane_sum[S::rows];
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        lane_sum[r] = v[r][0];
#pragma unroll
        for (int e = 1; e < S::vec; ++e)
            lane_sum[r] = Op()(lane_sum[r], v[r][e]);
    }

    T row_prefix[S::rows];
    dl_tile_prefixes<T, Op, LEFT_FOLD, S::rows, S::warps>(
        sh, lane_sum, row_prefix, tile, epoch, dl_value_from_bits<T>(p.seed_bits), p.descriptors,
        p.count_stats ? p.control->stats : nullptr);

#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        T running = row_prefix[r];
#pragma unroll
        for (int e = 0; e < S::vec; ++e) {
            const T item = v[r][e];
            if (p.exclusive) {
                v[r][e] = running;
                running = Op()(running, item);
            } else {
                running = Op()(running, item);
                v[r][e] = running;
            }
        }
        dl_store_row<T, S::vec, VECTOR_ACCESS>(out, warp_base + (uint64_t)(r * 32 + lane) * S::vec,
                                               p.n, whole, v[r]);
    }

    dl_tile_finish(p.control, epoch, p.descriptors, p.descriptor_words);
}

/* Picks the instantiation for T and Op: element or vector accesses, tree or left fold. */
struct dl_scan_launcher {
    template <typename T, typename Op>
    static int run(const dl_scan_params *p, int left_fold, cudaStream_t stream)
    {
        using S = dl_scan_shape<T>;
        const uint64_t tiles = (p->n + S::tile_items - 1) / S::tile_items;
        const bool vector = (uintptr_t)p->in % 16 == 0 && (uintptr_t)p->out % 16 == 0;
        const bool fold = left_fold && dl_fold_order_matters<T, Op>::value;
        const dim3 grid((unsigned)tiles), block(S::threads);
        if (vector && fold)
            dl_scan_kernel<T, Op, true, dl_fold_order_matters<T, Op>::value><<<grid, block, 0, stream>>>(*p);
        else if (vector)
            dl_scan_kernel<T, Op, true, false><<<grid, block, 0, stream>>>(*p);
        else if (fold)
            dl_scan_kernel<T, Op, false, dl_fold_order_matters<T, Op>::value><<<grid, block, 0, stream>>>(*p);
        else
            dl_scan_kernel<T, Op, false, false><<<grid, block, 0, stream>>>(*p);
        return (int)cudaGetLastError();
    }
};

extern "C" int dl_gpu_scan_launch(const dl_scan_params *params, dlscan_type type, dlscan_op op,
                                  int left_fold, cudaStream_t stream)
{
    if (params->n == 0)
        return (int)cudaSuccess;
    return dl_dispatch<dl_scan_launcher>(type, op, params, left_fold, stream);
}

extern "C" size_t dl_gpu_tile_items(dlscan_type type)
{
    switch (type) {
    case DLSCAN_INT32:
    case DLSCAN_UINT32:
    case DLSCAN_FLOAT32: return dl_scan_shape<uint32_t>::tile_items;
    case DLSCAN_INT64:
    case DLSCAN_UINT64:
    case DLSCAN_FLOAT64: return dl_scan_shape<uint64_t>::tile_items;
    default: return 0;
    }
}
