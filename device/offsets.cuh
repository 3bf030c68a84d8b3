/*
 * offsets.cuh: segments over offsets (a segment from each offset to the next, the offsets
 * rising): a warp's search for a position among the offsets, the tile's heads marked in a bitmap
 * from there (by one warp, or, once the end of the tile's offsets is found, a share by each of
 * several), and a thread's heads read from that bitmap. The segmented scans by offsets
 * (segment_kernel.cu) and the user operators' program of segments (user_kernel.cuh, which NVRTC
 * compiles at run time) share them.
 */
#ifndef DLSCAN_OFFSETS_CUH
#define DLSCAN_OFFSETS_CUH

#include <stdint.h>

/* Probe i (u * 32 + lane) of a warp's search, in every lane; i is the same in every lane. */
template <int PROBES> __device__ __forceinline__ uint64_t dl_probe_at(const uint64_t (&at)[PROBES], int i)
{
    uint64_t mine = 0;
#pragma unroll
    for (int u = 0; u < PROBES; ++u)
        if (u == i / 32)
            mine = at[u];
    return __shfl_sync(0xffffffffu, mine, i % 32);
}

/*
 * The first k in [low, high) with offsets[k] >= position, or high where there is none (offsets
 * rising). Run by a whole warp, which returns it in every lane. Each round has every lane load 4
 * offsets, independent loads: 128 probes in rising order, which leave the answer between the last
 * probe below `position` and the first one not below. The first round, where `step` is not 0,
 * probes around `guess`: the 64 offsets from guess - 32 on, each, and 32 probes on either side,
 * 2 x step apart (1 where step is 1: a window of 128; probes outside [low, high) are not loaded:
 * before low they are below, from high on not). A guess within 32 of the answer (segments of one
 * length) ends the search there; one within 32 + 64 x step leaves a gap of at most 2 x step. Each
 * later round splits the range into 129 parts, so a round costs one trip to memory and 2^23
 * offsets take four (a good guess: one or two). Reads no offset at or past `high`.
 */
__device__ __forceinline__ uint64_t dl_warp_lower_bound(const size_t *offsets, uint64_t low, uint64_t high,
                                                        uint64_t position, uint64_t guess, uint64_t step)
{
    constexpr int PROBES = 4; /* per lane */
    const int lane = threadIdx.x % 32;
    bool windowed = step != 0;
    while (high > low) {
        const uint64_t range = high - low;
        const bool exact = !windowed && range <= 32 * PROBES; /* every index in range probed */
        uint64_t at[PROBES];
        bool below[PROBES];
#pragma unroll
        for (int u = 0; u < PROBES; ++u) {
            const uint64_t i = (uint64_t)(u * 32 + lane);
            /* the window: i's distance from guess, 1 apart in its middle 64, `gap` beyond */
            const int64_t gap = step > 1 ? 2 * (int64_t)step : 1;
            const int64_t d = u == 0   ? -32 - (int64_t)(32 - lane) * gap
                              : u == 3 ? 31 + (int64_t)(lane + 1) * gap
                                       : (int64_t)i - 64;
            at[u] = windowed ? (d < 0 && guess < (uint64_t)-d ? 0 : guess + (uint64_t)d)
                    : exact  ? low + i
                             : low + range * (i + 1) / (32 * PROBES + 1);
            below[u] = at[u] < low || (at[u] < high && offsets[at[u]] < position);
        }
        uint32_t count = 0;
#pragma unroll
        for (int u = 0; u < PROBES; ++u)
            count += __popc(__ballot_sync(0xffffffffu, below[u]));
        if (exact)
            return low + count;
        const uint64_t new_low = count ? dl_probe_at<PROBES>(at, (int)count - 1) + 1 : low;
        const uint64_t new_high = count < 32 * PROBES ? dl_probe_at<PROBES>(at, (int)count) : high;
        low = new_low > low ? new_low : low;
        high = new_high < high ? new_high : high;
        windowed = false;
    }
    return low;
}

/* The first k with offsets[k] >= base among `count` offsets, for a block whose tiles only rise:
 * from its last tile's first offset `after` (after_base that tile's first item; 0 and 0 before
 * its first tile) on, guessed from the segments' density between there and the input's end (n
 * items). Run by a whole warp (dl_warp_lower_bound), in every lane. */
__device__ __forceinline__ uint64_t dl_warp_next_offset(const size_t *offsets, uint64_t count, uint64_t n,
                                                        uint64_t base, uint64_t after, uint64_t after_base)
{
    const double between = (double)(base - after_base) * (double)(count - after) / (double)(n - after_base + 1);
    const uint64_t step = between > 4096.0 ? (uint64_t)(sqrt(between) / 16.0) : 1;
    return dl_warp_lower_bound(offsets, after, count, base, after + (uint64_t)between, step);
}

/* Offsets a stage holds: `count` of them from offsets[from] on, at `at`. */
typedef struct dl_staged_offsets {
    const size_t *at;
    uint64_t from;
    uint32_t count;
} dl_staged_offsets;

/* The offset at index k, from the stage where it holds it. */
__device__ __forceinline__ uint64_t dl_offset_at(const size_t *offsets, const dl_staged_offsets &staged,
                                                 uint64_t k)
{
    return k - staged.from < staged.count ? staged.at[k - staged.from] : offsets[k];
}

/* One round of dl_mark_offsets: offsets[k0] on, PER_LANE a lane, marked in `bitmap` where they
 * fall in the tile; `last` keeps the highest marked item. Returns whether every one of them fell
 * in the tile (the next round may find more). */
template <int PER_LANE>
__device__ __forceinline__ bool dl_mark_round(const size_t *offsets, uint64_t last_offset,
                                              const dl_staged_offsets &staged, uint64_t k0, uint64_t base,
                                              int count, uint32_t *bitmap, int &last)
{
    const int lane = threadIdx.x % 32;
    uint64_t at[PER_LANE];
#pragma unroll
    for (int u = 0; u < PER_LANE; ++u) {
        const uint64_t k = k0 + (uint64_t)(u * 32 + lane);
        at[u] = k > last_offset ? ~0ull : dl_offset_at(offsets, staged, k);
    }
    bool all_in = true;
#pragma unroll
    for (int u = 0; u < PER_LANE; ++u) {
        const bool in = at[u] >= base && at[u] < base + (uint64_t)count;
        if (in) {
            const int i = (int)(at[u] - base);
            atomicOr(&bitmap[i / 32], 1u << (i % 32));
            last = i > last ? i : last;
        }
        all_in &= in;
    }
    return __all_sync(0xffffffffu, all_in);
}

/* Marks in `bitmap` (a tile's bits, zeroed) the items that offsets[first], offsets[first + 1],
 * ... point at while they fall in the tile's count items from `base` (and the input's first item,
 * a head), and returns the highest marked item, or -1. One warp. Rounds of 128 offsets while the
 * stage holds them; past it each round is a trip to global memory, so they grow, 128, 256, then
 * 512 offsets: a tile of segments of one item takes 9 trips, not 28 (bench/NOTES.md, "Segmented
 * scans"). */
__device__ __forceinline__ int dl_mark_offsets(const size_t *offsets, uint64_t last_offset,
                                               const dl_staged_offsets &staged, uint64_t first,
                                               uint64_t base, int count, uint32_t *bitmap)
{
    const int lane = threadIdx.x % 32;
    int last = -1;
    if (base == 0 && lane == 0) {
        atomicOr(&bitmap[0], 1u);
        last = 0;
    }
    int global_rounds = 0;
    for (uint64_t k0 = first;;) {
        bool more;
        if (k0 + 128 - staged.from <= staged.count || global_rounds == 0) {
            more = dl_mark_round<4>(offsets, last_offset, staged, k0, base, count, bitmap, last);
            global_rounds += k0 + 128 - staged.from > staged.count;
            k0 += 128;
        } else if (global_rounds == 1) {
            more = dl_mark_round<8>(offsets, last_offset, staged, k0, base, count, bitmap, last);
            global_rounds = 2;
            k0 += 256;
        } else {
            more = dl_mark_round<16>(offsets, last_offset, staged, k0, base, count, bitmap, last);
            k0 += 512;
        }
        if (!more)
            break;
    }
    return __reduce_max_sync(0xffffffffu, last);
}

/* The end of a tile's offsets: the first k with offsets[k] >= end (end: the tile's end), from the
 * tile's first offset `first` on (offsets[first - 1] < base, the tile's first item). From the stage
 * where its last offset reaches `end` (a count in shared memory); otherwise one warp's search from
 * the first offset past the stage, guessed from the density between there and the input's end
 * (n items; `count` offsets in all): one trip to memory where the segments are of one length.
 * Run by a whole warp, which returns it in every lane. */
__device__ __forceinline__ uint64_t dl_tile_offsets_end(const size_t *offsets, uint64_t count, uint64_t n,
                                                        const dl_staged_offsets &staged, uint64_t first,
                                                        uint64_t base, uint64_t end)
{
    const int lane = threadIdx.x % 32;
    const uint64_t staged_end = staged.from + staged.count;
    if (staged.count && staged_end > first && staged.at[staged.count - 1] >= end) {
        uint32_t below = 0; /* staged offsets below `end`: from staged.from on, they rise */
        for (uint32_t i = (uint32_t)lane; i < staged.count; i += 32)
            below += staged.at[i] < end;
        return staged.from + __reduce_add_sync(0xffffffffu, below);
    }
    const uint64_t after = staged_end > first ? staged_end : first;
    if (after >= count)
        return count;
    const uint64_t after_base = after > first ? staged.at[staged.count - 1] : base;
    return dl_warp_next_offset(offsets, count, n, end, after, after_base);
}

/* A share of the marking of a tile's heads: warp `warp` of `warps` marks in `bitmap` (the tile's,
 * zeroed) the items that offsets[first] to offsets[end - 1] point at (all in the tile, from its
 * first item `base`), a slice of as many of them as every warp's; warp 0 also the input's first
 * item. Independent loads, 4 or 16 a lane a round: a tile of segments of one item is one trip to
 * memory a warp. */
__device__ __forceinline__ void dl_mark_offsets_share(const size_t *offsets, const dl_staged_offsets &staged,
                                                      uint64_t first, uint64_t end, uint64_t base,
                                                      uint32_t *bitmap, int warp, int warps)
{
    const int lane = threadIdx.x % 32;
    if (base == 0 && warp == 0 && lane == 0)
        atomicOr(&bitmap[0], 1u);
    const uint64_t share = (end - first + (uint64_t)warps - 1) / (uint64_t)warps;
    const uint64_t from = first + share * (uint64_t)warp;
    const uint64_t to = from + share < end ? from + share : end;
    const int per_lane = share > 128 ? 16 : 4;
    for (uint64_t k0 = from; k0 < to; k0 += (uint64_t)(32 * per_lane)) {
        uint64_t at[16];
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            const uint64_t k = k0 + (uint64_t)(u * 32 + lane);
            at[u] = u < per_lane && k < to ? dl_offset_at(offsets, staged, k) : ~0ull;
        }
#pragma unroll
        for (int u = 0; u < 16; ++u)
            if (at[u] != ~0ull) {
                const uint32_t i = (uint32_t)(at[u] - base);
                atomicOr(&bitmap[i / 32], 1u << (i % 32));
            }
    }
}

/* The heads of this thread's items from a tile's bitmap (bit i: tile item i starts a segment);
 * warp_first: the warp's first item in the tile. */
template <int ROWS, int VEC>
__device__ __forceinline__ uint32_t dl_bitmap_heads(const uint32_t *bitmap, int warp_first)
{
    const int lane = threadIdx.x % 32;
    uint32_t heads = 0;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const int i = warp_first + (r * 32 + lane) * VEC; /* VEC items within one word */
        heads |= (bitmap[i / 32] >> (i % 32) & ((1u << VEC) - 1)) << (r * VEC);
    }
    return heads;
}

#endif /* DLSCAN_OFFSETS_CUH */
