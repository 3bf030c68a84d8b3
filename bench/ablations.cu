/*
 * ablations.cu: single-pass scans as bench variants, each dlscan's one-block-per-tile kernel
 * (dl_scan_kernel) with one idea of the decoupled look-back taken away, so that bench.c shows
 * what each idea is worth. Everything else is dlscan's: the tile (256 threads, 16-byte rows
 * in registers, .cs hints, baseline_tile.cuh), the tile index drawn from a counter
 * (dl_tile_take: forward progress without assumptions on block scheduling), the epochs that
 * make descriptors of earlier calls read as X (no clearing between calls, no extra launch),
 * the back-off (dlscan's doubling __nanosleep, 32 to 512 ns). Inclusive sums of every type
 * (integer sums run on the unsigned type of the same width, so they wrap), any n from 1 to
 * the max_n given to prepare().
 *
 *   chained-scan     StreamScan: no decoupling. A tile publishes nothing until it knows its
 *                    inclusive prefix: it waits for its immediate predecessor's P (dlscan's
 *                    packed descriptors), then publishes its own P. The prefix crosses the
 *                    grid one tile, one L2 round trip and more, at a time;
 *   lookback-serial  no warp window: the tile publishes its aggregate (A) at once, then one
 *                    thread walks back one predecessor at a time (dlscan's packed
 *                    descriptors): X -> wait and read it again, A -> fold it and go one
 *                    further back, P -> fold it and stop;
 *   lookback-split   no packed descriptor: a tile's status and its value live in separate
 *                    words, published as value store, __threadfence(), status store and read
 *                    as status load, __threadfence(), value load; dlscan's warp window (64
 *                    predecessors per round) and its tree fold are kept. A tile has two value
 *                    words, one for A and one for P (as CUB keeps wide types): with one word
 *                    rewritten from A to P, a reader that saw status A could read the P value
 *                    under it and fold an inclusive prefix as an aggregate.
 *
 * Work split: one block of 256 threads per tile, the tile taken from the counter; warp 0 does
 * the descriptor protocol (chained-scan and lookback-serial: its lane 0 alone).
 * DRAM traffic per call, in units of n * sizeof(T): 2 (each item read once and written once)
 * for all three; descriptors add about 8 or 16 bytes (lookback-split: 8 + 2 sizeof(T)) per tile.
 *
 *   meson compile -C build && build/bench/bench --variants dlscan-blocks,chained-scan,lookback-serial,lookback-split
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "baseline_tile.cuh"
#include "ops.cuh"
#include "tile.cuh"
#include "variants.h"

/* What replaces dlscan's look-back. */
enum lookback_kind { LOOKBACK_CHAINED, LOOKBACK_SERIAL, LOOKBACK_SPLIT };

/* One call, as the kernel sees it. */
typedef struct single_pass_params {
    const void *in;
    void *out;
    uint64_t n;
    int aligned;                /* in and out allow 16-byte accesses */
    dl_control *control;        /* tile counter and epoch (tile.cuh's tickets) */
    dl_word *descriptors;       /* chained, serial: packed descriptors (protocol.h);
                                   split: status words, the payload unused */
    uint64_t descriptor_words;  /* their capacity, cleared when the epoch wraps */
    void *aggregates;           /* split: each tile's A value */
    void *inclusives;           /* split: each tile's P value */
} single_pass_params;

/* ---------------------------------------------------------------- chained-scan */

/* Lane 0 of warp 0: tile 0 publishes P at once; tile i > 0 waits for tile i-1 to be P, then
 * publishes its own P. Returns the tile's exclusive prefix. */
template <typename T, typename Op>
__device__ __forceinline__ T chained_prefix(const single_pass_params &p, uint32_t tile,
                                            uint32_t epoch, T aggregate)
{
    T prefix = Op::identity();
    if (tile == 0) {
        dl_gpu_publish<T>(p.descriptors, 0, epoch, DL_STATUS_P, aggregate);
        return prefix;
    }
    uint32_t backoff = DL_BACKOFF_FIRST_NS;
    while (dl_gpu_read<T, Op>(p.descriptors, (int64_t)tile - 1, epoch, &prefix) != DL_STATUS_P) {
        __nanosleep(backoff);
        backoff = dl_backoff_next(backoff);
    }
    dl_gpu_publish<T>(p.descriptors, tile, epoch, DL_STATUS_P, Op()(prefix, aggregate));
    return prefix;
}

/* ---------------------------------------------------------------- lookback-serial */

/* Lane 0 of warp 0: publishes the aggregate (tile 0: its P), walks back one predecessor at a
 * time, publishes P. Returns the tile's exclusive prefix. */
template <typename T, typename Op>
__device__ __forceinline__ T serial_prefix(const single_pass_params &p, uint32_t tile,
                                           uint32_t epoch, T aggregate)
{
    if (tile == 0) {
        dl_gpu_publish<T>(p.descriptors, 0, epoch, DL_STATUS_P, aggregate);
        return Op::identity();
    }
    dl_gpu_publish<T>(p.descriptors, tile, epoch, DL_STATUS_A, aggregate);
    T running = Op::identity(); /* the tiles from `predecessor` + 1 to tile - 1 */
    int64_t predecessor = (int64_t)tile - 1;
    uint32_t backoff = DL_BACKOFF_FIRST_NS;
    for (;;) {
        T value;
        const uint32_t status = dl_gpu_read<T, Op>(p.descriptors, predecessor, epoch, &value);
        if (status == DL_STATUS_X) {
            __nanosleep(backoff);
            backoff = dl_backoff_next(backoff);
            continue;
        }
        running = Op()(value, running);
        if (status == DL_STATUS_P)
            break;
        --predecessor; /* tile 0 is never A, so this stops at 0 at the latest */
        backoff = DL_BACKOFF_FIRST_NS;
    }
    dl_gpu_publish<T>(p.descriptors, tile, epoch, DL_STATUS_P, Op()(running, aggregate));
    return running;
}

/* ---------------------------------------------------------------- lookback-split */

/* Value words: relaxed at GPU scope (coherent in L2, never stale from L1); their order with
 * the status words comes from the fences around them. */
template <typename T> __device__ __forceinline__ void split_store_value(T *p, T value)
{
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof value); /* little-endian: the low bytes */
    if (sizeof(T) == 4)
        asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"((uint32_t)bits) : "memory");
    else
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(bits) : "memory");
}

template <typename T> __device__ __forceinline__ T split_load_value(const T *p)
{
    if (sizeof(T) == 4) {
        uint32_t bits;
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(bits) : "l"(p) : "memory");
        return dl_value_from_bits<T>(bits);
    }
    uint64_t bits;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(bits) : "l"(p) : "memory");
    return dl_value_from_bits<T>(bits);
}

/* One thread: the value into the word of its status, a fence, then the status word. Each
 * value word is written once per call, before any status that points readers to it. */
template <typename T>
__device__ __forceinline__ void split_publish(const single_pass_params &p, uint32_t tile,
                                              uint32_t epoch, uint32_t status, T value)
{
    T *values = static_cast<T *>(status == DL_STATUS_P ? p.inclusives : p.aggregates);
    split_store_value<T>(values + tile, value);
    __threadfence(); /* the value before the status that announces it */
    dl_gpu_store_word(p.descriptors + tile, dl_word_make(epoch, status, 0));
}

/* The status of tile t (relaxed load); tiles before 0 read as P (with the identity). */
__device__ __forceinline__ uint32_t split_read_status(const single_pass_params &p, int64_t t,
                                                     uint32_t epoch)
{
    if (t < 0)
        return DL_STATUS_P;
    const dl_word word = dl_gpu_load_word(p.descriptors + t);
    return dl_descriptor_status(&word, 1, epoch);
}

/*
 * The look-back of tile `tile` (> 0), by all 32 lanes of one warp over dlscan's window (lane l
 * watches slots l*K .. l*K+K-1, K = DL_SLOTS_PER_LANE; protocol.h, "Windows"), with the status
 * and the value of each slot read in two dependent steps. Returns the exclusive prefix in
 * every lane.
 */
template <typename T, typename Op>
__device__ __forceinline__ T split_lookback(const single_pass_params &p, int64_t tile, uint32_t epoch)
{
    constexpr int K = DL_SLOTS_PER_LANE;
    const int lane = threadIdx.x % 32;
    const T *aggregates = static_cast<const T *>(p.aggregates);
    const T *inclusives = static_cast<const T *>(p.inclusives);
    T running = Op::identity(); /* the windows read so far, folded */
    int64_t last = tile - 1;
    for (;;) {
        /* Step 1: read the window's status words until no slot is X. */
        uint32_t status[K];
        uint32_t backoff = DL_BACKOFF_FIRST_NS;
        for (;;) {
            bool any_x = false;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                status[k] = split_read_status(p, dl_window_tile(last, lane, k, K), epoch);
                any_x |= status[k] == DL_STATUS_X;
            }
            if (dl_window_action(__ballot_sync(0xffffffffu, any_x), 0) != DL_WINDOW_WAIT)
                break;
            __nanosleep(backoff);
            backoff = dl_backoff_next(backoff);
        }

        /* Step 2: the nearest P, if any, and the slots to fold: from it on, or all. */
        uint32_t p_slots = 0;
#pragma unroll
        for (int k = 0; k < K; ++k)
            p_slots |= (uint32_t)(status[k] == DL_STATUS_P) << k;
        const uint32_t p_lanes = __ballot_sync(0xffffffffu, p_slots != 0);
        const int first_lane = dl_window_first_lane(p_lanes);
        const int first_slot = __shfl_sync(0xffffffffu, dl_lane_first_slot(p_slots), first_lane);
        const uint32_t folded = dl_lane_fold_mask(lane, first_lane, first_slot, K);

        /* Step 3: the values of those slots, after a fence that pairs with each publisher's
         * fence between its value and its status; then fold and stop, or slide back. */
        __threadfence();
        T mine = Op::identity();
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int64_t t = dl_window_tile(last, lane, k, K);
            if ((folded >> k & 1) && t >= 0)
                mine = Op()(mine, split_load_value<T>((status[k] == DL_STATUS_P ? inclusives : aggregates) + t));
        }
        running = Op()(dl_warp_reduce<T, Op>(mine), running);
        if (dl_window_action(0, p_lanes) == DL_WINDOW_STOP)
            return running;
        last -= DL_WINDOW;
    }
}

/* All of warp 0: publishes the aggregate (tile 0: its P), looks back, publishes P. Returns the
 * tile's exclusive prefix in every lane. */
template <typename T, typename Op>
__device__ __forceinline__ T split_prefix(const single_pass_params &p, uint32_t tile,
                                          uint32_t epoch, T aggregate)
{
    const int lane = threadIdx.x % 32;
    if (tile == 0) {
        if (lane == 0)
            split_publish<T>(p, 0, epoch, DL_STATUS_P, aggregate);
        return Op::identity();
    }
    if (lane == 0)
        split_publish<T>(p, tile, epoch, DL_STATUS_A, aggregate);
    const T prefix = split_lookback<T, Op>(p, tile, epoch);
    if (lane == 0)
        split_publish<T>(p, tile, epoch, DL_STATUS_P, Op()(prefix, aggregate));
    return prefix;
}

/* ---------------------------------------------------------------- the kernel */

/*
 * single_pass_kernel: one block of 256 threads per tile, the tile drawn from the counter;
 * the tile is loaded into registers, scanned within the block, given its exclusive prefix by
 * warp 0 (LOOKBACK picks how), then scanned from it and stored. As dl_scan_kernel, with the
 * look-back replaced.
 */
template <typename T, typename Op, int LOOKBACK>
__global__ void __launch_bounds__(BENCH_TILE_THREADS) single_pass_kernel(const single_pass_params p)
{
    using S = bench_tile_shape<T>;
    __shared__ bench_tile_shared<T> sh;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    uint32_t tile, epoch;
    dl_tile_take(p.control, dl_probe(p.control), sh, &tile, &epoch);
    const uint64_t tile_base = (uint64_t)tile * S::tile_items;
    T v[S::rows][S::vec];
    bench_tile_load<T, Op>(static_cast<const T *>(p.in), tile_base, p.n, p.aligned,
                           true, v);
    T lane_exclusive[S::rows], row_total[S::rows];
    const T aggregate = bench_tile_scan_rows<T, Op>(sh, v, lane_exclusive, row_total);
    if (warp == 0) {
        T prefix = Op::identity();
        if (LOOKBACK == LOOKBACK_SPLIT)
            prefix = split_prefix<T, Op>(p, tile, epoch, aggregate);
        else if (lane == 0)
            prefix = LOOKBACK == LOOKBACK_CHAINED ? chained_prefix<T, Op>(p, tile, epoch, aggregate)
                                                  : serial_prefix<T, Op>(p, tile, epoch, aggregate);
        if (lane == 0)
            sh.tile_prefix = prefix;
    }
    __syncthreads();
    bench_tile_scan_store<T, Op>(static_cast<T *>(p.out), tile_base, p.n, p.aligned,
                                 true, sh, v, lane_exclusive, row_total);
    dl_epoch_finish(p.control, epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
}

/* ---------------------------------------------------------------- launcher */

typedef struct single_pass_state {
    int kind;                  /* enum bench_sum_kind */
    size_t max_n;              /* the most items a call may scan */
    dl_control *control;       /* counter and base 0, epoch DL_EPOCH_FIRST */
    dl_word *descriptors;      /* zeroed: every descriptor reads as X */
    uint64_t descriptor_words;
    void *aggregates, *inclusives; /* lookback-split only */
} single_pass_state;

template <typename T>
static int single_pass_launch(int lookback, const single_pass_state *s, const void *in, void *out,
                              size_t n, cudaStream_t stream)
{
    typedef dl_sum<T> Op;
    const size_t tile_items = bench_tile_shape<T>::tile_items;
    const single_pass_params p = {in, out, n, bench_aligned16(in, out), s->control, s->descriptors,
                                  s->descriptor_words, s->aggregates, s->inclusives};
    const dim3 grid((unsigned)((n + tile_items - 1) / tile_items)), block(BENCH_TILE_THREADS);
    switch (lookback) {
    case LOOKBACK_CHAINED: single_pass_kernel<T, Op, LOOKBACK_CHAINED><<<grid, block, 0, stream>>>(p); break;
    case LOOKBACK_SERIAL: single_pass_kernel<T, Op, LOOKBACK_SERIAL><<<grid, block, 0, stream>>>(p); break;
    default: single_pass_kernel<T, Op, LOOKBACK_SPLIT><<<grid, block, 0, stream>>>(p); break;
    }
    return (int)cudaGetLastError();
}

/* ---------------------------------------------------------------- variants */

/*
 * Storage for calls of up to max_n items, allocated and initialized once: a control block
 * (counter 0, first epoch) and zeroed descriptors. Calls need no reset: the block that draws
 * a call's last ticket resets the counter and moves the epoch on (tile.cuh), and in the one
 * call in 2^30 where the epoch wraps, dl_epoch_finish clears the descriptors.
 */
static int single_pass_prepare(int lookback, void **state, dlscan_type type, size_t max_n)
{
    single_pass_state *s = (single_pass_state *)calloc(1, sizeof(single_pass_state));
    *state = s;
    if (!s)
        return (int)cudaErrorMemoryAllocation;
    s->kind = bench_sum_kind_of(type);
    s->max_n = max_n;
    if (s->kind == BENCH_SUM_NONE)
        return (int)cudaErrorInvalidValue;
    const size_t size = bench_sum_size(s->kind);
    const size_t tile_items =
        size == 4 ? bench_tile_shape<uint32_t>::tile_items : bench_tile_shape<uint64_t>::tile_items;
    size_t tiles = (max_n + tile_items - 1) / tile_items;
    tiles = tiles ? tiles : 1;
    /* Packed descriptors take one word per tile for 4-byte values, two for 8-byte values;
     * split status words one. */
    s->descriptor_words = lookback == LOOKBACK_SPLIT ? tiles : tiles * (size / 4);

    dl_control initial;
    memset(&initial, 0, sizeof initial);
    initial.counter = dl_counter_word(0, DL_EPOCH_FIRST);
    cudaError_t error = cudaMalloc((void **)&s->control, sizeof(dl_control));
    if (error == cudaSuccess)
        error = cudaMemcpy(s->control, &initial, sizeof initial, cudaMemcpyHostToDevice);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&s->descriptors, s->descriptor_words * sizeof(dl_word));
    if (error == cudaSuccess)
        error = cudaMemset(s->descriptors, 0, s->descriptor_words * sizeof(dl_word));
    if (error == cudaSuccess && lookback == LOOKBACK_SPLIT)
        error = cudaMalloc(&s->aggregates, tiles * size);
    if (error == cudaSuccess && lookback == LOOKBACK_SPLIT)
        error = cudaMalloc(&s->inclusives, tiles * size);
    /* cudaMemset may return before it is done, and bench.c's stream does not wait for the
     * legacy default stream it ran on. */
    if (error == cudaSuccess)
        error = cudaDeviceSynchronize();
    return (int)error;
}

static int chained_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n)
{
    (void)op, (void)exclusive;
    return single_pass_prepare(LOOKBACK_CHAINED, state, type, max_n);
}

static int serial_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n)
{
    (void)op, (void)exclusive;
    return single_pass_prepare(LOOKBACK_SERIAL, state, type, max_n);
}

static int split_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n)
{
    (void)op, (void)exclusive;
    return single_pass_prepare(LOOKBACK_SPLIT, state, type, max_n);
}

static int single_pass_run(int lookback, void *state, const void *in, void *out, size_t n,
                           cudaStream_t stream)
{
    const single_pass_state *s = (const single_pass_state *)state;
    if (n == 0)
        return (int)cudaSuccess;
    if (n > s->max_n)
        return (int)cudaErrorInvalidValue;
    switch (s->kind) {
    case BENCH_SUM_U32: return single_pass_launch<uint32_t>(lookback, s, in, out, n, stream);
    case BENCH_SUM_U64: return single_pass_launch<uint64_t>(lookback, s, in, out, n, stream);
    case BENCH_SUM_F32: return single_pass_launch<float>(lookback, s, in, out, n, stream);
    case BENCH_SUM_F64: return single_pass_launch<double>(lookback, s, in, out, n, stream);
    default: return (int)cudaErrorInvalidValue;
    }
}

static int chained_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    return single_pass_run(LOOKBACK_CHAINED, state, in, out, n, stream);
}

static int serial_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    return single_pass_run(LOOKBACK_SERIAL, state, in, out, n, stream);
}

static int split_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    return single_pass_run(LOOKBACK_SPLIT, state, in, out, n, stream);
}

static void single_pass_release(void *state)
{
    single_pass_state *s = (single_pass_state *)state;
    if (s) {
        cudaFree(s->control);
        cudaFree(s->descriptors);
        cudaFree(s->aggregates);
        cudaFree(s->inclusives);
    }
    free(s);
}

static const bench_variant ablation_variants[] = {
    {"chained-scan", "StreamScan: dlscan's tile, each tile waits for its predecessor's prefix (2n traffic)",
     0, bench_inclusive_sum_only, chained_prepare, chained_run, single_pass_release},
    {"lookback-serial", "dlscan one block per tile, look-back by one thread, one predecessor at a time",
     0, bench_inclusive_sum_only, serial_prepare, serial_run, single_pass_release},
    {"lookback-split", "dlscan one block per tile, status and value in separate words with fences",
     0, bench_inclusive_sum_only, split_prepare, split_run, single_pass_release},
};

const bench_variant *bench_ablation_variants(int *count)
{
    *count = (int)(sizeof ablation_variants / sizeof ablation_variants[0]);
    return ablation_variants;
}
