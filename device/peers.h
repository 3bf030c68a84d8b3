/*
 * peers.h: what the peer exchange's host side (src/peers.c) and its kernel
 * (device/peers_kernel.cu) share: a rank's slot for one value, the kernel's parameters and its
 * launcher's C signature. Plain C, included by both sides.
 */
#ifndef DLSCAN_PEERS_H
#define DLSCAN_PEERS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most bytes a rank's value may have, and the kernel's threads at most (one a rank). */
#define DL_PEER_VALUE_BYTES 16
#define DL_PEERS_THREADS 1024

/* One rank's value in another's memory: the value, then the number of the call that wrote it
 * (0 before any). Each rank owns 2 x ranks of them (two sets, the call's number % 2). */
typedef struct dl_peer_slot {
    unsigned long long value[2];
    unsigned long long number;
    unsigned long long unused;
} dl_peer_slot;

typedef struct dl_peers_params {
    const void *send;           /* this rank's value, `bytes` of device memory */
    void *recv;                 /* ranks x bytes, in rank order */
    uint32_t bytes;             /* 1 .. DL_PEER_VALUE_BYTES */
    uint32_t rank, ranks;
    dl_peer_slot *const *peers; /* device memory: each rank's slots, as this rank maps them */
    dl_peer_slot *own;          /* this rank's slots (peers[rank]) */
    unsigned long long *calls;  /* this rank's count of calls, in its device memory */
} dl_peers_params;

/* Enqueues the all-gather on `stream`; returns a cudaError_t as int. */
int dl_gpu_peers_launch(const dl_peers_params *params, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_PEERS_H */
