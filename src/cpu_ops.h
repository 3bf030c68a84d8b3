/*
 * cpu_ops.h: the CPU backend's loops for one element type and operator: combine (on value
 * bits, for the look-back), reduce a tile, scan a tile from a prefix.
 */
#ifndef DLSCAN_CPU_OPS_H
#define DLSCAN_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_lookback.h"
#include "dlscan.h"

typedef struct dl_cpu_ops {
    dl_combine_fn combine; /* on the low 64 bits (dl_bits.lo) */
    /* Reduce-by-key's segmented combine on (heads in lo, run aggregate in hi): the later
     * side's aggregate where it has heads, else both combined. */
    dl_combine_fn segmented;
    /* The reduction of n items; a fixed order, so float results repeat exactly. */
    uint64_t (*reduce)(const void *in, size_t n, uint64_t identity_bits);
    /* out[j] = prefix op in[0] op ... op in[j] (inclusive) or prefix op ... op in[j-1]
     * (exclusive); out may equal in. */
    void (*scan)(const void *in, void *out, size_t n, uint64_t prefix_bits, int exclusive);
} dl_cpu_ops;

/* NULL for values outside the enums. */
const dl_cpu_ops *dl_cpu_ops_for(dlscan_type type, dlscan_op op);

#endif /* DLSCAN_CPU_OPS_H */
