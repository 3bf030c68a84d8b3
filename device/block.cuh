/*
 * block.cuh: a tile's block around the look-back of lookback.cuh, for any value type T and
 * operator Op (Op::identity(), Op()(earlier, later)): its shared variables, the dependent
 * launch's wait, the tile drawn from the handle's counter, and the block's part of a tile's
 * prefixes (dl_tile_warp_prefix: a block scan of the warps' totals, then warp 0 publishes the
 * aggregate, looks back and publishes the inclusive prefix; dl_tile_prefixes, the same from each
 * lane's per-row partials, with one warp scan per row). Device code only, with no CUDA
 * header: the kernels nvcc builds include it through tile.cuh, and the kernels of user
 * operators (user_kernel.cuh), which NVRTC compiles at run time, include it alone.
 */
#ifndef DLSCAN_BLOCK_CUH
#define DLSCAN_BLOCK_CUH

#include <stdint.h>

#include "lookback.cuh"
#include "policy.h"
#include "warp.cuh"

/* ---------------------------------------------------------------- the block's part */

/* Shared memory of one block. */
template <typename T, int WARPS, bool LEFT_FOLD> struct dl_tile_shared {
    uint32_t tile;
    uint32_t epoch;
    uint32_t ticket_base;
    T warp_prefix[WARPS]; /* first each warp's total, then its exclusive prefix in the tile */
    T tile_prefix;        /* the tile's exclusive prefix, from the look-back */
    T fold_buffer[LEFT_FOLD ? DL_FOLD_WINDOWS * DL_WINDOW : 1];
};

/*
 * Programmatic dependent launch (sm_90). The launcher may let a kernel's blocks be placed
 * while the stream's previous kernel is still finishing (enqueue.h, dl_enqueue); each
 * block then waits here until that kernel is complete and its writes are visible, before it
 * touches global memory, and at once lets the stream's next kernel be placed the same way.
 * Back-to-back calls so overlap one kernel's launch with the end of the one before. Without
 * such a launch, the wait returns at once.
 */
__device__ __forceinline__ void dl_grid_dependency(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* One tile per block: thread 0 draws it (one ticket per block in all), the block learns it. */
template <typename SHARED>
__device__ __forceinline__ void dl_tile_take(dl_control *control, const dl_probe &probe, SHARED &sh,
                                             uint32_t *tile, uint32_t *epoch)
{
    if (threadIdx.x == 0) {
        dl_ticket_state state;
        const uint32_t ticket = dl_ticket_draw_first(control, probe, &state);
        dl_ticket_check_last(control, ticket, gridDim.x, state);
        sh.tile = ticket;
        sh.epoch = state.epoch;
        sh.ticket_base = state.base;
    }
    __syncthreads();
    *tile = sh.tile;
    *epoch = sh.epoch;
}

/* Synchronizes the threads that work the tile: the whole block, or, in a block whose other
 * warps have roles of their own (SPECIALIZED), the first WARPS warps on named barrier 1. */
template <bool SPECIALIZED, int WARPS> __device__ __forceinline__ void dl_tile_sync()
{
    if (SPECIALIZED)
        asm volatile("bar.sync 1, %0;" ::"n"(WARPS * 32) : "memory");
    else
        __syncthreads();
}

/*
 * The block's part of a tile's prefixes. warp_total: the reduction of this warp's items.
 * Returns this warp's exclusive prefix over the whole input, seed first. The first WARPS
 * warps of the block call it; it synchronizes them twice.
 *
 * SPECIALIZED: the block's other warps have roles of their own (dl_tile_sync). SLOTS: the
 * look-back window's slots per lane (protocol.h, "Windows").
 * `is_published` = false: warp 0 publishes the tile's aggregate (its own tree over the block)
 * and, after the look-back, its inclusive prefix. `is_published` = true: another warp already
 * published the aggregate `published` (and, for tile 0, the inclusive prefix), which warp 0
 * passes in; the inclusive prefix is built on that same value, so that P = E (+) A holds for
 * every reader.
 */
template <typename T, typename Op, bool LEFT_FOLD, int WARPS, bool SPECIALIZED,
          int SLOTS = DL_SLOTS_PER_LANE>
__device__ __forceinline__ T dl_tile_warp_prefix(dl_tile_shared<T, WARPS, LEFT_FOLD> &sh, T warp_total,
                                                 uint32_t tile, uint32_t epoch, T seed,
                                                 dl_word *descriptors, const dl_probe &probe,
                                                 bool is_published, T published)
{
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0)
        sh.warp_prefix[warp] = warp_total;
    dl_tile_sync<SPECIALIZED, WARPS>();

    /* Warp 0: the tile's aggregate and warp prefixes, then the descriptor protocol. */
    if (warp == 0) {
        const T total = lane < WARPS ? sh.warp_prefix[lane] : Op::identity();
        const T inclusive = dl_warp_inclusive_scan<T, Op>(total);
        /* is_published is the same in every lane, so the shuffle is taken by all or none */
        const T aggregate = is_published ? published : dl_shfl(inclusive, WARPS - 1);
        const T before = dl_shfl_up(inclusive, 1);
        if (lane < WARPS)
            sh.warp_prefix[lane] = lane == 0 ? Op::identity() : before;
        /* The aggregate out before the look-back: successors may fold it now. */
        if (!is_published && lane == 0)
            dl_publish_aggregate<T, Op>(descriptors, tile, epoch, seed, aggregate, probe);
        T prefix = seed;
        if (tile != 0) {
            prefix = dl_gpu_lookback<T, Op, LEFT_FOLD, SLOTS>(descriptors, tile, epoch,
                                                              sh.fold_buffer, probe);
            if (lane == 0) {
                probe.pause(tile, 2);
                dl_gpu_publish<T>(descriptors, tile, epoch, DL_STATUS_P, Op()(prefix, aggregate));
            }
        }
        if (lane == 0)
            sh.tile_prefix = prefix;
    }
    dl_tile_sync<SPECIALIZED, WARPS>();
    return Op()(sh.tile_prefix, sh.warp_prefix[warp]);
}

/*
 * lane_sum[r]: the reduction of this lane's items in row r (identity where it has none).
 * Writes row_prefix[r]: the exclusive prefix of the first of those items over the whole
 * input, seed first: one warp scan per row, then dl_tile_warp_prefix (whose parameters it
 * passes on).
 */
template <typename T, typename Op, bool LEFT_FOLD, int ROWS, int WARPS, bool SPECIALIZED>
__device__ __forceinline__ void dl_tile_prefixes(dl_tile_shared<T, WARPS, LEFT_FOLD> &sh,
                                                 const T (&lane_sum)[ROWS], T (&row_prefix)[ROWS],
                                                 uint32_t tile, uint32_t epoch, T seed,
                                                 dl_word *descriptors, const dl_probe &probe,
                                                 bool is_published, T published)
{
    const int lane = threadIdx.x % 32;

    /* Each row scanned across the warp's lanes; rows totalled. */
    T lane_exclusive[ROWS];
    T row_total[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const T inclusive = dl_warp_inclusive_scan<T, Op>(lane_sum[r]);
        row_total[r] = dl_shfl(inclusive, 31);
        const T before = dl_shfl_up(inclusive, 1);
        lane_exclusive[r] = lane == 0 ? Op::identity() : before;
    }
    T warp_total = row_total[0];
#pragma unroll
    for (int r = 1; r < ROWS; ++r)
        warp_total = Op()(warp_total, row_total[r]);

    T running = dl_tile_warp_prefix<T, Op, LEFT_FOLD, WARPS, SPECIALIZED>(
        sh, warp_total, tile, epoch, seed, descriptors, probe, is_published, published);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        row_prefix[r] = Op()(running, lane_exclusive[r]);
        running = Op()(running, row_total[r]);
    }
}

#endif /* DLSCAN_BLOCK_CUH */
