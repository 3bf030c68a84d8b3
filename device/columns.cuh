/*
 * columns.cuh: the tile of a scan along an axis whose items lie apart (columns: axis_stride > 1),
 * one block per tile, with a look-back per column. axis_kernel.cu instantiates it for the built-in
 * types and operators, user_kernel.cuh for a user operator's states.
 *
 * The items are arrays [outer][length][stride], and each of the outer x stride columns is one scan.
 * A tile is `rows` consecutive rows of `lanes` neighbouring columns of one array (launch.h,
 * dl_axis_shape): all the columns of a narrow array, or a strip of a wider one (policy.h's
 * DL_AXIS_STRIP columns where they divide the array's, DL_AXIS_NARROW_STRIP for an array narrower
 * than that, else up to 256). The block's threads are `groups` groups of `lanes`: thread (g, j)
 * holds rows g x R .. g x R + R - 1 of column j in registers (R: policy.h's DL_AXIS_ROWS) and scans
 * them; the groups' totals are scanned down each column in shared memory; then the first group
 * looks back, one thread per column. Each (tile, column) has a descriptor of its own, protocol.h's
 * words with one value, so a column's tiles form a plain scan's chain and the X/A/P protocol is the
 * plain scan's: a tile publishes its column's aggregate A, folds its predecessors' descriptors back
 * to the nearest P, and publishes its inclusive prefix P; the first row block publishes P at once,
 * from the init.
 * Tiles are taken from the handle's counter in the order row block x chains + chain, so a tile's
 * predecessor in its column (`chains` tickets before it) belongs to a block already running.
 *
 * Loads and stores: with 32 columns and more, a warp's accesses to one row are consecutive
 * items, and each thread loads its rows straight into registers, as it does for strips of 8 (a
 * warp's access: four rows' whole 32-byte sectors); other narrow arrays (fewer than
 * DL_AXIS_NARROW_LANES columns, one tile wide) are read and written a whole tile at a time,
 * consecutive items through shared memory, where each thread then reads its column's rows (an odd
 * count of rows a thread: no bank conflicts for power-of-two widths).
 *
 * The look-back walks one predecessor at a time per column: most tiles find their predecessor
 * P already. Float sums fold in the order the look-back meets the descriptors, as the plain
 * scans do by default: bit-for-bit reproducible only where the tiles publish in one order.
 *
 * What the tile reads and writes comes from ITEMS, a type with
 *   value, op                  the accumulator (4 to 32 bytes) and its operator (op::identity());
 *   value load(uint64_t i)     item i as a value;
 *   void store(uint64_t i, value v), total(uint64_t k, value v)   output i, column k's total;
 *   bool totals                whether the call takes the columns' totals;
 *   value seed()               the host's init, where every column starts.
 */
#ifndef DLSCAN_COLUMNS_CUH
#define DLSCAN_COLUMNS_CUH

#include <stdint.h>

#include "block.cuh"
#include "launch.h"

template <typename T, bool NARROW> __host__ __device__ constexpr int dl_axis_rows()
{
    return DL_AXIS_ROWS(sizeof(T), NARROW);
}

template <typename T, bool NARROW> struct dl_axis_shared {
    uint32_t tile;
    uint32_t epoch;
    uint32_t ticket_base;
    T partial[DL_AXIS_THREADS]; /* each thread's total, then the groups' inclusive scan */
    T prefix[DL_AXIS_THREADS];  /* each column's exclusive prefix before the tile */
    T stage[NARROW ? DL_AXIS_THREADS * dl_axis_rows<T, NARROW>() : 1]; /* a narrow tile's items */
};

/* The exclusive prefix of column j's values before tile `tile`: the look-back of one thread over
 * the descriptors of column j in the tiles chains, 2 chains, ... before it, nearest first, back
 * to the nearest P (every chain's first row block publishes one). */
template <typename T, typename Op>
__device__ __forceinline__ T dl_axis_look_back(const dl_axis_params &p, uint32_t tile, uint32_t j,
                                               uint32_t epoch)
{
    constexpr int words = dl_pieces<T>::words;
    T acc = Op::identity();
    uint64_t before = (uint64_t)tile - p.chains;
    uint32_t backoff = DL_BACKOFF_FIRST_NS;
    for (;;) {
        T value;
        const uint32_t status = dl_gpu_read<T, Op>(
            p.scan.descriptors + before * p.shape.lanes * words, (int64_t)j, epoch, &value);
        if (status == DL_STATUS_X) {
            __nanosleep(backoff);
            backoff = dl_backoff_next(backoff);
            continue;
        }
        acc = Op()(value, acc);
        if (status == DL_STATUS_P)
            return acc;
        before -= p.chains;
    }
}

/* One tile of a column scan: the block's whole work. */
template <typename ITEMS, bool NARROW>
__device__ __forceinline__ void dl_axis_tile(const dl_axis_params &p, const ITEMS &items)
{
    typedef typename ITEMS::value T;
    typedef typename ITEMS::op Op;
    constexpr int R = dl_axis_rows<T, NARROW>();
    constexpr int words = dl_pieces<T>::words;
    __shared__ dl_axis_shared<T, NARROW> sh;
    const dl_probe probe(p.scan.control);
    dl_grid_dependency();
    uint32_t tile, epoch;
    dl_tile_take(p.scan.control, probe, sh, &tile, &epoch);

    const uint32_t lanes = p.shape.lanes, groups = p.shape.groups;
    const uint32_t t = threadIdx.x, g = t / lanes, j = t % lanes;
    const uint32_t chain = tile % p.chains, block_row = tile / p.chains;
    const uint64_t array = chain / p.strips, column = (uint64_t)(chain % p.strips) * lanes;
    const uint64_t first_row = (uint64_t)block_row * p.shape.rows;
    const uint64_t rows_left = p.length - first_row;
    const uint32_t tile_rows = rows_left < p.shape.rows ? (uint32_t)rows_left : p.shape.rows;
    const uint64_t columns_left = p.stride - column;
    const uint32_t width = columns_left < lanes ? (uint32_t)columns_left : lanes;
    const bool on = g < groups && j < width; /* this thread has a column */
    /* Item (row, j) of the tile: array_first + row x stride + j. */
    const uint64_t array_first = (array * p.length + first_row) * p.stride + column;

    /* This thread's rows, scanned in registers. */
    T v[R];
    if (NARROW) { /* lanes == stride: the tile is tile_rows x stride consecutive items */
        const uint32_t count = tile_rows * lanes;
        for (uint32_t i = t; i < count; i += DL_AXIS_THREADS)
            sh.stage[i] = items.load(array_first + i);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const uint32_t row = g * R + k;
            v[k] = on && row < tile_rows ? sh.stage[row * lanes + j] : Op::identity();
        }
    } else {
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const uint32_t row = g * R + k;
            v[k] = on && row < tile_rows ? items.load(array_first + (uint64_t)row * p.stride + j) : Op::identity();
        }
    }
#pragma unroll
    for (int k = 1; k < R; ++k)
        v[k] = Op()(v[k - 1], v[k]);

    /* The groups' totals, scanned down each column (Hillis-Steele over the groups). */
    sh.partial[t] = v[R - 1];
    __syncthreads();
    for (uint32_t d = 1; d < groups; d *= 2) {
        const bool takes = g < groups && g >= d;
        const T x = takes ? sh.partial[t - d * lanes] : Op::identity();
        __syncthreads();
        if (takes)
            sh.partial[t] = Op()(x, sh.partial[t]);
        __syncthreads();
    }
    const T group_prefix = g > 0 && g < groups ? sh.partial[t - lanes] : Op::identity();

    /* The first group looks back, one thread per column. */
    if (g == 0 && j < width) {
        const T aggregate = sh.partial[(groups - 1) * lanes + j];
        dl_word *mine = p.scan.descriptors + (uint64_t)tile * lanes * words;
        T prefix;
        probe.pause(tile, 1);
        if (block_row == 0) {
            prefix = items.seed();
        } else {
            dl_gpu_publish<T>(mine, j, epoch, DL_STATUS_A, aggregate);
            prefix = dl_axis_look_back<T, Op>(p, tile, j, epoch);
        }
        dl_gpu_publish<T>(mine, j, epoch, DL_STATUS_P, Op()(prefix, aggregate));
        sh.prefix[j] = prefix;
    }
    __syncthreads();

    /* The rows from the prefix, stored; the column's last row leaves its total. */
    if (on) {
        const T before = Op()(sh.prefix[j], group_prefix);
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const uint32_t row = g * R + k;
            const T inclusive = Op()(before, v[k]);
            const T result = p.scan.exclusive ? (k == 0 ? before : Op()(before, v[k - 1])) : inclusive;
            if (row < tile_rows) {
                if (NARROW)
                    sh.stage[row * lanes + j] = result;
                else
                    items.store(array_first + (uint64_t)row * p.stride + j, result);
                if (items.totals && first_row + row + 1 == p.length)
                    items.total(array * p.stride + column + j, inclusive);
            }
        }
    }
    if (NARROW) {
        __syncthreads();
        const uint32_t count = tile_rows * lanes;
        for (uint32_t i = t; i < count; i += DL_AXIS_THREADS)
            items.store(array_first + i, sh.stage[i]);
    }
    dl_epoch_finish(p.scan.control, epoch, sh.ticket_base, p.scan.descriptors, p.scan.descriptor_words);
}

#endif /* DLSCAN_COLUMNS_CUH */
