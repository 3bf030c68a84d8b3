/*
 * baselines.cu: the older multi-pass scans as bench variants, timed by bench.c next to
 * dlscan, CUB and memcpy (each is validated against the CPU reference first). Inclusive sums
 * of every type (integer sums run on the unsigned type of the same width, so they wrap),
 * any n from 1 to the max_n given to prepare().
 *
 *   hillis-steele     GPU Gems 3 ch. 39's naive scan: each chunk of 512 items scanned in
 *                     shared memory in log2(512) double-buffered steps (x[k] += x[k - 2^d]),
 *                     chunk totals scanned the same way (recursively), added back;
 *   blelloch          GPU Gems 3 ch. 39's work-efficient scan: each chunk of 1024 items
 *                     scanned by an up-sweep and a down-sweep over a tree in shared memory
 *                     (one padding word after every 32), chunk totals scanned the same way
 *                     (recursively), added back;
 *   reduce-then-scan  reduce each tile (dlscan's tile: 8192 4-byte or 4096 8-byte items) to
 *                     its total, scan the totals (recursively, the same way; one block at the
 *                     end), rescan each tile seeded with its prefix.
 *
 * DRAM traffic per call, in units of n * sizeof(T) (a copy, and the single-pass floor, is 2):
 * hillis-steele and blelloch 4 (scan: read + write; add: read + write), reduce-then-scan 3
 * (reduce: read; rescan: read + write); the chunk totals add under 1%.
 *
 * The single-pass baselines (chained-scan, lookback-serial, lookback-split) are in
 * ablations.cu; bench_baseline_variants returns all six. Shared pieces: baseline_tile.cuh.
 *
 *   meson compile -C build && build/bench/bench --variants memcpy,cub,hillis-steele,blelloch,reduce-then-scan
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "baseline_tile.cuh"
#include "variants.h"

#define HILLIS_STEELE_THREADS 512 /* one item per thread: a chunk is 512 items */
#define BLELLOCH_THREADS 512      /* two items per thread: a chunk is 1024 items */
#define BLELLOCH_CHUNK (2 * BLELLOCH_THREADS)
#define ADD_THREADS 256

/* GPU Gems' bank-conflict padding: one word after every 32 (the number of banks). */
#define BLELLOCH_PADDED(i) ((i) + ((i) >> 5))

/* ---------------------------------------------------------------- GPU kernels */

/*
 * hillis_steele_chunk_kernel: one block of 512 threads per chunk of 512 items, one item per
 * thread. Step d (offset 2^d) reads one buffer and writes the other, so one barrier per step
 * separates its reads from the next step's writes. Writes the chunk's inclusive scan to out
 * (in may equal out: each thread reads and writes only its own item) and, unless chunk_sums
 * is NULL, the chunk's total to chunk_sums[chunk]. Items past n count as the identity.
 */
template <typename T, typename Op>
__global__ void __launch_bounds__(HILLIS_STEELE_THREADS)
    hillis_steele_chunk_kernel(const T *in, T *out, T *chunk_sums, uint64_t n)
{
    __shared__ T buffer[2][HILLIS_STEELE_THREADS];
    const int t = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * HILLIS_STEELE_THREADS + t;
    int current = 0;
    buffer[current][t] = i < n ? in[i] : Op::identity();
    __syncthreads();
    for (int offset = 1; offset < HILLIS_STEELE_THREADS; offset *= 2) {
        const T mine = buffer[current][t];
        buffer[1 - current][t] = t >= offset ? Op()(buffer[current][t - offset], mine) : mine;
        current = 1 - current;
        __syncthreads();
    }
    const T inclusive = buffer[current][t];
    if (i < n)
        out[i] = inclusive;
    if (chunk_sums && t == HILLIS_STEELE_THREADS - 1)
        chunk_sums[blockIdx.x] = inclusive;
}

/*
 * blelloch_chunk_kernel: one block of 512 threads per chunk of 1024 items; thread t holds items
 * t and t + 512 (coalesced loads). The up-sweep leaves each subtree's total at its last index
 * and the chunk's total at the root; the root is set to the identity and the down-sweep hands
 * each left child its parent's prefix and each right child the parent's prefix (+) the left
 * child's total, which leaves the exclusive scan; adding each item gives the inclusive one.
 * Writes it to out (in may equal out: each thread reads and writes only its own two items)
 * and, unless chunk_sums is NULL, the chunk's total to chunk_sums[chunk].
 */
template <typename T, typename Op>
__global__ void __launch_bounds__(BLELLOCH_THREADS)
    blelloch_chunk_kernel(const T *in, T *out, T *chunk_sums, uint64_t n)
{
    __shared__ T tree[BLELLOCH_PADDED(BLELLOCH_CHUNK - 1) + 1];
    const int t = threadIdx.x;
    const uint64_t base = (uint64_t)blockIdx.x * BLELLOCH_CHUNK;
    const int low = t, high = t + BLELLOCH_THREADS;
    const T x_low = base + low < n ? in[base + low] : Op::identity();
    const T x_high = base + high < n ? in[base + high] : Op::identity();
    tree[BLELLOCH_PADDED(low)] = x_low;
    tree[BLELLOCH_PADDED(high)] = x_high;

    /* Up-sweep: at stride s, node (2t+2)s-1 takes the total of its left child (2t+1)s-1. */
    int stride = 1;
    for (int active = BLELLOCH_CHUNK / 2; active > 0; active /= 2) {
        __syncthreads();
        if (t < active) {
            const int left = stride * (2 * t + 1) - 1, right = stride * (2 * t + 2) - 1;
            tree[BLELLOCH_PADDED(right)] =
                Op()(tree[BLELLOCH_PADDED(left)], tree[BLELLOCH_PADDED(right)]);
        }
        stride *= 2;
    }

    /* The root: thread 0 wrote it in the last round, so it reads it without a barrier. */
    T total = Op::identity();
    if (t == 0) {
        total = tree[BLELLOCH_PADDED(BLELLOCH_CHUNK - 1)];
        tree[BLELLOCH_PADDED(BLELLOCH_CHUNK - 1)] = Op::identity();
    }

    /* Down-sweep: the same nodes from the root down (stride is BLELLOCH_CHUNK here). */
    for (int active = 1; active < BLELLOCH_CHUNK; active *= 2) {
        stride /= 2;
        __syncthreads();
        if (t < active) {
            const int left = stride * (2 * t + 1) - 1, right = stride * (2 * t + 2) - 1;
            const T left_total = tree[BLELLOCH_PADDED(left)];
            const T parent_prefix = tree[BLELLOCH_PADDED(right)];
            tree[BLELLOCH_PADDED(left)] = parent_prefix;
            tree[BLELLOCH_PADDED(right)] = Op()(parent_prefix, left_total);
        }
    }
    __syncthreads();

    if (base + low < n)
        out[base + low] = Op()(tree[BLELLOCH_PADDED(low)], x_low);
    if (base + high < n)
        out[base + high] = Op()(tree[BLELLOCH_PADDED(high)], x_high);
    if (chunk_sums && t == 0)
        chunk_sums[blockIdx.x] = total;
}

/*
 * add_chunk_prefix_kernel: one block of 256 threads per chunk after the first, striding over
 * the chunk: adds the inclusive scan of the chunk totals before it (scanned_chunk_sums[c - 1])
 * to every item of chunk c.
 */
template <typename T, typename Op>
__global__ void __launch_bounds__(ADD_THREADS)
    add_chunk_prefix_kernel(T *out, const T *scanned_chunk_sums, uint64_t n, uint32_t chunk_items)
{
    const uint64_t chunk = (uint64_t)blockIdx.x + 1;
    const T prefix = scanned_chunk_sums[chunk - 1];
    const uint64_t base = chunk * chunk_items;
    for (uint32_t k = threadIdx.x; k < chunk_items; k += ADD_THREADS) {
        const uint64_t i = base + k;
        if (i < n)
            out[i] = Op()(prefix, out[i]);
    }
}

/*
 * reduce_tile_kernel: one block of 256 threads per tile (dlscan's tile shape): each thread
 * reduces its rows as they load, then a warp reduction and one over the warps; writes the
 * tile's total to tile_sums[tile]. Items past n count as the identity.
 */
template <typename T, typename Op>
__global__ void __launch_bounds__(BENCH_TILE_THREADS)
    reduce_tile_kernel(const T *in, uint64_t n, int aligned, T *tile_sums)
{
    using S = bench_tile_shape<T>;
    __shared__ T warp_totals[S::warps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint64_t tile_base = (uint64_t)blockIdx.x * S::tile_items;
    T acc = Op::identity();
#pragma unroll
    for (int r = 0; r < S::rows; ++r) {
        T row[S::vec];
        bench_tile_load_row<T, Op>(in, bench_tile_row_index<T>(tile_base, r), n, aligned, false, row);
#pragma unroll
        for (int e = 0; e < S::vec; ++e)
            acc = Op()(acc, row[e]);
    }
    acc = dl_warp_reduce<T, Op>(acc);
    if (lane == 0)
        warp_totals[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        T total = lane < S::warps ? warp_totals[lane] : Op::identity();
        total = dl_warp_reduce<T, Op>(total);
        if (lane == 0)
            tile_sums[blockIdx.x] = total;
    }
}

/*
 * scan_tile_kernel: one block of 256 threads per tile (dlscan's tile shape and block scan):
 * scans the tile seeded with the inclusive scan of the tile totals before it
 * (scanned_tile_sums[tile - 1]; no seed when scanned_tile_sums is NULL: a single tile) and
 * writes it. in may equal out: each thread reads all its items before it writes any.
 * Plain loads: reduce_tile_kernel read the same data, which stays in L2 at small sizes.
 */
template <typename T, typename Op>
__global__ void __launch_bounds__(BENCH_TILE_THREADS)
    scan_tile_kernel(const T *in, T *out, uint64_t n, int aligned, const T *scanned_tile_sums)
{
    using S = bench_tile_shape<T>;
    __shared__ bench_tile_shared<T> sh;
    const uint32_t tile = blockIdx.x;
    const uint64_t tile_base = (uint64_t)tile * S::tile_items;
    T seed = Op::identity();
    if (threadIdx.x == 0 && scanned_tile_sums && tile > 0)
        seed = scanned_tile_sums[tile - 1];
    T v[S::rows][S::vec];
    bench_tile_load<T, Op>(in, tile_base, n, aligned, false, v);
    T lane_exclusive[S::rows], row_total[S::rows];
    bench_tile_scan_rows<T, Op>(sh, v, lane_exclusive, row_total);
    if (threadIdx.x == 0)
        sh.tile_prefix = seed;
    __syncthreads();
    bench_tile_scan_store<T, Op>(out, tile_base, n, aligned, false, sh, v, lane_exclusive, row_total);
}

/* ---------------------------------------------------------------- launchers */

enum chunk_scan { CHUNK_SCAN_HILLIS_STEELE, CHUNK_SCAN_BLELLOCH };

static size_t chunk_items_of(int algorithm)
{
    return algorithm == CHUNK_SCAN_HILLIS_STEELE ? HILLIS_STEELE_THREADS : BLELLOCH_CHUNK;
}

/*
 * Scans n >= 1 items of in into out (in may equal out) as GPU Gems 3 does for arbitrary
 * sizes: each chunk scanned by `algorithm`, writing its total to `sums`; the totals scanned
 * the same way, in place, with the levels after them in the storage after them (recursion
 * ends at a level of one chunk); each chunk's scanned prefix added back.
 */
template <typename T>
static int chunk_scan_recursive(int algorithm, const T *in, T *out, size_t n, T *sums,
                                cudaStream_t stream)
{
    typedef dl_sum<T> Op;
    const size_t chunk_items = chunk_items_of(algorithm);
    const size_t chunks = (n + chunk_items - 1) / chunk_items;
    T *chunk_sums = chunks > 1 ? sums : NULL;
    if (algorithm == CHUNK_SCAN_HILLIS_STEELE)
        hillis_steele_chunk_kernel<T, Op>
            <<<(unsigned)chunks, HILLIS_STEELE_THREADS, 0, stream>>>(in, out, chunk_sums, n);
    else
        blelloch_chunk_kernel<T, Op><<<(unsigned)chunks, BLELLOCH_THREADS, 0, stream>>>(in, out, chunk_sums, n);
    int error = (int)cudaGetLastError();
    if (error || chunks == 1)
        return error;
    error = chunk_scan_recursive<T>(algorithm, chunk_sums, chunk_sums, chunks,
                                    sums + bench_level_round(chunks), stream);
    if (error)
        return error;
    add_chunk_prefix_kernel<T, Op>
        <<<(unsigned)(chunks - 1), ADD_THREADS, 0, stream>>>(out, chunk_sums, n, (uint32_t)chunk_items);
    return (int)cudaGetLastError();
}

/*
 * Reduce-then-scan of n >= 1 items (in may equal out): one tile is one rescan with no seed;
 * more are reduced into `sums`, the tile totals reduce-then-scanned in place (the levels after
 * them in the storage after them), and the tiles rescanned seeded with them.
 */
template <typename T>
static int reduce_then_scan_recursive(const T *in, T *out, size_t n, T *sums, cudaStream_t stream)
{
    typedef dl_sum<T> Op;
    const size_t tile_items = bench_tile_shape<T>::tile_items;
    const size_t tiles = (n + tile_items - 1) / tile_items;
    const int aligned = bench_aligned16(in, out);
    if (tiles == 1) {
        scan_tile_kernel<T, Op><<<1, BENCH_TILE_THREADS, 0, stream>>>(in, out, n, aligned, NULL);
        return (int)cudaGetLastError();
    }
    reduce_tile_kernel<T, Op><<<(unsigned)tiles, BENCH_TILE_THREADS, 0, stream>>>(in, n, aligned, sums);
    int error = (int)cudaGetLastError();
    if (error)
        return error;
    error = reduce_then_scan_recursive<T>(sums, sums, tiles, sums + bench_level_round(tiles), stream);
    if (error)
        return error;
    scan_tile_kernel<T, Op><<<(unsigned)tiles, BENCH_TILE_THREADS, 0, stream>>>(in, out, n, aligned, sums);
    return (int)cudaGetLastError();
}

/* ---------------------------------------------------------------- variants */

typedef struct baseline_state {
    int kind;     /* enum bench_sum_kind */
    size_t max_n; /* the most items a call may scan */
    void *sums;   /* per-chunk (per-tile) totals, all levels */
} baseline_state;

enum baseline_algorithm { BASELINE_HILLIS_STEELE, BASELINE_BLELLOCH, BASELINE_REDUCE_THEN_SCAN };

static size_t baseline_chunk_items(int algorithm, int kind)
{
    switch (algorithm) {
    case BASELINE_HILLIS_STEELE: return chunk_items_of(CHUNK_SCAN_HILLIS_STEELE);
    case BASELINE_BLELLOCH: return chunk_items_of(CHUNK_SCAN_BLELLOCH);
    default:
        return bench_sum_size(kind) == 4 ? bench_tile_shape<uint32_t>::tile_items
                                         : bench_tile_shape<uint64_t>::tile_items;
    }
}

static int baseline_prepare(int algorithm, void **state, dlscan_type type, size_t max_n)
{
    baseline_state *s = (baseline_state *)calloc(1, sizeof(baseline_state));
    *state = s;
    if (!s)
        return (int)cudaErrorMemoryAllocation;
    s->kind = bench_sum_kind_of(type);
    s->max_n = max_n;
    if (s->kind == BENCH_SUM_NONE)
        return (int)cudaErrorInvalidValue;
    const size_t items = bench_level_items(max_n, baseline_chunk_items(algorithm, s->kind));
    return (int)cudaMalloc(&s->sums, (items ? items : 1) * bench_sum_size(s->kind));
}

static int hillis_steele_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive,
                                 size_t max_n)
{
    (void)op, (void)exclusive;
    return baseline_prepare(BASELINE_HILLIS_STEELE, state, type, max_n);
}

static int blelloch_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n)
{
    (void)op, (void)exclusive;
    return baseline_prepare(BASELINE_BLELLOCH, state, type, max_n);
}

static int reduce_then_scan_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive,
                                    size_t max_n)
{
    (void)op, (void)exclusive;
    return baseline_prepare(BASELINE_REDUCE_THEN_SCAN, state, type, max_n);
}

template <typename T>
static int baseline_run_typed(int algorithm, const baseline_state *s, const void *in, void *out,
                              size_t n, cudaStream_t stream)
{
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    T *sums = static_cast<T *>(s->sums);
    switch (algorithm) {
    case BASELINE_HILLIS_STEELE:
        return chunk_scan_recursive<T>(CHUNK_SCAN_HILLIS_STEELE, x, y, n, sums, stream);
    case BASELINE_BLELLOCH: return chunk_scan_recursive<T>(CHUNK_SCAN_BLELLOCH, x, y, n, sums, stream);
    default: return reduce_then_scan_recursive<T>(x, y, n, sums, stream);
    }
}

static int baseline_run(int algorithm, void *state, const void *in, void *out, size_t n,
                        cudaStream_t stream)
{
    const baseline_state *s = (const baseline_state *)state;
    if (n == 0)
        return (int)cudaSuccess;
    if (n > s->max_n)
        return (int)cudaErrorInvalidValue;
    switch (s->kind) {
    case BENCH_SUM_U32: return baseline_run_typed<uint32_t>(algorithm, s, in, out, n, stream);
    case BENCH_SUM_U64: return baseline_run_typed<uint64_t>(algorithm, s, in, out, n, stream);
    case BENCH_SUM_F32: return baseline_run_typed<float>(algorithm, s, in, out, n, stream);
    case BENCH_SUM_F64: return baseline_run_typed<double>(algorithm, s, in, out, n, stream);
    default: return (int)cudaErrorInvalidValue;
    }
}

static int hillis_steele_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    return baseline_run(BASELINE_HILLIS_STEELE, state, in, out, n, stream);
}

static int blelloch_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    return baseline_run(BASELINE_BLELLOCH, state, in, out, n, stream);
}

static int reduce_then_scan_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    return baseline_run(BASELINE_REDUCE_THEN_SCAN, state, in, out, n, stream);
}

static void baseline_release(void *state)
{
    baseline_state *s = (baseline_state *)state;
    if (s)
        cudaFree(s->sums);
    free(s);
}

static const bench_variant classic_variants[] = {
    {"hillis-steele", "GPU Gems 3 naive scan, 512-item chunks, recursive on chunk totals (4n traffic)",
     0, bench_inclusive_sum_only, hillis_steele_prepare, hillis_steele_run, baseline_release},
    {"blelloch", "GPU Gems 3 work-efficient scan, 1024-item chunks, recursive on chunk totals (4n traffic)",
     0, bench_inclusive_sum_only, blelloch_prepare, blelloch_run, baseline_release},
    {"reduce-then-scan", "reduce tiles, scan tile totals, rescan tiles; dlscan's tile (3n traffic)", 0,
     bench_inclusive_sum_only, reduce_then_scan_prepare, reduce_then_scan_run, baseline_release},
};

#define CLASSIC_COUNT (int)(sizeof classic_variants / sizeof classic_variants[0])
#define BASELINES_MAX 8

extern "C" const bench_variant *bench_baseline_variants(int *count)
{
    static bench_variant all[BASELINES_MAX];
    static int all_count = 0;
    if (all_count == 0) {
        for (int i = 0; i < CLASSIC_COUNT; ++i)
            all[all_count++] = classic_variants[i];
        int ablation_count = 0;
        const bench_variant *ablations = bench_ablation_variants(&ablation_count);
        for (int i = 0; i < ablation_count && all_count < BASELINES_MAX; ++i)
            all[all_count++] = ablations[i];
    }
    *count = all_count;
    return all;
}
