/*
 * test_mpi.c: the `mpi` test: dlscan_mpi_scan on the ranks of MPI_COMM_WORLD (meson runs it
 * under mpiexec -n 3), on CPU handles and, where this rank has a GPU, on GPU handles (rank r on
 * device r % devices). Every rank draws the whole input from one seed (rank 0's, broadcast),
 * scans its own slice across the ranks, and compares it with its slice of one dlscan_scan of the
 * whole input on a CPU handle here: bit for bit, as every case's sums are exact (integers, and
 * floats that are multiples of 1/256: scan_check.h's UNIFORM values) and min and max are exact.
 * The slices have random lengths, empty ones among them; every rank sets d_total, which must be
 * the whole input's total. Then a select across the ranks (dlscan_mpi_select) by flags; on GPU
 * handles, the same cases through the peer exchange (dlscan_mpi_peers_create). Then the
 * refusals: MPI_COMM_NULL. Prints TAP from rank 0; exits
 * non-zero on every rank if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlscan_mpi.h"
#include "across_check.h"
#ifdef DLSCAN_MPI_CUDA
#include <cuda_runtime_api.h>
#endif

int test_expect_failures; /* check.h's plain driver, which scan_check.c links against */

static int failures;

#define EXPECT_RANK(condition, ...)                                                               \
    do {                                                                                          \
        if (!(condition)) {                                                                       \
            fprintf(stderr, "rank %d: ", rank);                                                   \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            ++failures;                                                                           \
        }                                                                                         \
    } while (0)

/* One case on handle h (device memory where `device`): every rank its slice, across the ranks
 * by dlscan_mpi_scan, or through `through` (the peer exchange) where it is not NULL. */
static void run_case(dlscan_handle_t h, int device, const across_case *c, const dlscan_exchange *through,
                     uint64_t seed, int rank, int ranks)
{
    uint64_t rng = seed;
    const size_t in_size = test_type_size(c->in_type), size = test_type_size(c->out_type);
    size_t lengths[64] = {0}, first = 0, n = 0;
    for (int r = 0; r < ranks; ++r) {
        const uint64_t draw = test_random(&rng);
        lengths[r] = draw % 5 == 0 ? 0 : (size_t)(draw >> 8) % 20000;
        if (r < rank)
            first += lengths[r];
        n += lengths[r];
    }
    unsigned char *input = malloc(n * in_size + 1), *want = malloc(n * size + 1),
                  *got = malloc(lengths[rank] * size + 1);
    test_fill_random(c->in_type, TEST_VALUES_UNIFORM, input, n, &rng);
    unsigned char item[8];
    test_fill_random(c->in_type, TEST_VALUES_UNIFORM, item, 1, &rng);
    const uint64_t init = test_convert_item(c->in_type, c->out_type, item);
    uint64_t want_total = 0, got_total = 0;

    /* The reference: one scan of the whole input on a CPU handle. */
    dlscan_handle_t whole = NULL;
    dlscan_create_cpu(&whole, 1);
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.in_type = c->in_type;
    a.out_type = c->out_type;
    a.op = c->op;
    a.exclusive = c->exclusive;
    a.init = c->with_init ? &init : NULL;
    a.d_in = input;
    a.d_out = want;
    a.n = n;
    a.d_total = &want_total;
    EXPECT_RANK(dlscan_scan(whole, &a, NULL) == DLSCAN_SUCCESS, "the reference: %s", dlscan_last_error(whole));
    dlscan_destroy(whole);

    /* This rank's slice, across the ranks. */
    const void *in = input + first * in_size;
    void *out = got, *total = &got_total;
#ifdef DLSCAN_MPI_CUDA
    if (device) {
        void *d_in = NULL, *d_out = NULL, *d_total = NULL;
        cudaMalloc(&d_in, lengths[rank] * in_size + 1);
        cudaMalloc(&d_out, lengths[rank] * size + 1);
        cudaMalloc(&d_total, 8);
        cudaMemcpy(d_in, in, lengths[rank] * in_size, cudaMemcpyHostToDevice);
        in = d_in, out = d_out, total = d_total;
    }
#endif
    a.d_in = in;
    a.d_out = out;
    a.n = lengths[rank];
    a.d_total = total;
    const dlscan_status status =
        through ? dlscan_scan_across(h, &a, through, NULL) : dlscan_mpi_scan(h, &a, MPI_COMM_WORLD, NULL);
    EXPECT_RANK(status == DLSCAN_SUCCESS, "%s items into %s, %s: %s (%s)", test_type_name(c->in_type),
                test_type_name(c->out_type), device ? "gpu" : "cpu", dlscan_status_string(status),
                dlscan_last_error(h));
#ifdef DLSCAN_MPI_CUDA
    if (device) {
        cudaMemcpy(got, out, lengths[rank] * size, cudaMemcpyDeviceToHost);
        cudaMemcpy(&got_total, total, size, cudaMemcpyDeviceToHost);
        cudaFree((void *)in), cudaFree(out), cudaFree(total);
    }
#endif
    EXPECT_RANK(memcmp(got, want + first * size, lengths[rank] * size) == 0,
                "%s %s items into %s, %s: the slice differs from one scan's", device ? "gpu" : "cpu",
                test_type_name(c->in_type), test_type_name(c->out_type), c->exclusive ? "exclusive" : "inclusive");
    EXPECT_RANK(memcmp(&got_total, &want_total, size) == 0, "%s %s items into %s: the total differs",
                device ? "gpu" : "cpu", test_type_name(c->in_type), test_type_name(c->out_type));
    free(input);
    free(want);
    free(got);
}

/* dlscan_mpi_select: int64 items kept where a flag is set; each rank's items, count, offset and
 * the whole count against the reference of the whole input. */
static void run_select(dlscan_handle_t h, int device, uint64_t seed, int rank, int ranks)
{
    uint64_t rng = seed;
    size_t lengths[64] = {0}, first = 0, n = 0;
    for (int r = 0; r < ranks; ++r) {
        const uint64_t draw = test_random(&rng);
        lengths[r] = draw % 5 == 0 ? 0 : (size_t)(draw >> 8) % 5000;
        if (r < rank)
            first += lengths[r];
        n += lengths[r];
    }
    int64_t *items = malloc(n * 8 + 8), *got = malloc(lengths[rank] * 8 + 8), *want = malloc(lengths[rank] * 8 + 8);
    unsigned char *flags = malloc(n + 1);
    size_t before = 0, everyone = 0, kept = 0;
    for (size_t i = 0; i < n; ++i) {
        items[i] = (int64_t)test_random(&rng);
        flags[i] = test_random(&rng) % 3 == 0;
        everyone += flags[i];
        before += i < first && flags[i];
        if (i >= first && i < first + lengths[rank] && flags[i])
            want[kept++] = items[i];
    }
    void *in = items + first, *f = flags + first, *out = got;
    size_t counts[3] = {0}, *c = counts;
#ifdef DLSCAN_MPI_CUDA
    if (device) {
        cudaMalloc(&in, lengths[rank] * 8 + 8);
        cudaMalloc(&f, lengths[rank] + 1);
        cudaMalloc(&out, lengths[rank] * 8 + 8);
        cudaMalloc((void **)&c, sizeof counts);
        cudaMemcpy(in, items + first, lengths[rank] * 8, cudaMemcpyHostToDevice);
        cudaMemcpy(f, flags + first, lengths[rank], cudaMemcpyHostToDevice);
    }
#endif
    const dlscan_status status = dlscan_mpi_select(h, in, f, out, c, c + 1, c + 2, lengths[rank], DLSCAN_INT64,
                                                   DLSCAN_NONZERO, NULL, MPI_COMM_WORLD, NULL);
#ifdef DLSCAN_MPI_CUDA
    if (device) {
        cudaMemcpy(got, out, lengths[rank] * 8, cudaMemcpyDeviceToHost);
        cudaMemcpy(counts, c, sizeof counts, cudaMemcpyDeviceToHost);
        cudaFree(in), cudaFree(f), cudaFree(out), cudaFree(c);
    }
#endif
    EXPECT_RANK(status == DLSCAN_SUCCESS && counts[0] == kept && counts[1] == before && counts[2] == everyone &&
                    memcmp(got, want, kept * 8) == 0,
                "%s select: %s; count %zu offset %zu whole %zu, want %zu %zu %zu", device ? "gpu" : "cpu",
                dlscan_last_error(h), counts[0], counts[1], counts[2], kept, before, everyone);
    free(items), free(got), free(want), free(flags);
}

/* The exact cases through the peer exchange (dlscan_mpi_peers_create: CUDA IPC between these
 * processes), on GPU handles; skipped, with the reason, where the ranks cannot map each other's
 * memory. Returns the step. */
static int run_peers(dlscan_handle_t h, uint64_t seed, int rank, int ranks, int step)
{
    dlscan_peers_t peers = NULL;
    const dlscan_status made = dlscan_mpi_peers_create(h, MPI_COMM_WORLD, NULL, &peers);
    int have = made == DLSCAN_SUCCESS, everywhere = 0;
    MPI_Allreduce(&have, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    EXPECT_RANK(have == everywhere, "dlscan_mpi_peers_create succeeded on some ranks only: %s", dlscan_last_error(h));
    ++step;
    if (!everywhere) {
        if (rank == 0)
            printf("ok %d - the peer exchange # SKIP %s\n", step, dlscan_last_error(h));
        dlscan_peers_destroy(peers);
        return step;
    }
    const int before = failures;
    const dlscan_exchange through = dlscan_peers_exchange(peers);
    for (int round = 0; round < 2; ++round)
        for (int i = 0; i < ACROSS_EXACT_CASE_COUNT; ++i)
            run_case(h, 1, &across_exact_cases[i], &through, seed + (uint64_t)(round * 100 + i), rank, ranks);
#ifdef DLSCAN_MPI_CUDA
    cudaDeviceSynchronize();
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    dlscan_peers_destroy(peers);
    int mine = failures - before, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s %d - %d ranks through the peer exchange, %d cases twice\n", all ? "not ok" : "ok", step, ranks,
               ACROSS_EXACT_CASE_COUNT);
    return step;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    uint64_t seed = test_seed();
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    const int count = ACROSS_EXACT_CASE_COUNT;
    if (rank == 0)
        printf("TAP version 13\n1..4\n");

    int step = 0;
    for (int device = 0; device <= 1; ++device) {
        dlscan_handle_t h = NULL;
#ifdef DLSCAN_MPI_CUDA
        int devices = 0;
        if (device && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
            cudaSetDevice(rank % devices);
#endif
        const dlscan_status created = device ? dlscan_create(&h) : dlscan_create_cpu(&h, 2);
        int have = created == DLSCAN_SUCCESS, everywhere = 0;
        MPI_Allreduce(&have, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        ++step;
        if (!everywhere) {
            if (rank == 0)
                printf("ok %d - %s handles # SKIP no GPU on every rank\n", step, device ? "GPU" : "CPU");
            if (device && rank == 0)
                printf("ok %d - the peer exchange # SKIP no GPU on every rank\n", step + 1);
            step += device;
            dlscan_destroy(h);
            continue;
        }
        const int before = failures;
        for (int i = 0; i < count; ++i)
            run_case(h, device, &across_exact_cases[i], NULL, seed + (uint64_t)i, rank, ranks);
        run_select(h, device, seed + 99, rank, ranks);
        int mine = failures - before, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%s %d - %d ranks on %s handles, %d cases and a select\n", all ? "not ok" : "ok", step, ranks,
                   device ? "GPU" : "CPU", count);
        if (device)
            step = run_peers(h, seed + 1000, rank, ranks, step);
        dlscan_destroy(h);
    }

    /* MPI_COMM_NULL is refused with a message, nothing written. */
    dlscan_handle_t h = NULL;
    dlscan_create_cpu(&h, 1);
    int32_t in[4] = {1, 2, 3, 4}, out[4] = {-1, -1, -1, -1};
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = in;
    a.d_out = out;
    a.n = 4;
    const int before = failures;
    EXPECT_RANK(dlscan_mpi_scan(h, &a, MPI_COMM_NULL, NULL) == DLSCAN_ERROR_EXCHANGE &&
                    strstr(dlscan_last_error(h), "MPI_COMM_NULL") && out[0] == -1 && out[3] == -1,
                "MPI_COMM_NULL: %s", dlscan_last_error(h));
    dlscan_destroy(h);
    int mine = failures - before, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s %d - MPI_COMM_NULL is refused\n", all ? "not ok" : "ok", ++step);
    mine = failures;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 1 : 0;
}
