/*
 * operator_check.h: the checks of user operators (dlscan.h, "Your own operator") that the cpu and
 * gpu suites share, through one backend's memory (scan_check.h's test_memory). Each operator is
 * given as CUDA C source and as C functions, so one check serves both handles.
 *
 * References: integers exactly (2x2 matrix products modulo 2^32 and 2^64, full and upper-
 * triangular: non-commutative, 12-, 16- and 32-byte states; an arg-max pair whose ties keep the
 * first; a sum of int32 through the run-time path against the built-in sum's bits); floats
 * against a sequential float64 (long double for float64) reference with the tolerances stated
 * at each check.
 */
#ifndef DLSCAN_OPERATOR_CHECK_H
#define DLSCAN_OPERATOR_CHECK_H

#include "scan_check.h"

/* The built-ins (product, logsumexp, linear recurrences, real and complex, with a or a scalar) at
 * sizes around the
 * GPU's tiles up to max_n: inclusive and exclusive, with no init, a host init or a device init,
 * with d_total, in place where the sizes allow. */
void operator_check_builtins(dlscan_handle_t h, const test_memory *memory, size_t max_n, uint64_t *rng);

/* Operators written here: 2x2 matrix products modulo 2^32 and 2^64, an arg-max, a user sum. */
void operator_check_user(dlscan_handle_t h, const test_memory *memory, size_t max_n, uint64_t *rng);

/* Along rows (axis_length, axis_stride 1): operators written here exactly and the float32
 * recurrence within rounding, at row lengths around the GPU's tiles (one item, short rows that
 * share a tile, rows that straddle tiles, rows of many tiles), inclusive and exclusive, with and
 * without a host init, in place, with d_totals. */
void operator_check_rows(dlscan_handle_t h, const test_memory *memory, size_t max_n, uint64_t *rng);

/* Down columns (axis_length, axis_stride > 1): operators written here exactly (states of 4 to 32
 * bytes) and the float32 recurrence within rounding, strides narrow and wide, lengths around the
 * GPU's column tiles, one to three arrays; inclusive and exclusive, with and without a host init,
 * in place, with d_totals. */
void operator_check_columns(dlscan_handle_t h, const test_memory *memory, size_t max_n, uint64_t *rng);

/* Over offsets (d_offsets): operators written here exactly and the float32 recurrence, with
 * segments of one item, around a tile, of 0 to 63 items (empty ones too), up to 5000, or one, and
 * items before and after them, which stay unwritten; inclusive and exclusive, with and without a
 * host init, in place. Then each case again by key (d_keys of 1, 2, 4 and 8 bytes: the same
 * segments as runs, and the items before and after them runs of their own). */
void operator_check_segments(dlscan_handle_t h, const test_memory *memory, size_t max_n, uint64_t *rng);

/* Reduce-by-key (dlscan_reduce_by_key_custom): operators written here exactly and the float32
 * recurrence within rounding, runs of 1-, 2-, 4- and 8-byte keys (of one item, around a tile, up to
 * 5000, one run), from the identity or a host init, values in place; each run's output, key and
 * the count, and nothing written past them. */
void operator_check_runs(dlscan_handle_t h, const test_memory *memory, size_t max_n, uint64_t *rng);

/* A chain of calls over chunks, d_init = d_total, against one call. */
void operator_check_chain(dlscan_handle_t h, const test_memory *memory, uint64_t *rng);

/* Refusals: each gets its status and writes nothing (descriptions out of range, a scan with an
 * operator of another backend, segments, columns that do not divide n, rows, segments and runs of a
 * 32-byte state, d_totals misplaced, d_in2 missing or extra; reduce-by-key without an operator, with
 * keys out over keys in, values out over keys out, a bad key type, d_values_in2 missing or extra, a
 * misaligned count). On a GPU handle also a source that does not compile (DLSCAN_ERROR_COMPILE,
 * with the compiler's log). */
void operator_check_refusals(dlscan_handle_t h, const test_memory *memory);

#endif /* DLSCAN_OPERATOR_CHECK_H */
