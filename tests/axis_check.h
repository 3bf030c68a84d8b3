/*
 * axis_check.h: the tests of scans along an axis (dlscan_scan with axis_length, axis_stride and
 * d_totals) written for any backend, on scan_check.h's memory functions and reference: rows
 * (stride 1) and columns (stride > 1) of every length around the tiles, several strides and
 * outer counts, every pair and operator, inclusive and exclusive, with and without init and
 * d_totals, in place; the refusals.
 *
 * The reference knows nothing of tiles: it gathers each scan's items (scan (o, j): items
 * o x length x stride + k x stride + j) and checks them as a plain scan of their own from the
 * init (scan_check_pair_output: integers exact, float min and max exact, float sums against an
 * extended-precision sum within scan_check.c's tolerance), the scan's total in d_totals with
 * them (an inclusive scan's total equals its last item). The float tolerance: a row as a
 * segment (counted from the row's first item's place in its segmented tile, as
 * segment_check.c counts a segment's); a column as a fold down the column, one addition per
 * item (the tolerance's tile taken as at least the column's length). A separate d_out and
 * d_totals have poisoned bytes past them, which the call must leave alone.
 */
#ifndef DLSCAN_AXIS_CHECK_H
#define DLSCAN_AXIS_CHECK_H

#include "scan_check.h"

typedef struct axis_case {
    pair_case scan;  /* types, operator, exclusive, init (TEST_INIT_NONE or _HOST), in place,
                        values; with_total: d_totals set and checked; n = outer x length x
                        stride */
    size_t outer;
    size_t length;   /* axis_length (> 0) */
    size_t stride;   /* axis_stride as passed: 0 is taken as 1 */
} axis_case;

/* A case's host data. */
typedef struct axis_data {
    void *input;          /* n items of in_type */
    uint64_t init_bits;   /* the host init, an out_type value (an input item converted) */
    void *output;         /* n out_type items, as the call left d_out */
    void *totals;         /* outer x stride out_type totals, as the call left d_totals */
} axis_data;

/* The case's n: outer x length x stride (stride 0 counted as 1). */
size_t axis_items(const axis_case *c);

/* Fresh random data for case c: the input and the init. */
void axis_make(const axis_case *c, axis_data *d, uint64_t *rng);
void axis_free(axis_data *d);

/* One call: allocates d_in, d_out (d_in in place) and d_totals, uploads the input and poisons
 * the outputs and GUARD bytes past them, calls dlscan_scan, waits and downloads the outputs,
 * expecting (check.h) the bytes past them still poisoned, and frees the buffers. Returns the
 * call's status. */
dlscan_status axis_run(dlscan_handle_t h, const test_memory *memory, const axis_case *c,
                       axis_data *d);

/* Checks d's outputs and totals against the reference; `row_tile` is the segmented scan's tile
 * of out_type on the handle (segment_tiles), for the rows' float tolerance. On a mismatch
 * returns 0 and describes the first bad scan in message. */
int axis_check_output(const axis_case *c, size_t row_tile, const axis_data *d, char *message,
                      size_t message_size);

/* A short description of case c for failure messages. */
const char *axis_describe(const axis_case *c, char *buffer, size_t size);

/* Makes, runs and checks (check.h) one case with fresh random data. */
void axis_check_case(dlscan_handle_t h, const test_memory *memory, const axis_case *c,
                     uint64_t *rng);

/* Every output type that in_type scans into, every operator, inclusive and exclusive; rows of
 * lengths 1, 2, 3, 31 and around the segmented tile (a tile - 1, a tile, a tile + 1, half a
 * tile + 1, two tiles + 1, 33 tiles + 1) and columns of strides 2, 3, 16, 257 and the tile + 3,
 * lengths 1, 2, 3, 17 and around the tile; outer counts of 1 and more; with and without init and
 * d_totals, in place where the types have one size, turning from case to case; cases of more
 * than max_n items left out, those of more than 64 tiles run two of the six operator cases. */
void axis_check_every_output(dlscan_handle_t h, const test_memory *memory, dlscan_type in_type,
                             size_t max_n, uint64_t *rng);

/* A few pairs (int32 sums, float32 sums of mixed magnitudes, float16 into itself, int64 min,
 * float64 max) over rows and columns of random shapes up to max_n items: for handles of other
 * thread counts and tile sizes, and with the testing build's pauses. */
void axis_check_random_shapes(dlscan_handle_t h, const test_memory *memory, size_t max_n,
                              int cases, uint64_t *rng);

/* What scans along an axis refuse, each with its status, a message naming the argument, and
 * nothing written to the poisoned d_out and d_totals; then that the handle still works. n not
 * a multiple of length x stride (and a product that overflows), axis_stride or d_totals
 * without axis_length, d_init, d_total, d_keys or d_offsets with it, d_totals overlapping d_in
 * or d_out, misaligned d_totals, d_totals of the wrong kind (`foreign`, or NULL). What succeeds
 * and writes nothing: n == 0 along an axis, d_totals set. */
void axis_check_bad_input(dlscan_handle_t h, const test_memory *memory, void *foreign,
                          uint64_t *rng);

#endif /* DLSCAN_AXIS_CHECK_H */
