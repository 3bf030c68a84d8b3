/*
 * cpu_scenarios.c: the cpu suite's tests (see cpu_scenarios.h): the CPU backend, which runs
 * the GPU's look-back protocol (device/protocol.h) on threads, against the sequential
 * reference. DLSCAN_TEST_MAX_N caps the sizes.
 */
#include "cpu_scenarios.h"

#include <stdlib.h>
#include <string.h>

#include "across_check.h"
#include "axis_check.h"
#include "check.h"
#include "compact_check.h"
#include "operator_check.h"
#include "pair_check.h"
#include "protocol.h"
#include "scan_check.h"
#include "segment_check.h"
#include "testing.h"

static void *host_alloc(size_t bytes, void *context)
{
    (void)context;
    return malloc(bytes);
}
static void host_release(void *p, void *context)
{
    (void)context;
    free(p);
}
static void host_copy(void *dst, const void *src, size_t bytes, void *context)
{
    (void)context;
    memcpy(dst, src, bytes);
}
static void host_fill(void *dst, int byte, size_t bytes, void *context)
{
    (void)context;
    memset(dst, byte, bytes);
}
static void host_wait(void *context) { (void)context; }

static const test_memory host_memory = {host_alloc, host_release, host_copy, host_copy,
                                        host_fill,  host_wait,    NULL,      NULL};

static dlscan_handle_t cpu_handle(int threads)
{
    dlscan_handle_t h = NULL;
    const dlscan_status status = dlscan_create_cpu(&h, threads);
    CHECK(status == DLSCAN_SUCCESS, "%s", dlscan_status_string(status));
    CHECK(strcmp(dlscan_backend_name(h), "cpu") == 0, "backend %s", dlscan_backend_name(h));
    return h;
}

/* A CPU handle with small tiles: many tiles, hence much look-back, for little data. */
static dlscan_handle_t cpu_handle_tiles(int threads, size_t tile_items)
{
    dlscan_handle_t h = cpu_handle(threads);
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_OPTION_CPU_TILE_ITEMS, (long long)tile_items));
    size_t items = 0;
    CHECK(dlscan_tile_items(h, DLSCAN_INT32, &items) == DLSCAN_SUCCESS && items == tile_items,
          "the tile size is %zu, not %zu", items, tile_items);
    return h;
}

void cpu_every_operator_and_size(dlscan_type type)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    scan_check_type(h, &host_memory, type, test_max_n(1u << 21), &rng);
    dlscan_destroy(h);
}

void cpu_user_operators(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    operator_check_builtins(h, &host_memory, test_max_n(1u << 18), &rng);
    operator_check_user(h, &host_memory, test_max_n(1u << 18), &rng);
    operator_check_rows(h, &host_memory, test_max_n(1u << 18), &rng);
    operator_check_columns(h, &host_memory, test_max_n(1u << 18), &rng);
    operator_check_runs(h, &host_memory, test_max_n(1u << 18), &rng);
    operator_check_segments(h, &host_memory, test_max_n(1u << 18), &rng);
    operator_check_chain(h, &host_memory, &rng);
    operator_check_refusals(h, &host_memory);
    dlscan_destroy(h);
}

void cpu_every_pair_and_operator(dlscan_type in_type)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    pair_check_every_output(h, &host_memory, in_type, test_max_n(1u << 20), &rng);
    dlscan_destroy(h);
}

void cpu_chained_calls_with_device_init_and_total(dlscan_type in_type)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    pair_check_chains(h, &host_memory, in_type, test_max_n(1u << 18), &rng);
    dlscan_destroy(h);
}

void cpu_16_bit_floats_with_nan_inf_and_subnormals(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    pair_check_16_bit_float_specials(h, &host_memory, &rng);
    dlscan_destroy(h);
}

void cpu_min_and_max_propagate_nan(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    pair_check_nans(h, &host_memory, test_max_n(1u << 17), &rng);
    dlscan_destroy(h);
}

void cpu_dlscan_scan_refusals(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle(2);
    pair_check_refusals(h, &host_memory, NULL, &rng);
    dlscan_destroy(h);
}

void cpu_float_sums_of_mixed_magnitudes(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle(0);
    const size_t n = test_max_n(1u << 22);
    for (int type = DLSCAN_FLOAT32; type <= DLSCAN_FLOAT64; ++type)
        for (int exclusive = 0; exclusive <= 1; ++exclusive) {
            const scan_case c = {(dlscan_type)type, DLSCAN_SUM, exclusive, 1, 0, n - 3,
                                 TEST_VALUES_MIXED_MAGNITUDE};
            scan_check_case(h, &host_memory, &c, &rng);
        }
    dlscan_destroy(h);
}

void cpu_stress_reaches_every_lookback_outcome(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(48, 1024);
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 200));
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 1));
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_INT32, &tile);
    const size_t n = 160 * tile + 5;
    for (int round = 0; round < 4; ++round) {
        const scan_case c = {round % 2 ? DLSCAN_INT64 : DLSCAN_INT32, DLSCAN_SUM, round >= 2, 1,
                             round % 2, n, TEST_VALUES_UNIFORM};
        scan_check_case(h, &host_memory, &c, &rng);
    }
    dlscan_lookback_stats stats;
    CHECK_OK(h, dlscan_get_lookback_stats(h, &stats));
    TEST_LOG("lookbacks %llu, waits on X %llu, aggregates folded %llu, stops at P %llu, "
                "windows slid %llu, waits for P %llu",
                stats.lookbacks, stats.waits_on_x, stats.aggregates_folded, stats.stops_at_p,
                stats.windows_slid, stats.waits_for_p);
    CHECK(stats.lookbacks == 4 * (n / tile), "every tile but tile 0 looks back");
    CHECK(stats.waits_on_x > 0, "no look-back waited on X");
    CHECK(stats.aggregates_folded > 0, "no look-back folded an A");
    CHECK(stats.stops_at_p + stats.waits_for_p == stats.lookbacks, "every look-back ends at a P");
    CHECK(stats.stops_at_p > 0, "no look-back stopped at P");
    CHECK_OK(h, dlscan_reset_lookback_stats(h));
    CHECK_OK(h, dlscan_get_lookback_stats(h, &stats));
    CHECK(stats.lookbacks == 0, "the counters were reset");
    dlscan_destroy(h);
}

void cpu_long_runs_of_aggregates_wait_for_a_prefix(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(320, 1024);
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 4000));
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 1));
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_FLOAT64, &tile);
    dlscan_lookback_stats stats = {0};
    for (int round = 0; round < 8 && stats.waits_for_p == 0; ++round) {
        const scan_case c = {DLSCAN_FLOAT64, DLSCAN_SUM, round % 2, 1, 1, 420 * tile - 1,
                             TEST_VALUES_MIXED_MAGNITUDE};
        scan_check_case(h, &host_memory, &c, &rng);
        CHECK_OK(h, dlscan_get_lookback_stats(h, &stats));
    }
    TEST_LOG("windows slid %llu, waits for P %llu", stats.windows_slid, stats.waits_for_p);
    CHECK(stats.windows_slid > 0, "no window of aggregates slid");
    CHECK(stats.waits_for_p > 0, "no look-back filled its buffer of windows");
    dlscan_destroy(h);
}

void cpu_repeated_calls_with_changing_n(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(6, 1024);
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_INT32, &tile);
    const size_t sizes[] = {70 * tile + 3, 3, 5 * tile, 70 * tile + 3, 1, 140 * tile - 1,
                            2 * tile + 1, 33 * tile};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const scan_case c = {i % 3 == 2 ? DLSCAN_FLOAT64 : DLSCAN_INT32, DLSCAN_SUM, (int)(i % 2),
                             1, (int)(i % 2), sizes[i], TEST_VALUES_UNIFORM};
        scan_check_case(h, &host_memory, &c, &rng);
    }
    dlscan_destroy(h);
}

void cpu_epoch_wraps_around(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_UINT64, &tile);
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_EPOCH, DL_EPOCH_LAST - 1));
    /* The tile counter starts 16 tickets below 2^32, so it wraps within each call. */
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_TICKET_BASE, 0xfffffff0ll));
    const size_t sizes[] = {40 * tile + 1, 20 * tile, 40 * tile + 1, 7};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const scan_case c = {DLSCAN_UINT64, DLSCAN_MAX, 0, 0, 0, sizes[i], TEST_VALUES_UNIFORM};
        scan_check_case(h, &host_memory, &c, &rng);
    }
    dlscan_destroy(h);
}

/* Setting the epoch to one a call has just used clears the descriptors: none that call left
 * can pass for this call's (20 rounds, pauses inside tiles). */
void cpu_setting_a_used_epoch_again(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 16);
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 20));
    for (int round = 0; round < 20; ++round) {
        CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_EPOCH, 7));
        const scan_case c = {DLSCAN_INT32, DLSCAN_SUM, round % 2, 0, 0, 16 * 40 + (size_t)round,
                             TEST_VALUES_UNIFORM};
        scan_check_case(h, &host_memory, &c, &rng);
    }
    dlscan_destroy(h);
}

void cpu_float_sums_keep_signed_zeros(void)
{
    dlscan_handle_t h = cpu_handle_tiles(4, 64);
    scan_check_signed_zeros(h, &host_memory);
    dlscan_destroy(h);
}

void cpu_float_sums_are_the_same_for_any_thread_count(void)
{
    uint64_t rng = test_seed();
    const size_t n = test_max_n(1u << 21) - 11;
    float *in = malloc(n * sizeof *in), *one = malloc(n * sizeof *one), *many = malloc(n * sizeof *many);
    CHECK(in && one && many, "host allocation failed");
    test_fill_random(DLSCAN_FLOAT32, TEST_VALUES_MIXED_MAGNITUDE, in, n, &rng);
    dlscan_handle_t single = cpu_handle(1), several = cpu_handle(16);
    CHECK_OK(single, dlscan_inclusive_scan(single, in, one, n, DLSCAN_FLOAT32, DLSCAN_SUM, NULL));
    CHECK_OK(several, dlscan_set_option(several, DLSCAN_TESTING_OPTION_DELAY_US, 20));
    for (int run = 0; run < 3; ++run) {
        CHECK_OK(several, dlscan_inclusive_scan(several, in, many, n, DLSCAN_FLOAT32, DLSCAN_SUM, NULL));
        CHECK(memcmp(one, many, n * sizeof *one) == 0, "run %d differs bitwise", run);
    }
    dlscan_destroy(single);
    dlscan_destroy(several);
    free(in);
    free(one);
    free(many);
}

void cpu_bad_input_is_refused_and_writes_nothing(void)
{
    dlscan_handle_t h = cpu_handle(2);
    CHECK(dlscan_set_option(h, DLSCAN_OPTION_CPU_TILE_ITEMS, 8) == DLSCAN_ERROR_INVALID_ARGUMENT,
          "tiles of 8 items are refused");
    scan_check_bad_input(h, &host_memory, NULL);
    compact_check_bad_input(h, &host_memory, NULL);
    CHECK(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, -1) == DLSCAN_ERROR_INVALID_ARGUMENT,
          "a negative delay is refused");
    dlscan_destroy(h);
}

void cpu_compaction(dlscan_type type)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 4096);
    compact_check_type(h, &host_memory, type, test_max_n(1u << 20), &rng);
    /* With random delays, the look-back's outcomes all occur under compaction too. */
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 100));
    const compact_case by_key = {COMPACT_REDUCE_BY_KEY, type, DLSCAN_FLOAT64, DLSCAN_SUM, DLSCAN_LESS,
                                 PATTERN_RUNS_RANDOM, 4096, 40 * 4096 + 3, 1};
    compact_check_case(h, &host_memory, &by_key, &rng);
    dlscan_destroy(h);
}

void cpu_segmented_every_pair_and_operator(dlscan_type in_type)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    segment_check_every_output(h, &host_memory, in_type, test_max_n(1u << 18), &rng);
    dlscan_destroy(h);
}

void cpu_segmented_keys_of_every_type(dlscan_type key_type)
{
    static const struct {
        int threads;
        size_t tile_items; /* 0: the default */
        size_t max_n;
    } handles[] = {{1, 16, 1u << 13}, {3, 1024, 1u << 18}, {0, 0, 1u << 20}};
    uint64_t rng = test_seed();
    for (size_t i = 0; i < sizeof handles / sizeof handles[0]; ++i) {
        dlscan_handle_t h = handles[i].tile_items
                                ? cpu_handle_tiles(handles[i].threads, handles[i].tile_items)
                                : cpu_handle(handles[i].threads);
        segment_check_keys(h, &host_memory, key_type, test_max_n(handles[i].max_n), &rng);
        dlscan_destroy(h);
    }
}

void cpu_segmented_lookback_outcomes(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(48, 1024);
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 200));
    CHECK_OK(h, dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 1));
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_INT32, &tile);
    const size_t n = 160 * tile + 5;
    /* one segment over everything (look-backs end at P), segments of several tiles (at P or a
     * head), of a few items (a head in every tile), with items in no segment */
    static const segment_layout layouts[] = {SEGMENTS_ONE, SEGMENTS_OF_TILES, SEGMENTS_SHORT,
                                             SEGMENTS_EMPTY};
    for (int round = 0; round < 4; ++round) {
        const dlscan_type type = round % 2 ? DLSCAN_INT64 : DLSCAN_INT32;
        const segment_case c = {{type, type, DLSCAN_SUM, round >= 2, TEST_INIT_HOST, 0, round % 2, n,
                                 TEST_VALUES_UNIFORM},
                                round % 2 ? SEGMENT_OFFSETS : SEGMENT_KEYS,
                                DLSCAN_UINT16,
                                layouts[round]};
        segment_check_case(h, &host_memory, &c, &rng);
    }
    dlscan_lookback_stats stats;
    CHECK_OK(h, dlscan_get_lookback_stats(h, &stats));
    TEST_LOG("segmented: lookbacks %llu, waits on X %llu, aggregates folded %llu, stops at P %llu, "
             "windows slid %llu, waits for P %llu",
             stats.lookbacks, stats.waits_on_x, stats.aggregates_folded, stats.stops_at_p,
             stats.windows_slid, stats.waits_for_p);
    CHECK(stats.waits_on_x > 0, "no segmented look-back waited on X");
    CHECK(stats.aggregates_folded > 0, "no segmented look-back folded an A");
    CHECK(stats.stops_at_p > 0, "no segmented look-back stopped at P");
    dlscan_destroy(h);
}

void cpu_segmented_refusals(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle(2);
    segment_check_bad_input(h, &host_memory, NULL, &rng);
    dlscan_destroy(h);
}

void cpu_axis_every_pair_and_operator(dlscan_type in_type)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(4, 1024);
    axis_check_every_output(h, &host_memory, in_type, test_max_n(1u << 20), &rng);
    dlscan_destroy(h);
}

/* Float sums along rows and along columns on a handle of 1 thread and one of 16 with pauses:
 * the same bits, outputs and totals. */
static void axis_float_sums_for_any_thread_count(uint64_t *rng)
{
    const size_t max_n = test_max_n(1u << 20);
    float *in = malloc(max_n * sizeof *in), *out[2], *totals[2];
    CHECK(in, "host allocation failed");
    for (int i = 0; i < 2; ++i) {
        out[i] = malloc(max_n * sizeof(float));
        totals[i] = malloc(max_n * sizeof(float));
        CHECK(out[i] && totals[i], "host allocation failed");
    }
    test_fill_random(DLSCAN_FLOAT32, TEST_VALUES_MIXED_MAGNITUDE, in, max_n, rng);
    dlscan_handle_t handles[2] = {cpu_handle_tiles(1, 1024), cpu_handle_tiles(16, 1024)};
    CHECK_OK(handles[1], dlscan_set_option(handles[1], DLSCAN_TESTING_OPTION_DELAY_US, 20));
    /* rows of 4 tiles + 4 items; columns of 1000 rows of 257 */
    static const size_t shapes[2][2] = {{4 * 1024 + 4, 1}, {1000, 257}};
    for (int shape = 0; shape < 2; ++shape) {
        const size_t array = shapes[shape][0] * shapes[shape][1], n = max_n / array * array;
        for (int i = 0; i < 2; ++i) {
            dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
            a.d_in = in;
            a.d_out = out[i];
            a.n = n;
            a.in_type = a.out_type = DLSCAN_FLOAT32;
            a.axis_length = shapes[shape][0];
            a.axis_stride = shapes[shape][1];
            a.d_totals = totals[i];
            CHECK_OK(handles[i], dlscan_scan(handles[i], &a, NULL));
        }
        const size_t scans = n / shapes[shape][0];
        CHECK(n > 0, "shape %d: no items within DLSCAN_TEST_MAX_N", shape);
        CHECK(memcmp(out[0], out[1], n * sizeof(float)) == 0, "shape %d: outputs differ bitwise", shape);
        CHECK(memcmp(totals[0], totals[1], scans * sizeof(float)) == 0, "shape %d: totals differ bitwise",
              shape);
    }
    for (int i = 0; i < 2; ++i) {
        dlscan_destroy(handles[i]);
        free(out[i]);
        free(totals[i]);
    }
    free(in);
}

void cpu_axis_on_every_handle(void)
{
    static const struct {
        int threads;
        size_t tile_items; /* 0: the default */
        long long delay_us;
        size_t max_n;
        int cases;
    } handles[] = {{1, 16, 0, 1u << 13, 60},
                   {3, 16, 20, 1u << 13, 40},
                   {5, 1024, 50, 1u << 18, 40},
                   {0, 0, 0, 1u << 20, 40}};
    uint64_t rng = test_seed();
    for (size_t i = 0; i < sizeof handles / sizeof handles[0]; ++i) {
        dlscan_handle_t h = handles[i].tile_items
                                ? cpu_handle_tiles(handles[i].threads, handles[i].tile_items)
                                : cpu_handle(handles[i].threads);
        if (handles[i].delay_us)
            CHECK_OK(h, dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, handles[i].delay_us));
        axis_check_random_shapes(h, &host_memory, test_max_n(handles[i].max_n), handles[i].cases,
                                 &rng);
        dlscan_destroy(h);
    }
    axis_float_sums_for_any_thread_count(&rng);
}

void cpu_axis_refusals(void)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle(2);
    axis_check_bad_input(h, &host_memory, NULL, &rng);
    dlscan_destroy(h);
}

void cpu_reduce_every_pair_and_operator(dlscan_type in_type)
{
    uint64_t rng = test_seed();
    dlscan_handle_t h = cpu_handle_tiles(3, 1024);
    across_check_reduce(h, &host_memory, in_type, test_max_n(1u << 20), &rng);
    dlscan_destroy(h);
}

void cpu_across_ranks_every_pair(dlscan_type in_type)
{
    uint64_t rng = test_seed();
    static const int rank_counts[] = {1, 2, 3, ACROSS_MAX_RANKS};
    for (size_t i = 0; i < sizeof rank_counts / sizeof rank_counts[0]; ++i) {
        const int ranks = rank_counts[i];
        dlscan_handle_t handles[ACROSS_MAX_RANKS];
        test_memory memories[ACROSS_MAX_RANKS] = {{NULL}};
        for (int r = 0; r < ranks; ++r) {
            handles[r] = cpu_handle_tiles(1 + r % 3, 256);
            memories[r] = host_memory;
        }
        across_check_scans(handles, memories, ranks, in_type, test_max_n(3000), &rng);
        if (test_type_size(in_type) >= 4) /* compaction's types */
            across_check_select(handles, memories, ranks, in_type, test_max_n(3000), &rng);
        for (int r = 0; r < ranks; ++r)
            dlscan_destroy(handles[r]);
    }
}

void cpu_across_refusals(void)
{
    dlscan_handle_t h = cpu_handle(2);
    across_check_bad_input(h, &host_memory, NULL);
    dlscan_destroy(h);
    /* The peer exchange needs GPU handles: every rank's creation refused, nothing exchanged. */
    uint64_t rng = test_seed();
    dlscan_handle_t handles[3];
    test_memory memories[3];
    for (int r = 0; r < 3; ++r) {
        handles[r] = cpu_handle(1);
        memories[r] = host_memory;
    }
    across_check_peers(handles, memories, 3, 1000, &rng);
    for (int r = 0; r < 3; ++r)
        dlscan_destroy(handles[r]);
}
