/*
 * tile.cuh: a tile, as every single-pass kernel works it, around the look-back of
 * lookback.cuh:
 *   dl_scan_shape     the tile: 256 threads, each with ROWS x VEC items in registers, one
 *                     16-byte access per row, the 32 lanes of a warp side by side in a row
 *                     (512 contiguous bytes per warp access); warp w owns a contiguous run of
 *                     the tile, rows in order, and within a row lane l comes before lane l+1
 *                     (the layout the prefixes below assume);
 *   dl_load_tile, dl_store_tile, dl_store_tile_rows  a thread's rows from and to global
 *                     memory, one access per row, bound-checked only in a partial tile; items
 *                     of a narrower type than T are converted as they are loaded, and T is
 *                     rounded to the output type as it is stored (ops.cuh);
 *   dl_key_heads, dl_heads_before  which of a thread's rows' items start a run of equal keys
 *                     (segmented scans, run-length encoding, reduce-by-key);
 *   (block.cuh, which this includes: dl_tile_take, thread 0 takes the block's tile from the
 *                     handle's counter; dl_tile_warp_prefix, a warp's exclusive prefix over the
 *                     whole input from the warps' totals: a block scan, then warp 0 publishes
 *                     the tile's aggregate, looks back and publishes its inclusive prefix;
 *                     dl_tile_prefixes, each lane's per-row partials to exclusive prefixes over
 *                     the whole input: one warp scan per row, then dl_tile_warp_prefix);
 *   dl_tile_publish_aggregate  the tile's aggregate published before any scan (the
 *                     persistent scan's block that takes its only tile alone);
 *   dl_tile_segment_prefix  dl_tile_warp_prefix for a segmented scan's tile;
 *   dl_launch         a kernel's launch, its shared memory prepared at its first on a
 *                     device, dependent on the stream's previous kernel (sm_90).
 * With the last ticket's reset (lookback.cuh), the next call needs no initialization launch.
 */
#ifndef DLSCAN_TILE_CUH
#define DLSCAN_TILE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "block.cuh"
#include "enqueue.h"
#include "ops.cuh"
#include "policy.h"

/* ---------------------------------------------------------------- the tile's shape */

/* ROWS: the scan's rows by default; segmented scans take fewer (policy.h, DL_SEGMENT_ROWS). */
template <typename T, int ROWS = sizeof(T) == 4 ? DL_SCAN_ROWS_4B : DL_SCAN_ROWS_8B> struct dl_scan_shape {
    static constexpr int threads = DL_SCAN_THREADS;
    static constexpr int warps = threads / 32;
    static constexpr int vec = 16 / sizeof(T); /* items per 16-byte access */
    static constexpr int rows = ROWS;
    static constexpr int items_per_warp = 32 * vec * rows;
    static constexpr int tile_items = threads * vec * rows;
    static constexpr int tile_bytes = tile_items * (int)sizeof(T);
    /* the transposed warp scan's passes (warp.cuh): its scratch near 1 KB per warp */
    static constexpr int scratch_passes = sizeof(T) == 16 ? 4 : sizeof(T) == 8 ? 2 : 1;
};

template <typename T, int VEC> union dl_vector {
    uint4 raw;
    T item[VEC];
};

/* An unsigned type of B bytes: one access of B bytes (32: two of 16, for a row of 8-byte keys
 * beside 4-byte items). */
template <int B> struct dl_raw;
template <> struct dl_raw<2> {
    using type = unsigned short;
};
template <> struct dl_raw<4> {
    using type = unsigned int;
};
template <> struct dl_raw<8> {
    using type = uint2;
};
template <> struct dl_raw<16> {
    using type = uint4;
};
struct dl_uint4x2 {
    uint4 low, high;
};
template <> struct dl_raw<32> {
    using type = dl_uint4x2;
};

/* A row of VEC items of X as one access: 16 bytes for X the size of the tile's T, fewer
 * for narrower items (a uint8 row of a 64-bit tile is 2 bytes). */
template <typename X, int VEC> union dl_row_items {
    using raw_type = typename dl_raw<VEC * (int)sizeof(X)>::type;
    raw_type raw;
    X item[VEC];
};

static_assert(dl_scan_shape<uint32_t>::tile_items == DL_SCAN_TILE_ITEMS_4B &&
                  dl_scan_shape<uint64_t>::tile_items == DL_SCAN_TILE_ITEMS_8B,
              "the tiles are the ones the host layer reserves descriptors for (policy.h)");

/* ---------------------------------------------------------------- loads and stores */

/* One row's load from global memory (R: one of dl_raw's sizes, 16 bytes for items the size of
 * the tile's T), marked as streaming (evict first: each item is read once; bench/NOTES.md,
 * "Loads, stores and cache hints"); stores are marked the same way. */
template <typename R> __device__ __forceinline__ R dl_load_raw(const void *p)
{
    if constexpr (sizeof(R) == 32) {
        const uint4 *q = static_cast<const uint4 *>(p);
        return R{__ldcs(q), __ldcs(q + 1)};
    } else {
        return __ldcs(static_cast<const R *>(p));
    }
}

/* Loads one row (VEC items from idx on) from global memory as values of T; items past n read
 * as the identity. */
template <typename T, typename Op, int VEC, bool VECTOR_ACCESS, typename IN>
__device__ __forceinline__ void dl_load_row(const IN *in, uint64_t idx, uint64_t n, bool whole,
                                            T (&v)[VEC])
{
    if (VECTOR_ACCESS && (whole || idx + VEC <= n)) {
        dl_row_items<IN, VEC> u;
        u.raw = dl_load_raw<typename dl_row_items<IN, VEC>::raw_type>(in + idx);
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            v[e] = dl_widen<T>(u.item[e]);
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        v[e] = (whole || idx + e < n) ? dl_widen<T>(in[idx + e]) : Op::identity();
}

template <typename T, int VEC, bool VECTOR_ACCESS, typename OUT>
__device__ __forceinline__ void dl_store_row(OUT *out, uint64_t idx, uint64_t n, bool whole,
                                             const T (&v)[VEC])
{
    if (VECTOR_ACCESS && (whole || idx + VEC <= n)) {
        dl_row_items<OUT, VEC> u;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            u.item[e] = dl_narrow<OUT>(v[e]);
        using R = typename dl_row_items<OUT, VEC>::raw_type;
        __stcs(reinterpret_cast<R *>(out + idx), u.raw);
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        if (whole || idx + e < n)
            out[idx + e] = dl_narrow<OUT>(v[e]);
}

/* This thread's rows of a tile from global memory, items of IN as values of T. */
template <typename T, typename Op, bool VECTOR_ACCESS, typename IN, int ROWS>
__device__ __forceinline__ void dl_load_tile(const IN *in, uint64_t tile_base, uint64_t n,
                                             T (&v)[ROWS][dl_scan_shape<T>::vec])
{
    using S = dl_scan_shape<T, ROWS>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool whole = tile_base + S::tile_items <= n;
    const uint64_t warp_base = tile_base + (uint64_t)warp * S::items_per_warp;
    if (VECTOR_ACCESS && whole) {
        /* A whole tile: every row's load is issued before any is used. (Through
         * dl_load_row's per-row bound checks, ptxas loaded each row of 8-byte items into the
         * same registers and waited for it before the next: eight L2 round trips in a row;
         * bench/NOTES.md, "Loads, stores and cache hints".) */
        using U = dl_row_items<IN, S::vec>;
        U u[S::rows];
#pragma unroll
        for (int r = 0; r < S::rows; ++r)
            u[r].raw = dl_load_raw<typename U::raw_type>(in + warp_base + (uint64_t)(r * 32 + lane) * S::vec);
#pragma unroll
        for (int r = 0; r < S::rows; ++r)
#pragma unroll
            for (int e = 0; e < S::vec; ++e)
                v[r][e] = dl_widen<T>(u[r].item[e]);
        return;
    }
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
        dl_load_row<T, Op, S::vec, VECTOR_ACCESS>(in, warp_base + (uint64_t)(r * 32 + lane) * S::vec,
                                                  n, whole, v[r]);
}

/* This thread's rows of a tile to global memory as OUT, each row with dl_store_row's bound
 * check; items past n are not written. */
template <typename T, bool VECTOR_ACCESS, typename OUT, int ROWS>
__device__ __forceinline__ void dl_store_tile_rows(OUT *out, uint64_t tile_base, uint64_t n,
                                                   const T (&v)[ROWS][dl_scan_shape<T>::vec])
{
    using S = dl_scan_shape<T, ROWS>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool whole = tile_base + S::tile_items <= n;
    const uint64_t warp_base = tile_base + (uint64_t)warp * S::items_per_warp;
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
        dl_store_row<T, S::vec, VECTOR_ACCESS>(out, warp_base + (uint64_t)(r * 32 + lane) * S::vec, n,
                                               whole, v[r]);
}

/* The same, storing a whole tile without the per-row checks (through them, each row's store
 * paid eight to ten instructions of 64-bit index arithmetic and compares). */
template <typename T, bool VECTOR_ACCESS, typename OUT, int ROWS>
__device__ __forceinline__ void dl_store_tile(OUT *out, uint64_t tile_base, uint64_t n,
                                              const T (&v)[ROWS][dl_scan_shape<T>::vec])
{
    using S = dl_scan_shape<T, ROWS>;
    if (!VECTOR_ACCESS || tile_base + S::tile_items > n) {
        dl_store_tile_rows<T, VECTOR_ACCESS>(out, tile_base, n, v);
        return;
    }
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    OUT *warp_out = out + tile_base + (uint64_t)warp * S::items_per_warp + (uint64_t)lane * S::vec;
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
        dl_store_row<T, S::vec, true>(warp_out + r * 32 * S::vec, 0, 0, true, v[r]);
}

/* ---------------------------------------------------------------- heads */

/* Bit r * VEC + e of the result is set where item e of this thread's row r starts a segment: its
 * key differs from the one before it. The key before a row's first item is the previous lane's
 * last (shuffled up), for lane 0 lane 31's last of the row before, and for the first row
 * `before`, the key before the warp's items; `at_start`: the warp's first item is the input's
 * first, a head in any case. */
template <typename K, int ROWS, int VEC>
__device__ __forceinline__ uint32_t dl_key_heads(const K (&key)[ROWS][VEC], K before, bool at_start)
{
    const int lane = threadIdx.x % 32;
    uint32_t heads = 0;
    K row_before = before;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const K from_left = dl_shfl_up(key[r][VEC - 1], 1);
        const K previous = lane ? from_left : row_before;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            heads |= (uint32_t)((e ? key[r][e - 1] : previous) != key[r][e]) << (r * VEC + e);
        row_before = dl_shfl(key[r][VEC - 1], 31);
    }
    if (at_start && lane == 0)
        heads |= 1u;
    return heads;
}

/* Clears the heads of items at or past n (a partial tile's): they are no items, and a head there
 * would tell the block that the tile holds one. warp_base: the warp's first item. */
template <int ROWS, int VEC>
__device__ __forceinline__ uint32_t dl_heads_before(uint32_t heads, uint64_t warp_base, uint64_t n)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            if (warp_base + (uint64_t)(r * 32 + lane) * VEC + e >= n)
                heads &= ~(1u << (r * VEC + e));
    return heads;
}

/* ---------------------------------------------------------------- launches; segmented and early aggregates */

/* The kernels let use their dynamic shared memory (the persistent kernels' stages; with their
 * static shared memory, more than the 48 KB a kernel gets unasked), per device. A kernel is let
 * use its stages at its first launch on a device, not when a handle is created: preparing every
 * persistent kernel there loaded them all, which defeats CUDA's lazy loading (a handle took
 * 48-66 ms on the H200). A set of (kernel, device) keys, filled with compare-and-swap: where two
 * threads race, both prepare the kernel, which is harmless; where the set is full, a kernel is
 * prepared at every launch. */
#define DL_PREPARED_SLOTS 4096
static unsigned long long dl_prepared_keys[DL_PREPARED_SLOTS];

static int dl_prepare(const void *kernel, size_t shared_bytes)
{
    if (shared_bytes == 0)
        return (int)cudaSuccess;
    int device = 0;
    const cudaError_t error = cudaGetDevice(&device);
    if (error != cudaSuccess)
        return (int)error;
    const unsigned long long key = (unsigned long long)(uintptr_t)kernel ^ ((unsigned long long)(device + 1) << 48);
    const unsigned long long hash = (key * 0x9e3779b97f4a7c15ull) >> 40;
    for (unsigned i = 0; i < DL_PREPARED_SLOTS; ++i) {
        unsigned long long *slot = &dl_prepared_keys[(hash + i) % DL_PREPARED_SLOTS];
        unsigned long long seen = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (seen == key)
            return (int)cudaSuccess;
        if (seen == 0) {
            const cudaError_t set =
                cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_bytes);
            if (set == cudaSuccess)
                __atomic_compare_exchange_n(slot, &seen, key, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
            return (int)set;
        }
    }
    return (int)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_bytes);
}

/* Launches `kernel` (its one parameter: `params`) on a 1-D grid with `shared_bytes` of dynamic
 * shared memory (dl_prepare), through enqueue.h's dl_enqueue: where the policy row has them
 * (`dependent`), as a programmatic dependent launch of the stream's previous kernel. Returns a
 * cudaError_t as int. */
template <typename PARAMS>
static int dl_launch(void (*kernel)(PARAMS), const PARAMS &params, dim3 grid, dim3 block,
                     size_t shared_bytes, int dependent, cudaStream_t stream)
{
    const int prepared = dl_prepare((const void *)kernel, shared_bytes);
    if (prepared != (int)cudaSuccess)
        return prepared;
    return dl_enqueue((const void *)kernel, &params, grid.x, block.x, shared_bytes, dependent, stream);
}

/*
 * The block's part of a segmented scan's tile (protocol.h, "Segments"), in place of
 * dl_tile_warp_prefix. warp_total: this warp's items under the segmented operator (heads
 * counted, the value since the last one, the init folded into every head). Returns, as a value
 * of T, the segment's value just before this warp's first item: what its first items continue.
 * The first WARPS warps of the block call it; it synchronizes them twice. `warp_segment` (WARPS
 * values), `tile_prefix` and `fold_buffer` are the block's shared memory. `first_is_head`, read
 * from lane 0 of warp 0: the tile's first item starts a segment, so the tile needs no look-back.
 * `is_published` = false: warp 0 publishes the tile's value (P where the tile holds a head, else
 * A). true: another warp did, `published` (the value the P after the look-back is built on).
 */
template <typename T, typename Op, bool LEFT_FOLD, int WARPS, bool SPECIALIZED, int SLOTS>
__device__ __forceinline__ T dl_tile_segment_prefix(dl_segment<uint32_t, T> *warp_segment, T *tile_prefix,
                                                    T *fold_buffer, dl_segment<uint32_t, T> warp_total,
                                                    bool first_is_head, uint32_t tile, uint32_t epoch,
                                                    dl_word *descriptors, const dl_probe &probe,
                                                    bool is_published, T published)
{
    using V = dl_segment<uint32_t, T>;
    using VOp = dl_segmented<uint32_t, T, Op>;
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0)
        warp_segment[warp] = warp_total;
    dl_tile_sync<SPECIALIZED, WARPS>();

    /* Warp 0: the warps' prefixes and the tile's value, then the descriptor protocol. */
    if (warp == 0) {
        const V total = lane < WARPS ? warp_segment[lane] : VOp::identity();
        const V inclusive = dl_warp_inclusive_scan<V, VOp>(total);
        const V tile_total = dl_shfl(inclusive, WARPS - 1);
        const V before = dl_shfl_up(inclusive, 1);
        if (lane < WARPS)
            warp_segment[lane] = lane == 0 ? VOp::identity() : before;
        const bool has_head = tile_total.heads != 0;
        const T value = is_published ? published : tile_total.value;
        if (!is_published && lane == 0)
            dl_publish_segment_value<T>(descriptors, tile, epoch, has_head, value, probe);
        T prefix = Op::identity();
        if (tile != 0 && !__shfl_sync(0xffffffffu, first_is_head, 0)) {
            prefix = dl_gpu_lookback<T, Op, LEFT_FOLD, SLOTS>(descriptors, tile, epoch, fold_buffer, probe);
            if (!has_head && lane == 0) {
                probe.pause(tile, 2);
                dl_gpu_publish<T>(descriptors, tile, epoch, DL_STATUS_P, Op()(prefix, value));
            }
        }
        if (lane == 0)
            *tile_prefix = prefix;
    }
    dl_tile_sync<SPECIALIZED, WARPS>();
    const V mine = warp_segment[warp];
    return mine.heads ? mine.value : Op()(*tile_prefix, mine.value);
}

/*
 * Publishes the tile's aggregate before any scan (for tile 0, its inclusive prefix, seed
 * first): each warp reduces its lanes' rows (a tree, then over its lanes) into `warp_totals`
 * (WARPS slots of shared memory), warp 0 the warps' totals over WARPS lanes only. Returns the
 * aggregate in warp 0 (dl_tile_warp_prefix's `published`); synchronizes the tile's warps once.
 */
template <typename T, typename Op, int ROWS, int WARPS, bool SPECIALIZED>
__device__ __forceinline__ T dl_tile_publish_aggregate(T *warp_totals, const T (&lane_sum)[ROWS],
                                                       uint32_t tile, uint32_t epoch, T seed,
                                                       dl_word *descriptors, const dl_probe &probe)
{
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const T lane_total = dl_reduce_pairwise<T, Op>(lane_sum);
    const T warp_total = dl_warp_reduce<T, Op>(lane_total);
    if (lane == 0)
        warp_totals[warp] = warp_total;
    dl_tile_sync<SPECIALIZED, WARPS>();
    T aggregate = Op::identity();
    if (warp == 0) {
        aggregate = dl_warp_reduce<T, Op, WARPS>(lane < WARPS ? warp_totals[lane] : Op::identity());
        if (lane == 0)
            dl_publish_aggregate<T, Op>(descriptors, tile, epoch, seed, aggregate, probe);
    }
    return aggregate;
}

#endif /* DLSCAN_TILE_CUH */
