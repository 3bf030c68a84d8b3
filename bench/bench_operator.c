/*
 * bench_operator.c: user operators (dlscan.h, "Your own operator"), compiled at run time, against
 * their floor: linear recurrences and a user sum beside the built-in sum, in one run.
 *
 *   bench_operator [--quick] [--repeats 5] [--csv FILE]
 *
 * The workloads and their variants, at n = 2^20 .. 2^28 (--quick: 2^20, 2^24, 2^28; 3 repeats):
 *   recurrence float32   h[t] = a[t] h[t-1] + b[t] (DLSCAN_BUILTIN_LINEAR_RECURRENCE), a and b
 *                        two arrays: reads 8 bytes an item, writes 4;
 *   recurrence float64   the same in float64: 24 bytes an item;
 *   recurrence complex64 the same over complex64 (DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE): 24
 *                        bytes an item;
 *   scalar-a float32     a one value for every item: reads b (4 bytes), writes 4;
 *   sum int32            the built-in sum (dlscan_inclusive_scan) and a sum written as a user
 *                        operator, source text through NVRTC ("unsigned int" states), side by
 *                        side: what the run-time path costs per call.
 * The floor of each: cudaMemcpyAsync device to device of half the bytes an item moves (a copy
 * reads and writes each byte), timed in the same rounds. Method (timing.c, as bench.c's): each
 * variant warmed up (3 calls), then timed back to back between CUDA events in batches of about
 * 4 ms, the variants' batches alternating round by round; the median of --repeats batches gives
 * the time per call. Reported: us per call and the floor's time over it.
 *
 * Batched float32 recurrences, [B, L] with B x L = 2^26 (the rows of dlscan.h's scans along an
 * axis: axis_length = L), L = 64, 1024, 2^14 and 2^20, against the same floor (memcpy-12) and
 * Mamba's selective-scan pattern (chunked_recurrence.cu: one block per row, chunks carried
 * serially), in rounds of their own, and the same segments given as offsets (d_offsets: the
 * program of segments, which reads the offsets, 8 / L bytes an item more) and as keys (d_keys:
 * uint32 row numbers, 4 bytes an item more, so its floor is 16 / 12 memcpy-12's time), and a
 * reduce-by-key of the recurrence by those keys (dlscan_reduce_by_key_custom: each row's last h;
 * it reads a, b and the key, 12 bytes an item, and writes 8 bytes a row: memcpy-12's floor); the first
 * call along rows makes the operator's program of rows (reported in ms), and the first over
 * offsets and by key their programs. All four are checked against the reference, row by row.
 * Then the float32 recurrence down columns, [N, M] along axis 0 with N x M = 2^26, M = 2, 16, 256,
 * 4096 and 65536 (the column program), against memcpy-12, checked column by column.
 *
 * Also the operators' first creation (a compile by NVRTC, in a cache directory of its own, so
 * nothing is cached yet; with DLSCAN_CACHE_DIR given, what that cache holds) and a second one
 * (the process's cache), in ms.
 *
 * The correctness guard, once per size after its timing: the float32 recurrence into a poisoned
 * output against a float64 sequential reference within (2 log2 n + 64 + n / 512) x 2^-24 x the
 * recurrence of magnitudes (tests/operator_check.c's bound), and the user sum against the
 * built-in sum bit for bit. A wrong output is reported on stderr and the program exits 1.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (stats.h), mkdtemp, setenv */

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunked_recurrence.h"
#include "cuda_check.h"
#include "dlscan.h"
#include "scan_check.h"
#include "stats.h"
#include "timing.h"
#include "variants.h"

int test_expect_failures; /* scan_check.c's plain-build counter (unused here) */

enum {
    COPY_12,        /* floor of the float32 recurrence: 6 bytes an item copied */
    RECURRENCE_F32,
    COPY_24,        /* float64 recurrence: 12 bytes */
    RECURRENCE_F64,
    RECURRENCE_C64, /* (floor: memcpy-24) */
    COPY_8,         /* scalar-a recurrence and the sums: 4 bytes */
    SCALAR_F32,
    SUM_BUILTIN,
    SUM_USER,
    ROWS_F32,       /* the float32 recurrence along rows of context.row_length */
    ROWS_CHUNKED,   /* the same, Mamba's pattern */
    ROWS_OFFSETS,   /* the same rows given as offsets */
    ROWS_KEYS,      /* and as keys */
    ROWS_RUNS,      /* reduce-by-key by the same keys: each row's last h */
    COLUMNS_F32,    /* the float32 recurrence down the columns of [n / columns, columns] */
    VARIANTS
};

static const char *const names[VARIANTS] = {"memcpy-12", "recurrence-f32", "memcpy-24", "recurrence-f64",
                                            "recurrence-c64", "memcpy-8", "scalar-a-f32", "sum-builtin", "sum-user", "rows-f32",
                                            "rows-chunked", "rows-offsets", "rows-keys", "rows-runs", "columns-f32"};

typedef struct context {
    dlscan_handle_t h;
    dlscan_operator_t recurrence32, recurrence64, recurrence_c64, scalar32, sum;
    void *a, *b, *out; /* n x 8 bytes each */
    size_t row_length; /* ROWS_F32 */
    size_t *offsets;   /* ROWS_OFFSETS: n / row_length + 1 of them, on the device */
    uint32_t *keys;    /* ROWS_KEYS: each item's row, on the device */
    uint32_t *keys_out; /* ROWS_RUNS: each run's key, and the count */
    size_t *runs;
    size_t columns;    /* COLUMNS_F32 */
} context;

static int scan(const context *c, dlscan_operator_t op, int two, size_t n, cudaStream_t stream)
{
    dlscan_scan_args args = DLSCAN_SCAN_ARGS_INIT;
    args.custom = op;
    args.d_in = c->a;
    args.d_in2 = two ? c->b : NULL;
    args.d_out = c->out;
    args.n = n;
    args.axis_length = op == c->recurrence32 ? c->row_length : 0;
    if (op == c->recurrence32 && c->columns) {
        args.axis_length = n / c->columns;
        args.axis_stride = c->columns;
    }
    return dlscan_scan(c->h, &args, stream) == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}

/* The float32 recurrence over the offsets of rows of c->row_length, or by their keys. */
static int scan_segments(const context *c, int by_key, size_t n, cudaStream_t stream)
{
    dlscan_scan_args args = DLSCAN_SCAN_ARGS_INIT;
    args.custom = c->recurrence32;
    args.d_in = c->a;
    args.d_in2 = c->b;
    args.d_out = c->out;
    args.n = n;
    if (by_key) {
        args.d_keys = c->keys;
        args.key_type = DLSCAN_UINT32;
    } else {
        args.d_offsets = c->offsets;
        args.num_segments = n / c->row_length;
    }
    return dlscan_scan(c->h, &args, stream) == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}

static int run(const void *p, int v, size_t n, cudaStream_t stream)
{
    const context *c = p;
    switch (v) {
    case COPY_12: return (int)cudaMemcpyAsync(c->out, c->a, n * 6, cudaMemcpyDeviceToDevice, stream);
    case COPY_24: return (int)cudaMemcpyAsync(c->out, c->a, n * 12, cudaMemcpyDeviceToDevice, stream);
    case COPY_8: return (int)cudaMemcpyAsync(c->out, c->a, n * 4, cudaMemcpyDeviceToDevice, stream);
    case RECURRENCE_F32:
    case ROWS_F32:
    case COLUMNS_F32: return scan(c, c->recurrence32, 1, n, stream); /* (row_length, columns 0 but for these) */
    case ROWS_CHUNKED: return bench_chunked_recurrence(c->a, c->b, c->out, n / c->row_length, c->row_length, stream);
    case ROWS_OFFSETS: return scan_segments(c, 0, n, stream);
    case ROWS_KEYS: return scan_segments(c, 1, n, stream);
    case ROWS_RUNS:
        return dlscan_reduce_by_key_custom(c->h, c->recurrence32, c->keys, c->a, c->b, c->keys_out, c->out, c->runs, n,
                                           DLSCAN_UINT32, NULL, stream) == DLSCAN_SUCCESS
                   ? 0
                   : (int)cudaErrorUnknown;
    case RECURRENCE_F64: return scan(c, c->recurrence64, 1, n, stream);
    case RECURRENCE_C64: return scan(c, c->recurrence_c64, 1, n, stream);
    case SCALAR_F32: return scan(c, c->scalar32, 0, n, stream);
    case SUM_USER: return scan(c, c->sum, 0, n, stream);
    case SUM_BUILTIN:
        return dlscan_inclusive_scan(c->h, c->a, c->out, n, DLSCAN_UINT32, DLSCAN_SUM, stream) == DLSCAN_SUCCESS
                   ? 0
                   : (int)cudaErrorUnknown;
    }
    return (int)cudaErrorInvalidValue;
}

/* The guard of a float32 recurrence's output h (n items in arrays [n / (length x stride)][length]
 * [stride], each of its scans from h = 0: rows where stride is 1, columns where more) against a
 * float64 sequential reference, within (2 log2 L + 64 + L / 512) x 2^-24 times the recurrence of
 * magnitudes (tests/operator_check.c's bound): 1, with the first wrong item named on stderr, or 0. */
static int recurrence_wrong(const char *name, const float *a, const float *b, const float *h, size_t n, size_t length,
                            size_t stride)
{
    const double bound = (2 * log2((double)length + 2) + 64 + (double)length / 512) * 0x1p-24;
    for (size_t first = 0; first < n; first += length * stride)
        for (size_t j = 0; j < stride; ++j) {
            double hx = 0, magnitude = 0;
            for (size_t r = 0, i = first + j; r < length; ++r, i += stride) {
                hx = (double)a[i] * hx + b[i];
                magnitude = a[i] * magnitude + fabs(b[i]);
                if (!(fabs(h[i] - hx) <= bound * magnitude)) {
                    fprintf(stderr, "bench_operator: %s n = %zu, scans of %zu items %zu apart, item %zu: %.9g, want "
                            "%.9g: WRONG\n", name, n, length, stride, i, h[i], hx);
                    return 1;
                }
            }
        }
    return 0;
}

static const char sum_source[] =
    "typedef unsigned int dlscan_state;\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y) { return x + y; }\n";

static double create_ms(dlscan_handle_t h, const dlscan_operator_desc *d, dlscan_builtin which, dlscan_type type,
                        const void *parameter, dlscan_operator_t *op, int *source)
{
    const double start = bench_host_seconds();
    const dlscan_status status =
        d ? dlscan_operator_create(h, d, op) : dlscan_operator_builtin(h, which, type, parameter, op);
    const double ms = (bench_host_seconds() - start) * 1e3;
    if (status != DLSCAN_SUCCESS) {
        fprintf(stderr, "bench_operator: making an operator: %s: %s\n", dlscan_status_string(status),
                dlscan_last_error(h));
        exit(1);
    }
    dlscan_operator_info(*op, NULL, source);
    return ms;
}

int main(int argc, char **argv)
{
    int quick = 0, repeats = 5;
    const char *csv = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1, repeats = 3;
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv = argv[++i];
        else {
            fprintf(stderr, "usage: bench_operator [--quick] [--repeats N] [--csv FILE]\n");
            return 2;
        }
    }
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    char head[1024];
    bench_provenance(head, sizeof head, &prop, "user operators compiled at run time (NVRTC) against memcpy");
    fputs(head, stdout);

    /* A cache directory of its own, where none is given: the first creation compiles. (Given one,
     * a second run reads the operators from its disk cache.) */
    char dir[] = "/tmp/dlscan-bench-cache-XXXXXX";
    if (!getenv("DLSCAN_CACHE_DIR") && mkdtemp(dir))
        setenv("DLSCAN_CACHE_DIR", dir, 1);
    context c = {0};
    if (dlscan_create(&c.h) != DLSCAN_SUCCESS) {
        fprintf(stderr, "bench_operator: no GPU handle\n");
        return 1;
    }
    const uint32_t zero = 0;
    const dlscan_operator_desc sum = {.size = sizeof sum, .state_bytes = 4, .identity = &zero, .in_bytes = 4,
                                      .out_bytes = 4, .source = sum_source};
    const float decay = 0.999f;
    int source;
    dlscan_operator_t again;
    /* (source: 0 compiled, 1 the process's cache, 2 the disk cache) */
    printf("# first creation: recurrence float32 %.1f ms",
           create_ms(c.h, NULL, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &c.recurrence32, &source));
    printf(" (source %d), float64 %.1f ms", source,
           create_ms(c.h, NULL, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT64, NULL, &c.recurrence64, &source));
    printf(" (source %d), complex64 %.1f ms", source,
           create_ms(c.h, NULL, DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &c.recurrence_c64,
                     &source));
    printf(" (source %d), scalar a %.1f ms", source,
           create_ms(c.h, NULL, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, &decay, &c.scalar32, &source));
    printf(" (source %d), user sum %.1f ms", source, create_ms(c.h, &sum, 0, 0, NULL, &c.sum, &source));
    printf(" (source %d)\n", source);
    printf("# second creation of the user sum (the process's cache): %.2f ms", create_ms(c.h, &sum, 0, 0, NULL, &again, &source));
    printf(" (source %d)\n", source);
    dlscan_operator_destroy(again);
    const float other_decay = 0.5f; /* a is the module's constant, so every a shares one program */
    printf("# scalar a of another value (the process's cache): %.2f ms",
           create_ms(c.h, NULL, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, &other_decay, &again, &source));
    printf(" (source %d)\n", source);
    dlscan_operator_destroy(again);

    int logs[9], count = 0;
    if (quick) {
        logs[count++] = 20, logs[count++] = 24, logs[count++] = 28;
    } else {
        for (int k = 20; k <= 28; ++k)
            logs[count++] = k;
    }
    const size_t largest = (size_t)1 << logs[count - 1];
    CUDA_CHECK(cudaMalloc(&c.a, largest * 12)); /* memcpy-24 copies 12 bytes an item from a */
    CUDA_CHECK(cudaMalloc(&c.b, largest * 8));
    CUDA_CHECK(cudaMalloc(&c.out, largest * 12));
    /* a in [0.5, 1), b in [-1, 1]. The float64 and complex64 recurrences read the same bytes as
     * doubles and complex numbers: they are timed, not checked. */
    float *a = malloc(largest * 4), *b = malloc(largest * 4), *h = malloc(largest * 4);
    if (!a || !b || !h)
        return 1;
    uint64_t rng = 12345;
    for (size_t i = 0; i < largest; ++i) {
        a[i] = 0.5f + (float)(test_random(&rng) >> 40) * 0x1p-25f;
        b[i] = (float)(test_random(&rng) >> 40) * 0x1p-23f - 1.0f;
    }

    bench_timer timer;
    bench_timer_create(&timer);
    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (out) {
        fputs(head, out);
        fprintf(out, "n,variant,us,floor_over_time\n");
    }
    printf("| n | recurrence f32 us (of floor) | recurrence f64 | recurrence c64 | scalar-a f32 | sum built-in | sum user "
           "| user / built-in |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    int wrong = 0;
    for (int k = 0; k < count; ++k) {
        const size_t n = (size_t)1 << logs[k];
        CUDA_CHECK(cudaMemcpy(c.a, a, n * 4, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(c.b, b, n * 4, cudaMemcpyHostToDevice));
        int valid[VARIANTS];
        double us[VARIANTS], host_us[VARIANTS];
        for (int v = 0; v < VARIANTS; ++v)
            valid[v] = v < ROWS_F32;
        bench_time_variants(&timer, run, &c, n, VARIANTS, repeats, "bench_operator", names, valid, us, host_us);
        const int floor_of[VARIANTS] = {COPY_12, COPY_12, COPY_24, COPY_24, COPY_24, COPY_8,
                                        COPY_8,  COPY_8,  COPY_8,  COPY_12, COPY_12, COPY_12};
        printf("| 2^%d | %.1f (%.3f) | %.1f (%.3f) | %.1f (%.3f) | %.1f (%.3f) | %.1f (%.3f) | %.1f (%.3f) | %.3f |\n",
               logs[k], us[RECURRENCE_F32], us[COPY_12] / us[RECURRENCE_F32], us[RECURRENCE_F64],
               us[COPY_24] / us[RECURRENCE_F64], us[RECURRENCE_C64], us[COPY_24] / us[RECURRENCE_C64], us[SCALAR_F32], us[COPY_8] / us[SCALAR_F32], us[SUM_BUILTIN],
               us[COPY_8] / us[SUM_BUILTIN], us[SUM_USER], us[COPY_8] / us[SUM_USER], us[SUM_USER] / us[SUM_BUILTIN]);
        fflush(stdout);
        if (out)
            for (int v = 0; v < ROWS_F32; ++v)
                fprintf(out, "%zu,%s,%.3f,%.4f\n", n, names[v], valid[v] ? us[v] : NAN,
                        valid[v] ? us[floor_of[v]] / us[v] : NAN);

        /* The guard: the float32 recurrence, and the user sum against the built-in one. */
        CUDA_CHECK(cudaMemset(c.out, 0xa5, n * 8));
        if (scan(&c, c.recurrence32, 1, n, timer.stream) != 0)
            wrong = 1;
        CUDA_CHECK(cudaStreamSynchronize(timer.stream));
        CUDA_CHECK(cudaMemcpy(h, c.out, n * 4, cudaMemcpyDeviceToHost));
        if (recurrence_wrong(names[RECURRENCE_F32], a, b, h, n, n, 1))
            wrong = 1;
        uint32_t *x = (uint32_t *)h, *y = malloc(n * 4);
        if (!y || run(&c, SUM_BUILTIN, n, timer.stream) != 0)
            return 1;
        CUDA_CHECK(cudaStreamSynchronize(timer.stream));
        CUDA_CHECK(cudaMemcpy(y, c.out, n * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemset(c.out, 0xa5, n * 8));
        if (run(&c, SUM_USER, n, timer.stream) != 0)
            return 1;
        CUDA_CHECK(cudaStreamSynchronize(timer.stream));
        CUDA_CHECK(cudaMemcpy(x, c.out, n * 4, cudaMemcpyDeviceToHost));
        if (memcmp(x, y, n * 4) != 0) {
            fprintf(stderr, "bench_operator: sum-user n = %zu differs from the built-in sum: WRONG\n", n);
            wrong = 1;
        }
        free(y);
    }

    /* Batched recurrences along rows; the guard checks every row against the sequential
     * reference from 0. */
    const int row_logs[] = {6, 10, 14, 20};
    const size_t batch_n = (size_t)1 << 26 < largest ? (size_t)1 << 26 : largest;
    CUDA_CHECK(cudaMemcpy(c.a, a, batch_n * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(c.b, b, batch_n * 4, cudaMemcpyHostToDevice));
    /* (the shortest rows, the first length, have the most offsets) */
    const size_t most_offsets = (batch_n >> row_logs[0]) + 1;
    CUDA_CHECK(cudaMalloc((void **)&c.offsets, most_offsets * sizeof(size_t)));
    CUDA_CHECK(cudaMalloc((void **)&c.keys, batch_n * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc((void **)&c.keys_out, batch_n * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc((void **)&c.runs, sizeof(size_t)));
    size_t *offsets = malloc(most_offsets * sizeof(size_t));
    uint32_t *keys = malloc(batch_n * sizeof(uint32_t));
    if (!offsets || !keys)
        return 1;
    printf("\n| rows [B, L] | n | memcpy-12 us | dlscan us | of floor | Mamba's pattern us | of floor | dlscan / Mamba's "
           "| over offsets us | of floor | by key us | of floor (16 bytes) | reduce-by-key us | of floor |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof row_logs / sizeof row_logs[0]; ++k) {
        c.row_length = (size_t)1 << row_logs[k];
        const size_t n = batch_n;
        if (c.row_length > n)
            continue;
        const double start = bench_host_seconds();
        if (scan(&c, c.recurrence32, 1, n, timer.stream) != 0) /* the program of rows, made once */
            return 1;
        CUDA_CHECK(cudaStreamSynchronize(timer.stream));
        if (k == 0)
            printf("# the first call along rows (the program of rows made): %.1f ms\n", (bench_host_seconds() - start) * 1e3);
        for (size_t r = 0; r <= n / c.row_length; ++r)
            offsets[r] = r * c.row_length;
        CUDA_CHECK(cudaMemcpy(c.offsets, offsets, (n / c.row_length + 1) * sizeof(size_t), cudaMemcpyHostToDevice));
        for (size_t i = 0; i < n; ++i)
            keys[i] = (uint32_t)(i / c.row_length);
        CUDA_CHECK(cudaMemcpy(c.keys, keys, n * sizeof(uint32_t), cudaMemcpyHostToDevice));
        for (int by_key = 0; by_key < 2; ++by_key) {
            const double made = bench_host_seconds();
            if (scan_segments(&c, by_key, n, timer.stream) != 0) /* the program of segments, made once */
                return 1;
            CUDA_CHECK(cudaStreamSynchronize(timer.stream));
            if (k == 0)
                printf("# the first call %s (its program made): %.1f ms\n", by_key ? "by key" : "over offsets",
                       (bench_host_seconds() - made) * 1e3);
        }
        int valid[VARIANTS];
        double us[VARIANTS], host_us[VARIANTS];
        for (int v = 0; v < VARIANTS; ++v)
            valid[v] = v == COPY_12 || (v >= ROWS_F32 && v <= ROWS_RUNS);
        bench_time_variants(&timer, run, &c, n, VARIANTS, repeats, "bench_operator", names, valid, us, host_us);
        printf("| [%zu, 2^%d] | %zu | %.1f | %.1f | %.3f | %.1f | %.3f | %.2f | %.1f | %.3f | %.1f | %.3f | %.1f | %.3f |\n",
               n / c.row_length, row_logs[k], n, us[COPY_12], us[ROWS_F32], us[COPY_12] / us[ROWS_F32],
               us[ROWS_CHUNKED], us[COPY_12] / us[ROWS_CHUNKED], us[ROWS_CHUNKED] / us[ROWS_F32], us[ROWS_OFFSETS],
               us[COPY_12] / us[ROWS_OFFSETS], us[ROWS_KEYS], us[COPY_12] * 16 / 12 / us[ROWS_KEYS], us[ROWS_RUNS],
               us[COPY_12] / us[ROWS_RUNS]);
        fflush(stdout);
        for (int v = ROWS_F32; out && v <= ROWS_RUNS; ++v) /* (of floor: by key, memcpy-12's time x 16 / 12) */
            fprintf(out, "%zu,%s-L%zu,%.3f,%.4f\n", n, names[v], c.row_length, valid[v] ? us[v] : NAN,
                    valid[v] ? us[COPY_12] * (v == ROWS_KEYS ? 16.0 / 12 : 1.0) / us[v] : NAN);
        for (int v = ROWS_F32; v <= ROWS_KEYS; ++v) { /* the guard, each row from 0 */
            CUDA_CHECK(cudaMemset(c.out, 0xa5, n * 4));
            if (run(&c, v, n, timer.stream) != 0)
                return 1;
            CUDA_CHECK(cudaStreamSynchronize(timer.stream));
            CUDA_CHECK(cudaMemcpy(h, c.out, n * 4, cudaMemcpyDeviceToHost));
            if (recurrence_wrong(names[v], a, b, h, n, c.row_length, 1))
                wrong = 1;
        }
        /* reduce-by-key's guard: each row's last h, its key (the row) and the count */
        const size_t rows = n / c.row_length;
        CUDA_CHECK(cudaMemset(c.out, 0xa5, rows * 4));
        if (run(&c, ROWS_RUNS, n, timer.stream) != 0)
            return 1;
        CUDA_CHECK(cudaStreamSynchronize(timer.stream));
        size_t runs = 0;
        CUDA_CHECK(cudaMemcpy(h, c.out, rows * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(keys, c.keys_out, rows * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&runs, c.runs, sizeof runs, cudaMemcpyDeviceToHost));
        const double bound = (2 * log2((double)c.row_length + 2) + 64 + (double)c.row_length / 512) * 0x1p-24;
        for (size_t r = 0; r < rows && !wrong; ++r) {
            double hx = 0, magnitude = 0;
            for (size_t i = r * c.row_length; i < (r + 1) * c.row_length; ++i) {
                hx = (double)a[i] * hx + b[i];
                magnitude = a[i] * magnitude + fabs(b[i]);
            }
            if (runs != rows || keys[r] != r || !(fabs(h[r] - hx) <= bound * magnitude)) {
                fprintf(stderr, "bench_operator: rows-runs L = %zu: %zu runs (want %zu), run %zu: key %u, %.9g, want "
                        "%.9g: WRONG\n", c.row_length, runs, rows, r, keys[r], h[r], hx);
                wrong = 1;
            }
        }
    }
    c.row_length = 0;

    /* Columns: [N, M] along axis 0 (axis_length N, axis_stride M), N x M = 2^26; the guard checks
     * every column against the sequential reference from 0. */
    const int column_logs[] = {1, 4, 8, 12, 16};
    printf("\n| columns [N, M] | n | memcpy-12 us | dlscan us | of floor |\n|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof column_logs / sizeof column_logs[0]; ++k) {
        c.columns = (size_t)1 << column_logs[k];
        const size_t n = batch_n;
        if (c.columns > n)
            continue;
        const double start = bench_host_seconds();
        if (run(&c, COLUMNS_F32, n, timer.stream) != 0) /* the program of columns, made once */
            return 1;
        CUDA_CHECK(cudaStreamSynchronize(timer.stream));
        if (k == 0)
            printf("# the first call down columns (its program made): %.1f ms\n", (bench_host_seconds() - start) * 1e3);
        int valid[VARIANTS];
        double us[VARIANTS], host_us[VARIANTS];
        for (int v = 0; v < VARIANTS; ++v)
            valid[v] = v == COPY_12 || v == COLUMNS_F32;
        bench_time_variants(&timer, run, &c, n, VARIANTS, repeats, "bench_operator", names, valid, us, host_us);
        printf("| [2^%d, 2^%d] | %zu | %.1f | %.1f | %.3f |\n", (int)log2((double)(n / c.columns)), column_logs[k], n,
               us[COPY_12], us[COLUMNS_F32], us[COPY_12] / us[COLUMNS_F32]);
        fflush(stdout);
        if (out)
            fprintf(out, "%zu,%s-M%zu,%.3f,%.4f\n", n, names[COLUMNS_F32], c.columns, us[COLUMNS_F32],
                    us[COPY_12] / us[COLUMNS_F32]);
        CUDA_CHECK(cudaMemset(c.out, 0xa5, n * 4));
        if (run(&c, COLUMNS_F32, n, timer.stream) != 0)
            return 1;
        CUDA_CHECK(cudaStreamSynchronize(timer.stream));
        CUDA_CHECK(cudaMemcpy(h, c.out, n * 4, cudaMemcpyDeviceToHost));
        if (recurrence_wrong(names[COLUMNS_F32], a, b, h, n, n / c.columns, c.columns))
            wrong = 1;
    }
    c.columns = 0;
    cudaFree(c.offsets);
    cudaFree(c.keys), cudaFree(c.keys_out), cudaFree(c.runs);
    free(offsets);
    free(keys);
    if (out)
        fclose(out);
    bench_timer_destroy(&timer);
    dlscan_operator_destroy(c.recurrence32);
    dlscan_operator_destroy(c.recurrence64);
    dlscan_operator_destroy(c.recurrence_c64);
    dlscan_operator_destroy(c.scalar32);
    dlscan_operator_destroy(c.sum);
    cudaFree(c.a), cudaFree(c.b), cudaFree(c.out);
    dlscan_destroy(c.h);
    free(a), free(b), free(h);
    return wrong;
}
