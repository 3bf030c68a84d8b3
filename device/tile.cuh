/*
 * tile.cuh: the tile machinery every single-pass kernel shares, around the look-back of
 * lookback.h:
 *   dl_tile_take      thread 0 takes the block's tile from the handle's counter;
 *   dl_tile_warp_prefix  a warp's exclusive prefix over the whole input, from the warps'
 *                     totals: a block scan, then warp 0 publishes the tile's aggregate, looks
 *                     back and publishes its inclusive prefix;
 *   dl_tile_publish_aggregate  the tile's aggregate published before any scan (the
 *                     persistent scan's block that takes its only tile alone);
 *   dl_tile_prefixes  each lane's per-row partials to exclusive prefixes over the whole input:
 *                     one warp scan per row, then dl_tile_warp_prefix;
 *   dl_warp_prefixes_transposed  the same within a warp, with one warp scan per pass: the rows
 *                     transposed through shared memory (the persistent scan's way, and
 *                     the few-tiles scan's for 64-bit items);
 *   dl_tile_finish    in the rare call where the epoch wraps, the last block to finish
 *                     clears the descriptors.
 * Together with the last ticket's reset in dl_tile_take, the next call needs no
 * initialization launch.
 *
 * Data layout the prefixes assume: warp w of the block owns a contiguous run of the tile;
 * within it, row r comes before row r+1, and within a row lane l before lane l+1.
 */
#ifndef DLSCAN_TILE_CUH
#define DLSCAN_TILE_CUH

#include "lookback.h"

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
 * Tickets (lookback.h Part 1, "Tickets"), drawn by one thread of the block: relaxed atomic
 * adds to the word that holds both the tile counter and the epoch, so each draw also says
 * which call it belongs to. The block that draws the call's last ticket writes the word anew
 * (the counter back at its base, the next epoch): every other draw of the call came before
 * its own in the word's order. Every block a tile may wait on drew that tile's ticket earlier
 * and works its tiles in the order it drew them, so the lowest unfinished tile always belongs
 * to a block that is working on it: forward progress needs no assumption about the order in
 * which the hardware schedules blocks.
 */
/* The call's epoch and counter base, as the block's first ticket found them. */
typedef struct dl_ticket_state {
    uint32_t epoch;
    uint32_t base;
} dl_ticket_state;

__device__ __forceinline__ unsigned long long dl_counter_add(dl_control *control)
{
    unsigned long long word;
    asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], %2;"
                 : "=l"(word)
                 : "l"(&control->counter), "l"(DL_COUNTER_TICKET)
                 : "memory");
    return word;
}

/* Draws a ticket and returns it as a tile index (>= the call's tile count: none left). */
__device__ __forceinline__ uint32_t dl_ticket_draw(dl_control *control, const dl_ticket_state &state)
{
    return dl_ticket_tile(dl_counter_ticket(dl_counter_add(control)), state.base);
}

/* The block's first ticket. The base changes only between calls, while the GPU is idle. */
__device__ __forceinline__ uint32_t dl_ticket_draw_first(dl_control *control, dl_ticket_state *state)
{
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(state->base) : "l"(&control->ticket_base));
    const unsigned long long word = dl_counter_add(control);
    state->epoch = dl_counter_epoch(word);
    return dl_ticket_tile(dl_counter_ticket(word), state->base);
}

/* Call with every ticket drawn: the one that draws the last of `tickets` resets. */
__device__ __forceinline__ void dl_ticket_check_last(dl_control *control, uint32_t tile,
                                                     uint32_t tickets, const dl_ticket_state &state)
{
    if (dl_is_last_ticket(tile, tickets) && !dl_epoch_wraps(state.epoch))
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(&control->counter),
                     "l"(dl_counter_word(state.base, dl_epoch_next(state.epoch)))
                     : "memory");
}

/*
 * Programmatic dependent launch (sm_90). The launcher may let a kernel's blocks be placed
 * while the stream's previous kernel is still finishing (dl_launch in scan_kernel.cu); each
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
__device__ __forceinline__ void dl_tile_take(dl_control *control, SHARED &sh, uint32_t *tile,
                                             uint32_t *epoch)
{
    if (threadIdx.x == 0) {
        dl_ticket_state state;
        const uint32_t ticket = dl_ticket_draw_first(control, &state);
        dl_ticket_check_last(control, ticket, gridDim.x, state);
        sh.tile = ticket;
        sh.epoch = state.epoch;
        sh.ticket_base = state.base;
    }
    __syncthreads();
    *tile = sh.tile;
    *epoch = sh.epoch;
}

/* Inclusive scan over the 32 lanes of a warp (Kogge-Stone, a fixed order). */
template <typename T, typename Op> __device__ __forceinline__ T dl_warp_inclusive_scan(T x)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const T earlier = dl_shfl_up(x, offset);
        if (dl_op_idempotent<Op>::value || lane >= offset) /* lookback.h */
            x = Op()(earlier, x);
    }
    return x;
}

/* x[0] (+) ... (+) x[N-1] in a balanced tree of neighbours: log2(N) dependent steps where the
 * left-to-right chain takes N - 1 (still a fixed order). */
template <typename T, typename Op, int N>
__device__ __forceinline__ T dl_reduce_pairwise(const T (&x)[N])
{
    T y[N];
#pragma unroll
    for (int i = 0; i < N; ++i)
        y[i] = x[i];
#pragma unroll
    for (int width = N; width > 1; width = (width + 1) / 2) {
#pragma unroll
        for (int i = 0; i < width / 2; ++i)
            y[i] = Op()(y[2 * i], y[2 * i + 1]);
        if (width % 2)
            y[width / 2] = y[width - 1];
    }
    return y[0];
}

/* Testing aid (DLSCAN_OPTION_TEST_DELAY_US): a pause of 0 .. delay_ns nanoseconds, picked
 * by hashing the tile and `salt`, so that look-backs meet X, long runs of A and late P. */
__device__ __forceinline__ void dl_test_pause(uint32_t tile, uint32_t salt, uint32_t delay_ns)
{
    if (!delay_ns)
        return;
    uint32_t h = (tile + 1) * 2654435761u ^ salt * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    uint32_t ns = h % (delay_ns + 1);
    while (ns) {
        const uint32_t step = ns < 1000000u ? ns : 1000000u; /* __nanosleep's longest */
        __nanosleep(step);
        ns -= step;
    }
}

/* One thread publishes a tile's aggregate as soon as it is known, before the tile's scan:
 * as A, or for tile 0 as its inclusive prefix P, seed first (the testing pause before). */
template <typename T, typename Op>
__device__ __forceinline__ void dl_publish_aggregate(dl_word *descriptors, uint32_t tile, uint32_t epoch,
                                                     T seed, T aggregate, uint32_t test_delay_ns)
{
    dl_test_pause(tile, 1, test_delay_ns);
    dl_gpu_publish<T>(descriptors, tile, epoch, tile == 0 ? DL_STATUS_P : DL_STATUS_A,
                      tile == 0 ? Op()(seed, aggregate) : aggregate);
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
 * look-back window's slots per lane (lookback.h).
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
                                                 dl_word *descriptors, unsigned long long *stats,
                                                 bool is_published, T published,
                                                 uint32_t test_delay_ns)
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
            dl_publish_aggregate<T, Op>(descriptors, tile, epoch, seed, aggregate, test_delay_ns);
        T prefix = seed;
        if (tile != 0) {
            prefix = dl_gpu_lookback<T, Op, LEFT_FOLD, SLOTS>(descriptors, tile, epoch,
                                                              sh.fold_buffer, stats);
            if (lane == 0) {
                dl_test_pause(tile, 2, test_delay_ns);
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
 * Publishes the tile's aggregate before any scan (for tile 0, its inclusive prefix, seed
 * first): each warp reduces its lanes' rows (a tree, then over its lanes) into `warp_totals`
 * (WARPS slots of shared memory), warp 0 the warps' totals over WARPS lanes only. Returns the
 * aggregate in warp 0 (dl_tile_warp_prefix's `published`); synchronizes the tile's warps once.
 */
template <typename T, typename Op, int ROWS, int WARPS, bool SPECIALIZED>
__device__ __forceinline__ T dl_tile_publish_aggregate(T *warp_totals, const T (&lane_sum)[ROWS],
                                                       uint32_t tile, uint32_t epoch, T seed,
                                                       dl_word *descriptors, uint32_t test_delay_ns)
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
            dl_publish_aggregate<T, Op>(descriptors, tile, epoch, seed, aggregate, test_delay_ns);
    }
    return aggregate;
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
                                                 dl_word *descriptors, unsigned long long *stats,
                                                 bool is_published, T published,
                                                 uint32_t test_delay_ns)
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
        sh, warp_total, tile, epoch, seed, descriptors, stats, is_published, published, test_delay_ns);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        row_prefix[r] = Op()(running, lane_exclusive[r]);
        running = Op()(running, row_total[r]);
    }
}

/*
 * The transposed warp scan: each lane's per-row partials lane_sum[r] to warp_prefix[r], the
 * exclusive prefix of the row's first item within the warp, and the warp's total (returned),
 * with one warp scan per pass where dl_tile_prefixes takes one per row. The warp's
 * 32 x ROWS lane partials go through shared memory (`scratch`, this warp's dl_warp_scratch),
 * so that each lane holds ROWS / PASSES consecutive ones in the tile's order; the lane scans
 * those, a warp scan joins the lanes, and the prefixes come back to the rows' owners the same
 * way. A pass takes ROWS / PASSES rows, so that the scratch stays near 1 KB per warp. For a
 * 64-bit tile of 8 rows in two passes, per thread: 24 applications of the operator and 28
 * shuffles before the look-back and 8 applications after it, where the row scans take 47 and
 * 112, and 16 (bench/NOTES.md, section 26). The scratch's padding (one slot after every 128
 * bytes) keeps both the row-major accesses (lane l, row r at r * 32 + l) and the run-major
 * ones (lane j, from j * ROWS / PASSES on) free of bank conflicts.
 */
template <typename T, int ROWS, int PASSES> struct dl_warp_scratch {
    static constexpr int rows = ROWS / PASSES; /* per pass */
    static constexpr int items = 32 * rows + 32 * rows * (int)sizeof(T) / 128;
    static_assert(ROWS % PASSES == 0, "whole rows per pass");
};
template <typename T> __device__ __forceinline__ int dl_scratch_index(int x)
{
    return x + x / (128 / (int)sizeof(T));
}

template <typename T, typename Op, int ROWS, int PASSES>
__device__ __forceinline__ T dl_warp_prefixes_transposed(const T (&lane_sum)[ROWS],
                                                         T (&warp_prefix)[ROWS], T *scratch)
{
    constexpr int RUN = dl_warp_scratch<T, ROWS, PASSES>::rows; /* a lane's run per pass */
    const int lane = threadIdx.x % 32;

    /* Each pass's rows in, each lane's run out; then the runs scanned. */
    T run[PASSES][RUN];
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
#pragma unroll
        for (int r = 0; r < RUN; ++r)
            scratch[dl_scratch_index<T>(r * 32 + lane)] = lane_sum[pass * RUN + r];
        __syncwarp();
#pragma unroll
        for (int i = 0; i < RUN; ++i)
            run[pass][i] = scratch[dl_scratch_index<T>(lane * RUN + i)];
        __syncwarp();
    }
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass)
#pragma unroll
        for (int i = 1; i < RUN; ++i)
            run[pass][i] = Op()(run[pass][i - 1], run[pass][i]);

    /* One warp scan per pass over the lanes' run totals. */
    T run_before[PASSES];
    T pass_total[PASSES];
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
        const T inclusive = dl_warp_inclusive_scan<T, Op>(run[pass][RUN - 1]);
        pass_total[pass] = dl_shfl(inclusive, 31);
        const T before = dl_shfl_up(inclusive, 1);
        run_before[pass] = lane == 0 ? Op::identity() : before;
    }

    /* Each lane writes the prefixes of the slots it read; the rows' owners read them. */
    T pass_start = pass_total[0]; /* the warp's items before the next pass */
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
        const T start = pass == 0 ? run_before[0] : Op()(pass_start, run_before[pass]);
        scratch[dl_scratch_index<T>(lane * RUN)] = start;
#pragma unroll
        for (int i = 1; i < RUN; ++i)
            scratch[dl_scratch_index<T>(lane * RUN + i)] = Op()(start, run[pass][i - 1]);
        __syncwarp();
#pragma unroll
        for (int r = 0; r < RUN; ++r)
            warp_prefix[pass * RUN + r] = scratch[dl_scratch_index<T>(r * 32 + lane)];
        __syncwarp();
        if (pass > 0)
            pass_start = Op()(pass_start, pass_total[pass]);
    }
    return pass_start;
}

/* In the one call in 2^30 where the epoch wraps, every block counts itself done, and the
 * last to finish clears the descriptors, resets the counters and starts the epochs over.
 * Otherwise there is nothing to do. */
__device__ __forceinline__ void dl_tile_finish(dl_control *control, uint32_t epoch,
                                               uint32_t ticket_base, dl_word *descriptors,
                                               uint64_t descriptor_words)
{
    if (threadIdx.x != 0 || !dl_epoch_wraps(epoch))
        return;
    __threadfence(); /* this block's descriptor writes come before its done count */
    const uint32_t done_before = atomicAdd(&control->blocks_done, 1u);
    if (!dl_is_last_worker(done_before, gridDim.x))
        return;
    __threadfence();
    for (uint64_t i = 0; i < descriptor_words; ++i)
        descriptors[i] = 0;
    control->counter = dl_counter_word(ticket_base, dl_epoch_next(epoch));
    control->blocks_done = 0;
}

#endif /* DLSCAN_TILE_CUH */
