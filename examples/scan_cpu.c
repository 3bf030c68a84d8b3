/*
 * scan_cpu.c: examples/scan.c on dlscan's CPU backend: the same inclusive sum, over host
 * memory, with no CUDA at all. It builds against any dlscan, with or without the GPU
 * backend, and runs anywhere:
 *
 *   cc -std=c11 scan_cpu.c $(pkg-config --cflags --libs dlscan) -o scan_cpu && ./scan_cpu
 *
 * The README's install block builds it against the installed library, whatever its
 * backends; CMakeLists.txt and subproject/meson.build take it where dlscan has no GPU
 * backend, where scan.c cannot build.
 */
#include <dlscan.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const size_t n = (size_t)1 << 24;
    dlscan_handle_t h = NULL;
    int *values = malloc(n * sizeof *values);
    if (!values)
        return 1;
    for (size_t i = 0; i < n; ++i)
        values[i] = 1; /* the inclusive sum of ones: out[i] = i + 1 */
    /* 0 threads: one per online core. A CPU call runs to completion before it returns. */
    dlscan_status status = dlscan_create_cpu(&h, 0);
    if (status == DLSCAN_SUCCESS)
        status = dlscan_inclusive_scan(h, values, values, n, DLSCAN_INT32, DLSCAN_SUM, NULL);
    if (status != DLSCAN_SUCCESS) {
        fprintf(stderr, "failed: %s %s\n", dlscan_status_string(status), dlscan_last_error(h));
        return 1;
    }
    const int right = values[0] == 1 && values[n / 2] == (int)n / 2 + 1 && values[n - 1] == (int)n;
    printf("inclusive sum of %zu ones on the %s backend: out[0] = %d, out[n/2] = %d, "
           "out[n-1] = %d: %s\n",
           n, dlscan_backend_name(h), values[0], values[n / 2], values[n - 1],
           right ? "right" : "WRONG");
    free(values);
    dlscan_destroy(h);
    return right ? 0 : 1;
}
