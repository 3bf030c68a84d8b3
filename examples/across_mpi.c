/*
 * across_mpi.c: a running total over the ranks of an MPI job (dlscan_mpi.h), on CPU handles:
 * each rank holds a slice of one array, of its own length, and gets its slice of the array's
 * inclusive scan. Rank r's slice is r + 3 items, all of value r + 1, so the whole array's total
 * is sum over r of (r + 1)(r + 3), which every rank checks against its d_total.
 *
 *   mpicc across_mpi.c $(pkg-config --cflags --libs dlscan-mpi) -o across_mpi
 *   mpiexec -n 4 ./across_mpi
 */
#include <stdio.h>
#include <stdlib.h>

#include <dlscan_mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    const size_t n = (size_t)rank + 3;
    long long *slice = malloc(n * sizeof *slice), *out = malloc(n * sizeof *out), total = 0;
    for (size_t i = 0; i < n; ++i)
        slice[i] = rank + 1;

    dlscan_handle_t h = NULL;
    dlscan_status status = dlscan_create_cpu(&h, 0); /* 0: a thread per core */
    if (status == DLSCAN_SUCCESS) {
        dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
        a.d_in = slice;
        a.d_out = out;
        a.n = n;
        a.in_type = a.out_type = DLSCAN_INT64;
        a.d_total = &total; /* the whole array's total, on every rank that asks */
        status = dlscan_mpi_scan(h, &a, MPI_COMM_WORLD, NULL);
    }
    long long before = 0, want = 0; /* what comes before this rank, and the whole total */
    for (int r = 0; r < ranks; ++r) {
        if (r < rank)
            before += (long long)(r + 1) * (r + 3);
        want += (long long)(r + 1) * (r + 3);
    }
    int ok = status == DLSCAN_SUCCESS && total == want && out[n - 1] == before + (long long)n * (rank + 1);
    if (!ok)
        fprintf(stderr, "rank %d: %s (%s)\n", rank, dlscan_status_string(status), h ? dlscan_last_error(h) : "");
    printf("rank %d: %zu items, its last running total %lld, the whole total %lld\n", rank, n, out[n - 1], total);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    dlscan_destroy(h);
    free(slice);
    free(out);
    MPI_Finalize();
    return all ? 0 : 1;
}
