/*
 * test_gpu.c: the `gpu` suite: the release library's kernels, the ones users get, against
 * the sequential CPU reference: every type, operator and compaction call, edge and large
 * sizes, both kernel choices, graphs, alignment, bad input; and dlscan_scan: every pair of
 * input and output types, device-side init and total chained over chunks (also in a graph),
 * 16-bit float special values, refusals; and segmented scans, by keys and by offsets: every
 * pair, operator and layout at the edge sizes, keys of every type, both kernel choices, large
 * random sizes, reproducible float sums, a graph's replays, pointers inside allocations and
 * off the 16-byte alignment, refusals; and scans along an axis, rows and columns (axis_check.h);
 * and reductions and scans across ranks (threads of this process, a handle and stream each:
 * across_check.h).
 * test_probe.c drives the protocol's rare paths through the testing build. Every test is
 * skipped, saying so, where no CUDA device exists. DLSCAN_TEST_MAX_N caps the sizes (for
 * compute-sanitizer runs).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, fork */

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "across_check.h"
#include "axis_check.h"
#include "compact_check.h"
#include "dlscan.h"
#include "gpu_memory.h"
#include "gpu_suite.h"
#include "operator_check.h"
#include "pair_check.h"
#include "scan_check.h"
#include "segment_check.h"

/* disturb.cu: keeps `blocks` blocks of `threads` busy for `nanoseconds` on `stream`. */
int test_disturb(cudaStream_t stream, unsigned blocks, unsigned threads, unsigned long long nanoseconds);

ParameterizedTestParameters(gpu, every_operator_and_size)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *type, gpu, every_operator_and_size, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    scan_check_type(h, &m, *type, test_max_n(1u << 24), &rng);
    for (int det = 0; det <= 1 && (*type == DLSCAN_FLOAT32 || *type == DLSCAN_FLOAT64); ++det) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, det), DLSCAN_SUCCESS);
        const scan_case c = {*type, DLSCAN_SUM, det, 1, 0, test_max_n(1u << 24) - 5,
                             TEST_VALUES_MIXED_MAGNITUDE};
        scan_check_case(h, &m, &c, &rng);
    }
    gpu_done(h, stream);
}

/* The one-block-per-tile kernel (what GPUs before sm_90 run) and the default choice (few
 * tiles one block each, more persistent) at every edge size; the probe suite forces the
 * persistent kernel at every size too. */
Test(gpu, both_scan_kernels_at_every_size, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    for (int persistent = 0; persistent <= 1; ++persistent) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, persistent), DLSCAN_SUCCESS);
        scan_check_type(h, &m, DLSCAN_INT32, test_max_n(1u << 22), &rng);
        scan_check_type(h, &m, DLSCAN_FLOAT64, test_max_n(1u << 22), &rng);
    }
    gpu_done(h, stream);
}

/* Random sizes up to 2^28 items (2^27 for 64-bit types). */
ParameterizedTestParameters(gpu, large_random_sizes)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *type, gpu, large_random_sizes, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    const size_t max_n = test_max_n(test_type_size(*type) == 8 ? 1u << 27 : 1u << 28);
    for (int i = 0; i < 3; ++i) {
        const scan_case c = {*type, (dlscan_op)i, i == 1, i == 1, i == 2,
                             max_n / 2 + test_random(&rng) % (max_n / 2 + 1), TEST_VALUES_UNIFORM};
        scan_check_case(h, &m, &c, &rng);
    }
    gpu_done(h, stream);
}

/* dlscan_scan: every output type of each input type, every operator, init from the host,
 * the device or neither, with and without d_total, at the output type's tile edges and one
 * random size up to 2^22; values that overflow the input type but not the accumulator. */
ParameterizedTestParameters(gpu, every_pair_and_operator)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *in_type, gpu, every_pair_and_operator, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    pair_check_every_output(h, &m, *in_type, test_max_n(1u << 22), &rng);
    gpu_done(h, stream);
}

/* Calls chained over chunks (0 and 1 item among them), d_init == d_total the running value. */
ParameterizedTestParameters(gpu, chained_calls_with_device_init_and_total)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *in_type, gpu, chained_calls_with_device_init_and_total, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    pair_check_chains(h, &m, *in_type, test_max_n(1u << 20), &rng);
    gpu_done(h, stream);
}

Test(gpu, float16_and_bfloat16_with_nan_inf_and_subnormals, .timeout = 120)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    pair_check_16_bit_float_specials(h, &m, &rng);
    gpu_done(h, stream);
}

/* Min and max propagate NaN in every float pair, segmented and by key (pair_check_nans). */
Test(gpu, min_and_max_propagate_nan, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    pair_check_nans(h, &m, test_max_n(1u << 21), &rng);
    gpu_done(h, stream);
}

/* Every compaction call (select_flagged, select_if with each predicate, unique, run-length
 * encode, reduce-by-key) on items of every type: keep ratios 0, 1, 50, 99 and 100%, runs of
 * 1, of a tile and of several tiles, tile-edge and random sizes up to 2^22, in place and
 * not, with the default choice of kernel (persistent for the larger sizes) and the
 * one-block-per-tile ones; the probe suite forces the persistent kernels at every size. */
ParameterizedTestParameters(gpu, compaction)
{
    return EVERY_TYPE;
}

ParameterizedTest(dlscan_type *type, gpu, compaction, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    for (int persistent = 1; persistent >= 0; --persistent) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, persistent), DLSCAN_SUCCESS);
        compact_check_type(h, &m, *type, test_max_n(1u << 22), &rng);
    }
    gpu_done(h, stream);
}

/* Stale descriptors: one handle, n shrinking and growing, types changing. */
Test(gpu, repeated_calls_with_changing_n, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_INT32, &tile);
    const size_t sizes[] = {3000 * tile + 3, 3, 5 * tile, 3000 * tile + 3, 1, 6000 * tile - 1,
                            2 * tile + 1, 33 * tile, 100 * tile};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const scan_case c = {i % 3 == 2 ? DLSCAN_FLOAT64 : DLSCAN_INT32, DLSCAN_SUM, (int)(i % 2),
                             1, (int)(i % 2), test_max_n(sizes[i]) < sizes[i] ? test_max_n(0) / 2 + i : sizes[i],
                             TEST_VALUES_UNIFORM};
        scan_check_case(h, &m, &c, &rng);
    }
    gpu_done(h, stream);
}

/* Two handles scanning at the same time on two streams. */
Test(gpu, two_handles_on_two_streams_at_once, .timeout = 180)
{
    uint64_t rng = test_seed();
    cudaStream_t s1, s2;
    dlscan_handle_t h1 = gpu_handle(&s1), h2 = gpu_handle(&s2);
    const size_t n = test_max_n(1u << 26);
    int32_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *in2 = malloc(n * sizeof *in2), *out2 = malloc(n * sizeof *out2);
    cr_assert(in && out && in2 && out2);
    test_fill_random(DLSCAN_INT32, TEST_VALUES_UNIFORM, in, n, &rng);
    test_fill_random(DLSCAN_FLOAT64, TEST_VALUES_UNIFORM, in2, n, &rng);
    void *d1, *d2;
    CUDA_OK(cudaMalloc(&d1, n * sizeof *in));
    CUDA_OK(cudaMalloc(&d2, n * sizeof *in2));
    /* cudaMemcpy from pageable memory may return before its copy lands, and orders only the
     * legacy stream: copy on the scans' streams and wait. */
    CUDA_OK(cudaMemcpyAsync(d1, in, n * sizeof *in, cudaMemcpyHostToDevice, s1));
    CUDA_OK(cudaMemcpyAsync(d2, in2, n * sizeof *in2, cudaMemcpyHostToDevice, s2));
    CUDA_OK(cudaStreamSynchronize(s1));
    CUDA_OK(cudaStreamSynchronize(s2));
    for (int round = 0; round < 3; ++round) { /* in place, so each round rescans the last */
        cr_assert_eq(dlscan_inclusive_scan(h1, d1, d1, n, DLSCAN_INT32, DLSCAN_MAX, s1), DLSCAN_SUCCESS);
        cr_assert_eq(dlscan_inclusive_scan(h2, d2, d2, n, DLSCAN_FLOAT64, DLSCAN_MIN, s2), DLSCAN_SUCCESS);
    }
    CUDA_OK(cudaStreamSynchronize(s1));
    CUDA_OK(cudaStreamSynchronize(s2));
    CUDA_OK(cudaMemcpy(out, d1, n * sizeof *out, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(out2, d2, n * sizeof *out2, cudaMemcpyDeviceToHost));
    char message[256];
    const scan_case c1 = {DLSCAN_INT32, DLSCAN_MAX, 0, 0, 0, n, TEST_VALUES_UNIFORM};
    const scan_case c2 = {DLSCAN_FLOAT64, DLSCAN_MIN, 0, 0, 0, n, TEST_VALUES_UNIFORM};
    cr_assert(scan_check_output(&c1, in, NULL, out, message, sizeof message), "%s", message);
    cr_assert(scan_check_output(&c2, in2, NULL, out2, message, sizeof message), "%s", message);
    CUDA_OK(cudaFree(d1));
    CUDA_OK(cudaFree(d2));
    free(in), free(out), free(in2), free(out2);
    gpu_done(h1, s1);
    gpu_done(h2, s2);
}

/*
 * Float sums are bitwise identical from run to run with DLSCAN_OPTION_DETERMINISTIC = 1
 * (off by default): 50 runs at 2^26 float32 (20 at float64) of mixed magnitudes, alternating between
 * two handles, each while a kernel on another stream occupies part of the GPU for a random
 * while. Then,
 * with the tree fold (DETERMINISTIC = 0), runs must differ, which shows the test can fail.
 */
Test(gpu, float_sums_are_bitwise_reproducible, .timeout = 240)
{
    uint64_t rng = test_seed();
    cudaStream_t stream, other;
    dlscan_handle_t h1 = gpu_handle(&stream), h2 = gpu_handle(&other);
    WITH_MEMORY(m, stream);
    const size_t n = test_max_n(1u << 26);
    for (int type = DLSCAN_FLOAT32; type <= DLSCAN_FLOAT64; ++type) {
        const size_t bytes = n * (type == DLSCAN_FLOAT32 ? 4 : 8);
        const int runs = type == DLSCAN_FLOAT32 ? 50 : 20;
        void *in = malloc(bytes), *first = malloc(bytes), *out = malloc(bytes);
        cr_assert(in && first && out);
        test_fill_random((dlscan_type)type, TEST_VALUES_MIXED_MAGNITUDE, in, n, &rng);
        void *d_in = m.alloc(bytes, &m), *d_out = m.alloc(bytes, &m);
        cr_assert(d_in && d_out);
        m.upload(d_in, in, bytes, &m);
        for (int deterministic = 1; deterministic >= 0; --deterministic) {
            cr_assert_eq(dlscan_set_option(h1, DLSCAN_OPTION_DETERMINISTIC, deterministic), DLSCAN_SUCCESS);
            cr_assert_eq(dlscan_set_option(h2, DLSCAN_OPTION_DETERMINISTIC, deterministic), DLSCAN_SUCCESS);
            int differing = 0;
            for (int run = 0; run < runs; ++run) {
                const unsigned blocks = 1 + (unsigned)(test_random(&rng) % 200);
                const unsigned long long ns = 20000 + test_random(&rng) % 400000;
                cr_assert_eq(test_disturb(other, blocks, 64 * (1 + run % 4), ns), 0);
                dlscan_handle_t h = run % 2 ? h2 : h1;
                cr_assert_eq(dlscan_inclusive_scan(h, d_in, d_out, n, (dlscan_type)type, DLSCAN_SUM, stream),
                             DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
                m.download(run ? out : first, d_out, bytes, &m);
                if (run && memcmp(first, out, bytes) != 0)
                    ++differing;
            }
            CUDA_OK(cudaStreamSynchronize(other));
            cr_log_info("%s, %s fold: %d of %d runs differ bitwise from the first",
                        type == DLSCAN_FLOAT32 ? "float32" : "float64",
                        deterministic ? "left" : "tree", differing, runs - 1);
            if (deterministic) {
                cr_assert_eq(differing, 0, "deterministic float sums differed between runs");
                const scan_case c = {(dlscan_type)type, DLSCAN_SUM, 0, 0, 0, n, TEST_VALUES_MIXED_MAGNITUDE};
                char message[256];
                cr_assert(scan_check_output(&c, in, NULL, first, message, sizeof message), "%s", message);
            } else {
                cr_assert_gt(differing, 0, "the tree fold gave identical bits in every run: "
                                           "this test could not tell the two apart");
            }
        }
        m.release(d_in, &m);
        m.release(d_out, &m);
        free(in), free(first), free(out);
    }
    gpu_done(h1, stream);
    gpu_done(h2, other);
}

/* A float sum of -0.0 items is -0.0 bit for bit (the identity of a float sum is -0.0). */
Test(gpu, float_sums_keep_signed_zeros, .timeout = 120)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    (void)rng;
    scan_check_signed_zeros(h, &m);
    gpu_done(h, stream);
}

/* A captured call replays correctly: the epoch and counter live in device memory. */
Test(gpu, graph_replays_scan_fresh_data, .timeout = 180)
{
    uint64_t rng = test_seed();
    cudaStream_t stream;
    dlscan_handle_t h = gpu_handle(&stream);
    const size_t n = test_max_n(3u << 20) + 17;
    int64_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    void *d_in, *d_out;
    CUDA_OK(cudaMalloc(&d_in, n * sizeof *in));
    CUDA_OK(cudaMalloc(&d_out, n * sizeof *out));
    cr_assert_eq(dlscan_reserve(h, n, DLSCAN_INT64), DLSCAN_SUCCESS);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const dlscan_status captured =
        dlscan_inclusive_scan(h, d_in, d_out, n, DLSCAN_INT64, DLSCAN_SUM, stream);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    cr_assert_eq(captured, DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 3; ++replay) {
        test_fill_random(DLSCAN_INT64, TEST_VALUES_UNIFORM, in, n, &rng);
        CUDA_OK(cudaMemcpyAsync(d_in, in, n * sizeof *in, cudaMemcpyHostToDevice, stream));
        CUDA_OK(cudaMemsetAsync(d_out, 0xa5, n * sizeof *out, stream));
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaMemcpyAsync(out, d_out, n * sizeof *out, cudaMemcpyDeviceToHost, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        char message[256];
        const scan_case c = {DLSCAN_INT64, DLSCAN_SUM, 0, 0, 0, n, TEST_VALUES_UNIFORM};
        cr_assert(scan_check_output(&c, in, NULL, out, message, sizeof message), "replay %d: %s",
                  replay, message);
    }
    /* A handle that would have to grow while capturing refuses, and the capture survives. */
    dlscan_handle_t fresh = NULL;
    cr_assert_eq(dlscan_create(&fresh), DLSCAN_SUCCESS);
    cudaGraph_t refused;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const dlscan_status grow =
        dlscan_inclusive_scan(fresh, d_in, d_out, n, DLSCAN_INT64, DLSCAN_SUM, stream);
    CUDA_OK(cudaStreamEndCapture(stream, &refused));
    cr_assert_eq(grow, DLSCAN_ERROR_CAPTURING, "%s", dlscan_status_string(grow));
    CUDA_OK(cudaGraphDestroy(refused));
    dlscan_destroy(fresh);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    CUDA_OK(cudaFree(d_in));
    CUDA_OK(cudaFree(d_out));
    free(in), free(out);
    gpu_done(h, stream);
}

/* Chained calls with device init and total, captured once, replay on fresh data and a fresh
 * init: the init is read, and the total written, when the graph runs. */
Test(gpu, graph_replays_chained_scans_with_device_init_and_total, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    static const struct {
        dlscan_type in, out;
        dlscan_op op;
        int exclusive;
    } chains[] = {{DLSCAN_UINT8, DLSCAN_INT32, DLSCAN_SUM, 1},
                  {DLSCAN_INT32, DLSCAN_INT64, DLSCAN_SUM, 0},
                  {DLSCAN_BFLOAT16, DLSCAN_FLOAT32, DLSCAN_SUM, 1},
                  {DLSCAN_FLOAT16, DLSCAN_FLOAT16, DLSCAN_MAX, 0}};
    for (size_t i = 0; i < sizeof chains / sizeof chains[0]; ++i) {
        test_chain chain;
        test_chain_make(h, &m, &chain, chains[i].in, chains[i].out, chains[i].op, chains[i].exclusive,
                        test_max_n(1u << 22), &rng);
        cr_assert_eq(dlscan_reserve(h, chain.whole.n, chains[i].out), DLSCAN_SUCCESS, "%s",
                     dlscan_last_error(h));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        const dlscan_status captured = test_chain_enqueue(h, &chain, stream);
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        cr_assert_eq(captured, DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int replay = 0; replay < 3; ++replay) {
            test_chain_fill(&m, &chain, &rng);
            CUDA_OK(cudaGraphLaunch(exec, stream));
            test_chain_check(&m, &chain);
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
        test_chain_free(&m, &chain);
    }
    gpu_done(h, stream);
}

/* Pointers aligned to their element but not to 16 bytes take element-wide accesses. */
Test(gpu, pointers_off_the_vector_alignment, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    size_t tile = 0;
    dlscan_tile_items(h, DLSCAN_FLOAT32, &tile);
    const size_t n = 37 * tile + 3;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    float *d_in = m.alloc((n + 4) * sizeof *in, &m), *d_out = m.alloc((n + 4) * sizeof *out, &m);
    cr_assert(in && out && d_in && d_out);
    for (int shift = 1; shift <= 3; ++shift) {
        float *x = d_in + shift, *y = d_out + (shift == 2 ? 0 : shift);
        test_fill_random(DLSCAN_FLOAT32, TEST_VALUES_UNIFORM, in, n, &rng);
        m.upload(x, in, n * sizeof *in, &m);
        m.fill(y, 0xa5, n * sizeof *out, &m);
        cr_assert_eq(dlscan_exclusive_scan(h, x, y, n, DLSCAN_FLOAT32, DLSCAN_SUM, NULL, stream),
                     DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        m.download(out, y, n * sizeof *out, &m);
        char message[256];
        const scan_case c = {DLSCAN_FLOAT32, DLSCAN_SUM, 1, 0, 0, n, TEST_VALUES_UNIFORM};
        cr_assert(scan_check_output(&c, in, NULL, out, message, sizeof message), "shift %d: %s",
                  shift, message);
    }
    m.release(d_in, &m);
    m.release(d_out, &m);
    free(in), free(out);
    gpu_done(h, stream);
}

Test(gpu, bad_input_is_refused_and_writes_nothing, .timeout = 180)
{
    cudaStream_t stream;
    dlscan_handle_t h = gpu_handle(&stream);
    WITH_MEMORY(m, stream);
    int32_t host[1000];
    scan_check_bad_input(h, &m, host);
    compact_check_bad_input(h, &m, host);
    uint64_t rng = test_seed();
    pair_check_refusals(h, &m, host, &rng);

    /* n items past the end of the allocation. */
    int32_t *d;
    CUDA_OK(cudaMalloc((void **)&d, 4096 * sizeof *d));
    CUDA_OK(cudaMemsetAsync(d, 0xa5, 4096 * sizeof *d, stream));
    const dlscan_status past = dlscan_inclusive_scan(h, d + 4000, d + 4000, 97, DLSCAN_INT32,
                                                     DLSCAN_SUM, stream);
    cr_assert_eq(past, DLSCAN_ERROR_OUT_OF_BOUNDS, "%s", dlscan_status_string(past));
    cr_log_info("out of bounds message: %s", dlscan_last_error(h));
    cr_assert_eq(dlscan_inclusive_scan(h, d + 4000, d + 4000, 96, DLSCAN_INT32, DLSCAN_SUM, stream),
                 DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaFree(d));

    /* A CPU handle refuses device memory. */
    dlscan_handle_t cpu = NULL;
    cr_assert_eq(dlscan_create_cpu(&cpu, 2), DLSCAN_SUCCESS);
    int32_t *device;
    CUDA_OK(cudaMalloc((void **)&device, 64));
    cr_assert_eq(dlscan_inclusive_scan(cpu, device, host, 16, DLSCAN_INT32, DLSCAN_SUM, NULL),
                 DLSCAN_ERROR_NOT_DEVICE_MEMORY);
    CUDA_OK(cudaFree(device));
    dlscan_destroy(cpu);
    gpu_done(h, stream);
}

/* ---- Segmented scans (segment_check.h) ---- */

/* Every output type of each input type, every operator, inclusive and exclusive, no init and a
 * host init, in place and not, by keys and by offsets in every layout (heads at the edges of
 * half tiles and one item either side, one segment, one per item, runs of random length,
 * empty segments and items outside every segment), at the edge sizes up to 2^22. */
ParameterizedTestParameters(gpu, segmented_every_pair_and_operator)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *in_type, gpu, segmented_every_pair_and_operator, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    segment_check_every_output(h, &m, *in_type, test_max_n(1u << 22), &rng);
    gpu_done(h, stream);
}

/* Keys of every type over several pairs and operators; float keys with runs of NaN and of
 * +0.0 next to -0.0. */
ParameterizedTestParameters(gpu, segmented_keys_of_every_type)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *key_type, gpu, segmented_keys_of_every_type, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    segment_check_keys(h, &m, *key_type, test_max_n(1u << 22), &rng);
    gpu_done(h, stream);
}

/* The one-block-per-tile kernel and the default choice (persistent for larger sizes). */
Test(gpu, segmented_both_kernels_at_every_size, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    for (int persistent = 0; persistent <= 1; ++persistent) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, persistent), DLSCAN_SUCCESS);
        segment_check_every_output(h, &m, DLSCAN_INT32, test_max_n(1u << 22), &rng);
        segment_check_every_output(h, &m, DLSCAN_FLOAT64, test_max_n(1u << 22), &rng);
    }
    gpu_done(h, stream);
}

/* Random sizes up to 2^28 items (2^27 where keys or values are 64-bit), int32 and int64 keys
 * and values: by keys in runs of 1 item to 3 tiles, and by offsets in runs of 1 to 16 items,
 * in place. The parameter's bit 0 makes the keys int64, bit 1 the values. */
ParameterizedTestParameters(gpu, segmented_large_random_sizes)
{
    static int combinations[] = {0, 1, 2, 3};
    return cr_make_param_array(int, combinations, 4);
}

ParameterizedTest(int *combination, gpu, segmented_large_random_sizes, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    const dlscan_type key = *combination & 1 ? DLSCAN_INT64 : DLSCAN_INT32;
    const dlscan_type value = *combination & 2 ? DLSCAN_INT64 : DLSCAN_INT32;
    const size_t max_n = test_max_n(*combination ? 1u << 27 : 1u << 28);
    for (int i = 0; i < 2; ++i) {
        const segment_case c = {{value, value, (dlscan_op)(i ? DLSCAN_MAX : DLSCAN_SUM), i, TEST_INIT_HOST,
                                 0, i, max_n / 2 + test_random(&rng) % (max_n / 2 + 1),
                                 TEST_VALUES_UNIFORM},
                                i ? SEGMENT_OFFSETS : SEGMENT_KEYS,
                                key,
                                i ? SEGMENTS_SHORT : SEGMENTS_OF_TILES};
        segment_check_case(h, &m, &c, &rng);
    }
    gpu_done(h, stream);
}

/* With DLSCAN_OPTION_DETERMINISTIC = 1, segmented float sums are bitwise the same from run to run
 * (10 runs, each while a kernel on another stream occupies part of the GPU for a random while)
 * and right: float32 and float64 of mixed magnitudes at 2^24, by keys in runs of 1 item to 3
 * tiles and by offsets in one segment. The tree fold (0) is run the same way and how many of
 * its runs differ is logged. */
Test(gpu, segmented_float_sums_are_bitwise_reproducible, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cudaStream_t other;
    CUDA_OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    const size_t n = test_max_n(1u << 24);
    for (int t = 0; t < 4; ++t) {
        const dlscan_type type = t % 2 ? DLSCAN_FLOAT64 : DLSCAN_FLOAT32;
        const segment_case c = {{type, type, DLSCAN_SUM, t / 2, TEST_INIT_NONE, 0, 0, n - (size_t)t,
                                 TEST_VALUES_MIXED_MAGNITUDE},
                                t < 2 ? SEGMENT_KEYS : SEGMENT_OFFSETS,
                                DLSCAN_INT32,
                                t < 2 ? SEGMENTS_OF_TILES : SEGMENTS_ONE};
        size_t unit = 0, tile = 0;
        segment_tiles(h, type, &unit, &tile);
        segment_data d;
        segment_make(&c, unit, tile, &d, &rng);
        const size_t bytes = c.scan.n * test_type_size(type);
        void *first = malloc(bytes);
        cr_assert(first);
        char what[300], message[400];
        segment_describe(&c, what, sizeof what);
        segment_buffers b;
        segment_upload(&m, &c, &d, &b);
        for (int deterministic = 1; deterministic >= 0; --deterministic) {
            cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, deterministic), DLSCAN_SUCCESS);
            int differing = 0;
            for (int run = 0; run < 10; ++run) {
                const unsigned blocks = 1 + (unsigned)(test_random(&rng) % 200);
                const unsigned long long ns = 20000 + test_random(&rng) % 400000;
                cr_assert_eq(test_disturb(other, blocks, 64 * (1 + run % 4), ns), 0);
                const dlscan_status status = segment_enqueue(h, &c, &d, &b, stream);
                cr_assert_eq(status, DLSCAN_SUCCESS, "%s: %s", what, dlscan_last_error(h));
                segment_download(&m, &c, &d, &b);
                if (run == 0)
                    memcpy(first, d.output, bytes);
                else if (memcmp(first, d.output, bytes) != 0)
                    ++differing;
            }
            CUDA_OK(cudaStreamSynchronize(other));
            cr_log_info("%s, %s fold: %d of 9 runs differ bitwise from the first", what,
                        deterministic ? "left" : "tree", differing);
            cr_assert(segment_check_output(&c, tile, &d, message, sizeof message), "%s: %s", what, message);
            if (deterministic)
                cr_assert_eq(differing, 0, "%s: deterministic float sums differed between runs", what);
        }
        segment_release(&m, &c, &b);
        free(first);
        segment_free(&d);
    }
    CUDA_OK(cudaStreamDestroy(other));
    gpu_done(h, stream);
}

/* A segmented scan captured into a CUDA graph on a fresh handle after dlscan_reserve(n, its
 * output type), so that nothing may grow while capturing, replays on fresh values: by keys (fresh
 * keys too) and by offsets (the same offsets: their count is captured); the host init is the
 * one read at capture. */
Test(gpu, segmented_graph_replays_fresh_data, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    const size_t n = test_max_n(3u << 20) + 17;
    for (int kind = SEGMENT_KEYS; kind <= SEGMENT_OFFSETS; ++kind) {
        dlscan_handle_t fresh = NULL;
        cr_assert_eq(dlscan_create(&fresh), DLSCAN_SUCCESS);
        cr_assert_eq(dlscan_reserve(fresh, n, DLSCAN_INT64), DLSCAN_SUCCESS, "%s", dlscan_last_error(fresh));
        const segment_case c = {{DLSCAN_INT64, DLSCAN_INT64, DLSCAN_SUM, kind, TEST_INIT_HOST, 0, 0, n,
                                 TEST_VALUES_UNIFORM},
                                (segment_kind)kind,
                                DLSCAN_INT32,
                                kind == SEGMENT_KEYS ? SEGMENTS_OF_TILES : SEGMENTS_AT_EDGES};
        size_t unit = 0, tile = 0;
        segment_tiles(fresh, DLSCAN_INT64, &unit, &tile);
        segment_data d;
        segment_make(&c, unit, tile, &d, &rng);
        const uint64_t init_bits = d.init_bits;
        const size_t num_segments = d.num_segments;
        segment_buffers b;
        segment_upload(&m, &c, &d, &b);
        char what[300], message[400];
        segment_describe(&c, what, sizeof what);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        const dlscan_status captured = segment_enqueue(fresh, &c, &d, &b, stream);
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        cr_assert_eq(captured, DLSCAN_SUCCESS, "%s: %s", what, dlscan_last_error(fresh));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int replay = 0; replay < 3; ++replay) {
            if (replay) { /* fresh data in the captured buffers */
                segment_free(&d);
                segment_make(&c, unit, tile, &d, &rng);
                d.init_bits = init_bits;
                cr_assert_eq(d.num_segments, num_segments);
                m.upload(b.d_in, d.input, n * 8, &m);
                if (d.keys)
                    m.upload(b.d_keys, d.keys, n * 4, &m);
                m.fill(b.d_out, TEST_POISON_BYTE, n * 8, &m);
            }
            CUDA_OK(cudaGraphLaunch(exec, stream));
            segment_download(&m, &c, &d, &b);
            cr_assert(segment_check_output(&c, tile, &d, message, sizeof message), "%s, replay %d: %s",
                      what, replay, message);
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
        segment_release(&m, &c, &b);
        segment_free(&d);
        dlscan_destroy(fresh);
    }
    gpu_done(h, stream);
}

/* Pointers inside their allocations: 16 bytes in, after memory that holds the first key again
 * (the persistent kernel reads the 16 bytes of keys before a tile: item 0 still starts a
 * segment, and nothing before d_out is written), and off the 16-byte alignment by 1 to 3 items
 * (one block per tile). */
Test(gpu, segmented_pointers_inside_allocations_and_off_alignment, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    size_t unit = 0, tile = 0;
    segment_tiles(h, DLSCAN_INT32, &unit, &tile);
    /* enough tiles for the persistent kernel; items around: 4 before at most, 16 guard after */
    const size_t n = 300 * unit + 3, pad = 36;
    int32_t *keys = malloc((n + pad) * sizeof *keys);
    cr_assert(keys);
    for (int shift = 0; shift <= 3; ++shift)
        for (int kind = SEGMENT_KEYS; kind <= SEGMENT_OFFSETS; ++kind) {
            const segment_case c = {{DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, shift % 2, TEST_INIT_HOST,
                                     0, 0, n, TEST_VALUES_UNIFORM},
                                    (segment_kind)kind,
                                    DLSCAN_INT32,
                                    SEGMENTS_OF_TILES};
            segment_data d;
            segment_make(&c, unit, tile, &d, &rng);
            const size_t at = shift ? (size_t)shift : 4, out_at = shift == 2 ? 4 : at;
            const size_t keys_at = shift ? (size_t)(shift + 1) % 4 : 4;
            int32_t *in_base = m.alloc((n + pad) * 4, &m), *out_base = m.alloc((n + pad) * 4, &m);
            int32_t *keys_base = m.alloc((n + pad) * 4, &m);
            cr_assert(in_base && out_base && keys_base);
            segment_buffers b = {in_base + at, out_base + out_at, kind == SEGMENT_KEYS ? keys_base + keys_at : NULL,
                                 NULL};
            if (kind == SEGMENT_KEYS) { /* the first key again before the keys, and after them */
                const int32_t first = n ? ((const int32_t *)d.keys)[0] : 0;
                for (size_t i = 0; i < n + pad; ++i)
                    keys[i] = i < keys_at || i >= keys_at + n ? first : ((const int32_t *)d.keys)[i - keys_at];
                m.upload(keys_base, keys, (n + pad) * 4, &m);
            } else {
                b.d_offsets = m.alloc((d.num_segments + 1) * sizeof(size_t), &m);
                cr_assert(b.d_offsets);
                m.upload(b.d_offsets, d.offsets, (d.num_segments + 1) * sizeof(size_t), &m);
            }
            m.upload(b.d_in, d.input, n * 4, &m);
            m.fill(out_base, TEST_POISON_BYTE, (n + pad) * 4, &m);
            char what[300], message[400];
            segment_describe(&c, what, sizeof what);
            const dlscan_status status = segment_enqueue(h, &c, &d, &b, stream);
            cr_assert_eq(status, DLSCAN_SUCCESS, "shift %d, %s: %s", shift, what, dlscan_last_error(h));
            segment_download(&m, &c, &d, &b);
            test_expect_poisoned(&m, out_base, out_at * 4, what);
            cr_assert(segment_check_output(&c, tile, &d, message, sizeof message), "shift %d, %s: %s",
                      shift, what, message);
            m.release(in_base, &m);
            m.release(out_base, &m);
            m.release(keys_base, &m);
            if (b.d_offsets)
                m.release(b.d_offsets, &m);
            segment_free(&d);
        }
    free(keys);
    gpu_done(h, stream);
}

Test(gpu, segmented_bad_input_is_refused_and_writes_nothing, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    int32_t host[1000];
    segment_check_bad_input(h, &m, host, &rng);
    gpu_done(h, stream);
}

/* ---- Scans along an axis (axis_check.h) ---- */

/* Every output type of each input type, every operator, inclusive and exclusive, with and
 * without init and d_totals, in place: rows around the segmented tile (the segmented kernels,
 * heads from the index; long rows of a type into itself, the plain scan's persistent kernel)
 * and columns of strides 2 to 257 and more around the column tile (the column kernel, narrow
 * and wide), up to 2^22 items. */
ParameterizedTestParameters(gpu, axis_every_pair_and_operator)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *in_type, gpu, axis_every_pair_and_operator, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    axis_check_every_output(h, &m, *in_type, test_max_n(1u << 22), &rng);
    gpu_done(h, stream);
}

/* Rows on the one-block-per-tile kernel and on the default choice (persistent for more tiles). */
Test(gpu, axis_rows_on_both_kernels, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    for (int persistent = 0; persistent <= 1; ++persistent) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, persistent), DLSCAN_SUCCESS);
        axis_check_every_output(h, &m, DLSCAN_INT32, test_max_n(1u << 22), &rng);
        axis_check_every_output(h, &m, DLSCAN_FLOAT64, test_max_n(1u << 22), &rng);
    }
    gpu_done(h, stream);
}

/* Rows and columns of random shapes up to 2^27 items. */
Test(gpu, axis_large_random_shapes, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    axis_check_random_shapes(h, &m, test_max_n(1u << 27), 12, &rng);
    gpu_done(h, stream);
}

Test(gpu, axis_bad_input_is_refused_and_writes_nothing, .timeout = 180)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    int32_t host[1000];
    axis_check_bad_input(h, &m, host, &rng);
    gpu_done(h, stream);
}

/* A column scan captured into a CUDA graph: dlscan_reserve(n) does not cover its descriptors (one
 * per column of a tile), so the capture is refused, and after dlscan_reserve_scan with its
 * arguments it is taken and replays on fresh values. int32 [2^16, 16] (rows fewer where
 * DLSCAN_TEST_MAX_N says), sums, checked exactly. */
Test(gpu, axis_columns_graph_after_reserve_scan, .timeout = 120)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    const size_t columns = 16, length = test_max_n(1u << 20) / columns, n = length * columns;
    int32_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    cr_assert(in && out);
    int32_t *d_in = m.alloc(n * sizeof *in, &m), *d_out = m.alloc(n * sizeof *out, &m);
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_out = d_out;
    a.n = n;
    a.axis_length = length;
    a.axis_stride = columns;
    dlscan_handle_t fresh = NULL;
    cr_assert_eq(dlscan_create(&fresh), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_reserve(fresh, n, DLSCAN_INT32), DLSCAN_SUCCESS, "%s", dlscan_last_error(fresh));
    cudaGraph_t graph;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const dlscan_status refused = dlscan_scan(fresh, &a, stream);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    CUDA_OK(cudaGraphDestroy(graph));
    cr_assert_eq(refused, DLSCAN_ERROR_CAPTURING, "after dlscan_reserve(n): %s", dlscan_status_string(refused));
    cr_assert(strstr(dlscan_last_error(fresh), "dlscan_reserve_scan") != NULL, "%s", dlscan_last_error(fresh));

    cr_assert_eq(dlscan_reserve_scan(fresh, &a), DLSCAN_SUCCESS, "%s", dlscan_last_error(fresh));
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const dlscan_status captured = dlscan_scan(fresh, &a, stream);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    cr_assert_eq(captured, DLSCAN_SUCCESS, "after dlscan_reserve_scan: %s", dlscan_last_error(fresh));
    cudaGraphExec_t exec;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
        test_fill_random(DLSCAN_INT32, TEST_VALUES_UNIFORM, in, n, &rng);
        m.upload(d_in, in, n * sizeof *in, &m);
        m.fill(d_out, TEST_POISON_BYTE, n * sizeof *out, &m);
        CUDA_OK(cudaGraphLaunch(exec, stream));
        m.download(out, d_out, n * sizeof *out, &m);
        for (size_t j = 0; j < columns; ++j) {
            uint32_t sum = 0;
            for (size_t k = 0; k < length; ++k) {
                sum += (uint32_t)in[k * columns + j];
                cr_assert_eq((uint32_t)out[k * columns + j], sum, "replay %d: column %zu, row %zu", replay, j, k);
            }
        }
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    dlscan_destroy(fresh);
    m.release(d_in, &m);
    m.release(d_out, &m);
    free(in), free(out);
    gpu_done(h, stream);
}

/* ---- Reductions and scans across ranks (across_check.h) ---- */

/* Every output type of each input type, every operator, at the edge sizes up to 2^22 items. */
ParameterizedTestParameters(gpu, reduce_every_pair_and_operator)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *in_type, gpu, reduce_every_pair_and_operator, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    across_check_reduce(h, &m, *in_type, test_max_n(1u << 22), &rng);
    gpu_done(h, stream);
}

/* Float sums of mixed magnitudes reduced with DLSCAN_OPTION_DETERMINISTIC: the same bits in every
 * run, off the 16-byte alignment too. */
Test(gpu, reduce_float_sums_are_reproducible, .timeout = 120)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, 1), DLSCAN_SUCCESS);
    const size_t n = test_max_n(1u << 24) + 3;
    float *values = malloc(n * sizeof *values);
    cr_assert(values);
    test_fill_random(DLSCAN_FLOAT32, TEST_VALUES_MIXED_MAGNITUDE, values, n, &rng);
    float *d_in = NULL, *d_total = NULL;
    CUDA_OK(cudaMalloc((void **)&d_in, n * sizeof *d_in));
    CUDA_OK(cudaMalloc((void **)&d_total, sizeof *d_total));
    m.upload(d_in, values, n * sizeof *values, m.context);
    for (int offset = 0; offset <= 1; ++offset) {
        float first = 0, again = 0;
        for (int run = 0; run < 5; ++run) {
            cr_assert_eq(dlscan_reduce(h, d_in + offset, d_total, n - offset, DLSCAN_FLOAT32, DLSCAN_FLOAT32,
                                       DLSCAN_SUM, NULL, stream),
                         DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
            m.download(run ? &again : &first, d_total, sizeof first, m.context);
            cr_expect(run == 0 || memcmp(&first, &again, sizeof first) == 0,
                      "offset %d, run %d: %.9g, run 0: %.9g", offset, run, (double)again, (double)first);
        }
    }
    CUDA_OK(cudaFree(d_in));
    CUDA_OK(cudaFree(d_total));
    free(values);
    gpu_done(h, stream);
}

/* Every pair of each input type and every operator across 1 and 3 ranks, slices up to 2^18. */
ParameterizedTestParameters(gpu, across_ranks_every_pair)
{
    return EVERY_SCAN_TYPE;
}

ParameterizedTest(dlscan_type *in_type, gpu, across_ranks_every_pair, .timeout = 240)
{
    uint64_t rng = test_seed();
    dlscan_handle_t probe = NULL;
    if (dlscan_create(&probe) == DLSCAN_ERROR_NO_DEVICE)
        cr_skip_test("no CUDA device here: the gpu suite needs one");
    dlscan_destroy(probe);
    gpu_across_ranks(1, *in_type, test_max_n(1u << 18), &rng);
    gpu_across_ranks(3, *in_type, test_max_n(1u << 18), &rng);
}

/* The peer exchange (dlscan_peers_create) between 2 and 3 ranks on this GPU: the exact cases,
 * selects, and a burst of calls enqueued before any rank waits. The ranks are threads of this
 * process, so its kernels are loaded before the first (CUDA_MODULE_LOADING=EAGER, as dlscan.h
 * asks): a kernel's first load may wait for the device, where another rank's exchange waits for
 * this rank. */
Test(gpu, across_peers, .timeout = 240)
{
    setenv("CUDA_MODULE_LOADING", "EAGER", 1); /* before this test's process first calls CUDA */
    uint64_t rng = test_seed();
    dlscan_handle_t probe = NULL;
    if (dlscan_create(&probe) == DLSCAN_ERROR_NO_DEVICE)
        cr_skip_test("no CUDA device here: the gpu suite needs one");
    dlscan_destroy(probe);
    gpu_across_peers(2, test_max_n(1u << 18), &rng);
    gpu_across_peers(3, test_max_n(1u << 18), &rng);
}

Test(gpu, across_bad_input_is_refused_and_writes_nothing, .timeout = 120)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    (void)rng;
    int32_t host[1000];
    across_check_bad_input(h, &m, host);
    gpu_done(h, stream);
}

/* ---- User operators (operator_check.h), compiled at run time ---- */

Test(gpu, user_operator_builtins, .timeout = 600)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    operator_check_builtins(h, &m, test_max_n(1u << 22), &rng);
    gpu_done(h, stream);
}

/* A check on both kernels: the default choice (few tiles one block each, more persistent) and
 * one block per tile at every size. */
static void on_both_kernels(void (*check)(dlscan_handle_t, const test_memory *, size_t, uint64_t *))
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    for (int persistent = 1; persistent >= 0; --persistent) {
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, persistent), DLSCAN_SUCCESS);
        check(h, &m, test_max_n(1u << 22), &rng);
    }
    gpu_done(h, stream);
}

Test(gpu, user_operators_written_in_the_test, .timeout = 600) { on_both_kernels(operator_check_user); }

Test(gpu, user_operators_along_rows, .timeout = 600) { on_both_kernels(operator_check_rows); }

Test(gpu, user_operators_down_columns, .timeout = 600) { on_both_kernels(operator_check_columns); }

Test(gpu, user_operators_reduce_by_key, .timeout = 600) { on_both_kernels(operator_check_runs); }

Test(gpu, user_operators_in_segments, .timeout = 600) { on_both_kernels(operator_check_segments); }

Test(gpu, user_operator_chains_and_refusals, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    operator_check_chain(h, &m, &rng);
    operator_check_refusals(h, &m);
    gpu_done(h, stream);
}

/* The left fold (DLSCAN_OPTION_DETERMINISTIC) gives a float recurrence the same bits on every
 * run; checked against the tree fold's values within rounding by operator_check_builtins. */
Test(gpu, user_operator_left_fold_is_reproducible, .timeout = 240)
{
    GPU_TEST_BEGIN(h, m, stream, rng);
    cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, 1), DLSCAN_SUCCESS);
    operator_check_builtins(h, &m, test_max_n(1u << 18), &rng);
    const size_t n = test_max_n((1u << 23) + 3);
    dlscan_operator_t op;
    cr_assert_eq(dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &op), DLSCAN_SUCCESS);
    float *a = malloc(n * 4), *first = malloc(n * 4), *again = malloc(n * 4);
    cr_assert(a && first && again);
    for (size_t i = 0; i < n; ++i)
        a[i] = 0.5f + (float)(test_random(&rng) % 1024) / 2048.0f;
    float *d_a, *d_out;
    CUDA_OK(cudaMalloc((void **)&d_a, n * 4));
    CUDA_OK(cudaMalloc((void **)&d_out, n * 4));
    CUDA_OK(cudaMemcpy(d_a, a, n * 4, cudaMemcpyHostToDevice));
    dlscan_scan_args args = DLSCAN_SCAN_ARGS_INIT;
    args.custom = op, args.d_in = d_a, args.d_in2 = d_a, args.d_out = d_out, args.n = n;
    for (int run = 0; run < 20; ++run) {
        if (run % 4 == 1) /* other work on the GPU changes the order the tiles finish in */
            test_disturb(stream, 132, 256, 20000);
        cr_assert_eq(dlscan_scan(h, &args, stream), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(run ? again : first, d_out, n * 4, cudaMemcpyDeviceToHost));
        if (run)
            cr_expect(memcmp(first, again, n * 4) == 0, "run %d differs from the first", run);
    }
    CUDA_OK(cudaFree(d_a));
    CUDA_OK(cudaFree(d_out));
    free(a), free(first), free(again);
    dlscan_operator_destroy(op);
    gpu_done(h, stream);
}

/* Makes logsumexp of float64 in a child process (before this one touches CUDA); its exit status:
 * 0 where it came from `want` (dlscan_operator_info's source), 3 without a device, else 1 or 2. */
static int operator_in_child(int want)
{
    const pid_t child = fork();
    if (child == 0) {
        dlscan_handle_t h;
        dlscan_operator_t op;
        if (dlscan_create(&h) != DLSCAN_SUCCESS)
            _exit(3);
        int source = -1;
        const int made = dlscan_operator_builtin(h, DLSCAN_BUILTIN_LOGSUMEXP, DLSCAN_FLOAT64, NULL, &op) ==
                         DLSCAN_SUCCESS;
        if (made)
            dlscan_operator_info(op, NULL, &source);
        _exit(!made ? 1 : source == want ? 0 : 2);
    }
    int status = 0;
    cr_assert_eq(waitpid(child, &status, 0), child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

/* A process compiles an operator and leaves it in the disk cache; where that file is damaged,
 * the next one compiles it again; the one after loads it from disk (under 50 ms), and a second
 * operator of the same source comes from memory. */
Test(gpu, user_operator_caches, .timeout = 240)
{
    char dir[] = "/tmp/dlscan-cache-XXXXXX";
    cr_assert(mkdtemp(dir));
    setenv("DLSCAN_CACHE_DIR", dir, 1);
    const int first = operator_in_child(0);
    if (first == 3)
        cr_skip_test("no CUDA device here: the gpu suite needs one");
    cr_assert_eq(first, 0, "the first process compiled it");
    DIR *files = opendir(dir);
    cr_assert(files);
    int damaged = 0;
    for (struct dirent *e; (e = readdir(files));)
        if (strstr(e->d_name, ".cubin")) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            FILE *f = fopen(path, "wb");
            cr_assert(f);
            fputs("not a cubin", f);
            fclose(f);
            ++damaged;
        }
    closedir(files);
    cr_assert_eq(damaged, 1, "one cubin on disk");
    cr_assert_eq(operator_in_child(0), 0, "a damaged file is compiled again");

    GPU_TEST_BEGIN(h, m, stream, rng);
    (void)rng, (void)m;
    dlscan_operator_t op, same;
    double ms = 0;
    int source = -1;
    cr_assert_eq(dlscan_operator_builtin(h, DLSCAN_BUILTIN_LOGSUMEXP, DLSCAN_FLOAT64, NULL, &op), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_operator_info(op, &ms, &source), DLSCAN_SUCCESS);
    cr_expect_eq(source, 2, "from the disk cache");
    cr_expect(ms < 50, "a cached operator loads in under 50 ms: %.1f ms", ms);
    cr_assert_eq(dlscan_operator_builtin(h, DLSCAN_BUILTIN_LOGSUMEXP, DLSCAN_FLOAT64, NULL, &same), DLSCAN_SUCCESS);
    cr_assert_eq(dlscan_operator_info(same, &ms, &source), DLSCAN_SUCCESS);
    cr_expect_eq(source, 1, "from the process's cache");
    dlscan_operator_destroy(op);
    dlscan_operator_destroy(same);
    gpu_done(h, stream);
}

/* Without NVRTC an operator is refused with its own status, and built-in scans still run. */
Test(gpu, user_operator_without_nvrtc, .timeout = 120)
{
    setenv("DLSCAN_NVRTC", "off", 1);
    GPU_TEST_BEGIN(h, m, stream, rng);
    (void)rng, (void)m;
    dlscan_operator_t op = (dlscan_operator_t)1;
    cr_expect_eq(dlscan_operator_builtin(h, DLSCAN_BUILTIN_PRODUCT, DLSCAN_FLOAT32, NULL, &op), DLSCAN_ERROR_NO_COMPILER);
    cr_expect_null(op);
    cr_expect(strstr(dlscan_last_error(h), "NVRTC") != NULL, "%s", dlscan_last_error(h));
    gpu_done(h, stream);
}
