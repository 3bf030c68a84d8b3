/*
 * test_cpu.c: the `cpu` suite under Criterion: one test per scenario of cpu_scenarios.c
 * (the CPU backend, which runs the GPU's look-back protocol on threads). The
 * ThreadSanitizer build runs the same scenarios through tsan_cpu.c instead.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "cpu_scenarios.h"

/* Scans take every type; compaction the six 32- and 64-bit ones. */
static dlscan_type scan_types[] = {DLSCAN_INT32, DLSCAN_UINT32, DLSCAN_INT64,  DLSCAN_UINT64,
                                   DLSCAN_FLOAT32, DLSCAN_FLOAT64, DLSCAN_INT8, DLSCAN_UINT8,
                                   DLSCAN_INT16, DLSCAN_UINT16, DLSCAN_FLOAT16, DLSCAN_BFLOAT16};
#define SCAN_TYPES cr_make_param_array(dlscan_type, scan_types, sizeof scan_types / sizeof scan_types[0])

ParameterizedTestParameters(cpu, every_operator_and_size) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *type, cpu, every_operator_and_size, .timeout = 600)
{
    cpu_every_operator_and_size(*type);
}

ParameterizedTestParameters(cpu, every_pair_and_operator) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *in_type, cpu, every_pair_and_operator, .timeout = 600)
{
    cpu_every_pair_and_operator(*in_type);
}

ParameterizedTestParameters(cpu, chained_calls_with_device_init_and_total) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *in_type, cpu, chained_calls_with_device_init_and_total, .timeout = 600)
{
    cpu_chained_calls_with_device_init_and_total(*in_type);
}

Test(cpu, user_operators, .timeout = 600) { cpu_user_operators(); }

Test(cpu, float16_and_bfloat16_with_nan_inf_and_subnormals, .timeout = 600)
{
    cpu_16_bit_floats_with_nan_inf_and_subnormals();
}

Test(cpu, min_and_max_propagate_nan, .timeout = 600) { cpu_min_and_max_propagate_nan(); }

Test(cpu, dlscan_scan_refusals_write_nothing) { cpu_dlscan_scan_refusals(); }

Test(cpu, float_sums_of_mixed_magnitudes, .timeout = 600) { cpu_float_sums_of_mixed_magnitudes(); }

Test(cpu, stress_reaches_every_lookback_outcome, .timeout = 600)
{
    cpu_stress_reaches_every_lookback_outcome();
}

Test(cpu, long_runs_of_aggregates_wait_for_a_prefix, .timeout = 600)
{
    cpu_long_runs_of_aggregates_wait_for_a_prefix();
}

Test(cpu, repeated_calls_with_changing_n, .timeout = 600) { cpu_repeated_calls_with_changing_n(); }

Test(cpu, epoch_wraps_around, .timeout = 600) { cpu_epoch_wraps_around(); }

Test(cpu, setting_a_used_epoch_again, .timeout = 600) { cpu_setting_a_used_epoch_again(); }

Test(cpu, float_sums_keep_signed_zeros, .timeout = 600) { cpu_float_sums_keep_signed_zeros(); }

Test(cpu, float_sums_are_the_same_for_any_thread_count, .timeout = 600)
{
    cpu_float_sums_are_the_same_for_any_thread_count();
}

Test(cpu, bad_input_is_refused_and_writes_nothing) { cpu_bad_input_is_refused_and_writes_nothing(); }

ParameterizedTestParameters(cpu, compaction)
{
    static dlscan_type types[] = {DLSCAN_INT32,  DLSCAN_UINT32,  DLSCAN_INT64,
                                  DLSCAN_UINT64, DLSCAN_FLOAT32, DLSCAN_FLOAT64};
    return cr_make_param_array(dlscan_type, types, sizeof types / sizeof types[0]);
}

ParameterizedTest(dlscan_type *type, cpu, compaction, .timeout = 600) { cpu_compaction(*type); }

/* Segmented scans: by keys and by offsets, every pair, operator and layout, keys of every type
 * on several thread counts and tile sizes, the look-back's outcomes, the refusals. */
ParameterizedTestParameters(cpu, segmented_every_pair_and_operator) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *in_type, cpu, segmented_every_pair_and_operator, .timeout = 600)
{
    cpu_segmented_every_pair_and_operator(*in_type);
}

ParameterizedTestParameters(cpu, segmented_keys_of_every_type) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *key_type, cpu, segmented_keys_of_every_type, .timeout = 600)
{
    cpu_segmented_keys_of_every_type(*key_type);
}

Test(cpu, segmented_lookback_outcomes, .timeout = 600) { cpu_segmented_lookback_outcomes(); }

Test(cpu, segmented_refusals_write_nothing) { cpu_segmented_refusals(); }

/* Scans along an axis: rows and columns, every pair and operator at the tiles' edges, random
 * shapes on several handles (with the probe's pauses), the refusals. */
ParameterizedTestParameters(cpu, axis_every_pair_and_operator) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *in_type, cpu, axis_every_pair_and_operator, .timeout = 600)
{
    cpu_axis_every_pair_and_operator(*in_type);
}

Test(cpu, axis_on_every_handle, .timeout = 600) { cpu_axis_on_every_handle(); }

Test(cpu, axis_refusals_write_nothing) { cpu_axis_refusals(); }

/* Reductions, and scans across ranks (threads here, each with a handle of its own). */
ParameterizedTestParameters(cpu, reduce_every_pair_and_operator) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *in_type, cpu, reduce_every_pair_and_operator, .timeout = 600)
{
    cpu_reduce_every_pair_and_operator(*in_type);
}

ParameterizedTestParameters(cpu, across_ranks_every_pair) { return SCAN_TYPES; }

ParameterizedTest(dlscan_type *in_type, cpu, across_ranks_every_pair, .timeout = 600)
{
    cpu_across_ranks_every_pair(*in_type);
}

Test(cpu, across_refusals_write_nothing) { cpu_across_refusals(); }
