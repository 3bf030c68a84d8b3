/*
 * peers_kernel.cu: the all-gather of the peer exchange (src/peers.c, dlscan_peers_create): one
 * value of up to 16 bytes from every rank, through the ranks' memory, in one block.
 *
 * Every rank owns slots in its own device memory, two sets of `ranks` (launch.h,
 * dl_peer_slot), and has every rank's slots mapped (CUDA IPC between processes, the pointer
 * itself within one). A call takes the next number from the rank's own count of calls (in its
 * device memory, so that a graph's replays count too), writes its value into slot `rank` of the
 * set `number % 2` of every rank and then the number beside it (a system-scope release), and
 * waits until every slot of that set in its own memory carries the number (a system-scope
 * acquire). A rank is at most one call ahead of another: its next call needs every rank's
 * value of this one, which a rank writes only after its own call before has read everything;
 * so two sets are enough, and a slot is never written while it is read.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "peers.h"

static __device__ __forceinline__ void dl_peer_store_release(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ unsigned long long dl_peer_load_acquire(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ unsigned long long dl_peer_load_relaxed(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void dl_peer_store_relaxed(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void __launch_bounds__(DL_PEERS_THREADS) dl_peers_all_gather(const dl_peers_params p)
{
    __shared__ unsigned long long number, value[2];
    if (threadIdx.x == 0) {
        number = *p.calls + 1;
        *p.calls = number;
        unsigned char bytes[16] = {0};
        for (uint32_t b = 0; b < p.bytes; ++b)
            bytes[b] = static_cast<const unsigned char *>(p.send)[b];
        value[0] = *reinterpret_cast<const unsigned long long *>(bytes);
        value[1] = *reinterpret_cast<const unsigned long long *>(bytes + 8);
    }
    __syncthreads();
    const uint32_t set = (uint32_t)(number % 2) * p.ranks;
    for (uint32_t k = threadIdx.x; k < p.ranks; k += blockDim.x) {
        dl_peer_slot *slot = p.peers[k] + set + p.rank;
        dl_peer_store_relaxed(&slot->value[0], value[0]);
        dl_peer_store_relaxed(&slot->value[1], value[1]);
        dl_peer_store_release(&slot->number, number);
    }
    for (uint32_t k = threadIdx.x; k < p.ranks; k += blockDim.x) {
        dl_peer_slot *slot = p.own + set + k;
        unsigned backoff = 32;
        while (dl_peer_load_acquire(&slot->number) != number) {
            __nanosleep(backoff);
            backoff = backoff < 1024 ? backoff * 2 : backoff;
        }
        unsigned long long got[2] = {dl_peer_load_relaxed(&slot->value[0]), dl_peer_load_relaxed(&slot->value[1])};
        unsigned char *to = static_cast<unsigned char *>(p.recv) + (size_t)k * p.bytes;
        for (uint32_t b = 0; b < p.bytes; ++b)
            to[b] = reinterpret_cast<const unsigned char *>(got)[b];
    }
}

extern "C" int dl_gpu_peers_launch(const dl_peers_params *params, cudaStream_t stream)
{
    const uint32_t threads = params->ranks < DL_PEERS_THREADS ? (params->ranks + 31) / 32 * 32 : DL_PEERS_THREADS;
    dl_peers_all_gather<<<1, threads, 0, stream>>>(*params);
    return (int)cudaGetLastError();
}
