/*
 * test_nccl.c: the `nccl` test: dlscan_nccl_scan across the GPUs of this machine (at most 8),
 * one thread per GPU, each with its own handle, stream and NCCL communicator (ncclCommInitAll);
 * with one GPU, a communicator of one rank. Each case's whole input is drawn here, its slices
 * given random lengths (empty ones among them), and every rank's output and d_total compared bit
 * for bit with one dlscan_scan of the whole input on a CPU handle: the sums are exact (integers,
 * and floats that are multiples of 1/256), min and max are exact. Then one case of 2^26 items a
 * GPU, one captured in a CUDA graph on every rank and replayed twice, selects across the ranks
 * (dlscan_nccl_select: counts and offsets), the refusals (a NULL communicator, a CPU handle),
 * and the cases again through the peer exchange (dlscan_nccl_peers_create), a graph among them.
 * Prints TAP; skips without a GPU.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlscan_nccl.h"
#include "across_check.h"

#define MAX_RANKS 8

int test_expect_failures; /* check.h's plain driver, which scan_check.c links against */

/* One rank's part of a case. */
typedef struct rank_job {
    int rank;
    dlscan_handle_t h;
    cudaStream_t stream;
    ncclComm_t comm;
    const across_case *c;
    const unsigned char *in; /* the rank's slice of the whole input, in host memory */
    const unsigned char *want; /* its slice of the reference */
    uint64_t init, want_total;
    size_t n;
    int graph;               /* 1: capture the call in a graph and replay it twice */
    const dlscan_exchange *through; /* the peer exchange, or NULL: NCCL's */
    int failed;
    char why[600];
} rank_job;

static void *rank_main(void *p)
{
    rank_job *job = p;
    const across_case *c = job->c;
    const size_t in_size = test_type_size(c->in_type), size = test_type_size(c->out_type);
    cudaSetDevice(job->rank);
    void *d_in = NULL, *d_out = NULL, *d_total = NULL;
    unsigned char *got = malloc(job->n * size + 1);
    uint64_t total = 0;
    if (cudaMalloc(&d_in, job->n * in_size + 1) != cudaSuccess || cudaMalloc(&d_out, job->n * size + 1) != cudaSuccess ||
        cudaMalloc(&d_total, 8) != cudaSuccess || !got) {
        snprintf(job->why, sizeof job->why, "memory");
        job->failed = 1;
        return NULL;
    }
    cudaMemcpy(d_in, job->in, job->n * in_size, cudaMemcpyHostToDevice);
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_out = d_out;
    a.n = job->n;
    a.in_type = c->in_type;
    a.out_type = c->out_type;
    a.op = c->op;
    a.exclusive = c->exclusive;
    a.init = c->with_init ? &job->init : NULL;
    a.d_total = d_total;
    dlscan_status status = job->through ? dlscan_scan_across(job->h, &a, job->through, job->stream)
                                        : dlscan_nccl_scan(job->h, &a, job->comm, job->stream);
    int replays = 0;
    if (status == DLSCAN_SUCCESS && job->graph) { /* the storage is grown: capture the same call */
        cudaStreamSynchronize(job->stream);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        cudaStreamBeginCapture(job->stream, cudaStreamCaptureModeThreadLocal);
        status = job->through ? dlscan_scan_across(job->h, &a, job->through, job->stream)
                              : dlscan_nccl_scan(job->h, &a, job->comm, job->stream);
        const cudaError_t captured = cudaStreamEndCapture(job->stream, &graph);
        if (status == DLSCAN_SUCCESS && captured == cudaSuccess &&
            cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
            for (; replays < 2; ++replays) {
                cudaMemsetAsync(d_out, 0xa5, job->n * size + 1, job->stream);
                cudaMemsetAsync(d_total, 0xa5, 8, job->stream);
                cudaGraphLaunch(exec, job->stream);
            }
            cudaGraphExecDestroy(exec);
            cudaGraphDestroy(graph);
        } else if (status == DLSCAN_SUCCESS) {
            snprintf(job->why, sizeof job->why, "capturing the call: %s", cudaGetErrorString(captured));
            job->failed = 1;
        }
    }
    const cudaError_t error = cudaStreamSynchronize(job->stream);
    if (status != DLSCAN_SUCCESS || error != cudaSuccess) {
        snprintf(job->why, sizeof job->why, "%s (%s), %s", dlscan_status_string(status), dlscan_last_error(job->h),
                 cudaGetErrorString(error));
        job->failed = 1;
    } else if (!job->failed) {
        cudaMemcpy(got, d_out, job->n * size, cudaMemcpyDeviceToHost);
        cudaMemcpy(&total, d_total, size, cudaMemcpyDeviceToHost);
        if (memcmp(got, job->want, job->n * size) != 0 || memcmp(&total, &job->want_total, size) != 0) {
            snprintf(job->why, sizeof job->why, "%s the reference%s", memcmp(got, job->want, job->n * size) ? "the slice differs from"
                                                                           : "the total differs from",
                     job->graph ? ", replayed in a graph" : "");
            job->failed = 1;
        }
    }
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_total);
    free(got);
    return NULL;
}

/* One case on every rank, through NCCL or through `throughs` (each rank's peer exchange); returns
 * the failures. */
static int run_case(int ranks, dlscan_handle_t *handles, cudaStream_t *streams, ncclComm_t *comms,
                    const dlscan_exchange *throughs, const across_case *c, size_t max_slice, int graph,
                    uint64_t *rng)
{
    const size_t in_size = test_type_size(c->in_type), size = test_type_size(c->out_type);
    size_t lengths[MAX_RANKS], firsts[MAX_RANKS], n = 0;
    for (int r = 0; r < ranks; ++r) {
        const uint64_t draw = test_random(rng);
        lengths[r] = draw % 5 == 0 && max_slice < (1u << 24) ? 0 : max_slice - (size_t)(draw >> 8) % (max_slice / 2 + 1);
        firsts[r] = n;
        n += lengths[r];
    }
    unsigned char *input = malloc(n * in_size + 1), *want = malloc(n * size + 1), item[8];
    test_fill_random(c->in_type, TEST_VALUES_UNIFORM, input, n, rng);
    test_fill_random(c->in_type, TEST_VALUES_UNIFORM, item, 1, rng);
    const uint64_t init = test_convert_item(c->in_type, c->out_type, item);
    uint64_t want_total = 0;
    dlscan_handle_t cpu = NULL;
    dlscan_create_cpu(&cpu, 0);
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = input;
    a.d_out = want;
    a.n = n;
    a.in_type = c->in_type;
    a.out_type = c->out_type;
    a.op = c->op;
    a.exclusive = c->exclusive;
    a.init = c->with_init ? &init : NULL;
    a.d_total = &want_total;
    const dlscan_status status = dlscan_scan(cpu, &a, NULL);
    dlscan_destroy(cpu);
    rank_job jobs[MAX_RANKS];
    pthread_t threads[MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        jobs[r] = (rank_job){.rank = r, .h = handles[r], .stream = streams[r], .comm = comms[r], .c = c,
                             .in = input + firsts[r] * in_size, .want = want + firsts[r] * size, .init = init,
                             .want_total = want_total, .n = lengths[r], .graph = graph,
                             .through = throughs ? &throughs[r] : NULL};
        pthread_create(&threads[r], NULL, rank_main, &jobs[r]);
    }
    int failures = status != DLSCAN_SUCCESS;
    for (int r = 0; r < ranks; ++r) {
        pthread_join(threads[r], NULL);
        if (jobs[r].failed) {
            fprintf(stderr, "# %s items into %s, %s, %s, slices up to %zu: rank %d: %s\n", test_type_name(c->in_type),
                    test_type_name(c->out_type), c->op == DLSCAN_SUM ? "sum" : c->op == DLSCAN_MIN ? "min" : "max",
                    c->exclusive ? "exclusive" : "inclusive", max_slice, r, jobs[r].why);
            ++failures;
        }
    }
    free(input);
    free(want);
    return failures;
}

/* dlscan_nccl_select on every rank: int32 items greater than 0, slices of random lengths; each
 * rank's count, offset and the whole count against the reference. Returns the failures. */
typedef struct select_job {
    int rank;
    dlscan_handle_t h;
    cudaStream_t stream;
    ncclComm_t comm;
    const int32_t *in;
    size_t n, want[3];
    int failed;
} select_job;

static void *select_main(void *p)
{
    select_job *job = p;
    cudaSetDevice(job->rank);
    int32_t *d_in = NULL, *d_out = NULL;
    size_t *d_counts = NULL, counts[3] = {0};
    const int32_t zero = 0;
    cudaMalloc((void **)&d_in, job->n * 4 + 4);
    cudaMalloc((void **)&d_out, job->n * 4 + 4);
    cudaMalloc((void **)&d_counts, sizeof counts);
    cudaMemcpy(d_in, job->in, job->n * 4, cudaMemcpyHostToDevice);
    const dlscan_status status = dlscan_nccl_select(job->h, d_in, NULL, d_out, d_counts, d_counts + 1, d_counts + 2,
                                                    job->n, DLSCAN_INT32, DLSCAN_GREATER, &zero, job->comm,
                                                    job->stream);
    cudaStreamSynchronize(job->stream);
    cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost);
    job->failed = status != DLSCAN_SUCCESS || memcmp(counts, job->want, sizeof counts) != 0;
    if (job->failed)
        fprintf(stderr, "# select, rank %d: %s; %zu %zu %zu, want %zu %zu %zu\n", job->rank,
                dlscan_last_error(job->h), counts[0], counts[1], counts[2], job->want[0], job->want[1], job->want[2]);
    cudaFree(d_in), cudaFree(d_out), cudaFree(d_counts);
    return NULL;
}

static int run_select(int ranks, dlscan_handle_t *handles, cudaStream_t *streams, ncclComm_t *comms, uint64_t *rng)
{
    select_job jobs[MAX_RANKS];
    pthread_t threads[MAX_RANKS];
    int32_t *items[MAX_RANKS];
    size_t before = 0, everyone = 0;
    for (int r = 0; r < ranks; ++r) {
        const size_t n = test_random(rng) % 4 == 0 ? 0 : (size_t)(test_random(rng) % 300000);
        items[r] = malloc(n * 4 + 4);
        size_t kept = 0;
        for (size_t i = 0; i < n; ++i) {
            items[r][i] = (int32_t)(test_random(rng) % 2001) - 1000;
            kept += items[r][i] > 0;
        }
        jobs[r] = (select_job){.rank = r, .h = handles[r], .stream = streams[r], .comm = comms[r], .in = items[r],
                               .n = n, .want = {kept, before, 0}};
        before += kept;
    }
    everyone = before;
    for (int r = 0; r < ranks; ++r) {
        jobs[r].want[2] = everyone;
        pthread_create(&threads[r], NULL, select_main, &jobs[r]);
    }
    int failures = 0;
    for (int r = 0; r < ranks; ++r) {
        pthread_join(threads[r], NULL);
        failures += jobs[r].failed;
        free(items[r]);
    }
    return failures;
}

/* Each rank's peer exchange, made through its communicator (dlscan_nccl_peers_create). */
typedef struct peers_job {
    int rank;
    dlscan_handle_t h;
    cudaStream_t stream;
    ncclComm_t comm;
    dlscan_peers_t peers;
    dlscan_status status;
    char why[512];
} peers_job;

static void *peers_main(void *p)
{
    peers_job *job = p;
    cudaSetDevice(job->rank);
    job->status = dlscan_nccl_peers_create(job->h, job->comm, job->stream, &job->peers);
    snprintf(job->why, sizeof job->why, "%s", dlscan_last_error(job->h));
    return NULL;
}

/* The exact cases, a large one and a graph through the peer exchange; returns the failures. */
static int run_peers(int ranks, dlscan_handle_t *handles, cudaStream_t *streams, ncclComm_t *comms, uint64_t *rng)
{
    peers_job jobs[MAX_RANKS];
    pthread_t threads[MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        jobs[r] = (peers_job){.rank = r, .h = handles[r], .stream = streams[r], .comm = comms[r]};
        pthread_create(&threads[r], NULL, peers_main, &jobs[r]);
    }
    int failures = 0;
    dlscan_exchange throughs[MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        pthread_join(threads[r], NULL);
        if (jobs[r].status != DLSCAN_SUCCESS) {
            fprintf(stderr, "# dlscan_nccl_peers_create: rank %d: %s (%s)\n", r, dlscan_status_string(jobs[r].status),
                    jobs[r].why);
            ++failures;
        }
        throughs[r] = dlscan_peers_exchange(jobs[r].peers);
    }
    if (failures == 0) {
        for (int i = 0; i < ACROSS_EXACT_CASE_COUNT; ++i)
            for (int k = 0; k < 2; ++k)
                failures += run_case(ranks, handles, streams, comms, throughs, &across_exact_cases[i],
                                     k == 0 ? 5 : 70000, 0, rng);
        failures += run_case(ranks, handles, streams, comms, throughs, &across_exact_cases[1], 1u << 24, 0, rng);
        failures += run_case(ranks, handles, streams, comms, throughs, &across_exact_cases[0], 100000, 1, rng);
    }
    for (int r = 0; r < ranks; ++r) {
        cudaSetDevice(r);
        cudaStreamSynchronize(streams[r]);
    }
    for (int r = 0; r < ranks; ++r)
        dlscan_peers_destroy(jobs[r].peers);
    return failures;
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("1..0 # SKIP no CUDA device here\n");
        return 0;
    }
    const int ranks = devices < MAX_RANKS ? devices : MAX_RANKS;
    ncclComm_t comms[MAX_RANKS];
    int list[MAX_RANKS];
    for (int r = 0; r < ranks; ++r)
        list[r] = r;
    const ncclResult_t made = ncclCommInitAll(comms, ranks, list);
    if (made != ncclSuccess) {
        printf("1..0 # SKIP ncclCommInitAll: %s\n", ncclGetErrorString(made));
        return 0;
    }
    dlscan_handle_t handles[MAX_RANKS];
    cudaStream_t streams[MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        cudaSetDevice(r);
        if (dlscan_create(&handles[r]) != DLSCAN_SUCCESS || cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking))
            return 1;
    }
    uint64_t rng = test_seed();
    const int count = ACROSS_EXACT_CASE_COUNT;
    printf("TAP version 13\n1..6\n# %d ranks (GPUs)\n", ranks);
    int failures = 0, all = 0;
    for (int i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k)
            failures += run_case(ranks, handles, streams, comms, NULL, &across_exact_cases[i], k == 0 ? 5 : k == 1 ? 70000 : 1u << 21, 0, &rng);
    printf("%s 1 - every case, slices of random lengths up to 2^21\n", failures ? "not ok" : "ok");
    all += failures;
    failures = run_case(ranks, handles, streams, comms, NULL, &across_exact_cases[1], 1u << 26, 0, &rng);
    printf("%s 2 - int64 sums, slices up to 2^26\n", failures ? "not ok" : "ok");
    all += failures;
    failures = run_case(ranks, handles, streams, comms, NULL, &across_exact_cases[0], 100000, 1, &rng) +
               run_case(ranks, handles, streams, comms, NULL, &across_exact_cases[5], 100000, 1, &rng);
    printf("%s 3 - captured in a graph and replayed\n", failures ? "not ok" : "ok");
    all += failures;
    failures = 0;
    for (int k = 0; k < 4; ++k)
        failures += run_select(ranks, handles, streams, comms, &rng);
    printf("%s 4 - selects across the ranks: counts and offsets\n", failures ? "not ok" : "ok");
    all += failures;

    /* Refusals, on rank 0 alone: nothing reaches NCCL, nothing is written. */
    cudaSetDevice(0);
    int32_t *d_io = NULL, host_in[4] = {1, 2, 3, 4}, host_out[4] = {-1, -1, -1, -1};
    cudaMalloc((void **)&d_io, 8 * sizeof *d_io);
    cudaMemset(d_io, 0xff, 8 * sizeof *d_io);
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_io;
    a.d_out = d_io + 4;
    a.n = 4;
    failures = dlscan_nccl_scan(handles[0], &a, NULL, streams[0]) != DLSCAN_ERROR_EXCHANGE ||
               !strstr(dlscan_last_error(handles[0]), "comm is NULL");
    dlscan_handle_t cpu = NULL;
    dlscan_create_cpu(&cpu, 1);
    a.d_in = host_in;
    a.d_out = host_out;
    failures += dlscan_nccl_scan(cpu, &a, comms[0], NULL) != (ranks > 1 ? DLSCAN_ERROR_EXCHANGE : DLSCAN_SUCCESS);
    failures += ranks > 1 && (host_out[0] != -1 || !strstr(dlscan_last_error(cpu), "device memory"));
    dlscan_destroy(cpu);
    int32_t back[8];
    cudaMemcpy(back, d_io, sizeof back, cudaMemcpyDeviceToHost);
    failures += back[4] != -1 || back[7] != -1;
    cudaFree(d_io);
    printf("%s 5 - a NULL communicator and a CPU handle are refused, nothing written\n", failures ? "not ok" : "ok");
    all += failures;
    failures = run_peers(ranks, handles, streams, comms, &rng);
    printf("%s 6 - the peer exchange: every case, 2^24 items a rank, a graph\n", failures ? "not ok" : "ok");
    all += failures;
    for (int r = 0; r < ranks; ++r) {
        cudaSetDevice(r);
        cudaStreamDestroy(streams[r]);
        dlscan_destroy(handles[r]);
        ncclCommDestroy(comms[r]);
    }
    return all ? 1 : 0;
}
