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
 * A kernel reads items of IN, accumulates in T and writes OUT (ops.cuh, dl_dispatch_pair):
 * the items are converted to T as they are loaded and the results rounded to OUT as they are
 * stored, so the tile's shape is T's. The seed (init) may come from device memory, read by
 * the block of tile 0 before it publishes anything (in the persistent kernel, by the producer
 * that fetches tile 0); the thread that holds item n - 1 writes the total.
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
 * Long rows (a scan along an axis of stride 1 whose rows are at least a segmented tile, of a
 * type scanned into itself: gpu_backend.c, dl_gpu_long_rows) run on the persistent kernel with
 * ROWS: each row is a chain of tiles of its own, the look-back's tile 0 at the row's first
 * (dl_tile_place), so a row costs a plain scan's work, where the segmented tile pays for its
 * heads on every item.
 *
 * The tile is tile.cuh's, the look-back lookback.cuh's, the ring of stages ring.cuh's; the
 * settled constants are in policy.h.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "launch.h"
#include "ops.cuh"
#include "ring.cuh"
#include "tile.cuh"

/* ---------------------------------------------------------------- where a tile lies */

/* A tile's place: its items, from `base` up to the next tile's or `end` (the bound of its loads
 * and stores), its index in its chain of tiles (`link`: the look-back's tile, 0 for the chain's
 * first, which starts from the seed) with the chain's descriptors, and where the chain's total
 * goes (NULL: nowhere). A plain scan is one chain of every tile, its total d_total. Along long
 * rows (ROWS) each row of p.row_length items is a chain of its own of p.row_tiles tiles, the
 * last of them partial where the tile does not divide the row, and its total goes to
 * p.totals[row]: a row takes the plain scan's work, without the segmented tile's. */
struct dl_tile_place {
    uint64_t base;
    uint64_t end;
    uint32_t link;
    dl_word *descriptors;
    void *total;
};

template <typename T, typename OUT, bool ROWS>
__device__ __forceinline__ dl_tile_place dl_scan_place(const dl_scan_params &p, uint32_t tile)
{
    using S = dl_scan_shape<T>;
    if constexpr (ROWS) {
        const uint32_t row = tile / p.row_tiles, link = tile - row * p.row_tiles;
        const uint64_t first = (uint64_t)row * p.row_length;
        return {first + (uint64_t)link * S::tile_items, first + p.row_length, link,
                p.descriptors + (uint64_t)(tile - link) * dl_pieces<T>::words,
                p.totals ? static_cast<OUT *>(p.totals) + row : nullptr};
    } else {
        return {(uint64_t)tile * S::tile_items, p.n, tile, p.descriptors, p.total};
    }
}

/* ---------------------------------------------------------------- one tile */

/* Scans this thread's rows v of the tile at `at` (already loaded) and stores them. Every thread
 * working the tile calls it. The rows' prefixes come from one warp scan per row or, with
 * TRANSPOSED (the persistent kernel; 64-bit tiles in dl_scan_few_tiles_kernel), from the
 * transposed warp scan (warp.cuh) in this warp's `warp_scratch`. With `is_published`, the
 * reducer warp has published the aggregate `published` (dl_tile_warp_prefix). Without it, the
 * tile's warps publish it: in a SPECIALIZED block (the persistent kernel's first tile,
 * dl_first_tile_by_compute) before any scan, from a reduction of their rows; in the one-block
 * kernels after the scans, which kept min and max beside the sum where publishing first did
 * not (bench/NOTES.md, "Publishing the aggregate first"). */
template <typename T, typename OUT, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD, bool SPECIALIZED,
          bool TRANSPOSED, typename SHARED>
__device__ __forceinline__ void dl_scan_tile(const dl_scan_params &p, const dl_probe &probe, SHARED &sh,
                                             const dl_tile_place &at, uint32_t epoch, T seed,
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

    if constexpr (SPECIALIZED) {
        if (!is_published) {
            published = dl_tile_publish_aggregate<T, Op, S::rows, S::warps, true>(
                sh.warp_totals, lane_sum, at.link, epoch, seed, at.descriptors, probe);
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
            sh, warp_total, at.link, epoch, seed, at.descriptors, probe, is_published, published);
#pragma unroll
        for (int r = 0; r < S::rows; ++r)
            row_prefix[r] = Op()(running, row_prefix[r]);
    } else {
        dl_tile_prefixes<T, Op, LEFT_FOLD, S::rows, S::warps, SPECIALIZED>(
            sh, lane_sum, row_prefix, at.link, epoch, seed, at.descriptors, probe, is_published,
            published);
    }

    /* The total: the chain's last tile's row that holds its last item, scanned through (items
     * past the end are the identity). */
    const bool has_total = at.total && at.base + S::tile_items >= at.end;
    const uint64_t first_of_lane =
        at.base + (uint64_t)(threadIdx.x / 32) * S::items_per_warp + (uint64_t)(threadIdx.x % 32) * S::vec;
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
        if (has_total && at.end - 1 - (first_of_lane + r * 32 * S::vec) < (uint64_t)S::vec)
            *static_cast<OUT *>(at.total) = dl_narrow<OUT>(prefix);
    }
    /* The persistent kernel stores whole tiles without bound checks (dl_store_tile). The
     * one-block kernels keep the per-row checks, which ran faster for them (bench/NOTES.md,
     * "Loads, stores and cache hints"). */
    if constexpr (SPECIALIZED)
        dl_store_tile<T, VECTOR_ACCESS>(static_cast<OUT *>(p.out), at.base, at.end, v);
    else
        dl_store_tile_rows<T, VECTOR_ACCESS>(static_cast<OUT *>(p.out), at.base, at.end, v);
}

/* The scan's seed: the init in device memory (p.init, read for tile 0 only: no other tile
 * uses it) or p.seed_bits, as a value of T. */
template <typename T, typename OUT>
__device__ __forceinline__ T dl_scan_seed(const dl_scan_params &p, uint32_t tile)
{
    if (p.init && tile == 0)
        return dl_seed_of<T, OUT>::read(p.init);
    return dl_seed_of<T, OUT>::bits(p.seed_bits);
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

template <typename IN, typename T, typename OUT, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD,
          bool TRANSPOSED>
__device__ __forceinline__ void dl_scan_block(const dl_scan_params &p)
{
    using S = dl_scan_shape<T>;
    __shared__ dl_block_shared<T, LEFT_FOLD, TRANSPOSED> sh;
    const dl_probe probe(p.control);
    dl_grid_dependency();
    uint32_t tile, epoch;
    dl_tile_take(p.control, probe, sh, &tile, &epoch);
    const dl_tile_place at = dl_scan_place<T, OUT, false>(p, tile);
    T v[S::rows][S::vec];
    dl_load_tile<T, Op, VECTOR_ACCESS>(static_cast<const IN *>(p.in), at.base, at.end, v);
    T *scratch = nullptr;
    if constexpr (TRANSPOSED)
        scratch = sh.scratch[threadIdx.x / 32];
    dl_scan_tile<T, OUT, Op, VECTOR_ACCESS, LEFT_FOLD, false, TRANSPOSED>(
        p, probe, sh, at, epoch, dl_scan_seed<T, OUT>(p, tile), v, scratch, false, Op::identity());
    dl_epoch_finish(p.control, epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
}

/* Large inputs without the persistent kernel: given no minimum of blocks per SM, ptxas keeps
 * most instantiations at 64-80 registers (three or four blocks per SM), which one block per
 * tile needs at these sizes (bench/NOTES.md, "Few-tiles kernel"). */
template <typename IN, typename T, typename OUT, typename Op, bool VECTOR_ACCESS, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_THREADS) dl_scan_kernel(const dl_scan_params p)
{
    dl_scan_block<IN, T, OUT, Op, VECTOR_ACCESS, LEFT_FOLD, false>(p);
}

/* No more tiles than half the persistent kernel's blocks (sm_90, small inputs): the registers
 * need only let that many blocks be resident at once (DL_SCAN_BLOCKS_PER_SM per SM). With
 * the bound above, ptxas held the 32-bit min and max kernels to 80 registers, where they
 * spilled. 64-bit tiles take the transposed warp scan: half the operator's applications of
 * the row scans, which brought int64 min and max to the sum's pace; 32-bit tiles keep the row
 * scans, faster for them (bench/NOTES.md, "Few-tiles kernel"). */
template <typename IN, typename T, typename OUT, typename Op, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_THREADS, DL_SCAN_BLOCKS_PER_SM)
    dl_scan_few_tiles_kernel(const dl_scan_params p)
{
    dl_scan_block<IN, T, OUT, Op, true, LEFT_FOLD, sizeof(T) == 8>(p);
}

/* ---------------------------------------------------------------- persistent, specialized */

/* A stage holds one tile of input items: tile_items of IN. */
template <typename IN, typename T> __host__ __device__ constexpr int dl_scan_stage_bytes()
{
    return dl_scan_shape<T>::tile_items * (int)sizeof(IN);
}

/* The persistent kernel's blocks per SM: DL_SCAN_BLOCKS_PER_SM_NARROW for items narrower than
 * a 32-bit accumulator, DL_SCAN_BLOCKS_PER_SM for the others (policy.h). */
template <typename IN, typename T> __host__ __device__ constexpr int dl_scan_blocks_per_sm()
{
    return sizeof(IN) < sizeof(T) && sizeof(T) == 4 ? DL_SCAN_BLOCKS_PER_SM_NARROW : DL_SCAN_BLOCKS_PER_SM;
}

/* Its launch bound's minimum of blocks per SM: its blocks per SM, so that ptxas keeps the
 * registers that let them share an SM. Without it, float64 min and max took 100 registers, one
 * block an SM (bench/NOTES.md, "The H200"). Along rows likewise: ptxas had given the float32 sum
 * 122 registers, which ran rows of 4096 items at 0.68 of a copy ("Scans along an axis"). None (1)
 * for the rows of lanes (T a dl_lanes, not a scalar): their 16-byte lanes would spill at two
 * blocks. */
template <typename IN, typename T, bool ROWS> __host__ __device__ constexpr int dl_scan_min_blocks()
{
    return ROWS || std::is_arithmetic<T>::value ? dl_scan_blocks_per_sm<IN, T>() : 1;
}

/* The scan's stage fill: one bulk copy of the tile's items. Tile 0's also brings an init from
 * device memory into `seed`, read while the copy is under way: the stage's phase completes
 * only with the arrival after it is written, which hands it to the reducer and the compute
 * warps with the stage. (A read by each block at its start, before its roles began, cost every
 * chained call about a microsecond.) Along rows a row's partial last tile is staged too: its
 * items are whole 16-byte vectors (the host's rule for long rows). */
template <typename IN, typename T, typename OUT, bool ROWS> struct dl_scan_fill {
    static constexpr bool offsets = false;
    const dl_scan_params &p;
    unsigned char *stages;
    T *seed;
    __device__ bool operator()(int s, uint32_t tile, uint64_t *full) const
    {
        using S = dl_scan_shape<T>;
        constexpr int bytes = dl_scan_stage_bytes<IN, T>();
        const dl_tile_place at = dl_scan_place<T, OUT, ROWS>(p, tile);
        const uint64_t base = at.base;
        if constexpr (ROWS) {
            const uint64_t items = at.end - base < (uint64_t)S::tile_items ? at.end - base : S::tile_items;
            const uint32_t staged = (uint32_t)(items * sizeof(IN));
            dl_bulk_expect(full, staged);
            dl_bulk_copy<true>(stages + s * bytes, static_cast<const IN *>(p.in) + base, staged, full);
            return true;
        }
        const bool reads_init = tile == 0 && p.init;
        if (base + S::tile_items > p.n) { /* the partial last tile: from global memory */
            if (reads_init)
                *seed = dl_seed_of<T, OUT>::read(p.init);
            return false;
        }
        const IN *from = static_cast<const IN *>(p.in) + base;
        if (!reads_init) {
            dl_bulk_expect(full, bytes);
            dl_bulk_copy<true>(stages + s * bytes, from, bytes, full);
            return true;
        }
        dl_bulk_expect_only(full, bytes);
        dl_bulk_copy<true>(stages + s * bytes, from, bytes, full);
        *seed = dl_seed_of<T, OUT>::read(p.init);
        dl_mbar_arrive(full);
        return true;
    }
};

/* A stage's value of T (ring.cuh, dl_stage_header), a row of lanes lane by lane: a volatile
 * read takes no struct. */
template <typename T> __device__ __forceinline__ T dl_stage_value(const T &field) { return dl_stage_header(field); }
template <typename Y, int M> __device__ __forceinline__ dl_lanes<Y, M> dl_stage_value(const dl_lanes<Y, M> &field)
{
    dl_lanes<Y, M> v;
#pragma unroll
    for (int k = 0; k < M; ++k)
        v.lane[k] = dl_stage_header(field.lane[k]);
    return v;
}

/* The seed of a stage's tile in the persistent kernel: tile 0's init from device memory
 * (dl_scan_fill), else `seed` (the host's, which only tile 0 uses). */
template <typename T, typename SHARED>
__device__ __forceinline__ T dl_stage_seed(const dl_scan_params &p, SHARED &sh, uint32_t tile, T seed)
{
    return tile == 0 && p.init ? dl_stage_value(sh.seed) : seed;
}

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
 * order-keeping tree over the lanes; a row's partial last tile, vec accumulators), and publishes
 * the aggregate at once: successors can fold it while this tile still waits for its block's
 * compute warps. A first tile that the compute warps take alone it only passes on. */
template <typename IN, typename T, typename OUT, typename Op, bool LEFT_FOLD, bool ROWS, typename SHARED>
__device__ __forceinline__ void dl_persistent_reduce(const dl_scan_params &p, const dl_probe &probe,
                                                     SHARED &sh, const unsigned char *stages,
                                                     uint32_t tiles, T seed)
{
    using S = dl_scan_shape<T>;
    constexpr int stage_bytes = dl_scan_stage_bytes<IN, T>();
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
        const dl_tile_place at = dl_scan_place<T, OUT, ROWS>(p, tile);
        const uint64_t base = at.base;
        T acc = Op::identity();
        if (base + S::tile_items <= at.end) {
            /* CHAINS x vec independent accumulators: the chain of dependent operations is
             * vectors / (32 CHAINS) long instead of tile_items / 32 (bench/NOTES.md, "Reducer
             * chains"). A vector of narrower items than T folds item k into accumulator
             * k % vec: a fixed order, with as many accumulators as for T. */
            constexpr int CHAINS = DL_SCAN_REDUCE_CHAINS;
            constexpr int vectors = stage_bytes / 16;
            constexpr int per_vector = 16 / (int)sizeof(IN);
            static_assert(vectors % (32 * CHAINS) == 0, "whole rounds of chains");
            const uint4 *staged = reinterpret_cast<const uint4 *>(stages + s * stage_bytes);
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
                    dl_row_items<IN, per_vector> u;
                    u.raw = staged[j + 32 * c];
#pragma unroll
                    for (int k = 0; k < per_vector; ++k)
                        chain[c][k % S::vec] = Op()(chain[c][k % S::vec], dl_widen<T>(u.item[k]));
                }
            }
#pragma unroll
            for (int c = 0; c < CHAINS; ++c)
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    acc = Op()(acc, chain[c][e]);
        } else if constexpr (ROWS) {
            const uint4 *staged = reinterpret_cast<const uint4 *>(stages + s * stage_bytes);
            const int vectors = (int)((at.end - base) * sizeof(IN) / 16);
            constexpr int per_vector = 16 / (int)sizeof(IN);
            T chain[S::vec];
#pragma unroll
            for (int e = 0; e < S::vec; ++e)
                chain[e] = Op::identity();
            for (int j = lane; j < vectors; j += 32) {
                dl_row_items<IN, per_vector> u;
                u.raw = staged[j];
#pragma unroll
                for (int k = 0; k < per_vector; ++k)
                    chain[k % S::vec] = Op()(chain[k % S::vec], dl_widen<T>(u.item[k]));
            }
#pragma unroll
            for (int e = 0; e < S::vec; ++e)
                acc = Op()(acc, chain[e]);
        } else {
            const IN *in = static_cast<const IN *>(p.in) + base;
            const uint64_t count = p.n - base;
            for (uint64_t i = (uint64_t)lane * S::vec; i < count; i += 32 * S::vec)
                for (int e = 0; e < S::vec; ++e)
                    if (i + e < count)
                        acc = Op()(acc, dl_widen<T>(in[i + e]));
        }
        const T aggregate = dl_warp_reduce<T, Op>(acc);
        const T tile_seed = dl_stage_seed(p, sh, tile, seed); /* every lane: a shuffle */
        if (lane == 0) {
            dl_publish_aggregate<T, Op>(at.descriptors, at.link, sh.epoch, tile_seed, aggregate, probe);
            sh.stage_aggregate[s] = aggregate;
            dl_mbar_arrive(&sh.reduced[s]);
        }
    }
}

/* Compute warps: take each reduced stage in ring order into registers, free it, and scan the
 * tile (look-back by warp 0, inclusive prefix on the reducer's aggregate, stores). A first
 * tile of their own (dl_first_tile_by_compute) they take as soon as it lands, and publish its
 * aggregate themselves. A row's partial last tile is read from its stage up to the row's end,
 * the identity past it. */
template <typename IN, typename T, typename OUT, typename Op, bool LEFT_FOLD, bool ROWS, typename SHARED>
__device__ __forceinline__ void dl_persistent_compute(const dl_scan_params &p, const dl_probe &probe,
                                                      SHARED &sh, const unsigned char *stages,
                                                      uint32_t tiles, T seed)
{
    using S = dl_scan_shape<T>;
    using U = dl_row_items<IN, S::vec>;
    constexpr int stage_bytes = dl_scan_stage_bytes<IN, T>();
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool own_first = dl_first_tile_by_compute<LEFT_FOLD>(tiles);
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        const bool reduced = k > 0 || !own_first;
        dl_mbar_wait(reduced ? &sh.reduced[s] : &sh.full[s], (k / SHARED::stages) & 1);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles)
            return;
        const T aggregate = reduced ? dl_stage_value(sh.stage_aggregate[s]) : Op::identity();
        const uint32_t epoch = sh.epoch;
        const dl_tile_place at = dl_scan_place<T, OUT, ROWS>(p, tile);
        T v[S::rows][S::vec];
        if (ROWS || at.base + S::tile_items <= at.end) {
            const auto *staged = reinterpret_cast<const typename U::raw_type *>(stages + s * stage_bytes);
            const uint64_t count = at.end - at.base;
#pragma unroll
            for (int r = 0; r < S::rows; ++r) {
                const int vector = (warp * S::rows + r) * 32 + lane;
                U u;
                if (!ROWS || (uint64_t)vector * S::vec < count) {
                    u.raw = staged[vector];
#pragma unroll
                    for (int e = 0; e < S::vec; ++e)
                        v[r][e] = dl_widen<T>(u.item[e]);
                } else {
#pragma unroll
                    for (int e = 0; e < S::vec; ++e)
                        v[r][e] = Op::identity();
                }
            }
        } else {
            dl_load_tile<T, Op, true>(static_cast<const IN *>(p.in), at.base, at.end, v);
        }
        /* The reducer is done with the stage: it read the first tile's header, and no more. */
        if (!reduced)
            dl_mbar_wait(&sh.reduced[s], 0);
        __syncwarp();
        if (lane == 0)
            dl_mbar_arrive(&sh.empty[s]);
        dl_scan_tile<T, OUT, Op, true, LEFT_FOLD, true, true>(
            p, probe, sh, at, epoch, dl_stage_seed(p, sh, tile, seed), v, sh.scratch[warp], reduced,
            aggregate);
    }
}

/* The scan's ring: stages of one tile each, as many as fit (ring.cuh), the compute
 * warps' scratch for the transposed warp scan and their totals for a first tile of their own. */
template <typename T, bool LEFT_FOLD, int STAGE_BYTES, int BLOCKS>
struct dl_scan_shared : dl_persistent_shared<T, dl_scan_shape<T>::warps, LEFT_FOLD,
                                             dl_ring_stages(STAGE_BYTES, BLOCKS)> {
    using S = dl_scan_shape<T>;
    T scratch[S::warps][dl_warp_scratch<T, S::rows, S::scratch_passes>::items];
    T warp_totals[S::warps];
    T seed; /* tile 0's, from p.init (dl_scan_fill) */
};

template <typename IN, typename T, bool LEFT_FOLD>
using dl_scan_shared_for =
    dl_scan_shared<T, LEFT_FOLD, dl_scan_stage_bytes<IN, T>(), dl_scan_blocks_per_sm<IN, T>()>;

template <typename IN, typename T, typename OUT, typename Op, bool LEFT_FOLD, bool ROWS>
__global__ void __launch_bounds__(DL_SCAN_PERSISTENT_THREADS, dl_scan_min_blocks<IN, T, ROWS>())
    dl_scan_persistent_kernel(const dl_scan_params p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using S = dl_scan_shape<T>;
    using SHARED = dl_scan_shared_for<IN, T, LEFT_FOLD>;
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ SHARED sh;
    static_assert(dl_ring_fits<SHARED>(dl_scan_stage_bytes<IN, T>(), dl_scan_blocks_per_sm<IN, T>()),
                  "blocks per SM");
    const uint32_t tiles = p.tiles;
    const int warp = threadIdx.x / 32;
    const dl_probe probe(p.control);
    dl_ring_init(sh, S::warps);
    dl_grid_dependency();
    const T seed = dl_seed_of<T, OUT>::bits(p.seed_bits);
    if (warp == S::warps)
        dl_persistent_produce(p.control, probe, sh, tiles,
                              dl_scan_fill<IN, T, OUT, ROWS>{p, stages, &sh.seed});
    else if (warp == S::warps + 1)
        dl_persistent_reduce<IN, T, OUT, Op, LEFT_FOLD, ROWS>(p, probe, sh, stages, tiles, seed);
    else
        dl_persistent_compute<IN, T, OUT, Op, LEFT_FOLD, ROWS>(p, probe, sh, stages, tiles, seed);
    __syncthreads();
    dl_epoch_finish(p.control, sh.epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
#endif
}

/* ---------------------------------------------------------------- launcher */

/* The persistent kernel's launch for IN, T, OUT and Op (ROWS: along long rows): the policy row's
 * grid for T's blocks per SM, at most a block per tile; the left fold where asked for and the
 * order of a fold matters. */
template <typename IN, typename T, typename OUT, typename Op, bool ROWS>
static int dl_scan_persistent_launch(const dl_scan_params *p, int left_fold, cudaStream_t stream)
{
    constexpr bool fold_matters = dl_fold_order_matters<T, Op>::value;
    const uint64_t grid = (uint64_t)p->persistent_blocks / DL_SCAN_BLOCKS_PER_SM * dl_scan_blocks_per_sm<IN, T>();
    const uint64_t blocks = p->tiles < grid ? p->tiles : grid;
    const size_t stage_bytes = (size_t)dl_scan_shared_for<IN, T, false>::stages * dl_scan_stage_bytes<IN, T>();
    return dl_launch(left_fold && fold_matters ? dl_scan_persistent_kernel<IN, T, OUT, Op, fold_matters, ROWS>
                                               : dl_scan_persistent_kernel<IN, T, OUT, Op, false, ROWS>,
                     *p, dim3((unsigned)blocks), dim3(DL_SCAN_PERSISTENT_THREADS), stage_bytes, p->dependent_launch,
                     stream);
}

/* Picks the kernel and instantiation for IN, T, OUT and Op: where the GPU and the alignment
 * allow, persistent, or one block per tile for fewer tiles than its grid; elsewhere one block
 * per tile with element or vector accesses; tree or left fold. */
struct dl_scan_launcher {
    template <typename IN, typename T, typename OUT, typename Op>
    static int run(const dl_scan_params *p, int left_fold, cudaStream_t stream)
    {
        using S = dl_scan_shape<T>;
        constexpr bool fold_matters = dl_fold_order_matters<T, Op>::value;
        const uint32_t tiles = p->tiles;
        const bool vector = (uintptr_t)p->in % 16 == 0 && (uintptr_t)p->out % 16 == 0;
        const bool fold = left_fold && fold_matters;
        /* Long rows: the host sends only what the persistent kernel takes (gpu_backend.c,
         * dl_gpu_long_rows). */
        if (p->row_length) {
            if constexpr (dl_same<IN, T>::value && dl_same<OUT, T>::value)
                return dl_scan_persistent_launch<IN, T, OUT, Op, true>(p, left_fold, stream);
            return (int)cudaErrorInvalidValue;
        }
        /* Persistent from the policy row's count of tiles (policy.h, dl_policy). */
        if (vector && p->persistent_blocks > 0 && tiles > p->persistent_from)
            return dl_scan_persistent_launch<IN, T, OUT, Op, false>(p, left_fold, stream);
        if (vector && p->persistent_blocks > 0)
            return dl_launch(fold ? dl_scan_few_tiles_kernel<IN, T, OUT, Op, fold_matters>
                                  : dl_scan_few_tiles_kernel<IN, T, OUT, Op, false>,
                             *p, dim3((unsigned)tiles), dim3(S::threads), 0, p->dependent_launch, stream);
        void (*kernel)(dl_scan_params) = vector && fold ? dl_scan_kernel<IN, T, OUT, Op, true, fold_matters>
                                         : vector       ? dl_scan_kernel<IN, T, OUT, Op, true, false>
                                         : fold         ? dl_scan_kernel<IN, T, OUT, Op, false, fold_matters>
                                                        : dl_scan_kernel<IN, T, OUT, Op, false, false>;
        return dl_launch(kernel, *p, dim3((unsigned)tiles), dim3(S::threads), 0, p->dependent_launch,
                         stream);
    }
};

extern "C" int dl_gpu_scan_launch(const dl_scan_params *params, dlscan_type in_type, dlscan_type type,
                                  dlscan_op op, int left_fold, cudaStream_t stream)
{
    const int error = dl_dispatch_pair<dl_scan_launcher>(in_type, type, op, params, left_fold, stream);
    return error == DL_NO_PAIR ? (int)cudaErrorInvalidValue : error;
}

/* The columns of one [N, M] array of a type scanned into itself whose rows are 8 or 16 bytes
 * (gpu_backend.c, dl_gpu_lanes; policy.h, DL_AXIS_LANES_*): a plain scan of N rows of lanes
 * (ops.cuh, dl_lanes), each one value combined lane by lane, on the persistent kernel, which the
 * host takes only where it runs (sm_90, 16-byte aligned pointers, more tiles than the policy row's
 * threshold). A row of lanes is an 8- or 16-byte item, so the tile, ring and look-back are the
 * plain scan's: the column kernel's tile per column and serial look-back are left to wider
 * arrays. p.total is d_totals, one row. */
template <typename Y, typename YOp, int M>
static int dl_lanes_run(const dl_scan_params *p, int left_fold, cudaStream_t stream)
{
    using L = dl_lanes<Y, M>;
    static_assert(dl_scan_shape<L>::tile_items == DL_SCAN_TILE_ITEMS_8B * 8 / (int)sizeof(L),
                  "the host's tiles of rows (gpu_backend.c, dl_gpu_lanes)");
    return dl_scan_persistent_launch<L, L, L, dl_lanewise<Y, YOp, M>, false>(p, left_fold, stream);
}

struct dl_lanes_launcher {
    template <typename IN, typename T, typename OUT, typename Op>
    static int run(const dl_scan_params *p, uint32_t lanes, int left_fold, cudaStream_t stream)
    {
        if constexpr (dl_same<IN, T>::value && dl_same<OUT, T>::value && sizeof(T) == 4) {
            if (lanes == DL_AXIS_LANES_4B)
                return dl_lanes_run<T, Op, DL_AXIS_LANES_4B>(p, left_fold, stream);
            if (lanes == DL_AXIS_LANES_4B_WIDE)
                return dl_lanes_run<T, Op, DL_AXIS_LANES_4B_WIDE>(p, left_fold, stream);
        }
        if constexpr (dl_same<IN, T>::value && dl_same<OUT, T>::value && sizeof(T) == 8) {
            if (lanes == DL_AXIS_LANES_8B)
                return dl_lanes_run<T, Op, DL_AXIS_LANES_8B>(p, left_fold, stream);
        }
        return (int)cudaErrorInvalidValue;
    }
};

extern "C" int dl_gpu_lanes_launch(const dl_scan_params *params, dlscan_type type, dlscan_op op, uint32_t lanes,
                                   int left_fold, cudaStream_t stream)
{
    const int error = dl_dispatch_pair<dl_lanes_launcher>(type, type, op, params, lanes, left_fold, stream);
    return error == DL_NO_PAIR ? (int)cudaErrorInvalidValue : error;
}

/* The total of a scan of no items: the init, from device memory or as bits. */
__global__ void dl_scan_total_kernel(const void *init, void *total, uint64_t bits, int bytes)
{
    const unsigned char *from = init ? static_cast<const unsigned char *>(init)
                                     : reinterpret_cast<const unsigned char *>(&bits);
    for (int i = 0; i < bytes; ++i)
        static_cast<unsigned char *>(total)[i] = from[i];
}

extern "C" int dl_gpu_scan_total(const void *init, void *total, uint64_t init_bits, size_t bytes,
                                 cudaStream_t stream)
{
    dl_scan_total_kernel<<<1, 1, 0, stream>>>(init, total, init_bits, (int)bytes);
    return (int)cudaGetLastError();
}
