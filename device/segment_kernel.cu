/*
 * segment_kernel.cu: segmented scans, by key or over segment offsets, and scans along rows (an
 * axis of stride 1: a segment every row_length items, its heads computed from the index,
 * rows.cuh; long rows the plain scan's kernel takes, scan_kernel.cu), in one kernel launch, on
 * the scan's tile, look-back and ring, with protocol.h's rule for segments ("Segments"). Along
 * rows, the thread holding a row's last item stores the row's total.
 *
 * A tile works as a plain scan's (scan_kernel.cu) with the segmented operator (ops.cuh,
 * dl_segmented) inside the block: each thread marks which of its items start a segment (its
 * heads: an item whose key differs from the one before, one an offset points at, or a row's
 * first), folds the init into each head, and reduces each row to (heads, value since the last
 * head); the transposed warp scan and the block's scan run on those pairs (dl_segment_rows),
 * and each row is scanned from its prefix (dl_segment_finish). Between tiles the descriptors
 * carry values of T alone: a tile holding a head publishes P at once, one without publishes A,
 * and only a tile whose first item continues a segment needs the look-back's prefix. The tiles
 * are DL_SEGMENT_ROWS rows (policy.h).
 *
 * dl_segment_persistent_kernel (sm_90; 32- and 64-bit items scanned into their own type; keys of
 *   4 or 8 bytes, offsets, or rows; 16-byte aligned pointers): the persistent scan's roles and one
 *   more. The producer's bulk copies bring a tile's items and keys, with the 16 bytes of keys
 *   before them, into a stage; by offsets its warp searches the tile's first offset
 *   (dl_warp_lower_bound) and stages the offsets from there. The reducer finds the tile's last
 *   head (keys: backwards from the tile's end; offsets: it marks the tile's heads in a bitmap
 *   in the stage) and publishes the value from there on. A look-back warp gets each tile's
 *   prefix and publishes the P of tiles without a head. The compute warps scan the tile, with
 *   one barrier per tile.
 * dl_segment_kernel (any GPU, any pair of types, any keys, any alignment): one block per tile,
 *   loading from global memory; warp 0 looks back (tile.cuh, dl_tile_segment_prefix).
 * dl_short_rows_kernel (any GPU; 32- and 64-bit items scanned into their own type; rows of a
 *   power-of-two length of at most a tile; 16-byte aligned pointers): one block per tile, each
 *   tile on its own: no row crosses one, and no item needs a segmented pair.
 * dl_whole_rows_kernel (the same, for rows of other lengths from a vector's items to nearly a
 *   tile's): one block per tile of whole rows, each tile on its own.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "launch.h"
#include "ops.cuh"
#include "ring.cuh"
#include "offsets.cuh"
#include "rows.cuh"
#include "tile.cuh"

template <typename T> using dl_segment_shape = dl_scan_shape<T, DL_SEGMENT_ROWS>;
template <typename T> using dl_tile_segment = dl_segment<uint32_t, T>;
template <typename T, typename Op> using dl_tile_segmented = dl_segmented<uint32_t, T, Op>;

/* The transposed warp scan's passes over the pairs: its scratch near 1 KB per warp. */
template <typename T> __host__ __device__ constexpr int dl_segment_passes()
{
    return sizeof(dl_tile_segment<T>) > 8 ? 2 : 1;
}

static_assert(dl_segment_shape<uint32_t>::tile_items == DL_SEGMENT_TILE_ITEMS_4B &&
                  dl_segment_shape<uint64_t>::tile_items == DL_SEGMENT_TILE_ITEMS_8B,
              "the tiles are the ones the host layer reserves descriptors for (policy.h)");

/* The segments of a persistent kernel: keys of KEY (uint32_t or uint64_t), offsets, or rows. */
struct dl_by_offsets;
struct dl_by_rows;
template <typename KEY> struct dl_segments_by {
    static constexpr bool offsets = false;
    static constexpr bool rows = false;
    static constexpr int key_size = sizeof(KEY);
};
template <> struct dl_segments_by<dl_by_offsets> {
    static constexpr bool offsets = true;
    static constexpr bool rows = false;
    static constexpr int key_size = 0;
};
template <> struct dl_segments_by<dl_by_rows> {
    static constexpr bool offsets = false;
    static constexpr bool rows = true;
    static constexpr int key_size = 0;
};

/* A key as the registers hold it: 1- and 2-byte keys widened to 32 bits (for the shuffles). */
template <typename KEY> struct dl_key_reg {
    using type = unsigned int;
};
template <> struct dl_key_reg<uint64_t> {
    using type = unsigned long long;
};

/* ---------------------------------------------------------------- heads */

/* Keys of this thread's rows from global memory (one access per row where `vector`: the keys
 * 16-byte aligned; keys past n read as 0), and their heads. warp_base: the warp's first item. */
template <typename KEY, int ROWS, int VEC>
__device__ __forceinline__ uint32_t dl_global_key_heads(const KEY *keys, uint64_t warp_base, uint64_t n,
                                                        bool vector)
{
    using K = typename dl_key_reg<KEY>::type;
    using U = dl_row_items<KEY, VEC>;
    const int lane = threadIdx.x % 32;
    const bool whole = warp_base + (uint64_t)ROWS * 32 * VEC <= n;
    K key[ROWS][VEC];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const uint64_t idx = warp_base + (uint64_t)(r * 32 + lane) * VEC;
        if (vector && whole) {
            U u;
            u.raw = dl_load_raw<typename U::raw_type>(keys + idx);
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                key[r][e] = (K)u.item[e];
        } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                key[r][e] = idx + e < n ? (K)keys[idx + e] : K(0);
        }
    }
    const K before = warp_base > 0 && warp_base - 1 < n ? (K)keys[warp_base - 1] : K(0);
    const uint32_t heads = dl_key_heads(key, before, warp_base == 0);
    return whole ? heads : dl_heads_before<ROWS, VEC>(heads, warp_base, n);
}

/* ---------------------------------------------------------------- one tile */

/* The warps' scratch for the transposed warp scan over a segmented tile's pairs. */
template <typename T>
using dl_segment_scratch = dl_tile_segment<T>[dl_segment_shape<T>::warps]
    [dl_warp_scratch<dl_tile_segment<T>, DL_SEGMENT_ROWS, dl_segment_passes<T>()>::items];

/*
 * A tile's first part, in each thread: the init folded into every head of its rows v (items as
 * T; heads: bit r * VEC + e), then each row's pair (heads, value since the last head) and the
 * transposed warp scan over them: row_prefix[r] is the pair of the warp's items before row r of
 * this lane; returns the warp's pair. `scratch`: this warp's.
 */
template <typename T, typename Op>
__device__ __forceinline__ dl_tile_segment<T>
dl_segment_rows(T (&v)[DL_SEGMENT_ROWS][dl_segment_shape<T>::vec], uint32_t heads, T init,
                dl_tile_segment<T> (&row_prefix)[DL_SEGMENT_ROWS], dl_tile_segment<T> *scratch)
{
    using S = dl_segment_shape<T>;
    using V = dl_tile_segment<T>;
    V lane_segment[S::rows];
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        T value = Op::identity();
#pragma unroll
        for (int e = 0; e < S::vec; ++e) {
            const bool head = heads >> (r * S::vec + e) & 1;
            if (head)
                v[r][e] = Op()(init, v[r][e]);
            value = head ? v[r][e] : Op()(value, v[r][e]);
        }
        lane_segment[r] = V{(uint32_t)__popc(heads >> (r * S::vec) & ((1u << S::vec) - 1)), value};
    }
    return dl_warp_prefixes_transposed<V, dl_tile_segmented<T, Op>, S::rows, dl_segment_passes<T>()>(
        lane_segment, row_prefix, scratch);
}

/*
 * A tile's last part: each row's items scanned from the value before the row (the warp's,
 * warp_prefix, then row_prefix) or from a head, and stored as OUT: the items in [lo, hi)
 * (offsets: those in segments; keys: all), with whole-tile vector stores where the whole tile
 * is in (WHOLE_STORES: without per-row checks; else `vector` says whether rows are aligned).
 */
template <typename T, typename OUT, typename Op, bool WHOLE_STORES>
__device__ __forceinline__ void dl_segment_finish(const dl_segment_params &p, uint32_t tile,
                                                  T (&v)[DL_SEGMENT_ROWS][dl_segment_shape<T>::vec],
                                                  uint32_t heads, uint32_t ends, T init,
                                                  const dl_tile_segment<T> (&row_prefix)[DL_SEGMENT_ROWS],
                                                  T warp_prefix, bool vector, uint64_t lo, uint64_t hi)
{
    using S = dl_segment_shape<T>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint64_t n = p.scan.n, base = (uint64_t)tile * S::tile_items;
    const uint64_t warp_base = base + (uint64_t)warp * S::items_per_warp;
    OUT *totals = static_cast<OUT *>(p.totals);
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        T running = row_prefix[r].heads ? row_prefix[r].value : Op()(warp_prefix, row_prefix[r].value);
#pragma unroll
        for (int e = 0; e < S::vec; ++e) {
            const bool head = heads >> (r * S::vec + e) & 1;
            const T item = v[r][e];
            if (p.scan.exclusive) {
                v[r][e] = head ? init : running;
                running = head ? item : Op()(running, item);
            } else {
                running = head ? item : Op()(running, item);
                v[r][e] = running;
            }
            if (ends >> (r * S::vec + e) & 1) /* a row's last item: its total (rows only) */
                totals[dl_row_of(warp_base + (uint64_t)(r * 32 + lane) * S::vec + e, p.row_length, p.row_inverse)] =
                    dl_narrow<OUT>(running);
        }
    }

    OUT *out = static_cast<OUT *>(p.scan.out);
    if (base + S::tile_items <= n && lo <= base && base + S::tile_items <= hi) {
        if (WHOLE_STORES)
            dl_store_tile<T, true>(out, base, n, v);
        else if (vector)
            dl_store_tile_rows<T, true>(out, base, n, v);
        else
            dl_store_tile_rows<T, false>(out, base, n, v);
        return;
    }
    const uint64_t end = n < hi ? n : hi;
#pragma unroll
    for (int r = 0; r < S::rows; ++r)
#pragma unroll
        for (int e = 0; e < S::vec; ++e) {
            const uint64_t i = warp_base + (uint64_t)(r * 32 + lane) * S::vec + e;
            if (i >= lo && i < end)
                out[i] = dl_narrow<OUT>(v[r][e]);
        }
}

/* The items in segments: [offsets[0], offsets[num_segments]) by offsets, all by key. */
__device__ __forceinline__ void dl_segment_bounds(const dl_segment_params &p, uint64_t *lo, uint64_t *hi)
{
    *lo = p.offsets ? p.offsets[0] : 0;
    *hi = p.offsets ? p.offsets[p.num_segments] : p.scan.n;
}

/* ---------------------------------------------------------------- one block per tile */

template <typename T, bool LEFT_FOLD>
struct dl_segment_block_shared : dl_tile_shared<T, dl_segment_shape<T>::warps, LEFT_FOLD> {
    dl_tile_segment<T> warp_segment[dl_segment_shape<T>::warps];
    dl_segment_scratch<T> scratch;
    uint32_t bitmap[dl_segment_shape<T>::tile_items / 32]; /* offsets: the tile's heads */
    uint64_t first_offset;                                  /* offsets: the tile's first */
};

/* One block per tile, from global memory: any GPU, pair of types, keys and alignment. */
template <typename IN, typename T, typename OUT, typename Op, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SCAN_THREADS) dl_segment_kernel(const dl_segment_params p)
{
    using S = dl_segment_shape<T>;
    __shared__ dl_segment_block_shared<T, LEFT_FOLD> sh;
    const dl_probe probe(p.scan.control);
    const int t = (int)threadIdx.x, warp = t / 32;
    dl_grid_dependency();
    uint32_t tile, epoch;
    dl_tile_take(p.scan.control, probe, sh, &tile, &epoch);
    const uint64_t n = p.scan.n, base = (uint64_t)tile * S::tile_items;
    const bool vector = ((uintptr_t)p.scan.in | (uintptr_t)p.scan.out | (uintptr_t)p.keys) % 16 == 0;
    const IN *in = static_cast<const IN *>(p.scan.in);

    T v[S::rows][S::vec];
    if (vector)
        dl_load_tile<T, Op, true>(in, base, n, v);
    else
        dl_load_tile<T, Op, false>(in, base, n, v);

    uint32_t heads = 0, ends = 0;
    const uint64_t warp_base = base + (uint64_t)warp * S::items_per_warp;
    if (p.row_length) {
        heads = dl_row_heads<S::rows, S::vec>(warp_base, n, p.row_length, p.row_inverse, &ends);
        if (!p.totals)
            ends = 0;
    } else if (p.offsets) {
        /* Warp 0 finds the tile's first offset while the others clear the bitmap. */
        const int count = n - base < (uint64_t)S::tile_items ? (int)(n - base) : S::tile_items;
        if (warp == 0) {
            const uint64_t first = dl_warp_lower_bound(p.offsets, 0, p.num_segments + 1, base, 0, 0);
            if (t == 0)
                sh.first_offset = first;
        } else {
            for (int i = t - 32; i < S::tile_items / 32; i += S::threads - 32)
                sh.bitmap[i] = 0;
        }
        __syncthreads();
        if (warp == 0)
            dl_mark_offsets(p.offsets, p.num_segments, dl_staged_offsets{nullptr, 0, 0}, sh.first_offset,
                            base, count, sh.bitmap);
        __syncthreads();
        heads = dl_bitmap_heads<S::rows, S::vec>(sh.bitmap, warp * S::items_per_warp);
    } else {
#define DL_KEY_HEADS(KEY)                                                                          \
    dl_global_key_heads<KEY, S::rows, S::vec>(static_cast<const KEY *>(p.keys), warp_base, n, vector)
        switch (p.key_size) {
        case 1: heads = DL_KEY_HEADS(uint8_t); break;
        case 2: heads = DL_KEY_HEADS(uint16_t); break;
        case 4: heads = DL_KEY_HEADS(uint32_t); break;
        default: heads = DL_KEY_HEADS(uint64_t); break;
        }
#undef DL_KEY_HEADS
    }
    const T init = dl_value_from_bits<T>(p.scan.seed_bits);
    dl_tile_segment<T> row_prefix[S::rows];
    const dl_tile_segment<T> warp_total =
        dl_segment_rows<T, Op>(v, heads, init, row_prefix, sh.scratch[warp]);
    const T warp_prefix = dl_tile_segment_prefix<T, Op, LEFT_FOLD, S::warps, false, DL_SLOTS_PER_LANE>(
        sh.warp_segment, &sh.tile_prefix, sh.fold_buffer, warp_total, heads & 1, tile, epoch,
        p.scan.descriptors, probe, false, Op::identity());
    uint64_t lo, hi;
    dl_segment_bounds(p, &lo, &hi);
    dl_segment_finish<T, OUT, Op, false>(p, tile, v, heads, ends, init, row_prefix, warp_prefix, vector, lo,
                                         hi);
    dl_epoch_finish(p.scan.control, epoch, sh.ticket_base, p.scan.descriptors, p.scan.descriptor_words);
}

/* ---------------------------------------------------------------- persistent */

/* The persistent kernel's warps: the compute warps, then a producer, a reducer and a look-back
 * warp. */
#define DL_SEGMENT_PERSISTENT_THREADS (DL_SCAN_THREADS + 96)

/* A stage: the tile's items, then by key 16 bytes of the keys before the tile and the tile's
 * keys, by offsets the bitmap of the tile's heads (the reducer's) and the tile's first offsets
 * (DL_SEGMENT_STAGED_OFFSETS); rows, the items alone. */
template <typename T, typename BY> struct dl_segment_stage {
    using S = dl_segment_shape<T>;
    static constexpr bool offsets = dl_segments_by<BY>::offsets;
    static constexpr bool rows = dl_segments_by<BY>::rows;
    static constexpr int keys_at = S::tile_bytes + 16; /* the tile's first key */
    static constexpr int key_bytes = S::tile_items * dl_segments_by<BY>::key_size;
    static constexpr int bitmap_at = S::tile_bytes;
    static constexpr int offsets_at = S::tile_bytes + S::tile_items / 8;
    static constexpr int bytes = offsets ? offsets_at + DL_SEGMENT_STAGED_OFFSETS * 8
                                 : rows  ? S::tile_bytes
                                         : keys_at + key_bytes;
    static constexpr int stages = dl_ring_stages(bytes);
    /* Lanes of a warp that arrive on `reduced` and `empty`. By offsets the reducer zeroes the
     * bitmap (and may mark it) that the compute warps mark and read, so every lane that touches it
     * arrives after its own accesses, and the barriers alone order them against the next tile's
     * (compute-sanitizer's racecheck does not follow a warp's __syncwarp into one lane's arrival:
     * ring.cuh, dl_stage_header). By key no role writes the stage, and lane 0 arrives for its warp. */
    static constexpr int arriving_lanes = offsets ? 32 : 1;
    static_assert(bytes % 16 == 0 && offsets_at % 16 == 0, "16-byte aligned bulk copies");
    static_assert(DL_SEGMENT_STAGED_OFFSETS % 2 == 0, "whole 16-byte pieces of offsets");
};

/* The ring and the roles' headers. The stages' barriers are the scan's; `empty` waits for the
 * reducer too. By offsets, the producer leaves the tile's first offset in stage_segment, and
 * which offsets it staged (stage_staged_count from stage_staged_from on), and the reducer the end
 * of the tile's offsets in stage_segment_end. Beside the stages, two rings twice as deep carry
 * each tile's values between the roles that do not hold its stage:
 * `valued` completes when the reducer has put the tile, whether it holds a head and its value
 * in the slot_ fields; `prefixed`, when the look-back warp has put its exclusive prefix. A role
 * reaches slot q again only two rounds of stages later, after every compute warp has finished
 * the tile that used it: so the stages are freed as soon as they are read. The compute warps'
 * pairs are kept for two tiles (by the parity of the block's tile count), so that one barrier
 * per tile suffices. */
template <typename T, bool LEFT_FOLD, int STAGES>
struct dl_segment_persistent_shared
    : dl_persistent_shared<T, dl_segment_shape<T>::warps, LEFT_FOLD, STAGES> {
    static constexpr int slots = 2 * STAGES;
    uint64_t stage_segment[STAGES];
    uint64_t stage_segment_end[STAGES];
    uint64_t stage_staged_from[STAGES];
    uint32_t stage_staged_count[STAGES];
    uint64_t valued[slots];
    uint64_t prefixed[slots];
    uint32_t slot_tile[slots];
    uint32_t slot_head[slots];
    T slot_value[slots];
    T slot_prefix[slots];
    dl_tile_segment<T> warp_segment[2][dl_segment_shape<T>::warps];
    dl_segment_scratch<T> scratch;
};

template <typename T, typename BY, bool LEFT_FOLD>
using dl_segment_shared_for = dl_segment_persistent_shared<T, LEFT_FOLD, dl_segment_stage<T, BY>::stages>;

/* The producer's fill. By key: one bulk copy of the items, one of the keys with the 16 bytes
 * before them (tile 0 has none). By offsets (the whole warp, ring.cuh's
 * dl_persistent_produce_offsets): find, the search for the tile's first offset, from the block's
 * last tile's on (its tiles only rise), guessed from the segments' density between there and the
 * end; then the items' copy and a copy of the offsets from there (from the even index at or
 * before it: 16-byte pieces), and lane 0's arrival after the stage's header. The partial last
 * tile's items are left to global loads. */
template <typename T, typename BY, typename SHARED> struct dl_segment_fill {
    using S = dl_segment_shape<T>;
    using G = dl_segment_stage<T, BY>;
    static constexpr bool offsets = dl_segments_by<BY>::offsets;
    const dl_segment_params &p;
    unsigned char *stages;
    SHARED &sh;
    __device__ bool operator()(int s, uint32_t tile, uint64_t *full) const
    {
        const uint64_t base = (uint64_t)tile * S::tile_items;
        if (base + S::tile_items > p.scan.n)
            return false;
        unsigned char *stage = stages + s * G::bytes;
        const T *items = static_cast<const T *>(p.scan.in) + base;
        if constexpr (G::rows) {
            dl_bulk_expect(full, S::tile_bytes);
            dl_bulk_copy<true>(stage, items, S::tile_bytes, full);
        } else {
            const uint32_t before = tile ? 16 : 0;
            const unsigned char *keys =
                static_cast<const unsigned char *>(p.keys) + base * dl_segments_by<BY>::key_size;
            dl_bulk_expect(full, S::tile_bytes + G::key_bytes + before);
            dl_bulk_copy<true>(stage, items, S::tile_bytes, full);
            dl_bulk_copy<true>(stage + G::keys_at - before, keys - before, G::key_bytes + before, full);
        }
        return true;
    }
    __device__ uint64_t find(uint32_t tile, uint64_t after, uint32_t after_tile) const
    {
        return dl_warp_next_offset(p.offsets, p.num_segments + 1, p.scan.n, (uint64_t)tile * S::tile_items, after,
                                   (uint64_t)after_tile * S::tile_items);
    }
    __device__ void operator()(int s, uint32_t tile, uint64_t first, uint64_t *full) const
    {
        if (threadIdx.x % 32 != 0)
            return;
        const uint64_t base = (uint64_t)tile * S::tile_items;
        const bool whole = base + S::tile_items <= p.scan.n;
        const uint64_t from = first & ~1ull, left = p.num_segments + 1 - from, most = DL_SEGMENT_STAGED_OFFSETS;
        const uint32_t count = (uint32_t)((left < most ? left : most) & ~1ull);
        sh.stage_segment[s] = first;
        sh.stage_staged_from[s] = from;
        sh.stage_staged_count[s] = count;
        const uint32_t bytes = (whole ? S::tile_bytes : 0) + count * 8;
        if (bytes)
            dl_bulk_expect_only(full, bytes);
        if (whole)
            dl_bulk_copy<true>(stages + s * G::bytes, static_cast<const T *>(p.scan.in) + base, S::tile_bytes, full);
        if (count)
            dl_bulk_copy<true>(stages + s * G::bytes + G::offsets_at, p.offsets + from, count * 8, full);
        dl_mbar_arrive(full);
    }
};

/* The offsets that stage s holds (by offsets; the producer's header). */
template <typename T, typename SHARED>
__device__ __forceinline__ dl_staged_offsets dl_stage_offsets(SHARED &sh, int s, const unsigned char *stage)
{
    using G = dl_segment_stage<T, dl_by_offsets>;
    return {reinterpret_cast<const size_t *>(stage + G::offsets_at), dl_stage_header(sh.stage_staged_from[s]),
            dl_stage_header(sh.stage_staged_count[s])};
}

/* The tile index of the last head among a whole tile's keys in its stage (keys[-1]: the key
 * before the tile; `first_tile`: item 0 is the input's first), or -1: one warp reads backwards
 * from the tile's end, 4 x 16 bytes of keys a lane at a time, until it meets a head. */
template <typename KEY, int ITEMS>
__device__ __forceinline__ int dl_stage_last_head(const KEY *keys, bool first_tile)
{
    constexpr int PER = 16 / (int)sizeof(KEY), VECTORS = ITEMS / PER, ROUND = 4;
    static_assert(VECTORS % (32 * ROUND) == 0, "whole rounds");
    const int lane = threadIdx.x % 32;
    for (int end = VECTORS; end > 0; end -= 32 * ROUND) {
        dl_row_items<KEY, PER> u[ROUND];
        KEY previous[ROUND];
#pragma unroll
        for (int q = 0; q < ROUND; ++q) {
            const int j = end - 32 * ROUND + q * 32 + lane;
            u[q].raw = reinterpret_cast<const uint4 *>(keys)[j];
            previous[q] = keys[j * PER - 1];
        }
        int found = -1;
#pragma unroll
        for (int q = 0; q < ROUND; ++q) {
            const int j = end - 32 * ROUND + q * 32 + lane;
            if (j == 0 && first_tile)
                found = 0;
#pragma unroll
            for (int e = 0; e < PER; ++e) {
                if (previous[q] != u[q].item[e])
                    found = j * PER + e;
                previous[q] = u[q].item[e];
            }
        }
        const int last = __reduce_max_sync(0xffffffffu, found);
        if (last >= 0)
            return last;
    }
    return -1;
}

/* Reducer (one warp): each tile's last head (or none), then the reduction of its items from there
 * on, the init first where there is a head: the tile's value, published at once (P with a head,
 * else A) and handed to the look-back warp. By offsets it zeroes the stage's bitmap and finds
 * where the tile's offsets end (the last one is its last head), marks up to
 * DL_SEGMENT_REDUCER_MARKS heads itself and lets the compute warps mark more; also for the partial
 * last tile, whose items and keys it reads from global memory. */
template <typename T, typename BY, typename Op, typename SHARED>
__device__ __forceinline__ void dl_segment_reduce(const dl_segment_params &p, const dl_probe &probe,
                                                  SHARED &sh, unsigned char *stages, uint32_t tiles)
{
    using S = dl_segment_shape<T>;
    using G = dl_segment_stage<T, BY>;
    const int lane = threadIdx.x % 32;
    const T *in = static_cast<const T *>(p.scan.in);
    const T init = dl_value_from_bits<T>(p.scan.seed_bits);
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        dl_mbar_wait(&sh.full[s], (k / SHARED::stages) & 1);
        const int q = (int)(k % SHARED::slots);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles) {
            if (lane == 0) {
                sh.slot_tile[q] = tile;
                dl_mbar_arrive(&sh.valued[q]);
            }
            if (lane < G::arriving_lanes)
                dl_mbar_arrive(&sh.reduced[s]);
            return;
        }
        const uint64_t base = (uint64_t)tile * S::tile_items;
        const int count = p.scan.n - base < (uint64_t)S::tile_items ? (int)(p.scan.n - base) : S::tile_items;
        const bool whole = count == S::tile_items;
        unsigned char *stage = stages + s * G::bytes;

        /* The last head. */
        int last;
        if constexpr (G::offsets) {
            /* The bitmap zeroed and the end of the tile's offsets found, the reducer marks a few
             * heads itself and lets the compute warps mark more, a share each; the last head is the
             * last of those offsets. */
            uint32_t *bitmap = reinterpret_cast<uint32_t *>(stage + G::bitmap_at);
            for (int i = lane; i < S::tile_items / 32; i += 32)
                bitmap[i] = 0;
            const dl_staged_offsets staged = dl_stage_offsets<T>(sh, s, stage);
            const uint64_t first = dl_stage_header(sh.stage_segment[s]);
            const uint64_t end =
                dl_tile_offsets_end(p.offsets, p.num_segments + 1, p.scan.n, staged, first, base, base + count);
            if (lane == 0)
                sh.stage_segment_end[s] = end;
            if (end - first <= DL_SEGMENT_REDUCER_MARKS)
                dl_mark_offsets_share(p.offsets, staged, first, end, base, bitmap, 0, 1);
            __syncwarp();
            dl_mbar_arrive(&sh.reduced[s]);
            last = end > first ? (int)(dl_offset_at(p.offsets, staged, end - 1) - base) : -1;
            if (base == 0 && last < 0)
                last = 0;
        } else if constexpr (G::rows) {
            last = dl_rows_last_head(base, count, p.row_length, p.row_inverse);
        } else if (whole) {
            last = dl_stage_last_head<BY, S::tile_items>(reinterpret_cast<const BY *>(stage + G::keys_at),
                                                          tile == 0);
        } else {
            const BY *keys = static_cast<const BY *>(p.keys) + base;
            int found = -1;
            for (int i = lane; i < count; i += 32)
                if (base + i == 0 || keys[i] != keys[i - 1])
                    found = i;
            last = __reduce_max_sync(0xffffffffu, found);
        }

        /* The items from there on: VEC chains a lane, in a fixed order. */
        const int from = last < 0 ? 0 : last;
        T chain[S::vec];
#pragma unroll
        for (int e = 0; e < S::vec; ++e)
            chain[e] = Op::identity();
        if (whole) {
            const uint4 *staged = reinterpret_cast<const uint4 *>(stage);
#pragma unroll 4
            for (int j = from / S::vec + lane; j < S::tile_items / S::vec; j += 32) {
                dl_vector<T, S::vec> u;
                u.raw = staged[j];
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    if (j * S::vec + e >= from)
                        chain[e] = Op()(chain[e], u.item[e]);
            }
        } else {
            for (int i = from + lane; i < count; i += 32)
                chain[0] = Op()(chain[0], in[base + i]);
        }
        T acc = chain[0];
#pragma unroll
        for (int e = 1; e < S::vec; ++e)
            acc = Op()(acc, chain[e]);
        T value = dl_warp_reduce<T, Op>(acc);
        if (last >= 0)
            value = Op()(init, value);
        __syncwarp(); /* the stage read before the arrivals */
        if (lane == 0) {
            dl_publish_segment_value<T>(p.scan.descriptors, tile, sh.epoch, last >= 0, value, probe);
            sh.slot_tile[q] = tile;
            sh.slot_head[q] = last >= 0;
            sh.slot_value[q] = value;
            dl_mbar_arrive(&sh.valued[q]);
        }
        if (lane < G::arriving_lanes) {
            if constexpr (!G::offsets)
                dl_mbar_arrive(&sh.reduced[s]);
            dl_mbar_arrive(&sh.empty[s]);
        }
    }
}

/* Compute warps: each stage's items and heads into registers (by key as soon as the stage is
 * full; by offsets once the reducer has found where the tile's offsets end and, where it left
 * them more than DL_SEGMENT_REDUCER_MARKS heads, the warps have marked them, a share each, and
 * met at a barrier), the stage freed, the rows and the warp's pair, one barrier for the warps'
 * pairs, then the look-back warp's prefix, and the tile scanned and stored. */
template <typename T, typename BY, typename Op, typename SHARED>
__device__ __forceinline__ void dl_segment_compute(const dl_segment_params &p, SHARED &sh,
                                                   unsigned char *stages, uint32_t tiles)
{
    using S = dl_segment_shape<T>;
    using G = dl_segment_stage<T, BY>;
    using V = dl_tile_segment<T>;
    using VOp = dl_tile_segmented<T, Op>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warp_first = warp * S::items_per_warp;
    const T init = dl_value_from_bits<T>(p.scan.seed_bits);
    uint64_t lo, hi;
    dl_segment_bounds(p, &lo, &hi);
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        const uint32_t parity = (k / SHARED::stages) & 1;
        dl_mbar_wait(G::offsets ? &sh.reduced[s] : &sh.full[s], parity);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        if (tile >= tiles)
            return;
        const uint64_t base = (uint64_t)tile * S::tile_items;
        const bool whole = base + S::tile_items <= p.scan.n;
        unsigned char *stage = stages + s * G::bytes;
        if constexpr (G::offsets) {
            const uint64_t first = dl_stage_header(sh.stage_segment[s]);
            const uint64_t end = dl_stage_header(sh.stage_segment_end[s]);
            if (end - first > DL_SEGMENT_REDUCER_MARKS) {
                dl_mark_offsets_share(p.offsets, dl_stage_offsets<T>(sh, s, stage), first, end, base,
                                      reinterpret_cast<uint32_t *>(stage + G::bitmap_at), warp, S::warps);
                dl_tile_sync<true, S::warps>();
            }
        }
        T v[S::rows][S::vec];
        if (whole) {
            const uint4 *staged = reinterpret_cast<const uint4 *>(stage);
#pragma unroll
            for (int r = 0; r < S::rows; ++r) {
                dl_vector<T, S::vec> u;
                u.raw = staged[(warp * S::rows + r) * 32 + lane];
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    v[r][e] = u.item[e];
            }
        } else {
            dl_load_tile<T, Op, true>(static_cast<const T *>(p.scan.in), base, p.scan.n, v);
        }
        uint32_t heads, ends = 0;
        if constexpr (G::offsets) {
            const uint32_t *bitmap = reinterpret_cast<const uint32_t *>(stage + G::bitmap_at);
            heads = dl_bitmap_heads<S::rows, S::vec>(bitmap, warp_first);
        } else if constexpr (G::rows) {
            heads = dl_row_heads<S::rows, S::vec>(base + warp_first, p.scan.n, p.row_length, p.row_inverse,
                                                   &ends);
            if (!p.totals)
                ends = 0;
        } else if (whole) {
            using U = dl_row_items<BY, S::vec>;
            const BY *keys = reinterpret_cast<const BY *>(stage + G::keys_at);
            BY key[S::rows][S::vec];
#pragma unroll
            for (int r = 0; r < S::rows; ++r) {
                U u;
                const BY *row = keys + warp_first + (r * 32 + lane) * S::vec;
                u.raw = *reinterpret_cast<const typename U::raw_type *>(row);
#pragma unroll
                for (int e = 0; e < S::vec; ++e)
                    key[r][e] = u.item[e];
            }
            heads = dl_key_heads(key, keys[warp_first - 1], base + warp_first == 0);
        } else {
            heads = dl_global_key_heads<BY, S::rows, S::vec>(static_cast<const BY *>(p.keys),
                                                             base + warp_first, p.scan.n, true);
        }

        __syncwarp();
        if (lane < G::arriving_lanes)
            dl_mbar_arrive(&sh.empty[s]);

        V row_prefix[S::rows];
        const V warp_total = dl_segment_rows<T, Op>(v, heads, init, row_prefix, sh.scratch[warp]);
        if (lane == 0)
            sh.warp_segment[k & 1][warp] = warp_total;
        dl_tile_sync<true, S::warps>();
        const V inclusive = dl_warp_inclusive_scan<V, VOp>(lane < S::warps ? sh.warp_segment[k & 1][lane]
                                                                            : VOp::identity());
        const V before = dl_shfl(inclusive, warp > 0 ? warp - 1 : 0);
        const int q = (int)(k % SHARED::slots);
        dl_mbar_wait(&sh.prefixed[q], (k / SHARED::slots) & 1);
        const T prefix = dl_stage_header(sh.slot_prefix[q]);
        const T warp_prefix = warp == 0 ? prefix : before.heads ? before.value : Op()(prefix, before.value);
        dl_segment_finish<T, T, Op, true>(p, tile, v, heads, ends, init, row_prefix, warp_prefix, true, lo, hi);
    }
}

template <typename T, typename BY, typename Op, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_SEGMENT_PERSISTENT_THREADS, DL_SCAN_BLOCKS_PER_SM)
    dl_segment_persistent_kernel(const dl_segment_params p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using S = dl_segment_shape<T>;
    using G = dl_segment_stage<T, BY>;
    using SHARED = dl_segment_shared_for<T, BY, LEFT_FOLD>;
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ SHARED sh;
    static_assert(dl_ring_fits<SHARED>(G::bytes), "blocks per SM");
    const uint32_t tiles = p.scan.tiles;
    const int warp = threadIdx.x / 32;
    const dl_probe probe(p.scan.control);
    /* `empty`: the compute warps and the reducer; `reduced`: the reducer */
    dl_prefix_rings_init(sh, (S::warps + 1) * G::arriving_lanes, G::arriving_lanes);
    dl_grid_dependency();
    if (warp == S::warps)
        dl_persistent_produce(p.scan.control, probe, sh, tiles,
                              dl_segment_fill<T, BY, SHARED>{p, stages, sh});
    else if (warp == S::warps + 1)
        dl_segment_reduce<T, BY, Op>(p, probe, sh, stages, tiles);
    else if (warp == S::warps + 2)
        /* The look-back warp (ring.cuh): a tile with a head published its P itself. */
        dl_ring_look_back<T, Op, LEFT_FOLD>(
            p.scan.descriptors, probe, sh, tiles, [&](int q) { return dl_stage_header(sh.slot_value[q]); },
            [&](int q) { return dl_stage_header(sh.slot_head[q]) == 0; },
            [&](int q, T prefix) { sh.slot_prefix[q] = prefix; });
    else
        dl_segment_compute<T, BY, Op>(p, sh, stages, tiles);
    __syncthreads();
    dl_epoch_finish(p.scan.control, sh.epoch, sh.ticket_base, p.scan.descriptors, p.scan.descriptor_words);
#endif
}

/* ---------------------------------------------------------------- short rows */

/*
 * Rows of a power-of-two length of at most a tile (dl_short_rows): no row crosses a tile, so the
 * tiles are independent, with no descriptors and no look-back, and the heads are known from the
 * items' places, so no item needs a segmented pair. Each level of the tile scans only within a
 * row: a thread's vectors (restarting where a row shorter than a vector starts), the lanes of a
 * warp's row of vectors (Kogge-Stone, each lane taking only from the lanes of its own row), a
 * warp's rows of vectors, and the warps (bench/NOTES.md, "Short rows of a power of two").
 */
template <typename T, typename Op>
__global__ void __launch_bounds__(DL_SCAN_THREADS) dl_short_rows_kernel(const dl_segment_params p)
{
    using S = dl_segment_shape<T>;
    __shared__ T warp_totals[S::warps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t length = (uint32_t)p.row_length, last = length - 1; /* a power of two */
    const uint64_t n = p.scan.n, base = (uint64_t)blockIdx.x * S::tile_items;
    dl_grid_dependency();
    T v[S::rows][S::vec];
    dl_load_tile<T, Op, true>(static_cast<const T *>(p.scan.in), base, n, v);

    /* Each vector's inclusive scan, restarting at a row's first item (rows shorter than a vector:
     * the vectors start at multiples of the length); then the lanes' inclusive scans of the
     * vectors' totals along rows of `width` lanes, and their exclusive values (`before`). */
    const uint32_t width = length / S::vec < 2 ? 1 : length / S::vec > 32 ? 32 : length / S::vec;
    const int place = lane & (int)(width - 1); /* the lane's place in its row of lanes */
    T before[S::rows], total[S::rows];
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
#pragma unroll
        for (int e = 1; e < S::vec; ++e)
            if ((e & last) != 0)
                v[r][e] = Op()(v[r][e - 1], v[r][e]);
        T x = v[r][S::vec - 1];
#pragma unroll
        for (int d = 1; d < 32; d *= 2)
            if ((uint32_t)d < width) {
                const T earlier = dl_shfl_up(x, d);
                if (place >= d)
                    x = Op()(earlier, x);
            }
        const T earlier = dl_shfl_up(x, 1);
        before[r] = place ? earlier : Op::identity();
        total[r] = x;
    }

    /* Rows longer than a warp's row of vectors: each row of vectors' prefix within its row of
     * items, from the rows of vectors before it in the warp. */
    constexpr uint32_t chunk = 32 * S::vec;
    T running = Op::identity();
    if (length > chunk) {
        const uint32_t chunks = length / chunk; /* rows of vectors a row spans */
#pragma unroll
        for (int r = 0; r < S::rows; ++r) {
            if (((uint32_t)(warp * S::rows + r) & (chunks - 1)) == 0)
                running = Op::identity();
            const T row_total = dl_shfl(total[r], 31);
            before[r] = Op()(running, before[r]);
            running = Op()(running, row_total);
        }
    }
    /* Rows longer than a warp's items (no head inside a warp): each warp's prefix, from the
     * warps before it in its row. */
    T warp_prefix = Op::identity();
    if (length > (uint32_t)S::items_per_warp) {
        if (lane == 0)
            warp_totals[warp] = running;
        __syncthreads();
        for (int w = warp & ~(int)(length / S::items_per_warp - 1); w < warp; ++w)
            warp_prefix = Op()(warp_prefix, warp_totals[w]);
    }

    /* Each item from its vector's prefix (the init, then the row's items before the vector),
     * last item first, while v[r][e - 1] still holds the vector's inclusive value. */
    const T init = dl_value_from_bits<T>(p.scan.seed_bits);
    T *totals = static_cast<T *>(p.totals);
    const int shift = __ffs((int)length) - 1;
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        const T prefix = Op()(init, Op()(warp_prefix, before[r]));
        const uint32_t first = (uint32_t)(warp * S::items_per_warp + (r * 32 + lane) * S::vec);
#pragma unroll
        for (int e = S::vec - 1; e >= 0; --e) {
            const T inclusive = Op()(prefix, v[r][e]);
            if (totals && ((first + e) & last) == last && base + first + e < n)
                totals[(base + first + e) >> shift] = inclusive;
            if (p.scan.exclusive)
                v[r][e] = e == 0 || (e & last) == 0 ? prefix : Op()(prefix, v[r][e - 1]);
            else
                v[r][e] = inclusive;
        }
    }
    dl_store_tile<T, true>(static_cast<T *>(p.scan.out), base, n, v);
}

/* Whether rows of `length` are short rows of the tile of `tile_items`: a power of two, no longer. */
__host__ __device__ constexpr bool dl_short_rows(uint64_t length, uint64_t tile_items)
{
    return length && (length & (length - 1)) == 0 && length <= tile_items;
}

/* The slots of a tile of T that whole rows fill: all but the vec - 1 that may precede its first
 * item (the first item may be the aligned vector's last). */
template <typename T> __host__ __device__ constexpr int dl_whole_rows_slots()
{
    return dl_segment_shape<T>::tile_items - dl_segment_shape<T>::vec + 1;
}

/* Whether rows of `length` items are whole rows of T's tiles: from a vector's items to the
 * slots. */
template <typename T> __host__ __device__ constexpr bool dl_whole_rows(uint64_t length)
{
    return length >= (uint64_t)dl_segment_shape<T>::vec && length <= (uint64_t)dl_whole_rows_slots<T>();
}

/* The whole rows of `length` items a tile of T holds. */
template <typename T> __host__ __device__ constexpr int dl_whole_rows_per_tile(int length)
{
    return dl_whole_rows_slots<T>() / length;
}

/* The whole rows' registers, capped (policy.h) through __maxnreg__, which came with CUDA 12.4:
 * older toolkits build the kernel uncapped. */
#if __CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4)
#define DL_WHOLE_ROWS_REGISTERS(T)                                                                   \
    __maxnreg__(sizeof(T) == 4 ? DL_WHOLE_ROWS_REGISTERS_4B : DL_WHOLE_ROWS_REGISTERS_8B)
#else
#define DL_WHOLE_ROWS_REGISTERS(T)
#endif

/*
 * Short rows of any other length from a vector's items to a tile's less vec - 1 (dl_whole_rows):
 * each tile holds whole rows, as many as fit in its slots from the aligned
 * vector at or before its first item, so the tiles are again independent. A vector holds at
 * most one row's first item; each vector finds its place in its row from a reciprocal. The
 * levels scan as dl_short_rows_kernel's, but a lane takes only from the lanes at or after the
 * one that holds its last item's row start, and a warp's row of vectors and a warp carry the
 * value since their last head. The slots before the tile's first item and after its last read
 * as the identity and are not stored (in place, a neighbour may have written them: their values
 * are not used).
 */
template <typename T, typename Op>
__global__ void __launch_bounds__(DL_SCAN_THREADS) DL_WHOLE_ROWS_REGISTERS(T)
    dl_whole_rows_kernel(const dl_segment_params p)
{
    using S = dl_segment_shape<T>;
    __shared__ T warp_totals[S::warps];
    __shared__ int warp_heads[S::warps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int length = (int)p.row_length;
    const int rows = dl_whole_rows_per_tile<T>(length);
    const uint64_t first_row = (uint64_t)blockIdx.x * (uint64_t)rows, n = p.scan.n;
    const uint64_t begin = first_row * (uint64_t)length;
    const uint64_t end = begin + (uint64_t)rows * length < n ? begin + (uint64_t)rows * length : n;
    const uint64_t base = begin & ~(uint64_t)(S::vec - 1); /* the tile's first slot */
    const int skip = (int)(begin - base), stop = skip + (int)(end - begin); /* its items' slots */
    dl_grid_dependency();
    T v[S::rows][S::vec];
    dl_load_tile<T, Op, true>(static_cast<const T *>(p.scan.in), base, n, v);

    /* Each vector: its first item's place in its row (place; row: that row within the tile),
     * the offset of the next row's first item (next_head; none in the vector where it is vec or
     * more), the vector's inclusive scan restarting there, and the lanes' scan of the vectors'
     * values since their last head. */
    const float inverse = (float)p.row_inverse;
    int place[S::rows], row[S::rows], next_head[S::rows];
    T before[S::rows], since_head[S::rows];
    int chunk_start[S::rows]; /* the lane of the chunk that holds the last item's row start, or < 0 */
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        const int slot = warp * S::items_per_warp + (r * 32 + lane) * S::vec;
        const int j = slot - skip; /* > -vec */
        int q = (int)((float)j * inverse), at = j - q * length;
        if (at < 0) {
            q -= 1;
            at += length;
        } else if (at >= length) {
            q += 1;
            at -= length;
        }
        place[r] = at;
        row[r] = q;
        const int h = at == 0 ? 0 : length - at;
        next_head[r] = h;
#pragma unroll
        for (int e = 0; e < S::vec; ++e) {
            const bool in = slot + e >= skip && slot + e < stop;
            const T x = in ? v[r][e] : Op::identity();
            v[r][e] = e == 0 || e == h ? x : Op()(v[r][e > 0 ? e - 1 : 0], x);
        }
        const int last_place = at + S::vec - 1 < length ? at + S::vec - 1 : at + S::vec - 1 - length;
        const int start = (slot + S::vec - 1 - last_place) / S::vec - (warp * S::rows + r) * 32;
        chunk_start[r] = start;
        const int from = start > 0 ? start : 0;
        T x = v[r][S::vec - 1];
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            const T earlier = dl_shfl_up(x, d);
            if (lane - d >= from)
                x = Op()(earlier, x);
        }
        const T earlier = dl_shfl_up(x, 1);
        before[r] = h != 0 && lane > 0 ? earlier : Op::identity();
        since_head[r] = x;
    }

    /* The warp's rows of vectors in order: the value carried into each from the ones before
     * it in the warp (since the last head), and the warp's. */
    T carried[S::rows];
    T running = Op::identity();
    bool warp_head = false;
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        carried[r] = running;
        const T chunk_total = dl_shfl(since_head[r], 31);
        const bool chunk_head = dl_shfl(chunk_start[r], 31) >= 0;
        running = chunk_head ? chunk_total : Op()(running, chunk_total);
        warp_head |= chunk_head;
    }
    if (lane == 0) {
        warp_totals[warp] = running;
        warp_heads[warp] = warp_head;
    }
    __syncthreads();
    T warp_prefix = Op::identity();
    for (int w = 0; w < warp; ++w)
        warp_prefix = warp_heads[w] ? warp_totals[w] : Op()(warp_prefix, warp_totals[w]);

    /* Each item from its vector's prefix (the init, then its row's items before the vector) or,
     * from the next row's first item on, from the init; stored where it is the tile's. */
    const T init = dl_value_from_bits<T>(p.scan.seed_bits);
    T *totals = static_cast<T *>(p.totals), *out = static_cast<T *>(p.scan.out);
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        const int chunk = (warp * S::rows + r) * 32 * S::vec;
        const int slot = chunk + lane * S::vec, row_start = slot - place[r], h = next_head[r];
        T prefix = before[r];
        if (row_start < chunk)
            prefix = Op()(carried[r], prefix);
        if (row_start < warp * S::items_per_warp)
            prefix = Op()(warp_prefix, prefix);
        prefix = Op()(init, prefix);
#pragma unroll
        for (int e = S::vec - 1; e >= 0; --e) {
            const T inclusive = Op()(e >= h ? init : prefix, v[r][e]);
            if (totals && place[r] + e == length - 1 && slot + e >= skip && slot + e < stop)
                totals[first_row + (uint64_t)row[r]] = inclusive;
            if (p.scan.exclusive)
                v[r][e] = e == h ? init : e == 0 ? prefix : Op()(e > h ? init : prefix, v[r][e > 0 ? e - 1 : 0]);
            else
                v[r][e] = inclusive;
        }
        if (slot >= skip && slot + S::vec <= stop) {
            dl_store_row<T, S::vec, true>(out, base + (uint64_t)slot, n, true, v[r]);
        } else {
#pragma unroll
            for (int e = 0; e < S::vec; ++e)
                if (slot + e >= skip && slot + e < stop)
                    out[base + (uint64_t)slot + e] = v[r][e];
        }
    }
}

/* ---------------------------------------------------------------- launcher */

/* The persistent kernel for segments BY, tree or left fold. */
template <typename T, typename BY, typename Op>
static int dl_segment_launch_persistent(const dl_segment_params *p, bool fold, uint64_t tiles,
                                        cudaStream_t stream)
{
    constexpr bool fold_matters = dl_fold_order_matters<T, Op>::value;
    const uint64_t blocks = tiles < p->scan.persistent_blocks ? tiles : p->scan.persistent_blocks;
    const size_t stage_bytes = (size_t)dl_segment_stage<T, BY>::stages * dl_segment_stage<T, BY>::bytes;
    return dl_launch(fold ? dl_segment_persistent_kernel<T, BY, Op, fold_matters>
                          : dl_segment_persistent_kernel<T, BY, Op, false>,
                     *p, dim3((unsigned)blocks), dim3(DL_SEGMENT_PERSISTENT_THREADS), stage_bytes,
                     p->scan.dependent_launch, stream);
}

/* Short rows (a power of two, at most a tile: dl_short_rows; other lengths, whole rows a tile:
 * dl_whole_rows) of 32- and 64-bit items into their own type at aligned pointers on their
 * kernels, one block per tile; else persistent where the
 * GPU, the types, the segments (keys of 4 or 8 bytes, offsets, or rows), the alignment and the
 * size allow (as for scans: more tiles than the policy row's count); else one block per tile. */
struct dl_segment_launcher {
    template <typename IN, typename T, typename OUT, typename Op>
    static int run(const dl_segment_params *p, int left_fold, cudaStream_t stream)
    {
        using S = dl_segment_shape<T>;
        constexpr bool fold_matters = dl_fold_order_matters<T, Op>::value;
        const bool fold = left_fold && fold_matters;
        const uint32_t tiles = p->scan.tiles;
        if constexpr (dl_same<IN, T>::value && dl_same<OUT, T>::value) {
            const bool aligned = ((uintptr_t)p->scan.in | (uintptr_t)p->scan.out | (uintptr_t)p->keys |
                                  (uintptr_t)p->offsets) % 16 == 0;
            if (aligned && dl_short_rows(p->row_length, S::tile_items))
                return dl_launch(dl_short_rows_kernel<T, Op>, *p, dim3(tiles), dim3(S::threads), 0,
                                 p->scan.dependent_launch, stream);
            if (aligned && dl_whole_rows<T>(p->row_length)) {
                const uint64_t per_tile = (uint64_t)dl_whole_rows_per_tile<T>((int)p->row_length);
                const uint64_t rows = p->scan.n / p->row_length, blocks = (rows + per_tile - 1) / per_tile;
                if (blocks <= 0x7fffffffu)
                    return dl_launch(dl_whole_rows_kernel<T, Op>, *p, dim3((unsigned)blocks), dim3(S::threads), 0,
                                     p->scan.dependent_launch, stream);
            }
            if (aligned && p->scan.persistent_blocks > 0 && tiles > p->scan.persistent_from) {
                if (p->row_length)
                    return dl_segment_launch_persistent<T, dl_by_rows, Op>(p, fold, tiles, stream);
                if (p->offsets)
                    return dl_segment_launch_persistent<T, dl_by_offsets, Op>(p, fold, tiles, stream);
                if (p->key_size == 4)
                    return dl_segment_launch_persistent<T, uint32_t, Op>(p, fold, tiles, stream);
                if (p->key_size == 8)
                    return dl_segment_launch_persistent<T, uint64_t, Op>(p, fold, tiles, stream);
            }
        }
        return dl_launch(fold ? dl_segment_kernel<IN, T, OUT, Op, fold_matters>
                              : dl_segment_kernel<IN, T, OUT, Op, false>,
                         *p, dim3((unsigned)tiles), dim3(S::threads), 0, p->scan.dependent_launch, stream);
    }
};

extern "C" int dl_gpu_segment_launch(const dl_segment_params *params, dlscan_type in_type, dlscan_type type,
                                     dlscan_op op, int left_fold, cudaStream_t stream)
{
    const int error = dl_dispatch_pair<dl_segment_launcher>(in_type, type, op, params, left_fold, stream);
    return error == DL_NO_PAIR ? (int)cudaErrorInvalidValue : error;
}
