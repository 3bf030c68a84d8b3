/*
 * rows.cuh: rows of a scan along an axis of stride 1 (n / length rows of `length` items each),
 * found from the index alone: an item's place in its row and its row without a 64-bit division,
 * which of a thread's items start and end a row, and a tile's last row start. The segmented
 * scan's rows (segment_kernel.cu) and the user operators' program of rows (user_kernel.cuh,
 * which NVRTC compiles at run time) share them. `inverse` is 1 / length as a double, which the
 * host computes once a call.
 */
#ifndef DLSCAN_ROWS_CUH
#define DLSCAN_ROWS_CUH

#include <stdint.h>

/* i / length without a 64-bit division: the quotient from the double `inverse` (rounded), exact
 * to one either way for i < 2^51, then corrected. */
__device__ __forceinline__ uint64_t dl_row_of(uint64_t i, uint64_t length, double inverse)
{
    const uint64_t q = (uint64_t)((double)i * inverse);
    const int64_t r = (int64_t)(i - q * length);
    return r < 0 ? q - 1 : r >= (int64_t)length ? q + 1 : q;
}

/* i % length, the same way. */
__device__ __forceinline__ uint64_t dl_row_place(uint64_t i, uint64_t length, double inverse)
{
    return i - dl_row_of(i, length, inverse) * length;
}

/* The heads of this thread's items (where the call's index divides by the length) and, in
 * *ends, the items that end a row (the next index divides by it), bit r * VEC + e (tile.cuh's
 * layout: row r's VEC items of lane l from warp_base + (r * 32 + l) * VEC, as dl_key_heads sets
 * them); items at or past n are neither. Nothing is read, and nothing divides: each row of VEC
 * items finds its first item's place in its row (dl_row_place); in rows of at least VEC items
 * the items left in that row then place its end and the next row's head, at most one of each;
 * shorter rows (1 to VEC - 1 items) take a remainder of small numbers. warp_base: the warp's
 * first item. */
template <int ROWS, int VEC>
__device__ __forceinline__ uint32_t dl_row_heads(uint64_t warp_base, uint64_t n, uint64_t length,
                                                 double inverse, uint32_t *ends)
{
    const int lane = threadIdx.x % 32;
    uint32_t heads = 0, last = 0;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const uint64_t first = warp_base + (uint64_t)(r * 32 + lane) * VEC;
        const uint64_t place = dl_row_place(first, length, inverse);
        /* the row's items below n, as a mask */
        const uint32_t in = first >= n ? 0u : n - first >= VEC ? (1u << VEC) - 1 : (1u << (uint32_t)(n - first)) - 1;
        uint32_t h = 0, l = 0;
        if (length >= VEC) {
            const uint64_t left = length - place; /* items from `first` to its row's end: 1 .. length */
            h = (place == 0 ? 1u : 0u) | (left < VEC ? 1u << (uint32_t)left : 0u);
            l = left <= VEC ? 1u << (uint32_t)(left - 1) : 0u;
        } else {
            const uint32_t small = (uint32_t)length;
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                h |= (uint32_t)(((uint32_t)place + e) % small == 0) << e;
                l |= (uint32_t)(((uint32_t)place + e + 1) % small == 0) << e;
            }
        }
        heads |= (h & in) << (r * VEC);
        last |= (l & in) << (r * VEC);
    }
    *ends = last;
    return heads;
}

/* The tile index of the last head among `count` items from `base`, or -1. */
__device__ __forceinline__ int dl_rows_last_head(uint64_t base, int count, uint64_t length, double inverse)
{
    const uint64_t end = base + (uint64_t)count - 1;
    const uint64_t head = end - dl_row_place(end, length, inverse);
    return head >= base ? (int)(head - base) : -1;
}

#endif /* DLSCAN_ROWS_CUH */
