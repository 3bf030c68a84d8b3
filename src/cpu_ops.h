/*
 * cpu_ops.h: the CPU backend's loops for one element type and operator: combine (on value
 * bits, for the look-back), reduce a tile, scan a tile from a prefix, step a row of scans along
 * columns; and the conversions of a scan whose input or output type is not its accumulator.
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
     * (exclusive); out may equal in. Returns prefix op in[0] op ... op in[n-1]. */
    uint64_t (*scan)(const void *in, void *out, size_t n, uint64_t prefix_bits, int exclusive);
    /* One step down n scans side by side (a row of a scan along columns): running[j] =
     * running[j] op in[j], and out[j] the running value after it (inclusive) or before it
     * (exclusive); out may equal in, running is apart from both. */
    void (*step)(const void *in, void *out, void *running, size_t n, int exclusive);
} dl_cpu_ops;

/* The loops of an accumulator type (dl_acc_type: one of the six 32- and 64-bit types); NULL
 * for values outside the enums. */
const dl_cpu_ops *dl_cpu_ops_for(dlscan_type type, dlscan_op op);

/* n items of type `from` as values of `acc`, converted as C converts them (float16 and
 * bfloat16 exactly to float32). */
void dl_cpu_widen(dlscan_type from, dlscan_type acc, const void *in, void *out, size_t n);

/* n values of `acc` rounded to type `to`: integers keep their low bytes, float32 goes to
 * float16 or bfloat16 to nearest, ties to even. */
void dl_cpu_narrow(dlscan_type acc, dlscan_type to, const void *in, void *out, size_t n);

/* One value of `acc` given as bits (the low 32 for a 32-bit type) rounded to type `to`, as
 * dl_cpu_narrow rounds it; `to` may be `acc` itself (the value stored as it is). */
void dl_cpu_narrow_bits(dlscan_type acc, dlscan_type to, uint64_t bits, void *out);

#endif /* DLSCAN_CPU_OPS_H */
