/*
 * protocol.h: the decoupled look-back of Merrill & Garland (2016) as data and decisions:
 * the descriptor word, its states and epochs, tickets, the window's geometry and what a
 * window means, the left fold's order, the back-off and the GPU's control block. Plain C,
 * compiled by nvcc into the kernels (lookback.cuh runs it on a warp) and by the C compiler
 * into the CPU backend (src/cpu_lookback.h runs it on a thread).
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
#ifndef DLSCAN_PROTOCOL_H
#define DLSCAN_PROTOCOL_H

#include <stdint.h>

#include "policy.h"

#ifdef __CUDACC__
#define DL_PROTOCOL_FN static __host__ __device__ __forceinline__
#else
#define DL_PROTOCOL_FN static inline
#endif

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
 * and reduce-by-key carry; up to 256 bits for the state of a user operator, dlscan.h, "Your own
 * operator") takes 2 to 8 words, word k holding bits 32k .. 32k+31 (an odd count of pieces past
 * one gets a padding word: DL_DESCRIPTOR_WORDS below), and every word carries the same tag: a
 * wide value costs its reader no lock and no second read, one load of each word (two words at a
 * time), however many words it has. Why that is as race-free as one word, under the PTX memory
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

/* The words a descriptor of a value of `pieces` 32-bit pieces takes: one, or an even number, so
 * that every pair of words is 16-byte aligned for the two-word loads and stores (a 96-bit state
 * takes 4, its last word holding the tag and no payload). */
#define DL_DESCRIPTOR_WORDS(pieces) ((pieces) == 1 ? 1 : ((pieces) + 1) / 2 * 2)

#define DL_MAX_DESCRIPTOR_WORDS 8
#define DL_EPOCH_FIRST 1u
#define DL_EPOCH_LAST 0x3fffffffu /* 2^30 - 1 */

/* The tag packs the epoch above the two status bits: every epoch must fit in the 30 bits
 * left, and every status in two. */
static_assert(DL_EPOCH_LAST <= 0xffffffffu >> 2, "the epoch fits above the status bits");
static_assert(DL_EPOCH_FIRST > 0, "epoch 0 marks zeroed, never written storage");
static_assert(DL_STATUS_X <= 3 && DL_STATUS_A <= 3 && DL_STATUS_P <= 3, "a status fits in two bits");

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
 * threads) take tickets from the counter, which starts each call at its base (0, unless the
 * testing build's probe moves it to check the counter's 32-bit wrap-around): ticket - base,
 * modulo 2^32, is a tile below the call's tile count, or else means "no tiles left". A call
 * hands out a known number of tickets in all (GPU: one per block, or per tile plus one per
 * block for the persistent kernels; CPU: one per tile plus one final ticket per thread). Every
 * worker learns the call's epoch no later than its first ticket (the GPU keeps counter and
 * epoch in one 64-bit word, so one atomic add returns both; the CPU reads the epoch first and
 * draws acquire-release), so the worker that draws the last ticket knows that every worker has
 * the epoch: it resets the counter to its base and moves the epoch on at once, while the
 * others finish with the epoch they have. No worker waits for another at its end. When the
 * epoch would wrap, the descriptors must be cleared first, and only once every worker is done
 * with them: in such a call each worker also counts itself done at its end, and the last one
 * to finish clears, resets and moves the epoch on instead.
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
 * persistent scan's tree fold (DL_PERSISTENT_SLOTS_PER_LANE). The other kernels, the left
 * fold and the CPU watch DL_SLOTS_PER_LANE tiles per lane, so that one round trip to L2
 * covers twice as many predecessors (policy.h; bench/NOTES.md, "Look-back windows").
 */
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
 * Segments. A segmented scan starts over at the first item of every segment (its head). A
 * tile's value is then the reduction of its items from its last head on, the scan's init first,
 * or of all its items where it holds no head, and a tile with a head needs nothing before it to
 * know that value: it publishes it as its inclusive prefix P at once, and every later tile's
 * look-back stops there, as at any P. A tile without a head continues the segment before it: it
 * publishes A, looks back and publishes P, as a plain scan's tile does. Only a tile whose first
 * item is not a head needs its exclusive prefix, so a tile that starts a segment looks back not
 * at all. The windows, the decisions and the folds are the plain scan's, unchanged.
 */

/*
 * Left-fold order. A float sum is reproducible from run to run only if every tile's
 * prefix is computed in one fixed order whatever predecessor the look-back stops at.
 * The left fold P(j) (+) A(j+1) (+) ... (+) A(i-1), in index order, is such an order: by
 * induction P(j) is itself the left fold of the seed and A(0) .. A(j), so the result is
 * the left fold of the seed and A(0) .. A(i-1) for every j. A left-folding look-back keeps
 * the windows it has read until it finds the P; after DL_FOLD_WINDOWS (policy.h) windows of A
 * it stops reading windows and waits for the tile just before them to turn P (that tile's
 * worker is running and ends its own look-back), then folds from there.
 */
DL_PROTOCOL_FN int dl_fold_buffer_full(int windows) { return windows >= DL_FOLD_WINDOWS; }

/* Back-off while a window holds X: doubling sleeps, capped (policy.h). */
DL_PROTOCOL_FN uint32_t dl_backoff_next(uint32_t ns)
{
    return ns >= DL_BACKOFF_LAST_NS / 2 ? DL_BACKOFF_LAST_NS : ns * 2;
}

/* Look-back event counters, in the order of struct dlscan_lookback_stats (counted by the
 * testing build's probe only). */
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
 * to order it before the draw. The probe's fields are read only by the testing build's
 * kernels (probe.cuh); the release kernels never touch them. */
typedef struct dl_control {
    unsigned long long counter; /* bits 63..32: the tile counter, ticket base + tickets drawn
                                   in the running call; bits 31..0: the epoch of the running
                                   (or next) call */
    uint32_t blocks_done;       /* blocks of the running call that have finished (epoch wrap only) */
    uint32_t probe_ticket_base; /* where the counter starts each call (0 outside tests) */
    uint32_t probe_delay_ns;    /* pauses inside tiles, 0 .. this */
    uint32_t probe_count_stats; /* 1: count look-back events in stats */
    unsigned long long stats[DL_STAT_COUNT];
} dl_control;

#define DL_COUNTER_TICKET 0x100000000ull /* what one ticket adds to the counter word */

DL_PROTOCOL_FN unsigned long long dl_counter_word(uint32_t ticket, uint32_t epoch)
{
    return (unsigned long long)ticket << 32 | epoch;
}

DL_PROTOCOL_FN uint32_t dl_counter_ticket(unsigned long long word) { return (uint32_t)(word >> 32); }

DL_PROTOCOL_FN uint32_t dl_counter_epoch(unsigned long long word) { return (uint32_t)word; }

#endif /* DLSCAN_PROTOCOL_H */
