/*
 * probe.cuh: the kernels' test probe, the one place where tests reach into them. The testing
 * build of the library (DL_PROBING, policy.h) pauses inside tiles, so that look-backs meet X,
 * long runs of A and late P; counts look-back events; and starts the tile counter where a
 * test puts it, so that the counter's 32-bit wrap-around occurs. Its settings live in the
 * handle's control block (protocol.h), written by the host layer (src/gpu_backend.c). In the
 * release library every hook is empty: the kernels compile them away and never read those
 * fields.
 */
#ifndef DLSCAN_PROBE_CUH
#define DLSCAN_PROBE_CUH

#include <stdint.h>

#include "protocol.h"

template <bool ON> struct dl_probe_t;

/* Release: nothing to read, nothing to do. */
template <> struct dl_probe_t<false> {
    __device__ explicit dl_probe_t(const dl_control *) {}
    __device__ uint32_t ticket_base() const { return 0; }
    __device__ void pause(uint32_t, uint32_t) const {}
    __device__ bool counting() const { return false; }
    __device__ void count(int, unsigned long long) const {}
};

/* Testing: the settings, read once per block. */
template <> struct dl_probe_t<true> {
    dl_control *control;
    uint32_t delay_ns;
    bool count_stats;

    __device__ explicit dl_probe_t(dl_control *c)
        : control(c), delay_ns(*(volatile uint32_t *)&c->probe_delay_ns),
          count_stats(*(volatile uint32_t *)&c->probe_count_stats != 0)
    {
    }

    /* Where the tile counter starts this call; it changes only between calls, while the GPU
     * is idle. */
    __device__ uint32_t ticket_base() const
    {
        uint32_t base;
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(base) : "l"(&control->probe_ticket_base));
        return base;
    }

    /* A pause of 0 .. delay_ns nanoseconds, picked by hashing the tile and `salt`. */
    __device__ void pause(uint32_t tile, uint32_t salt) const
    {
        if (!delay_ns)
            return;
        uint32_t h = (tile + 1) * 2654435761u ^ salt * 40503u;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        uint32_t ns = h % (delay_ns + 1);
        while (ns) {
            const uint32_t step = ns < 1000000u ? ns : 1000000u; /* __nanosleep's longest */
            __nanosleep(step);
            ns -= step;
        }
    }

    __device__ bool counting() const { return count_stats; }

    /* Adds `amount` to look-back counter `which` (enum dl_stat); one lane of a warp calls it. */
    __device__ void count(int which, unsigned long long amount) const
    {
        if (count_stats && amount)
            atomicAdd(control->stats + which, amount);
    }
};

using dl_probe = dl_probe_t<DL_PROBING>;

#endif /* DLSCAN_PROBE_CUH */
