/*
 * bench.c: the throughput sweep behind the paper's key figure: device-wide scan
 * throughput (billions of items per second) against input size, one curve per variant:
 * dlscan, cudaMemcpyAsync device-to-device (the ceiling: a single-pass scan moves the same
 * bytes), CUB's DeviceScan and the seed algorithms (baselines.cu).
 *
 *   bench [--quick] [--types int32,float32,int64,float64] [--op sum|min|max] [--exclusive]
 *         [--min-log 10] [--max-log 30] [--variants a,b,...] [--repeats 5]
 *         [--csv FILE] [--markdown FILE] [--stats] [--full-up-to 28]
 *
 * --stats prints, per size, what dlscan's look-backs did (one extra counted call), where the
 * library counts them: its testing build only (dlscan.h, DLSCAN_OPTION_LOOKBACK_STATS).
 * Variants: all by default, or those --variants names.
 * Above 2^(--full-up-to) only memcpy, dlscan (both folds) and CUB run (the baselines end there).
 *
 * Method (per variant, type and size):
 *   1. validate: poison the output, run once, compare with the sequential CPU reference
 *      (tests/scan_check.c: integers exactly, float sums against float64); a wrong
 *      variant is reported and not timed, and the program exits non-zero;
 *   2. warm up (3 calls), then time back-to-back calls between two CUDA events, enough
 *      calls for about 4 ms, repeated --repeats times: the median per-call time gives the
 *      throughput (n / time). The variants' batches alternate, round by round, so that
 *      every variant of a size sees the same drift of the host and the GPU (small calls
 *      are bound by the host's launches, whose speed moves from second to second). The
 *      host's clock around the same loop gives the time the host takes to enqueue a call
 *      (host_us): where it is as long as the per-call time, the calls are bound by the
 *      host's launches, not by the GPU;
 *   3. single-call latency: event, one call, event, wait; median of 15. It includes the
 *      host's work to validate and enqueue the call.
 * Sizes whose input and output fit in L2 together are marked: they measure the cache.
 * Bytes moved per call at the floor: 2 * n * sizeof(item) (read once, write once).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "dlscan.h"
#include "scan_check.h"
#include "variants.h"
#include "stats.h"

int test_expect_failures; /* scan_check.c's plain-build counter (unused here) */

#define MAX_VARIANTS 16
#define MAX_SIZES 32

/* ---------------------------------------------------------------- variants: memcpy, dlscan */

static size_t item_size(dlscan_type type)
{
    return type == DLSCAN_INT32 || type == DLSCAN_UINT32 || type == DLSCAN_FLOAT32 ? 4 : 8;
}

typedef struct copy_state {
    size_t size;
} copy_state;

static int always(dlscan_type type, dlscan_op op, int exclusive)
{
    (void)type, (void)op, (void)exclusive;
    return 1;
}

static int copy_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n)
{
    (void)op, (void)exclusive, (void)max_n;
    copy_state *s = malloc(sizeof *s);
    s->size = item_size(type);
    *state = s;
    return 0;
}

static int copy_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    const copy_state *s = state;
    return (int)cudaMemcpyAsync(out, in, n * s->size, cudaMemcpyDeviceToDevice, stream);
}

static void free_state(void *state) { free(state); }

typedef struct dlscan_state {
    dlscan_handle_t h;
    dlscan_type type;
    dlscan_op op;
    int exclusive;
} dlscan_state;

static int dlscan_prepare_mode(void **state, dlscan_type type, dlscan_op op, int exclusive,
                               size_t max_n, int deterministic, int persistent)
{
    dlscan_state *s = calloc(1, sizeof *s);
    *state = s;
    s->type = type, s->op = op, s->exclusive = exclusive;
    if (dlscan_create(&s->h) != DLSCAN_SUCCESS ||
        dlscan_set_option(s->h, DLSCAN_OPTION_DETERMINISTIC, deterministic) != DLSCAN_SUCCESS ||
        dlscan_set_option(s->h, DLSCAN_OPTION_PERSISTENT, persistent) != DLSCAN_SUCCESS ||
        dlscan_reserve(s->h, max_n, type) != DLSCAN_SUCCESS)
        return (int)cudaErrorUnknown;
    return 0;
}

static int dlscan_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive, size_t max_n)
{
    return dlscan_prepare_mode(state, type, op, exclusive, max_n, 0, 1);
}

static int dlscan_deterministic_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive,
                                        size_t max_n)
{
    return dlscan_prepare_mode(state, type, op, exclusive, max_n, 1, 1);
}

static int dlscan_blocks_prepare(void **state, dlscan_type type, dlscan_op op, int exclusive,
                                 size_t max_n)
{
    return dlscan_prepare_mode(state, type, op, exclusive, max_n, 0, 0);
}

static int dlscan_float_sum_only(dlscan_type type, dlscan_op op, int exclusive)
{
    (void)exclusive;
    return op == DLSCAN_SUM && (type == DLSCAN_FLOAT32 || type == DLSCAN_FLOAT64);
}

static int dlscan_run(void *state, const void *in, void *out, size_t n, cudaStream_t stream)
{
    const dlscan_state *s = state;
    const dlscan_status status =
        s->exclusive ? dlscan_exclusive_scan(s->h, in, out, n, s->type, s->op, NULL, stream)
                     : dlscan_inclusive_scan(s->h, in, out, n, s->type, s->op, stream);
    if (status != DLSCAN_SUCCESS)
        fprintf(stderr, "dlscan: %s: %s\n", dlscan_status_string(status), dlscan_last_error(s->h));
    return status == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}

static void dlscan_release(void *state)
{
    dlscan_state *s = state;
    if (s)
        dlscan_destroy(s->h);
    free(s);
}

static const bench_variant memcpy_variant = {
    "memcpy", "cudaMemcpyAsync device to device: the bytes of a scan, the ceiling", 1, always,
    copy_prepare, copy_run, free_state};
static const bench_variant dlscan_variant = {
    "dlscan", "dlscan, one kernel per call, default options", 0, always, dlscan_prepare,
    dlscan_run, dlscan_release};
static const bench_variant dlscan_blocks_variant = {
    "dlscan-blocks", "dlscan with DLSCAN_OPTION_PERSISTENT = 0: one block per tile", 0, always,
    dlscan_blocks_prepare, dlscan_run, dlscan_release};
static const bench_variant dlscan_deterministic_variant = {
    "dlscan-det", "dlscan with DLSCAN_OPTION_DETERMINISTIC = 1: float sums fold left to right", 0,
    dlscan_float_sum_only, dlscan_deterministic_prepare, dlscan_run, dlscan_release};

/* ---------------------------------------------------------------- options */

typedef struct options {
    int quick;
    dlscan_type types[6];
    int type_count;
    dlscan_op op;
    int exclusive;
    int min_log, max_log;
    const char *variant_filter;
    int repeats;
    const char *csv, *markdown;
    int stats;
    int full_up_to;
} options;

static const char *const type_names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
static const char *const op_names[] = {"sum", "min", "max"};

static int parse_type(const char *name, dlscan_type *type)
{
    for (int t = 0; t < 6; ++t)
        if (strcmp(name, type_names[t]) == 0) {
            *type = (dlscan_type)t;
            return 1;
        }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench [--quick] [--types int32,float32,int64,float64] [--op sum|min|max]\n"
                    "             [--exclusive] [--min-log N] [--max-log N] [--variants a,b]\n"
                    "             [--repeats N] [--csv FILE] [--markdown FILE]\n");
    exit(2);
}

static options parse_options(int argc, char **argv)
{
    options o = {0, {DLSCAN_INT32, DLSCAN_FLOAT32, DLSCAN_INT64, DLSCAN_FLOAT64}, 4, DLSCAN_SUM,
                 0, 10, 30, NULL, 5, NULL, NULL, 0, 30};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (strcmp(a, "--exclusive") == 0) {
            o.exclusive = 1;
        } else if (strcmp(a, "--stats") == 0) {
            o.stats = 1;
        } else if (value && strcmp(a, "--types") == 0) {
            char copy[256];
            snprintf(copy, sizeof copy, "%s", value);
            o.type_count = 0;
            for (char *t = strtok(copy, ","); t && o.type_count < 6; t = strtok(NULL, ","))
                if (!parse_type(t, &o.types[o.type_count++]))
                    usage();
            ++i;
        } else if (value && strcmp(a, "--op") == 0) {
            int found = 0;
            for (int k = 0; k < 3; ++k)
                if (strcmp(value, op_names[k]) == 0)
                    o.op = (dlscan_op)k, found = 1;
            if (!found)
                usage();
            ++i;
        } else if (value && strcmp(a, "--min-log") == 0) {
            o.min_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--max-log") == 0) {
            o.max_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--variants") == 0) {
            o.variant_filter = value, ++i;
        } else if (value && strcmp(a, "--repeats") == 0) {
            o.repeats = atoi(value), ++i;
        } else if (value && strcmp(a, "--full-up-to") == 0) {
            o.full_up_to = atoi(value), ++i;
        } else if (value && strcmp(a, "--csv") == 0) {
            o.csv = value, ++i;
        } else if (value && strcmp(a, "--markdown") == 0) {
            o.markdown = value, ++i;
        } else {
            usage();
        }
    }
    if (o.min_log < 1 || o.max_log > 34 || o.min_log > o.max_log || o.repeats < 1)
        usage();
    return o;
}

/* Every variant runs unless --variants names some. */
static int variant_selected(const options *o, const char *name)
{
    if (!o->variant_filter)
        return 1;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", o->variant_filter);
    for (char *t = strtok(copy, ","); t; t = strtok(NULL, ","))
        if (strcmp(t, name) == 0)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- timing */


typedef struct measurement {
    double per_call_ms; /* back-to-back, median */
    double host_us;     /* the host's time to enqueue one back-to-back call, median */
    double latency_us;  /* single call, median */
} measurement;

/* One round: `calls` back-to-back calls; their GPU time and the host's time to enqueue them,
 * per call. Returns 0, or the variant's error. */
static int measure_round(const bench_variant *v, void *state, const void *in, void *out, size_t n,
                         cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, int calls,
                         double *per_call_ms, double *host_us)
{
    int error = 0;
    float ms = 0;
    CUDA_CHECK(cudaEventRecord(start, stream));
    const double host_start = bench_host_seconds();
    for (int c = 0; c < calls && !error; ++c)
        error = v->run(state, in, out, n, stream);
    *host_us = (bench_host_seconds() - host_start) * 1e6 / calls;
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    *per_call_ms = ms / calls;
    return error;
}

/* Warms the variant up (3 calls) and returns in *calls how many back-to-back calls take
 * about 4 ms, from a round of one. Returns 0, or the variant's error. */
static int measure_start(const bench_variant *v, void *state, const void *in, void *out, size_t n,
                         cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, int *calls)
{
    int error = 0;
    for (int i = 0; i < 3 && !error; ++i)
        error = v->run(state, in, out, n, stream);
    double ms = 0, host_us;
    if (!error)
        error = measure_round(v, state, in, out, n, stream, start, stop, 1, &ms, &host_us);
    *calls = (int)ceil(4.0 / (ms > 1e-4 ? ms : 1e-4));
    *calls = *calls < 3 ? 3 : *calls > 4000 ? 4000 : *calls;
    return error;
}

/* Single-call latency: event, one call, event, wait; the median of 15. Returns 0, or the
 * variant's error. */
static int measure_latency(const bench_variant *v, void *state, const void *in, void *out, size_t n,
                           cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, double *latency_us)
{
    double latencies[15];
    int error = 0;
    for (int r = 0; r < 15 && !error; ++r) {
        float ms = 0;
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaEventRecord(start, stream));
        error = v->run(state, in, out, n, stream);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        latencies[r] = 1000.0 * ms;
    }
    *latency_us = error ? NAN : bench_median(latencies, 15);
    return error;
}

/* Runs once into a poisoned output and compares with the reference. Returns 1 if right. */
static int validate(const bench_variant *v, void *state, const void *in, void *out, size_t n,
                    const options *o, dlscan_type type, const void *host_in, void *host_out,
                    cudaStream_t stream, char *message, size_t message_size)
{
    const size_t bytes = n * item_size(type);
    CUDA_CHECK(cudaMemsetAsync(out, 0xa5, bytes, stream));
    const int error = v->run(state, in, out, n, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (error) {
        snprintf(message, message_size, "the call failed: %s", cudaGetErrorString((cudaError_t)error));
        (void)cudaGetLastError();
        return 0;
    }
    CUDA_CHECK(cudaMemcpy(host_out, out, bytes, cudaMemcpyDeviceToHost));
    if (v->is_copy) {
        const int same = memcmp(host_out, host_in, bytes) == 0;
        if (!same)
            snprintf(message, message_size, "the copy differs from the input");
        return same;
    }
    const scan_case c = {type, o->op, o->exclusive, 0, 0, n, TEST_VALUES_UNIFORM};
    return scan_check_output(&c, host_in, NULL, host_out, message, message_size);
}

/* One counted dlscan call: what the look-backs did, per look-back. */
static void print_lookback_stats(const bench_variant *v, void *state, const void *in, void *out,
                                 size_t n, cudaStream_t stream)
{
    if (v->run != dlscan_run)
        return;
    const dlscan_state *s = state;
    dlscan_lookback_stats st;
    if (dlscan_set_option(s->h, DLSCAN_OPTION_LOOKBACK_STATS, 1) != DLSCAN_SUCCESS) {
        fprintf(stderr, "stats: %s\n", dlscan_last_error(s->h));
        return;
    }
    dlscan_reset_lookback_stats(s->h);
    v->run(state, in, out, n, stream);
    dlscan_get_lookback_stats(s->h, &st);
    dlscan_set_option(s->h, DLSCAN_OPTION_LOOKBACK_STATS, 0);
    const double per = st.lookbacks ? (double)st.lookbacks : 1.0;
    fprintf(stderr,
            "stats %s n=%zu: lookbacks %llu; per look-back: waits on X %.2f, aggregates %.2f, "
            "windows slid %.3f, waits for P %.4f\n",
            v->name, n, st.lookbacks, st.waits_on_x / per, st.aggregates_folded / per,
            st.windows_slid / per, st.waits_for_p / per);
}

/* ---------------------------------------------------------------- main */

typedef struct result {
    const char *variant;
    dlscan_type type;
    size_t n;
    int valid;
    measurement m;
} result;

static double items_per_second(const result *r) { return (double)r->n / (r->m.per_call_ms * 1e-3); }

static const result *find(const result *results, int count, const char *variant, dlscan_type type,
                          size_t n)
{
    for (int i = 0; i < count; ++i)
        if (results[i].valid && results[i].type == type && results[i].n == n &&
            strcmp(results[i].variant, variant) == 0)
            return &results[i];
    return NULL;
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    if (o.quick) {
        o.min_log = 20, o.max_log = 28, o.repeats = 3;
    }
    int device = 0;
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    const bench_variant *variants[MAX_VARIANTS];
    int variant_count = 0;
    variants[variant_count++] = &memcpy_variant;
    variants[variant_count++] = &dlscan_variant;
    variants[variant_count++] = &dlscan_deterministic_variant;
    variants[variant_count++] = &dlscan_blocks_variant;
    if (bench_cub_variant())
        variants[variant_count++] = bench_cub_variant();
    int baseline_count = 0;
    const bench_variant *baselines = bench_baseline_variants(&baseline_count);
    for (int i = 0; i < baseline_count && variant_count < MAX_VARIANTS; ++i)
        variants[variant_count++] = &baselines[i];

    FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
    if (o.csv && !csv) {
        fprintf(stderr, "bench: cannot write %s\n", o.csv);
        return 1;
    }
    char operation[64], header[1024];
    snprintf(operation, sizeof operation, "%s %s", o.exclusive ? "exclusive" : "inclusive",
             op_names[o.op]);
    bench_provenance(header, sizeof header, &prop, operation);
    printf("%s", header);
    if (csv) {
        fprintf(csv, "%s", header);
        for (int v = 0; v < variant_count; ++v)
            fprintf(csv, "# variant %s: %s\n", variants[v]->name, variants[v]->description);
        fprintf(csv, "type,op,kind,variant,n,bytes_moved,fits_in_l2,per_call_us,"
                     "items_per_second,latency_us,host_us\n");
    }

    result *results = calloc((size_t)(MAX_VARIANTS * 6 * MAX_SIZES), sizeof *results);
    int result_count = 0, invalid = 0;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int t = 0; t < o.type_count; ++t) {
        const dlscan_type type = o.types[t];
        const size_t size = item_size(type);
        size_t free_bytes, total_bytes;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        int max_log = o.max_log;
        while (max_log > o.min_log && (size_t)1 << max_log > free_bytes / (3 * size))
            --max_log; /* input, output and the variants' own storage */
        const size_t max_n = (size_t)1 << max_log;
        void *host_in = malloc(max_n * size), *host_out = malloc(max_n * size);
        void *d_in, *d_out;
        if (!host_in || !host_out) {
            fprintf(stderr, "bench: host allocation failed\n");
            return 1;
        }
        uint64_t rng = 0x5eed0000u + (uint64_t)time(NULL) + (uint64_t)type;
        test_fill_random(type, TEST_VALUES_UNIFORM, host_in, max_n, &rng);
        CUDA_CHECK(cudaMalloc(&d_in, max_n * size));
        CUDA_CHECK(cudaMalloc(&d_out, max_n * size));
        CUDA_CHECK(cudaMemcpy(d_in, host_in, max_n * size, cudaMemcpyHostToDevice));

        printf("\n%s %s, %s: billions of items per second, back-to-back calls (median of %d)\n",
               type_names[type], op_names[o.op], o.exclusive ? "exclusive" : "inclusive", o.repeats);
        printf("%-8s %-4s", "n", "L2");
        for (int v = 0; v < variant_count; ++v)
            if (variant_selected(&o, variants[v]->name) && variants[v]->supports(type, o.op, o.exclusive))
                printf(" %17s", variants[v]->name);
        printf("\n");

        void *states[MAX_VARIANTS] = {0};
        int prepared[MAX_VARIANTS] = {0};
        for (int v = 0; v < variant_count; ++v) {
            if (!variant_selected(&o, variants[v]->name) || !variants[v]->supports(type, o.op, o.exclusive))
                continue;
            const int error = variants[v]->prepare(&states[v], type, o.op, o.exclusive, max_n);
            prepared[v] = error == 0;
            if (error) {
                fprintf(stderr, "bench: %s could not prepare: %s\n", variants[v]->name,
                        cudaGetErrorString((cudaError_t)error));
                (void)cudaGetLastError();
            }
        }
        for (int log = o.min_log; log <= max_log; ++log) {
            const size_t n = (size_t)1 << log;
            const int in_l2 = 2 * n * size <= (size_t)prop.l2CacheSize;
            /* Validate every variant, then time them in alternating rounds. */
            result *of[MAX_VARIANTS] = {0};
            int calls[MAX_VARIANTS] = {0};
            double samples[MAX_VARIANTS][64], host_samples[MAX_VARIANTS][64];
            const int rounds = o.repeats > 64 ? 64 : o.repeats;
            for (int v = 0; v < variant_count; ++v) {
                if (!variant_selected(&o, variants[v]->name) || !variants[v]->supports(type, o.op, o.exclusive))
                    continue;
                const int headline = !strcmp(variants[v]->name, "memcpy") ||
                                     !strcmp(variants[v]->name, "dlscan") ||
                                     !strcmp(variants[v]->name, "dlscan-det") ||
                                     !strcmp(variants[v]->name, "cub");
                if (log > o.full_up_to && !headline)
                    continue;
                result *r = of[v] = &results[result_count++];
                r->variant = variants[v]->name, r->type = type, r->n = n;
                char message[256] = "could not prepare";
                r->valid = prepared[v] && validate(variants[v], states[v], d_in, d_out, n, &o, type,
                                                   host_in, host_out, stream, message, sizeof message);
                if (r->valid && measure_start(variants[v], states[v], d_in, d_out, n, stream, start,
                                              stop, &calls[v]) != 0) {
                    r->valid = 0;
                    snprintf(message, sizeof message, "a timed call failed");
                }
                if (!r->valid) {
                    ++invalid;
                    fprintf(stderr, "bench: %s, %s, n = %zu: %s\n", variants[v]->name,
                            type_names[type], n, message);
                }
            }
            for (int round = 0; round < rounds; ++round)
                for (int v = 0; v < variant_count; ++v)
                    if (of[v] && of[v]->valid &&
                        measure_round(variants[v], states[v], d_in, d_out, n, stream, start, stop,
                                      calls[v], &samples[v][round], &host_samples[v][round]) != 0) {
                        of[v]->valid = 0;
                        ++invalid;
                        fprintf(stderr, "bench: %s, %s, n = %zu: a timed call failed\n",
                                variants[v]->name, type_names[type], n);
                    }
            printf("2^%-6d %-4s", log, in_l2 ? "yes" : "");
            for (int v = 0; v < variant_count; ++v) {
                if (!variant_selected(&o, variants[v]->name) || !variants[v]->supports(type, o.op, o.exclusive))
                    continue;
                result *r = of[v];
                if (!r) {
                    printf(" %17s", "-");
                    continue;
                }
                if (r->valid && measure_latency(variants[v], states[v], d_in, d_out, n, stream, start,
                                                stop, &r->m.latency_us) != 0) {
                    r->valid = 0;
                    ++invalid;
                }
                if (!r->valid) {
                    printf(" %17s", "WRONG");
                    continue;
                }
                r->m.per_call_ms = bench_median(samples[v], rounds);
                r->m.host_us = bench_median(host_samples[v], rounds);
                printf(" %17.2f", items_per_second(r) / 1e9);
                fflush(stdout);
                if (o.stats)
                    print_lookback_stats(variants[v], states[v], d_in, d_out, n, stream);
                if (csv)
                    fprintf(csv, "%s,%s,%s,%s,%zu,%zu,%d,%.4f,%.6g,%.3f,%.3f\n", type_names[type],
                            op_names[o.op], o.exclusive ? "exclusive" : "inclusive", r->variant, n,
                            2 * n * size, in_l2, r->m.per_call_ms * 1000.0, items_per_second(r),
                            r->m.latency_us, r->m.host_us);
            }
            printf("\n");
        }
        for (int v = 0; v < variant_count; ++v)
            if (states[v])
                variants[v]->release(states[v]);
        cudaFree(d_in);
        cudaFree(d_out);
        free(host_in);
        free(host_out);
    }

    /* Headline ratios. */
    FILE *md = o.markdown ? fopen(o.markdown, "w") : NULL;
    FILE *outs[2] = {stdout, md};
    for (int k = 0; k < 2; ++k) {
        FILE *f = outs[k];
        if (!f)
            continue;
        fprintf(f, "\n## %s: dlscan against memcpy and CUB (%s %s)\n\n", prop.name,
                o.exclusive ? "exclusive" : "inclusive", op_names[o.op]);
        fprintf(f, "| type | n | dlscan G items/s | dlscan / memcpy | dlscan / CUB | dlscan us/call | "
                   "CUB us/call | dlscan host us/call | CUB host us/call |\n");
        fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
        for (int t = 0; t < o.type_count; ++t)
            for (int log = 10; log <= 30; log += 2) {
                const size_t n = (size_t)1 << log;
                const result *d = find(results, result_count, "dlscan", o.types[t], n);
                const result *m = find(results, result_count, "memcpy", o.types[t], n);
                const result *c = find(results, result_count, "cub", o.types[t], n);
                if (!d || (log != 16 && log != 20 && log != 24 && log != 26 && log != 28 && log != 18 && log != 12))
                    continue;
                fprintf(f, "| %s | 2^%d | %.1f | %s%.3f | %s%.3f | %.2f | %s%.2f | %.2f | %s%.2f |\n",
                        type_names[o.types[t]], log, items_per_second(d) / 1e9, m ? "" : "-",
                        m ? items_per_second(d) / items_per_second(m) : 0.0, c ? "" : "-",
                        c ? items_per_second(d) / items_per_second(c) : 0.0,
                        d->m.per_call_ms * 1000.0, c ? "" : "-", c ? c->m.per_call_ms * 1000.0 : 0.0,
                        d->m.host_us, c ? "" : "-", c ? c->m.host_us : 0.0);
            }
    }
    if (md)
        fclose(md);
    if (csv)
        fclose(csv);
    free(results);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
    if (invalid)
        fprintf(stderr, "bench: %d measurements were not taken because a variant was wrong\n", invalid);
    return invalid ? 1 : 0;
}
