/*
 * tsan_cpu.c: the `cpu` suite's scenarios as a plain program with TAP output, for the
 * ThreadSanitizer build (-Db_sanitize=thread), where Criterion cannot start (its sandbox
 * arena clashes with TSan's memory layout: Criterion issue #274). A TSan report makes the
 * program exit non-zero (TSan's exitcode), so the test fails.
 */
#include <stdio.h>

#include "check.h"
#include "cpu_scenarios.h"

int test_expect_failures;

static void every_type(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_every_operator_and_size((dlscan_type)type);
}

static void every_pair(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_every_pair_and_operator((dlscan_type)type);
}

static void chains(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_chained_calls_with_device_init_and_total((dlscan_type)type);
}

static void segmented_pairs(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_segmented_every_pair_and_operator((dlscan_type)type);
}

static void segmented_keys(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_segmented_keys_of_every_type((dlscan_type)type);
}

static void axis_pairs(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_axis_every_pair_and_operator((dlscan_type)type);
}

static void reduce_pairs(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_reduce_every_pair_and_operator((dlscan_type)type);
}

static void across_pairs(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_BFLOAT16; ++type)
        cpu_across_ranks_every_pair((dlscan_type)type);
}

static void compaction(void)
{
    for (int type = DLSCAN_INT32; type <= DLSCAN_FLOAT64; ++type)
        cpu_compaction((dlscan_type)type);
}

int main(void)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } scenarios[] = {
        {"every_operator_and_size", every_type},
        {"float_sums_of_mixed_magnitudes", cpu_float_sums_of_mixed_magnitudes},
        {"stress_reaches_every_lookback_outcome", cpu_stress_reaches_every_lookback_outcome},
        {"long_runs_of_aggregates_wait_for_a_prefix", cpu_long_runs_of_aggregates_wait_for_a_prefix},
        {"repeated_calls_with_changing_n", cpu_repeated_calls_with_changing_n},
        {"epoch_wraps_around", cpu_epoch_wraps_around},
        {"setting_a_used_epoch_again", cpu_setting_a_used_epoch_again},
        {"float_sums_keep_signed_zeros", cpu_float_sums_keep_signed_zeros},
        {"float_sums_are_the_same_for_any_thread_count", cpu_float_sums_are_the_same_for_any_thread_count},
        {"bad_input_is_refused_and_writes_nothing", cpu_bad_input_is_refused_and_writes_nothing},
        {"compaction", compaction},
        {"every_pair_and_operator", every_pair},
        {"chained_calls_with_device_init_and_total", chains},
        {"16_bit_floats_with_nan_inf_and_subnormals", cpu_16_bit_floats_with_nan_inf_and_subnormals},
        {"min_and_max_propagate_nan", cpu_min_and_max_propagate_nan},
        {"dlscan_scan_refusals", cpu_dlscan_scan_refusals},
        {"segmented_every_pair_and_operator", segmented_pairs},
        {"segmented_keys_of_every_type", segmented_keys},
        {"segmented_lookback_outcomes", cpu_segmented_lookback_outcomes},
        {"segmented_refusals", cpu_segmented_refusals},
        {"axis_every_pair_and_operator", axis_pairs},
        {"axis_on_every_handle", cpu_axis_on_every_handle},
        {"axis_refusals", cpu_axis_refusals},
        {"reduce_every_pair_and_operator", reduce_pairs},
        {"across_ranks_every_pair", across_pairs},
        {"across_refusals", cpu_across_refusals},
        {"user_operators", cpu_user_operators},
    };
    const int count = (int)(sizeof scenarios / sizeof scenarios[0]);
    printf("TAP version 13\n1..%d\n", count);
    for (int i = 0; i < count; ++i) {
        const int failures_before = test_expect_failures;
        scenarios[i].run(); /* a failed CHECK aborts */
        printf("%s %d - cpu::%s\n", test_expect_failures == failures_before ? "ok" : "not ok", i + 1,
               scenarios[i].name);
        fflush(stdout);
    }
    return test_expect_failures ? 1 : 0;
}
