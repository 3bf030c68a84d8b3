/*
 * cpu_lookback.h: the look-back of device/protocol.h as a CPU thread runs it: one thread
 * walking the lanes and slots of the same windows the GPU's warp reads, with C11 atomics for
 * the descriptors. The CPU backend's files include it (cpu_engine.h).
 */
#ifndef DLSCAN_CPU_LOOKBACK_H
#define DLSCAN_CPU_LOOKBACK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "protocol.h"

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

/* Look-back events are counted by the testing build only (DL_PROBING, policy.h): in the
 * release library the counting compiles away, as it does in the kernels (probe.cuh). */
static inline void dl_cpu_count(const dl_cpu_lookback_ctx *c, int which, unsigned long long amount)
{
    if (DL_PROBING && c->stats && amount)
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
 * order as the GPU's (device/lookback.cuh; the CPU always folds left to right). Returns the
 * exclusive prefix. */
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

#endif /* DLSCAN_CPU_LOOKBACK_H */
