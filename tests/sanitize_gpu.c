/*
 * sanitize_gpu.c: the GPU suites' kernel coverage as one plain program, for
 * compute-sanitizer (memcheck, racecheck; tools/gpu-check's sanitizer step). Criterion runs
 * each test in a sandboxed child process that the sanitizer does not follow, so this drives
 * the same shared checks (scan_check.c, pair_check.c, compact_check.c, segment_check.c) in a
 * single process: every 32- and 64-bit type and operator and every compaction call, one
 * dlscan_scan chain (uint8 into int32, d_init == d_total), segmented scans (float64 by keys and
 * by offsets in every layout, uint8 keys over several pairs), min and max with NaN (every float
 * pair, segmented and by key), scans along an axis (int32, float64 and uint8 into int32, rows
 * and columns), reductions and scans across three ranks (threads), user operators compiled at
 * run time (operator_check.c), then bad input (segmented: with offsets that break the caller's
 * promise too). DLSCAN_SANITIZE_ONLY=operators runs the user operators' step and their
 * refusals alone, DLSCAN_SANITIZE_ONLY=axis the steps of scans along an axis; =types the
 * reductions and each type's scans and compactions, =rest every step after them (the two halves
 * of the whole, each within one sanitizer run's time: tools/gpu-check). Built twice:
 * sanitize_gpu on the release library, with the default choice of kernel (few tiles one block
 * each, more persistent) and one block per tile; sanitize_probe on the testing build
 * (DLSCAN_TESTING), with the persistent kernels forced at any size and pauses inside tiles
 * (compaction, int64 segmented scans, axis scans). Sizes up to DLSCAN_TEST_MAX_N (default
 * 2^18). Prints TAP; exits non-zero on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "across_check.h"
#include "axis_check.h"
#include "compact_check.h"
#include "gpu_memory.h"
#include "operator_check.h"
#include "pair_check.h"
#include "scan_check.h"
#include "segment_check.h"
#include "testing.h"

int test_expect_failures;

/* User operators: the built-ins, the test's operators, rows, columns, reduce-by-key, segments, a chain. */
static void user_operators(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng, int *step)
{
    const int before = test_expect_failures;
    operator_check_builtins(h, m, max_n, rng);
    operator_check_user(h, m, max_n, rng);
    operator_check_rows(h, m, max_n, rng);
    operator_check_columns(h, m, max_n, rng);
    operator_check_runs(h, m, max_n, rng);
    operator_check_segments(h, m, max_n, rng);
    operator_check_chain(h, m, rng);
    printf("%s %d - user operators\n", test_expect_failures == before ? "ok" : "not ok", ++*step);
    fflush(stdout);
}

/* Scans along an axis, a step for each choice of kernel: rows (long rows the plain scan's
 * kernels, shorter ones the segmented kernels) and columns (the column kernel). */
static void axis_steps(dlscan_handle_t h, const test_memory *m, const int *choices,
                       const char *const *kernels, int count, size_t max_n, uint64_t *rng, int *step)
{
    for (int k = 0; k < count; ++k) {
        CHECK(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, choices[k]) == DLSCAN_SUCCESS, "option");
        const int before = test_expect_failures;
        axis_check_every_output(h, m, DLSCAN_INT32, max_n, rng);
        axis_check_every_output(h, m, DLSCAN_FLOAT64, max_n, rng);
        axis_check_every_output(h, m, DLSCAN_UINT8, max_n, rng);
        printf("%s %d - scans along an axis, %s kernels\n", test_expect_failures == before ? "ok" : "not ok",
               ++*step, kernels[k]);
        fflush(stdout);
    }
}

int main(void)
{
    dlscan_handle_t h = NULL;
    const dlscan_status created = dlscan_create(&h);
    if (created == DLSCAN_ERROR_NO_DEVICE) {
        printf("1..0 # SKIP no CUDA device here\n");
        return 0;
    }
    CHECK(created == DLSCAN_SUCCESS, "%s", dlscan_status_string(created));
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    WITH_MEMORY(m, stream);
    uint64_t rng = test_seed();
    const size_t max_n = test_max_n(1u << 18);
    static const char *const names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
#ifdef DLSCAN_TESTING
    static const int choices[] = {DLSCAN_TESTING_PERSISTENT_ALWAYS};
    static const char *const kernels[] = {"persistent"};
    const int pauses = 1;
#else
    static const int choices[] = {1, 0};
    static const char *const kernels[] = {"default-choice", "one-block-per-tile"};
    const int pauses = 0;
#endif
    const int count = (int)(sizeof choices / sizeof choices[0]);
    int step = 0;
    const char *only = getenv("DLSCAN_SANITIZE_ONLY");
    if (only && strcmp(only, "operators") == 0) {
        printf("TAP version 13\n1..2\n");
        user_operators(h, &m, max_n, &rng, &step);
        const int before = test_expect_failures;
        operator_check_refusals(h, &m);
        printf("%s %d - user operators' refusals\n", test_expect_failures == before ? "ok" : "not ok", ++step);
        CUDA_OK(cudaStreamDestroy(stream));
        dlscan_destroy(h);
        return test_expect_failures ? 1 : 0;
    }
    if (only && strcmp(only, "axis") == 0) {
        printf("TAP version 13\n1..%d\n", count);
        axis_steps(h, &m, choices, kernels, count, max_n, &rng, &step);
        CUDA_OK(cudaStreamDestroy(stream));
        dlscan_destroy(h);
        return test_expect_failures ? 1 : 0;
    }
    const int types = !only || strcmp(only, "rest") != 0, rest = !only || strcmp(only, "types") != 0;
    printf("TAP version 13\n1..%d\n", (types ? 1 + 6 * 2 * count : 0) + (rest ? 3 * count + 3 * pauses + 3 : 0));
    /* Reductions (int32, float32, uint8 into wider types), and scans across three ranks. */
    if (types) {
        const int before = test_expect_failures;
        across_check_reduce(h, &m, DLSCAN_INT32, max_n, &rng);
        across_check_reduce(h, &m, DLSCAN_FLOAT32, max_n, &rng);
        across_check_reduce(h, &m, DLSCAN_UINT8, max_n, &rng);
        gpu_across_ranks(3, DLSCAN_INT64, max_n / 4 + 1, &rng);
        printf("%s %d - reductions, and scans across three ranks\n",
               test_expect_failures == before ? "ok" : "not ok", ++step);
        fflush(stdout);
    }
    for (int type = DLSCAN_INT32; types && type <= DLSCAN_FLOAT64; ++type)
        for (int k = 0; k < count; ++k) {
            CHECK(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, choices[k]) == DLSCAN_SUCCESS, "option");
            int before = test_expect_failures;
            scan_check_type(h, &m, (dlscan_type)type, max_n, &rng);
            printf("%s %d - scan %s, %s kernels\n", test_expect_failures == before ? "ok" : "not ok",
                   ++step, names[type], kernels[k]);
            before = test_expect_failures;
            compact_check_type(h, &m, (dlscan_type)type, max_n, &rng);
            printf("%s %d - compaction %s, %s kernels\n", test_expect_failures == before ? "ok" : "not ok",
                   ++step, names[type], kernels[k]);
            fflush(stdout);
        }
    if (!rest) {
        CUDA_OK(cudaStreamDestroy(stream));
        dlscan_destroy(h);
        return test_expect_failures ? 1 : 0;
    }
    /* Segmented scans: float64 by keys and by offsets in every layout, and uint8 keys (with
     * int32, int64, float and 16-bit values) in every layout. */
    for (int k = 0; k < count; ++k) {
        CHECK(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, choices[k]) == DLSCAN_SUCCESS, "option");
        const int before = test_expect_failures;
        segment_check_every_output(h, &m, DLSCAN_FLOAT64, max_n, &rng);
        segment_check_keys(h, &m, DLSCAN_UINT8, max_n, &rng);
        printf("%s %d - segmented scans, %s kernels\n", test_expect_failures == before ? "ok" : "not ok",
               ++step, kernels[k]);
        fflush(stdout);
    }
    axis_steps(h, &m, choices, kernels, count, max_n, &rng, &step);
    /* Min and max with NaN: every float pair, segmented and by key. */
    for (int k = 0; k < count; ++k) {
        CHECK(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, choices[k]) == DLSCAN_SUCCESS, "option");
        const int before = test_expect_failures;
        pair_check_nans(h, &m, max_n, &rng);
        printf("%s %d - min and max with NaN, %s kernels\n", test_expect_failures == before ? "ok" : "not ok",
               ++step, kernels[k]);
        fflush(stdout);
    }
    /* Pauses inside tiles: look-backs fold long windows (reduce-by-key's operator and the
     * segmented one do not commute). */
    if (pauses) {
        int before = test_expect_failures;
        CHECK(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 10) == DLSCAN_SUCCESS, "option");
        compact_check_type(h, &m, DLSCAN_INT32, max_n, &rng);
        printf("%s %d - compaction with pauses in tiles\n", test_expect_failures == before ? "ok" : "not ok",
               ++step);
        before = test_expect_failures;
        segment_check_every_output(h, &m, DLSCAN_INT64, max_n, &rng);
        CHECK(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 0) == DLSCAN_SUCCESS, "option");
        printf("%s %d - segmented scans with pauses in tiles\n",
               test_expect_failures == before ? "ok" : "not ok", ++step);
        before = test_expect_failures;
        CHECK(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 10) == DLSCAN_SUCCESS, "option");
        axis_check_random_shapes(h, &m, max_n, 6, &rng);
        CHECK(dlscan_set_option(h, DLSCAN_TESTING_OPTION_DELAY_US, 0) == DLSCAN_SUCCESS, "option");
        printf("%s %d - scans along an axis with pauses in tiles\n",
               test_expect_failures == before ? "ok" : "not ok", ++step);
    }
    /* Exclusive uint8 sums into int32, chained over small chunks: each call reads the init
     * from the device and leaves the total at the same address. */
    {
        const int before = test_expect_failures;
        test_chain chain;
        test_chain_make(h, &m, &chain, DLSCAN_UINT8, DLSCAN_INT32, DLSCAN_SUM, 1, max_n, &rng);
        test_chain_fill(&m, &chain, &rng);
        const dlscan_status status = test_chain_enqueue(h, &chain, stream);
        CHECK(status == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        test_chain_check(&m, &chain);
        test_chain_free(&m, &chain);
        printf("%s %d - uint8 into int32, chained through d_init and d_total\n",
               test_expect_failures == before ? "ok" : "not ok", ++step);
    }
    user_operators(h, &m, max_n, &rng, &step);
    const int before = test_expect_failures;
    operator_check_refusals(h, &m);
    scan_check_bad_input(h, &m, NULL);
    compact_check_bad_input(h, &m, NULL);
    segment_check_bad_input(h, &m, NULL, &rng);
    axis_check_bad_input(h, &m, NULL, &rng);
    across_check_bad_input(h, &m, NULL);
    printf("%s %d - bad input\n", test_expect_failures == before ? "ok" : "not ok", ++step);
    CUDA_OK(cudaStreamDestroy(stream));
    dlscan_destroy(h);
    return test_expect_failures ? 1 : 0;
}
