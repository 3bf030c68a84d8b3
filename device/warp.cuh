/*
 * warp.cuh: what one warp does with values of any type T (4, 8 or 16 bytes), below the
 * look-back and the tile: T as 32-bit pieces (how descriptors carry it and shuffles move it),
 * shuffles, the operator traits that let min and max skip masks or use the hardware's warp
 * reduction (ops.cuh sets them), warp reductions and scans in a fixed order, a thread's
 * registers reduced as a tree, and the transposed warp scan.
 */
#ifndef DLSCAN_WARP_CUH
#define DLSCAN_WARP_CUH

#include <stdint.h>
#include <string.h>

#include "protocol.h"

/* A value of T as its 32-bit pieces (T is 4 to 32 bytes, a multiple of 4): how descriptors
 * carry it, and how warp shuffles move it. */
template <typename T> struct dl_pieces {
    static constexpr int count = (int)sizeof(T) / 4;
    static constexpr int words = DL_DESCRIPTOR_WORDS(count); /* its descriptor's (protocol.h) */
    uint32_t piece[count];
};

template <typename T> __device__ __forceinline__ dl_pieces<T> dl_to_pieces(T v)
{
    dl_pieces<T> p;
    memcpy(&p, &v, sizeof v);
    return p;
}

template <typename T> __device__ __forceinline__ T dl_from_pieces(const dl_pieces<T> &p)
{
    T v;
    memcpy(&v, &p, sizeof v);
    return v;
}

/* A 64-bit word's low bytes as a value of T (the scan's seed; T of 4 or 8 bytes). */
template <typename T> __device__ __forceinline__ T dl_value_from_bits(uint64_t bits)
{
    T v;
    memcpy(&v, &bits, sizeof v); /* little-endian: the low bytes come first */
    return v;
}

/* Warp shuffles of any T, a 32-bit piece at a time (what the hardware does for 64-bit
 * types too): `shuffle` moves one piece. */
template <typename T, typename SHUFFLE> __device__ __forceinline__ T dl_shfl_pieces(T v, SHUFFLE shuffle)
{
    dl_pieces<T> p = dl_to_pieces(v);
#pragma unroll
    for (int k = 0; k < p.count; ++k)
        p.piece[k] = shuffle(p.piece[k]);
    return dl_from_pieces<T>(p);
}

template <typename T> __device__ __forceinline__ T dl_shfl(T v, int source_lane)
{
    return dl_shfl_pieces(v, [=](uint32_t x) { return __shfl_sync(0xffffffffu, x, source_lane); });
}

template <typename T> __device__ __forceinline__ T dl_shfl_up(T v, int delta)
{
    return dl_shfl_pieces(v, [=](uint32_t x) { return __shfl_up_sync(0xffffffffu, x, delta); });
}

template <typename T> __device__ __forceinline__ T dl_shfl_down(T v, int delta)
{
    return dl_shfl_pieces(v, [=](uint32_t x) { return __shfl_down_sync(0xffffffffu, x, delta); });
}

/* Whether Op(x, x) == x for every x (min and max: ops.cuh says so). A warp's shuffle gives
 * a lane whose source is out of range its own value back, so for such operators the lanes
 * need not be masked: combining with themselves changes nothing, and the mask (a select
 * after every step, one more instruction where min and max are one) is saved. */
template <typename Op> struct dl_op_idempotent {
    static constexpr bool value = false;
};

/* Whether Op brings a warp-wide reduction of its own, Op::warp_reduce(v): the result in every
 * lane, sooner than the shuffle tree's (min and max but float32's, through the hardware's
 * redux.sync: ops.cuh). */
template <typename Op> struct dl_op_has_warp_reduce {
    static constexpr bool value = false;
};

/* Reduction over the first WIDTH lanes of a warp (a power of two; all 32 by default), in lane
 * order: a fixed tree that keeps the order (lane l takes l+1, then l+2, l+4, ...), so it
 * serves operators that do not commute, such as reduce-by-key's segmented one. Lane 0's
 * result, returned in every lane. On sm_80 and later, an operator's own warp reduction
 * (dl_op_has_warp_reduce) replaces the tree. */
template <typename T, typename Op, int WIDTH = 32> __device__ __forceinline__ T dl_warp_reduce(T v)
{
    const int lane = threadIdx.x % 32;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr bool own = dl_op_has_warp_reduce<Op>::value;
#else
    constexpr bool own = false;
#endif
    if constexpr (own) {
        return Op::warp_reduce(WIDTH == 32 || lane < WIDTH ? v : Op::identity());
    } else {
#pragma unroll
        for (int offset = 1; offset < WIDTH; offset *= 2) {
            const T later = dl_shfl_down(v, offset);
            if (dl_op_idempotent<Op>::value || lane + offset < 32)
                v = Op()(v, later);
        }
        return dl_shfl(v, 0);
    }
}

/* Inclusive scan over the 32 lanes of a warp (Kogge-Stone, a fixed order). */
template <typename T, typename Op> __device__ __forceinline__ T dl_warp_inclusive_scan(T x)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const T earlier = dl_shfl_up(x, offset);
        if (dl_op_idempotent<Op>::value || lane >= offset)
            x = Op()(earlier, x);
    }
    return x;
}

/* x[0] (+) ... (+) x[N-1] in a balanced tree of neighbours: log2(N) dependent steps where the
 * left-to-right chain takes N - 1 (still a fixed order). */
template <typename T, typename Op, int N>
__device__ __forceinline__ T dl_reduce_pairwise(const T (&x)[N])
{
    T y[N];
#pragma unroll
    for (int i = 0; i < N; ++i)
        y[i] = x[i];
#pragma unroll
    for (int width = N; width > 1; width = (width + 1) / 2) {
#pragma unroll
        for (int i = 0; i < width / 2; ++i)
            y[i] = Op()(y[2 * i], y[2 * i + 1]);
        if (width % 2)
            y[width / 2] = y[width - 1];
    }
    return y[0];
}

/*
 * The transposed warp scan: each lane's per-row partials lane_sum[r] to warp_prefix[r], the
 * exclusive prefix of the row's first item within the warp, and the warp's total (returned),
 * with one warp scan per pass where dl_tile_prefixes takes one per row. The warp's 32 x ROWS
 * lane partials go through shared memory (`scratch`, this warp's dl_warp_scratch), so that
 * each lane holds ROWS / PASSES consecutive ones in the tile's order; the lane scans those, a
 * warp scan joins the lanes, and the prefixes come back to the rows' owners the same way. A
 * pass takes ROWS / PASSES rows, so that the scratch stays near 1 KB per warp. For a 64-bit
 * tile of 8 rows in two passes, per thread: 24 applications of the operator and 28 shuffles
 * before the look-back and 8 applications after it, where the row scans take 47 and 112, and
 * 16 (bench/NOTES.md, "Transposed warp scan"). The scratch's padding (one slot after every 128
 * bytes) keeps both the row-major accesses (lane l, row r at r * 32 + l) and the run-major
 * ones (lane j, from j * ROWS / PASSES on) free of bank conflicts.
 */
template <typename T, int ROWS, int PASSES> struct dl_warp_scratch {
    static constexpr int rows = ROWS / PASSES; /* per pass */
    static constexpr int items = 32 * rows + 32 * rows * (int)sizeof(T) / 128;
    static_assert(ROWS % PASSES == 0, "whole rows per pass");
};
template <typename T> __device__ __forceinline__ int dl_scratch_index(int x)
{
    return x + x / (128 / (int)sizeof(T));
}

template <typename T, typename Op, int ROWS, int PASSES>
__device__ __forceinline__ T dl_warp_prefixes_transposed(const T (&lane_sum)[ROWS],
                                                         T (&warp_prefix)[ROWS], T *scratch)
{
    constexpr int RUN = dl_warp_scratch<T, ROWS, PASSES>::rows; /* a lane's run per pass */
    const int lane = threadIdx.x % 32;

    /* Each pass's rows in, each lane's run out; then the runs scanned. */
    T run[PASSES][RUN];
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
#pragma unroll
        for (int r = 0; r < RUN; ++r)
            scratch[dl_scratch_index<T>(r * 32 + lane)] = lane_sum[pass * RUN + r];
        __syncwarp();
#pragma unroll
        for (int i = 0; i < RUN; ++i)
            run[pass][i] = scratch[dl_scratch_index<T>(lane * RUN + i)];
        __syncwarp();
    }
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass)
#pragma unroll
        for (int i = 1; i < RUN; ++i)
            run[pass][i] = Op()(run[pass][i - 1], run[pass][i]);

    /* One warp scan per pass over the lanes' run totals. */
    T run_before[PASSES];
    T pass_total[PASSES];
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
        const T inclusive = dl_warp_inclusive_scan<T, Op>(run[pass][RUN - 1]);
        pass_total[pass] = dl_shfl(inclusive, 31);
        const T before = dl_shfl_up(inclusive, 1);
        run_before[pass] = lane == 0 ? Op::identity() : before;
    }

    /* Each lane writes the prefixes of the slots it read; the rows' owners read them. */
    T pass_start = pass_total[0]; /* the warp's items before the next pass */
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
        const T start = pass == 0 ? run_before[0] : Op()(pass_start, run_before[pass]);
        scratch[dl_scratch_index<T>(lane * RUN)] = start;
#pragma unroll
        for (int i = 1; i < RUN; ++i)
            scratch[dl_scratch_index<T>(lane * RUN + i)] = Op()(start, run[pass][i - 1]);
        __syncwarp();
#pragma unroll
        for (int r = 0; r < RUN; ++r)
            warp_prefix[pass * RUN + r] = scratch[dl_scratch_index<T>(r * 32 + lane)];
        __syncwarp();
        if (pass > 0)
            pass_start = Op()(pass_start, pass_total[pass]);
    }
    return pass_start;
}

#endif /* DLSCAN_WARP_CUH */
