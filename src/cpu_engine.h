/*
 * cpu_engine.h: what the CPU backend's files share, from cpu_engine.c: the handle's state, one
 * call (a job) as its worker threads see it, running a job, and the protocol step every kind of
 * tile takes (publish the aggregate, look back, publish the inclusive prefix). The tiles are
 * cpu_backend.c's (the scan's), cpu_segment.c's (segmented scans and rows along an axis) and
 * cpu_compact.c's; cpu_columns.c's units of work (scans along columns) run on the same workers
 * without the protocol.
 */
#ifndef DLSCAN_CPU_ENGINE_H
#define DLSCAN_CPU_ENGINE_H

#include <pthread.h>

#include "cpu_ops.h"
#include "internal.h"

/* Items per tile unless DLSCAN_OPTION_CPU_TILE_ITEMS says otherwise: large enough that the
 * protocol's work per tile stays small next to the tile's (bench/NOTES.md, "CPU backend"). */
#define DL_CPU_TILE_ITEMS 65536

typedef struct dl_cpu_job dl_cpu_job;

typedef struct dl_cpu_worker {
    dl_cpu_job *job;
    uint32_t random; /* for the probe's pauses */
    pthread_t thread;
    int started;
    void *scratch;   /* 2 x tile items x 8 bytes: a tile's input, copied (compaction), or its
                        items as accumulator values (a scan whose types are not its
                        accumulator's) */
} dl_cpu_worker;

/* A tile's work: everything from its items to its outputs, protocol included. */
typedef void (*dl_cpu_tile_fn)(dl_cpu_worker *w, uint32_t tile);

/* One call, as its workers see it. */
struct dl_cpu_job {
    struct dl_cpu_state *state;
    dl_cpu_tile_fn work_tile;
    const dl_cpu_ops *ops;    /* the scan's, or reduce-by-key's values' */
    const char *in;           /* items (keys) */
    const char *in2;          /* flags or values (compaction) */
    char *out;
    char *out2;               /* run lengths or run values (compaction) */
    size_t *num_out;          /* the count (compaction) */
    size_t n;
    size_t tile_items;
    size_t item_size;         /* items (keys); a scan's output items */
    size_t in_size;           /* a scan's input items */
    size_t value_size;        /* reduce-by-key */
    dlscan_type type;         /* items (keys); a scan's output type */
    dlscan_type in_type;      /* a scan's input type */
    dlscan_type acc_type;     /* a scan's accumulator (dl_acc_type) */
    uint64_t total_bits;      /* a scan's total, as acc_type: written by the last tile */
    int kind;                 /* dl_compact_kind (compaction) */
    int predicate;            /* select_if */
    uint64_t operand_bits;    /* select_if */
    uint32_t tiles;           /* dl_cpu_run counts n's tiles, unless the job set it (columns:
                                 its units of work) */
    uint32_t ticket_base;
    uint32_t workers;         /* fixed before `go` opens: helpers that failed to start don't count */
    _Atomic int go;           /* workers wait for it, so the ticket count is known before any draw */
    dl_bits seed;
    int exclusive;
    const char *keys;         /* a segmented scan's keys (key_size bytes each), or NULL */
    size_t key_size;
    const size_t *offsets;    /* a segmented scan's num_segments + 1 offsets, or NULL */
    size_t num_segments;
    size_t axis_length;       /* a scan along an axis: items in each scan, or 0 */
    size_t axis_stride;       /* items between two consecutive items of a scan */
    size_t unit_scans;        /* columns: scans in each unit of work */
    char *totals;             /* a scan along an axis's totals (n / axis_length), or NULL */
    long long delay_us;       /* the probe's pauses (DL_PROBING builds; else 0) */
    dl_cpu_lookback_ctx lookback;
};

/* A CPU handle's state (its backend_state). */
typedef struct dl_cpu_state {
    int threads;
    size_t tile_items;
    dl_cpu_worker *workers;  /* `threads` of them, with their scratch, allocated once */
    _Atomic(dl_word) *descriptors;
    size_t descriptor_words;
    _Atomic uint32_t tiles_taken;  /* the tile counter, from ticket_base on */
    _Atomic uint32_t ticket_base;  /* where the counter starts each call (protocol.h, "Tickets") */
    _Atomic uint32_t workers_done; /* workers of the running call that finished */
    _Atomic uint32_t epoch;
    _Atomic(unsigned long long) stats[DL_STAT_COUNT];
    void *scratch;           /* a call's few values (a scan across ranks), and its size */
    size_t scratch_bytes;
} dl_cpu_state;

/* Every descriptor to zero: epoch 0, never used, so each reads as X. */
void dl_cpu_clear_descriptors(dl_cpu_state *s);

/* Runs the job on the calling thread and the handle's helper threads; returns when every
 * tile is done. The job's lookback context (epoch, descriptors, stats) is filled in here, and
 * its tile count where the job left it 0. */
void dl_cpu_run(dlscan_handle_t h, dl_cpu_job *job);

/* A scan's job (the request's items, types, operator and init as seed_bits, the accumulator's
 * look-back), run tile by tile by work_tile. */
void dl_cpu_scan_job(dl_cpu_job *job, const dl_scan_request *r, uint64_t seed_bits, dl_cpu_tile_fn work_tile);

/* Steps 2-4 of the protocol (device/protocol.h) for `tile` with `aggregate`: publish A (tile 0:
 * P), look back, publish P. Returns the tile's exclusive prefix (tile 0: the seed). */
dl_bits dl_cpu_tile_prefix(dl_cpu_worker *w, uint32_t tile, dl_bits aggregate);

/* The same steps for a tile of a segmented scan, whose value is the open segment's at the
 * tile's end (device/protocol.h, "Segments"): a tile that holds a segment's first item publishes
 * it as P at once; a tile without one publishes A, and P after its look-back. The look-back runs
 * only where `needs_prefix` (the tile's first item is in a segment begun before it). Returns the
 * tile's exclusive prefix, or the identity without a look-back. */
dl_bits dl_cpu_segment_prefix(dl_cpu_worker *w, uint32_t tile, dl_bits value, int has_head,
                              int needs_prefix);

#endif /* DLSCAN_CPU_ENGINE_H */
