/*
 * scan.c: dlscan from a C program: an inclusive sum over device memory, in place.
 *
 *   cc -std=c11 scan.c $(pkg-config --cflags --libs dlscan) -o scan && ./scan
 *
 * It calls the CUDA runtime itself, so it needs a dlscan with the GPU backend (`pkg-config
 * --variable=gpu_backend dlscan` prints yes); scan_cpu.c is the same scan on the CPU
 * backend, for any dlscan. Without a GPU, dlscan_create returns DLSCAN_ERROR_NO_DEVICE: the
 * program says so and exits with status 0 (CI runs it on machines without one).
 */
#include <cuda_runtime_api.h>
#include <dlscan.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const size_t n = (size_t)1 << 24, bytes = n * sizeof(int);
    dlscan_handle_t h;
    const dlscan_status created = dlscan_create(&h);
    if (created == DLSCAN_ERROR_NO_DEVICE) {
        printf("dlscan_create returned DLSCAN_ERROR_NO_DEVICE: no GPU here, nothing to scan\n");
        return 0;
    }
    int *values = malloc(bytes), *d_values = NULL;
    for (size_t i = 0; i < n; ++i)
        values[i] = 1; /* the inclusive sum of ones: out[i] = i + 1 */
    if (created != DLSCAN_SUCCESS || cudaMalloc((void **)&d_values, bytes) != cudaSuccess ||
        cudaMemcpy(d_values, values, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        dlscan_inclusive_scan(h, d_values, d_values, n, DLSCAN_INT32, DLSCAN_SUM, NULL) != DLSCAN_SUCCESS ||
        cudaMemcpy(values, d_values, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        /* (the scan is enqueued on the default stream; the copy back waits for it) */
        fprintf(stderr, "failed: %s %s\n", dlscan_status_string(created), dlscan_last_error(h));
        return 1;
    }
    const int right = values[0] == 1 && values[n / 2] == (int)n / 2 + 1 && values[n - 1] == (int)n;
    printf("inclusive sum of %zu ones: out[0] = %d, out[n/2] = %d, out[n-1] = %d: %s\n", n,
           values[0], values[n / 2], values[n - 1], right ? "right" : "WRONG");
    cudaFree(d_values);
    free(values);
    dlscan_destroy(h);
    return right ? 0 : 1;
}
