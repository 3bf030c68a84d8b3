/*
 * lookback.cuh: the protocol of protocol.h as a GPU runs it: tickets from the handle's
 * counter, descriptor stores and loads (relaxed, at GPU scope), publishing a tile's
 * aggregate, the look-back of one warp over a window of 32 or 64 predecessors, and the
 * clearing in the one call in 2^30 where the epoch wraps. Below it: warp.cuh and the probe;
 * above it: tile.cuh, which gives each tile's block its part.
 */
#ifndef DLSCAN_LOOKBACK_CUH
#define DLSCAN_LOOKBACK_CUH

#include <stdint.h>

#include "probe.cuh"
#include "protocol.h"
#include "warp.cuh"

/* ---------------------------------------------------------------- tickets */

/*
 * Tickets (protocol.h, "Tickets"), drawn by one thread of the block: relaxed atomic adds to
 * the word that holds both the tile counter and the epoch, so each draw also says which call
 * it belongs to. The block that draws the call's last ticket writes the word anew (the counter
 * back at its base, the next epoch): every other draw of the call came before its own in the
 * word's order. Every block a tile may wait on drew that tile's ticket earlier and works its
 * tiles in the order it drew them, so the lowest unfinished tile always belongs to a block
 * that is working on it: forward progress needs no assumption about the order in which the
 * hardware schedules blocks.
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

/* The block's first ticket, with the call's epoch and the counter's base (0 but in tests:
 * probe.cuh). */
__device__ __forceinline__ uint32_t dl_ticket_draw_first(dl_control *control, const dl_probe &probe,
                                                         dl_ticket_state *state)
{
    state->base = probe.ticket_base();
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

/* ---------------------------------------------------------------- descriptors */

/* Descriptor accesses are relaxed at GPU scope: coherent in L2, never served stale from
 * L1, and in no order with other accesses, none being needed (protocol.h). Pairs of words move
 * as one 16-byte access (protocol.h does not rely on that). */
__device__ __forceinline__ dl_word dl_gpu_load_word(const dl_word *p)
{
    dl_word w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}

__device__ __forceinline__ void dl_gpu_load_words2(const dl_word *p, dl_word *w0, dl_word *w1)
{
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(*w0), "=l"(*w1)
                 : "l"(p)
                 : "memory");
}

__device__ __forceinline__ void dl_gpu_store_word(dl_word *p, dl_word w)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}

__device__ __forceinline__ void dl_gpu_store_words2(dl_word *p, dl_word w0, dl_word w1)
{
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(w0), "l"(w1)
                 : "memory");
}

/* Publishes tile's descriptor: a word for each of T's 32-bit pieces, an even number of words past
 * one (protocol.h, DL_DESCRIPTOR_WORDS: a padding word carries the tag alone). */
template <typename T>
__device__ __forceinline__ void dl_gpu_publish(dl_word *descriptors, uint32_t tile, uint32_t epoch,
                                               uint32_t status, T value)
{
    const dl_pieces<T> p = dl_to_pieces(value);
    dl_word *d = descriptors + (uint64_t)tile * p.words;
    if (p.words == 1) {
        dl_gpu_store_word(d, dl_word_make(epoch, status, p.piece[0]));
    } else {
#pragma unroll
        for (int k = 0; k < p.words; k += 2)
            dl_gpu_store_words2(d + k, dl_word_make(epoch, status, p.piece[k]),
                                dl_word_make(epoch, status, k + 1 < p.count ? p.piece[k + 1] : 0u));
    }
}

/* Reads tile's descriptor; tiles before 0 read as P with the identity. */
template <typename T, typename Op>
__device__ __forceinline__ uint32_t dl_gpu_read(const dl_word *descriptors, int64_t tile,
                                                uint32_t epoch, T *value)
{
    if (tile < 0) {
        *value = Op::identity();
        return DL_STATUS_P;
    }
    dl_pieces<T> p;
    dl_word w[dl_pieces<T>::words];
    const dl_word *d = descriptors + (uint64_t)tile * p.words;
    if (p.words == 1) {
        w[0] = dl_gpu_load_word(d);
    } else {
#pragma unroll
        for (int k = 0; k < p.words; k += 2)
            dl_gpu_load_words2(d + k, &w[k], &w[k + 1]);
    }
#pragma unroll
    for (int k = 0; k < p.count; ++k)
        p.piece[k] = dl_word_payload(w[k]);
    *value = dl_from_pieces<T>(p);
    return dl_descriptor_status(w, p.words, epoch);
}

/* One thread publishes a tile's aggregate as soon as it is known, before the tile's scan:
 * as A, or for tile 0 as its inclusive prefix P, seed first (the probe's pause before). */
template <typename T, typename Op>
__device__ __forceinline__ void dl_publish_aggregate(dl_word *descriptors, uint32_t tile, uint32_t epoch,
                                                     T seed, T aggregate, const dl_probe &probe)
{
    probe.pause(tile, 1);
    dl_gpu_publish<T>(descriptors, tile, epoch, tile == 0 ? DL_STATUS_P : DL_STATUS_A,
                      tile == 0 ? Op()(seed, aggregate) : aggregate);
}

/* A segmented scan's tile publishes its value as soon as it is known: as P where the tile holds
 * a segment's first item (protocol.h, "Segments": the value then depends on this tile alone),
 * else as A (the probe's pause before). */
template <typename T>
__device__ __forceinline__ void dl_publish_segment_value(dl_word *descriptors, uint32_t tile, uint32_t epoch,
                                                         bool has_head, T value, const dl_probe &probe)
{
    probe.pause(tile, 1);
    dl_gpu_publish<T>(descriptors, tile, epoch, has_head ? DL_STATUS_P : DL_STATUS_A, value);
}

/* ---------------------------------------------------------------- the look-back */

/*
 * The look-back of tile `tile` (> 0): run by all 32 lanes of one warp; returns the
 * tile's exclusive prefix in every lane. Lane l watches slots l*K .. l*K+K-1 of the window
 * (K = SLOTS, at most DL_SLOTS_PER_LANE).
 *
 * LEFT_FOLD = false folds each window as a tree: each lane folds its slots in order, the
 * lanes below the nearest P contribute the identity (the paper's segmented reduction), and
 * an order-keeping tree combines the lanes. LEFT_FOLD = true keeps the windows in `fold_buffer`
 * (shared memory, DL_FOLD_WINDOWS * DL_WINDOW values) and lane 0 folds them strictly in
 * index order (protocol.h, "Left-fold order").
 *
 * Lane 0 counts the look-back's events through the probe (the testing build only).
 */
template <typename T, typename Op, bool LEFT_FOLD, int SLOTS = DL_SLOTS_PER_LANE>
__device__ T dl_gpu_lookback(const dl_word *descriptors, int64_t tile, uint32_t epoch,
                             T *fold_buffer, const dl_probe &probe)
{
    constexpr int K = SLOTS, window = DL_WINDOW_LANES * K;
    static_assert(K >= 1 && K <= DL_SLOTS_PER_LANE, "the fold buffer holds windows of DL_WINDOW");
    const int lane = threadIdx.x % 32;
    const bool counts = probe.counting() && lane == 0;
    if (counts)
        probe.count(DL_STAT_LOOKBACKS, 1);

    T running = Op::identity();     /* tree mode: what the windows read so far add up to */
    T first_value = Op::identity(); /* left-fold mode: the P the fold starts from */
    int first_index = 0;            /* left-fold mode: the slot after it, in the last window */
    int windows = 0;
    int64_t last = tile - 1;
    for (;;) {
        /* Step 1: read the window until no slot is X. */
        T value[K];
        uint32_t status[K];
        uint32_t backoff = DL_BACKOFF_FIRST_NS;
        for (;;) {
            bool any_x = false;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                status[k] = dl_gpu_read<T, Op>(descriptors, dl_window_tile(last, lane, k, K), epoch,
                                               &value[k]);
                any_x |= status[k] == DL_STATUS_X;
            }
            const uint32_t x_lanes = __ballot_sync(0xffffffffu, any_x);
            if (dl_window_action(x_lanes, 0) != DL_WINDOW_WAIT)
                break;
            if (counts)
                probe.count(DL_STAT_WAITS_ON_X, 1);
            __nanosleep(backoff);
            backoff = dl_backoff_next(backoff);
        }

        /* Step 2: find the nearest P, if any: its lane, then its slot in that lane. */
        uint32_t p_slots = 0, a_slots = 0;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            p_slots |= (uint32_t)(status[k] == DL_STATUS_P) << k;
            a_slots |= (uint32_t)(status[k] == DL_STATUS_A) << k;
        }
        const uint32_t p_lanes = __ballot_sync(0xffffffffu, p_slots != 0);
        const int action = dl_window_action(0, p_lanes);
        const int first_lane = dl_window_first_lane(p_lanes);
        const int first_slot = __shfl_sync(0xffffffffu, dl_lane_first_slot(p_slots), first_lane);
        const uint32_t folded = dl_lane_fold_mask(lane, first_lane, first_slot, K);
        if (probe.counting()) { /* the whole warp takes the sum */
            const unsigned long long aggregates = __reduce_add_sync(0xffffffffu, __popc(a_slots & folded));
            if (counts)
                probe.count(DL_STAT_AGGREGATES_FOLDED, aggregates);
        }

        /* Step 3: fold, then stop at the P or slide the window back. */
        if (LEFT_FOLD) {
            T at_first = value[0];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                fold_buffer[windows * window + lane * K + k] = value[k];
                if (k == first_slot)
                    at_first = value[k];
            }
            ++windows;
            if (action == DL_WINDOW_STOP) {
                if (counts)
                    probe.count(DL_STAT_STOPS_AT_P, 1);
                first_value = dl_shfl(at_first, first_lane);
                first_index = first_lane * K + first_slot + 1;
                break;
            }
        } else {
            T mine = Op::identity();
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (folded >> k & 1)
                    mine = Op()(mine, value[k]);
            running = Op()(dl_warp_reduce<T, Op>(mine), running);
            if (action == DL_WINDOW_STOP) {
                if (counts)
                    probe.count(DL_STAT_STOPS_AT_P, 1);
                return running;
            }
        }
        if (counts)
            probe.count(DL_STAT_WINDOWS_SLID, 1);
        last -= window;
        if (LEFT_FOLD && dl_fold_buffer_full(windows)) {
            /* Buffer full: wait for the tile just before the buffered windows to be P. */
            if (counts)
                probe.count(DL_STAT_WAITS_FOR_P, 1);
            backoff = DL_BACKOFF_FIRST_NS;
            while (dl_gpu_read<T, Op>(descriptors, last, epoch, &first_value) != DL_STATUS_P) {
                __nanosleep(backoff);
                backoff = dl_backoff_next(backoff);
            }
            first_index = 0;
            break;
        }
    }

    /* Left fold: lane 0 folds the buffered windows in index order, farthest first. The
     * shared-memory reads go eight at a time ahead of the (strictly ordered) adds. */
    __syncwarp();
    T acc = first_value;
    if (lane == 0) {
        int index = first_index;
        for (int w = windows - 1; w >= 0; --w, index = 0) {
            const T *buffered = fold_buffer + w * window;
            for (; index + 8 <= window; index += 8) {
                T batch[8];
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    batch[u] = buffered[index + u];
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    acc = Op()(acc, batch[u]);
            }
            for (; index < window; ++index)
                acc = Op()(acc, buffered[index]);
        }
    }
    return dl_shfl(acc, 0);
}

/* ---------------------------------------------------------------- the epoch's wrap */

/* In the one call in 2^30 where the epoch wraps, every block counts itself done, and the
 * last to finish clears the descriptors, resets the counters and starts the epochs over.
 * Otherwise there is nothing to do. */
__device__ __forceinline__ void dl_epoch_finish(dl_control *control, uint32_t epoch,
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

#endif /* DLSCAN_LOOKBACK_CUH */
