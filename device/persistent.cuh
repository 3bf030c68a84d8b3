/*
 * persistent.cuh: what the single-pass kernels share beyond the look-back: the tile shape
 * and its build-time knobs, 16-byte loads and stores of a tile's rows, and the persistent
 * kernels' machinery: a ring of shared-memory stages filled by Hopper's bulk-copy engine
 * (cp.async.bulk, completing on mbarriers) and the producer that draws tickets and fills it.
 *
 * A tile: 256 threads, each with ROWS x VEC items in registers, one 16-byte access per row,
 * the 32 lanes of a warp side by side in a row (512 contiguous bytes per warp access); warp w
 * owns a contiguous run of the tile, rows in order (the layout tile.cuh's prefixes assume).
 *
 * Build-time knobs for tuning (bench/NOTES.md has the measurements): DL_SCAN_ROWS_4B,
 * DL_SCAN_ROWS_8B (16-byte accesses per thread and tile), DL_SCAN_STAGES (the deepest ring;
 * dl_ring_stages() may choose fewer), DL_SCAN_BLOCKS_PER_SM, DL_SCAN_STREAM_LOADS and
 * DL_SCAN_STREAM_STORES (cache-streaming hints, .cs), DL_SCAN_LOAD_EVICT_FIRST (the scan's
 * bulk copies with an L2 evict-first policy), DL_SCAN_DEPENDENT_LAUNCH (programmatic dependent
 * launches on sm_90; the launcher's dl_launch), DL_SCAN_REDUCE_CHAINS (the reducer warp's
 * 16-byte vectors reduced side by side per lane), DL_SCAN_COMPUTE_FIRST_TILE (the persistent
 * scan's compute warps take a block's only tile alone; scan_kernel.cu),
 * DL_SCAN_FEW_TILES_TRANSPOSED_8B (64-bit tiles of the few-tiles kernel take the transposed
 * warp scan of tile.cuh), DL_SCAN_PERSISTENT_SLOTS (the persistent scan's look-back window:
 * slots per lane, lookback.h; the left fold's and the other kernels' is DL_SLOTS_PER_LANE),
 * and a diagnostic:
 * DL_SCAN_COPY_ONLY = 1 makes the persistent scan a copy through its ring (wrong results; the
 * ring's own ceiling).
 */
#ifndef DLSCAN_PERSISTENT_CUH
#define DLSCAN_PERSISTENT_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "lookback.h"
#include "tile.cuh"

#define DL_SCAN_THREADS 256
#ifndef DL_SCAN_ROWS_4B
#define DL_SCAN_ROWS_4B 8
#endif
#ifndef DL_SCAN_ROWS_8B
#define DL_SCAN_ROWS_8B 8
#endif
#ifndef DL_SCAN_STAGES
#define DL_SCAN_STAGES 3
#endif
#ifndef DL_SCAN_BLOCKS_PER_SM
#define DL_SCAN_BLOCKS_PER_SM 2
#endif
#ifndef DL_SCAN_STREAM_LOADS
#define DL_SCAN_STREAM_LOADS 1
#endif
#ifndef DL_SCAN_STREAM_STORES
#define DL_SCAN_STREAM_STORES 1
#endif
#ifndef DL_SCAN_DEPENDENT_LAUNCH
#define DL_SCAN_DEPENDENT_LAUNCH 1
#endif
#ifndef DL_SCAN_LOAD_EVICT_FIRST
#define DL_SCAN_LOAD_EVICT_FIRST 1
#endif
#ifndef DL_SCAN_REDUCE_CHAINS
#define DL_SCAN_REDUCE_CHAINS 4
#endif
#ifndef DL_SCAN_COMPUTE_FIRST_TILE
#define DL_SCAN_COMPUTE_FIRST_TILE 1
#endif
#ifndef DL_SCAN_FEW_TILES_TRANSPOSED_8B
#define DL_SCAN_FEW_TILES_TRANSPOSED_8B 1
#endif
#ifndef DL_SCAN_PERSISTENT_SLOTS
#define DL_SCAN_PERSISTENT_SLOTS 1
#endif
#ifndef DL_SCAN_COPY_ONLY
#define DL_SCAN_COPY_ONLY 0
#endif

template <typename T> struct dl_scan_shape {
    static constexpr int threads = DL_SCAN_THREADS;
    static constexpr int warps = threads / 32;
    static constexpr int vec = 16 / sizeof(T); /* items per 16-byte access */
    static constexpr int rows = sizeof(T) == 4 ? DL_SCAN_ROWS_4B : DL_SCAN_ROWS_8B;
    static constexpr int items_per_warp = 32 * vec * rows;
    static constexpr int tile_items = threads * vec * rows;
    static constexpr int tile_bytes = tile_items * (int)sizeof(T);
    /* the transposed warp scan's passes (tile.cuh): its scratch near 1 KB per warp */
    static constexpr int scratch_passes = sizeof(T) == 8 ? 2 : 1;
};

template <typename T, int VEC> union dl_vector {
    uint4 raw;
    T item[VEC];
};

/* ---------------------------------------------------------------- loads and stores */

/* One 16-byte load from global memory, under the streaming-load knob. */
__device__ __forceinline__ uint4 dl_load_vector(const void *p)
{
    const uint4 *v = static_cast<const uint4 *>(p);
    return DL_SCAN_STREAM_LOADS ? __ldcs(v) : *v;
}

/* Loads one row (VEC items from idx on) from global memory; items past n read as the
 * identity. */
template <typename T, typename Op, int VEC, bool VECTOR_ACCESS>
__device__ __forceinline__ void dl_load_row(const T *in, uint64_t idx, uint64_t n, bool whole,
                                            T (&v)[VEC])
{
    if (VECTOR_ACCESS && (whole || idx + VEC <= n)) {
        dl_vector<T, VEC> u;
        u.raw = dl_load_vector(in + idx);
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
        if (DL_SCAN_STREAM_STORES)
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

/* This thread's rows of a tile from global memory. */
template <typename T, typename Op, bool VECTOR_ACCESS>
__device__ __forceinline__ void dl_load_tile(const T *in, uint64_t tile_base, uint64_t n,
                                             T (&v)[dl_scan_shape<T>::rows][dl_scan_shape<T>::vec])
{
    using S = dl_scan_shape<T>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool whole = tile_base + S::tile_items <= n;
    const uint64_t warp_base = tile_base + (uint64_t)warp * S::items_per_warp;
    if (VECTOR_ACCESS && whole) {
        /* A whole tile: every row's load is issued before any is used. (Through
         * dl_load_row's per-row bound checks, ptxas loaded each row of 8-byte items into the
         * same registers and waited for it before the next: eight L2 round trips in a row,
         * 1.1-1.4 us of every one-block 64-bit tile; bench/NOTES.md, section 19.) */
        dl_vector<T, S::vec> u[S::rows];
#pragma unroll
        for (int r = 0; r < S::rows; ++r)
            u[r].raw = dl_load_vector(in + warp_base + (uint64_t)(r * 32 + lane) * S::vec);
#pragma unroll
        for (int r = 0; r < S::rows; ++r)
#pragma unroll
            for (int e = 0; e < S::vec; ++e)
                v[r][e] = u[r].item[e];
        return;
    }
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
        dl_load_row<T, Op, S::vec, VECTOR_ACCESS>(in, warp_base + (uint64_t)(r * 32 + lane) * S::vec,
                                                  n, whole, v[r]);
}

/* This thread's rows of a tile to global memory, each row with dl_store_row's bound check;
 * items past n are not written. */
template <typename T, bool VECTOR_ACCESS>
__device__ __forceinline__ void dl_store_tile_rows(T *out, uint64_t tile_base, uint64_t n,
                                                   const T (&v)[dl_scan_shape<T>::rows][dl_scan_shape<T>::vec])
{
    using S = dl_scan_shape<T>;
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
template <typename T, bool VECTOR_ACCESS>
__device__ __forceinline__ void dl_store_tile(T *out, uint64_t tile_base, uint64_t n,
                                              const T (&v)[dl_scan_shape<T>::rows][dl_scan_shape<T>::vec])
{
    using S = dl_scan_shape<T>;
    if (!VECTOR_ACCESS || tile_base + S::tile_items > n) {
        dl_store_tile_rows<T, VECTOR_ACCESS>(out, tile_base, n, v);
        return;
    }
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T *warp_out = out + tile_base + (uint64_t)warp * S::items_per_warp + (uint64_t)lane * S::vec;
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
        dl_store_row<T, S::vec, true>(warp_out + r * 32 * S::vec, 0, 0, true, v[r]);
}

/* ---------------------------------------------------------------- persistent kernels */

#define DL_SCAN_PERSISTENT_THREADS (DL_SCAN_THREADS + 64) /* + a producer and a reducer warp */

__device__ __forceinline__ uint32_t dl_smem_address(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void dl_mbar_init(uint64_t *bar, uint32_t arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(dl_smem_address(bar)), "r"(arrivals)
                 : "memory");
}

__device__ __forceinline__ void dl_mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(dl_smem_address(bar)) : "memory");
}

/* Waits until the barrier's phase of the given parity has completed. */
__device__ __forceinline__ void dl_mbar_wait(uint64_t *bar, uint32_t parity)
{
    uint32_t done = 0;
    while (!done)
        asm volatile("{ .reg .pred ready;\n"
                     "  mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2;\n"
                     "  selp.u32 %0, 1, 0, ready; }"
                     : "=r"(done)
                     : "r"(dl_smem_address(bar)), "r"(parity)
                     : "memory");
}

/* Arrives on the barrier, expecting `bytes` from bulk copies: the phase completes when
 * they are in. The stage's last readers were generic loads, hence the proxy fence. */
__device__ __forceinline__ void dl_bulk_expect(uint64_t *bar, uint32_t bytes)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(dl_smem_address(bar)),
                 "r"(bytes)
                 : "memory");
}

/* Has the bulk-copy engine bring `bytes` (a multiple of 16) from global `src` to shared
 * `dst`, counting them on the barrier. EVICT_FIRST marks the lines it reads in L2 as the
 * first to evict (streaming data, read once: the scan's, where it measured 1% faster at 2^24
 * to 2^26; compaction's lost 3-5% with it, bench/NOTES.md section 16). */
template <bool EVICT_FIRST = false>
__device__ __forceinline__ void dl_bulk_copy(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
    if (EVICT_FIRST) {
        uint64_t policy;
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
                     " [%0], [%1], %2, [%3], %4;"
                     ::"r"(dl_smem_address(dst)), "l"(src), "r"(bytes), "r"(dl_smem_address(bar)), "l"(policy)
                     : "memory");
        return;
    }
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dl_smem_address(dst)), "l"(src), "r"(bytes), "r"(dl_smem_address(bar))
                 : "memory");
}

/* The ring of stages and the three barriers of each. A stage's tile is `stage_tile` (the
 * call's tile count or more: no more tiles); `full` completes when its data is in shared
 * memory (at once for the partial last tile, which is read from global memory, and for the
 * end); `reduced` when the reducer has published its aggregate `stage_aggregate`; `empty`
 * when the compute warps are done with the stage, so it can be refilled. */
template <typename T, int WARPS, bool LEFT_FOLD, int STAGES>
struct dl_persistent_shared : dl_tile_shared<T, WARPS, LEFT_FOLD> {
    static constexpr int stages = STAGES;
    uint64_t full[STAGES];
    uint64_t reduced[STAGES];
    uint64_t empty[STAGES];
    uint32_t stage_tile[STAGES];
    T stage_aggregate[STAGES];
};

/* The ring's depth for stages of `stage_bytes`: DL_SCAN_STAGES, or as many as still let
 * DL_SCAN_BLOCKS_PER_SM blocks share an SM's shared memory, each with DL_RING_OTHER_BYTES
 * for its own variables and the system's reservation. (select_flagged's int32 stages carry
 * 8 KB of flags next to 32 KB of items: three of them would leave room for one block per
 * SM, which ran a third slower than two stages and two blocks; bench/NOTES.md.) */
#define DL_SM_SHARED_BYTES (228 * 1024) /* Hopper */
#define DL_RING_OTHER_BYTES (6 * 1024)
__host__ __device__ constexpr int dl_ring_stages(int stage_bytes)
{
    const int fit = (DL_SM_SHARED_BYTES / DL_SCAN_BLOCKS_PER_SM - DL_RING_OTHER_BYTES) / stage_bytes;
    return fit >= DL_SCAN_STAGES ? DL_SCAN_STAGES : fit > 1 ? fit : 1;
}

/* Checks, at compile time, that a persistent kernel's blocks fit as many to an SM as the
 * launcher counts on. */
template <typename SHARED> __host__ __device__ constexpr bool dl_ring_fits(int stage_bytes)
{
    return DL_SCAN_BLOCKS_PER_SM * (SHARED::stages * stage_bytes + (int)sizeof(SHARED) + 1024) <=
           DL_SM_SHARED_BYTES;
}

/* Thread 0: the ring's barriers; `full` and `reduced` have one arrival each, `empty` one
 * per compute warp. Every thread of the block calls it (it synchronizes them). */
template <typename SHARED> __device__ __forceinline__ void dl_ring_init(SHARED &sh, uint32_t compute_warps)
{
    if (threadIdx.x == 0) {
        for (int s = 0; s < SHARED::stages; ++s) {
            dl_mbar_init(&sh.full[s], 1);
            dl_mbar_init(&sh.reduced[s], 1);
            dl_mbar_init(&sh.empty[s], compute_warps);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
}

/* A field of a stage's header (its tile, the reducer's aggregate), read by lane 0 alone and
 * passed to the warp's other lanes. Lane 0 is the lane that then arrives on the barrier that
 * hands the stage on, so program order alone puts every read of the field before the
 * producer's next write to it. (When each lane read it, with __syncwarp before lane 0's
 * arrival, compute-sanitizer's racecheck now and then reported the producer's write as racing
 * with those reads.) */
template <typename V> __device__ __forceinline__ V dl_stage_header(const V &field)
{
    V value = V();
    if (threadIdx.x % 32 == 0)
        value = *const_cast<const volatile V *>(&field);
    return dl_shfl(value, 0);
}

/* Producer (lane 0 of its warp): draws a ticket for each free stage and has `fill` prefetch
 * that tile, until it draws one past the end (lookback.h, "Tickets"). fill(stage, tile,
 * full) issues the stage's bulk copies (dl_bulk_expect, then dl_bulk_copy) and returns true,
 * or returns false for a tile it leaves to global loads (the partial last tile); the
 * producer then completes the stage's phase itself. */
template <typename SHARED, typename FILL>
__device__ __forceinline__ void dl_persistent_produce(dl_control *control, SHARED &sh,
                                                      uint32_t tiles, const FILL &fill)
{
    if (threadIdx.x % 32 != 0)
        return;
    const uint32_t tickets = tiles + gridDim.x; /* each block draws one past the end */
    dl_ticket_state state;
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        if (k >= SHARED::stages)
            dl_mbar_wait(&sh.empty[s], (k / SHARED::stages - 1) & 1);
        uint32_t ticket;
        if (k == 0) {
            ticket = dl_ticket_draw_first(control, &state);
            sh.epoch = state.epoch; /* published to the other roles by the first `full` */
            sh.ticket_base = state.base;
        } else {
            ticket = dl_ticket_draw(control, state);
        }
        dl_ticket_check_last(control, ticket, tickets, state);
        sh.stage_tile[s] = ticket;
        if (ticket >= tiles || !fill(s, ticket, &sh.full[s]))
            dl_mbar_arrive(&sh.full[s]);
        if (ticket >= tiles)
            return;
    }
}

#endif /* DLSCAN_PERSISTENT_CUH */
