/*
 * cpu_segment.h: what cpu_backend.c calls in cpu_segment.c.
 */
#ifndef DLSCAN_CPU_SEGMENT_H
#define DLSCAN_CPU_SEGMENT_H

#include "internal.h"

/* The offsets of r, where it has them, read as the call runs: rising, and at most n. */
dlscan_status dl_cpu_check_offsets(dlscan_handle_t h, const dl_scan_request *r);

/* Segmented scans on a CPU handle (cpu_segment.c), by keys, offsets (checked) or along rows (an
 * axis of stride 1, with its totals). */
dlscan_status dl_cpu_segmented_scan(dlscan_handle_t h, const dl_scan_request *r, uint64_t seed_bits);

#endif /* DLSCAN_CPU_SEGMENT_H */
