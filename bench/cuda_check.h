/*
 * cuda_check.h: the bench programs' check of a CUDA runtime call: on an error, say which
 * call failed where, and exit (a benchmark cannot go on past a failed allocation or launch).
 */
#ifndef DLSCAN_BENCH_CUDA_CHECK_H
#define DLSCAN_BENCH_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA_CHECK(call)                                                                          \
    do {                                                                                          \
        const cudaError_t cuda_check_error = (call);                                              \
        if (cuda_check_error != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                  \
                    cudaGetErrorString(cuda_check_error));                                        \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

#endif /* DLSCAN_BENCH_CUDA_CHECK_H */
