/*
 * baseline_tile.cuh: what the baselines of baselines.cu and ablations.cu share.
 *
 *   bench_sum_kind      which value type a sum runs on: integer sums run as unsigned sums of
 *                       the same width (two's-complement wrap-around, no undefined behaviour);
 *   bench_level_items   the storage of a recursive scan's per-chunk sums, all levels;
 *   bench_tile_*        the tile of dlscan's one-block-per-tile kernel (dl_scan_kernel,
 *                       device/scan_kernel.cu), so that reduce-then-scan and the single-pass
 *                       ablations move data exactly as dlscan does: 256 threads, each holding
 *                       ROWS x VEC items in registers, one 16-byte access per row, the 32 lanes
 *                       of a warp side by side in a row; warp w owns a contiguous run of the
 *                       tile, row r before row r+1, lane l before lane l+1 within a row.
 *
 * A tile's block scan is three steps: bench_tile_scan_rows (warp scans of each row, a block
 * scan of the warp totals, the tile's aggregate in warp 0), the caller's own step that puts
 * the tile's exclusive prefix in sh.tile_prefix, a __syncthreads(), then
 * bench_tile_scan_store (each row scanned from its prefix, stored).
 */
#ifndef DLSCAN_BENCH_BASELINE_TILE_CUH
#define DLSCAN_BENCH_BASELINE_TILE_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "ops.cuh"
#include "tile.cuh"
#include "variants.h"

/* The single-pass baselines (ablations.cu), gathered by bench_baseline_variants. */
const bench_variant *bench_ablation_variants(int *count);

/* ---------------------------------------------------------------- value types */

enum bench_sum_kind { BENCH_SUM_U32, BENCH_SUM_U64, BENCH_SUM_F32, BENCH_SUM_F64, BENCH_SUM_NONE };

static inline int bench_sum_kind_of(dlscan_type type)
{
    switch (type) {
    case DLSCAN_INT32:
    case DLSCAN_UINT32: return BENCH_SUM_U32;
    case DLSCAN_INT64:
    case DLSCAN_UINT64: return BENCH_SUM_U64;
    case DLSCAN_FLOAT32: return BENCH_SUM_F32;
    case DLSCAN_FLOAT64: return BENCH_SUM_F64;
    default: return BENCH_SUM_NONE;
    }
}

static inline size_t bench_sum_size(int kind)
{
    return kind == BENCH_SUM_U32 || kind == BENCH_SUM_F32 ? 4 : 8;
}

/* The baselines implement inclusive sums only. */
static inline int bench_inclusive_sum_only(dlscan_type type, dlscan_op op, int exclusive)
{
    return op == DLSCAN_SUM && !exclusive && bench_sum_kind_of(type) != BENCH_SUM_NONE;
}

/* ---------------------------------------------------------------- recursive levels */

/* Each level of per-chunk sums starts on a multiple of 4 items (16 bytes or more). */
static inline size_t bench_level_round(size_t items) { return (items + 3) / 4 * 4; }

/*
 * Items of storage for the per-chunk sums of a recursive scan of n items, all levels: level
 * 1 has one sum per chunk of the input, level 2 one per chunk of level 1, and so on, until a
 * level fits in one chunk (which is scanned in place and needs no level after it). Level
 * sizes grow with n, so the storage for max_n serves every n <= max_n.
 */
static inline size_t bench_level_items(size_t n, size_t chunk)
{
    size_t total = 0;
    while (n > chunk) {
        n = (n + chunk - 1) / chunk;
        total += bench_level_round(n);
    }
    return total;
}

/* ---------------------------------------------------------------- dlscan's tile */

/* dlscan's tile (tile.cuh, policy.h). */
#define BENCH_TILE_THREADS DL_SCAN_THREADS
template <typename T> using bench_tile_shape = dl_scan_shape<T>;

/* Shared memory of one tile's block. tile, epoch and ticket_base are what dl_tile_take
 * (tile.cuh) fills. */
template <typename T> struct bench_tile_shared {
    uint32_t tile;
    uint32_t epoch;
    uint32_t ticket_base;
    T warp_prefix[BENCH_TILE_THREADS / 32]; /* first each warp's total, then its exclusive prefix */
    T tile_prefix;                          /* the tile's exclusive prefix */
};

template <typename T> union bench_vector {
    uint4 raw;
    T item[16 / sizeof(T)];
};

/* Both pointers allow 16-byte accesses. */
static inline int bench_aligned16(const void *a, const void *b)
{
    return ((uintptr_t)a | (uintptr_t)b) % 16 == 0;
}

/* The first item of this thread's row r in the tile starting at tile_base. */
template <typename T>
__device__ __forceinline__ uint64_t bench_tile_row_index(uint64_t tile_base, int r)
{
    using S = bench_tile_shape<T>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    return tile_base + (uint64_t)warp * S::items_per_warp + (uint64_t)(r * 32 + lane) * S::vec;
}

/* Loads VEC items from idx on; items at n or past it read as the identity. One 16-byte load
 * where the pointer is aligned and the row is whole, item loads otherwise. `streaming`
 * (a constant at every call) picks the evict-first hint (.cs) that dlscan uses by default. */
template <typename T, typename Op>
__device__ __forceinline__ void bench_tile_load_row(const T *in, uint64_t idx, uint64_t n,
                                                    bool aligned, bool streaming,
                                                    T (&v)[bench_tile_shape<T>::vec])
{
    constexpr int VEC = bench_tile_shape<T>::vec;
    if (aligned && idx + VEC <= n) {
        bench_vector<T> u;
        const uint4 *p = reinterpret_cast<const uint4 *>(in + idx);
        u.raw = streaming ? __ldcs(p) : *p;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            v[e] = u.item[e];
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        v[e] = idx + e < n ? in[idx + e] : Op::identity();
}

/* Stores the items of v that lie below n, as bench_tile_load_row loads them. */
template <typename T>
__device__ __forceinline__ void bench_tile_store_row(T *out, uint64_t idx, uint64_t n, bool aligned,
                                                     bool streaming,
                                                     const T (&v)[bench_tile_shape<T>::vec])
{
    constexpr int VEC = bench_tile_shape<T>::vec;
    if (aligned && idx + VEC <= n) {
        bench_vector<T> u;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            u.item[e] = v[e];
        uint4 *p = reinterpret_cast<uint4 *>(out + idx);
        if (streaming)
            __stcs(p, u.raw);
        else
            *p = u.raw;
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        if (idx + e < n)
            out[idx + e] = v[e];
}

/* This thread's rows of the tile starting at tile_base. */
template <typename T, typename Op>
__device__ __forceinline__ void bench_tile_load(
    const T *in, uint64_t tile_base, uint64_t n, bool aligned, bool streaming,
    T (&v)[bench_tile_shape<T>::rows][bench_tile_shape<T>::vec])
{
#pragma unroll
    for (int r = 0; r < bench_tile_shape<T>::rows; ++r)
        bench_tile_load_row<T, Op>(in, bench_tile_row_index<T>(tile_base, r), n, aligned, streaming,
                                   v[r]);
}

/*
 * Step 1 of the tile's block scan. For each row r: lane_exclusive[r] is the reduction of the
 * row's items held by lower lanes of this warp, row_total[r] the reduction of the whole row.
 * Warp 0 then scans the warp totals: sh.warp_prefix[w] becomes warp w's exclusive prefix
 * within the tile, and the tile's aggregate is returned in every lane of warp 0 (the identity
 * in other warps). Synchronizes the block once, before warp 0 reads the warp totals; warp 0
 * writes sh.warp_prefix after that barrier, so the caller synchronizes again before step 3.
 */
template <typename T, typename Op>
__device__ __forceinline__ T bench_tile_scan_rows(
    bench_tile_shared<T> &sh, const T (&v)[bench_tile_shape<T>::rows][bench_tile_shape<T>::vec],
    T (&lane_exclusive)[bench_tile_shape<T>::rows], T (&row_total)[bench_tile_shape<T>::rows])
{
    using S = bench_tile_shape<T>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T warp_total = Op::identity();
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        T lane_sum = v[r][0];
#pragma unroll
        for (int e = 1; e < S::vec; ++e)
            lane_sum = Op()(lane_sum, v[r][e]);
        const T inclusive = dl_warp_inclusive_scan<T, Op>(lane_sum);
        row_total[r] = dl_shfl(inclusive, 31);
        const T before = dl_shfl_up(inclusive, 1);
        lane_exclusive[r] = lane == 0 ? Op::identity() : before;
        warp_total = Op()(warp_total, row_total[r]);
    }
    if (lane == 0)
        sh.warp_prefix[warp] = warp_total;
    __syncthreads();

    T aggregate = Op::identity();
    if (warp == 0) {
        /* Lane l reads, then overwrites, slot l only. */
        const T total = lane < S::warps ? sh.warp_prefix[lane] : Op::identity();
        const T inclusive = dl_warp_inclusive_scan<T, Op>(total);
        aggregate = dl_shfl(inclusive, S::warps - 1);
        const T before = dl_shfl_up(inclusive, 1);
        if (lane < S::warps)
            sh.warp_prefix[lane] = lane == 0 ? Op::identity() : before;
    }
    return aggregate;
}

/* Step 3 (after the caller has set sh.tile_prefix and synchronized the block): scans this
 * thread's rows from their exclusive prefixes over the whole input and stores them
 * (inclusive). */
template <typename T, typename Op>
__device__ __forceinline__ void bench_tile_scan_store(
    T *out, uint64_t tile_base, uint64_t n, bool aligned, bool streaming,
    const bench_tile_shared<T> &sh, T (&v)[bench_tile_shape<T>::rows][bench_tile_shape<T>::vec],
    const T (&lane_exclusive)[bench_tile_shape<T>::rows],
    const T (&row_total)[bench_tile_shape<T>::rows])
{
    using S = bench_tile_shape<T>;
    const int warp = threadIdx.x / 32;
    T running = Op()(sh.tile_prefix, sh.warp_prefix[warp]);
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        T item_inclusive = Op()(running, lane_exclusive[r]);
#pragma unroll
        for (int e = 0; e < S::vec; ++e) {
            item_inclusive = Op()(item_inclusive, v[r][e]);
            v[r][e] = item_inclusive;
        }
        bench_tile_store_row<T>(out, bench_tile_row_index<T>(tile_base, r), n, aligned, streaming,
                                v[r]);
        running = Op()(running, row_total[r]);
    }
}

#endif /* DLSCAN_BENCH_BASELINE_TILE_CUH */
