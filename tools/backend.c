/*
 * backend.c: which backend the `dlscan` command runs on (cli.h): --backend auto|gpu|cpu,
 * the handle it asks for, and why there is no GPU where there is none: no NVIDIA driver,
 * or else the CUDA runtime's words, in builds with the GPU backend.
 */
#include <stdio.h>
#include <string.h>

#ifdef DLSCAN_CLI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "cli.h"

int parse_backend(const char *text, backend_choice *choice)
{
    static const char *const names[] = {"auto", "gpu", "cpu"};
    for (int k = 0; k < 3; ++k)
        if (strcmp(text, names[k]) == 0) {
            *choice = (backend_choice)k;
            return 1;
        }
    return 0;
}

void no_gpu_reason(char *reason, size_t size)
{
#ifdef DLSCAN_CLI_HAVE_CUDA
    int count = 0, driver = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    /* Without a driver the runtime says that the driver is too old (or that there is no
     * device); its driver version is 0 then. */
    if ((error == cudaErrorInsufficientDriver || error == cudaErrorNoDevice) &&
        cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0)
        snprintf(reason, size, "no NVIDIA driver");
    else if (error != cudaSuccess)
        snprintf(reason, size, "%s", cudaGetErrorString(error));
    else
        snprintf(reason, size, "%d CUDA devices, none usable", count);
    (void)cudaGetLastError();
#else
    snprintf(reason, size, "dlscan was built without the GPU backend (-Dgpu=disabled)");
#endif
}

int open_handle(backend_choice choice, int threads, int quiet, const char *activity,
                dlscan_handle_t *h, int *on_gpu)
{
    *h = NULL;
    *on_gpu = 0;
    if (choice != BACKEND_CPU) {
        const dlscan_status status = dlscan_create(h);
        if (status == DLSCAN_SUCCESS) {
            *on_gpu = 1;
            return STATUS_OK;
        }
        char reason[256];
        no_gpu_reason(reason, sizeof reason);
        if (status != DLSCAN_ERROR_NO_DEVICE)
            return fail(STATUS_FAILED, "dlscan_create failed: %s (%s)",
                        dlscan_status_string(status), reason);
        if (choice == BACKEND_GPU)
            return fail(STATUS_FAILED, "--backend gpu: no usable GPU (%s)", reason);
#ifdef DLSCAN_CLI_HAVE_CUDA /* a build without the GPU backend has nothing to say */
        if (!quiet)
            fprintf(stderr, "dlscan: no usable GPU (%s); %s\n", reason, activity);
#else
        (void)quiet, (void)activity;
#endif
    }
    const dlscan_status status = dlscan_create_cpu(h, threads);
    if (status != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_create_cpu failed: %s", dlscan_status_string(status));
    return STATUS_OK;
}
