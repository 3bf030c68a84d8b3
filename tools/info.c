/*
 * info.c: `dlscan info`: the library's version, whether the GPU backend was built and
 * which GPU it finds (with its SMs and memory), the CPU's cores, the backend that scan and
 * bench would use, and the items per tile of a scan into each type on the GPU and CPU
 * backends.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef DLSCAN_CLI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "cli.h"
#include "values.h"

int cmd_info(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_usage("info");
            return STATUS_OK;
        }
        return fail(STATUS_BAD_INPUT, "info: unexpected argument '%s'", argv[i]);
    }
    print_version_line();
    dlscan_handle_t gpu = NULL, cpu = NULL;
    const dlscan_status gpu_status = dlscan_create(&gpu);
#ifdef DLSCAN_CLI_HAVE_CUDA
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    char driver_text[64] = "no CUDA driver";
    if (driver > 0)
        snprintf(driver_text, sizeof driver_text, "driver for CUDA %d.%d", driver / 1000,
                 driver % 1000 / 10);
    printf("GPU backend:  built (CUDA runtime %d.%d, %s)\n", runtime / 1000, runtime % 1000 / 10,
           driver_text);
    int device = 0;
    struct cudaDeviceProp prop;
    if (gpu_status == DLSCAN_SUCCESS && cudaGetDevice(&device) == cudaSuccess &&
        cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        printf("GPU:          device %d: %s, %d SMs, compute capability %d.%d, %.1f GiB\n", device,
               prop.name, prop.multiProcessorCount, prop.major, prop.minor,
               (double)prop.totalGlobalMem / (1 << 30));
#else
    printf("GPU backend:  not built (-Dgpu=disabled or no CUDA toolkit): CPU handles only\n");
#endif
    char reason[256] = "";
    if (gpu_status != DLSCAN_SUCCESS) {
        no_gpu_reason(reason, sizeof reason);
        printf("GPU:          none usable (dlscan_create: %s; %s)\n",
               dlscan_status_string(gpu_status), reason);
    }
    printf("CPU:          %ld online cores\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("Backend:      %s\n", gpu ? "gpu (scan and bench run on the GPU)"
                                     : "cpu (no usable GPU: scan and bench run on the CPU backend)");

    const dlscan_status cpu_status = dlscan_create_cpu(&cpu, 0);
    printf("\nItems per tile of a scan, by its output type:\n%-9s %9s %9s\n", "type", "gpu", "cpu");
    for (size_t t = 0; t < TYPE_COUNT; ++t) {
        size_t gpu_items = 0, cpu_items = 0;
        char gpu_text[32] = "-", cpu_text[32] = "-";
        if (gpu && dlscan_tile_items(gpu, all_types[t].type, &gpu_items) == DLSCAN_SUCCESS)
            snprintf(gpu_text, sizeof gpu_text, "%zu", gpu_items);
        if (cpu && dlscan_tile_items(cpu, all_types[t].type, &cpu_items) == DLSCAN_SUCCESS)
            snprintf(cpu_text, sizeof cpu_text, "%zu", cpu_items);
        printf("%-9s %9s %9s\n", all_types[t].name, gpu_text, cpu_text);
    }
    dlscan_destroy(gpu);
    dlscan_destroy(cpu);
    if (cpu_status != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_create_cpu failed: %s", dlscan_status_string(cpu_status));
    return STATUS_OK;
}
