/*
 * user_kernel.cuh: the scan kernel of a user operator (dlscan.h, "Your own operator"), which
 * NVRTC compiles at run time for the handle's GPU (src/jit.c). It is never compiled into the
 * library: jit.c puts the operator's source first, with the DL_USER_* macros below, then
 * includes this file.
 *
 * What the operator's source defines (dlscan.h says it to users):
 *   dlscan_state                        the state, DL_USER_STATE_BYTES bytes (4 .. 32);
 *   dlscan_state dlscan_combine(dlscan_state earlier, dlscan_state later)   associative;
 *   with DL_USER_LOAD: dlscan_in (and dlscan_in2 where the scan has a second input) and
 *     dlscan_state dlscan_load(dlscan_in x) or dlscan_load(dlscan_in x, dlscan_in2 y);
 *     without it an item is a state;
 *   with DL_USER_STORE: dlscan_out and dlscan_out dlscan_store(dlscan_state s); without it an
 *     output is a state.
 * jit.c defines DL_USER_STATE_BYTES, DL_USER_IN_BYTES, DL_USER_IN2_BYTES (0: one input),
 * DL_USER_OUT_BYTES, DL_USER_LOAD, DL_USER_STORE, DL_USER_IDENTITY_WORDS (the identity state
 * as 32-bit words, so that it is a constant of the code, as the built-in operators' are) and
 * DL_USER_THIS_PROGRAM, the program (launch.h, DL_USER_PROGRAM_*: one scan, rows, offsets, keys,
 * columns); DL_USER_SEGMENTED below says whether it scans the operator lifted to segments.
 *
 * Rows (DL_USER_PROGRAM_ROWS; a scan along an axis of stride 1, p.scan.row_length items a row): the
 * kernels scan the operator lifted to segments, a value being the state and a flag that a row
 * starts in its items, combined as (s1, f1) then (s2, f2) -> (f2 ? s2 : s1 s2, f1 | f2). An item
 * is a row's first where its index is a multiple of the row length, and there its state starts
 * from the seed (the host's init); so every row is scanned on its own, across tiles and through
 * the look-back, with the tiles of one scan. The value is one 32-bit word wider than the state
 * (DL_USER_VALUE_BYTES), which sets the tile and the descriptors' words. Each thread's heads
 * (and the items that end a row, for d_totals) come from the index (rows.cuh); a tile's
 * aggregate needs only the items from its last row start on, and a tile where a row starts
 * publishes it as its P at once (protocol.h, "Segments").
 *
 * Rows whose length is a multiple of the one scan's tile, or divides it and is a multiple of a
 * warp's run of it (launch.h, DL_USER_ROW_CHAINS), take the one scan's program instead
 * (p.scan.row_tiles set), the state alone, no flag. Long rows are chains of their own tiles, as
 * the built-in long rows (scan_kernel.cu): tile t is link t % row_tiles of its row's chain, whose
 * descriptors begin at the row's first tile's (dl_user_link), and a row's first tile starts from
 * the seed and publishes its P at once. Short rows (p.row_warps: a row is that many warps' runs,
 * row_tiles 1) start with every tile, which so needs no look-back: each warp's prefix is the
 * seed and the totals of its row's warps before it (dl_user_row_warps_prefix). The last item of a
 * row leaves the row's total.
 *
 * Offsets (DL_USER_PROGRAM_OFFSETS; segment k the items p.offsets[k] .. p.offsets[k + 1] - 1): the
 * same, with a tile's heads marked in a bitmap by one warp (offsets.cuh: a search for the tile's
 * first offset, then the offsets from there), the reducer's in the persistent kernel (which the
 * compute warps then wait for), warp 0's in the other; the items outside [offsets[0],
 * offsets[num_segments]) are not stored.
 *
 * Keys (DL_USER_PROGRAM_KEYS; a segment each run of keys of the same bits, p.key_size bytes
 * each): the same bitmap, marked where a key differs from the one before; the persistent kernel's
 * producer brings the tile's keys into its stage with its items.
 *
 * Runs (DL_USER_PROGRAM_RUNS; reduce-by-key, dlscan_reduce_by_key_custom): the keys' marking, the
 * value's last word a count of heads (the operator lifted as (c2 ? s2 : s1 s2, c1 + c2)), so that
 * an item's inclusive count is its run's number + 1; no tile publishes early, every tile looks
 * back. An item ends a run where the next item is a head (the bitmap's word past the tile,
 * dl_user_mark_end), and there the run's output goes to out[count - 1] and its key to
 * keys_out[count - 1]; the item n - 1 leaves the count. In the persistent kernel the reducer
 * counts the tile's heads for its A, and the look-back warp publishes every tile's P.
 *
 * Columns (DL_USER_PROGRAM_COLUMNS; an axis of stride > 1): columns.cuh's tile, the built-in
 * column kernel's, with the operator's states (dl_user_column_items), wide and narrow; every column
 * starts from the seed. The states are not lifted: each (tile, column) has a descriptor of its own.
 *
 * The tile: 256 threads of DL_USER_ITEMS items each (policy.h), in rows: each warp owns a run of
 * the tile, row after row, and a row is its 32 lanes' 4 consecutive items each, one run of
 * memory. Each thread turns its items into states and scans each row's, the transposed warp scan
 * (warp.cuh) joins the rows across the lanes (dl_user_local), the block's warps are scanned and
 * the look-back (lookback.cuh: the X/A/P protocol with a state of any width, protocol.h,
 * "descriptor word") gives the tile's prefix; each thread then scans its items from its prefix
 * and stores them (dl_user_finish). Two kernels work such tiles, each with a tree and a left fold
 * (DLSCAN_OPTION_DETERMINISTIC) of the look-back's windows:
 *   dl_user_scan_persistent (sm_90, 16-byte aligned inputs): a few blocks an SM, each with a
 *     producer warp that draws tickets and has the bulk-copy engine prefetch each tile, both
 *     inputs, into a ring of stages (ring.cuh), a reducer warp that publishes each tile's
 *     aggregate as it lands, along rows a look-back warp ahead of the compute warps (policy.h,
 *     DL_USER_LOOK_BACK_WARP; else compute warp 0 looks back in each tile, block.cuh's
 *     dl_tile_warp_prefix), and the compute warps, which take the stages in ring order;
 *   dl_user_scan (any GPU, any alignment): one block per tile, loading from global memory; warp
 *     0 looks back (dl_tile_warp_prefix).
 * src/jit.c launches them as the built-in scan's launcher does (the policy row's grid and
 * threshold).
 */
#ifndef DLSCAN_USER_KERNEL_CUH
#define DLSCAN_USER_KERNEL_CUH

#include <stdint.h>
#include <string.h>

#include "block.cuh"
#include "columns.cuh"
#include "launch.h"
#include "offsets.cuh"
#include "ring.cuh"
#include "rows.cuh"

static_assert(sizeof(dlscan_state) == DL_USER_STATE_BYTES,
              "sizeof(dlscan_state) differs from the operator's state_bytes");
#if DL_USER_LOAD
static_assert(sizeof(dlscan_in) == DL_USER_IN_BYTES, "sizeof(dlscan_in) differs from the operator's in_bytes");
#if DL_USER_IN2_BYTES
static_assert(sizeof(dlscan_in2) == DL_USER_IN2_BYTES, "sizeof(dlscan_in2) differs from the operator's in2_bytes");
#endif
#else
typedef dlscan_state dlscan_in;
#endif
#if DL_USER_STORE
static_assert(sizeof(dlscan_out) == DL_USER_OUT_BYTES, "sizeof(dlscan_out) differs from the operator's out_bytes");
#else
typedef dlscan_state dlscan_out;
#endif

#define DL_USER_WARPS (DL_USER_THREADS / 32)
/* Whether this program scans the operator lifted to segments (rows, offsets, keys, runs), and which
 * it is (each macro is tested by an #if below, so they come first). */
#define DL_USER_SEGMENTED DL_USER_LIFTED(DL_USER_THIS_PROGRAM)
#define DL_USER_COLUMNS (DL_USER_THIS_PROGRAM == DL_USER_PROGRAM_COLUMNS)
#define DL_USER_OFFSETS (DL_USER_THIS_PROGRAM == DL_USER_PROGRAM_OFFSETS)
#define DL_USER_RUNS (DL_USER_THIS_PROGRAM == DL_USER_PROGRAM_RUNS) /* reduce-by-key: the keys' heads */
#define DL_USER_KEYS (DL_USER_THIS_PROGRAM == DL_USER_PROGRAM_KEYS || DL_USER_RUNS)
#define DL_USER_MARKED (DL_USER_OFFSETS || DL_USER_KEYS) /* a tile's heads from a bitmap */

/* What the kernels scan: the state, or in segments the state and a flag that a segment starts (for
 * the runs, a count of heads: above). */
#define DL_USER_VALUE_BYTES DL_USER_VALUE(DL_USER_STATE_BYTES, DL_USER_SEGMENTED)
#if DL_USER_SEGMENTED
struct dl_user_value {
    uint32_t word[DL_USER_VALUE_BYTES / 4]; /* the state's words, then the flag */
};
#else
typedef dlscan_state dl_user_value;
#endif

__device__ __forceinline__ dlscan_state dl_user_state_of(const dl_user_value &v)
{
#if DL_USER_SEGMENTED
    dlscan_state s;
    memcpy(&s, v.word, sizeof s);
    return s;
#else
    return v;
#endif
}

__device__ __forceinline__ dl_user_value dl_user_value_of(const dlscan_state &s, uint32_t starts)
{
#if DL_USER_SEGMENTED
    dl_user_value v;
    memcpy(v.word, &s, sizeof s);
    v.word[DL_USER_VALUE_BYTES / 4 - 1] = starts;
    return v;
#else
    (void)starts;
    return s;
#endif
}

/* The operator on states, and on values (along rows, lifted to segments as above). */
struct dl_user_state_op {
    __device__ static dlscan_state identity()
    {
        const uint32_t words[DL_USER_STATE_BYTES / 4] = {DL_USER_IDENTITY_WORDS};
        dlscan_state s;
        memcpy(&s, words, sizeof s);
        return s;
    }
    __device__ dlscan_state operator()(dlscan_state earlier, dlscan_state later) const
    {
        return dlscan_combine(earlier, later);
    }
};

struct dl_user_op {
    __device__ static dl_user_value identity() { return dl_user_value_of(dl_user_state_op::identity(), 0); }
    __device__ dl_user_value operator()(dl_user_value earlier, dl_user_value later) const
    {
#if DL_USER_RUNS /* (s1, c1) then (s2, c2): (c2 ? s2 : s1 s2, c1 + c2), c counting heads */
        const uint32_t starts = later.word[DL_USER_VALUE_BYTES / 4 - 1];
        const uint32_t count = earlier.word[DL_USER_VALUE_BYTES / 4 - 1] + starts;
        return dl_user_value_of(starts ? dl_user_state_of(later)
                                       : dlscan_combine(dl_user_state_of(earlier), dl_user_state_of(later)),
                                count);
#elif DL_USER_SEGMENTED
        const uint32_t starts = later.word[DL_USER_VALUE_BYTES / 4 - 1];
        const dl_user_value joined =
            dl_user_value_of(dlscan_combine(dl_user_state_of(earlier), dl_user_state_of(later)),
                             earlier.word[DL_USER_VALUE_BYTES / 4 - 1]);
        return starts ? later : joined;
#else
        return dlscan_combine(earlier, later);
#endif
    }
};

/* The host's init (or the identity) as a state: where every row starts. */
__device__ __forceinline__ dlscan_state dl_user_init(const dl_user_params &p)
{
    dlscan_state s;
    memcpy(&s, p.seed, sizeof s);
    return s;
}

/* A state into or out of the call's d_init, d_total or d_totals, 32 bits at a time: the checks ask
 * 4-byte alignment of them, and a state's own type may want more (two doubles want 8). */
__device__ __forceinline__ void dl_user_put(void *to, const dlscan_state &s)
{
    uint32_t w[DL_USER_STATE_BYTES / 4];
    memcpy(w, &s, sizeof s);
#pragma unroll
    for (int k = 0; k < DL_USER_STATE_BYTES / 4; ++k)
        static_cast<uint32_t *>(to)[k] = w[k];
}

__device__ __forceinline__ dlscan_state dl_user_get(const void *from)
{
    uint32_t w[DL_USER_STATE_BYTES / 4];
#pragma unroll
    for (int k = 0; k < DL_USER_STATE_BYTES / 4; ++k)
        w[k] = static_cast<const uint32_t *>(from)[k];
    dlscan_state s;
    memcpy(&s, w, sizeof s);
    return s;
}

/* A thread's K items of X from `p`, the first at `first`: as 16-byte vectors where all K lie
 * below n, their bytes are whole vectors and the run is aligned; else one by one, below n. */
template <typename X, int K>
__device__ __forceinline__ void dl_user_load_run(const X *p, uint64_t first, uint64_t n, X (&x)[K])
{
    constexpr int bytes = K * (int)sizeof(X);
    if (bytes % 16 == 0 && first + K <= n && (uintptr_t)(p + first) % 16 == 0) {
        uint4 v[bytes / 16 > 0 ? bytes / 16 : 1];
#pragma unroll
        for (int j = 0; j < bytes / 16; ++j)
            v[j] = __ldg(reinterpret_cast<const uint4 *>(p + first) + j);
        memcpy(x, v, bytes);
        return;
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (first + k < n)
            x[k] = p[first + k];
}

/* The same for stores, of the items in [lo, hi). */
template <typename X, int K>
__device__ __forceinline__ void dl_user_store_run(X *p, uint64_t first, uint64_t lo, uint64_t hi, const X (&x)[K])
{
    constexpr int bytes = K * (int)sizeof(X);
    if (bytes % 16 == 0 && first >= lo && first + K <= hi && (uintptr_t)(p + first) % 16 == 0) {
        uint4 v[bytes / 16 > 0 ? bytes / 16 : 1];
        memcpy(v, x, bytes);
#pragma unroll
        for (int j = 0; j < bytes / 16; ++j)
            reinterpret_cast<uint4 *>(p + first)[j] = v[j];
        return;
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (first + k >= lo && first + k < hi)
            p[first + k] = x[k];
}

/* A state as the output item it stores (the operator's store, or the state itself). */
__device__ __forceinline__ dlscan_out dl_user_stored(const dlscan_state &s)
{
#if DL_USER_STORE
    return dlscan_store(s);
#else
    return s;
#endif
}

__device__ __forceinline__ dlscan_out dl_user_output(const dl_user_value &v) { return dl_user_stored(dl_user_state_of(v)); }

/* BYTES from shared memory at `from` (aligned to the largest power of two, up to 16, that
 * divides BYTES) into registers: the widest loads that alignment allows. */
template <int BYTES> __device__ __forceinline__ void dl_user_shared_copy(void *to, const unsigned char *from)
{
    if constexpr (BYTES % 16 == 0) {
        uint4 w[BYTES / 16];
#pragma unroll
        for (int j = 0; j < BYTES / 16; ++j)
            w[j] = reinterpret_cast<const uint4 *>(from)[j];
        memcpy(to, w, BYTES);
    } else if constexpr (BYTES % 8 == 0) {
        uint2 w[BYTES / 8];
#pragma unroll
        for (int j = 0; j < BYTES / 8; ++j)
            w[j] = reinterpret_cast<const uint2 *>(from)[j];
        memcpy(to, w, BYTES);
    } else if constexpr (BYTES % 4 == 0) {
        uint32_t w[BYTES / 4];
#pragma unroll
        for (int j = 0; j < BYTES / 4; ++j)
            w[j] = reinterpret_cast<const uint32_t *>(from)[j];
        memcpy(to, w, BYTES);
    } else {
        memcpy(to, from, BYTES);
    }
}

/* An item (and its second input's) as a state. */
__device__ __forceinline__ dlscan_state dl_user_state(const dlscan_in &x, const void *y)
{
#if DL_USER_LOAD && DL_USER_IN2_BYTES
    return dlscan_load(x, *static_cast<const dlscan_in2 *>(y));
#elif DL_USER_LOAD
    (void)y;
    return dlscan_load(x);
#else
    (void)y;
    return x;
#endif
}

#if DL_USER_COLUMNS
/* ---------------------------------------------------------------- columns */

/* What a column tile reads and writes (columns.cuh, ITEMS): the operator's items as states, its
 * outputs, the columns' totals as states, every column from the seed. */
struct dl_user_column_items {
    typedef dlscan_state value;
    typedef dl_user_state_op op;
    const dlscan_in *in;
    const unsigned char *in2;
    dlscan_out *out;
    unsigned char *totals_out;
    bool totals;
    dlscan_state start;
    __device__ dlscan_state load(uint64_t i) const
    {
        return dl_user_state(in[i], in2 ? in2 + i * DL_USER_IN2_BYTES : nullptr);
    }
    __device__ void store(uint64_t i, dlscan_state s) const { out[i] = dl_user_stored(s); }
    __device__ void total(uint64_t k, dlscan_state s) const { dl_user_put(totals_out + k * DL_USER_STATE_BYTES, s); }
    __device__ dlscan_state seed() const { return start; }
};

template <bool NARROW> __device__ __forceinline__ void dl_user_column_tile(const dl_user_column_params &p)
{
    dl_user_column_items items;
    items.in = static_cast<const dlscan_in *>(p.axis.scan.in);
    items.in2 = static_cast<const unsigned char *>(p.in2);
    items.out = static_cast<dlscan_out *>(p.axis.scan.out);
    items.totals_out = static_cast<unsigned char *>(p.axis.totals);
    items.totals = p.axis.totals != nullptr;
    memcpy(&items.start, p.seed, sizeof items.start);
    dl_axis_tile<dl_user_column_items, NARROW>(p.axis, items);
}

extern "C" __global__ void __launch_bounds__(DL_AXIS_THREADS) dl_user_columns(const dl_user_column_params p)
{
    dl_user_column_tile<false>(p);
}

extern "C" __global__ void __launch_bounds__(DL_AXIS_THREADS) dl_user_columns_narrow(const dl_user_column_params p)
{
    dl_user_column_tile<true>(p);
}

#else /* the programs of one scan and of segments */

/* An item as a value: its state, or along rows, where it starts a row, the init's state combined
 * with it, flagged. */
__device__ __forceinline__ dl_user_value dl_user_item(const dl_user_params &p, const dlscan_in &x, const void *y,
                                                      bool starts)
{
#if DL_USER_SEGMENTED
    const dlscan_state s = dl_user_state(x, y);
    return starts ? dl_user_value_of(dlscan_combine(dl_user_init(p), s), 1) : dl_user_value_of(s, 0);
#else
    (void)p, (void)starts;
    return dl_user_state(x, y);
#endif
}

/* The tile in rows: each warp owns DL_USER_ROWS rows of 32 lanes x DL_USER_VEC consecutive
 * items, one after the other (lane l's items of row r: the warp's first + r x 32 VEC + l VEC ..
 * + VEC - 1), so that a warp reads and writes each row as one run of memory, and the stage's
 * rows with no bank met twice. */
#define DL_USER_VEC 4
#define DL_USER_ROWS (DL_USER_ITEMS(DL_USER_VALUE_BYTES) / DL_USER_VEC)
#define DL_USER_TILE (DL_USER_THREADS * DL_USER_ITEMS(DL_USER_VALUE_BYTES))

/* The transposed warp scan's passes: its scratch near 1 KB a warp. */
#define DL_USER_PASSES (DL_USER_ROWS * DL_USER_VALUE_BYTES > 32 ? DL_USER_ROWS * DL_USER_VALUE_BYTES / 32 : 1)

/* What a block of either kernel keeps in shared memory besides the look-back's: the warps'
 * scratch for the transposed warp scan; over offsets and by key, the one-block kernel's bitmap of
 * its tile's heads. */
template <typename BASE> struct dl_user_block_shared : BASE {
    dl_user_value scratch[DL_USER_WARPS][dl_warp_scratch<dl_user_value, DL_USER_ROWS, DL_USER_PASSES>::items];
#if DL_USER_MARKED
    uint32_t bitmap[DL_USER_TILE / 32 + DL_USER_RUNS]; /* (the runs': a word more, dl_user_mark_end) */
#endif
};

/* The tile's index of lane `lane`'s first item of row r, in warp `warp`. */
__device__ __forceinline__ uint32_t dl_user_row_item(int warp, int r, int lane)
{
    return (uint32_t)(warp * DL_USER_ROWS + r) * (32 * DL_USER_VEC) + (uint32_t)lane * DL_USER_VEC;
}

/* Along rows, which of this thread's items in the tile from `base` start a row (its heads) and,
 * where the scan writes each row's total, which end one (*ends), bit r DL_USER_VEC + e for its
 * row r's item e (rows.cuh); over offsets and by key, its heads from the tile's `bitmap`
 * (dl_user_mark); else none. */
__device__ __forceinline__ uint32_t dl_user_heads(const dl_user_params &p, uint64_t base, const uint32_t *bitmap,
                                                  uint32_t *ends)
{
    const int warp = threadIdx.x / 32 % DL_USER_WARPS;
    (void)bitmap;
#if DL_USER_MARKED
    (void)p, (void)base;
    *ends = 0;
#if DL_USER_RUNS /* an item ends a run where the next is a head (the bitmap's word past the tile) */
#pragma unroll
    for (int r = 0; r < DL_USER_ROWS; ++r) {
        const int i = (int)dl_user_row_item(warp, r, threadIdx.x % 32);
        const uint64_t words = (uint64_t)bitmap[i / 32 + 1] << 32 | bitmap[i / 32];
        *ends |= (uint32_t)(words >> (i % 32 + 1) & ((1u << DL_USER_VEC) - 1)) << (r * DL_USER_VEC);
    }
#endif
    return dl_bitmap_heads<DL_USER_ROWS, DL_USER_VEC>(bitmap, (int)dl_user_row_item(warp, 0, 0));
#elif DL_USER_SEGMENTED
    const uint32_t heads = dl_row_heads<DL_USER_ROWS, DL_USER_VEC>(base + dl_user_row_item(warp, 0, 0), p.scan.n,
                                                                   p.scan.row_length, p.row_inverse, ends);
    if (!p.scan.totals)
        *ends = 0;
    return heads;
#else
    (void)p, (void)base, (void)warp;
    *ends = 0;
    return 0;
#endif
}

#if DL_USER_KEYS
template <int BYTES> struct dl_key_word {
    using type = uint32_t;
};
template <> struct dl_key_word<8> {
    using type = uint64_t;
};

/* By key, the heads among a tile's `count` items marked in `bitmap`: an item whose key's bits
 * differ from the one before's (keys[-1], the key before the tile, which is not read where
 * `first`: the tile starts the input, its first item a head). Each lane reads a 16-byte vector of
 * keys a round (where `keys` is 16-byte aligned; else key by key), GROUP rounds' loads at once,
 * before any word is stored (a store to the bitmap could alias the keys, and would hold back the
 * next loads); the lanes that share a bitmap word join their bits with shuffles. Returns the
 * last head's place in the tile, or -1. */
template <typename KEY>
__device__ __forceinline__ int dl_user_mark_keys(const KEY *keys, bool first, int count, uint32_t *bitmap)
{
    constexpr int PER = 16 / (int)sizeof(KEY), LANES = 32 / PER, ROUND = 32 * PER;
    constexpr int ROUNDS = DL_USER_TILE / ROUND, GROUP = ROUNDS < 4 ? ROUNDS : 4;
    static_assert(ROUNDS % GROUP == 0, "whole groups of rounds");
    /* (keys held in 32 or 64 bits, taken from the vector's words by shifts: ptxas 13.0 failed to
     * allocate the registers of 2-byte keys copied out of a vector) */
    using K = typename dl_key_word<sizeof(KEY)>::type;
    constexpr int BITS = 8 * (int)sizeof(KEY);
    const int lane = threadIdx.x % 32;
    const bool vector = (uintptr_t)keys % 16 == 0;
    int last = -1;
    for (int g = 0; g < ROUNDS; g += GROUP) {
        K k[GROUP][PER], before[GROUP];
#pragma unroll
        for (int q = 0; q < GROUP; ++q) {
            const int at = (g + q) * ROUND + lane * PER; /* the vector's first item */
            if (vector && at + PER <= count) {
                const uint4 v = reinterpret_cast<const uint4 *>(keys)[at / PER];
                const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int e = 0; e < PER; ++e)
                    k[q][e] = BITS == 64 ? (K)((uint64_t)w[2 * e + 1] << 32 | w[2 * e])
                                         : (K)(w[e * BITS / 32] >> (e * BITS % 32) & (K)(~0ull >> (64 - BITS)));
            } else {
#pragma unroll
                for (int e = 0; e < PER; ++e)
                    k[q][e] = at + e < count ? (K)keys[at + e] : K(0);
            }
            before[q] = at < count && (at > 0 || !first) ? (K)keys[at - 1] : K(0);
        }
#pragma unroll
        for (int q = 0; q < GROUP; ++q) {
            const int at = (g + q) * ROUND + lane * PER;
            uint32_t bits = 0;
#pragma unroll
            for (int e = 0; e < PER; ++e)
                bits |= (uint32_t)(at + e < count && ((at + e == 0 && first) || k[q][e] != (e ? k[q][e - 1] : before[q])))
                        << e;
            bits <<= lane % LANES * PER;
#pragma unroll
            for (int d = 1; d < LANES; d *= 2)
                bits |= __shfl_xor_sync(0xffffffffu, bits, d);
            if (lane % LANES == 0)
                bitmap[at / 32] = bits;
            last = bits ? at / 32 * 32 + 31 - __clz(bits) : last;
        }
    }
#pragma unroll
    for (int d = 16; d > 0; d /= 2)
        last = max(last, __shfl_xor_sync(0xffffffffu, last, d));
    return last;
}
#endif

#if DL_USER_MARKED
/* The heads of the tile of `count` items from `base`, marked in `bitmap` by one warp: over
 * offsets from the tile's first offset (offsets[first]), the input's first item too
 * (offsets.cuh); by key from its keys, at `keys` in its stage (after the key before them) or,
 * where that is NULL, in global memory. Returns the last one's place in the tile, or -1. */
__device__ __forceinline__ int dl_user_mark(const dl_user_params &p, uint64_t base, int count, uint64_t first,
                                            const unsigned char *keys, uint32_t *bitmap)
{
#if DL_USER_OFFSETS
    (void)keys;
    for (int i = threadIdx.x % 32; i < DL_USER_TILE / 32; i += 32)
        bitmap[i] = 0;
    __syncwarp();
    const int last = dl_mark_offsets(p.offsets, p.num_segments, dl_staged_offsets{nullptr, 0, 0}, first, base,
                                     count, bitmap);
    __syncwarp();
    return last;
#else
    (void)first;
    const unsigned char *from = keys ? keys : static_cast<const unsigned char *>(p.keys) + base * p.key_size;
    int last;
    switch (p.key_size) {
    case 1: last = dl_user_mark_keys(reinterpret_cast<const uint8_t *>(from), base == 0, count, bitmap); break;
    case 2: last = dl_user_mark_keys(reinterpret_cast<const uint16_t *>(from), base == 0, count, bitmap); break;
    case 4: last = dl_user_mark_keys(reinterpret_cast<const uint32_t *>(from), base == 0, count, bitmap); break;
    default: last = dl_user_mark_keys(reinterpret_cast<const uint64_t *>(from), base == 0, count, bitmap); break;
    }
    __syncwarp();
    return last;
#endif
}
#endif

#if DL_USER_RUNS
/* Reduce-by-key: where a run ends at the tile's last item. Where the tile of `count` items from
 * `base` ends the input, its bit `count` (the item after its last, as a head); else the bitmap's
 * word past the tile: whether the next tile's first item is a head (its key's bits differ from
 * the tile's last). Lane 0 of the warp that marked, after it. */
__device__ __forceinline__ void dl_user_mark_end(const dl_user_params &p, uint64_t base, int count, uint32_t *bitmap)
{
    bitmap[DL_USER_TILE / 32] = 0;
    if (base + (uint64_t)count == p.scan.n) {
        bitmap[count / 32] |= 1u << count % 32;
        return;
    }
    const unsigned char *k = static_cast<const unsigned char *>(p.keys) + (base + (uint64_t)count - 1) * p.key_size;
    bool differ;
    switch (p.key_size) {
    case 1: differ = k[0] != k[1]; break;
    case 2: differ = reinterpret_cast<const uint16_t *>(k)[0] != reinterpret_cast<const uint16_t *>(k)[1]; break;
    case 4: differ = reinterpret_cast<const uint32_t *>(k)[0] != reinterpret_cast<const uint32_t *>(k)[1]; break;
    default: differ = reinterpret_cast<const uint64_t *>(k)[0] != reinterpret_cast<const uint64_t *>(k)[1]; break;
    }
    bitmap[DL_USER_TILE / 32] = differ;
}
#endif

/* This thread's rows of tile items from `base` as values (identities past n; `heads`:
 * dl_user_heads): from global memory, or where `stage` is not NULL, from the stage that holds
 * the whole tile. */
__device__ __forceinline__ void dl_user_load_rows(const dl_user_params &p, uint64_t base, const unsigned char *stage,
                                                  uint32_t heads, dl_user_value (&v)[DL_USER_ROWS][DL_USER_VEC])
{
    constexpr int E = DL_USER_VEC;
    const uint64_t n = p.scan.n;
    const int warp = threadIdx.x / 32 % DL_USER_WARPS, lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < DL_USER_ROWS; ++r) {
        const uint32_t at = dl_user_row_item(warp, r, lane);
        /* the row's items below n (a stage holds a whole tile) */
        const int in = stage || base + at + E <= n ? E : base + at >= n ? 0 : (int)(n - base - at);
        dlscan_in x[E];
#if DL_USER_LOAD && DL_USER_IN2_BYTES
        dlscan_in2 y[E];
#endif
        if (stage) {
            dl_user_shared_copy<(int)sizeof x>(x, stage + (uint64_t)at * DL_USER_IN_BYTES);
#if DL_USER_LOAD && DL_USER_IN2_BYTES
            dl_user_shared_copy<(int)sizeof y>(y, stage + (uint64_t)DL_USER_TILE * DL_USER_IN_BYTES +
                                                      (uint64_t)at * DL_USER_IN2_BYTES);
#endif
        } else {
            dl_user_load_run<dlscan_in, E>(static_cast<const dlscan_in *>(p.scan.in), base + at, n, x);
#if DL_USER_LOAD && DL_USER_IN2_BYTES
            dl_user_load_run<dlscan_in2, E>(static_cast<const dlscan_in2 *>(p.in2), base + at, n, y);
#endif
        }
#pragma unroll
        for (int e = 0; e < E; ++e) {
#if DL_USER_LOAD && DL_USER_IN2_BYTES
            const void *second = &y[e];
#else
            const void *second = nullptr;
#endif
            v[r][e] = e < in ? dl_user_item(p, x[e], second, heads >> (r * E + e) & 1) : dl_user_op::identity();
        }
    }
}

/*
 * A tile's work, in two parts around the prefix of each warp's items over the whole input, once a
 * thread has its rows of items as values v (identities past n) and, along rows, its heads and
 * ends (dl_user_heads). The first DL_USER_WARPS warps of the block work the tile.
 *
 * dl_user_local: each thread scans each of its rows' items, and the transposed warp scan
 * (warp.cuh) the rows across the warp's lanes, one warp scan for all rows: row_prefix[r], the
 * exclusive prefix of the thread's row r within the warp. Returns the warp's total.
 */
__device__ __forceinline__ dl_user_value dl_user_local(dl_user_value (&v)[DL_USER_ROWS][DL_USER_VEC],
                                                       dl_user_value (&row_prefix)[DL_USER_ROWS],
                                                       dl_user_value *scratch)
{
    using Op = dl_user_op;
    dl_user_value lane_sum[DL_USER_ROWS];
#pragma unroll
    for (int r = 0; r < DL_USER_ROWS; ++r) {
#pragma unroll
        for (int e = 1; e < DL_USER_VEC; ++e)
            v[r][e] = Op()(v[r][e - 1], v[r][e]);
        lane_sum[r] = v[r][DL_USER_VEC - 1];
    }
    return dl_warp_prefixes_transposed<dl_user_value, Op, DL_USER_ROWS, DL_USER_PASSES>(lane_sum, row_prefix,
                                                                                        scratch);
}

/* The items a scan stores, [*lo, *hi): over offsets those in segments, else all n. */
__device__ __forceinline__ void dl_user_stored(const dl_user_params &p, uint64_t *lo, uint64_t *hi)
{
#if DL_USER_OFFSETS
    *lo = p.offsets[0], *hi = p.offsets[p.num_segments];
#else
    *lo = 0, *hi = p.scan.n;
#endif
}

/* dl_user_finish: from `running`, the warp's exclusive prefix over the whole input, each thread
 * stores its outputs in [lo, hi) (dl_user_stored), and the one holding item n - 1 the total
 * (along rows, the one holding a row's last item that row's). */
__device__ __forceinline__ void dl_user_finish(const dl_user_params &p, uint64_t base,
                                               const dl_user_value (&v)[DL_USER_ROWS][DL_USER_VEC],
                                               const dl_user_value (&row_prefix)[DL_USER_ROWS], uint32_t heads,
                                               uint32_t ends, dl_user_value running, uint64_t lo, uint64_t hi)
{
    using T = dl_user_value;
    using Op = dl_user_op;
    constexpr int E = DL_USER_VEC;
    const uint64_t n = p.scan.n;
    const int warp = threadIdx.x / 32 % DL_USER_WARPS, lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < DL_USER_ROWS; ++r) {
        const uint64_t first = base + dl_user_row_item(warp, r, lane);
        const T before = Op()(running, row_prefix[r]);
#if DL_USER_RUNS /* each run's output and key where it ends, at its count - 1; the count at n - 1 */
        (void)heads, (void)lo, (void)hi;
        if (ends >> (r * E) & ((1u << E) - 1)) {
#pragma unroll
            for (int e = 0; e < E; ++e)
                if (ends >> (r * E + e) & 1) {
                    const T inclusive = Op()(before, v[r][e]);
                    const uint32_t run = inclusive.word[DL_USER_VALUE_BYTES / 4 - 1] - 1;
                    static_cast<dlscan_out *>(p.scan.out)[run] = dl_user_output(inclusive);
                    const unsigned char *key = static_cast<const unsigned char *>(p.keys) + (first + e) * p.key_size;
                    unsigned char *to = static_cast<unsigned char *>(p.keys_out) + (uint64_t)run * p.key_size;
                    switch (p.key_size) {
                    case 1: *to = *key; break;
                    case 2: *reinterpret_cast<uint16_t *>(to) = *reinterpret_cast<const uint16_t *>(key); break;
                    case 4: *reinterpret_cast<uint32_t *>(to) = *reinterpret_cast<const uint32_t *>(key); break;
                    default: *reinterpret_cast<uint64_t *>(to) = *reinterpret_cast<const uint64_t *>(key); break;
                    }
                    if (first + e + 1 == n)
                        *p.num_runs = run + 1;
                }
        }
#else
        dlscan_out y[E];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            /* (along rows, a row's first exclusive output is the init) */
            const T exclusive = heads >> (r * E + e) & 1 ? dl_user_value_of(dl_user_init(p), 1)
                                : e == 0                 ? before
                                                         : Op()(before, v[r][e - 1]);
            y[e] = dl_user_output(p.scan.exclusive ? exclusive : Op()(before, v[r][e]));
        }
        dl_user_store_run<dlscan_out, E>(static_cast<dlscan_out *>(p.scan.out), first, lo, hi, y);
#if DL_USER_SEGMENTED
        if (ends >> (r * E) & ((1u << E) - 1)) { /* each row's total where its last item is */
#pragma unroll
            for (int e = 0; e < E; ++e)
                if (ends >> (r * E + e) & 1)
                    dl_user_put(static_cast<unsigned char *>(p.scan.totals) +
                                    dl_row_of(first + e, p.scan.row_length, p.row_inverse) * DL_USER_STATE_BYTES,
                                dl_user_state_of(Op()(before, v[r][e])));
        }
#endif
        if (p.scan.total && first < n && n - first <= E) {
#pragma unroll
            for (int e = 0; e < E; ++e)
                if (first + e + 1 == n)
                    dl_user_put(p.scan.total, dl_user_state_of(Op()(before, v[r][e])));
        }
#if DL_USER_THIS_PROGRAM == DL_USER_PROGRAM_ONE
        /* rows of whole tiles or warps' runs: a row's total where its last item is, the last of
         * the run of a warp that ends a row (runs counted from the input's first) */
        constexpr uint64_t run = DL_USER_TILE / DL_USER_WARPS;
        const uint64_t run_end = base + (uint64_t)(warp + 1) * run; /* this warp's run's end */
        const uint64_t row_runs = p.row_warps ? p.row_warps : (uint64_t)p.scan.row_tiles * DL_USER_WARPS;
        if (p.scan.row_tiles && p.scan.totals && first + E == run_end && run_end <= n &&
            run_end / run % row_runs == 0)
            dl_user_put(static_cast<unsigned char *>(p.scan.totals) +
                            (run_end / run / row_runs - 1) * DL_USER_STATE_BYTES,
                        dl_user_state_of(Op()(before, v[r][E - 1])));
#endif
#endif /* DL_USER_RUNS */
    }
}

/* The scan's seed: the host's init (or the identity), or for tile 0 the one at p.scan.init (along
 * rows of whole tiles, every row's first tile's). Along rows of the lifted operator the identity:
 * each row's first item holds the init. */
__device__ __forceinline__ dl_user_value dl_user_seed(const dl_user_params &p, uint32_t tile)
{
#if DL_USER_SEGMENTED
    (void)p, (void)tile;
    return dl_user_op::identity();
#else
    dlscan_state seed = dl_user_init(p);
    if (tile == 0 && p.scan.init)
        seed = dl_user_get(p.scan.init);
    return seed;
#endif
}

/* A tile's place in its chain: along rows of whole tiles (p.scan.row_tiles), its link in its row's
 * chain and the chain's descriptors; else the tile itself and all of them. */
struct dl_user_link {
    uint32_t link;
    dl_word *descriptors;
};

__device__ __forceinline__ dl_user_link dl_user_link_of(const dl_user_params &p, uint32_t tile)
{
#if DL_USER_THIS_PROGRAM == DL_USER_PROGRAM_ONE
    if (p.scan.row_tiles) {
        const uint32_t link = tile % p.scan.row_tiles;
        return {link, p.scan.descriptors + (uint64_t)(tile - link) * dl_pieces<dl_user_value>::words};
    }
#endif
    return {tile, p.scan.descriptors};
}

/* Rows shorter than a tile (p.row_warps warps' runs each, every tile starting a row): this warp's
 * exclusive prefix in its row, `seed` first, then the totals of its row's warps before it, in
 * order. The tile's warps call it (SPECIALIZED: the block's others have roles of their own,
 * block.cuh's dl_tile_sync); it synchronizes them twice, the second time before the next tile
 * may write the totals again. */
template <bool SPECIALIZED, typename SHARED>
__device__ __forceinline__ dl_user_value dl_user_row_warps_prefix(SHARED &sh, const dl_user_value &warp_total,
                                                                   const dl_user_value &seed, uint32_t row_warps)
{
    const int warp = threadIdx.x / 32 % DL_USER_WARPS;
    if (threadIdx.x % 32 == 0)
        sh.warp_prefix[warp] = warp_total;
    dl_tile_sync<SPECIALIZED, DL_USER_WARPS>();
    dl_user_value running = seed;
    for (int w = warp - warp % (int)row_warps; w < warp; ++w)
        running = dl_user_op()(running, sh.warp_prefix[w]);
    dl_tile_sync<SPECIALIZED, DL_USER_WARPS>();
    return running;
}

/* ---------------------------------------------------------------- one block per tile */

template <bool LEFT_FOLD> __device__ __forceinline__ void dl_user_scan_block(const dl_user_params &p)
{
    __shared__ dl_user_block_shared<dl_tile_shared<dl_user_value, DL_USER_WARPS, LEFT_FOLD>> sh;
    const dl_probe probe(p.scan.control);
    dl_grid_dependency();
    uint32_t tile, epoch;
    dl_tile_take(p.scan.control, probe, sh, &tile, &epoch);
    const uint64_t base = (uint64_t)tile * DL_USER_TILE;
#if DL_USER_MARKED
    if (threadIdx.x < 32) {
#if DL_USER_OFFSETS
        const uint64_t first = dl_warp_lower_bound(p.offsets, 0, p.num_segments + 1, base, 0, 0);
#else
        const uint64_t first = 0;
#endif
        const int count = p.scan.n - base < DL_USER_TILE ? (int)(p.scan.n - base) : DL_USER_TILE;
        dl_user_mark(p, base, count, first, nullptr, sh.bitmap);
#if DL_USER_RUNS
        if (threadIdx.x == 0)
            dl_user_mark_end(p, base, count, sh.bitmap);
#endif
    }
    __syncthreads();
    const uint32_t *bitmap = sh.bitmap;
#else
    const uint32_t *bitmap = nullptr;
#endif
    uint32_t ends;
    const uint32_t heads = dl_user_heads(p, base, bitmap, &ends);
    dl_user_value v[DL_USER_ROWS][DL_USER_VEC];
    dl_user_load_rows(p, base, nullptr, heads, v);
    /* (tile 0 reads a device init before it publishes anything: before any tile's total) */
    const dl_user_link at = dl_user_link_of(p, tile);
    const dl_user_value seed = threadIdx.x < 32 && at.link == 0 ? dl_user_seed(p, tile) : dl_user_op::identity();
    dl_user_value row_prefix[DL_USER_ROWS];
    const dl_user_value warp_total = dl_user_local(v, row_prefix, sh.scratch[threadIdx.x / 32]);
    /* the block's warps, then warp 0 publishes the aggregate, looks back and publishes P (rows
     * shorter than a tile: the row's warps alone) */
    const dl_user_value running =
        p.row_warps ? dl_user_row_warps_prefix<false>(sh, warp_total, dl_user_seed(p, tile), p.row_warps)
                    : dl_tile_warp_prefix<dl_user_value, dl_user_op, LEFT_FOLD, DL_USER_WARPS, false>(
                          sh, warp_total, at.link, epoch, seed, at.descriptors, probe, false, dl_user_op::identity());
    uint64_t lo, hi;
    dl_user_stored(p, &lo, &hi);
    dl_user_finish(p, base, v, row_prefix, heads, ends, running, lo, hi);
    dl_epoch_finish(p.scan.control, epoch, sh.ticket_base, p.scan.descriptors, p.scan.descriptor_words);
}

extern "C" __global__ void __launch_bounds__(DL_USER_THREADS) dl_user_scan(const dl_user_params p)
{
    dl_user_scan_block<false>(p);
}

extern "C" __global__ void __launch_bounds__(DL_USER_THREADS) dl_user_scan_left_fold(const dl_user_params p)
{
    dl_user_scan_block<true>(p);
}

/* ---------------------------------------------------------------- persistent (sm_90) */

/* A stage: a tile's items of the first input, then of the second; by key, 16 bytes that end with
 * the key before the tile, then the tile's keys (from DL_USER_KEYS_AT). */
#define DL_USER_STAGE_BYTES DL_USER_STAGE(DL_USER_VALUE_BYTES, DL_USER_IN_BYTES, DL_USER_IN2_BYTES, DL_USER_KEYS)
#define DL_USER_ITEM_BYTES (DL_USER_TILE * (DL_USER_IN_BYTES + DL_USER_IN2_BYTES))
#define DL_USER_KEYS_AT (DL_USER_ITEM_BYTES + 16)

/* The ring (ring.cuh) and, for a look-back warp (along rows: policy.h, DL_USER_LOOK_BACK_WARP),
 * as in the segmented scans' (segment_kernel.cu), two rings twice as deep that carry each tile's
 * value from the reducer to the look-back warp (`valued`: slot_tile, slot_head, slot_value) and
 * its exclusive prefix on to the compute warps (`prefixed`: slot_prefix). A role meets slot q
 * again only two rounds of stages later, after every compute warp has finished the tile that used
 * it. The compute warps' totals are kept for two tiles (by the parity of the block's tile count),
 * so that one barrier a tile suffices. */
template <bool LEFT_FOLD>
struct dl_user_shared : dl_user_block_shared<
                            dl_persistent_shared<dl_user_value, DL_USER_WARPS, LEFT_FOLD, DL_USER_STAGES(DL_USER_STAGE_BYTES)>> {
    static constexpr int slots = 2 * DL_USER_STAGES(DL_USER_STAGE_BYTES);
    uint64_t valued[slots];
    uint64_t prefixed[slots];
    uint32_t slot_tile[slots];
    uint32_t slot_head[slots];
    dl_user_value slot_value[slots];
    dl_user_value slot_prefix[slots];
    dl_user_value warp_total[2][DL_USER_WARPS];
    dl_user_value seed; /* tile 0's, read by the reducer (a device init may be a later tile's total) for
                           the compute warps, or the look-back warp, which hands it on */
#if DL_USER_OFFSETS
    uint64_t stage_segment[DL_USER_STAGES(DL_USER_STAGE_BYTES)]; /* each stage's tile's first offset (the producer's) */
#endif
#if DL_USER_MARKED
    /* its heads (the reducer's; the runs', a word more: dl_user_mark_end) */
    uint32_t stage_bitmap[DL_USER_STAGES(DL_USER_STAGE_BYTES)][DL_USER_TILE / 32 + DL_USER_RUNS];
#endif
};

/* The compute warps wait for the reducer (`reduced`): for the aggregate it leaves without a
 * look-back warp, for the heads it marks over offsets or by key; else for the stage's data (`full`). */
#define DL_USER_AFTER_REDUCER (!DL_USER_LOOK_BACK_WARP(DL_USER_SEGMENTED) || DL_USER_MARKED)

/* The producer's fill: the tile's bytes of both inputs (and by key its keys, after the 16 bytes of
 * keys before it where it has any), in bulk copies; a partial last tile is left to global loads.
 * Over offsets (the whole warp, ring.cuh's dl_persistent_produce_offsets) find, the search for
 * the tile's first offset (offsets.cuh, dl_warp_next_offset: from the block's last tile's), which
 * lane 0 leaves in segment[s] before it completes the stage's phase: ahead of the reducer by the
 * ring's depth. */
struct dl_user_fill {
    static constexpr bool offsets = DL_USER_OFFSETS;
    const dl_user_params &p;
    unsigned char *stages;
    uint64_t *segment; /* over offsets: each stage's tile's first offset */
    __device__ bool operator()(int s, uint32_t tile, uint64_t *full) const
    {
        const uint64_t base = (uint64_t)tile * DL_USER_TILE;
        if (base + DL_USER_TILE > p.scan.n)
            return false;
        unsigned char *stage = stages + s * DL_USER_STAGE_BYTES;
        const uint32_t before = DL_USER_KEYS && base > 0 ? 16 : 0;
        const uint32_t key_bytes = DL_USER_KEYS ? DL_USER_TILE * p.key_size : 0;
        if (DL_USER_OFFSETS)
            dl_bulk_expect_only(full, DL_USER_ITEM_BYTES);
        else
            dl_bulk_expect(full, DL_USER_ITEM_BYTES + before + key_bytes);
        dl_bulk_copy<true>(stage, static_cast<const unsigned char *>(p.scan.in) + base * DL_USER_IN_BYTES,
                           DL_USER_TILE * DL_USER_IN_BYTES, full);
        if (DL_USER_IN2_BYTES)
            dl_bulk_copy<true>(stage + DL_USER_TILE * DL_USER_IN_BYTES,
                               static_cast<const unsigned char *>(p.in2) + base * DL_USER_IN2_BYTES,
                               DL_USER_TILE * DL_USER_IN2_BYTES, full);
        if (DL_USER_KEYS)
            dl_bulk_copy<true>(stage + DL_USER_KEYS_AT - before,
                               static_cast<const unsigned char *>(p.keys) + base * p.key_size - before,
                               key_bytes + before, full);
        return true;
    }
    __device__ uint64_t find(uint32_t tile, uint64_t after, uint32_t after_tile) const
    {
        return dl_warp_next_offset(p.offsets, p.num_segments + 1, p.scan.n, (uint64_t)tile * DL_USER_TILE, after,
                                   (uint64_t)after_tile * DL_USER_TILE);
    }
    __device__ void operator()(int s, uint32_t tile, uint64_t first, uint64_t *full) const
    {
        if (threadIdx.x % 32 != 0)
            return;
        segment[s] = first;
        (*this)(s, tile, full);
        dl_mbar_arrive(full);
    }
};

/* ring.cuh's dl_stage_header for a value, which may be a struct: lane 0 reads its words. */
__device__ __forceinline__ dl_user_value dl_user_header(const dl_user_value &field)
{
    dl_pieces<dl_user_value> words;
    if (threadIdx.x % 32 == 0) {
        const volatile uint32_t *from = reinterpret_cast<const volatile uint32_t *>(&field);
#pragma unroll
        for (int k = 0; k < words.count; ++k)
            words.piece[k] = from[k];
    }
    return dl_shfl(dl_from_pieces<dl_user_value>(words), 0);
}

/* The items a reducer lane reads at a time: the fewest whose bytes are whole 16-byte vectors. */
template <int BYTES> __host__ __device__ constexpr int dl_user_unit()
{
    return BYTES % 16 == 0 ? 1 : BYTES % 8 == 0 ? 2 : BYTES % 4 == 0 ? 4 : BYTES % 2 == 0 ? 8 : 16;
}

/*
 * The reducer warp: for each stage in ring order, once its data is in, the tile's aggregate in
 * item order, published at once: A, or tile 0's P on its seed, which it leaves in sh.seed for the
 * compute warps; then handed on, to the look-back warp where there is one (`valued`), else to the
 * compute warps (`reduced`). Successors' look-backs so meet an A as soon as a tile's data is in,
 * however many tiles its block holds in the ring ahead of its compute warps. Lane l folds its
 * run of the tile's items (l R .. l R + R - 1, R = the tile's items / 32) a unit (dl_user_unit)
 * at a time, starting at its unit l mod 8 and wrapping around, into two folds (from there to the
 * end, and from the start to there, joined in order), so that the eight lanes of each phase of a
 * 16-byte access meet eight different bank groups; the lanes' folds then meet in an ordered warp
 * scan.
 * Along rows the aggregate needs only the items from the tile's last row start on (on the init,
 * flagged), or where no row starts in it all of them: the warp folds states, those before that
 * start as identities. A tile where a row starts publishes that value as its P at once: it
 * depends on no other tile (protocol.h, "Segments"). The runs' value counts the tile's heads, and
 * that count needs every tile before it: they publish A always, and the look-back warp their P.
 */
template <bool LEFT_FOLD, typename SHARED>
__device__ __forceinline__ void dl_user_reduce(const dl_user_params &p, const dl_probe &probe, SHARED &sh,
                                               const unsigned char *stages, uint32_t tiles)
{
    using T = dl_user_value;
    using Op = dl_user_op;
    using S = dl_user_state_op;
    constexpr int R = DL_USER_TILE / 32, G = dl_user_unit<DL_USER_IN_BYTES>(), UNITS = R / G;
    static_assert(R % G == 0, "a lane's run is whole units");
    const int lane = threadIdx.x % 32;
    const int start = lane % 8 % UNITS;
    const uint64_t n = p.scan.n;
    for (uint32_t k = 0;; ++k) {
        const int s = (int)(k % SHARED::stages);
        dl_mbar_wait(&sh.full[s], (k / SHARED::stages) & 1);
        const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
        const int q = (int)(k % SHARED::slots);
        if (tile >= tiles) {
#if DL_USER_LOOK_BACK_WARP(DL_USER_SEGMENTED)
            if (lane == 0) {
                sh.slot_tile[q] = tile;
                dl_mbar_arrive(&sh.valued[q]);
            }
#endif
#if DL_USER_AFTER_REDUCER
            dl_mbar_arrive(&sh.reduced[s]);
#endif
            return;
        }
        const uint64_t base = (uint64_t)tile * DL_USER_TILE;
        const int count = base + DL_USER_TILE <= n ? DL_USER_TILE : (int)(n - base);
#if DL_USER_OFFSETS
        const int last =
            dl_user_mark(p, base, count, dl_stage_header(sh.stage_segment[s]), nullptr, sh.stage_bitmap[s]);
#elif DL_USER_KEYS
        const int last = dl_user_mark(p, base, count, 0,
                                      count == DL_USER_TILE ? stages + s * DL_USER_STAGE_BYTES + DL_USER_KEYS_AT : nullptr,
                                      sh.stage_bitmap[s]);
#elif DL_USER_SEGMENTED
        const int last = dl_rows_last_head(base, count, p.scan.row_length, p.row_inverse); /* or -1 */
#else
        constexpr int last = -1;
#endif
#if DL_USER_RUNS /* the value's count: the tile's heads, counted before lane 0 marks where its last run ends */
        uint32_t starts = 0;
        for (int i = lane; i < DL_USER_TILE / 32; i += 32)
            starts += __popc(sh.stage_bitmap[s][i]);
#pragma unroll
        for (int d = 16; d > 0; d /= 2)
            starts += __shfl_xor_sync(0xffffffffu, starts, d);
        __syncwarp();
        if (lane == 0)
            dl_user_mark_end(p, base, count, sh.stage_bitmap[s]);
#else
        constexpr uint32_t starts = 1; /* the value's flag */
#endif
        dlscan_state acc = S::identity();
        if (count == DL_USER_TILE) {
            const unsigned char *stage = stages + s * DL_USER_STAGE_BYTES;
            dlscan_state head = S::identity(), tail = S::identity();
#pragma unroll 4
            for (int u = 0; u < UNITS; ++u) {
                const bool wrapped = start + u >= UNITS;
                const int at = lane * R + (wrapped ? start + u - UNITS : start + u) * G;
                dlscan_in x[G];
                dl_user_shared_copy<(int)sizeof x>(x, stage + (uint64_t)at * DL_USER_IN_BYTES);
#if DL_USER_LOAD && DL_USER_IN2_BYTES
                dlscan_in2 y[G];
                dl_user_shared_copy<(int)sizeof y>(y, stage + (uint64_t)DL_USER_TILE * DL_USER_IN_BYTES +
                                                          (uint64_t)at * DL_USER_IN2_BYTES);
#define DL_USER_SECOND(i) (&y[i])
#else
#define DL_USER_SECOND(i) nullptr
#endif
                dlscan_state part = at >= last ? dl_user_state(x[0], DL_USER_SECOND(0)) : S::identity();
#pragma unroll
                for (int i = 1; i < G; ++i)
                    part = S()(part, at + i >= last ? dl_user_state(x[i], DL_USER_SECOND(i)) : S::identity());
#undef DL_USER_SECOND
                const dlscan_state joined = S()(wrapped ? head : tail, part);
                head = wrapped ? joined : head;
                tail = wrapped ? tail : joined;
            }
            acc = S()(head, tail);
        } else { /* the partial last tile, from global memory */
            const dlscan_in *in = static_cast<const dlscan_in *>(p.scan.in);
            for (int i = lane * R; i < lane * R + R && i < count; ++i) {
#if DL_USER_LOAD && DL_USER_IN2_BYTES
                const void *second = static_cast<const dlscan_in2 *>(p.in2) + base + i;
#else
                const void *second = nullptr;
#endif
                if (i >= last)
                    acc = S()(acc, dl_user_state(in[base + i], second));
            }
        }
        const dlscan_state folded = dl_shfl(dl_warp_inclusive_scan<dlscan_state, S>(acc), 31);
        const T aggregate =
            last >= 0 ? dl_user_value_of(S()(dl_user_init(p), folded), starts) : dl_user_value_of(folded, 0);
        const bool early = last >= 0 && !DL_USER_RUNS; /* P at once: it depends on no other tile */
        if (lane == 0) {
            const dl_user_link at = dl_user_link_of(p, tile);
            const T seed = at.link == 0 ? dl_user_seed(p, tile) : Op::identity();
            if (tile == 0)
                sh.seed = seed;
            if (early)
                dl_publish_segment_value<T>(p.scan.descriptors, tile, sh.epoch, true, aggregate, probe);
            else
                dl_publish_aggregate<T, Op>(at.descriptors, at.link, sh.epoch, seed, aggregate, probe);
#if DL_USER_LOOK_BACK_WARP(DL_USER_SEGMENTED)
            sh.slot_tile[q] = tile;
            sh.slot_head[q] = early;
            sh.slot_value[q] = aggregate;
            dl_mbar_arrive(&sh.valued[q]);
#else
            sh.stage_aggregate[s] = aggregate;
#endif
        }
        /* Every lane, after its own reads of the stage, frees it: the compute warps' arrivals
         * follow the reducer's through `reduced`, but racecheck follows neither a __syncwarp into
         * one lane's arrival (ring.cuh, dl_stage_header) nor one barrier into another. */
        dl_mbar_arrive(&sh.empty[s]);
#if DL_USER_AFTER_REDUCER
        dl_mbar_arrive(&sh.reduced[s]);
#endif
    }
}

/*
 * A grid of DL_USER_BLOCKS_PER_SM blocks an SM (the policy row's persistent grid), each of
 * DL_USER_WARPS compute warps, a producer warp, a reducer warp and, where the policy gives it one
 * (DL_USER_LOOK_BACK_WARP), a look-back warp (ring.cuh): the producer draws tickets and
 * prefetches each tile's items into the ring; the reducer publishes each tile's aggregate as it
 * lands; the compute warps take the stages in ring order, read their items into registers, free
 * the stage and scan the tile's warps (dl_user_local). Then, with a look-back warp, which gets
 * each tile's exclusive prefix and publishes its P (ring.cuh, dl_ring_look_back) ahead of them,
 * one barrier for the warps' totals and that prefix; without one, block.cuh's
 * dl_tile_warp_prefix, whose warp 0 looks back (the reducer published the aggregate). Last,
 * dl_user_finish. 16-byte aligned inputs (bulk copies).
 */
template <bool LEFT_FOLD> __device__ __forceinline__ void dl_user_scan_ring(const dl_user_params &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using T = dl_user_value;
    using Op = dl_user_op;
    using SHARED = dl_user_shared<LEFT_FOLD>;
    constexpr bool look_back_warp = DL_USER_LOOK_BACK_WARP(DL_USER_SEGMENTED);
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ SHARED sh;
    const uint32_t tiles = p.scan.tiles;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const dl_probe probe(p.scan.control);
#if DL_USER_OFFSETS
    uint64_t *segment = sh.stage_segment;
#else
    uint64_t *segment = nullptr;
#endif
    /* `empty`: every lane of the compute warps and of the reducer; `reduced`: every lane of the reducer */
    dl_prefix_rings_init(sh, 32 * (DL_USER_WARPS + 1), 32);
    dl_grid_dependency();
    if (warp == DL_USER_WARPS) {
        dl_persistent_produce(p.scan.control, probe, sh, tiles, dl_user_fill{p, stages, segment});
    } else if (warp == DL_USER_WARPS + 1) {
        dl_user_reduce<LEFT_FOLD>(p, probe, sh, stages, tiles);
    } else if (look_back_warp && warp == DL_USER_WARPS + 2) {
        /* (a tile where a row starts published its P; tile 0's prefix is the reducer's seed) */
        dl_ring_look_back<T, Op, LEFT_FOLD>(
            p.scan.descriptors, probe, sh, tiles, [&](int q) { return dl_user_header(sh.slot_value[q]); },
            [&](int q) { return dl_stage_header(sh.slot_head[q]) == 0; },
            [&](int q, T prefix) { sh.slot_prefix[q] = sh.slot_tile[q] == 0 ? sh.seed : prefix; });
    } else {
        uint64_t lo, hi; /* (read once, not once a tile) */
        dl_user_stored(p, &lo, &hi);
        for (uint32_t k = 0;; ++k) {
            const int s = (int)(k % SHARED::stages);
            dl_mbar_wait(DL_USER_AFTER_REDUCER ? &sh.reduced[s] : &sh.full[s], (k / SHARED::stages) & 1);
            const uint32_t tile = dl_stage_header(sh.stage_tile[s]);
            if (tile >= tiles)
                break;
            const uint64_t base = (uint64_t)tile * DL_USER_TILE;
#if DL_USER_MARKED
            const uint32_t *bitmap = sh.stage_bitmap[s];
#else
            const uint32_t *bitmap = nullptr;
#endif
            uint32_t ends;
            const uint32_t heads = dl_user_heads(p, base, bitmap, &ends);
            T v[DL_USER_ROWS][DL_USER_VEC];
            dl_user_load_rows(p, base, base + DL_USER_TILE <= p.scan.n ? stages + s * DL_USER_STAGE_BYTES : nullptr,
                              heads, v);
            dl_mbar_arrive(&sh.empty[s]); /* (every lane, after its own reads) */
            T row_prefix[DL_USER_ROWS];
            const T warp_total = dl_user_local(v, row_prefix, sh.scratch[warp]);
            T running;
            if constexpr (look_back_warp) {
                if (lane == 0)
                    sh.warp_total[k & 1][warp] = warp_total;
                dl_tile_sync<true, DL_USER_WARPS>();
                const T inclusive =
                    dl_warp_inclusive_scan<T, Op>(lane < DL_USER_WARPS ? sh.warp_total[k & 1][lane] : Op::identity());
                const T before = dl_shfl(inclusive, warp > 0 ? warp - 1 : 0);
                const int q = (int)(k % SHARED::slots);
                dl_mbar_wait(&sh.prefixed[q], (k / SHARED::slots) & 1);
                const T prefix = dl_user_header(sh.slot_prefix[q]);
                running = warp == 0 ? prefix : Op()(prefix, before);
            } else {
                /* (the persistent tree fold's windows are the built-in persistent scan's, one slot a lane) */
                constexpr int slots = LEFT_FOLD ? DL_SLOTS_PER_LANE : DL_PERSISTENT_SLOTS_PER_LANE;
                /* (a row's first tile but tile 0 starts from the host's init: a device init is tile 0's) */
                const dl_user_link at = dl_user_link_of(p, tile);
                const T seed = at.link != 0 ? Op::identity() : tile == 0 ? dl_user_header(sh.seed) : dl_user_seed(p, tile);
                if (p.row_warps)
                    running = dl_user_row_warps_prefix<true>(sh, warp_total, seed, p.row_warps);
                else
                    running = dl_tile_warp_prefix<T, Op, LEFT_FOLD, DL_USER_WARPS, true, slots>(
                        sh, warp_total, at.link, sh.epoch, seed, at.descriptors, probe, true,
                        dl_user_header(sh.stage_aggregate[s]));
            }
            dl_user_finish(p, base, v, row_prefix, heads, ends, running, lo, hi);
        }
    }
    __syncthreads();
    dl_epoch_finish(p.scan.control, sh.epoch, sh.ticket_base, p.scan.descriptors, p.scan.descriptor_words);
#endif
}

extern "C" __global__ void __launch_bounds__(DL_USER_RING_THREADS(DL_USER_SEGMENTED), DL_USER_BLOCKS_PER_SM)
    dl_user_scan_persistent(const dl_user_params p)
{
    dl_user_scan_ring<false>(p);
}

extern "C" __global__ void __launch_bounds__(DL_USER_RING_THREADS(DL_USER_SEGMENTED), DL_USER_BLOCKS_PER_SM)
    dl_user_scan_persistent_left_fold(const dl_user_params p)
{
    dl_user_scan_ring<true>(p);
}

#endif /* DL_USER_COLUMNS */

#endif /* DLSCAN_USER_KERNEL_CUH */
