/*
 * cpu_scenarios.h: the cpu suite's tests as plain functions, so that two runners share
 * them: the Criterion suite (test_cpu.c) and the plain driver of the ThreadSanitizer build
 * (tsan_cpu.c). Each creates its own CPU handles and asserts through check.h.
 */
#ifndef DLSCAN_CPU_SCENARIOS_H
#define DLSCAN_CPU_SCENARIOS_H

#include "dlscan.h"

/* Every operator, inclusive and exclusive, in place and not, at every edge size. */
void cpu_every_operator_and_size(dlscan_type type);
/* User operators (operator_check.h): the built-ins, operators written in the test, a chain
 * and the refusals, on CPU handles. */
void cpu_user_operators(void);
/* Float sums of values spanning 2^-20 .. 2^20 against the float64 reference. */
void cpu_float_sums_of_mixed_magnitudes(void);
/* Random delays: the look-back waits on X, folds A and stops at P, and counts each. */
void cpu_stress_reaches_every_lookback_outcome(void);
/* More tiles in flight than the left fold buffers: look-backs wait for one P. */
void cpu_long_runs_of_aggregates_wait_for_a_prefix(void);
/* One handle, n shrinking and growing, types changing: stale descriptors read as X. */
void cpu_repeated_calls_with_changing_n(void);
/* The epoch wraps from 2^30 - 1 to 1, and the tile counter wraps around 2^32. */
void cpu_epoch_wraps_around(void);
/* The testing epoch set to one the last call used: that call's descriptors are cleared. */
void cpu_setting_a_used_epoch_again(void);
/* Float sums of -0.0 items are -0.0 (scan_check_signed_zeros). */
void cpu_float_sums_keep_signed_zeros(void);
/* Float sums are bitwise the same for 1 and 16 threads, run after run. */
void cpu_float_sums_are_the_same_for_any_thread_count(void);
/* dlscan_scan: every output type of in_type, every operator, init from the host, the device
 * or neither, d_total, at tile edges (pair_check_every_output). */
void cpu_every_pair_and_operator(dlscan_type in_type);
/* Calls chained over chunks through d_init == d_total (pair_check_chains). */
void cpu_chained_calls_with_device_init_and_total(dlscan_type in_type);
/* float16 and bfloat16 with NaN, infinities and subnormals (pair_check_16_bit_float_specials). */
void cpu_16_bit_floats_with_nan_inf_and_subnormals(void);
/* Min and max propagate NaN: scans, segmented scans, reduce-by-key (pair_check_nans). */
void cpu_min_and_max_propagate_nan(void);
/* What dlscan_scan refuses, and that it writes nothing then (pair_check_refusals). */
void cpu_dlscan_scan_refusals(void);
/* The five compaction calls on items of `type`, every pattern, in place and not. */
void cpu_compaction(dlscan_type type);
/* Bad arguments: the same statuses as on the GPU, nothing written. */
void cpu_bad_input_is_refused_and_writes_nothing(void);
/* Segmented scans (segment_check.h): every output type of in_type and every operator, by keys
 * and by offsets in every layout, at the edge sizes (segment_check_every_output). */
void cpu_segmented_every_pair_and_operator(dlscan_type in_type);
/* Segmented scans by keys of key_type, on handles of 1, 3 and every core's threads with tiles
 * of 16 items, 1024 and the default (segment_check_keys). */
void cpu_segmented_keys_of_every_type(dlscan_type key_type);
/* Random delays: segmented look-backs wait on X, fold A and stop at P or a segment head. */
void cpu_segmented_lookback_outcomes(void);
/* What segmented scans refuse (falling offsets, offsets past n, ...), nothing written. */
void cpu_segmented_refusals(void);
/* Scans along an axis (axis_check.h): rows and columns of every shape around the tiles, every
 * output type of in_type and every operator (axis_check_every_output). */
void cpu_axis_every_pair_and_operator(dlscan_type in_type);
/* Scans along an axis of random shapes on handles of 1, 3, 5 and every core's threads with
 * tiles of 16 items, 1024 and the default, the testing build's pauses on some; float sums
 * bitwise the same for 1 and 16 threads. */
void cpu_axis_on_every_handle(void);
/* What scans along an axis refuse, nothing written (axis_check_bad_input). */
void cpu_axis_refusals(void);
/* Reductions (across_check.h): every output type of in_type and every operator at the edge
 * sizes, on a handle of small tiles. */
void cpu_reduce_every_pair_and_operator(dlscan_type in_type);
/* Scans across 1 to ACROSS_MAX_RANKS ranks (threads, each with a handle of its own: small tiles,
 * 1 to 3 threads), every pair of in_type and operator (across_check_scans); for compaction's
 * types, selects across them (across_check_select). */
void cpu_across_ranks_every_pair(dlscan_type in_type);
/* What reductions and scans across ranks refuse, nothing written (across_check_bad_input). */
void cpu_across_refusals(void);

#endif /* DLSCAN_CPU_SCENARIOS_H */
