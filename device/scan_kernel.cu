/*
 * scan_kernel.cu: the single-pass inclusive/exclusive scan kernels and their launcher.
 *
 * Both kernels work a tile the same way (dl_scan_tile): each of 256 threads holds ROWS x VEC
 * items in registers, one 16-byte access per row, the 32 lanes of a warp side by side in a
 * row (512 contiguous bytes per warp access); it reduces its rows, gets every row's
 * exclusive prefix over the whole input through warp scans, a block scan and the look-back
 * (tile.cuh, lookback.h), scans the rows from there and stores them. Each item is read once
 * and written once.
 *
 * dl_scan_persistent_kernel (sm_90, 16-byte aligned pointers; the default): a grid of a few
 *   blocks per SM, each with three roles. A producer warp draws tickets and has Hopper's
 *   bulk-copy engine prefetch those tiles into a ring of STAGES shared-memory buffers; a
 *   reducer warp reduces each tile as it lands and publishes its aggregate at once; eight
 *   compute warps scan the tiles in ring order (look-back, inclusive prefix, stores). A
 *   tile's ticket and load latency overlap the work on earlier tiles, and its aggregate is
 *   out as soon as its data is, however busy its block is.
 * dl_scan_kernel (any GPU, any alignment): one block per tile, loading from global memory
 *   directly; element-wide accesses where the pointers are not 16-byte aligned.
 *
 * Build-time knobs for tuning (bench/NOTES.md has the measurements): DL_SCAN_ROWS_4B,
 * DL_SCAN_ROWS_8B (16-byte accesses per thread and tile), DL_SCAN_STAGES, DL_SCAN_BLOCKS_PER_SM,
 * DL_SCAN_STREAM_LOADS and DL_SCAN_STREAM_STORES (cache-streaming hints, .cs).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "launch.h"
#include "lookback.h"
#include "ops.cuh"
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

template <typename T> struct dl_scan_shape {
    static constexpr int threads = DL_SCAN_THREADS;
    static constexpr int warps = threads / 32;
    static constexpr int vec = 16 / sizeof(T); /* items per 16-byte access */
    static constexpr int rows = sizeof(T) == 4 ? DL_SCAN_ROWS_4B : DL_SCAN_ROWS_8B;
    static constexpr int items_per_warp = 32 * vec * rows;
    static constexpr int tile_items = threads * vec * rows;
    static constexpr int tile_bytes = tile_items * (int)sizeof(T);
};

template <typename T, int VEC> union dl_vector {
    uint4 raw;
    T item[VEC];
};

/* ---------------------------------------------------------------- loads and stores */

/* Loads one row (VEC items from idx on) from global memory; items past n read as the
 * identity. */
template <typename T, typename Op, int VEC, bool VECTOR_ACCESS>
__device__ __forceinline__ void dl_load_row(const T *in, uint64_t idx, uint64_t n, bool whole,
                                            T (&v)[VEC])
{
    if (VECTOR_ACCESS && (whole || idx + VEC <= n)) {
        dl_vector<T, VEC> u;
        const uint4 *p = reinterpret_cast<const uint4 *>(in + idx);
        u.raw = DL_SCAN_STREAM_LOADS ? __ldcs(p) : *p;
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
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
        dl_load_row<T, Op, S::vec, VECTOR_ACCESS>(in, warp_base + (uint64_t)(r * 32 + lane) * S::vec,
                                                  n, whole, v[r]);
}

/* ---------------------------------------------------------------- one tile */

/* Scans this thread's rows v of tile `tile` (already loaded) and stores them. Every thread
 * working the tile calls it (SPECIALIZED and `published`: see dl_tile_prefixes). */
template <typename T, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD, bool SPECIALIZED,
          typename SHARED>
__device__ __forceinline__ void dl_scan_tile(const dl_scan_params &p, SHARED &sh, uint32_t tile,
                                             uint32_t epoch,
                                             T (&v)[dl_scan_shape<T>::rows][dl_scan_shape<T>::vec],
                                             T published)
{
    using S = dl_scan_shape<T>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    T lane_sum[S::rows];
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        lane_sum[r] = v[r][0];
#pragma unroll
        for (int e = 1; e < S::vec; ++e)
            lane_sum[r] = Op()(lane_sum[r], v[r][e]);
    }

    T row_prefix[S::rows];
    dl_tile_prefixes<T, Op, LEFT_FOLD, S::rows, S::warps, SPECIALIZED>(
        sh, lane_sum, row_prefix, tile, epoch, dl_value_from_bits<T>(p.seed_bits), p.descriptors,
        p.count_stats ? p.control->stats : nullptr, published, p.test_delay_ns);

    T *out = static_cast<T *>(p.out);
    const uint64_t tile_base = (uint64_t)tile * S::tile_items;
    const bool whole = tile_base + S::tile_items <= p.n;
    const uint64_t warp_base = tile_base + (uint64_t)warp * S::items_per_warp;
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
}

/* ---------------------------------------------------------------- one block per tile */

template <typename T, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_THREADS) dl_scan_kernel(const dl_scan_params p)
{
    using S = dl_scan_shape<T>;
    __shared__ dl_tile_shared<T, S::warps, LEFT_FOLD> sh;
    uint32_t tile, epoch;
    dl_tile_take(p.control, sh, &tile, &epoch);
    T v[S::rows][S::vec];
    dl_load_tile<T, Op, VECTOR_ACCESS>(static_cast<const T *>(p.in), (uint64_t)tile * S::tile_items,
                                       p.n, v);
    dl_scan_tile<T, Op, VECTOR_ACCESS, LEFT_FOLD, false>(p, sh, tile, epoch, v, Op::identity());
    dl_tile_finish(p.control, epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
}

/* ---------------------------------------------------------------- persistent, specialized */

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

/* Has the bulk-copy engine bring `bytes` from global `src` to shared `dst`; the barrier's
 * phase completes when they are in. */
__device__ __forceinline__ void dl_bulk_prefetch(void *dst, const void *src, uint32_t bytes,
                                                 uint64_t *bar)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); /* the stage's last readers were generic */
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(dl_smem_address(bar)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dl_smem_address(dst)), "l"(src), "r"(bytes), "r"(dl_smem_address(bar))
                 : "memory");
}

/* The ring of stages and the three barriers of each. A stage's tile is `stage_tile` (the
 * call's tile count or more: no more tiles); `full` completes when its data is in shared
 * memory (at once for the partial last tile, which is read from global memory, and for the
 * end); `reduced` when the reducer has published its aggregate `stage_aggregate`; `empty`
 * when every compute warp holds its items in registers, so the stage can be refilled. */
template <typename T, int WARPS, bool LEFT_FOLD>
struct dl_persistent_shared : dl_tile_shared<T, WARPS, LEFT_FOLD> {
    uint64_t full[DL_SCAN_STAGES];
    uint64_t reduced[DL_SCAN_STAGES];
    uint64_t empty[DL_SCAN_STAGES];
    uint32_t stage_tile[DL_SCAN_STAGES];
    T stage_aggregate[DL_SCAN_STAGES];
};

/* Producer (lane 0 of its warp): draws a ticket for each free stage and prefetches it, until
 * it draws one past the end (lookback.h, "Tickets"). */
template <typename T, typename SHARED>
__device__ __forceinline__ void dl_persistent_produce(const dl_scan_params &p, SHARED &sh,
                                                      unsigned char *stages, uint32_t tiles)
{
    using S = dl_scan_shape<T>;
    if (threadIdx.x % 32 != 0)
        return;
    const uint32_t tickets = tiles + gridDim.x; /* each block draws one past the end */
    dl_ticket_state state;
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % DL_SCAN_STAGES);
        if (k >= DL_SCAN_STAGES)
            dl_mbar_wait(&sh.empty[s], (k / DL_SCAN_STAGES - 1) & 1);
        uint32_t ticket;
        if (k == 0) {
            ticket = dl_ticket_draw_first(p.control, &state);
            sh.epoch = state.epoch; /* published to the other roles by the first `full` */
            sh.ticket_base = state.base;
        } else {
            ticket = dl_ticket_draw(p.control, state);
        }
        dl_ticket_check_last(p.control, ticket, tickets, state);
        sh.stage_tile[s] = ticket;
        const uint64_t base = (uint64_t)ticket * S::tile_items;
        if (ticket < tiles && base + S::tile_items <= p.n)
            dl_bulk_prefetch(stages + s * S::tile_bytes, static_cast<const T *>(p.in) + base,
                             S::tile_bytes, &sh.full[s]);
        else
            dl_mbar_arrive(&sh.full[s]);
        if (ticket >= tiles)
            return;
    }
}

/* Reducer (one warp): reduces each tile as it lands, in a fixed order (each lane its 16-byte
 * vectors in turn, then an order-keeping tree), and publishes the aggregate at once: successors can
 * fold it while this tile still waits for its block's compute warps. */
template <typename T, typename Op, typename SHARED>
__device__ __forceinline__ void dl_persistent_reduce(const dl_scan_params &p, SHARED &sh,
                                                     const unsigned char *stages, uint32_t tiles)
{
    using S = dl_scan_shape<T>;
    const int lane = threadIdx.x % 32;
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % DL_SCAN_STAGES);
        dl_mbar_wait(&sh.full[s], (k / DL_SCAN_STAGES) & 1);
        const uint32_t tile = sh.stage_tile[s];
        if (tile >= tiles) {
            if (lane == 0)
                dl_mbar_arrive(&sh.reduced[s]);
            return;
        }
        const uint64_t base = (uint64_t)tile * S::tile_items;
        T acc = Op::identity();
        if (base + S::tile_items <= p.n) {
            const uint4 *staged = reinterpret_cast<const uint4 *>(stages + s * S::tile_bytes);
#pragma unroll 4
            for (int j = lane; j < S::tile_bytes / 16; j += 32) {
                dl_vector<T, S::vec> u;
                u.raw = staged[j];
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    acc = Op()(acc, u.item[e]);
            }
        } else {
            const T *in = static_cast<const T *>(p.in) + base;
            const uint64_t count = p.n - base;
            for (uint64_t i = (uint64_t)lane * S::vec; i < count; i += 32 * S::vec)
                for (int e = 0; e < S::vec; ++e)
                    if (i + e < count)
                        acc = Op()(acc, in[i + e]);
        }
        const T aggregate = dl_warp_reduce<T, Op>(acc);
        if (lane == 0) {
            const uint32_t epoch = sh.epoch;
            dl_test_pause(tile, 1, p.test_delay_ns);
            if (tile == 0)
                dl_gpu_publish<T>(p.descriptors, 0, epoch, DL_STATUS_P,
                                  Op()(dl_value_from_bits<T>(p.seed_bits), aggregate));
            else
                dl_gpu_publish<T>(p.descriptors, tile, epoch, DL_STATUS_A, aggregate);
            sh.stage_aggregate[s] = aggregate;
            dl_mbar_arrive(&sh.reduced[s]);
        }
    }
}

/* Compute warps: take each reduced stage in ring order into registers, free it, and scan the
 * tile (look-back by warp 0, inclusive prefix on the reducer's aggregate, stores). */
template <typename T, typename Op, bool LEFT_FOLD, typename SHARED>
__device__ __forceinline__ void dl_persistent_compute(const dl_scan_params &p, SHARED &sh,
                                                      const unsigned char *stages, uint32_t tiles)
{
    using S = dl_scan_shape<T>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % DL_SCAN_STAGES);
        dl_mbar_wait(&sh.reduced[s], (k / DL_SCAN_STAGES) & 1);
        const uint32_t tile = sh.stage_tile[s];
        if (tile >= tiles)
            return;
        const T aggregate = sh.stage_aggregate[s];
        const uint32_t epoch = sh.epoch;
        const uint64_t base = (uint64_t)tile * S::tile_items;
        T v[S::rows][S::vec];
        if (base + S::tile_items <= p.n) {
            const uint4 *staged = reinterpret_cast<const uint4 *>(stages + s * S::tile_bytes);
#pragma unroll
            for (int r = 0; r < S::rows; ++r) {
                dl_vector<T, S::vec> u;
                u.raw = staged[(warp * S::rows + r) * 32 + lane];
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    v[r][e] = u.item[e];
            }
        } else {
            dl_load_tile<T, Op, true>(static_cast<const T *>(p.in), base, p.n, v);
        }
        __syncwarp();
        if (lane == 0)
            dl_mbar_arrive(&sh.empty[s]);
        dl_scan_tile<T, Op, true, LEFT_FOLD, true>(p, sh, tile, epoch, v, aggregate);
    }
}

template <typename T, typename Op, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_PERSISTENT_THREADS)
    dl_scan_persistent_kernel(const dl_scan_params p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using S = dl_scan_shape<T>;
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ dl_persistent_shared<T, S::warps, LEFT_FOLD> sh;
    const uint32_t tiles = (uint32_t)((p.n + S::tile_items - 1) / S::tile_items);
    const int warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < DL_SCAN_STAGES; ++s) {
            dl_mbar_init(&sh.full[s], 1);
            dl_mbar_init(&sh.reduced[s], 1);
            dl_mbar_init(&sh.empty[s], S::warps);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == S::warps)
        dl_persistent_produce<T>(p, sh, stages, tiles);
    else if (warp == S::warps + 1)
        dl_persistent_reduce<T, Op>(p, sh, stages, tiles);
    else
        dl_persistent_compute<T, Op, LEFT_FOLD>(p, sh, stages, tiles);
    __syncthreads();
    dl_tile_finish(p.control, sh.epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
#endif
}

/* ---------------------------------------------------------------- launcher */

/* Picks the kernel and instantiation for T and Op: persistent where the GPU and the
 * alignment allow, element or vector accesses otherwise; tree or left fold. */
struct dl_scan_launcher {
    template <typename T, typename Op>
    static int run(const dl_scan_params *p, int left_fold, cudaStream_t stream)
    {
        using S = dl_scan_shape<T>;
        constexpr bool fold_matters = dl_fold_order_matters<T, Op>::value;
        const uint64_t tiles = (p->n + S::tile_items - 1) / S::tile_items;
        const bool vector = (uintptr_t)p->in % 16 == 0 && (uintptr_t)p->out % 16 == 0;
        const bool fold = left_fold && fold_matters;
        const dim3 block(S::threads);
        /* Persistent where it fills its grid; fewer tiles finish sooner one block each. */
        if (vector && p->persistent_blocks > 0 && tiles > p->persistent_blocks) {
            const uint64_t blocks = tiles < p->persistent_blocks ? tiles : p->persistent_blocks;
            const size_t stage_bytes = (size_t)DL_SCAN_STAGES * S::tile_bytes;
            const dim3 persistent_block(DL_SCAN_PERSISTENT_THREADS);
            if (fold)
                dl_scan_persistent_kernel<T, Op, fold_matters>
                    <<<(unsigned)blocks, persistent_block, stage_bytes, stream>>>(*p);
            else
                dl_scan_persistent_kernel<T, Op, false>
                    <<<(unsigned)blocks, persistent_block, stage_bytes, stream>>>(*p);
            return (int)cudaGetLastError();
        }
        const dim3 grid((unsigned)tiles);
        if (vector && fold)
            dl_scan_kernel<T, Op, true, fold_matters><<<grid, block, 0, stream>>>(*p);
        else if (vector)
            dl_scan_kernel<T, Op, true, false><<<grid, block, 0, stream>>>(*p);
        else if (fold)
            dl_scan_kernel<T, Op, false, fold_matters><<<grid, block, 0, stream>>>(*p);
        else
            dl_scan_kernel<T, Op, false, false><<<grid, block, 0, stream>>>(*p);
        return (int)cudaGetLastError();
    }
};

/* Lets the persistent kernels use more than 48 KB of shared memory (once per handle). */
struct dl_scan_preparer {
    template <typename T, typename Op> static int run(int unused)
    {
        (void)unused;
        const int bytes = DL_SCAN_STAGES * dl_scan_shape<T>::tile_bytes;
        cudaError_t error = cudaFuncSetAttribute(dl_scan_persistent_kernel<T, Op, false>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (error == cudaSuccess && dl_fold_order_matters<T, Op>::value)
            error = cudaFuncSetAttribute(dl_scan_persistent_kernel<T, Op, true>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        return (int)error;
    }
};

extern "C" int dl_gpu_scan_launch(const dl_scan_params *params, dlscan_type type, dlscan_op op,
                                  int left_fold, cudaStream_t stream)
{
    if (params->n == 0)
        return (int)cudaSuccess;
    return dl_dispatch<dl_scan_launcher>(type, op, params, left_fold, stream);
}

extern "C" int dl_gpu_scan_prepare(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_FLOAT64; ++type)
        for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op) {
            const int error = dl_dispatch<dl_scan_preparer>((dlscan_type)type, (dlscan_op)op, 0);
            if (error != (int)cudaSuccess)
                return error;
        }
    return (int)cudaSuccess;
}

extern "C" uint32_t dl_gpu_scan_blocks_per_sm(void) { return DL_SCAN_BLOCKS_PER_SM; }

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
