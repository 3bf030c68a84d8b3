/*
 * cpu_compact.h: what cpu_backend.c calls in cpu_compact.c.
 */
#ifndef DLSCAN_CPU_COMPACT_H
#define DLSCAN_CPU_COMPACT_H

#include "internal.h"

/* Compaction on a CPU handle (cpu_compact.c). */
dlscan_status dl_cpu_compact(dlscan_handle_t h, const dl_compact_request *r);

#endif /* DLSCAN_CPU_COMPACT_H */
