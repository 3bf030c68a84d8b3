/*
 * scan_kernel.cu: the single-pass inclusive/exclusive scan kernels and their launcher.
 *
 * Both kernels work a tile the same way (dl_scan_tile): each of 256 threads holds ROWS x VEC
 * items in registers, one 16-byte access per row, the 32 lanes of a warp side by side in a
 * row (512 contiguous bytes per warp access); it reduces its rows, gets every row's
 * exclusive prefix over the whole input through warp scans (one per row; in the persistent
 * kernel and for 64-bit tiles of the few-tiles kernel, one per pass over the rows transposed
 * through shared memory), a block scan and the look-back (tile.cuh, lookback.cuh), scans the
 * rows from there and stores them. Each item is read once and written once.
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
 *   dl_scan_few_tiles_kernel is the same with a looser register bound, for the few tiles
 *   that the persistent kernel leaves to it (sm_90).
 *
 * The tile is tile.cuh's, the look-back lookback.cuh's, the ring of stages ring.cuh's; the
 * settled constants are in config.h.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "launch.h"
#include "ops.cuh"
#include "ring.cuh"
#include "tile.cuh"

/* ---------------------------------------------------------------- one tile */

/* Scans this thread's rows v of tile `tile` (already loaded) and stores them. Every thread
 * working the tile calls it. The rows' prefixes come from one warp scan per row or, with
 * TRANSPOSED (the persistent kernel; 64-bit tiles in dl_scan_few_tiles_kernel), from the
 * transposed warp scan (warp.cuh) in this warp's `warp_scratch`. With `is_published`, the
 * reducer warp has published the aggregate `published` (dl_tile_warp_prefix). Without it, the
 * tile's warps publish it: in a SPECIALIZED block (the persistent kernel's first tile,
 * dl_first_tile_by_compute) before any scan, from a reduction of their rows; in the one-block
 * kernels after the scans, which kept min and max beside the sum where publishing first did
 * not (bench/NOTES.md, "Publishing the aggregate first"). */
template <typename T, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD, bool SPECIALIZED, bool TRANSPOSED,
          typename SHARED>
__device__ __forceinline__ void dl_scan_tile(const dl_scan_params &p, const dl_probe &probe, SHARED &sh,
                                             uint32_t tile, uint32_t epoch,
                                             T (&v)[dl_scan_shape<T>::rows][dl_scan_shape<T>::vec],
                                             T *warp_scratch, bool is_published, T published)
{
    using S = dl_scan_shape<T>;

    T lane_sum[S::rows];
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        lane_sum[r] = v[r][0];
#pragma unroll
        for (int e = 1; e < S::vec; ++e)
            lane_sum[r] = Op()(lane_sum[r], v[r][e]);
    }

    const T seed = dl_value_from_bits<T>(p.seed_bits);
    if constexpr (SPECIALIZED) {
        if (!is_published) {
            published = dl_tile_publish_aggregate<T, Op, S::rows, S::warps, true>(
                sh.warp_totals, lane_sum, tile, epoch, seed, p.descriptors, probe);
            is_published = true;
        }
    }
    T row_prefix[S::rows];
    if constexpr (TRANSPOSED) {
        const T warp_total = dl_warp_prefixes_transposed<T, Op, S::rows, S::scratch_passes>(
            lane_sum, row_prefix, warp_scratch);
        /* The persistent scan's windows (DL_PERSISTENT_SLOTS_PER_LANE); the left fold keeps the
         * wider ones, because its buffer holds two windows: with one slot per lane it waited
         * for P twice as often (bench/NOTES.md, "Look-back windows"). */
        constexpr int slots = SPECIALIZED && !LEFT_FOLD ? DL_PERSISTENT_SLOTS_PER_LANE : DL_SLOTS_PER_LANE;
        const T running = dl_tile_warp_prefix<T, Op, LEFT_FOLD, S::warps, SPECIALIZED, slots>(
            sh, warp_total, tile, epoch, seed, p.descriptors, probe, is_published, published);
#pragma unroll
        for (int r = 0; r < S::rows; ++r)
            row_prefix[r] = Op()(running, row_prefix[r]);
    } else {
        dl_tile_prefixes<T, Op, LEFT_FOLD, S::rows, S::warps, SPECIALIZED>(
            sh, lane_sum, row_prefix, tile, epoch, seed, p.descriptors, probe, is_published,
            published);
    }

#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        T prefix = row_prefix[r];
#pragma unroll
        for (int e = 0; e < S::vec; ++e) {
            const T item = v[r][e];
            if (p.exclusive) {
                v[r][e] = prefix;
                prefix = Op()(prefix, item);
            } else {
                prefix = Op()(prefix, item);
                v[r][e] = prefix;
            }
        }
    }
    /* The persistent kernel stores whole tiles without bound checks (dl_store_tile). The
     * one-block kernels keep the per-row checks, which ran faster for them (bench/NOTES.md,
     * "Loads, stores and cache hints"). */
    const uint64_t tile_base = (uint64_t)tile * S::tile_items;
    if constexpr (SPECIALIZED)
        dl_store_tile<T, VECTOR_ACCESS>(static_cast<T *>(p.out), tile_base, p.n, v);
    else
        dl_store_tile_rows<T, VECTOR_ACCESS>(static_cast<T *>(p.out), tile_base, p.n, v);
}

/* ---------------------------------------------------------------- one block per tile */

/* A one-block kernel's shared memory; with TRANSPOSED, the warps' scratch for the transposed
 * warp scan. */
template <typename T, bool LEFT_FOLD, bool TRANSPOSED>
struct dl_block_shared : dl_tile_shared<T, dl_scan_shape<T>::warps, LEFT_FOLD> {
    using S = dl_scan_shape<T>;
    T scratch[S::warps][dl_warp_scratch<T, S::rows, S::scratch_passes>::items];
};
template <typename T, bool LEFT_FOLD>
struct dl_block_shared<T, LEFT_FOLD, false> : dl_tile_shared<T, dl_scan_shape<T>::warps, LEFT_FOLD> {
};

template <typename T, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD, bool TRANSPOSED>
__device__ __forceinline__ void dl_scan_block(const dl_scan_params &p)
{
    using S = dl_scan_shape<T>;
    __shared__ dl_block_shared<T, LEFT_FOLD, TRANSPOSED> sh;
    const dl_probe probe(p.control);
    dl_grid_dependency();
    uint32_t tile, epoch;
    dl_tile_take(p.control, probe, sh, &tile, &epoch);
    T v[S::rows][S::vec];
    dl_load_tile<T, Op, VECTOR_ACCESS>(static_cast<const T *>(p.in), (uint64_t)tile * S::tile_items,
                                       p.n, v);
    T *scratch = nullptr;
    if constexpr (TRANSPOSED)
        scratch = sh.scratch[threadIdx.x / 32];
    dl_scan_tile<T, Op, VECTOR_ACCESS, LEFT_FOLD, false, TRANSPOSED>(p, probe, sh, tile, epoch, v, scratch,
                                                                     false, Op::identity());
    dl_epoch_finish(p.control, epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
}

/* Large inputs without the persistent kernel: given no minimum of blocks per SM, ptxas keeps
 * most instantiations at 64-80 registers (three or four blocks per SM), which one block per
 * tile needs at these sizes (bench/NOTES.md, "Few-tiles kernel"). */
template <typename T, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_THREADS) dl_scan_kernel(const dl_scan_params p)
{
    dl_scan_block<T, Op, VECTOR_ACCESS, LEFT_FOLD, false>(p);
}

/* No more tiles than half the persistent kernel's blocks (sm_90, small inputs): the registers
 * need only let that many blocks be resident at once (DL_SCAN_BLOCKS_PER_SM per SM). With
 * the bound above, ptxas held the 32-bit min and max kernels to 80 registers, where they
 * spilled. 64-bit tiles take the transposed warp scan: half the operator's applications of
 * the row scans, which brought int64 min and max to the sum's pace; 32-bit tiles keep the row
 * scans, faster for them (bench/NOTES.md, "Few-tiles kernel"). */
template <typename T, typename Op, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_THREADS, DL_SCAN_BLOCKS_PER_SM)
    dl_scan_few_tiles_kernel(const dl_scan_params p)
{
    dl_scan_block<T, Op, true, LEFT_FOLD, sizeof(T) == 8>(p);
}

/* ---------------------------------------------------------------- persistent, specialized */

/* The scan's stage fill: one bulk copy of the tile's items. */
template <typename T> struct dl_scan_fill {
    const dl_scan_params &p;
    unsigned char *stages;
    __device__ bool operator()(int s, uint32_t tile, uint64_t *full) const
    {
        using S = dl_scan_shape<T>;
        const uint64_t base = (uint64_t)tile * S::tile_items;
        if (base + S::tile_items > p.n)
            return false; /* the partial last tile: from global memory */
        dl_bulk_expect(full, S::tile_bytes);
        dl_bulk_copy<true>(stages + s * S::tile_bytes, static_cast<const T *>(p.in) + base,
                           S::tile_bytes, full);
        return true;
    }
};

/* Whether the compute warps take the block's first tile alone: where the grid has a block for
 * every tile, so that a block's first tile is, as a rule, its only one. Its compute warps
 * would only wait for the reducer's serial reduction (for int64 min and max, 128
 * compare-and-selects per lane); their own, eight warps wide, gets the aggregate out sooner.
 * Where blocks have more tiles, the reducer keeps them all: compute warps working beside it
 * made those calls slower (bench/NOTES.md, "A block's only tile"). Not for the
 * deterministic left fold: which tile is a block's first changes from call to call, and with
 * it the order of a float aggregate's additions. */
template <bool LEFT_FOLD> __device__ __forceinline__ bool dl_first_tile_by_compute(uint32_t tiles)
{
    return !LEFT_FOLD && tiles <= gridDim.x;
}

/* Reducer (one warp): reduces each tile as it lands, in a fixed order (each lane folds its
 * 16-byte vectors into DL_SCAN_REDUCE_CHAINS x vec accumulators, then those in turn, then an
 * order-keeping tree over the lanes), and publishes the aggregate at once: successors can fold
 * it while this tile still waits for its block's compute warps. A first tile that the compute
 * warps take alone it only passes on. */
template <typename T, typename Op, bool LEFT_FOLD, typename SHARED>
__device__ __forceinline__ void dl_persistent_reduce(const dl_scan_params &p, const dl_probe &probe,
                                                     SHARED &sh, const unsigned char *stages,
                                                     uint32_t tiles)
{
    using S = dl_scan_shape<T>;
    const int lane = threadIdx.x % 32;
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        dl_mbar_wait(&sh.full[s], (k / SHARED::stages) & 1);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles || (k == 0 && dl_first_tile_by_compute<LEFT_FOLD>(tiles))) {
            if (lane == 0)
                dl_mbar_arrive(&sh.reduced[s]);
            if (tile >= tiles)
                return;
            continue;
        }
        const uint64_t base = (uint64_t)tile * S::tile_items;
        T acc = Op::identity();
        if (base + S::tile_items <= p.n) {
            /* CHAINS x vec independent accumulators: the chain of dependent operations is
             * vectors / (32 CHAINS) long instead of tile_items / 32 (bench/NOTES.md, "Reducer
             * chains"). */
            constexpr int CHAINS = DL_SCAN_REDUCE_CHAINS;
            constexpr int vectors = S::tile_bytes / 16;
            static_assert(vectors % (32 * CHAINS) == 0, "whole rounds of chains");
            const uint4 *staged = reinterpret_cast<const uint4 *>(stages + s * S::tile_bytes);
            T chain[CHAINS][S::vec];
#pragma unroll
            for (int c = 0; c < CHAINS; ++c)
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    chain[c][e] = Op::identity();
#pragma unroll 2
            for (int j = lane; j < vectors; j += 32 * CHAINS) {
#pragma unroll
                for (int c = 0; c < CHAINS; ++c) {
                    dl_vector<T, S::vec> u;
                    u.raw = staged[j + 32 * c];
#pragma unroll
                    for (int e = 0; e < S::vec; ++e)
                        chain[c][e] = Op()(chain[c][e], u.item[e]);
                }
            }
#pragma unroll
            for (int c = 0; c < CHAINS; ++c)
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    acc = Op()(acc, chain[c][e]);
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
            dl_publish_aggregate<T, Op>(p.descriptors, tile, sh.epoch,
                                        dl_value_from_bits<T>(p.seed_bits), aggregate, probe);
            sh.stage_aggregate[s] = aggregate;
            dl_mbar_arrive(&sh.reduced[s]);
        }
    }
}

/* Compute warps: take each reduced stage in ring order into registers, free it, and scan the
 * tile (look-back by warp 0, inclusive prefix on the reducer's aggregate, stores). A first
 * tile of their own (dl_first_tile_by_compute) they take as soon as it lands, and publish its
 * aggregate themselves. */
template <typename T, typename Op, bool LEFT_FOLD, typename SHARED>
__device__ __forceinline__ void dl_persistent_compute(const dl_scan_params &p, const dl_probe &probe,
                                                      SHARED &sh, const unsigned char *stages,
                                                      uint32_t tiles)
{
    using S = dl_scan_shape<T>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool own_first = dl_first_tile_by_compute<LEFT_FOLD>(tiles);
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        const bool reduced = k > 0 || !own_first;
        dl_mbar_wait(reduced ? &sh.reduced[s] : &sh.full[s], (k / SHARED::stages) & 1);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles)
            return;
        const T aggregate = reduced ? dl_stage_header(sh.stage_aggregate[s]) : Op::identity();
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
        /* The reducer is done with the stage: it read the first tile's header, and no more. */
        if (!reduced)
            dl_mbar_wait(&sh.reduced[s], 0);
        __syncwarp();
        if (lane == 0)
            dl_mbar_arrive(&sh.empty[s]);
        dl_scan_tile<T, Op, true, LEFT_FOLD, true, true>(p, probe, sh, tile, epoch, v, sh.scratch[warp],
                                                        reduced, aggregate);
    }
}

/* The scan's ring: stages of one tile each, as many as fit (ring.cuh), the compute
 * warps' scratch for the transposed warp scan and their totals for a first tile of their own. */
template <typename T, bool LEFT_FOLD>
struct dl_scan_shared : dl_persistent_shared<T, dl_scan_shape<T>::warps, LEFT_FOLD,
                                             dl_ring_stages(dl_scan_shape<T>::tile_bytes)> {
    using S = dl_scan_shape<T>;
    T scratch[S::warps][dl_warp_scratch<T, S::rows, S::scratch_passes>::items];
    T warp_totals[S::warps];
};

template <typename T, typename Op, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_PERSISTENT_THREADS)
    dl_scan_persistent_kernel(const dl_scan_params p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using S = dl_scan_shape<T>;
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ dl_scan_shared<T, LEFT_FOLD> sh;
    static_assert(dl_ring_fits<dl_scan_shared<T, LEFT_FOLD>>(S::tile_bytes), "blocks per SM");
    const uint32_t tiles = (uint32_t)((p.n + S::tile_items - 1) / S::tile_items);
    const int warp = threadIdx.x / 32;
    const dl_probe probe(p.control);
    dl_ring_init(sh, S::warps);
    dl_grid_dependency();
    if (warp == S::warps)
        dl_persistent_produce(p.control, probe, sh, tiles, dl_scan_fill<T>{p, stages});
    else if (warp == S::warps + 1)
        dl_persistent_reduce<T, Op, LEFT_FOLD>(p, probe, sh, stages, tiles);
    else
        dl_persistent_compute<T, Op, LEFT_FOLD>(p, probe, sh, stages, tiles);
    __syncthreads();
    dl_epoch_finish(p.control, sh.epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
#endif
}

/* ---------------------------------------------------------------- launcher */

/* Launches `kernel`; where the GPU has them (p.dependent_launch), as a programmatic dependent
 * launch of the stream's previous kernel (tile.cuh, dl_grid_dependency; bench/NOTES.md, "Small
 * calls: dependent launches"). */
static int dl_launch(void (*kernel)(dl_scan_params), const dl_scan_params &p, dim3 grid, dim3 block,
                     size_t shared_bytes, cudaStream_t stream)
{
    cudaLaunchAttribute dependent;
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = &dependent;
    config.numAttrs = p.dependent_launch ? 1 : 0;
    return (int)cudaLaunchKernelEx(&config, kernel, p);
}

/* Picks the kernel and instantiation for T and Op: where the GPU and the alignment allow,
 * persistent, or one block per tile for fewer tiles than its grid; elsewhere one block per
 * tile with element or vector accesses; tree or left fold. */
struct dl_scan_launcher {
    template <typename T, typename Op>
    static int run(const dl_scan_params *p, int left_fold, cudaStream_t stream)
    {
        using S = dl_scan_shape<T>;
        constexpr bool fold_matters = dl_fold_order_matters<T, Op>::value;
        const uint64_t tiles = (p->n + S::tile_items - 1) / S::tile_items;
        const bool vector = (uintptr_t)p->in % 16 == 0 && (uintptr_t)p->out % 16 == 0;
        const bool fold = left_fold && fold_matters;
        /* Persistent from half a grid of tiles: fewer tiles finish sooner one block each
         * (bench/NOTES.md, "Which kernel runs"). */
        if (vector && p->persistent_blocks > 0 && tiles > p->persistent_min_tiles / 2) {
            const uint64_t blocks = tiles < p->persistent_blocks ? tiles : p->persistent_blocks;
            const size_t stage_bytes = (size_t)dl_scan_shared<T, false>::stages * S::tile_bytes;
            return dl_launch(fold ? dl_scan_persistent_kernel<T, Op, fold_matters>
                                  : dl_scan_persistent_kernel<T, Op, false>,
                             *p, dim3((unsigned)blocks), dim3(DL_SCAN_PERSISTENT_THREADS), stage_bytes,
                             stream);
        }
        if (vector && p->persistent_blocks > 0)
            return dl_launch(fold ? dl_scan_few_tiles_kernel<T, Op, fold_matters>
                                  : dl_scan_few_tiles_kernel<T, Op, false>,
                             *p, dim3((unsigned)tiles), dim3(S::threads), 0, stream);
        void (*kernel)(dl_scan_params) = vector && fold ? dl_scan_kernel<T, Op, true, fold_matters>
                                         : vector       ? dl_scan_kernel<T, Op, true, false>
                                         : fold         ? dl_scan_kernel<T, Op, false, fold_matters>
                                                        : dl_scan_kernel<T, Op, false, false>;
        return dl_launch(kernel, *p, dim3((unsigned)tiles), dim3(S::threads), 0, stream);
    }
};

/* Lets the persistent kernels use more than 48 KB of shared memory (once per handle). */
struct dl_scan_preparer {
    template <typename T, typename Op> static int run(int unused)
    {
        (void)unused;
        const int bytes = dl_scan_shared<T, false>::stages * dl_scan_shape<T>::tile_bytes;
        cudaError_t error = cudaFuncSetAttribute(dl_scan_persistent_kernel<T, Op, false>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if constexpr (dl_fold_order_matters<T, Op>::value) /* no left-fold kernel otherwise */
            if (error == cudaSuccess)
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
