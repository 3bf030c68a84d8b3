/*
 * compact_kernel.cu: stream compaction in one kernel launch, on the scan's descriptors and
 * look-back: select_flagged, select_if, unique, run-length encode, reduce-by-key.
 *
 * One block of 256 threads per tile of 4096 items (tile from the ticket counter, as for
 * the scan). Each tile:
 *   1. stages its items through shared memory: coalesced loads in, then each thread takes
 *      16 consecutive items (a padded layout keeps the banks apart);
 *   2. flags what it keeps (the predicate, the flag byte, or "differs from the item
 *      before": a run head) and folds each thread's contributions into one value V:
 *        select, unique       V = count of kept items;
 *        run-length encode    V = (heads, position of the last head), under (sum, max);
 *        reduce-by-key        V = (heads, aggregate of the open run), the segmented op;
 *   3. gets every thread's exclusive prefix of V over the whole input (tile.cuh: warp and
 *      block scans, then the look-back of lookback.cuh); a kept item's output position is the
 *      head count before it;
 *   4. stages its outputs compacted in shared memory and stores them with coalesced writes.
 *      Run lengths and run aggregates are only known when the next head is met, so each
 *      head writes the previous run's; the tile holding item n-1 writes the last run's and
 *      the count.
 *
 * On sm_90, from a quarter or half a tile per block on (the launcher says which), the calls run
 * persistent on the ring (ring.cuh), in blocks of four roles (producer, reducers, look-back warp,
 * compute warps; their section below):
 *   dl_compact_persistent_kernel  select_flagged, select_if, unique: a count carried, on the
 *                                 scan's tiles;
 *   dl_runs_persistent_kernel     run-length encode, reduce-by-key: the pair (runs so far,
 *                                 value of the open run) carried.
 *
 * In place (out == in) is safe: a tile writes only after every tile before it has
 * published a descriptor, hence read its input, and items only move to lower indices. In
 * place, an item already at its output index is not written again, so every write goes to a
 * lower index; then the item before a tile, which unique, run-length and reduce-by-key read
 * from global memory, is only ever written by that tile or a later one, after it was read.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "launch.h"
#include "ops.cuh"
#include "ring.cuh"
#include "tile.cuh"

/* The tile (policy.h): DL_COMPACT_THREADS threads of DL_COMPACT_ITEMS consecutive items. */
#define DL_COMPACT_WARPS (DL_COMPACT_THREADS / 32)
#define DL_COMPACT_PADDED (DL_COMPACT_TILE + DL_COMPACT_TILE / DL_COMPACT_ITEMS)

/* Shared-memory index of tile item i: one pad slot every 16 items, so that threads reading
 * their 16 consecutive items fall in different banks. */
__device__ __forceinline__ int dl_padded(int i) { return i + i / DL_COMPACT_ITEMS; }

/* ---------------------------------------------------------------- carried values */

/* Run-length encoding: heads so far and the position of the last one, in H (64-bit, or 32-bit
 * below 2^32 items). */
template <typename H> struct dl_runs_of {
    H heads;
    H last_head;
};
template <typename H> struct dl_runs_of_op {
    __device__ static dl_runs_of<H> identity() { return dl_runs_of<H>{0, 0}; }
    __device__ dl_runs_of<H> operator()(dl_runs_of<H> a, dl_runs_of<H> b) const
    {
        return dl_runs_of<H>{a.heads + b.heads, a.last_head > b.last_head ? a.last_head : b.last_head};
    }
};
using dl_runs = dl_runs_of<unsigned long long>;
using dl_runs_op = dl_runs_of_op<unsigned long long>;

/* Reduce-by-key, and run-length encoding's persistent kernel: heads so far and the value of the
 * run still open (ops.cuh, dl_segmented). The heads are 64-bit, counted over the whole input, but
 * for run-length encoding's 32-bit counts (fewer than 2^32 items), whose heads fit 32 bits too:
 * the pair's descriptor is then two words where it was four, as unique's count. */
template <int KIND, typename Y> struct dl_runs_heads {
    using type = unsigned long long;
};
template <> struct dl_runs_heads<DL_COMPACT_RUN_LENGTH, uint32_t> {
    using type = uint32_t;
};
template <int KIND, typename Y> using dl_runs_carry = dl_segment<typename dl_runs_heads<KIND, Y>::type, Y>;
template <int KIND, typename Y, typename YOp>
using dl_runs_carry_op = dl_segmented<typename dl_runs_heads<KIND, Y>::type, Y, YOp>;
/* Whether reduce-by-key's values Y under YOp have a left fold of their own (float sums). */
template <typename Y, typename YOp>
constexpr bool dl_key_fold_matters =
    dl_fold_order_matters<dl_runs_carry<DL_COMPACT_REDUCE_BY_KEY, Y>,
                          dl_runs_carry_op<DL_COMPACT_REDUCE_BY_KEY, Y, YOp>>::value;

/* For each kind: the carried value V, its operator, an item's contribution (kept or not,
 * its position, its value) and, for the run kinds, what closes a run (its length, its
 * aggregate). */
template <int KIND, typename Y, typename YOp> struct dl_compact_value {
    using type = unsigned long long;
    using op = dl_sum<unsigned long long>;
    using closed = unsigned long long;
    __device__ static type contribution(bool kept, uint64_t, Y) { return kept ? 1ull : 0ull; }
};
/* Run-length encoding's counts are Y wide: 32-bit below 2^32 items, else 64-bit (dl_compact_run). */
template <typename Y, typename YOp> struct dl_compact_value<DL_COMPACT_RUN_LENGTH, Y, YOp> {
    using type = dl_runs_of<Y>;
    using op = dl_runs_of_op<Y>;
    using closed = unsigned long long;
    __device__ static type contribution(bool head, uint64_t position, Y)
    {
        return type{head ? Y(1) : Y(0), head ? Y(position) : Y(0)};
    }
};
template <typename Y, typename YOp> struct dl_compact_value<DL_COMPACT_REDUCE_BY_KEY, Y, YOp> {
    using type = dl_runs_carry<DL_COMPACT_REDUCE_BY_KEY, Y>;
    using op = dl_runs_carry_op<DL_COMPACT_REDUCE_BY_KEY, Y, YOp>;
    using closed = Y;
    __device__ static type contribution(bool head, uint64_t, Y value)
    {
        return type{head ? 1ull : 0ull, value};
    }
};

/* ---------------------------------------------------------------- staging */

/* The tile's items of `in` (from base on, count of them) into shared memory, coalesced. */
template <typename X>
__device__ __forceinline__ void dl_stage_in(X *stage, const X *in, uint64_t base, int count)
{
#pragma unroll
    for (int k = 0; k < DL_COMPACT_ITEMS; ++k) {
        const int i = k * DL_COMPACT_THREADS + (int)threadIdx.x;
        if (i < count)
            stage[dl_padded(i)] = in[base + i];
    }
}

/* This thread's 16 consecutive items from shared memory. */
template <typename X>
__device__ __forceinline__ void dl_take_items(X (&items)[DL_COMPACT_ITEMS], const X *stage)
{
#pragma unroll
    for (int j = 0; j < DL_COMPACT_ITEMS; ++j)
        items[j] = stage[dl_padded((int)threadIdx.x * DL_COMPACT_ITEMS + j)];
}

/* count outputs staged at local indices first..count-1 go to out[start + i]. */
template <typename X>
__device__ __forceinline__ void dl_store_staged(X *out, unsigned long long start, const X *stage,
                                                int first, int count)
{
    for (int i = first + (int)threadIdx.x; i < count; i += DL_COMPACT_THREADS)
        out[start + i] = stage[dl_padded(i)];
}

/* select_if's test of an item against the operand, C semantics (a NaN compares unordered; -0.0
 * equals 0.0), as one range test: each item's bits map to an unsigned key in the items' order
 * (signed integers: the sign bit flipped; floats: a negative's bits all flipped, others' sign
 * bit set, which puts the NaNs outside [-inf, +inf]); an item is kept where its key lies in
 * [lo, lo + span], or, for DLSCAN_NOT_EQUAL and DLSCAN_NONZERO (not equal to zero), where it
 * does not. */
template <typename X> struct dl_select_test {
    using K = typename std::conditional<sizeof(X) == 8, unsigned long long, unsigned int>::type;
    static constexpr K sign = K(1) << (8 * sizeof(K) - 1);
    K lo, span;
    K rebase; /* integers: key(x) - lo is x's bits + rebase (flipping the sign bit adds it) */
    bool outside;

    __device__ static K key(X x)
    {
        K bits;
        memcpy(&bits, &x, sizeof bits);
        if (std::is_floating_point<X>::value)
            return bits & sign ? ~bits : bits | sign;
        return std::is_signed<X>::value ? bits ^ sign : bits;
    }
    __device__ explicit dl_select_test(const dl_compact_params &p)
    {
        X operand;
        memcpy(&operand, &p.operand_bits, sizeof operand);
        if (p.predicate == DLSCAN_NONZERO)
            operand = X(0);
        K least = 0, most = ~K(0); /* the keys of the least and greatest items that are numbers */
        if constexpr (std::is_floating_point<X>::value)
            least = key(-X(INFINITY)), most = key(X(INFINITY));
        /* [first, last]: the keys equal to the operand (for zero, -0.0 and 0.0) */
        const K first = key(operand == X(0) ? -X(0) : operand), last = key(operand == X(0) ? X(0) : operand);
        bool none = operand != operand; /* a NaN operand: no item compares equal, less or greater */
        K from = first, to = last;
        outside = false;
        switch (p.predicate) {
        case DLSCAN_LESS: from = least, to = first - 1, none = none || first == least; break;
        case DLSCAN_LESS_EQUAL: from = least; break;
        case DLSCAN_GREATER: from = last + 1, to = most, none = none || last == most; break;
        case DLSCAN_GREATER_EQUAL: to = most; break;
        case DLSCAN_EQUAL: break;
        default: outside = true; /* DLSCAN_NOT_EQUAL, DLSCAN_NONZERO */
        }
        if (none) /* every item, or none (not equal to a NaN: every item) */
            from = 0, to = ~K(0), outside = !outside;
        lo = from;
        span = to - from;
        rebase = (std::is_signed<X>::value ? sign : K(0)) - lo;
    }
    /* x's key lies in [lo, lo + span]. */
    __device__ bool inside(X x) const
    {
        if constexpr (std::is_floating_point<X>::value)
            return K(key(x) - lo) <= span;
        K bits;
        memcpy(&bits, &x, sizeof bits);
        return K(bits + rebase) <= span;
    }
    __device__ bool operator()(X x) const { return inside(x) != outside; }
};

/* ---------------------------------------------------------------- the kernel */

/* KIND: dl_compact_kind. X: the items' (keys') type; for the calls that only move or compare
 * items, an unsigned type of their size. Y, YOp: reduce-by-key's values and operator. */
template <int KIND, typename X, typename Y, typename YOp, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_COMPACT_THREADS) dl_compact_kernel(const dl_compact_params p)
{
    using Kind = dl_compact_value<KIND, Y, YOp>;
    using V = typename Kind::type;
    using VOp = typename Kind::op;
    __shared__ dl_tile_shared<V, DL_COMPACT_WARPS, LEFT_FOLD> sh;
    __shared__ unsigned long long stage_words[DL_COMPACT_PADDED]; /* 8 bytes per slot */
    __shared__ V tile_end;
    __shared__ unsigned short origin[DL_COMPACT_TILE]; /* run kinds: a run item's tile index */
    X *stage = reinterpret_cast<X *>(stage_words);
    const int t = (int)threadIdx.x;
    const dl_probe probe(p.control);
    dl_grid_dependency();

    uint32_t tile, epoch;
    dl_tile_take(p.control, probe, sh, &tile, &epoch);
    const uint64_t base = (uint64_t)tile * DL_COMPACT_TILE;
    const int count = p.n - base < DL_COMPACT_TILE ? (int)(p.n - base) : DL_COMPACT_TILE;
    const uint32_t tiles = (uint32_t)((p.n + DL_COMPACT_TILE - 1) / DL_COMPACT_TILE);
    const int first = t * DL_COMPACT_ITEMS; /* tile index of this thread's first item */
    const X *in = static_cast<const X *>(p.in);

    /* 1. Items (keys) into registers, and the item before this thread's first. */
    X item[DL_COMPACT_ITEMS];
    dl_stage_in(stage, in, base, count);
    __syncthreads();
    dl_take_items(item, stage);
    X before = item[0];
    if (KIND == DL_COMPACT_UNIQUE || KIND == DL_COMPACT_RUN_LENGTH || KIND == DL_COMPACT_REDUCE_BY_KEY) {
        if (t > 0 && first - 1 < count)
            before = stage[dl_padded(first - 1)];
        else if (t == 0 && tile > 0)
            before = in[base - 1];
    }
    __syncthreads();

    /* 2. What this thread keeps (bit j: item j), and reduce-by-key's values. */
    uint32_t keep = 0;
    Y value[KIND == DL_COMPACT_REDUCE_BY_KEY ? DL_COMPACT_ITEMS : 1] = {};
    if constexpr (KIND == DL_COMPACT_SELECT_FLAGGED) {
        unsigned char *flag_stage = reinterpret_cast<unsigned char *>(stage_words);
        dl_stage_in(flag_stage, p.flags, base, count);
        __syncthreads();
        unsigned char flag[DL_COMPACT_ITEMS];
        dl_take_items(flag, flag_stage);
#pragma unroll
        for (int j = 0; j < DL_COMPACT_ITEMS; ++j)
            keep |= (uint32_t)(first + j < count && flag[j] != 0) << j;
    } else if constexpr (KIND == DL_COMPACT_SELECT_IF) {
        const dl_select_test<X> test(p);
#pragma unroll
        for (int j = 0; j < DL_COMPACT_ITEMS; ++j)
            keep |= (uint32_t)(first + j < count && test(item[j])) << j;
    } else {
#pragma unroll
        for (int j = 0; j < DL_COMPACT_ITEMS; ++j) {
            /* X is an unsigned type of the items' size here: == compares bits. */
            const bool head = base + first + j == 0 || item[j] != (j ? item[j - 1] : before);
            keep |= (uint32_t)(first + j < count && head) << j;
        }
    }
    if constexpr (KIND == DL_COMPACT_REDUCE_BY_KEY) {
        Y *value_stage = reinterpret_cast<Y *>(stage_words);
        dl_stage_in(value_stage, static_cast<const Y *>(p.values_in), base, count);
        __syncthreads();
        dl_take_items(value, value_stage);
    }

#define DL_CONTRIBUTION(j)                                                                        \
    Kind::contribution(keep >> (j) & 1, base + first + (j),                                       \
                       value[KIND == DL_COMPACT_REDUCE_BY_KEY ? (j) : 0])

    /* 3. Every thread's exclusive prefix over the whole input. */
    V mine = VOp::identity();
#pragma unroll
    for (int j = 0; j < DL_COMPACT_ITEMS; ++j)
        if (first + j < count)
            mine = VOp()(mine, DL_CONTRIBUTION(j));
    const V sums[1] = {mine};
    V prefixes[1];
    dl_tile_prefixes<V, VOp, LEFT_FOLD, 1, DL_COMPACT_WARPS, false>(
        sh, sums, prefixes, tile, epoch, VOp::identity(), p.descriptors, probe, false,
        VOp::identity());
    if (t == DL_COMPACT_THREADS - 1)
        tile_end = VOp()(prefixes[0], mine);
    const V tile_start = sh.tile_prefix;
    __syncthreads();
    const V end = tile_end;
    const bool last_tile = tile == tiles - 1;

    /* 4. Outputs. */
    if constexpr (KIND == DL_COMPACT_SELECT_FLAGGED || KIND == DL_COMPACT_SELECT_IF ||
                  KIND == DL_COMPACT_UNIQUE) {
        unsigned long long position = prefixes[0];
#pragma unroll
        for (int j = 0; j < DL_COMPACT_ITEMS; ++j)
            if (keep >> j & 1)
                stage[dl_padded((int)(position++ - tile_start))] = item[j];
        __syncthreads();
        dl_store_staged(static_cast<X *>(p.out), tile_start, stage, 0, (int)(end - tile_start));
        if (last_tile && t == 0)
            *p.num_out = (size_t)end;
    } else {
        /* Run items (keys), at local index heads - heads before the tile. */
        const unsigned long long k0 = tile_start.heads;
        const int heads_here = (int)(end.heads - k0);
        unsigned long long k = prefixes[0].heads;
#pragma unroll
        for (int j = 0; j < DL_COMPACT_ITEMS; ++j)
            if (keep >> j & 1) {
                origin[k - k0] = (unsigned short)(first + j);
                stage[dl_padded((int)(k++ - k0))] = item[j];
            }
        __syncthreads();
        const bool in_place = p.out == p.in;
        X *run_items = static_cast<X *>(p.out);
        for (int i = t; i < heads_here; i += DL_COMPACT_THREADS)
            if (!in_place || k0 + i != base + origin[i]) /* in place: already there */
                run_items[k0 + i] = stage[dl_padded(i)];
        __syncthreads();
        /* Each head closes the run before it: its length, or its aggregate, goes to local
         * index (heads before it) - k0 + 1 - 1, i.e. for run k - 1 at local k - k0. */
        using R = typename Kind::closed;
        R *closing = reinterpret_cast<R *>(stage_words);
        V running = prefixes[0];
#pragma unroll
        for (int j = 0; j < DL_COMPACT_ITEMS; ++j) {
            if (first + j >= count)
                break;
            if ((keep >> j & 1) && running.heads > 0) {
                R closed;
                if constexpr (KIND == DL_COMPACT_RUN_LENGTH)
                    closed = base + first + j - running.last_head;
                else
                    closed = running.value;
                closing[dl_padded((int)(running.heads - k0))] = closed;
            }
            running = VOp()(running, DL_CONTRIBUTION(j));
        }
        __syncthreads();
        /* Local index i closes run k0 - 1 + i; tile 0's first head closes none. */
        dl_store_staged(static_cast<R *>(p.out2), k0 - 1, closing, k0 == 0 ? 1 : 0, heads_here);
        if (last_tile && t == 0) {
            R closed;
            if constexpr (KIND == DL_COMPACT_RUN_LENGTH)
                closed = p.n - end.last_head;
            else
                closed = end.value;
            static_cast<R *>(p.out2)[end.heads - 1] = closed;
            *p.num_out = (size_t)end.heads;
        }
    }

    dl_epoch_finish(p.control, epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
#undef DL_CONTRIBUTION
}

/* ---------------------------------------------------------------- persistent: the roles */

/*
 * On sm_90, from a quarter or half a tile per block on, the calls run persistent on the ring
 * (ring.cuh), with 16-byte aligned inputs, in blocks of four roles (as the segmented scans,
 * segment_kernel.cu):
 *   producer     draws each tile's ticket and has the bulk-copy engine stage its inputs;
 *   reducers     two warps, each folding half the staged tile's vectors; together they make its
 *                value (select, unique: the count it keeps; the run calls: the pair of its heads
 *                and the value from its last head on), which the first publishes at once and
 *                hands to the look-back warp;
 *   look-back    folds the tile's exclusive prefix from its predecessors' descriptors, publishes
 *                its P and hands the prefix to the compute warps, all as soon as the reducers
 *                are done: the P's follow the tiles' arrival, and a look-back seldom goes far;
 *   compute      take the tile into registers and free its stage at once; scan it inside the
 *                tile, put the outputs compacted in the block's output buffer beside the ring
 *                (at the local index: outputs before them in the tile); take the next tile into
 *                registers, freeing its stage, then, with this tile's prefix, store the outputs
 *                with coalesced writes. A block so holds four tiles: two stages, the registers
 *                and the buffer.
 * The prefixes travel through rings twice as deep as the stages (`valued`, `prefixed`): a
 * stage is free before its tile's prefix is read.
 */
/* The compute warps, then the producer, the reducers and the look-back warp. */
#define DL_COMPACT_PERSISTENT_THREADS (DL_SCAN_THREADS + 32 * (2 + DL_COMPACT_REDUCERS))

/* The reducer warps' values of a tile, exchanged: each warp's lane 0 puts its own in
 * parts[k % 2][its index], the reducer warps meet at named barrier 2 (1 is the compute warps',
 * dl_tile_sync), and every lane folds them all in the warps' order. A warp writes parts[k % 2]
 * again only after the next tile's barrier, when every reducer has read it. */
template <typename T, typename Op>
__device__ __forceinline__ T dl_reducers_fold(T mine, T (&parts)[2][DL_COMPACT_REDUCERS], uint32_t k, int reducer)
{
    if (threadIdx.x % 32 == 0)
        parts[k % 2][reducer] = mine;
    asm volatile("bar.sync 2, %0;" ::"n"(32 * DL_COMPACT_REDUCERS) : "memory");
    T all = parts[k % 2][0];
#pragma unroll
    for (int w = 1; w < DL_COMPACT_REDUCERS; ++w)
        all = Op()(all, parts[k % 2][w]);
    return all;
}

/* ---------------------------------------------------------------- persistent (selects, unique) */

/* select_flagged, select_if and unique carry a count, on the scan's tiles (tile.cuh). A stage
 * holds the 16 bytes of items before the tile (unique's item before it: copied before the tile
 * publishes its count, so before any later tile may compact its own items over it), the items,
 * and select_flagged's flags. Inside a tile, each lane's rows' counts are packed a byte each into
 * words, and one warp scan takes them all. */
template <int KIND, typename X> struct dl_compact_stage {
    using S = dl_scan_shape<X>;
    static_assert(S::tile_items >= DL_COMPACT_MIN_TILE,
                  "descriptors are reserved for tiles of DL_COMPACT_MIN_TILE items (policy.h)");
    static constexpr int items_at = 16;
    static constexpr int flags_at = items_at + S::tile_bytes;
    static constexpr int bytes = flags_at + (KIND == DL_COMPACT_SELECT_FLAGGED ? S::tile_items : 0);
    static constexpr int out_bytes = S::tile_bytes; /* the output buffer */
};

/* The ring, the prefix rings, and the warps' counts and first items not kept, read between the
 * tile's two barriers and written for the next tile only after the second. */
template <typename X, int STAGES> struct dl_compact_persistent_shared
    : dl_persistent_shared<unsigned long long, DL_SCAN_THREADS / 32, false, STAGES> {
    static constexpr int slots = 2 * STAGES;
    uint64_t valued[slots];
    uint64_t prefixed[slots];
    uint32_t slot_tile[slots];
    unsigned long long slot_count[slots];  /* the reducer's */
    unsigned long long slot_prefix[slots]; /* the look-back's */
    uint32_t reducer_count[2][DL_COMPACT_REDUCERS]; /* dl_reducers_fold's */
    uint32_t warp_kept[DL_SCAN_THREADS / 32];
    int warp_dropped[DL_SCAN_THREADS / 32];
};

/* The ring's depth: as many stages as fit beside the output buffer and the block's variables. */
template <int KIND, typename X>
using dl_compact_shared_for =
    dl_compact_persistent_shared<X, dl_ring_stages_beside(dl_compact_stage<KIND, X>::bytes,
                                                          dl_compact_stage<KIND, X>::out_bytes +
                                                              (int)sizeof(dl_compact_persistent_shared<X, DL_SCAN_STAGES>))>;

template <int KIND, typename X> struct dl_compact_fill {
    static constexpr bool offsets = false;
    const dl_compact_params &p;
    unsigned char *stages;
    __device__ bool operator()(int s, uint32_t tile, uint64_t *full) const
    {
        using S = dl_scan_shape<X>;
        using G = dl_compact_stage<KIND, X>;
        const uint64_t base = (uint64_t)tile * S::tile_items;
        if (base + S::tile_items > p.n)
            return false; /* the partial last tile: from global memory */
        unsigned char *stage = stages + s * G::bytes;
        const uint32_t before = KIND == DL_COMPACT_UNIQUE && tile ? 16 : 0;
        dl_bulk_expect(full, before + S::tile_bytes + (G::bytes - G::flags_at));
        dl_bulk_copy(stage + G::items_at - before,
                     static_cast<const unsigned char *>(p.in) + base * sizeof(X) - before,
                     before + S::tile_bytes, full);
        if (KIND == DL_COMPACT_SELECT_FLAGGED)
            dl_bulk_copy(stage + G::flags_at, p.flags + base, S::tile_items, full);
        return true;
    }
};

/* A row's vector of items and the flag bytes beside them: what it keeps (bit e: item e). prev:
 * the item before the row; first_overall: the row starts the input. */
template <int KIND, typename X, int VEC>
__device__ __forceinline__ uint32_t dl_compact_keeps(const dl_select_test<X> &test, const X (&x)[VEC],
                                                     X prev, const unsigned char (&flag)[VEC],
                                                     bool first_overall)
{
    uint32_t keep = 0;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
        bool kept;
        if (KIND == DL_COMPACT_SELECT_FLAGGED)
            kept = flag[e] != 0;
        else if (KIND == DL_COMPACT_SELECT_IF)
            kept = test(x[e]);
        else /* unique: X is unsigned, != compares bits */
            kept = (e == 0 && first_overall) || x[e] != (e ? x[e - 1] : prev);
        keep |= (uint32_t)kept << e;
    }
    return keep;
}

/* Reducers: count what each tile keeps, each warp every other 32 vectors (the partial tile: items);
 * the first publishes the count (tile 0: as its prefix). */
template <int KIND, typename X, typename SHARED>
__device__ __forceinline__ void dl_compact_reduce(const dl_compact_params &p, const dl_probe &probe,
                                                  SHARED &sh, const unsigned char *stages,
                                                  uint32_t tiles)
{
    using S = dl_scan_shape<X>;
    using G = dl_compact_stage<KIND, X>;
    constexpr int STRIDE = 32 * DL_COMPACT_REDUCERS;
    const int lane = threadIdx.x % 32;
    const int reducer = (int)threadIdx.x / 32 - (S::warps + 1);
    const int first = reducer * 32 + lane; /* this lane's first vector, or item */
    const X *in = static_cast<const X *>(p.in);
    const dl_select_test<X> test(p);
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        const int q = (int)(k % SHARED::slots);
        dl_mbar_wait(&sh.full[s], (k / SHARED::stages) & 1);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles) {
            if (reducer == 0 && lane == 0) {
                sh.slot_tile[q] = tile;
                dl_mbar_arrive(&sh.valued[q]);
            }
            return;
        }
        const uint64_t base = (uint64_t)tile * S::tile_items;
        uint32_t count = 0;
        if (base + S::tile_items <= p.n) {
            const unsigned char *stage = stages + s * G::bytes;
            const X *items = reinterpret_cast<const X *>(stage + G::items_at);
            if constexpr (KIND == DL_COMPACT_SELECT_FLAGGED) {
                /* 16 flags a load: a byte is nonzero where its top bit is set, or its others carry
                 * into it when added to 0x7f. */
                const uint4 *flags = reinterpret_cast<const uint4 *>(stage + G::flags_at);
                const auto nonzero = [](uint32_t w) {
                    return (uint32_t)__popc((((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u);
                };
#pragma unroll 4
                for (int j = first; j < S::tile_items / 16; j += STRIDE) {
                    const uint4 w = flags[j];
                    count += nonzero(w.x) + nonzero(w.y) + nonzero(w.z) + nonzero(w.w);
                }
            } else {
                /* select_if: the items inside the test's range; unique: the items unlike the one
                 * before, which the stage holds (the tile's first: in the 16 bytes before it). */
                uint32_t hits = 0;
#pragma unroll 4
                for (int j = first; j < S::tile_items / S::vec; j += STRIDE) {
                    dl_vector<X, S::vec> u;
                    u.raw = reinterpret_cast<const uint4 *>(items)[j];
                    if constexpr (KIND == DL_COMPACT_SELECT_IF) {
#pragma unroll
                        for (int e = 0; e < S::vec; ++e)
                            hits += test.inside(u.item[e]);
                    } else {
                        /* X is unsigned, != compares bits; the input's first item is a head */
                        const X prev = j || tile ? items[j * S::vec - 1] : X(~u.item[0]);
#pragma unroll
                        for (int e = 0; e < S::vec; ++e)
                            hits += u.item[e] != (e ? u.item[e - 1] : prev);
                    }
                }
                count = KIND == DL_COMPACT_SELECT_IF && test.outside ? S::tile_items / STRIDE - hits : hits;
            }
        } else {
            for (uint64_t i = first; base + i < p.n; i += STRIDE) {
                const uint64_t g = base + i;
                const X x[1] = {in[g]};
                const unsigned char flag[1] = {KIND == DL_COMPACT_SELECT_FLAGGED ? p.flags[g] : (unsigned char)0};
                count += dl_compact_keeps<KIND, X, 1>(test, x, g ? in[g - 1] : X(0), flag, g == 0);
            }
        }
        dl_mbar_arrive(&sh.empty[s]); /* every lane, after its reads of the stage */
        count = dl_reducers_fold<uint32_t, dl_sum<uint32_t>>(__reduce_add_sync(0xffffffffu, count),
                                                             sh.reducer_count, k, reducer);
        if (reducer == 0 && lane == 0) {
            dl_publish_aggregate<unsigned long long, dl_sum<unsigned long long>>(
                p.descriptors, tile, sh.epoch, 0ull, count, probe);
            sh.slot_tile[q] = tile;
            sh.slot_count[q] = count;
            dl_mbar_arrive(&sh.valued[q]);
        }
    }
}

/* Compute warps: a tile's items and keep-flags into registers, and its stage is free; the counts
 * scanned inside the tile, the kept items compacted in the output buffer; then the next tile into
 * registers (its stage is free the sooner, while this tile's prefix comes); with the prefix, out
 * with coalesced stores. Run-length encoding keeps its heads as unique does, here from the run
 * kernel (dl_runs_persistent_kernel, whose stage is unique's); once the keys are out, the heads'
 * positions in the tile go where they were, and a run's length is the distance to the next head.
 * prefix(q): slot q's tile start, the pair (outputs before the tile, items since the last head
 * before it: run-length encoding's, else 0). */
template <int KIND, typename X, typename SHARED, typename PREFIX>
__device__ __forceinline__ void dl_compact_compute(const dl_compact_params &p, SHARED &sh,
                                                   unsigned char *stages, uint32_t tiles, PREFIX prefix)
{
    using S = dl_scan_shape<X>;
    using G = dl_compact_stage<KIND, X>;
    using F = dl_row_items<unsigned char, S::vec>;
    constexpr int WARPS = S::warps, WORDS = S::rows / 4;
    constexpr bool heads = KIND == DL_COMPACT_UNIQUE || KIND == DL_COMPACT_RUN_LENGTH; /* runs' first items */
    static_assert(S::rows % 4 == 0 && 32 * S::vec < 256, "four rows' counts to a word, a byte each");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, t = threadIdx.x;
    const X *in = static_cast<const X *>(p.in);
    X *out = static_cast<X *>(p.out);
    X *buffer = reinterpret_cast<X *>(stages + SHARED::stages * G::bytes);
    const bool in_place = p.out == p.in;
    const dl_select_test<X> test(p);

    /* The tile in registers: its items, keep-flags (bit e of keep[r]: v[r][e]) and this lane's first
     * item not kept. take(k) takes ring entry k's tile into them and frees its stage; false: no
     * tiles left. */
    X v[S::rows][S::vec];
    uint32_t keep[S::rows];
    int dropped;
    uint32_t tile;
    const auto take = [&](uint32_t k) {
        const int s = (int)(k % SHARED::stages);
        dl_mbar_wait(&sh.full[s], (k / SHARED::stages) & 1);
        tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles)
            return false;
        const uint64_t base = (uint64_t)tile * S::tile_items;
        const bool whole = base + S::tile_items <= p.n;
        const unsigned char *stage = stages + s * G::bytes;
        const X *items = reinterpret_cast<const X *>(stage + G::items_at);
        dropped = S::tile_items;
#pragma unroll
        for (int r = 0; r < S::rows; ++r) {
            const int vector = (warp * S::rows + r) * 32 + lane;
            const int first = vector * S::vec; /* tile index of v[r][0] */
            X prev = X(0);
            F f = {};
            uint32_t valid = ~0u;
            if (whole) {
                dl_vector<X, S::vec> u;
                u.raw = reinterpret_cast<const uint4 *>(items)[vector];
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    v[r][e] = u.item[e];
                if (heads && (first || tile))
                    prev = items[first - 1];
                if (KIND == DL_COMPACT_SELECT_FLAGGED)
                    f.raw = reinterpret_cast<const typename F::raw_type *>(stage + G::flags_at)[vector];
            } else {
#pragma unroll
                for (int e = 0; e < S::vec; ++e) {
                    const uint64_t g = base + first + e;
                    v[r][e] = g < p.n ? in[g] : X(0);
                    if (KIND == DL_COMPACT_SELECT_FLAGGED)
                        f.item[e] = g < p.n ? p.flags[g] : 0;
                    if (g >= p.n)
                        valid &= ~(1u << e);
                }
                /* The last tile's item before it: no later tile writes over it. */
                if (heads && base + first > 0 && base + first - 1 < p.n)
                    prev = in[base + first - 1];
            }
            keep[r] = dl_compact_keeps<KIND, X, S::vec>(test, v[r], prev, f.item, base + first == 0) & valid;
            const uint32_t not_kept = ~keep[r] & ((1u << S::vec) - 1);
            if (not_kept && dropped == S::tile_items)
                dropped = first + __ffs(not_kept) - 1;
        }
        dl_mbar_arrive(&sh.empty[s]); /* every lane, after its reads of the stage */
        return true;
    };

    if (!take(0))
        return;
    for (uint32_t k = 0;; ++k) {
        const int q = (int)(k % SHARED::slots);
        const uint32_t this_tile = tile;
        const uint64_t base = (uint64_t)this_tile * S::tile_items;

        /* Each row's kept items before this lane's (a byte each, four rows to a word), the warp's
         * before it in the tile, and the tile's. */
        uint32_t word[WORDS];
#pragma unroll
        for (int w = 0; w < WORDS; ++w) {
            word[w] = 0;
#pragma unroll
            for (int r = 0; r < 4; ++r)
                word[w] |= (uint32_t)__popc(keep[4 * w + r]) << (8 * r);
        }
        uint32_t lane_before[WORDS], row_total[WORDS];
#pragma unroll
        for (int w = 0; w < WORDS; ++w) {
            const uint32_t inclusive = dl_warp_inclusive_scan<uint32_t, dl_sum<uint32_t>>(word[w]);
            lane_before[w] = inclusive - word[w];
            row_total[w] = dl_shfl(inclusive, 31);
        }
        uint32_t warp_total = 0;
#pragma unroll
        for (int r = 0; r < S::rows; ++r)
            warp_total += row_total[r / 4] >> (8 * (r % 4)) & 0xff;
        const int warp_dropped = __reduce_min_sync(0xffffffffu, dropped);
        if (lane == 0) {
            sh.warp_kept[warp] = warp_total;
            sh.warp_dropped[warp] = warp_dropped;
        }
        dl_tile_sync<true, WARPS>(); /* also: every warp's stores of the tile before are done */
        int local = 0, kept = 0, tile_dropped = S::tile_items;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            local += w < warp ? (int)sh.warp_kept[w] : 0;
            kept += (int)sh.warp_kept[w];
            tile_dropped = min(tile_dropped, sh.warp_dropped[w]);
        }

        /* put(i, r, e, at) for each kept item v[r][e] of keep_of: i its local index (the kept items
         * before it in the tile), at its index in the tile. */
        const auto each_kept = [&](const uint32_t (&keep_of)[S::rows], auto put) {
            int row_local = local;
#pragma unroll
            for (int r = 0; r < S::rows; ++r) {
                int i = row_local + (int)(lane_before[r / 4] >> (8 * (r % 4)) & 0xff);
                const int first = ((warp * S::rows + r) * 32 + lane) * S::vec;
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    if (keep_of[r] >> e & 1)
                        put(i++, r, e, first + e);
                row_local += (int)(row_total[r / 4] >> (8 * (r % 4)) & 0xff);
            }
        };

        /* The kept items, compacted, into the output buffer. */
        each_kept(keep, [&](int i, int r, int e, int) { buffer[i] = v[r][e]; });
        uint32_t heads_at[KIND == DL_COMPACT_RUN_LENGTH ? S::rows : 1];
        if constexpr (KIND == DL_COMPACT_RUN_LENGTH)
#pragma unroll
            for (int r = 0; r < S::rows; ++r)
                heads_at[r] = keep[r];

        /* The next tile into registers while this one's prefix comes: its stage is free sooner. */
        const bool more = take(k + 1);

        dl_mbar_wait(&sh.prefixed[q], (k / SHARED::slots) & 1);
        const auto start = prefix(q);
        const unsigned long long tile_start = start.heads;
        dl_tile_sync<true, WARPS>();

        /* Out. In place, the kept items before the tile's first dropped one are already where they
         * go when every item before the tile was kept. */
        const int stays = in_place && tile_start == base ? tile_dropped : 0;
        for (int i = stays + t; i < kept; i += S::threads)
            out[tile_start + i] = buffer[i];
        if constexpr (KIND == DL_COMPACT_RUN_LENGTH) {
            uint32_t *positions = reinterpret_cast<uint32_t *>(buffer);
            dl_tile_sync<true, WARPS>();
            each_kept(heads_at, [&](int i, int, int, int at) { positions[i] = (uint32_t)at; });
            dl_tile_sync<true, WARPS>();
            unsigned long long *lengths = static_cast<unsigned long long *>(p.out2);
            for (int i = t + (tile_start == 0 ? 1 : 0); i < kept; i += S::threads)
                lengths[tile_start - 1 + i] = i ? positions[i] - positions[i - 1] : start.value + positions[0];
            if (this_tile == tiles - 1 && t == 0) {
                const uint64_t count = p.n - base;
                lengths[tile_start + kept - 1] = kept ? count - positions[kept - 1] : start.value + count;
            }
        }
        if (this_tile == tiles - 1 && t == 0)
            *p.num_out = (size_t)(tile_start + kept);
        if (!more)
            return;
    }
}

template <int KIND, typename X>
__global__ void __launch_bounds__(DL_COMPACT_PERSISTENT_THREADS, DL_SCAN_BLOCKS_PER_SM)
    dl_compact_persistent_kernel(const dl_compact_params p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using S = dl_scan_shape<X>;
    using G = dl_compact_stage<KIND, X>;
    using SHARED = dl_compact_shared_for<KIND, X>;
    using Count = dl_sum<unsigned long long>;
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ SHARED sh;
    static_assert(dl_ring_fits<SHARED>(G::bytes, DL_SCAN_BLOCKS_PER_SM, G::out_bytes), "blocks per SM");
    const uint32_t tiles = (uint32_t)((p.n + S::tile_items - 1) / S::tile_items);
    const int warp = threadIdx.x / 32;
    const dl_probe probe(p.control);
    /* `empty`: every lane of the compute warps and the reducers, after their reads of the stage
     * (ring.cuh, dl_stage_header: racecheck follows a lane's own arrival, not a __syncwarp). */
    dl_prefix_rings_init(sh, (S::warps + DL_COMPACT_REDUCERS) * 32);
    dl_grid_dependency();
    if (warp == S::warps) {
        dl_persistent_produce(p.control, probe, sh, tiles, dl_compact_fill<KIND, X>{p, stages});
    } else if (warp > S::warps && warp <= S::warps + DL_COMPACT_REDUCERS) {
        dl_compact_reduce<KIND, X>(p, probe, sh, stages, tiles);
    } else if (warp == S::warps + DL_COMPACT_REDUCERS + 1) {
        dl_ring_look_back<unsigned long long, Count, false>(
            p.descriptors, probe, sh, tiles, [&](int q) { return dl_stage_header(sh.slot_count[q]); },
            [](int) { return true; }, [&](int q, unsigned long long prefix) { sh.slot_prefix[q] = prefix; });
    } else {
        dl_compact_compute<KIND, X>(p, sh, stages, tiles, [&](int q) {
            return dl_segment<unsigned long long, unsigned long long>{dl_stage_header(sh.slot_prefix[q]), 0};
        });
    }
    __syncthreads();
    dl_epoch_finish(p.control, sh.epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
#endif
}

/* The persistent select or unique kernel's shared memory beyond its static variables: the ring
 * and the output buffer. */
template <int KIND, typename X> constexpr int dl_compact_dynamic_bytes()
{
    return dl_compact_shared_for<KIND, X>::stages * dl_compact_stage<KIND, X>::bytes +
           dl_compact_stage<KIND, X>::out_bytes;
}

/* ---------------------------------------------------------------- persistent (runs) */

/*
 * Run-length encoding and reduce-by-key carry the pair (runs so far, value of the run still open):
 * reduce-by-key's values under its operator; run-length encoding's count its items, each worth 1
 * (Y: 64-bit, or 32-bit below 2^32 items, the heads too: dl_runs_heads). The producer's bulk
 * copies bring a tile's keys, with the 16 bytes of keys before them, and reduce-by-key's values
 * into a stage. The reducer counts the tile's heads and reduces its values from its last head on.
 * Run-length encoding's compute warps are unique's (dl_compact_compute). Reduce-by-key's scan
 * their rows' pairs (the transposed warp scan, then one barrier across the warps); with the
 * tile's prefix, each head puts its key and the value that closes the run before it at its run's
 * index less the tile's first, compacted in the output buffer; a second barrier, then coalesced
 * stores. In place, the keys already where they go (the tile's leading heads, where every item
 * before them is a head) are not written again.
 */

/* The tile and its stage for keys X and values Y: each thread holds ROWS rows of one 16-byte access
 * of keys (and the values beside them); the stage holds the 16 bytes of keys before the tile and
 * its keys. Reduce-by-key's stage then holds the tile's values; its tiles are
 * DL_RUNS_TILE_ITEMS_*, and its output buffer takes the compacted keys, then the runs' aggregates.
 * Run-length encoding's take the scan's tiles, keys alone: unique's stage (dl_compact_stage).
 * Reduce-by-key's compute warps scan pairs (heads, value since the last) inside the tile. */
template <int KIND, typename X, typename Y> struct dl_runs_shape {
    static constexpr bool values = KIND == DL_COMPACT_REDUCE_BY_KEY;
    static constexpr int threads = DL_SCAN_THREADS;
    static constexpr int warps = threads / 32;
    static constexpr int vec = 16 / (int)sizeof(X);
    static constexpr int tile_items = !values ? dl_scan_shape<X>::tile_items
                                      : sizeof(X) == 4 && sizeof(Y) == 4 ? DL_RUNS_TILE_ITEMS_4B
                                                                         : DL_RUNS_TILE_ITEMS_8B;
    static constexpr int rows = tile_items / (threads * vec);
    static constexpr int items_per_warp = 32 * vec * rows;
    static constexpr int keys_at = 16;
    static constexpr int values_at = keys_at + tile_items * (int)sizeof(X);
    static constexpr int bytes = values_at + (values ? tile_items * (int)sizeof(Y) : 0);
    static constexpr int out_bytes = bytes - keys_at; /* the output buffer: keys, then values */
    using pair = dl_segment<uint32_t, Y>;
    /* the transposed warp scan's passes (reduce-by-key): its scratch near 1 KB per warp */
    static constexpr int passes = rows * (int)sizeof(pair) > 32 ? rows * (int)sizeof(pair) / 32 : 1;
    static constexpr int scratch_items = values ? dl_warp_scratch<pair, rows, passes>::items : 1;
    static_assert(rows * vec <= 32 && rows % passes == 0, "a thread's heads in one word");
    static_assert(tile_items >= DL_COMPACT_MIN_TILE, "descriptors are reserved for them (policy.h)");
    static_assert(values_at % 16 == 0 && bytes % 16 == 0, "16-byte aligned bulk copies");
};

/* The ring, and the prefix rings (the reducer's pair, the look-back's prefix). The warps' pairs
 * (reduce-by-key) or head counts (run-length encoding) and first non-heads are read between the
 * tile's first two barriers, and written for the next tile only after the second. */
template <int KIND, typename X, typename Y, bool LEFT_FOLD, int STAGES>
struct dl_runs_persistent_shared
    : dl_persistent_shared<dl_runs_carry<KIND, Y>, DL_SCAN_THREADS / 32, LEFT_FOLD, STAGES> {
    using G = dl_runs_shape<KIND, X, Y>;
    using H = typename dl_runs_heads<KIND, Y>::type;
    static constexpr int slots = 2 * STAGES;
    uint64_t valued[slots];
    uint64_t prefixed[slots];
    uint32_t slot_tile[slots];
    H slot_heads[slots]; /* the reducer's pair */
    Y slot_value[slots];
    H slot_prefix_heads[slots]; /* the look-back's prefix */
    Y slot_prefix_value[slots];
    dl_runs reducer_runs[2][DL_COMPACT_REDUCERS]; /* dl_reducers_fold's */
    Y reducer_value[2][DL_COMPACT_REDUCERS];
    typename G::pair warp_runs[G::warps];
    uint32_t warp_kept[G::warps];
    int warp_dropped[G::warps];
    typename G::pair scratch[G::warps][G::scratch_items];
};

/* The ring's depth: as many stages as fit beside the output buffer and the block's variables. */
template <int KIND, typename X, typename Y, bool LEFT_FOLD>
using dl_runs_shared_for = dl_runs_persistent_shared<
    KIND, X, Y, LEFT_FOLD,
    dl_ring_stages_beside(dl_runs_shape<KIND, X, Y>::bytes,
                          dl_runs_shape<KIND, X, Y>::out_bytes +
                              (int)sizeof(dl_runs_persistent_shared<KIND, X, Y, LEFT_FOLD, DL_SCAN_STAGES>))>;

/* The persistent run kernel's shared memory beyond its static variables: the ring and the
 * output buffer. */
template <int KIND, typename X, typename Y, bool LEFT_FOLD> constexpr int dl_runs_dynamic_bytes()
{
    return dl_runs_shared_for<KIND, X, Y, LEFT_FOLD>::stages * dl_runs_shape<KIND, X, Y>::bytes +
           dl_runs_shape<KIND, X, Y>::out_bytes;
}

/* The producer's fill: the keys with the 16 bytes before them (tile 0 has none), then the
 * values. The partial last tile is left to global loads. */
template <int KIND, typename X, typename Y> struct dl_runs_fill {
    static constexpr bool offsets = false;
    const dl_compact_params &p;
    unsigned char *stages;
    __device__ bool operator()(int s, uint32_t tile, uint64_t *full) const
    {
        using G = dl_runs_shape<KIND, X, Y>;
        const uint64_t base = (uint64_t)tile * G::tile_items;
        if (base + G::tile_items > p.n)
            return false;
        constexpr bool values = G::values;
        constexpr uint32_t key_bytes = G::tile_items * sizeof(X), value_bytes = G::tile_items * sizeof(Y);
        const uint32_t before = tile ? 16 : 0;
        unsigned char *stage = stages + s * G::bytes;
        dl_bulk_expect(full, key_bytes + before + (values ? value_bytes : 0));
        dl_bulk_copy(stage + G::keys_at - before,
                     static_cast<const unsigned char *>(p.in) + base * sizeof(X) - before, key_bytes + before,
                     full);
        if (values)
            dl_bulk_copy(stage + G::values_at, static_cast<const Y *>(p.values_in) + base, value_bytes, full);
        return true;
    }
};

/* Reducers: each tile's heads and the reduction of its values from its last head on (run lengths:
 * the items from there), each warp every other 32 vectors (the partial tile: items); the first
 * publishes them at once (tile 0: as its prefix) and hands them to the look-back warp. */
template <int KIND, typename X, typename Y, typename YOp, typename SHARED>
__device__ __forceinline__ void dl_runs_reduce(const dl_compact_params &p, const dl_probe &probe,
                                               SHARED &sh, const unsigned char *stages, uint32_t tiles)
{
    using G = dl_runs_shape<KIND, X, Y>;
    using V = dl_runs_carry<KIND, Y>;
    using VOp = dl_runs_carry_op<KIND, Y, YOp>;
    constexpr int STRIDE = 32 * DL_COMPACT_REDUCERS;
    const int lane = threadIdx.x % 32;
    const int reducer = (int)threadIdx.x / 32 - (G::warps + 1);
    const int first = reducer * 32 + lane; /* this lane's first vector, or item */
    const X *in = static_cast<const X *>(p.in);
    const Y *values_in = static_cast<const Y *>(p.values_in);
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        const int q = (int)(k % SHARED::slots);
        dl_mbar_wait(&sh.full[s], (k / SHARED::stages) & 1);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles) {
            if (reducer == 0 && lane == 0) {
                sh.slot_tile[q] = tile;
                dl_mbar_arrive(&sh.valued[q]);
            }
            return;
        }
        const uint64_t base = (uint64_t)tile * G::tile_items;
        const int count = p.n - base < (uint64_t)G::tile_items ? (int)(p.n - base) : G::tile_items;
        const unsigned char *stage = stages + s * G::bytes;
        const X *keys = reinterpret_cast<const X *>(stage + G::keys_at);

        /* The heads, and the last. */
        uint32_t heads = 0;
        int last = -1;
        if (count == G::tile_items) {
#pragma unroll 4
            for (int j = first; j < G::tile_items / G::vec; j += STRIDE) {
                dl_vector<X, G::vec> u;
                u.raw = reinterpret_cast<const uint4 *>(keys)[j];
                /* the key before, from the stage (the tile's first: in the 16 bytes before it) */
                X previous = j || tile ? keys[j * G::vec - 1] : X(0);
#pragma unroll
                for (int e = 0; e < G::vec; ++e) {
                    const int i = j * G::vec + e;
                    const bool head = previous != u.item[e] || (tile == 0 && i == 0);
                    heads += head;
                    last = head ? i : last;
                    previous = u.item[e];
                }
            }
        } else {
            for (int i = first; i < count; i += STRIDE) {
                const bool head = base + i == 0 || in[base + i] != in[base + i - 1];
                heads += head;
                last = head ? i : last;
            }
        }
        /* (heads, last head + 1) under (sum, max) */
        const dl_runs mine = {__reduce_add_sync(0xffffffffu, heads),
                              (unsigned long long)(__reduce_max_sync(0xffffffffu, last) + 1)};
        const dl_runs runs = dl_reducers_fold<dl_runs, dl_runs_op>(mine, sh.reducer_runs, k, reducer);
        heads = (uint32_t)runs.heads;
        last = (int)runs.last_head - 1;

        /* The values from the last head on, VEC chains a lane in a fixed order; run lengths count. */
        const int from = last < 0 ? 0 : last;
        Y value;
        if constexpr (KIND == DL_COMPACT_RUN_LENGTH) {
            value = (Y)(count - from);
        } else {
            constexpr int VEC = 16 / (int)sizeof(Y);
            Y chain[VEC];
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                chain[e] = YOp::identity();
            if (count == G::tile_items) {
                const uint4 *staged = reinterpret_cast<const uint4 *>(stage + G::values_at);
#pragma unroll 4
                for (int j = from / VEC + first; j < G::tile_items / VEC; j += STRIDE) {
                    dl_vector<Y, VEC> u;
                    u.raw = staged[j];
#pragma unroll
                    for (int e = 0; e < VEC; ++e)
                        if (j * VEC + e >= from)
                            chain[e] = YOp()(chain[e], u.item[e]);
                }
            } else {
                for (int i = from + first; i < count; i += STRIDE)
                    chain[0] = YOp()(chain[0], values_in[base + i]);
            }
            Y acc = chain[0];
#pragma unroll
            for (int e = 1; e < VEC; ++e)
                acc = YOp()(acc, chain[e]);
            value = dl_reducers_fold<Y, YOp>(dl_warp_reduce<Y, YOp>(acc), sh.reducer_value, k, reducer);
        }
        dl_mbar_arrive(&sh.empty[s]); /* every lane, after its reads of the stage */
        if (reducer == 0 && lane == 0) {
            dl_publish_aggregate<V, VOp>(p.descriptors, tile, sh.epoch, VOp::identity(), V{heads, value},
                                         probe);
            sh.slot_tile[q] = tile;
            sh.slot_heads[q] = heads;
            sh.slot_value[q] = value;
            dl_mbar_arrive(&sh.valued[q]);
        }
    }
}

/* Reduce-by-key's compute warps: a tile's keys, heads and values into registers, and its stage is
 * free; the rows' pairs scanned; each head's key, and the value closing the run before it, compacted
 * in the output buffer (the tile's first head's value without what comes before the tile); then the
 * next tile into registers (its stage is free the sooner, while this tile's prefix comes); with the
 * prefix, out with coalesced stores. */
template <typename X, typename Y, typename YOp, typename SHARED>
__device__ __forceinline__ void dl_runs_compute(const dl_compact_params &p, SHARED &sh, unsigned char *stages,
                                                uint32_t tiles)
{
    using G = dl_runs_shape<DL_COMPACT_REDUCE_BY_KEY, X, Y>;
    using P = dl_segment<uint32_t, Y>;
    using POp = dl_segmented<uint32_t, Y, YOp>;
    constexpr int ROWS = G::rows, VEC = G::vec;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, t = threadIdx.x;
    const int warp_first = warp * G::items_per_warp;
    const X *in = static_cast<const X *>(p.in);
    const Y *values_in = static_cast<const Y *>(p.values_in);
    X *keys_out = static_cast<X *>(p.out);
    Y *closed_out = static_cast<Y *>(p.out2);
    const bool in_place = p.out == p.in;
    unsigned char *buffer = stages + SHARED::stages * G::bytes;
    X *out_keys = reinterpret_cast<X *>(buffer);
    Y *out_values = reinterpret_cast<Y *>(buffer + (G::values_at - G::keys_at));

    /* The tile in registers: keys, values and heads (bit r * VEC + e: key[r][e]; items past n:
     * none). take(k) takes ring entry k's tile into them and frees its stage; false: no tiles
     * left. */
    X key[ROWS][VEC];
    Y v[ROWS][VEC];
    uint32_t heads;
    uint32_t tile;
    const auto take = [&](uint32_t k) {
        const int s = (int)(k % SHARED::stages);
        dl_mbar_wait(&sh.full[s], (k / SHARED::stages) & 1);
        tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles)
            return false;
        const uint64_t base = (uint64_t)tile * G::tile_items;
        const uint64_t warp_base = base + warp_first;
        const bool whole = base + G::tile_items <= p.n;
        const unsigned char *stage = stages + s * G::bytes;
        const X *keys = reinterpret_cast<const X *>(stage + G::keys_at);
        const Y *values = reinterpret_cast<const Y *>(stage + G::values_at);
        uint32_t valid = ~0u;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const int first = warp_first + (r * 32 + lane) * VEC; /* tile index of key[r][0] */
            if (whole) {
                dl_vector<X, VEC> u;
                u.raw = reinterpret_cast<const uint4 *>(keys)[first / VEC];
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    key[r][e] = u.item[e];
                using W = dl_row_items<Y, VEC>;
                W w;
                w.raw = *reinterpret_cast<const typename W::raw_type *>(values + first);
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    v[r][e] = w.item[e];
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    const uint64_t g = base + first + e;
                    key[r][e] = g < p.n ? in[g] : X(0);
                    v[r][e] = g < p.n ? values_in[g] : YOp::identity();
                    if (g >= p.n)
                        valid &= ~(1u << (r * VEC + e));
                }
            }
        }
        if (whole) {
            heads = dl_key_heads(key, keys[warp_first - 1], warp_base == 0);
        } else {
            const X before = warp_base > 0 && warp_base - 1 < p.n ? in[warp_base - 1] : X(0);
            heads = dl_key_heads(key, before, warp_base == 0) & valid;
        }
        dl_mbar_arrive(&sh.empty[s]); /* the stage is free: the tile is in registers */
        return true;
    };

    if (!take(0))
        return;
    for (uint32_t k = 0;; ++k) {
        const uint32_t this_tile = tile;
        const uint64_t base = (uint64_t)this_tile * G::tile_items;

        /* The rows' pairs, the warp's, and the warp's first item that is not a head. */
        P lane_runs[ROWS];
        int non_head = G::tile_items;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            Y value = YOp::identity();
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                const bool head = heads >> (r * VEC + e) & 1;
                value = head ? v[r][e] : YOp()(value, v[r][e]);
                const int i = warp_first + (r * 32 + lane) * VEC + e;
                non_head = !head && i < non_head ? i : non_head;
            }
            lane_runs[r] = P{(uint32_t)__popc(heads >> (r * VEC) & ((1u << VEC) - 1)), value};
        }
        P row_prefix[ROWS];
        const P warp_total =
            dl_warp_prefixes_transposed<P, POp, ROWS, G::passes>(lane_runs, row_prefix, sh.scratch[warp]);
        non_head = __reduce_min_sync(0xffffffffu, non_head);
        if (lane == 0) {
            sh.warp_runs[warp] = warp_total;
            sh.warp_dropped[warp] = non_head;
        }
        dl_tile_sync<true, G::warps>(); /* also: every warp's stores of the tile before are done */
        const P inclusive =
            dl_warp_inclusive_scan<P, POp>(lane < G::warps ? sh.warp_runs[lane] : POp::identity());
        const P before = dl_shfl(inclusive, warp > 0 ? warp - 1 : 0);
        const P tile_total = dl_shfl(inclusive, G::warps - 1);
        int tile_non_head = G::tile_items;
        if (in_place)
#pragma unroll
            for (int w = 0; w < G::warps; ++w)
                tile_non_head = min(tile_non_head, sh.warp_dropped[w]);

        /* Each head's key, and the value closing the run before it, at the head's local index (the
         * tile's runs before it); the tile's first head closes the run open at the tile's start,
         * whose value here leaves out what came before the tile (the prefix, added at the store). */
        const int warp_runs = warp ? (int)before.heads : 0; /* the tile's runs before the warp */
        const Y warp_value = warp ? before.value : YOp::identity();
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            int i = warp_runs + (int)row_prefix[r].heads;
            Y running = row_prefix[r].heads ? row_prefix[r].value : YOp()(warp_value, row_prefix[r].value);
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                if (heads >> (r * VEC + e) & 1) {
                    out_keys[i] = key[r][e];
                    out_values[i] = running;
                    running = v[r][e];
                    ++i;
                } else {
                    running = YOp()(running, v[r][e]);
                }
            }
        }

        /* The next tile into registers while this one's prefix comes: its stage is free sooner. */
        const bool more = take(k + 1);

        const int q = (int)(k % SHARED::slots);
        dl_mbar_wait(&sh.prefixed[q], (k / SHARED::slots) & 1);
        const unsigned long long k0 = dl_stage_header(sh.slot_prefix_heads[q]);
        const Y prefix = dl_stage_header(sh.slot_prefix_value[q]);
        dl_tile_sync<true, G::warps>();

        /* Out, coalesced: keys from the first that moves; the values from the run before the tile's
         * first head (none before the input's first). */
        const int runs_here = (int)tile_total.heads;
        const int stays = in_place && k0 == base ? tile_non_head : 0;
        for (int i = t + stays; i < runs_here; i += G::threads)
            keys_out[k0 + i] = out_keys[i];
        for (int i = t + (k0 == 0 ? 1 : 0); i < runs_here; i += G::threads)
            closed_out[k0 - 1 + i] = i ? out_values[i] : YOp()(prefix, out_values[0]);
        if (this_tile == tiles - 1 && t == 0) {
            const unsigned long long runs = k0 + tile_total.heads;
            closed_out[runs - 1] = tile_total.heads ? tile_total.value : YOp()(prefix, tile_total.value);
            *p.num_out = (size_t)runs;
        }
        if (!more)
            return;
    }
}

template <int KIND, typename X, typename Y, typename YOp, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_COMPACT_PERSISTENT_THREADS, DL_SCAN_BLOCKS_PER_SM)
    dl_runs_persistent_kernel(const dl_compact_params p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using G = dl_runs_shape<KIND, X, Y>;
    using SHARED = dl_runs_shared_for<KIND, X, Y, LEFT_FOLD>;
    using V = dl_runs_carry<KIND, Y>;
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ SHARED sh;
    static_assert(dl_ring_fits<SHARED>(G::bytes, DL_SCAN_BLOCKS_PER_SM, G::out_bytes), "blocks per SM");
    static_assert(KIND != DL_COMPACT_RUN_LENGTH || (G::bytes == dl_compact_stage<KIND, X>::bytes &&
                                                     G::out_bytes == dl_compact_stage<KIND, X>::out_bytes),
                  "run-length encoding's compute warps are unique's, on unique's stage");
    const uint32_t tiles = (uint32_t)((p.n + G::tile_items - 1) / G::tile_items);
    const int warp = threadIdx.x / 32;
    const dl_probe probe(p.control);
    /* `empty`: every lane of the compute warps and the reducers, after their accesses to the stage
     * (ring.cuh, dl_stage_header: racecheck follows a lane's own arrival, not a __syncwarp). */
    dl_prefix_rings_init(sh, (G::warps + DL_COMPACT_REDUCERS) * 32);
    dl_grid_dependency();
    if (warp == G::warps)
        dl_persistent_produce(p.control, probe, sh, tiles, dl_runs_fill<KIND, X, Y>{p, stages});
    else if (warp > G::warps && warp <= G::warps + DL_COMPACT_REDUCERS)
        dl_runs_reduce<KIND, X, Y, YOp>(p, probe, sh, stages, tiles);
    else if (warp == G::warps + DL_COMPACT_REDUCERS + 1)
        dl_ring_look_back<V, dl_runs_carry_op<KIND, Y, YOp>, LEFT_FOLD>(
            p.descriptors, probe, sh, tiles,
            [&](int q) {
                return V{dl_stage_header(sh.slot_heads[q]), dl_stage_header(sh.slot_value[q])};
            },
            [](int) { return true; },
            [&](int q, V prefix) {
                sh.slot_prefix_heads[q] = prefix.heads;
                sh.slot_prefix_value[q] = prefix.value;
            });
    else if constexpr (KIND == DL_COMPACT_RUN_LENGTH)
        dl_compact_compute<KIND, X>(p, sh, stages, tiles, [&](int q) {
            return V{dl_stage_header(sh.slot_prefix_heads[q]), dl_stage_header(sh.slot_prefix_value[q])};
        });
    else
        dl_runs_compute<X, Y, YOp>(p, sh, stages, tiles);
    __syncthreads();
    dl_epoch_finish(p.control, sh.epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
#endif
}

/* ---------------------------------------------------------------- launcher */

/* The persistent run kernel for KIND over keys X and values Y (run-length encoding: its counts). */
template <int KIND, typename X, typename Y, typename YOp, bool LEFT_FOLD>
static int dl_runs_launch(const dl_compact_params *p, cudaStream_t stream)
{
    return dl_launch(dl_runs_persistent_kernel<KIND, X, Y, YOp, LEFT_FOLD>, *p, dim3(p->persistent_blocks),
                     dim3(DL_COMPACT_PERSISTENT_THREADS), dl_runs_dynamic_bytes<KIND, X, Y, LEFT_FOLD>(),
                     p->dependent_launch, stream);
}

/* KIND over items X (reduce-by-key: values Y under YOp). Run-length encoding's Y is the width of
 * its counts: 32-bit (dl_compact_by_size), 64-bit from 2^32 items. */
template <int KIND, typename X, typename Y, typename YOp, bool LEFT_FOLD>
static int dl_compact_run(const dl_compact_params *p, cudaStream_t stream)
{
    if constexpr (KIND == DL_COMPACT_RUN_LENGTH && sizeof(Y) == 4)
        if (p->n > UINT32_MAX)
            return dl_compact_run<KIND, X, unsigned long long, dl_sum<unsigned long long>, false>(p, stream);
    if constexpr (KIND == DL_COMPACT_SELECT_FLAGGED || KIND == DL_COMPACT_SELECT_IF ||
                  KIND == DL_COMPACT_UNIQUE) {
        using S = dl_scan_shape<X>;
        const uint64_t tiles = (p->n + S::tile_items - 1) / S::tile_items;
        const bool aligned = (uintptr_t)p->in % 16 == 0 &&
                             (KIND != DL_COMPACT_SELECT_FLAGGED || (uintptr_t)p->flags % 16 == 0);
        /* From the policy row's count of tiles (policy.h: compact_from, flagged_from). */
        if (aligned && p->persistent_blocks > 0 && tiles > p->persistent_from) {
            return dl_launch(dl_compact_persistent_kernel<KIND, X>, *p, dim3(p->persistent_blocks),
                             dim3(DL_COMPACT_PERSISTENT_THREADS), dl_compact_dynamic_bytes<KIND, X>(),
                             p->dependent_launch, stream);
        }
    }
    if constexpr (KIND == DL_COMPACT_RUN_LENGTH || KIND == DL_COMPACT_REDUCE_BY_KEY) {
        using G = dl_runs_shape<KIND, X, Y>;
        const uint64_t tiles = (p->n + G::tile_items - 1) / G::tile_items;
        const bool aligned = (uintptr_t)p->in % 16 == 0 &&
                             (KIND != DL_COMPACT_REDUCE_BY_KEY || (uintptr_t)p->values_in % 16 == 0);
        /* From the policy row's count of tiles (policy.h: runs_from). */
        if (aligned && p->persistent_blocks > 0 && tiles > p->persistent_from)
            return dl_runs_launch<KIND, X, Y, YOp, LEFT_FOLD>(p, stream);
    }
    const uint64_t tiles = (p->n + DL_COMPACT_TILE - 1) / DL_COMPACT_TILE;
    return dl_launch(dl_compact_kernel<KIND, X, Y, YOp, LEFT_FOLD>, *p, dim3((unsigned)tiles),
                     dim3(DL_COMPACT_THREADS), 0, p->dependent_launch, stream);
}

/* The bits of an item of X: compaction moves and compares items by them. */
template <typename X> using dl_bits_of = typename std::conditional<sizeof(X) == 8, uint64_t, uint32_t>::type;

/* Calls that move and compare items by their bits (select_flagged, unique, run-length
 * encode): one instantiation per item size. */
template <int KIND> struct dl_compact_by_size {
    template <typename X> static int run(const dl_compact_params *p, cudaStream_t stream)
    {
        return dl_compact_run<KIND, dl_bits_of<X>, uint32_t, dl_sum<uint32_t>, false>(p, stream);
    }
};

struct dl_select_if_launcher {
    template <typename X> static int run(const dl_compact_params *p, cudaStream_t stream)
    {
        return dl_compact_run<DL_COMPACT_SELECT_IF, X, uint32_t, dl_sum<uint32_t>, false>(p, stream);
    }
};

/* Reduce-by-key over keys moved as bits X and values Y with YOp. */
template <typename X> struct dl_reduce_by_key_launcher {
    template <typename Y, typename YOp>
    static int run(const dl_compact_params *p, int left_fold, cudaStream_t stream)
    {
        constexpr bool fold_matters = dl_key_fold_matters<Y, YOp>;
        return left_fold && fold_matters
                   ? dl_compact_run<DL_COMPACT_REDUCE_BY_KEY, X, Y, YOp, fold_matters>(p, stream)
                   : dl_compact_run<DL_COMPACT_REDUCE_BY_KEY, X, Y, YOp, false>(p, stream);
    }
};

/* Reduce-by-key's keys of type K, then its values. */
struct dl_reduce_by_key_keys {
    template <typename K>
    static int run(const dl_compact_params *p, dlscan_type value_type, dlscan_op op, int left_fold,
                   cudaStream_t stream)
    {
        return dl_dispatch<dl_reduce_by_key_launcher<dl_bits_of<K>>>(value_type, op, p, left_fold, stream);
    }
};

extern "C" int dl_gpu_compact_launch(const dl_compact_params *p, dlscan_type type,
                                     dlscan_type value_type, dlscan_op op, int left_fold,
                                     cudaStream_t stream)
{
    switch (p->kind) {
    case DL_COMPACT_SELECT_FLAGGED:
        return dl_dispatch_item<dl_compact_by_size<DL_COMPACT_SELECT_FLAGGED>>(type, p, stream);
    case DL_COMPACT_UNIQUE: return dl_dispatch_item<dl_compact_by_size<DL_COMPACT_UNIQUE>>(type, p, stream);
    case DL_COMPACT_RUN_LENGTH: return dl_dispatch_item<dl_compact_by_size<DL_COMPACT_RUN_LENGTH>>(type, p, stream);
    case DL_COMPACT_SELECT_IF: return dl_dispatch_item<dl_select_if_launcher>(type, p, stream);
    case DL_COMPACT_REDUCE_BY_KEY:
        return dl_dispatch_item<dl_reduce_by_key_keys>(type, p, value_type, op, left_fold, stream);
    default: return (int)cudaErrorInvalidValue;
    }
}
