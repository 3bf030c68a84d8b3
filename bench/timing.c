/*
 * timing.c: the GPU benches' timing of back-to-back calls between CUDA events, variants
 * alternating round by round (timing.h says the method), and the correctness guard's call into
 * a poisoned output.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (stats.h) */

#include "timing.h"

#include <math.h>
#include <stdio.h>

#include "cuda_check.h"
#include "stats.h"

#define MAX_VARIANTS 16
#define MAX_ROUNDS 64

void bench_timer_create(bench_timer *t)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&t->start));
    CUDA_CHECK(cudaEventCreate(&t->stop));
}

void bench_timer_destroy(bench_timer *t)
{
    cudaEventDestroy(t->start);
    cudaEventDestroy(t->stop);
    cudaStreamDestroy(t->stream);
}

int bench_time_batch(const bench_timer *t, bench_run_fn run, const void *context, int v, size_t n,
                     int calls, double *ms_per_call, double *host_us)
{
    int error = 0;
    float ms = 0;
    CUDA_CHECK(cudaEventRecord(t->start, t->stream));
    const double host_start = bench_host_seconds();
    for (int c = 0; c < calls && !error; ++c)
        error = run(context, v, n, t->stream);
    *host_us = (bench_host_seconds() - host_start) * 1e6 / calls;
    CUDA_CHECK(cudaEventRecord(t->stop, t->stream));
    CUDA_CHECK(cudaEventSynchronize(t->stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, t->start, t->stop));
    *ms_per_call = (double)ms / calls;
    return error;
}

int bench_warm_up(const bench_timer *t, bench_run_fn run, const void *context, int v, size_t n,
                  int *calls)
{
    int error = 0;
    for (int i = 0; i < 3 && !error; ++i)
        error = run(context, v, n, t->stream);
    double ms = 0, host_us;
    if (!error)
        error = bench_time_batch(t, run, context, v, n, 1, &ms, &host_us);
    *calls = (int)ceil(4.0 / (ms > 1e-4 ? ms : 1e-4));
    *calls = *calls < 3 ? 3 : *calls > 4000 ? 4000 : *calls;
    return error;
}

int bench_time_variants(const bench_timer *t, bench_run_fn run, const void *context, size_t n,
                        int count, int repeats, const char *program, const char *const *names,
                        int *valid, double *us, double *host_us)
{
    int calls[MAX_VARIANTS] = {0}, failed = 0;
    double samples[MAX_VARIANTS][MAX_ROUNDS], host_samples[MAX_VARIANTS][MAX_ROUNDS];
    count = count > MAX_VARIANTS ? MAX_VARIANTS : count;
    repeats = repeats > MAX_ROUNDS ? MAX_ROUNDS : repeats;
    for (int v = 0; v < count; ++v)
        if (valid[v] && bench_warm_up(t, run, context, v, n, &calls[v]) != 0) {
            valid[v] = 0, ++failed;
            fprintf(stderr, "%s: %s, n = %zu: a timed call failed\n", program, names[v], n);
        }
    for (int round = 0; round < repeats; ++round)
        for (int v = 0; v < count; ++v)
            if (valid[v] && bench_time_batch(t, run, context, v, n, calls[v], &samples[v][round],
                                             &host_samples[v][round]) != 0) {
                valid[v] = 0, ++failed;
                fprintf(stderr, "%s: %s, n = %zu: a timed call failed\n", program, names[v], n);
            }
    for (int v = 0; v < count; ++v)
        if (valid[v]) {
            us[v] = 1000.0 * bench_median(samples[v], repeats);
            host_us[v] = bench_median(host_samples[v], repeats);
        }
    return failed;
}

int bench_run_poisoned(bench_run_fn run, const void *context, int v, size_t n, void *d_out,
                       size_t out_bytes, int poison, void *to, cudaStream_t stream,
                       const char *program, const char *name)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, poison, out_bytes, stream));
    const int error = run(context, v, n, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (error) {
        fprintf(stderr, "%s: %s, n = %zu: the checked call failed: %s\n", program, name, n,
                cudaGetErrorString((cudaError_t)error));
        (void)cudaGetLastError();
        return 0;
    }
    CUDA_CHECK(cudaMemcpy(to, d_out, out_bytes, cudaMemcpyDeviceToHost));
    return 1;
}
