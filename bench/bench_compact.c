/*
 * bench_compact.c: dlscan's stream compaction against CUB's, call by call, on int32 items
 * with about half of them kept (select_flagged: half the flags set; select_if: in < 500 of
 * items in [0, 1000); unique, run-length encode and reduce-by-key: each item repeats the
 * one before with probability 1/2; reduce-by-key sums float values).
 *
 *   bench_compact [--min-log 16] [--max-log 28] [--repeats 5] [--csv FILE] [--markdown FILE]
 *
 * Method as in bench.c: each call is first validated against the sequential reference
 * (tests/compact_check.c; count and every output item, on poisoned outputs), then timed
 * back to back between CUDA events (median of --repeats batches of about 4 ms), then as
 * single calls (median of 15). Bytes moved at the floor, per item: select_if 4 + 4 x kept
 * fraction; select_flagged 5 + 4 x kept; unique 4 + 4 x heads; run-length 4 + 12 x heads;
 * reduce-by-key 8 + 8 x heads.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (stats.h) */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compact_check.h"
#include "cuda_check.h"
#include "dlscan.h"
#include "variants.h"
#include "stats.h"

int test_expect_failures; /* scan_check.c's plain-build counter (unused here) */

static const char *const call_names[] = {"select_flagged", "select_if", "unique",
                                         "run_length_encode", "reduce_by_key"};

/* One call's buffers on the device. */
typedef struct buffers {
    void *in, *values, *out, *out2, *temp;
    unsigned char *flags;
    size_t *count;
    size_t temp_bytes;
} buffers;

typedef struct implementation {
    dlscan_handle_t h; /* NULL: CUB */
} implementation;

static int run_call(const implementation *impl, const compact_case *c, buffers *b,
                    int threshold, cudaStream_t stream)
{
    const size_t n = c->n;
    if (!impl->h)
        return bench_cub_compact((int)c->call, b->temp, &b->temp_bytes, b->in, b->flags, b->values,
                                 b->out, b->out2, b->count, n, threshold, stream);
    dlscan_status status = DLSCAN_SUCCESS;
    switch (c->call) {
    case COMPACT_SELECT_FLAGGED:
        status = dlscan_select_flagged(impl->h, b->in, b->flags, b->out, b->count, n, DLSCAN_INT32, stream);
        break;
    case COMPACT_SELECT_IF:
        status = dlscan_select_if(impl->h, b->in, b->out, b->count, n, DLSCAN_INT32, DLSCAN_LESS,
                                  &threshold, stream);
        break;
    case COMPACT_UNIQUE:
        status = dlscan_unique(impl->h, b->in, b->out, b->count, n, DLSCAN_INT32, stream);
        break;
    case COMPACT_RUN_LENGTH:
        status = dlscan_run_length_encode(impl->h, b->in, b->out, b->out2, b->count, n, DLSCAN_INT32, stream);
        break;
    case COMPACT_REDUCE_BY_KEY:
        status = dlscan_reduce_by_key(impl->h, b->in, b->values, b->out, b->out2, b->count, n,
                                      DLSCAN_INT32, DLSCAN_FLOAT32, DLSCAN_SUM, stream);
        break;
    }
    if (status != DLSCAN_SUCCESS)
        fprintf(stderr, "bench_compact: %s\n", dlscan_last_error(impl->h));
    return status == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}


/* Median time per call (ms) back to back, and single-call latency (us). Returns 0 or an error. */
static int measure(const implementation *impl, const compact_case *c, buffers *b, int threshold,
                   cudaStream_t stream, int repeats, double *per_call_ms, double *latency_us)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    int error = 0;
    float ms = 0;
    for (int i = 0; i < 3 && !error; ++i)
        error = run_call(impl, c, b, threshold, stream);
    CUDA_CHECK(cudaEventRecord(start, stream));
    if (!error)
        error = run_call(impl, c, b, threshold, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    int calls = (int)ceil(4.0 / (ms > 1e-4 ? ms : 1e-4));
    calls = calls < 3 ? 3 : calls > 4000 ? 4000 : calls;
    double samples[64];
    repeats = repeats > 64 ? 64 : repeats;
    for (int r = 0; r < repeats && !error; ++r) {
        CUDA_CHECK(cudaEventRecord(start, stream));
        for (int k = 0; k < calls && !error; ++k)
            error = run_call(impl, c, b, threshold, stream);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples[r] = ms / calls;
    }
    qsort(samples, (size_t)repeats, sizeof samples[0], bench_compare_doubles);
    *per_call_ms = samples[repeats / 2];
    double latencies[15];
    for (int r = 0; r < 15 && !error; ++r) {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaEventRecord(start, stream));
        error = run_call(impl, c, b, threshold, stream);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        latencies[r] = 1000.0 * ms;
    }
    qsort(latencies, 15, sizeof latencies[0], bench_compare_doubles);
    *latency_us = latencies[7];
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return error;
}

/* Runs once into poisoned outputs and compares count and items with the reference. */
static int validate(const implementation *impl, const compact_case *c, buffers *b, int threshold,
                    cudaStream_t stream, size_t want_count, const void *want, const void *want2,
                    void *got, void *got2, size_t out2_size)
{
    const size_t n = c->n;
    CUDA_CHECK(cudaMemsetAsync(b->out, 0xa5, n * 4, stream));
    if (b->out2)
        CUDA_CHECK(cudaMemsetAsync(b->out2, 0xa5, n * out2_size, stream));
    CUDA_CHECK(cudaMemsetAsync(b->count, 0xa5, sizeof(size_t), stream));
    if (run_call(impl, c, b, threshold, stream))
        return 0;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    size_t count = 0;
    CUDA_CHECK(cudaMemcpy(&count, b->count, sizeof count, cudaMemcpyDeviceToHost));
    if (count != want_count) {
        fprintf(stderr, "bench_compact: %s %s n=%zu: count %zu, want %zu\n",
                impl->h ? "dlscan" : "cub", call_names[c->call], n, count, want_count);
        return 0;
    }
    CUDA_CHECK(cudaMemcpy(got, b->out, count * 4, cudaMemcpyDeviceToHost));
    int same = memcmp(got, want, count * 4) == 0;
    if (b->out2) {
        CUDA_CHECK(cudaMemcpy(got2, b->out2, count * out2_size, cudaMemcpyDeviceToHost));
        same = same && memcmp(got2, want2, count * out2_size) == 0;
    }
    if (!same)
        fprintf(stderr, "bench_compact: %s %s n=%zu: outputs differ from the reference\n",
                impl->h ? "dlscan" : "cub", call_names[c->call], n);
    return same;
}

int main(int argc, char **argv)
{
    int min_log = 16, max_log = 28, repeats = 5;
    const char *csv_path = NULL, *markdown_path = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (value && strcmp(argv[i], "--min-log") == 0)
            min_log = atoi(value), ++i;
        else if (value && strcmp(argv[i], "--max-log") == 0)
            max_log = atoi(value), ++i;
        else if (value && strcmp(argv[i], "--repeats") == 0)
            repeats = atoi(value), ++i;
        else if (value && strcmp(argv[i], "--csv") == 0)
            csv_path = value, ++i;
        else if (value && strcmp(argv[i], "--markdown") == 0)
            markdown_path = value, ++i;
        else {
            fprintf(stderr, "usage: bench_compact [--min-log N] [--max-log N] [--repeats N] "
                            "[--csv FILE] [--markdown FILE]\n");
            return 2;
        }
    }
    if (min_log < 1 || max_log > 30 || min_log > max_log || repeats < 1) {
        fprintf(stderr, "bench_compact: bad sizes or repeats\n");
        return 2;
    }
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const char *commit = getenv("DLSCAN_GIT_COMMIT");
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    FILE *md = markdown_path ? fopen(markdown_path, "w") : NULL;
    printf("# gpu: %s; dlscan %d, commit %s; int32 items, about half kept\n", prop.name,
           dlscan_version(), commit ? commit : "unknown");
    if (csv)
        fprintf(csv, "# gpu: %s, commit: %s, int32 items, about half kept\ncall,n,implementation,"
                     "per_call_us,items_per_second,latency_us\n",
                prop.name, commit ? commit : "unknown");
    if (md)
        fprintf(md, "## %s: dlscan compaction against CUB (int32, about half kept)\n\n"
                    "| call | n | dlscan G items/s | CUB G items/s | dlscan / CUB | dlscan us/call | CUB us/call |\n"
                    "|---|---|---|---|---|---|---|\n",
                prop.name);
    printf("%-18s %-6s %12s %12s %8s %10s %10s\n", "call", "n", "dlscan G/s", "cub G/s", "ratio",
           "dlscan us", "cub us");

    const size_t max_n = (size_t)1 << max_log;
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    implementation dlscan = {NULL}, cub = {NULL};
    if (dlscan_create(&dlscan.h) != DLSCAN_SUCCESS) {
        fprintf(stderr, "bench_compact: no GPU handle\n");
        return 1;
    }
    buffers b = {0};
    CUDA_CHECK(cudaMalloc(&b.in, max_n * 4));
    CUDA_CHECK(cudaMalloc(&b.values, max_n * 4));
    CUDA_CHECK(cudaMalloc(&b.out, max_n * 4));
    CUDA_CHECK(cudaMalloc(&b.out2, max_n * 8));
    CUDA_CHECK(cudaMalloc((void **)&b.flags, max_n));
    CUDA_CHECK(cudaMalloc((void **)&b.count, sizeof(size_t)));
    char *in = malloc(max_n * 4), *values = malloc(max_n * 4), *want = malloc(max_n * 4);
    char *want2 = malloc(max_n * 8), *got = malloc(max_n * 4), *got2 = malloc(max_n * 8);
    unsigned char *flags = malloc(max_n);
    uint64_t rng = 0x0c0ffee0u + (uint64_t)time(NULL);
    int failures = 0;

    for (int call = COMPACT_SELECT_FLAGGED; call <= COMPACT_REDUCE_BY_KEY; ++call) {
        for (int log = min_log; log <= max_log; log += 2) {
            const size_t n = (size_t)1 << log;
            const compact_pattern pattern = call <= COMPACT_SELECT_IF ? PATTERN_KEEP_HALF : PATTERN_RUNS_HALF;
            const compact_case c = {(compact_call)call, DLSCAN_INT32, DLSCAN_FLOAT32, DLSCAN_SUM,
                                    DLSCAN_LESS, pattern, 4096, n, 0};
            uint64_t operand_bits = 0;
            compact_make_inputs(&c, in, flags, values, &operand_bits, &rng);
            const size_t want_count = compact_reference(&c, in, flags, values, &operand_bits, want, want2);
            const int threshold = (int)operand_bits;
            CUDA_CHECK(cudaMemcpy(b.in, in, n * 4, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpy(b.values, values, n * 4, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpy(b.flags, flags, n, cudaMemcpyHostToDevice));
            const size_t out2_size = call == COMPACT_RUN_LENGTH ? 8 : 4;
            buffers cb = b;
            cb.out2 = call >= COMPACT_RUN_LENGTH ? b.out2 : NULL;
            /* CUB's temporary storage for this size. */
            cb.temp = NULL;
            cb.temp_bytes = 0;
            const int cub_ready = bench_cub_compact(call, NULL, &cb.temp_bytes, b.in, b.flags, b.values,
                                                    b.out, cb.out2, b.count, n, threshold, stream) == 0 &&
                                  cudaMalloc(&cb.temp, cb.temp_bytes ? cb.temp_bytes : 1) == cudaSuccess;
            double ms[2] = {NAN, NAN}, us[2] = {NAN, NAN};
            const implementation *impls[2] = {&dlscan, &cub};
            for (int k = 0; k < 2; ++k) {
                if (k == 1 && !cub_ready)
                    continue;
                if (!validate(impls[k], &c, &cb, threshold, stream, want_count, want, want2, got, got2,
                              out2_size)) {
                    ++failures;
                    continue;
                }
                if (measure(impls[k], &c, &cb, threshold, stream, repeats, &ms[k], &us[k]))
                    ++failures;
            }
            cudaFree(cb.temp);
            (void)cudaGetLastError();
            const double rate[2] = {n / (ms[0] * 1e-3) / 1e9, n / (ms[1] * 1e-3) / 1e9};
            printf("%-18s 2^%-4d %12.2f %12.2f %8.3f %10.2f %10.2f\n", call_names[call], log, rate[0],
                   rate[1], rate[0] / rate[1], ms[0] * 1000.0, ms[1] * 1000.0);
            fflush(stdout);
            for (int k = 0; csv && k < 2; ++k)
                fprintf(csv, "%s,%zu,%s,%.4f,%.6g,%.3f\n", call_names[call], n, k ? "cub" : "dlscan",
                        ms[k] * 1000.0, n / (ms[k] * 1e-3), us[k]);
            if (md)
                fprintf(md, "| %s | 2^%d | %.1f | %.1f | %.3f | %.2f | %.2f |\n", call_names[call], log,
                        rate[0], rate[1], rate[0] / rate[1], ms[0] * 1000.0, ms[1] * 1000.0);
        }
    }
    if (csv)
        fclose(csv);
    if (md)
        fclose(md);
    dlscan_destroy(dlscan.h);
    if (failures)
        fprintf(stderr, "bench_compact: %d measurements failed validation or timing\n", failures);
    return failures ? 1 : 0;
}
