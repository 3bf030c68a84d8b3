/*
 * lookback.h: the decoupled look-back of Merrill & Garland (2016), in one place.
 *
 * Part 1, plain C, compiled by nvcc into the GPU kernel and by the C compiler into the
 * CPU backend: the partition descriptor format and every decision of the protocol
 * (status decoding, epochs, window geometry, what a window means, back-off, when a
 * left-folding look-back stops buffering).
 * Part 2, CUDA only: the look-back as the GPU runs it, one warp over a window of 32 or 64
 * predecessors.
 * Part 3, C11 only: the same look-back as a CPU thread runs it, one thread walking the
 * lanes and slots of the same window.
 *
 * The protocol, per partition (tile) i of one call:
 *   1. take i from a shared counter (not from the block or thread number), so every tile
 *      a worker waits on belongs to a worker that is already running: forward progress
 *      never depends on the order in which workers are scheduled;
 *   2. reduce the tile and publish its aggregate with status A (tile 0 publishes its
 *      inclusive prefix with status P at once);
 *   3. look back over the predecessors' descriptors, a window (32 or 64 tiles) at a time,
 *      nearest last: any X -> wait and read the window again; all A -> fold the aggregates
 *      and slide the window back; some P -> fold from the nearest P up to tile i-1 and
 *      stop. The result is tile i's exclusive prefix;
 *   4. publish exclusive prefix (+) aggregate with status P;
 *   5. scan the tile seeded with the exclusive prefix and write it.
 */
#ifndef DLSCAN_LOOKBACK_H
#define DLSCAN_LOOKBACK_H

#include <stdint.h>

#ifdef __CUDACC__
#define DL_PROTOCOL_FN static __host__ __device__ __forceinline__
#else
#define DL_PROTOCOL_FN static inline
#endif

/* ======================================================================================
 * Part 1: descriptor format and protocol decisions (plain C)
 * ====================================================================================== */

/* The status of a partition descriptor, as this call sees it. */
enum dl_status {
    DL_STATUS_X = 0, /* not ready: nothing published yet in this call, or a stale
                        descriptor left by an earlier call (its epoch differs) */
    DL_STATUS_A = 1, /* aggregate: the value reduces this tile's items alone */
    DL_STATUS_P = 2  /* inclusive prefix: the value reduces every item up to the end of
                        this tile, the scan's seed first */
};

/*
 * A descriptor word is 64 bits, written with one 64-bit store and read with one 64-bit
 * load:
 *
 *     bits 63..34  epoch   (the call that wrote it; 1 .. DL_EPOCH_LAST)
 *     bits 33..32  status  (enum dl_status)
 *     bits 31..0   payload (32 bits of the value)
 *
 * Bits 63..32 together are the word's tag. A 32-bit value is one word: status and value
 * share one machine word, so a reader that sees the status sees the value that went with
 * it, with no fence between them.
 *
 * A wider value (64 bits for 64-bit scans; 128 bits for the pairs that run-length encoding
 * and reduce-by-key carry) takes 2 or 4 words, word k holding bits 32k .. 32k+31, and every
 * word carries the same tag. Why that is as race-free as one word, under the PTX memory
 * model: each aligned 64-bit store is single-copy atomic, so each load returns one whole
 * earlier store to that word, tag and payload together. In one call a descriptor is written
 * at most twice, once with status A and once with status P, and each write puts one tag on
 * all its words; tags of earlier calls carry other epochs. So if a reader finds the same
 * current-epoch tag on every word, all of them came from the one write that used that tag,
 * and the pieces belong to one value. A reader that finds different tags (it raced with a
 * write, or a word is stale) treats the descriptor as X and reads again. No ordering between
 * the words is needed, and none between descriptor and data: the value is the only datum
 * that travels.
 */
typedef uint64_t dl_word;

#define DL_MAX_DESCRIPTOR_WORDS 4
#define DL_EPOCH_FIRST 1u
#define DL_EPOCH_LAST 0x3fffffffu /* 2^30 - 1 */

DL_PROTOCOL_FN uint32_t dl_tag(uint32_t epoch, uint32_t status) { return (epoch << 2) | status; }

DL_PROTOCOL_FN dl_word dl_word_make(uint32_t epoch, uint32_t status, uint32_t payload)
{
    return ((dl_word)dl_tag(epoch, status) << 32) | payload;
}

DL_PROTOCOL_FN uint32_t dl_word_tag(dl_word w) { return (uint32_t)(w >> 32); }

DL_PROTOCOL_FN uint32_t dl_word_payload(dl_word w) { return (uint32_t)w; }

/* The status of a descriptor read as `count` words (1, 2 or 4) in the call with epoch
 * `epoch`. */
DL_PROTOCOL_FN uint32_t dl_descriptor_status(const dl_word *words, int count, uint32_t epoch)
{
    const uint32_t tag = dl_word_tag(words[0]);
    for (int k = 1; k < count; ++k)
        if (dl_word_tag(words[k]) != tag)
            return DL_STATUS_X; /* torn: the words come from different writes */
    if ((tag >> 2) != epoch)
        return DL_STATUS_X; /* stale: written by an earlier call, or never */
    const uint32_t status = tag & 3u;
    return status == DL_STATUS_A || status == DL_STATUS_P ? status : (uint32_t)DL_STATUS_X;
}

/*
 * Epochs. Each call uses one epoch, so descriptors left by earlier calls read as X with
 * no clearing between calls. Storage starts zeroed (epoch 0, never used). The worker that
 * finishes a call last moves the epoch on; when the epoch would wrap around, that worker
 * first clears every descriptor, so that an old write can never carry a reused epoch.
 */
DL_PROTOCOL_FN int dl_epoch_wraps(uint32_t epoch) { return epoch >= DL_EPOCH_LAST; }

DL_PROTOCOL_FN uint32_t dl_epoch_next(uint32_t epoch)
{
    return dl_epoch_wraps(epoch) ? DL_EPOCH_FIRST : epoch + 1;
}

DL_PROTOCOL_FN int dl_epoch_valid(long long epoch)
{
    return epoch >= DL_EPOCH_FIRST && epoch <= DL_EPOCH_LAST;
}

/*
 * Tickets: resetting the tile counter without an extra launch. Workers (GPU blocks, CPU
 * threads) take tickets from the counter, which starts each call at its base (0, unless a
 * test moves it to check the counter's 32-bit wrap-around): ticket - base, modulo 2^32, is
 * a tile below the call's tile count, or else means "no tiles left". A call hands out a
 * known number of tickets in all (GPU: one per block, or per tile plus one per block for the
 * persistent kernels; CPU: one per tile plus one final ticket per thread). Every worker
 * learns the call's epoch no later than its first ticket (the GPU keeps counter and epoch in
 * one 64-bit word, so one atomic add returns both; the CPU reads the epoch first and draws
 * acquire-release), so the worker that draws the last ticket knows that every worker has
 * the epoch: it resets the counter to its base and moves the epoch on at once, while the
 * others finish with the epoch they have. No worker waits for another at its end.
 * When the epoch would wrap, the descriptors must be cleared first, and only once every
 * worker is done with them: in such a call each worker also counts itself done at its end,
 * and the last one to finish clears, resets and moves the epoch on instead.
 */
DL_PROTOCOL_FN uint32_t dl_ticket_tile(uint32_t ticket, uint32_t base) { return ticket - base; }

DL_PROTOCOL_FN int dl_is_last_ticket(uint32_t tile, uint32_t tickets) { return tile + 1 == tickets; }

DL_PROTOCOL_FN int dl_is_last_worker(uint32_t done_before_me, uint32_t workers)
{
    return done_before_me + 1 == workers;
}

/*
 * Windows. One warp reads a window of 32 x `slots` predecessors at once: each of its 32
 * lanes watches `slots` consecutive tiles. The window ending at tile `last` covers
 * last - 32 x slots + 1 .. last in lane order: the last slot of lane 31 is the nearest
 * predecessor. Slots before tile 0 read as P with the identity, so no window needs padding
 * descriptors in front of tile 0. The paper's window has one tile per lane, and so has the
 * persistent scan's tree fold (DL_SCAN_PERSISTENT_SLOTS, persistent.cuh). The other kernels,
 * the left fold and the CPU watch DL_SLOTS_PER_LANE = 2 tiles per lane, so that one round
 * trip to L2 covers twice as many predecessors (bench/NOTES.md, sections 3, 31 and 33, has
 * the measurements). DL_WINDOW is the widest window.
 */
#define DL_WINDOW_LANES 32
#ifndef DL_SLOTS_PER_LANE
#define DL_SLOTS_PER_LANE 2
#endif
#define DL_WINDOW (DL_WINDOW_LANES * DL_SLOTS_PER_LANE)

DL_PROTOCOL_FN int64_t dl_window_tile(int64_t last, int lane, int slot, int slots)
{
    return last - (DL_WINDOW_LANES * slots - 1) + lane * slots + slot;
}

enum dl_window_action {
    DL_WINDOW_WAIT = 0,  /* some slot is X: back off and read the window again */
    DL_WINDOW_SLIDE = 1, /* all slots are A: fold them all, slide the window back */
    DL_WINDOW_STOP = 2   /* some slot is P: fold from the nearest P on, and stop */
};

/* x_lanes and p_lanes have bit l set when lane l watches an X, resp. a P. */
DL_PROTOCOL_FN int dl_window_action(uint32_t x_lanes, uint32_t p_lanes)
{
    if (x_lanes)
        return DL_WINDOW_WAIT;
    return p_lanes ? DL_WINDOW_STOP : DL_WINDOW_SLIDE;
}

DL_PROTOCOL_FN int dl_highest_bit(uint32_t mask)
{
#ifdef __CUDA_ARCH__
    return 31 - __clz(mask);
#else
    return 31 - __builtin_clz(mask);
#endif
}

/* The lane holding the nearest P (it heads the segment of the segmented reduction);
 * lane 0 when the window slides. */
DL_PROTOCOL_FN int dl_window_first_lane(uint32_t p_lanes) { return p_lanes ? dl_highest_bit(p_lanes) : 0; }

/* Within one lane, p_slots has bit k set when slot k is P: the nearest P's slot, or 0. */
DL_PROTOCOL_FN int dl_lane_first_slot(uint32_t p_slots) { return p_slots ? dl_highest_bit(p_slots) : 0; }

/* The slots of `lane` (of `slots`) the fold takes: all from the nearest P (first_lane,
 * first_slot) on, the P itself included as the fold's start. */
DL_PROTOCOL_FN uint32_t dl_lane_fold_mask(int lane, int first_lane, int first_slot, int slots)
{
    const uint32_t all = (1u << slots) - 1;
    if (lane > first_lane)
        return all;
    return lane == first_lane ? all & (all << first_slot) : 0u;
}

/*
 * Left-fold order. A float sum is reproducible from run to run only if every tile's
 * prefix is computed in one fixed order whatever predecessor the look-back stops at.
 * The left fold P(j) (+) A(j+1) (+) ... (+) A(i-1), in index order, is such an order: by
 * induction P(j) is itself the left fold of the seed and A(0) .. A(j), so the result is
 * the left fold of the seed and A(0) .. A(i-1) for every j. A left-folding look-back keeps
 * the windows it has read until it finds the P; after DL_FOLD_WINDOWS windows of A
 * it stops reading windows and waits for the tile just before them to turn P (that tile's
 * worker is running and ends its own look-back), then folds from there.
 */
#define DL_FOLD_WINDOWS 2

DL_PROTOCOL_FN int dl_fold_buffer_full(int windows) { return windows >= DL_FOLD_WINDOWS; }

/* Back-off while a window holds X: doubling sleeps, capped (build-time knobs for tuning). */
#ifndef DL_BACKOFF_FIRST_NS
#define DL_BACKOFF_FIRST_NS 32u
#endif
#ifndef DL_BACKOFF_LAST_NS
#define DL_BACKOFF_LAST_NS 512u
#endif

DL_PROTOCOL_FN uint32_t dl_backoff_next(uint32_t ns)
{
    return ns >= DL_BACKOFF_LAST_NS / 2 ? DL_BACKOFF_LAST_NS : ns * 2;
}

/* Look-back event counters, in the order of struct dlscan_lookback_stats. */
enum dl_stat {
    DL_STAT_LOOKBACKS = 0,
    DL_STAT_WAITS_ON_X,
    DL_STAT_AGGREGATES_FOLDED,
    DL_STAT_STOPS_AT_P,
    DL_STAT_WINDOWS_SLID,
    DL_STAT_WAITS_FOR_P,
    DL_STAT_COUNT
};

/* The GPU's per-handle control block, in device memory next to the descriptors. The tile
 * counter and the epoch share one word (dl_counter_word), so that drawing a ticket is one
 * atomic add that also returns the call's epoch: no separate read of the epoch, and no fence
 * to order it before the draw. */
typedef struct dl_control {
    unsigned long long counter; /* bits 63..32: the tile counter, ticket_base + tickets drawn
                                   in the running call; bits 31..0: the epoch of the running
                                   (or next) call */
    uint32_t ticket_base;       /* where the counter starts each call (0 unless a test moves it) */
    uint32_t blocks_done;       /* blocks of the running call that have finished (epoch wrap only) */
    unsigned long long stats[DL_STAT_COUNT];
} dl_control;

#define DL_COUNTER_TICKET 0x100000000ull /* what one ticket adds to the counter word */

DL_PROTOCOL_FN unsigned long long dl_counter_word(uint32_t ticket, uint32_t epoch)
{
    return (unsigned long long)ticket << 32 | epoch;
}

DL_PROTOCOL_FN uint32_t dl_counter_ticket(unsigned long long word) { return (uint32_t)(word >> 32); }

DL_PROTOCOL_FN uint32_t dl_counter_epoch(unsigned long long word) { return (uint32_t)word; }

/* ======================================================================================
 * Part 2: the GPU look-back (one warp)
 * ====================================================================================== */
#ifdef __CUDACC__

/* A value of T as its 32-bit pieces (T is 4, 8 or 16 bytes): how descriptors carry it, and
 * how warp shuffles move it. */
template <typename T> struct dl_pieces {
    static constexpr int count = (int)sizeof(T) / 4;
    uint32_t piece[count];
};

template <typename T> __device__ __forceinline__ dl_pieces<T> dl_to_pieces(T v)
{
    dl_pieces<T> p;
    memcpy(&p, &v, sizeof v);
    return p;
}

template <typename T> __device__ __forceinline__ T dl_from_pieces(const dl_pieces<T> &p)
{
    T v;
    memcpy(&v, &p, sizeof v);
    return v;
}

/* A 64-bit word's low bytes as a value of T (the scan's seed; T of 4 or 8 bytes). */
template <typename T> __device__ __forceinline__ T dl_value_from_bits(uint64_t bits)
{
    T v;
    memcpy(&v, &bits, sizeof v); /* little-endian: the low bytes come first */
    return v;
}

/* Warp shuffles of any T, a 32-bit piece at a time (what the hardware does for 64-bit
 * types too). */
template <typename T> __device__ __forceinline__ T dl_shfl(T v, int source_lane)
{
    dl_pieces<T> p = dl_to_pieces(v);
#pragma unroll
    for (int k = 0; k < p.count; ++k)
        p.piece[k] = __shfl_sync(0xffffffffu, p.piece[k], source_lane);
    return dl_from_pieces<T>(p);
}

template <typename T> __device__ __forceinline__ T dl_shfl_up(T v, int delta)
{
    dl_pieces<T> p = dl_to_pieces(v);
#pragma unroll
    for (int k = 0; k < p.count; ++k)
        p.piece[k] = __shfl_up_sync(0xffffffffu, p.piece[k], delta);
    return dl_from_pieces<T>(p);
}

template <typename T> __device__ __forceinline__ T dl_shfl_down(T v, int delta)
{
    dl_pieces<T> p = dl_to_pieces(v);
#pragma unroll
    for (int k = 0; k < p.count; ++k)
        p.piece[k] = __shfl_down_sync(0xffffffffu, p.piece[k], delta);
    return dl_from_pieces<T>(p);
}

template <typename T> __device__ __forceinline__ T dl_shfl_xor(T v, int mask)
{
    dl_pieces<T> p = dl_to_pieces(v);
#pragma unroll
    for (int k = 0; k < p.count; ++k)
        p.piece[k] = __shfl_xor_sync(0xffffffffu, p.piece[k], mask);
    return dl_from_pieces<T>(p);
}

/* Descriptor accesses are relaxed at GPU scope: coherent in L2, never served stale from
 * L1, and in no order with other accesses, none being needed (Part 1). Pairs of words move
 * as one 16-byte access (Part 1 does not rely on that). */
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

/* Publishes tile's descriptor: as many words as T has 32-bit pieces. */
template <typename T>
__device__ __forceinline__ void dl_gpu_publish(dl_word *descriptors, uint32_t tile, uint32_t epoch,
                                               uint32_t status, T value)
{
    const dl_pieces<T> p = dl_to_pieces(value);
    dl_word *d = descriptors + (uint64_t)tile * p.count;
    if (p.count == 1) {
        dl_gpu_store_word(d, dl_word_make(epoch, status, p.piece[0]));
    } else {
#pragma unroll
        for (int k = 0; k + 1 < p.count; k += 2)
            dl_gpu_store_words2(d + k, dl_word_make(epoch, status, p.piece[k]),
                                dl_word_make(epoch, status, p.piece[k + 1]));
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
    dl_word w[dl_pieces<T>::count];
    const dl_word *d = descriptors + (uint64_t)tile * p.count;
    if (p.count == 1) {
        w[0] = dl_gpu_load_word(d);
    } else {
#pragma unroll
        for (int k = 0; k + 1 < p.count; k += 2)
            dl_gpu_load_words2(d + k, &w[k], &w[k + 1]);
    }
#pragma unroll
    for (int k = 0; k < p.count; ++k)
        p.piece[k] = dl_word_payload(w[k]);
    *value = dl_from_pieces<T>(p);
    return dl_descriptor_status(w, p.count, epoch);
}

__device__ __forceinline__ void dl_gpu_count(unsigned long long *stats, int which,
                                             unsigned long long amount)
{
    if (stats && amount)
        atomicAdd(stats + which, amount);
}

/* Whether Op(x, x) == x for every x (min and max: ops.cuh says so). A warp's shuffle gives
 * a lane whose source is out of range its own value back, so for such operators the lanes
 * need not be masked: combining with themselves changes nothing, and the mask (a select
 * after every step, one more instruction where min and max are one) is saved. */
template <typename Op> struct dl_op_idempotent {
    static constexpr bool value = false;
};

/* Whether Op brings a warp-wide reduction of its own, Op::warp_reduce(v): the result in every
 * lane, sooner than the shuffle tree's (min and max but float32's, through the hardware's
 * redux.sync: ops.cuh). */
template <typename Op> struct dl_op_has_warp_reduce {
    static constexpr bool value = false;
};

/* Reduction over the first WIDTH lanes of a warp (a power of two; all 32 by default), in lane
 * order: a fixed tree that keeps the order (lane l takes l+1, then l+2, l+4, ...), so it
 * serves operators that do not commute, such as reduce-by-key's segmented one. Lane 0's
 * result, returned in every lane. On sm_80 and later, an operator's own warp reduction
 * (dl_op_has_warp_reduce) replaces the tree. */
template <typename T, typename Op, int WIDTH = 32> __device__ __forceinline__ T dl_warp_reduce(T v)
{
    const int lane = threadIdx.x % 32;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr bool own = dl_op_has_warp_reduce<Op>::value;
#else
    constexpr bool own = false;
#endif
    if constexpr (own) {
        return Op::warp_reduce(WIDTH == 32 || lane < WIDTH ? v : Op::identity());
    } else {
#pragma unroll
        for (int offset = 1; offset < WIDTH; offset *= 2) {
            const T later = dl_shfl_down(v, offset);
            if (dl_op_idempotent<Op>::value || lane + offset < 32)
                v = Op()(v, later);
        }
        return dl_shfl(v, 0);
    }
}

/*
 * The look-back of tile `tile` (> 0): run by all 32 lanes of one warp; returns the
 * tile's exclusive prefix in every lane. Lane l watches slots l*K .. l*K+K-1 of the window
 * (K = SLOTS, at most DL_SLOTS_PER_LANE).
 *
 * LEFT_FOLD = false folds each window as a tree: each lane folds its slots in order, the
 * lanes below the nearest P contribute the identity (the paper's segmented reduction), and
 * an order-keeping tree combines the lanes. LEFT_FOLD = true keeps the windows in `fold_buffer`
 * (shared memory, DL_FOLD_WINDOWS * DL_WINDOW values) and lane 0 folds them strictly in
 * index order (Part 1, "Left-fold order").
 *
 * `stats` is NULL unless look-back counting is on; lane 0 counts.
 */
template <typename T, typename Op, bool LEFT_FOLD, int SLOTS = DL_SLOTS_PER_LANE>
__device__ T dl_gpu_lookback(const dl_word *descriptors, int64_t tile, uint32_t epoch,
                             T *fold_buffer, unsigned long long *stats)
{
    constexpr int K = SLOTS, window = DL_WINDOW_LANES * K;
    static_assert(K >= 1 && K <= DL_SLOTS_PER_LANE, "the fold buffer holds windows of DL_WINDOW");
    const int lane = threadIdx.x % 32;
    unsigned long long *lane0_stats = lane == 0 ? stats : nullptr;
    dl_gpu_count(lane0_stats, DL_STAT_LOOKBACKS, 1);

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
            dl_gpu_count(lane0_stats, DL_STAT_WAITS_ON_X, 1);
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
        if (stats)
            dl_gpu_count(lane0_stats, DL_STAT_AGGREGATES_FOLDED,
                         __reduce_add_sync(0xffffffffu, __popc(a_slots & folded)));

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
                dl_gpu_count(lane0_stats, DL_STAT_STOPS_AT_P, 1);
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
                dl_gpu_count(lane0_stats, DL_STAT_STOPS_AT_P, 1);
                return running;
            }
        }
        dl_gpu_count(lane0_stats, DL_STAT_WINDOWS_SLID, 1);
        last -= window;
        if (LEFT_FOLD && dl_fold_buffer_full(windows)) {
            /* Buffer full: wait for the tile just before the buffered windows to be P. */
            dl_gpu_count(lane0_stats, DL_STAT_WAITS_FOR_P, 1);
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

#endif /* __CUDACC__ */

/* ======================================================================================
 * Part 3: the CPU look-back (one thread)
 * ====================================================================================== */
#if !defined(__CUDACC__) && !defined(__cplusplus)
#include <sched.h>
#include <stdatomic.h>

/* A value of up to 128 bits as the CPU protocol carries it: descriptor word k holds bits
 * 32k .. 32k+31 (lo first). Scans use lo; the pairs of compaction use both. */
typedef struct dl_bits {
    uint64_t lo, hi;
} dl_bits;

/* Combines two values, the earlier first. */
typedef dl_bits (*dl_combine_fn)(dl_bits earlier, dl_bits later);

typedef struct dl_cpu_lookback_ctx {
    _Atomic(dl_word) *descriptors;   /* `words` words per tile */
    int words;                       /* 1, 2 or 4: the value's 32-bit pieces */
    uint32_t epoch;                  /* this call's epoch */
    dl_combine_fn combine;
    dl_bits identity;
    _Atomic(unsigned long long) *stats; /* DL_STAT_COUNT counters, or NULL */
} dl_cpu_lookback_ctx;

static inline void dl_cpu_count(const dl_cpu_lookback_ctx *c, int which, unsigned long long amount)
{
    if (c->stats && amount)
        atomic_fetch_add_explicit(&c->stats[which], amount, memory_order_relaxed);
}

static inline uint32_t dl_bits_piece(dl_bits v, int k)
{
    const uint64_t half = k < 2 ? v.lo : v.hi;
    return (uint32_t)(half >> (32 * (k & 1)));
}

/* Publishing is a release store of each word; reading is an acquire load. The value
 * travels inside the words, so relaxed would do; release/acquire also orders the tile's
 * input reads before any successor's output writes, which in-place compaction uses. */
static inline void dl_cpu_publish(const dl_cpu_lookback_ctx *c, uint32_t tile, uint32_t status,
                                  dl_bits value)
{
    _Atomic(dl_word) *d = c->descriptors + (size_t)tile * c->words;
    for (int k = 0; k < c->words; ++k)
        atomic_store_explicit(&d[k], dl_word_make(c->epoch, status, dl_bits_piece(value, k)),
                              memory_order_release);
}

static inline uint32_t dl_cpu_read(const dl_cpu_lookback_ctx *c, int64_t tile, dl_bits *value)
{
    if (tile < 0) {
        *value = c->identity;
        return DL_STATUS_P;
    }
    _Atomic(dl_word) *d = c->descriptors + (size_t)tile * c->words;
    dl_word w[DL_MAX_DESCRIPTOR_WORDS] = {0, 0, 0, 0};
    uint64_t half[2] = {0, 0};
    for (int k = 0; k < c->words; ++k) {
        w[k] = atomic_load_explicit(&d[k], memory_order_acquire);
        half[k / 2] |= (uint64_t)dl_word_payload(w[k]) << (32 * (k & 1));
    }
    value->lo = half[0];
    value->hi = half[1];
    return dl_descriptor_status(w, c->words, c->epoch);
}

/* The look-back of tile `tile` (> 0): the same windows, lanes, decisions and left-fold
 * order as the GPU's (the CPU always folds left to right). Returns the exclusive prefix. */
static inline dl_bits dl_cpu_lookback(const dl_cpu_lookback_ctx *c, int64_t tile)
{
    enum { K = DL_SLOTS_PER_LANE };
    dl_bits buffer[DL_FOLD_WINDOWS][DL_WINDOW];
    int windows = 0;
    int first_index = 0;
    dl_bits acc = c->identity;
    int64_t last = tile - 1;
    dl_cpu_count(c, DL_STAT_LOOKBACKS, 1);
    for (;;) {
        dl_bits *slots = buffer[windows];
        uint32_t x_lanes, p_lanes, p_slots[DL_WINDOW_LANES], a_slots[DL_WINDOW_LANES];
        /* Step 1: read the window until no slot is X. */
        for (;;) {
            x_lanes = p_lanes = 0;
            for (int lane = 0; lane < DL_WINDOW_LANES; ++lane) {
                p_slots[lane] = a_slots[lane] = 0;
                for (int k = 0; k < K; ++k) {
                    const uint32_t status =
                        dl_cpu_read(c, dl_window_tile(last, lane, k, K), &slots[lane * K + k]);
                    x_lanes |= (uint32_t)(status == DL_STATUS_X) << lane;
                    p_slots[lane] |= (uint32_t)(status == DL_STATUS_P) << k;
                    a_slots[lane] |= (uint32_t)(status == DL_STATUS_A) << k;
                }
                p_lanes |= (uint32_t)(p_slots[lane] != 0) << lane;
            }
            if (dl_window_action(x_lanes, p_lanes) != DL_WINDOW_WAIT)
                break;
            dl_cpu_count(c, DL_STAT_WAITS_ON_X, 1);
            sched_yield();
        }
        /* Step 2: find the nearest P, if any: its lane, then its slot in that lane. */
        const int action = dl_window_action(0, p_lanes);
        const int first_lane = dl_window_first_lane(p_lanes);
        const int first_slot = dl_lane_first_slot(p_slots[first_lane]);
        unsigned long long folded = 0;
        for (int lane = 0; lane < DL_WINDOW_LANES; ++lane)
            folded += (unsigned long long)__builtin_popcount(
                a_slots[lane] & dl_lane_fold_mask(lane, first_lane, first_slot, K));
        dl_cpu_count(c, DL_STAT_AGGREGATES_FOLDED, folded);
        ++windows;
        /* Step 3: stop at the P, or slide back (waiting for a P once the buffer is full). */
        if (action == DL_WINDOW_STOP) {
            dl_cpu_count(c, DL_STAT_STOPS_AT_P, 1);
            acc = slots[first_lane * K + first_slot];
            first_index = first_lane * K + first_slot + 1;
            break;
        }
        dl_cpu_count(c, DL_STAT_WINDOWS_SLID, 1);
        last -= DL_WINDOW;
        if (dl_fold_buffer_full(windows)) {
            dl_cpu_count(c, DL_STAT_WAITS_FOR_P, 1);
            while (dl_cpu_read(c, last, &acc) != DL_STATUS_P)
                sched_yield();
            first_index = 0;
            break;
        }
    }
    /* Fold the buffered windows in index order, farthest first. */
    for (int w = windows - 1; w >= 0; --w, first_index = 0)
        for (int index = first_index; index < DL_WINDOW; ++index)
            acc = c->combine(acc, buffer[w][index]);
    return acc;
}

#endif /* C11 */

#endif /* DLSCAN_LOOKBACK_H */
