/*
 * provenance.c: the lines that open the GPU benches' output (bench.c, bench_pairs.c): the GPU,
 * the driver, runtime and CUB versions, dlscan's version and commit (DLSCAN_GIT_COMMIT), the
 * date and the operation timed.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "variants.h"

void bench_provenance(char *out, size_t size, const struct cudaDeviceProp *prop, const char *operation)
{
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    const char *commit = getenv("DLSCAN_GIT_COMMIT");
    char when[64];
    const time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    snprintf(out, size,
             "# gpu: %s (%d SMs, %d MB L2)\n# driver: %d.%d, CUDA runtime: %d.%d, CUB: %s\n"
             "# dlscan: %d, commit: %s, date: %s\n# operation: %s\n",
             prop->name, prop->multiProcessorCount, prop->l2CacheSize >> 20, driver / 1000,
             driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, bench_cub_version(),
             dlscan_version(), commit ? commit : "unknown", when, operation);
}
