/*
 * timing.h: how the GPU benches (bench_pairs.c, bench_segmented.c, bench_axis.c, ...) time the
 * variants of one size, by bench.c's method: each variant is warmed up (3 calls), then timed in
 * batches of back-to-back calls between two CUDA events, enough calls for about 4 ms a batch; the
 * variants' batches alternate round by round, so that every variant of a size sees the same drift
 * of the host and the GPU (small calls are bound by the host's launches, whose speed moves from
 * second to second). The median batch gives the time per call; the host's clock around the same
 * loop gives the time the host takes to enqueue one call. Also the correctness guard's one call of
 * a variant into a poisoned output, after the timing (bench_run_poisoned).
 */
#ifndef DLSCAN_BENCH_TIMING_H
#define DLSCAN_BENCH_TIMING_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* Enqueues one call of variant v on n items on stream; returns 0 or a cudaError_t. It must not
 * synchronize: back-to-back calls are timed. */
typedef int (*bench_run_fn)(const void *context, int v, size_t n, cudaStream_t stream);

/* The stream the timed calls go to and the two events around a batch. */
typedef struct bench_timer {
    cudaStream_t stream;
    cudaEvent_t start, stop;
} bench_timer;

void bench_timer_create(bench_timer *t); /* a non-blocking stream; exits on a CUDA error */
void bench_timer_destroy(bench_timer *t);

/* One batch of `calls` back-to-back calls: GPU ms per call, and the host's us to enqueue one.
 * Returns 0 or the variant's error. */
int bench_time_batch(const bench_timer *t, bench_run_fn run, const void *context, int v, size_t n,
                     int calls, double *ms_per_call, double *host_us);

/* Warms up (3 calls) and sets *calls to a batch of about 4 ms (3 to 4000 calls). Returns 0 or
 * the variant's error. */
int bench_warm_up(const bench_timer *t, bench_run_fn run, const void *context, int v, size_t n,
                  int *calls);

/* Times the variants v < count whose valid[v] is set, at n items: each warmed up, then `repeats`
 * rounds (at most 64) of one batch per variant. Sets us[v] (per call) and host_us[v] to the
 * medians. A variant whose call fails is named on stderr ("program: names[v], n = ...") and its
 * valid[v] cleared. Returns how many variants failed. */
int bench_time_variants(const bench_timer *t, bench_run_fn run, const void *context, size_t n,
                        int count, int repeats, const char *program, const char *const *names,
                        int *valid, double *us, double *host_us);

/* The correctness guard's call: variant v once on n items on stream, into d_out poisoned first
 * (out_bytes bytes of the byte `poison`), then the out_bytes of d_out copied to `to`. Returns 1
 * if the call went; else names it on stderr ("program: name, n = ...: the checked call failed:
 * ...") and returns 0. Exits on a CUDA error of the memset, the wait or the copy. */
int bench_run_poisoned(bench_run_fn run, const void *context, int v, size_t n, void *d_out,
                       size_t out_bytes, int poison, void *to, cudaStream_t stream,
                       const char *program, const char *name);

#endif /* DLSCAN_BENCH_TIMING_H */
