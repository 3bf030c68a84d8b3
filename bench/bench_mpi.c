/*
 * bench_mpi.c: the latency of a scan across the ranks of an MPI job (dlscan_mpi_scan) at small
 * slices, beside MPI's own exchanges of one value: MPI_Exscan of one int64 (what a hand-written
 * distributed scan would call) and MPI_Allgather of one (what the binding calls). Issue 43's
 * small-slice report. Each rank scans 2^10 .. 2^20 int64 items of its own on its GPU (rank
 * modulo the GPUs, where the binding was built with CUDA and the rank has one) or on a CPU
 * handle of one thread (--cpu, or no GPU); a round starts at an MPI_Barrier and lasts, on the host's clock, until every
 * rank's call (and, on a GPU, its stream) is done, the slowest rank's time; median of the rounds.
 *
 *   mpiexec -n 2 bench_mpi [--cpu] [--rounds 50]
 */
#define _POSIX_C_SOURCE 200809L /* stats.h */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DLSCAN_MPI_CUDA
#include <cuda_runtime_api.h>
#endif

#include "dlscan_mpi.h"
#include "stats.h"

#define MAX_ROUNDS 501

/* The median over rounds of the slowest rank's time of what(), in us. */
static double median_us(void (*what)(void *), void *context, int rounds)
{
    double times[MAX_ROUNDS];
    for (int r = -5; r < rounds; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        what(context);
        double mine = MPI_Wtime() - start, slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0)
            times[r] = slowest;
    }
    qsort(times, (size_t)rounds, sizeof times[0], bench_compare_doubles);
    return 1e6 * times[rounds / 2];
}

typedef struct scan_call {
    dlscan_handle_t h;
    dlscan_scan_args a;
    int device;
    int failed;
} scan_call;

static void scan_once(void *p)
{
    scan_call *c = p;
    c->failed |= dlscan_mpi_scan(c->h, &c->a, MPI_COMM_WORLD, NULL) != DLSCAN_SUCCESS;
#ifdef DLSCAN_MPI_CUDA
    if (c->device)
        cudaDeviceSynchronize();
#endif
}

static void exscan_once(void *p)
{
    long long mine = 1, before = 0;
    (void)p;
    MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
}

static void allgather_once(void *p)
{
    long long mine = 1;
    MPI_Allgather(&mine, 1, MPI_LONG_LONG, p, 1, MPI_LONG_LONG, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 0, cpu = 0, rounds = 50;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--cpu"))
            cpu = 1;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
    }
    rounds = rounds < 1 ? 1 : rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
    scan_call c = {0};
#ifdef DLSCAN_MPI_CUDA
    int devices = 0;
    if (!cpu && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
        cudaSetDevice(rank % devices);
        c.device = dlscan_create(&c.h) == DLSCAN_SUCCESS;
    }
    (void)cudaGetLastError();
#endif
    (void)cpu;
    if (!c.device && dlscan_create_cpu(&c.h, 1) != DLSCAN_SUCCESS) {
        fprintf(stderr, "rank %d: no handle\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long long *gathered = calloc((size_t)ranks, sizeof *gathered);
    const double exscan = median_us(exscan_once, NULL, rounds);
    const double allgather = median_us(allgather_once, gathered, rounds);
    if (rank == 0)
        printf("# %d ranks, %s handles; medians of %d rounds, the slowest rank; us\n"
               "# MPI_Exscan of one int64: %.1f; MPI_Allgather of one: %.1f\n"
               "items/rank  dlscan_mpi_scan  /MPI_Exscan\n",
               ranks, c.device ? "GPU" : "CPU", rounds, exscan, allgather);
    for (int log = 10; log <= 20; log += 2) {
        const size_t n = (size_t)1 << log, bytes = n * sizeof(long long);
        void *in = NULL, *out = NULL;
#ifdef DLSCAN_MPI_CUDA
        if (c.device) {
            cudaMalloc(&in, bytes);
            cudaMalloc(&out, bytes);
            cudaMemset(in, 1, bytes);
        }
#endif
        if (!c.device) {
            in = calloc(n, sizeof(long long));
            out = malloc(bytes);
        }
        c.a = (dlscan_scan_args)DLSCAN_SCAN_ARGS_INIT;
        c.a.d_in = in;
        c.a.d_out = out;
        c.a.n = n;
        c.a.in_type = c.a.out_type = DLSCAN_INT64;
        const double t = median_us(scan_once, &c, rounds);
        if (rank == 0)
            printf("%10zu  %15.1f  %11.2f%s\n", n, t, t / exscan, c.failed ? "  FAILED" : "");
#ifdef DLSCAN_MPI_CUDA
        if (c.device) {
            cudaFree(in);
            cudaFree(out);
        }
#endif
        if (!c.device) {
            free(in);
            free(out);
        }
    }
    free(gathered);
    dlscan_destroy(c.h);
    MPI_Finalize();
    return c.failed;
}
