/*
 * test_probe.c: the `probe` suite: the testing build of the library (libdlscan_testing.a,
 * DLSCAN_TESTING: device/probe.cuh, src/testing.h) on the GPU, driving the protocol's rare
 * paths: every look-back outcome (counted), pauses inside tiles, the epoch's and the tile
 * counter's wrap-around, and the persistent kernels forced at every size; for scans,
 * compaction, segmented scans and scans along an axis. Every test is skipped, saying so, where no CUDA device
 * exists. DLSCAN_TEST_MAX_N caps the sizes.
 */
#include <stdlib.h>

#include "axis_check.h"
#include "compact_check.h"
#include "gpu_suite.h"
#include "protocol.h"
#include "scan_check.h"
#include "segment_check.h"
#include "testing.h"

/* The persistent kernels, forced at every edge size (DLSCAN_TESTING_PERSISTENT_ALWAYS): scans
 * and every compaction call, on items of every type. */
ParameterizedTestParameters(probe, persistent_kernels_at_every_size)
{
    return EVERY_TYPE;
}

ParameterizedTest(dlscan_type *type, probe, persistent_kernels_at_every_size, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, DLSCAN_TESTING_PERSISTENT_ALWAYS),
                 DLSCAN_SUCCESS);
    scan_check_type(h, &m, *type, test_max_n(1u << 22), &rng);
    compact_check_type(h, &m, *type, test_max_n(1u << 22), &rng);
    gpu_done(h, stream);
}

/* The three outcomes of a look-back (wait on X, fold A, stop at P) all occur. Both kernels
 * run: the persistent one publishes aggregates so early that it seldom meets an X. */
Test(probe, every_lookback_outcome_occurs, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 1), DLSCAN_SUCCESS);
    const size_t n = test_max_n(1u << 26);
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_FLOAT32, &tile);
    for (int run = 0; run < 4; ++run) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, run / 2), DLSCAN_SUCCESS);
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, run % 2), DLSCAN_SUCCESS);
        const scan_case c = {run % 2 ? DLSCAN_FLOAT32 : DLSCAN_INT32, DLSCAN_SUM, 0, 0, 0, n,
                             TEST_VALUES_UNIFORM};
        scan_check_case(h, &m, &c, &rng);
    }
    dlscan_lookback_stats stats;
    cr_assert_eq(dlscan_get_lookback_stats(h, &stats), DLSCAN_SUCCESS);
    cr_log_info("lookbacks %llu, waits on X %llu, aggregates folded %llu, stops at P %llu, "
                "windows slid %llu, waits for P %llu",
                stats.lookbacks, stats.waits_on_x, stats.aggregates_folded, stats.stops_at_p,
                stats.windows_slid, stats.waits_for_p);
    const unsigned long long tiles = (n + tile - 1) / tile;
    cr_assert_eq(stats.lookbacks, 4 * (tiles - 1), "every tile but tile 0 looks back");
    cr_assert_gt(stats.waits_on_x, 0, "no look-back waited on X");
    cr_assert_gt(stats.aggregates_folded, 0, "no look-back folded an A");
    cr_assert_gt(stats.stops_at_p, 0, "no look-back stopped at P");
    cr_assert_eq(stats.stops_at_p + stats.waits_for_p, stats.lookbacks, "every look-back ends at a P");
    gpu_done(h, stream);
}

/* With pauses inside tiles (DLSCAN_TESTING_OPTION_DELAY_US) look-backs fold many aggregates at
 * once; operators that do not commute (reduce-by-key's segmented one) must still fold them in
 * order. Both scan kernels, and the run-carrying compactions with every value type and op. */
Test(probe, delayed_tiles_fold_long_windows_in_order, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 30), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 1), DLSCAN_SUCCESS);
    const size_t n = test_max_n(3u << 19) + 7;
    for (int persistent = 0; persistent <= 1; ++persistent) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, persistent), DLSCAN_SUCCESS);
        for (int type = DLSCAN_INT32; type <= DLSCAN_FLOAT64; ++type) {
            const scan_case c = {(dlscan_type)type, (dlscan_op)(type % 3), type % 2, 1, 0, n,
                                 TEST_VALUES_UNIFORM};
            scan_check_case(h, &m, &c, &rng);
        }
    }
    static const dlscan_type values[] = {DLSCAN_INT32, DLSCAN_UINT32, DLSCAN_INT64,
                                         DLSCAN_UINT64, DLSCAN_FLOAT32, DLSCAN_FLOAT64};
    for (int v = 0; v < 6; ++v)
        for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op) {
            const compact_case by_key = {COMPACT_REDUCE_BY_KEY, v % 2 ? DLSCAN_INT64 : DLSCAN_INT32,
                                         values[v], (dlscan_op)op, DLSCAN_LESS,
                                         op == 1 ? PATTERN_RUNS_RANDOM : PATTERN_RUNS_OF_TILES, 4096,
                                         n / 2 + (size_t)v, v % 2};
            compact_check_case(h, &m, &by_key, &rng);
        }
    const compact_case runs = {COMPACT_RUN_LENGTH, DLSCAN_FLOAT32, DLSCAN_FLOAT32, DLSCAN_SUM,
                               DLSCAN_LESS, PATTERN_RUNS_OF_TILES, 4096, n, 0};
    compact_check_case(h, &m, &runs, &rng);
    dlscan_lookback_stats stats;
    cr_assert_eq(dlscan_get_lookback_stats(h, &stats), DLSCAN_SUCCESS);
    cr_log_info("lookbacks %llu, waits on X %llu, aggregates folded %llu, windows slid %llu",
                stats.lookbacks, stats.waits_on_x, stats.aggregates_folded, stats.windows_slid);
    cr_assert_gt(stats.aggregates_folded, 2 * stats.lookbacks,
                 "the pauses should make look-backs fold several aggregates each");
    gpu_done(h, stream);
}

/* The epoch lives in device memory and wraps from 2^30 - 1 to 1; the tile counter starts
 * 16 tickets below 2^32, so it wraps within each call. */
Test(probe, epoch_wraps_around, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_EPOCH, DL_EPOCH_LAST - 1), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_TICKET_BASE, 0xfffffff0ll), DLSCAN_SUCCESS);
    const size_t sizes[] = {1u << 20, 1u << 18, (1u << 20) + 1, 9};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const scan_case c = {DLSCAN_UINT64, DLSCAN_SUM, 1, 1, 0, sizes[i], TEST_VALUES_UNIFORM};
        scan_check_case(h, &m, &c, &rng);
    }
    gpu_done(h, stream);
}

/* Setting the epoch to one a call has just used clears the descriptors: none that call left
 * can pass for this call's (pauses inside tiles, both kernels). */
Test(probe, setting_a_used_epoch_again, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 5), DLSCAN_SUCCESS);
    for (int round = 0; round < 8; ++round) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, round % 2), DLSCAN_SUCCESS);
        cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_EPOCH, 7), DLSCAN_SUCCESS);
        const scan_case c = {DLSCAN_INT32, DLSCAN_SUM, round % 2, 0, 0, (1u << 21) + (size_t)round,
                             TEST_VALUES_UNIFORM};
        scan_check_case(h, &m, &c, &rng);
    }
    gpu_done(h, stream);
}

/* Segmented scans with the persistent kernel forced at every edge size (it takes 32- and 64-bit
 * items scanned into their own type, by offsets or by keys of 4 or 8 bytes): every output type
 * of each of those types, every operator, by keys and by offsets in every layout; and keys of
 * that type over several pairs. */
ParameterizedTestParameters(probe, segmented_persistent_kernel_at_every_size)
{
    return EVERY_TYPE;
}

ParameterizedTest(dlscan_type *type, probe, segmented_persistent_kernel_at_every_size, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, DLSCAN_TESTING_PERSISTENT_ALWAYS),
                 DLSCAN_SUCCESS);
    segment_check_every_output(h, &m, *type, test_max_n(1u << 20), &rng);
    segment_check_keys(h, &m, *type, test_max_n(1u << 20), &rng);
    gpu_done(h, stream);
}

/* Scans along an axis with the persistent kernels forced at every size (rows) and pauses inside
 * tiles, so that the rows' and the columns' look-backs wait on X and fold A: every output type
 * of int32 and float64 around the tiles, then random shapes. */
Test(probe, axis_scans_with_pauses, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, DLSCAN_TESTING_PERSISTENT_ALWAYS),
                 DLSCAN_SUCCESS);
    axis_check_every_output(h, &m, DLSCAN_INT32, test_max_n(1u << 20), &rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 20), DLSCAN_SUCCESS);
    axis_check_every_output(h, &m, DLSCAN_FLOAT64, test_max_n(1u << 19), &rng);
    axis_check_random_shapes(h, &m, test_max_n(1u << 21), 6, &rng);
    gpu_done(h, stream);
}

/* With pauses inside tiles, segmented look-backs wait on X, fold A and stop at P or at a
 * segment head (a tile that holds a head ends the look-backs after it, as a P does), in both
 * kernels: one segment over everything (look-backs as long as a plain scan's), segments of 1
 * item to 3 tiles, heads at tile edges, a head or several in every tile, empty segments and
 * items outside; int32 sums by keys, float64 sums by offsets (deterministic in one kernel). */
Test(probe, segmented_lookbacks_wait_fold_and_stop, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 30), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 1), DLSCAN_SUCCESS);
    const size_t n = test_max_n(3u << 19) + 7;
    static const segment_layout layouts[] = {SEGMENTS_ONE, SEGMENTS_OF_TILES, SEGMENTS_AT_EDGES,
                                             SEGMENTS_SHORT, SEGMENTS_EMPTY};
    for (int persistent = 0; persistent <= 1; ++persistent) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT,
                                       persistent ? DLSCAN_TESTING_PERSISTENT_ALWAYS : 0),
                     DLSCAN_SUCCESS);
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, persistent), DLSCAN_SUCCESS);
        for (int l = 0; l < 5; ++l) {
            const segment_case by_keys = {{DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, l % 2, TEST_INIT_HOST,
                                           0, 0, n + (size_t)l, TEST_VALUES_UNIFORM},
                                          SEGMENT_KEYS,
                                          DLSCAN_INT64,
                                          layouts[l]};
            segment_check_case(h, &m, &by_keys, &rng);
            const segment_case by_offsets = {{DLSCAN_FLOAT64, DLSCAN_FLOAT64, DLSCAN_SUM, (l + 1) % 2,
                                              TEST_INIT_NONE, 0, 1, n / 2 + (size_t)l,
                                              TEST_VALUES_MIXED_MAGNITUDE},
                                             SEGMENT_OFFSETS,
                                             DLSCAN_INT32,
                                             layouts[l]};
            segment_check_case(h, &m, &by_offsets, &rng);
        }
    }
    dlscan_lookback_stats stats;
    cr_assert_eq(dlscan_get_lookback_stats(h, &stats), DLSCAN_SUCCESS);
    cr_log_info("segmented: lookbacks %llu, waits on X %llu, aggregates folded %llu, stops at P %llu, "
                "windows slid %llu, waits for P %llu",
                stats.lookbacks, stats.waits_on_x, stats.aggregates_folded, stats.stops_at_p,
                stats.windows_slid, stats.waits_for_p);
    cr_assert_gt(stats.waits_on_x, 0, "no segmented look-back waited on X");
    cr_assert_gt(stats.aggregates_folded, 0, "no segmented look-back folded an A");
    cr_assert_gt(stats.stops_at_p, 0, "no segmented look-back stopped at P or a segment head");
    gpu_done(h, stream);
}

/* The epoch wraps from 2^30 - 1 to 1 and the tile counter around 2^32 (as in
 * epoch_wraps_around) under segmented scans. */
Test(probe, segmented_scans_across_the_wraps, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_EPOCH, DL_EPOCH_LAST - 1), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_TESTING_OPTION_TICKET_BASE, 0xfffffff0ll), DLSCAN_SUCCESS);
    const size_t sizes[] = {1u << 20, 1u << 18, (1u << 20) + 1, 9};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const segment_case c = {{DLSCAN_UINT64, DLSCAN_UINT64, DLSCAN_SUM, 1, TEST_INIT_HOST, 0, 0,
                                 sizes[i], TEST_VALUES_UNIFORM},
                                i % 2 ? SEGMENT_OFFSETS : SEGMENT_KEYS,
                                DLSCAN_UINT32,
                                i % 2 ? SEGMENTS_SHORT : SEGMENTS_OF_TILES};
        segment_check_case(h, &m, &c, &rng);
    }
    gpu_done(h, stream);
}
