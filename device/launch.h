/*
 * launch.h: what the C host layer (src/) and the CUDA kernels (device/) share: the scan
 * kernel's parameters and the launchers' C signatures. Plain C, included by both sides.
 */
#ifndef DLSCAN_LAUNCH_H
#define DLSCAN_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "dlscan.h"
#include "lookback.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One scan call, as the kernel sees it. */
typedef struct dl_scan_params {
    const void *in;
    void *out;
    uint64_t n;
    uint64_t seed_bits;          /* exclusive: init; inclusive: the identity */
    dl_word *descriptors;        /* the handle's descriptor storage, zeroed when allocated */
    uint64_t descriptor_words;   /* its size in words (cleared when the epoch wraps) */
    dl_control *control;         /* the handle's control block */
    int exclusive;               /* 0: inclusive scan, 1: exclusive scan */
    int count_stats;             /* 1: count look-back events in control->stats */
    uint32_t persistent_blocks;  /* grid of the persistent kernel (sm_90); 0: one block per tile */
} dl_scan_params;

/* Enqueues one scan kernel on `stream`. `left_fold` selects the deterministic
 * look-back for float sums (other types and operators ignore it: they are exact either
 * way). Returns a cudaError_t as int (0 = cudaSuccess). */
int dl_gpu_scan_launch(const dl_scan_params *params, dlscan_type type, dlscan_op op, int left_fold,
                       cudaStream_t stream);

/* Items per tile the GPU kernels use for `type`. */
size_t dl_gpu_tile_items(dlscan_type type);

/* Once per handle, on its device: lets the persistent kernels use the shared memory they
 * need. Returns a cudaError_t as int. */
int dl_gpu_scan_prepare(void);

/* Blocks per SM of the persistent kernel's grid. */
uint32_t dl_gpu_scan_blocks_per_sm(void);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_LAUNCH_H */
