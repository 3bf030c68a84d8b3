/*
 * bench_ops.c: the cost of the operator. For each type and size it times dlscan's inclusive
 * sum, min and max and its exclusive sum in alternating rounds within one process (per-call
 * us, back-to-back calls, median of the rounds), so that the ratios to the sum carry none of
 * the drift between separate runs: issue 5 asks min, max and exclusive to stay within 2%.
 * The sum is timed a second time in each round, last, as a control: "sum again / sum" is
 * the ratio that the method itself gives two identical calls, the resolution of the others.
 *
 *   bench_ops [--min-log 12] [--max-log 24] [--rounds 15] [--persistent 1] [--graph 0]
 *             [--markdown FILE]
 *
 * --persistent sets DLSCAN_OPTION_PERSISTENT (0: one block per tile).
 * --graph 1 captures each round's calls of an operator into one CUDA graph and times its
 * launches: the GPU's own time per call, where back-to-back calls from the host are bound by
 * the host's launches (below about 2^19 items).
 * Each round times enough calls for about 2 ms per operator. Inputs are random and every
 * operator is checked once against the CPU reference first (tests/scan_check.c).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (stats.h) */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "dlscan.h"
#include "scan_check.h"
#include "stats.h"

int test_expect_failures; /* scan_check.c's plain-build counter (unused here) */

enum { SUM, MIN, MAX, EXCLUSIVE, SUM_AGAIN, KINDS };
static const char *const kind_names[KINDS] = {"sum", "min", "max", "exclusive sum", "sum again"};
static const char *const type_names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};

static dlscan_status call(dlscan_handle_t h, int kind, const void *in, void *out, size_t n,
                          dlscan_type type, cudaStream_t stream)
{
    if (kind == EXCLUSIVE)
        return dlscan_exclusive_scan(h, in, out, n, type, DLSCAN_SUM, NULL, stream);
    return dlscan_inclusive_scan(h, in, out, n, type,
                                 kind == MIN ? DLSCAN_MIN : kind == MAX ? DLSCAN_MAX : DLSCAN_SUM, stream);
}

/* `count` calls of operator `kind`, captured into one executable graph. */
static int capture_calls(dlscan_handle_t h, int kind, const void *in, void *out, size_t n, dlscan_type type,
                         cudaStream_t stream, int count, cudaGraphExec_t *exec)
{
    cudaGraph_t captured;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    dlscan_status status = DLSCAN_SUCCESS;
    for (int i = 0; i < count && status == DLSCAN_SUCCESS; ++i)
        status = call(h, kind, in, out, n, type, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &captured));
    if (status != DLSCAN_SUCCESS) {
        fprintf(stderr, "bench_ops: a captured call failed: %s\n", dlscan_last_error(h));
        return 0;
    }
    CUDA_CHECK(cudaGraphInstantiate(exec, captured, 0));
    CUDA_CHECK(cudaGraphDestroy(captured));
    return 1;
}


int main(int argc, char **argv)
{
    int min_log = 12, max_log = 24, rounds = 15, persistent = 1, graph = 0;
    const char *markdown = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min-log"))
            min_log = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-log"))
            max_log = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--persistent"))
            persistent = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--graph"))
            graph = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--markdown"))
            markdown = argv[i + 1];
        else
            break;
    }
    if (min_log < 1 || max_log > 30 || min_log > max_log || rounds < 1 || rounds > 64 || persistent < 0 ||
        persistent > 1 || graph < 0 || graph > 1 || argc % 2 == 0) {
        fprintf(stderr, "usage: bench_ops [--min-log 12] [--max-log 24] [--rounds 15] [--persistent 1] "
                        "[--graph 0] [--markdown FILE]\n");
        return 2;
    }
    const dlscan_type types[] = {DLSCAN_INT32, DLSCAN_FLOAT32, DLSCAN_INT64, DLSCAN_FLOAT64};
    const size_t max_n = (size_t)1 << max_log, max_bytes = max_n * 8;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    dlscan_handle_t h;
    if (dlscan_create(&h) != DLSCAN_SUCCESS ||
        dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, persistent) != DLSCAN_SUCCESS)
        return 1;
    void *in, *out;
    CUDA_CHECK(cudaMalloc(&in, max_bytes));
    CUDA_CHECK(cudaMalloc(&out, max_bytes));
    void *host_in = malloc(max_bytes), *host_out = malloc(max_bytes);
    FILE *md = markdown ? fopen(markdown, "w") : NULL;
    if (!host_in || !host_out || (markdown && !md))
        return 1;
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    FILE *outs[2] = {stdout, md};
    for (int f = 0; f < 2; ++f)
        if (outs[f])
            fprintf(outs[f],
                    "\n## %s: dlscan per call by operator, alternating rounds in one process (median of %d%s)\n\n"
                    "| type | n | sum us | min us | max us | exclusive us | min / sum | max / sum | exclusive / sum "
                    "| sum again / sum |\n"
                    "|---|---|---|---|---|---|---|---|---|---|\n",
                    prop.name, rounds, graph ? "; each round's calls launched as one CUDA graph" : "");
    uint64_t rng = test_seed();
    int wrong = 0;
    for (int t = 0; t < 4; ++t) {
        const dlscan_type type = types[t];
        test_fill_random(type, TEST_VALUES_UNIFORM, host_in, max_n, &rng);
        CUDA_CHECK(cudaMemcpy(in, host_in, max_bytes, cudaMemcpyHostToDevice));
        for (int lg = min_log; lg <= max_log; ++lg) {
            const size_t n = (size_t)1 << lg;
            if (dlscan_reserve(h, n, type) != DLSCAN_SUCCESS)
                return 1;
            for (int k = 0; k < KINDS; ++k) { /* validate once, into a poisoned output */
                CUDA_CHECK(cudaMemsetAsync(out, 0xa5, max_bytes, stream));
                if (call(h, k, in, out, n, type, stream) != DLSCAN_SUCCESS)
                    return 1;
                CUDA_CHECK(cudaStreamSynchronize(stream)); /* the stream does not wait for the legacy one */
                CUDA_CHECK(cudaMemcpy(host_out, out, n * (type == DLSCAN_INT32 || type == DLSCAN_FLOAT32 ? 4 : 8),
                                      cudaMemcpyDeviceToHost));
                const scan_case c = {type, k == MIN ? DLSCAN_MIN : k == MAX ? DLSCAN_MAX : DLSCAN_SUM,
                                     k == EXCLUSIVE, 0, 0, n, TEST_VALUES_UNIFORM};
                char message[256];
                if (!scan_check_output(&c, host_in, NULL, host_out, message, sizeof message)) {
                    fprintf(stderr, "bench_ops: %s %s n = %zu is wrong: %s\n", type_names[type],
                            kind_names[k], n, message);
                    ++wrong;
                }
            }
            double samples[KINDS][64];
            cudaGraphExec_t graphs[KINDS] = {NULL};
            int calls = 0;
            for (int r = -1; r < rounds; ++r) /* round -1 warms up and sizes the rounds */
                for (int k = 0; k < KINDS; ++k) {
                    const int count = calls ? calls : 20;
                    if (graph && calls && !graphs[k] &&
                        !capture_calls(h, k, in, out, n, type, stream, count, &graphs[k]))
                        return 1;
                    CUDA_CHECK(cudaEventRecord(start, stream));
                    if (graphs[k])
                        CUDA_CHECK(cudaGraphLaunch(graphs[k], stream));
                    else
                        for (int i = 0; i < count; ++i)
                            if (call(h, k, in, out, n, type, stream) != DLSCAN_SUCCESS)
                                return 1;
                    CUDA_CHECK(cudaEventRecord(stop, stream));
                    CUDA_CHECK(cudaEventSynchronize(stop));
                    float ms = 0;
                    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
                    if (r < 0 && k == KINDS - 1) {
                        calls = (int)(2.0 / (ms / count));
                        calls = calls < 20 ? 20 : calls > 2000 ? 2000 : calls;
                    }
                    if (r >= 0)
                        samples[k][r] = 1000.0 * ms / count;
                }
            double median[KINDS];
            for (int k = 0; k < KINDS; ++k) {
                if (graphs[k])
                    CUDA_CHECK(cudaGraphExecDestroy(graphs[k]));
                qsort(samples[k], (size_t)rounds, sizeof(double), bench_compare_doubles);
                median[k] = samples[k][rounds / 2];
            }
            for (int f = 0; f < 2; ++f)
                if (outs[f])
                    fprintf(outs[f], "| %s | 2^%d | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %.3f |\n",
                            type_names[type], lg, median[SUM], median[MIN], median[MAX], median[EXCLUSIVE],
                            median[MIN] / median[SUM], median[MAX] / median[SUM],
                            median[EXCLUSIVE] / median[SUM], median[SUM_AGAIN] / median[SUM]);
            fflush(stdout);
        }
    }
    if (md)
        fclose(md);
    dlscan_destroy(h);
    cudaFree(in);
    cudaFree(out);
    free(host_in);
    free(host_out);
    return wrong ? 1 : 0;
}
