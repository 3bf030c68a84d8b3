/*
 * ring.cuh: the persistent kernels' pipeline (sm_90). A block of 256 compute threads plus a
 * producer and a reducer warp works a ring of shared-memory stages: the producer draws tickets
 * and has Hopper's bulk-copy engine (cp.async.bulk, completing on mbarriers) fill a stage
 * with each tile; the reducer publishes each tile's aggregate as it lands; the compute warps
 * take the stages in ring order. This file has the barriers, the copies, the ring's shared
 * memory and depth, the producer, and the look-back warp of the kernels that have one; the
 * kernels (scan_kernel.cu, segment_kernel.cu, compact_kernel.cu) bring the fill, the reducer
 * and the compute warps.
 */
#ifndef DLSCAN_RING_CUH
#define DLSCAN_RING_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "policy.h"
#include "block.cuh"

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

/* Only expects `bytes` from bulk copies, without arriving: the phase then also waits for an
 * arrival of its own (dl_mbar_arrive), after whatever the arriving thread publishes with it. */
__device__ __forceinline__ void dl_bulk_expect_only(uint64_t *bar, uint32_t bytes)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(dl_smem_address(bar)),
                 "r"(bytes)
                 : "memory");
}

/* Has the bulk-copy engine bring `bytes` (a multiple of 16) from global `src` to shared
 * `dst`, counting them on the barrier. EVICT_FIRST marks the lines it reads in L2 as the
 * first to evict (streaming data, read once): the scan's copies take it, compaction's do not
 * (bench/NOTES.md, "Loads, stores and cache hints"). */
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

/* The ring's depth where a block also keeps `beside_bytes` of shared memory of its own beside
 * the stages (the compaction kernels: an output buffer, and their variables, counted here
 * exactly rather than in DL_RING_OTHER_BYTES): DL_SCAN_STAGES, or as many as fit. */
__host__ __device__ constexpr int dl_ring_stages_beside(int stage_bytes, int beside_bytes,
                                                        int blocks = DL_SCAN_BLOCKS_PER_SM)
{
    const int fit = (DL_SM_SHARED_BYTES / blocks - 1024 - beside_bytes) / stage_bytes;
    return fit >= DL_SCAN_STAGES ? DL_SCAN_STAGES : fit > 1 ? fit : 1;
}

/* The ring's depth for stages of `stage_bytes`: DL_SCAN_STAGES, or as many as still let
 * `blocks` blocks (DL_SCAN_BLOCKS_PER_SM) share an SM's shared memory, each with
 * DL_RING_OTHER_BYTES for its own variables and the system's reservation (policy.h). */
__host__ __device__ constexpr int dl_ring_stages(int stage_bytes, int blocks = DL_SCAN_BLOCKS_PER_SM)
{
    return dl_ring_stages_beside(stage_bytes, DL_RING_OTHER_BYTES - 1024, blocks);
}

/* Checks, at compile time, that a persistent kernel's blocks fit as many to an SM as the
 * launcher counts on (with `beside_bytes` of dynamic shared memory beyond the stages). */
template <typename SHARED>
__host__ __device__ constexpr bool dl_ring_fits(int stage_bytes, int blocks = DL_SCAN_BLOCKS_PER_SM,
                                                int beside_bytes = 0)
{
    return blocks * (SHARED::stages * stage_bytes + beside_bytes + (int)sizeof(SHARED) + 1024) <=
           DL_SM_SHARED_BYTES;
}

/* Thread 0: the ring's barriers; `full` has one arrival, `reduced` `reduced_arrivals` (one by
 * default), `empty` `empty_arrivals` (one per compute warp). Every thread of the block calls it
 * (it synchronizes them). */
template <typename SHARED>
__device__ __forceinline__ void dl_ring_init(SHARED &sh, uint32_t empty_arrivals, uint32_t reduced_arrivals = 1)
{
    if (threadIdx.x == 0) {
        for (int s = 0; s < SHARED::stages; ++s) {
            dl_mbar_init(&sh.full[s], 1);
            dl_mbar_init(&sh.reduced[s], reduced_arrivals);
            dl_mbar_init(&sh.empty[s], empty_arrivals);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
}

/* Thread 0: the prefix rings' barriers (`valued`, `prefixed`: one arrival each), then the
 * ring's (dl_ring_init, whose arguments these are), for the kernels with a look-back warp
 * (dl_ring_look_back). Every thread of the block calls it (it synchronizes them). */
template <typename SHARED>
__device__ __forceinline__ void dl_prefix_rings_init(SHARED &sh, uint32_t empty_arrivals,
                                                     uint32_t reduced_arrivals = 1)
{
    if (threadIdx.x == 0)
        for (int q = 0; q < SHARED::slots; ++q) {
            dl_mbar_init(&sh.valued[q], 1);
            dl_mbar_init(&sh.prefixed[q], 1);
        }
    dl_ring_init(sh, empty_arrivals, reduced_arrivals);
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

/* Producer over offsets (the segmented scans', a user operator's; the whole warp): a tile's
 * copies need its first offset, found by a search of one or two trips to memory, so the producer
 * draws each tile's ticket and finds its offset as soon as the block's last tile's copies are
 * issued, before the stage it goes to is free, and a stage that frees waits only for its copies.
 * fill.find(tile, after, after_tile): the tile's first offset from the block's last tile's
 * (`after`, of tile after_tile; 0 and 0 before its first), in every lane; fill(stage, tile,
 * first, full): the stage's copies from lane 0, which completes the stage's phase. */
template <typename SHARED, typename FILL>
__device__ __forceinline__ void dl_persistent_produce_offsets(dl_control *control, const dl_probe &probe,
                                                              SHARED &sh, uint32_t tiles, const FILL &fill)
{
    const bool lane0 = threadIdx.x % 32 == 0;
    const uint32_t tickets = tiles + gridDim.x; /* each block draws one past the end */
    dl_ticket_state state;
    uint32_t ticket = 0;
    if (lane0) {
        ticket = dl_ticket_draw_first(control, probe, &state);
        dl_ticket_check_last(control, ticket, tickets, state);
        sh.epoch = state.epoch; /* published to the other roles by the first `full` */
        sh.ticket_base = state.base;
    }
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    uint64_t first = ticket < tiles ? fill.find(ticket, 0, 0) : 0;
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        if (lane0) {
            if (k >= SHARED::stages)
                dl_mbar_wait(&sh.empty[s], (k / SHARED::stages - 1) & 1);
            sh.stage_tile[s] = ticket;
        }
        __syncwarp();
        if (ticket < tiles)
            fill(s, ticket, first, &sh.full[s]);
        else if (lane0)
            dl_mbar_arrive(&sh.full[s]);
        if (ticket >= tiles)
            return;
        const uint32_t last_tile = ticket;
        if (lane0) {
            ticket = dl_ticket_draw(control, state);
            dl_ticket_check_last(control, ticket, tickets, state);
        }
        ticket = __shfl_sync(0xffffffffu, ticket, 0);
        if (ticket < tiles)
            first = fill.find(ticket, first, last_tile);
    }
}

/* Producer (lane 0 of its warp): draws a ticket for each free stage and has `fill` prefetch
 * that tile, until it draws one past the end (protocol.h, "Tickets"). fill(stage, tile,
 * full) issues the stage's bulk copies (dl_bulk_expect, then dl_bulk_copy) and returns true,
 * or returns false for a tile it leaves to global loads (the partial last tile); the
 * producer then completes the stage's phase itself. A FILL whose `offsets` is true is
 * dl_persistent_produce_offsets's, run by the whole warp. */
template <typename SHARED, typename FILL>
__device__ __forceinline__ void dl_persistent_produce(dl_control *control, const dl_probe &probe,
                                                      SHARED &sh, uint32_t tiles, const FILL &fill)
{
    if constexpr (FILL::offsets) {
        dl_persistent_produce_offsets(control, probe, sh, tiles, fill);
    } else {
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
                ticket = dl_ticket_draw_first(control, probe, &state);
                sh.epoch = state.epoch; /* published to the other roles by the first `full` */
                sh.ticket_base = state.base;
            } else {
                ticket = dl_ticket_draw(control, state);
            }
            dl_ticket_check_last(control, ticket, tickets, state);
            sh.stage_tile[s] = ticket;
            const bool filled = ticket < tiles && fill(s, ticket, &sh.full[s]);
            if (!filled)
                dl_mbar_arrive(&sh.full[s]);
            if (ticket >= tiles)
                return;
        }
    }
}

/* The look-back warp of the kernels that hand each tile's value from the reducer to the compute
 * warps through prefix rings twice as deep as the stages (the segmented scans, the persistent
 * compactions): SHARED has `slots`, `valued`, `prefixed` and `slot_tile` beside the ring. For
 * each tile in ring order, once the reducer has left its value in slot q: the tile's exclusive
 * prefix (lookback.cuh); its P on that value where publishes(q) holds (a segmented tile with a
 * head published its P itself); the prefix handed on. value(q) and publishes(q) run in every
 * lane (reads through dl_stage_header), hand_on(q, prefix) in lane 0, before its arrival. */
template <typename V, typename VOp, bool LEFT_FOLD, typename SHARED, typename VALUE, typename PUBLISHES,
          typename HAND_ON>
__device__ __forceinline__ void dl_ring_look_back(dl_word *descriptors, const dl_probe &probe, SHARED &sh,
                                                  uint32_t tiles, const VALUE &value_of,
                                                  const PUBLISHES &publishes, const HAND_ON &hand_on)
{
    constexpr int slots = LEFT_FOLD ? DL_SLOTS_PER_LANE : DL_PERSISTENT_SLOTS_PER_LANE;
    const int lane = threadIdx.x % 32;
    for (uint32_t k = 0;; ++k) {
        const int q = (int)(k % SHARED::slots);
        dl_mbar_wait(&sh.valued[q], (k / SHARED::slots) & 1);
        const uint32_t tile = dl_stage_header(sh.slot_tile[q]);
        if (tile >= tiles) {
            if (lane == 0)
                dl_mbar_arrive(&sh.prefixed[q]);
            return;
        }
        const V value = value_of(q);
        const bool publish = tile != 0 && publishes(q);
        const uint32_t epoch = sh.epoch;
        V prefix = VOp::identity();
        if (tile != 0)
            prefix = dl_gpu_lookback<V, VOp, LEFT_FOLD, slots>(descriptors, tile, epoch, sh.fold_buffer, probe);
        if (lane == 0) {
            if (publish) {
                probe.pause(tile, 2);
                dl_gpu_publish<V>(descriptors, tile, epoch, DL_STATUS_P, VOp()(prefix, value));
            }
            hand_on(q, prefix);
            dl_mbar_arrive(&sh.prefixed[q]);
        }
    }
}

#endif /* DLSCAN_RING_CUH */
