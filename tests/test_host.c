/*
 * test_host.c: the `host` suite, which needs no GPU: statuses and their strings, versions,
 * the descriptor format and the protocol's decisions (device/protocol.h, compiled here by
 * the C compiler), the policy table's choice of a row (device/policy.h), handle creation where there may be no device, the release library's
 * refusal of what only the testing build takes, dlscan_scan's argument struct (its three
 * versions, and a segmented scan and scans along an axis worked by hand), and the tests' own
 * reference: its 16-bit
 * float conversions (scan_check.c) and its segmented scans (segment_check.c) on hand-worked
 * cases.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "dlscan.h"
#include "policy.h"
#include "protocol.h"
#include "scan_check.h"
#include "segment_check.h"
#include "testing.h"

static const dlscan_status all_statuses[] = {
#define STATUS_ENTRY(name, number, message) name,
    DLSCAN_STATUS_LIST(STATUS_ENTRY)
#undef STATUS_ENTRY
};
#define STATUS_COUNT (sizeof all_statuses / sizeof all_statuses[0])

/* A device's row: by compute capability and memory bandwidth, the first match; a later
 * architecture than any row takes the newest one's; the persistent kernels on sm_90 rows only,
 * and only where the SM has the shared memory they were compiled for. */
Test(host, policy_rows_match_what_devices_report)
{
    const dl_device_facts h200 = {9, 0, 132, 228 * 1024, 60 << 20, 4915};
    const dl_device_facts h100 = {9, 0, 132, 228 * 1024, 50 << 20, 3352};
    const dl_device_facts a100 = {8, 0, 108, 164 * 1024, 40 << 20, 2039};
    const dl_device_facts later = {10, 0, 148, 228 * 1024, 126 << 20, 8000};
    const dl_device_facts old = {7, 0, 80, 96 * 1024, 6 << 20, 900};
    const dl_device_facts small_sm = {12, 0, 84, 100 * 1024, 128 << 20, 1792};
    cr_assert_str_eq(dl_policy_for(&h200)->name, "H200 (sm_90)");
    cr_assert_str_eq(dl_policy_for(&h100)->name, "H100 (sm_90)");
    cr_assert_str_eq(dl_policy_for(&a100)->name, "sm_80 and later");
    cr_assert_str_eq(dl_policy_for(&later)->name, "H200 (sm_90)");
    cr_assert_str_eq(dl_policy_for(&old)->name, "any GPU");
    cr_assert(dl_policy_for(&h200)->persistent && dl_policy_for(&h100)->persistent);
    cr_assert(!dl_policy_for(&a100)->persistent && !dl_policy_for(&old)->persistent);
    cr_assert_str_eq(dl_policy_for(&small_sm)->name, "sm_90, less shared memory");
    cr_assert(!dl_policy_for(&small_sm)->persistent && dl_policy_for(&small_sm)->dependent_launch);
    const dl_device_facts *all[] = {&h200, &h100, &a100, &later, &old, &small_sm};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        const dl_policy *row = dl_policy_for(all[i]);
        cr_assert(row->blocks_per_sm <= DL_SCAN_BLOCKS_PER_SM, "%s: more blocks than the registers fit", row->name);
        cr_assert(row->scan_from > 0 && row->compact_from > 0 && row->flagged_from > 0 && row->runs_from > 0);
        cr_assert(row->persistent == (row->blocks_per_sm > 0));
        cr_assert(!row->persistent || all[i]->shared_per_sm >= DL_SM_SHARED_BYTES, "%s", row->name);
        cr_assert(!(row->persistent || row->dependent_launch) || all[i]->major >= 9, "%s", row->name);
    }
}

Test(host, status_strings_name_each_status_once)
{
    for (size_t i = 0; i < STATUS_COUNT; ++i) {
        const char *text = dlscan_status_string(all_statuses[i]);
        cr_assert(text && strlen(text) > 10, "status %d has no sentence", (int)all_statuses[i]);
        cr_assert_eq((int)all_statuses[i], (int)i, "status numbers are 0, 1, 2, ... in order");
        for (size_t j = 0; j < i; ++j)
            cr_assert_str_neq(text, dlscan_status_string(all_statuses[j]));
    }
    cr_assert(strstr(dlscan_status_string(DLSCAN_ERROR_OVERLAP), "DLSCAN_ERROR_OVERLAP"));
    cr_assert_str_eq(dlscan_status_string((dlscan_status)1000), "unknown dlscan_status");
}

Test(host, versions_agree)
{
    cr_assert_eq(dlscan_version(), DLSCAN_VERSION);
    cr_assert_eq(DLSCAN_VERSION, DLSCAN_VERSION_MAJOR * 10000 + DLSCAN_VERSION_MINOR * 100 +
                                     DLSCAN_VERSION_PATCH);
}

Test(host, null_handle_is_refused_everywhere)
{
    cr_assert_eq(dlscan_create(NULL), DLSCAN_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(dlscan_create_cpu(NULL, 1), DLSCAN_ERROR_INVALID_ARGUMENT);
    dlscan_handle_t h = (dlscan_handle_t)1;
    cr_assert_eq(dlscan_create_cpu(&h, -1), DLSCAN_ERROR_INVALID_ARGUMENT);
    cr_assert_null(h, "a failed create sets *h to NULL");
    size_t items;
    cr_assert_eq(dlscan_tile_items(NULL, DLSCAN_INT32, &items), DLSCAN_ERROR_INVALID_HANDLE);
    cr_assert_eq(dlscan_set_option(NULL, DLSCAN_OPTION_DETERMINISTIC, 1), DLSCAN_ERROR_INVALID_HANDLE);
    cr_assert(strlen(dlscan_last_error(NULL)) > 0);
    cr_assert_str_eq(dlscan_backend_name(NULL), "invalid");
    dlscan_destroy(NULL);
}

Test(host, create_reports_no_device_or_succeeds)
{
    dlscan_handle_t h = (dlscan_handle_t)1;
    const dlscan_status status = dlscan_create(&h);
    cr_assert(status == DLSCAN_SUCCESS || status == DLSCAN_ERROR_NO_DEVICE, "%s",
              dlscan_status_string(status));
    if (status == DLSCAN_SUCCESS) {
        cr_assert_str_eq(dlscan_backend_name(h), "gpu");
    } else {
        cr_assert_null(h);
    }
    dlscan_destroy(h);
}

/* The release library (this suite links it) counts nothing and takes no testing option: each
 * is refused with its status, and the handle's options stay as they were. */
Test(host, release_library_refuses_the_testing_options)
{
    dlscan_handle_t h = NULL;
    cr_assert_eq(dlscan_create_cpu(&h, 2), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 1), DLSCAN_ERROR_NOT_SUPPORTED);
    cr_assert(strstr(dlscan_last_error(h), "testing build") != NULL, "%s", dlscan_last_error(h));
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_LOOKBACK_STATS, 0), DLSCAN_SUCCESS);
    const dlscan_option testing[] = {DLSCAN_TESTING_OPTION_DELAY_US, DLSCAN_TESTING_OPTION_EPOCH,
                                     DLSCAN_TESTING_OPTION_TICKET_BASE};
    for (int i = 0; i < 3; ++i) {
        long long value = -1;
        cr_assert_eq(dlscan_set_option(h, testing[i], 1), DLSCAN_ERROR_NOT_SUPPORTED);
        cr_assert(strstr(dlscan_last_error(h), "testing option") != NULL, "%s", dlscan_last_error(h));
        cr_assert_eq(dlscan_get_option(h, testing[i], &value), DLSCAN_ERROR_NOT_SUPPORTED);
        cr_assert_eq(value, -1);
    }
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, DLSCAN_TESTING_PERSISTENT_ALWAYS),
                 DLSCAN_ERROR_INVALID_ARGUMENT);
    long long value = -1;
    cr_assert_eq(dlscan_get_option(h, DLSCAN_OPTION_PERSISTENT, &value), DLSCAN_SUCCESS);
    cr_assert_eq(value, 1);
    /* 63 tiles look back, and nothing counts them. */
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_CPU_TILE_ITEMS, 16), DLSCAN_SUCCESS);
    int32_t items[1000];
    for (int i = 0; i < 1000; ++i)
        items[i] = i;
    cr_assert_eq(dlscan_inclusive_scan(h, items, items, 1000, DLSCAN_INT32, DLSCAN_SUM, NULL),
                 DLSCAN_SUCCESS);
    cr_assert_eq(items[999], 999 * 1000 / 2);
    dlscan_lookback_stats stats;
    memset(&stats, 0xff, sizeof stats);
    cr_assert_eq(dlscan_get_lookback_stats(h, &stats), DLSCAN_SUCCESS);
    cr_assert_eq(stats.lookbacks + stats.waits_on_x + stats.aggregates_folded + stats.stops_at_p +
                     stats.windows_slid + stats.waits_for_p,
                 0);
    dlscan_destroy(h);
}

/* dlscan.h (DLSCAN_OPTION_DETERMINISTIC): float sums are not added in a loop's order, so large
 * items of opposite signs may overflow a partial sum where a loop's running sum cancels; while
 * sums of a few items stay in range, the result is the loop's up to rounding. The case
 * (+-3e38 twice in a 16-item tile) overflows; at +-1e38 every partial sum is finite. */
Test(host, float_sums_of_large_items_that_cancel)
{
    dlscan_handle_t h = NULL;
    cr_assert_eq(dlscan_create_cpu(&h, 4), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_CPU_TILE_ITEMS, 16), DLSCAN_SUCCESS);
    float in[32] = {0}, out[32];
    in[0] = in[8] = 1e38f;
    in[1] = in[9] = -1e38f;
    cr_assert_eq(dlscan_inclusive_scan(h, in, out, 32, DLSCAN_FLOAT32, DLSCAN_SUM, NULL), DLSCAN_SUCCESS);
    float loop = 0.0f;
    for (int i = 0; i < 32; ++i) {
        loop += in[i];
        cr_assert_eq(out[i], loop, "item %d: %g, a loop gives %g", i, out[i], loop);
    }
    dlscan_destroy(h);
}

/* DLSCAN_SCAN_ARGS_INIT is the first version of the struct with its defaults. */
Test(host, scan_args_init_and_null_handle)
{
    const dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    cr_assert_eq(a.size, sizeof(dlscan_scan_args));
    cr_assert_geq(a.size, DLSCAN_SCAN_ARGS_SIZE_V1);
    cr_assert(!a.d_in && !a.d_out && a.n == 0 && !a.init && !a.d_init && !a.d_total);
    cr_assert(a.in_type == DLSCAN_INT32 && a.out_type == DLSCAN_INT32 && a.op == DLSCAN_SUM &&
              a.exclusive == 0);
    cr_assert_eq(dlscan_scan(NULL, &a, NULL), DLSCAN_ERROR_INVALID_HANDLE);
}

/* The struct's second version (segmented scans): DLSCAN_SCAN_ARGS_INIT leaves segments off and
 * DLSCAN_SCAN_ARGS_SIZE_V2 ends where the third version's fields begin. A caller built with the
 * first version passes DLSCAN_SCAN_ARGS_SIZE_V1 and gets a plain scan, whatever its memory
 * holds past its struct. */
Test(host, scan_args_version_2)
{
    const dlscan_scan_args init = DLSCAN_SCAN_ARGS_INIT;
    cr_assert(!init.d_keys && init.key_type == DLSCAN_INT32 && !init.d_offsets && init.num_segments == 0);
    cr_assert_eq(DLSCAN_SCAN_ARGS_SIZE_V2, offsetof(dlscan_scan_args, axis_length),
                 "the third version adds its fields after the second's");
    cr_assert_eq(DLSCAN_SCAN_ARGS_SIZE_V1, offsetof(dlscan_scan_args, d_keys),
                 "the second version adds its fields after the first's");
    dlscan_handle_t h = NULL;
    cr_assert_eq(dlscan_create_cpu(&h, 2), DLSCAN_SUCCESS);
    int32_t items[100], out[100];
    for (int i = 0; i < 100; ++i)
        items[i] = i % 7 - 3;
    dlscan_scan_args v1 = init;
    v1.size = DLSCAN_SCAN_ARGS_SIZE_V1;
    v1.d_in = items;
    v1.d_out = out;
    v1.n = 100;
    /* fields a first-version caller does not have: refused if the library read them */
    v1.d_keys = items;
    v1.key_type = (dlscan_type)77;
    v1.num_segments = 5;
    cr_assert_eq(dlscan_scan(h, &v1, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    int32_t sum = 0;
    for (int i = 0; i < 100; ++i) {
        sum += items[i];
        cr_assert_eq(out[i], sum, "item %d: %d, want %d", i, out[i], sum);
    }
    dlscan_destroy(h);
}

/* The struct's third version (scans along an axis): DLSCAN_SCAN_ARGS_INIT leaves the axis off.
 * A caller built with the second version
 * passes DLSCAN_SCAN_ARGS_SIZE_V2 and gets the scan it asks for (here a segmented one),
 * whatever its memory holds past its struct; sizes between V2's and V3's are refused. */
Test(host, scan_args_version_3)
{
    const dlscan_scan_args init = DLSCAN_SCAN_ARGS_INIT;
    cr_assert(init.axis_length == 0 && init.axis_stride == 0 && !init.d_totals);
    dlscan_handle_t h = NULL;
    cr_assert_eq(dlscan_create_cpu(&h, 2), DLSCAN_SUCCESS);
    int32_t items[100], out[100];
    const size_t offsets[2] = {0, 50};
    for (int i = 0; i < 100; ++i)
        items[i] = i % 7 - 3;
    dlscan_scan_args v2 = init;
    v2.size = DLSCAN_SCAN_ARGS_SIZE_V2;
    v2.d_in = items;
    v2.d_out = out;
    v2.n = 100;
    v2.d_offsets = offsets; /* one segment, items 0 .. 49; the others are left as they are */
    v2.num_segments = 1;
    /* fields a second-version caller does not have: refused if the library read them */
    v2.axis_length = 3;
    v2.axis_stride = 7;
    v2.d_totals = items;
    for (int i = 0; i < 100; ++i)
        out[i] = -99;
    cr_assert_eq(dlscan_scan(h, &v2, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    int32_t sum = 0;
    for (int i = 0; i < 100; ++i) {
        sum += items[i];
        const int32_t want = i < 50 ? sum : -99;
        cr_assert_eq(out[i], want, "item %d: %d, want %d", i, out[i], want);
    }
    for (size_t size = DLSCAN_SCAN_ARGS_SIZE_V2 + 1; size < DLSCAN_SCAN_ARGS_SIZE_V3; ++size) {
        v2.size = size;
        cr_assert_eq(dlscan_scan(h, &v2, NULL), DLSCAN_ERROR_INVALID_ARGUMENT, "size %zu", size);
    }
    dlscan_destroy(h);
}

/* The struct's fourth version (user operators): DLSCAN_SCAN_ARGS_INIT leaves custom and d_in2
 * NULL and DLSCAN_SCAN_ARGS_SIZE_V4 is the whole struct. A caller built with the third version
 * passes DLSCAN_SCAN_ARGS_SIZE_V3 and gets the scan it asks for, whatever its memory holds past
 * its struct; sizes between V3's and V4's are refused. */
Test(host, scan_args_version_4)
{
    const dlscan_scan_args init = DLSCAN_SCAN_ARGS_INIT;
    cr_assert(!init.custom && !init.d_in2);
    cr_assert_eq(DLSCAN_SCAN_ARGS_SIZE_V4, sizeof(dlscan_scan_args));
    dlscan_handle_t h = NULL;
    cr_assert_eq(dlscan_create_cpu(&h, 2), DLSCAN_SUCCESS);
    int32_t items[100], out[100];
    for (int i = 0; i < 100; ++i)
        items[i] = i % 7 - 3;
    dlscan_scan_args v3 = init;
    v3.size = DLSCAN_SCAN_ARGS_SIZE_V3;
    v3.d_in = items;
    v3.d_out = out;
    v3.n = 100;
    /* fields a third-version caller does not have: refused if the library read them */
    v3.custom = (const struct dlscan_operator *)items;
    v3.d_in2 = items;
    cr_assert_eq(dlscan_scan(h, &v3, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    int32_t sum = 0;
    for (int i = 0; i < 100; ++i) {
        sum += items[i];
        cr_assert_eq(out[i], sum, "item %d: %d, want %d", i, out[i], sum);
    }
    for (size_t size = DLSCAN_SCAN_ARGS_SIZE_V3 + 1; size < DLSCAN_SCAN_ARGS_SIZE_V4; ++size) {
        v3.size = size;
        cr_assert_eq(dlscan_scan(h, &v3, NULL), DLSCAN_ERROR_INVALID_ARGUMENT, "size %zu", size);
    }
    dlscan_destroy(h);
}

/* Scans along an axis on a CPU handle, worked by hand over a [2][3][2] array of int32 (items
 * 1 .. 12): along the last axis (rows of 2: length 2, stride 1), along the middle one (columns
 * of 3: length 3, stride 2), and along the first (length 2, stride 6), inclusive and exclusive
 * from 10, in place, with their totals. */
Test(host, scans_along_an_axis_worked_by_hand)
{
    dlscan_handle_t h = NULL;
    cr_assert_eq(dlscan_create_cpu(&h, 2), DLSCAN_SUCCESS);
    const int32_t items[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, init = 10;
    static const int32_t rows[12] = {1, 3, 3, 7, 5, 11, 7, 15, 9, 19, 11, 23};
    static const int32_t row_totals[6] = {3, 7, 11, 15, 19, 23};
    static const int32_t middle[12] = {11, 12, 14, 16, 19, 22, 17, 18, 26, 28, 37, 40};
    static const int32_t middle_exclusive[12] = {10, 10, 11, 12, 14, 16, 10, 10, 17, 18, 26, 28};
    static const int32_t middle_totals[4] = {19, 22, 37, 40};
    static const int32_t first[12] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18};
    static const int32_t first_totals[6] = {8, 10, 12, 14, 16, 18};
    int32_t out[12], totals[6];
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = items;
    a.d_out = out;
    a.n = 12;
    a.axis_length = 2;
    a.d_totals = totals;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_arr_eq(out, rows, sizeof out);
    cr_assert_arr_eq(totals, row_totals, sizeof row_totals);
    a.axis_length = 3;
    a.axis_stride = 2;
    a.init = &init;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_arr_eq(out, middle, sizeof out);
    cr_assert_arr_eq(totals, middle_totals, sizeof middle_totals);
    a.exclusive = 1;
    memcpy(out, items, sizeof out);
    a.d_in = out; /* in place */
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_arr_eq(out, middle_exclusive, sizeof out);
    cr_assert_arr_eq(totals, middle_totals, sizeof middle_totals, "an exclusive scan's totals are inclusive");
    a.d_in = items;
    a.exclusive = 0;
    a.init = NULL;
    a.axis_length = 2;
    a.axis_stride = 6;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_arr_eq(out, first, sizeof out);
    cr_assert_arr_eq(totals, first_totals, sizeof first_totals);
    dlscan_destroy(h);
}

/* Segmented scans of six items on a CPU handle, worked by hand: by keys (runs 7 7 | -1 -1 -1 |
 * 7), and by offsets {1, 3, 3, 5} (items 1 .. 2, an empty segment, items 3 .. 4; items 0 and
 * 5 in none, left as they were). */
Test(host, segmented_scans_worked_by_hand)
{
    dlscan_handle_t h = NULL;
    cr_assert_eq(dlscan_create_cpu(&h, 2), DLSCAN_SUCCESS);
    const int32_t values[6] = {1, 2, 3, 4, 5, 6}, keys[6] = {7, 7, -1, -1, -1, 7}, init = 10;
    const size_t offsets[4] = {1, 3, 3, 5};
    static const int32_t by_keys[6] = {1, 3, 3, 7, 12, 6}, by_keys_exclusive[6] = {10, 11, 10, 13, 17, 10};
    static const int32_t by_offsets[6] = {-99, 10, 12, 10, 14, -99};
    int32_t out[6];
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = values;
    a.d_out = out;
    a.n = 6;
    a.d_keys = keys;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_arr_eq(out, by_keys, sizeof out);
    a.exclusive = 1;
    a.init = &init;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_arr_eq(out, by_keys_exclusive, sizeof out);
    a.d_keys = NULL;
    a.d_offsets = offsets;
    a.num_segments = 3;
    out[0] = out[5] = -99;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_arr_eq(out, by_offsets, sizeof out);
    dlscan_destroy(h);
}

/* The tests' segmented reference (segment_check.c) on hand-worked cases: it takes the right
 * output and catches a wrong item, a scan across a segment head, an item in no segment that was
 * written (or, in place, changed), and float keys compared as floats instead of bits. */
Test(host, segmented_reference_worked_by_hand)
{
    int32_t values[6] = {1, 2, 3, 4, 5, 6}, keys[6] = {7, 7, -1, -1, -1, 7};
    int32_t inclusive[6] = {1, 3, 3, 7, 12, 6}, plain[6] = {1, 3, 6, 10, 15, 21};
    int32_t exclusive[6] = {10, 11, 10, 13, 17, 10};
    segment_case c = {{DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, 0, TEST_INIT_NONE, 0, 0, 6,
                       TEST_VALUES_NARROW},
                      SEGMENT_KEYS,
                      DLSCAN_INT32,
                      SEGMENTS_SHORT};
    segment_data d = {values, keys, NULL, 0, 0, inclusive};
    char message[400];
    cr_assert(segment_check_output(&c, 16, &d, message, sizeof message), "%s", message);
    d.output = plain;
    cr_assert_not(segment_check_output(&c, 16, &d, message, sizeof message), "a plain scan passed");
    cr_log_info("a plain scan: %s", message);
    d.output = inclusive;
    inclusive[4] = 13;
    cr_assert_not(segment_check_output(&c, 16, &d, message, sizeof message), "a wrong item passed");
    c.scan.exclusive = 1;
    c.scan.init = TEST_INIT_HOST;
    d.init_bits = 10;
    d.output = exclusive;
    cr_assert(segment_check_output(&c, 16, &d, message, sizeof message), "%s", message);

    /* Offsets {1, 3, 3, 5}, exclusive from 10: items 0 and 5 in no segment. */
    size_t offsets[4] = {1, 3, 3, 5};
    int32_t out[6] = {0, 10, 12, 10, 14, 0};
    memset(&out[0], TEST_POISON_BYTE, sizeof out[0]);
    memset(&out[5], TEST_POISON_BYTE, sizeof out[5]);
    c.kind = SEGMENT_OFFSETS;
    d.keys = NULL;
    d.offsets = offsets;
    d.num_segments = 3;
    d.output = out;
    cr_assert(segment_check_output(&c, 16, &d, message, sizeof message), "%s", message);
    out[5] = 16;
    cr_assert_not(segment_check_output(&c, 16, &d, message, sizeof message), "a written item passed");
    c.scan.in_place = 1; /* items in no segment keep the input */
    out[0] = 1;
    out[5] = 6;
    cr_assert(segment_check_output(&c, 16, &d, message, sizeof message), "%s", message);
    out[0] = 10;
    cr_assert_not(segment_check_output(&c, 16, &d, message, sizeof message), "a changed item passed");

    /* float keys +0.0 | -0.0 -0.0 | NaN NaN NaN (one bit pattern): three segments */
    const float nan = nanf("");
    float fkeys[6] = {0.0f, -0.0f, -0.0f, nan, nan, nan}, fvalues[6] = {1, 2, 3, 4, 5, 6};
    float right[6] = {1, 2, 5, 4, 9, 15}, as_floats[6] = {1, 3, 6, 4, 5, 6};
    const segment_case f = {{DLSCAN_FLOAT32, DLSCAN_FLOAT32, DLSCAN_SUM, 0, TEST_INIT_NONE, 0, 0, 6,
                             TEST_VALUES_NARROW},
                            SEGMENT_KEYS,
                            DLSCAN_FLOAT32,
                            SEGMENTS_SHORT};
    segment_data fd = {fvalues, fkeys, NULL, 0, 0, right};
    cr_assert(segment_check_output(&f, 16, &fd, message, sizeof message), "%s", message);
    fd.output = as_floats;
    cr_assert_not(segment_check_output(&f, 16, &fd, message, sizeof message),
                  "keys compared as floats passed");
}

/* The reference's conversions (scan_check.c) against every 16-bit value: each finite value
 * and each infinity converts back to itself, NaNs stay NaN, and between two neighbours (and
 * above the largest finite value, toward 2^(max_exponent + 1)) a float goes to the nearer,
 * the midpoint to the one with an even bit pattern. */
static void check_conversions(float (*to_float)(uint16_t), uint16_t (*to_bits)(float),
                              uint16_t infinity, int max_exponent)
{
    for (uint32_t b = 0; b <= 0x7fff; ++b) {
        const float value = to_float((uint16_t)b), negative = to_float((uint16_t)(b | 0x8000));
        if (b > infinity) {
            cr_assert(isnan(value) && isnan(negative), "0x%04x is a NaN", b);
            cr_assert_gt(to_bits(value) & 0x7fff, infinity, "0x%04x stays NaN", b);
            continue;
        }
        cr_assert_eq(to_bits(value), b, "0x%04x round-trips", b);
        cr_assert_eq(to_bits(negative), b | 0x8000, "0x%04x round-trips", b | 0x8000);
        cr_assert(b == 0 || to_float((uint16_t)(b - 1)) < value, "0x%04x is above its predecessor", b);
        if (b == infinity)
            break;
        const double low = value;
        const double high = b + 1 == infinity ? ldexp(1.0, max_exponent + 1) : to_float((uint16_t)(b + 1));
        const float middle = (float)((low + high) / 2); /* exact: one bit more than the type */
        cr_assert_eq((double)middle, (low + high) / 2);
        const uint16_t even = b % 2 ? (uint16_t)(b + 1) : (uint16_t)b;
        cr_assert_eq(to_bits(middle), even, "the midpoint above 0x%04x goes to 0x%04x", b, even);
        cr_assert_eq(to_bits(-middle), even | 0x8000);
        cr_assert_eq(to_bits(nextafterf(middle, 0.0f)), b, "just below the midpoint above 0x%04x", b);
        cr_assert_eq(to_bits(nextafterf(middle, INFINITY)), b + 1, "just above the midpoint above 0x%04x", b);
    }
    cr_assert_eq(to_bits(INFINITY), infinity);
    cr_assert_eq(to_bits(-INFINITY), infinity | 0x8000);
    cr_assert_eq(to_bits(1e-45f), 0, "far below the smallest subnormal: zero");
    cr_assert_eq(to_bits(-1e-45f), 0x8000, "with its sign");
}

Test(host, reference_float16_conversions)
{
    check_conversions(test_half_to_float, test_float_to_half, 0x7c00, 15);
    cr_assert_eq(test_half_to_float(0x3c00), 1.0f);
    cr_assert_eq(test_half_to_float(0x7bff), 65504.0f);
    cr_assert_eq(test_half_to_float(0x0001), ldexpf(1.0f, -24));
    cr_assert_eq(test_half_to_float(0x0400), ldexpf(1.0f, -14));
    cr_assert_eq(test_half_to_float(0xc000), -2.0f);
}

Test(host, reference_bfloat16_conversions)
{
    check_conversions(test_bfloat16_to_float, test_float_to_bfloat16, 0x7f80, 127);
    cr_assert_eq(test_bfloat16_to_float(0x3f80), 1.0f);
    cr_assert_eq(test_bfloat16_to_float(0x0001), ldexpf(1.0f, -133));
    cr_assert_eq(test_bfloat16_to_float(0x7f7f), ldexpf(255.0f, 120));
    cr_assert_eq(test_float_to_bfloat16(1.0f + ldexpf(1.0f, -8)), 0x3f80, "a tie goes to even");
    cr_assert_eq(test_float_to_bfloat16(1.0f + ldexpf(3.0f, -8)), 0x3f82, "a tie goes to even");
}

Test(host, descriptor_words_round_trip)
{
    const dl_word w = dl_word_make(12345, DL_STATUS_A, 0xdeadbeefu);
    cr_assert_eq(dl_word_payload(w), 0xdeadbeefu);
    cr_assert_eq(dl_word_tag(w), dl_tag(12345, DL_STATUS_A));
    cr_assert_eq(dl_descriptor_status(&w, 1, 12345), DL_STATUS_A);
    const dl_word top = dl_word_make(DL_EPOCH_LAST, DL_STATUS_P, 0xffffffffu);
    cr_assert_eq(dl_descriptor_status(&top, 1, DL_EPOCH_LAST), DL_STATUS_P);
}

Test(host, stale_torn_and_unknown_descriptors_read_as_x)
{
    const dl_word a7 = dl_word_make(7, DL_STATUS_A, 1);
    cr_assert_eq(dl_descriptor_status(&a7, 1, 8), DL_STATUS_X, "an earlier epoch is stale");
    const dl_word zero = 0;
    cr_assert_eq(dl_descriptor_status(&zero, 1, 1), DL_STATUS_X, "zeroed storage is X");
    const dl_word three = (dl_word)dl_tag(7, 3) << 32;
    cr_assert_eq(dl_descriptor_status(&three, 1, 7), DL_STATUS_X, "status bits 3 are not a status");
    /* Several words: all must carry the same tag. */
    dl_word words[4];
    for (int k = 0; k < 4; ++k)
        words[k] = dl_word_make(9, DL_STATUS_P, 0x1000u + (uint32_t)k);
    cr_assert_eq(dl_descriptor_status(words, 2, 9), DL_STATUS_P);
    cr_assert_eq(dl_descriptor_status(words, 4, 9), DL_STATUS_P);
    words[3] = dl_word_make(9, DL_STATUS_A, 0x1003u);
    cr_assert_eq(dl_descriptor_status(words, 4, 9), DL_STATUS_X, "A and P words are torn");
    cr_assert_eq(dl_descriptor_status(words, 2, 9), DL_STATUS_P, "a 2-word descriptor ends before");
    words[1] = dl_word_make(8, DL_STATUS_P, 0x1001u);
    cr_assert_eq(dl_descriptor_status(words, 2, 9), DL_STATUS_X, "a stale word is torn");
}

Test(host, window_decisions)
{
    cr_assert_eq(dl_window_action(1u << 4, 1u << 9), DL_WINDOW_WAIT, "any X waits");
    cr_assert_eq(dl_window_action(0, 0), DL_WINDOW_SLIDE, "all A slides");
    cr_assert_eq(dl_window_action(0, 1u << 3), DL_WINDOW_STOP, "a P stops");
    cr_assert_eq(dl_window_first_lane(0), 0, "a sliding window folds from lane 0");
    cr_assert_eq(dl_window_first_lane((1u << 3) | (1u << 17)), 17, "the nearest P heads the segment");
    cr_assert_eq(dl_window_first_lane(1u << 31), 31);
    cr_assert_eq(dl_lane_first_slot(0), 0);
    cr_assert_eq(dl_lane_first_slot(0x5), 2, "the nearest P within the lane");
    for (int slots = 1; slots <= DL_SLOTS_PER_LANE; ++slots) {
        const uint32_t all = (1u << slots) - 1;
        cr_assert_eq(dl_lane_fold_mask(5, 4, 0, slots), all, "lanes after the P's lane fold everything");
        cr_assert_eq(dl_lane_fold_mask(3, 4, 0, slots), 0, "lanes before it fold nothing");
        cr_assert_eq(dl_lane_fold_mask(4, 4, slots - 1, slots), 1u << (slots - 1),
                     "its lane folds from the P on");
        cr_assert_eq(dl_lane_fold_mask(0, 0, 0, slots), all, "a sliding window folds everything");
    }
}

/* Windows of one slot per lane (the persistent scan's) and of DL_SLOTS_PER_LANE. */
Test(host, window_geometry)
{
    cr_assert_eq(DL_WINDOW, DL_WINDOW_LANES * DL_SLOTS_PER_LANE);
    for (int slots = 1; slots <= DL_SLOTS_PER_LANE; ++slots) {
        const int window = DL_WINDOW_LANES * slots;
        cr_assert_eq(dl_window_tile(1000, 31, slots - 1, slots), 1000,
                     "lane 31's last slot is the nearest predecessor");
        cr_assert_eq(dl_window_tile(1000, 0, 0, slots), 1000 - window + 1,
                     "lane 0's first slot the farthest");
        for (int lane = 0; lane < DL_WINDOW_LANES; ++lane)
            for (int k = 0; k < slots; ++k)
                cr_assert_eq(dl_window_tile(500, lane, k, slots), 500 - window + 1 + lane * slots + k,
                             "the window's slots are consecutive tiles in lane order");
        cr_assert_lt(dl_window_tile(3, 0, 0, slots), 0, "slots before tile 0 are negative");
    }
}

Test(host, epochs_counters_and_backoff)
{
    cr_assert_eq(dl_epoch_next(1), 2);
    cr_assert(!dl_epoch_wraps(DL_EPOCH_LAST - 1));
    cr_assert(dl_epoch_wraps(DL_EPOCH_LAST));
    cr_assert_eq(dl_epoch_next(DL_EPOCH_LAST), DL_EPOCH_FIRST);
    cr_assert(!dl_epoch_valid(0) && dl_epoch_valid(1) && dl_epoch_valid(DL_EPOCH_LAST) &&
              !dl_epoch_valid((long long)DL_EPOCH_LAST + 1));
    cr_assert(dl_is_last_worker(9, 10) && !dl_is_last_worker(8, 10));
    cr_assert(dl_is_last_ticket(99, 100) && !dl_is_last_ticket(98, 100) && !dl_is_last_ticket(100, 100));
    uint32_t ns = DL_BACKOFF_FIRST_NS;
    for (int i = 0; i < 40; ++i) {
        const uint32_t next = dl_backoff_next(ns);
        cr_assert(next >= ns && next <= DL_BACKOFF_LAST_NS);
        ns = next;
    }
    cr_assert_eq(ns, DL_BACKOFF_LAST_NS);
    cr_assert(!dl_fold_buffer_full(DL_FOLD_WINDOWS - 1) && dl_fold_buffer_full(DL_FOLD_WINDOWS));
}
