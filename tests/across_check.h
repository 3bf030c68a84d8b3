/*
 * across_check.h: the tests of reductions (dlscan_reduce) and of scans across ranks
 * (dlscan_scan_across), written for any backend on scan_check.h's memory functions and
 * reference.
 *
 * Ranks are threads of this process, each with its own handle and memory functions (on a GPU,
 * its own stream), joined by an exchange of this file's own: its all-gather downloads the rank's
 * value, meets the other ranks at a barrier, and uploads every rank's. So the library's side of
 * a scan across ranks (reduce, exchange, scan of the totals, scan of the slice) runs as it does
 * over NCCL or MPI, without them. The ranks' outputs, put together, are checked as one scan of
 * the whole input (scan_check_pair_output); a reduction's total as a scan's total.
 */
#ifndef DLSCAN_ACROSS_CHECK_H
#define DLSCAN_ACROSS_CHECK_H

#include "scan_check.h"

#define ACROSS_MAX_RANKS 8

/* The cases the bindings' tests (test_mpi.c, test_nccl.c) run, each checked bit for bit against
 * one scan of the whole input: their sums are exact (integers, and UNIFORM float values, whose
 * sums are exact in float32), min and max are exact. */
typedef struct across_case {
    dlscan_type in_type, out_type;
    dlscan_op op;
    int exclusive;
    int with_init;
} across_case;

static const across_case across_exact_cases[] = {
    {DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, 0, 0},    {DLSCAN_INT64, DLSCAN_INT64, DLSCAN_SUM, 1, 1},
    {DLSCAN_UINT8, DLSCAN_INT32, DLSCAN_SUM, 1, 0},    {DLSCAN_INT16, DLSCAN_INT16, DLSCAN_SUM, 0, 1},
    {DLSCAN_FLOAT32, DLSCAN_FLOAT32, DLSCAN_SUM, 0, 1}, {DLSCAN_FLOAT64, DLSCAN_FLOAT64, DLSCAN_SUM, 1, 0},
    {DLSCAN_FLOAT16, DLSCAN_FLOAT32, DLSCAN_SUM, 0, 0}, {DLSCAN_UINT32, DLSCAN_UINT32, DLSCAN_MIN, 1, 1},
    {DLSCAN_FLOAT64, DLSCAN_FLOAT64, DLSCAN_MAX, 0, 0}, {DLSCAN_INT8, DLSCAN_INT8, DLSCAN_MAX, 1, 1},
    {DLSCAN_BFLOAT16, DLSCAN_BFLOAT16, DLSCAN_MIN, 0, 1},
};
#define ACROSS_EXACT_CASE_COUNT ((int)(sizeof across_exact_cases / sizeof across_exact_cases[0]))

/* Every output type that in_type scans into, every operator: reductions of every edge size up
 * to max_n, with and without init, each total checked and nothing past it written. */
void across_check_reduce(dlscan_handle_t h, const test_memory *memory, dlscan_type in_type,
                         size_t max_n, uint64_t *rng);

/* Scans across `ranks` ranks (handles[r], memories[r]): every pair of in_type, every operator,
 * inclusive and exclusive, host and device init and none, d_total on some ranks, in place, over
 * slices of random lengths up to max_slice, empty ones and ones at the tile's edges among them.
 * 16-bit float sums are left out: their prefix crosses each rank rounded to 16 bits (dlscan.h). */
void across_check_scans(dlscan_handle_t *handles, const test_memory *memories, int ranks,
                        dlscan_type in_type, size_t max_slice, uint64_t *rng);

/* Selects across `ranks` ranks (dlscan_select_across): items of `type` (a compaction type) by
 * flags and by a predicate, slices of random lengths up to max_slice (empty ones among them):
 * each rank's kept items and count, its offset (the counts of the ranks before it) and the
 * whole count, against the reference; nothing written past d_out. */
void across_check_select(dlscan_handle_t *handles, const test_memory *memories, int ranks,
                         dlscan_type type, size_t max_slice, uint64_t *rng);

/* The peer exchange (dlscan_peers_create), made by `ranks` ranks through this file's exchange:
 * on CPU handles refused (DLSCAN_ERROR_NOT_SUPPORTED, nothing exchanged); on GPU handles the
 * exact cases (across_exact_cases) and selects of int32 and uint64 through it, then a burst of
 * calls that each rank enqueues before it waits (int32 sums, inclusive and exclusive, each from
 * its own init into its own output: a rank runs ahead of the others), each checked against the
 * reference; then the peers are destroyed. */
void across_check_peers(dlscan_handle_t *handles, const test_memory *memories, int ranks, size_t max_slice,
                        uint64_t *rng);

/* What dlscan_reduce and dlscan_scan_across refuse, each with its status and a message, nothing
 * written, and (for a scan across ranks) no exchange made: a NULL exchange or all_gather, a rank
 * out of range, segments and an axis, a bad d_in; and an all-gather that fails
 * (DLSCAN_ERROR_EXCHANGE, with its reason in the message); dlscan_peers_create's refusals, and
 * peers of one rank (a GPU handle). `foreign` is memory of the other
 * kind, or NULL. */
void across_check_bad_input(dlscan_handle_t h, const test_memory *memory, void *foreign);

#endif /* DLSCAN_ACROSS_CHECK_H */
