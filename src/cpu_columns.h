/*
 * cpu_columns.h: what cpu_backend.c calls in cpu_columns.c.
 */
#ifndef DLSCAN_CPU_COLUMNS_H
#define DLSCAN_CPU_COLUMNS_H

#include "internal.h"

/* Scans along an axis of stride > 1 on a CPU handle (cpu_columns.c), from seed_bits (the init
 * as an accumulator value), with their totals where r->totals is set. */
dlscan_status dl_cpu_column_scan(dlscan_handle_t h, const dl_scan_request *r, uint64_t seed_bits);

#endif /* DLSCAN_CPU_COLUMNS_H */
