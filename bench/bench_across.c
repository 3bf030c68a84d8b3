/*
 * bench_across.c: scans across the GPUs of this machine over NCCL (dlscan_nccl_scan), one
 * thread per GPU, against one GPU's dlscan_scan and a device-to-device copy on GPU 0, in one
 * process (issue 43's targets). For p = 1 .. the GPUs (powers of two and the count):
 *   strong  2^log items in all (default 2^30), 2^log / p a GPU;
 *   weak    2^weak items a GPU (default 2^28);
 *   small   2^10, 2^14, 2^17 and 2^20 items a GPU.
 * A call across p GPUs reads its slice twice and writes it once (a reduction, then the scan from
 * the rank's prefix), 1.5 times a local scan's bytes, so p GPUs scan a fixed array at most 2p/3
 * times as fast as one: the strong rows give speedup = one GPU's dlscan_scan of the whole array /
 * the call across p, and that over 2p/3; the weak and small rows give the call's time over 1.5
 * times one GPU's dlscan_scan of one slice (the 1.5-pass bound), and over the all-gather's own
 * time (NCCL, one 8-byte value a rank). "peers" is the same call through the peer exchange
 * (dlscan_nccl_peers_create: the ranks' totals written into each other's memory by one small
 * kernel), "peer-gather" that exchange's all-gather alone. Each time is the median of `repeats`
 * rounds; a round across GPUs starts them together (a barrier of the threads) and lasts until the
 * slowest rank's stop event. Inputs are bytes of 1; integer sums are exact, so each call's total (NCCL's and the
 * peers') is checked against the one GPU's (WRONG where it differs). Five rounds warm each
 * measurement up; NCCL's communicators and the peers are made once for each p.
 *
 *   bench_across [--types int32,int64] [--log 30] [--weak 28] [--repeats 7] [--gpus N] [--csv FILE]
 *
 * The CSV (bench/results/<GPU>x<count>/across.csv) has the table's columns; bench/plot.py draws it.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "dlscan_nccl.h"
#include "stats.h"

#define MAX_GPUS 8
#define MAX_REPEATS 31

typedef struct gpu {
    dlscan_handle_t h;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    ncclComm_t comm; /* of the current p */
    dlscan_exchange peers; /* the peer exchange of the current p (dlscan_nccl_peers_create) */
    void *in, *out, *total, *word;
    size_t capacity; /* bytes of in and of out */
} gpu;

typedef enum what { SCAN_ACROSS, ALL_GATHER, PEERS_ACROSS, PEERS_GATHER } what;

typedef struct job {
    gpu *g;
    int rank;
    dlscan_type type;
    size_t n;
    what kind;
    int repeats;
    pthread_barrier_t *barrier;
    float ms[MAX_REPEATS];
    unsigned long long total;
    int failed;
} job;

static void *rank_main(void *p)
{
    job *j = p;
    gpu *g = j->g;
    CUDA_CHECK(cudaSetDevice(j->rank));
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = g->in;
    a.d_out = g->out;
    a.n = j->n;
    a.in_type = a.out_type = j->type;
    a.d_total = g->total;
    for (int r = -5; r < j->repeats; ++r) { /* five rounds to warm up */
        pthread_barrier_wait(j->barrier);
        CUDA_CHECK(cudaEventRecord(g->start, g->stream));
        char why[256] = "";
        if (j->kind == SCAN_ACROSS || j->kind == PEERS_ACROSS) {
            const dlscan_status s = j->kind == SCAN_ACROSS ? dlscan_nccl_scan(g->h, &a, g->comm, g->stream)
                                                           : dlscan_scan_across(g->h, &a, &g->peers, g->stream);
            if (s != DLSCAN_SUCCESS) {
                fprintf(stderr, "rank %d: %s\n", j->rank, dlscan_last_error(g->h));
                j->failed = 1;
            }
        } else if (j->kind == ALL_GATHER) {
            j->failed |= ncclAllGather(g->word, g->total, 8, ncclUint8, g->comm, g->stream) != ncclSuccess;
        } else if (g->peers.all_gather(g->peers.context, g->word, g->total, 8, 1, g->stream, why, sizeof why) != 0) {
            fprintf(stderr, "rank %d: %s\n", j->rank, why);
            j->failed = 1;
        }
        CUDA_CHECK(cudaEventRecord(g->stop, g->stream));
        CUDA_CHECK(cudaEventSynchronize(g->stop));
        if (r >= 0)
            CUDA_CHECK(cudaEventElapsedTime(&j->ms[r], g->start, g->stop));
    }
    j->total = 0;
    CUDA_CHECK(cudaMemcpy(&j->total, g->total, 8, cudaMemcpyDeviceToHost));
    return NULL;
}

/* The median over rounds of the slowest rank's time, in us; *total: rank 0's. */
static double across_us(gpu *gpus, int p, dlscan_type type, size_t n, what kind, int repeats,
                        unsigned long long *total, int *failed)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)p);
    job jobs[MAX_GPUS];
    pthread_t threads[MAX_GPUS];
    for (int r = 0; r < p; ++r) {
        jobs[r] = (job){.g = &gpus[r], .rank = r, .type = type, .n = n, .kind = kind, .repeats = repeats,
                        .barrier = &barrier};
        pthread_create(&threads[r], NULL, rank_main, &jobs[r]);
    }
    for (int r = 0; r < p; ++r)
        pthread_join(threads[r], NULL);
    pthread_barrier_destroy(&barrier);
    double slowest[MAX_REPEATS];
    for (int k = 0; k < repeats; ++k) {
        slowest[k] = 0;
        for (int r = 0; r < p; ++r) {
            slowest[k] = jobs[r].ms[k] > slowest[k] ? jobs[r].ms[k] : slowest[k];
            *failed |= jobs[r].failed;
        }
    }
    qsort(slowest, (size_t)repeats, sizeof slowest[0], bench_compare_doubles);
    *total = jobs[0].total;
    for (int r = 1; r < p; ++r)
        *failed |= jobs[r].total != *total; /* every rank got the whole total */
    return 1000.0 * slowest[repeats / 2];
}

/* Each rank's peer exchange for p GPUs, made through their communicators (threads: it is a
 * collective). */
typedef struct peers_job {
    gpu *g;
    int rank;
    dlscan_peers_t peers;
    dlscan_status status;
} peers_job;

static void *peers_main(void *p)
{
    peers_job *j = p;
    CUDA_CHECK(cudaSetDevice(j->rank));
    j->status = dlscan_nccl_peers_create(j->g->h, j->g->comm, j->g->stream, &j->peers);
    if (j->status != DLSCAN_SUCCESS)
        fprintf(stderr, "rank %d: %s\n", j->rank, dlscan_last_error(j->g->h));
    return NULL;
}

static int make_peers(gpu *gpus, int p, dlscan_peers_t *peers)
{
    peers_job jobs[MAX_GPUS];
    pthread_t threads[MAX_GPUS];
    for (int r = 0; r < p; ++r) {
        jobs[r] = (peers_job){.g = &gpus[r], .rank = r};
        pthread_create(&threads[r], NULL, peers_main, &jobs[r]);
    }
    int failed = 0;
    for (int r = 0; r < p; ++r) {
        pthread_join(threads[r], NULL);
        peers[r] = jobs[r].peers;
        failed |= jobs[r].status != DLSCAN_SUCCESS;
    }
    return failed;
}

/* One GPU's dlscan_scan of n items (or a copy of their bytes), alone, on GPU 0. */
static double local_us(gpu *g, dlscan_type type, size_t n, int copy, int repeats, unsigned long long *total)
{
    CUDA_CHECK(cudaSetDevice(0));
    const size_t bytes = n * (type == DLSCAN_INT32 ? 4 : 8);
    double ms[MAX_REPEATS];
    for (int r = -5; r < repeats; ++r) {
        CUDA_CHECK(cudaEventRecord(g->start, g->stream));
        if (copy)
            CUDA_CHECK(cudaMemcpyAsync(g->out, g->in, bytes, cudaMemcpyDeviceToDevice, g->stream));
        else {
            dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
            a.d_in = g->in;
            a.d_out = g->out;
            a.n = n;
            a.in_type = a.out_type = type;
            a.d_total = g->total;
            if (dlscan_scan(g->h, &a, g->stream) != DLSCAN_SUCCESS) {
                fprintf(stderr, "%s\n", dlscan_last_error(g->h));
                exit(1);
            }
        }
        CUDA_CHECK(cudaEventRecord(g->stop, g->stream));
        CUDA_CHECK(cudaEventSynchronize(g->stop));
        float elapsed = 0;
        if (r >= 0) {
            CUDA_CHECK(cudaEventElapsedTime(&elapsed, g->start, g->stop));
            ms[r] = elapsed;
        }
    }
    qsort(ms, (size_t)repeats, sizeof ms[0], bench_compare_doubles);
    *total = 0;
    CUDA_CHECK(cudaMemcpy(total, g->total, 8, cudaMemcpyDeviceToHost));
    return 1000.0 * ms[repeats / 2];
}

/* Each GPU's buffers of at least `bytes`, filled with bytes of 1. */
static void ensure(gpu *gpus, int count, size_t bytes)
{
    for (int r = 0; r < count; ++r) {
        gpu *g = &gpus[r];
        if (g->capacity >= bytes)
            continue;
        CUDA_CHECK(cudaSetDevice(r));
        cudaFree(g->in);
        cudaFree(g->out);
        CUDA_CHECK(cudaMalloc(&g->in, bytes));
        CUDA_CHECK(cudaMalloc(&g->out, bytes));
        CUDA_CHECK(cudaMemset(g->in, 1, bytes));
        g->capacity = bytes;
    }
}

int main(int argc, char **argv)
{
    const char *types = "int32,int64", *csv_path = NULL;
    int log = 30, weak = 28, repeats = 7, want_gpus = MAX_GPUS;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--types") && i + 1 < argc)
            types = argv[++i];
        else if (!strcmp(argv[i], "--log") && i + 1 < argc)
            log = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--weak") && i + 1 < argc)
            weak = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
            want_gpus = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else {
            fprintf(stderr, "usage: bench_across [--types int32,int64] [--log 30] [--weak 28] [--repeats 7] [--gpus N] "
                            "[--csv FILE]\n");
            return 2;
        }
    }
    repeats = repeats < 1 ? 1 : repeats > MAX_REPEATS ? MAX_REPEATS : repeats;
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    count = count < want_gpus ? count : want_gpus;
    count = count < MAX_GPUS ? count : MAX_GPUS;
    gpu gpus[MAX_GPUS] = {{0}};
    for (int r = 0; r < count; ++r) {
        CUDA_CHECK(cudaSetDevice(r));
        if (dlscan_create(&gpus[r].h) != DLSCAN_SUCCESS)
            return 1;
        CUDA_CHECK(cudaStreamCreateWithFlags(&gpus[r].stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreate(&gpus[r].start));
        CUDA_CHECK(cudaEventCreate(&gpus[r].stop));
        CUDA_CHECK(cudaMalloc(&gpus[r].total, 8 * MAX_GPUS));
        CUDA_CHECK(cudaMalloc(&gpus[r].word, 8));
    }
    static ncclComm_t comms[MAX_GPUS + 1][MAX_GPUS];
    static dlscan_peers_t peers[MAX_GPUS + 1][MAX_GPUS];
    int comms_made[MAX_GPUS + 1] = {0};
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("# %d x %s; NCCL %d; medians of %d rounds; us\n", count, prop.name, NCCL_VERSION_CODE, repeats);
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv) {
        perror(csv_path);
        return 1;
    }
    if (csv)
        fprintf(csv, "# %d x %s; NCCL %d; medians of %d rounds; us\n"
                     "type,row,gpus,items_per_gpu,memcpy_us,one_gpu_us,across_us,bound_us,bound_over_across,"
                     "all_gather_us,peers_us,peer_gather_us,check\n",
                count, prop.name, NCCL_VERSION_CODE, repeats);
    printf("type   row    p  items/GPU      memcpy   one GPU   across      bound    bound/across  all-gather      peers  peer-gather"
           "  check\n");
    for (const char *t = types; *t;) {
        const dlscan_type type = !strncmp(t, "int64", 5) ? DLSCAN_INT64 : DLSCAN_INT32;
        const size_t size = type == DLSCAN_INT32 ? 4 : 8;
        t += strcspn(t, ",");
        t += *t == ',';
        for (int row = 0; row < 6; ++row) {
            static const int small_logs[] = {10, 14, 17, 20};
            const char *name = row == 0 ? "strong" : row == 1 ? "weak" : "small";
            int ps[MAX_GPUS + 1], np = 0;
            for (int p = 1; p < count; p *= 2)
                ps[np++] = p;
            ps[np++] = count;
            for (int k = 0; k < np; ++k) {
                const int p = ps[k];
                const size_t n = row == 0 ? ((size_t)1 << log) / (size_t)p
                                          : ((size_t)1 << (row == 1 ? weak : small_logs[row - 2]));
                /* one GPU: the whole array (strong: p slices) or one slice (weak, small) */
                const size_t whole = row == 0 ? n * (size_t)p : n;
                ensure(gpus, count, whole * size);
                if (!comms_made[p]) { /* one communicator set for each p, made once */
                    int list[MAX_GPUS];
                    for (int r = 0; r < p; ++r)
                        list[r] = r;
                    if (ncclCommInitAll(comms[p], p, list) != ncclSuccess) {
                        fprintf(stderr, "ncclCommInitAll failed\n");
                        return 1;
                    }
                    for (int r = 0; r < p; ++r)
                        gpus[r].comm = comms[p][r];
                    if (make_peers(gpus, p, peers[p]) != 0)
                        return 1;
                    comms_made[p] = 1;
                }
                for (int r = 0; r < p; ++r) {
                    gpus[r].comm = comms[p][r];
                    gpus[r].peers = dlscan_peers_exchange(peers[p][r]);
                }
                unsigned long long one_total = 0, total = 0, ignored = 0;
                const double copy = local_us(&gpus[0], type, whole, 1, repeats, &ignored);
                const double one = local_us(&gpus[0], type, whole, 0, repeats, &one_total);
                double slice_one = one;
                unsigned long long slice_total = one_total;
                if (row == 0 && p > 1)
                    slice_one = local_us(&gpus[0], type, n, 0, repeats, &slice_total);
                int failed = 0;
                const double gather = p > 1 ? across_us(gpus, p, type, n, ALL_GATHER, repeats, &ignored, &failed) : 0;
                const double across = across_us(gpus, p, type, n, SCAN_ACROSS, repeats, &total, &failed);
                unsigned long long peers_total = 0;
                const double peer_gather =
                    p > 1 ? across_us(gpus, p, type, n, PEERS_GATHER, repeats, &ignored, &failed) : 0;
                const double peers_across = across_us(gpus, p, type, n, PEERS_ACROSS, repeats, &peers_total, &failed);
                /* the whole array's total: p slices of n items of bytes 1 */
                unsigned long long expect = row == 0 ? one_total : 0;
                if (row != 0) { /* p copies of one slice's total, summed in the type */
                    for (int r = 0; r < p; ++r)
                        expect += slice_total;
                    if (size == 4)
                        expect &= 0xffffffffull;
                }
                if (size == 4)
                    total &= 0xffffffffull, peers_total &= 0xffffffffull;
                const int right = total == expect && peers_total == expect;
                /* strong: the bound is one GPU's time x 3 / (2p) (2p/3 times as fast); weak and
                 * small: 1.5 times one GPU's scan of its slice */
                const double bound = p == 1 ? slice_one : row == 0 ? one * 3.0 / (2.0 * p) : 1.5 * slice_one;
                printf("%-6s %-6s %d  %10zu  %9.1f %9.1f %9.1f  %9.1f  %12.3f  %10.1f  %9.1f  %11.1f  %s\n",
                       size == 4 ? "int32" : "int64", name, p, n, copy, one, across, bound, bound / across, gather,
                       peers_across, peer_gather, failed ? "FAILED" : right ? "ok" : "WRONG");
                fflush(stdout);
                if (csv)
                    fprintf(csv, "%s,%s,%d,%zu,%.1f,%.1f,%.1f,%.1f,%.3f,%.1f,%.1f,%.1f,%s\n", size == 4 ? "int32" : "int64",
                            name, p, n, copy, one, across, bound, bound / across, gather, peers_across, peer_gather,
                            failed ? "FAILED" : right ? "ok" : "WRONG");
            }
        }
    }
    if (csv)
        fclose(csv);
    return 0;
}
