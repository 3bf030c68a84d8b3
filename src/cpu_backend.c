/*
 * cpu_backend.c: the CPU backend: the GPU's single-pass protocol on host threads (run by
 * cpu_engine.c). This file holds the backend's table and entry points, the handle's state
 * (threads, scratch, descriptors) and the scan's tiles; a segmented scan and a scan along rows
 * go to cpu_segment.c, a scan along columns to cpu_columns.c, compaction to cpu_compact.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>

#include "cpu_columns.h"
#include "cpu_compact.h"
#include "cpu_engine.h"
#include "cpu_segment.h"

static dl_cpu_state *dl_cpu(dlscan_handle_t h) { return (dl_cpu_state *)h->backend_state; }

static size_t dl_cpu_tile_items(dlscan_handle_t h, dlscan_type type)
{
    (void)type;
    return dl_cpu(h)->tile_items;
}

static size_t dl_cpu_compact_tile_items(dlscan_handle_t h) { return dl_cpu(h)->tile_items; }

/* Each worker's scratch holds a tile's items and values (compaction), 8 bytes each. */
static dlscan_status dl_cpu_set_tile_items(dlscan_handle_t h, size_t items)
{
    dl_cpu_state *s = dl_cpu(h);
    for (int i = 0; i < s->threads; ++i) {
        void *grown = realloc(s->workers[i].scratch, 2 * items * sizeof(uint64_t));
        if (!grown)
            return dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY, "scratch for tiles of %zu items", items);
        s->workers[i].scratch = grown;
    }
    s->tile_items = items;
    return DLSCAN_SUCCESS;
}

static dlscan_status dl_cpu_check_range(dlscan_handle_t h, const void *p, size_t bytes,
                                        const char *what)
{
    (void)bytes;
    if (dl_is_device_pointer(p))
        return dl_fail(h, DLSCAN_ERROR_NOT_DEVICE_MEMORY,
                       "%s = %p is device memory; a CPU handle scans host memory", what, p);
    return DLSCAN_SUCCESS;
}

static dlscan_status dl_cpu_reserve(dlscan_handle_t h, size_t tiles, int words_per_tile,
                                    cudaStream_t stream)
{
    (void)stream;
    dl_cpu_state *s = dl_cpu(h);
    const size_t needed = tiles * (size_t)words_per_tile;
    if (needed <= s->descriptor_words)
        return DLSCAN_SUCCESS;
    const size_t words = needed + needed / 2;
    /* Zeroed storage: epoch 0, never used, so every descriptor reads as X. */
    _Atomic(dl_word) *grown = calloc(words, sizeof *grown);
    if (!grown)
        return dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY,
                       "allocating descriptor storage for %zu tiles failed", tiles);
    free(s->descriptors);
    s->descriptors = grown;
    s->descriptor_words = words;
    return DLSCAN_SUCCESS;
}

/* A scan tile: reduce, the protocol, then the scan from the prefix (in place: the tile
 * reads and writes only its own items). A scan whose input or output type is not its
 * accumulator's converts the tile's items into the worker's scratch first, and its outputs
 * from there. The last tile keeps the total. */
static void dl_cpu_scan_tile(dl_cpu_worker *w, uint32_t tile)
{
    dl_cpu_job *job = w->job;
    const size_t first = (size_t)tile * job->tile_items;
    const size_t count = job->n - first < job->tile_items ? job->n - first : job->tile_items;
    const void *in = job->in + first * job->in_size;
    void *out = job->out + first * job->item_size;
    const int converts = job->in_type != job->acc_type || job->type != job->acc_type;
    if (converts) {
        dl_cpu_widen(job->in_type, job->acc_type, in, w->scratch, count);
        in = w->scratch;
    }
    const dl_bits aggregate = {job->ops->reduce(in, count, job->lookback.identity.lo), 0};
    const dl_bits prefix = dl_cpu_tile_prefix(w, tile, aggregate);
    const uint64_t total = job->ops->scan(in, converts ? w->scratch : out, count, prefix.lo,
                                          job->exclusive);
    if (converts)
        dl_cpu_narrow(job->acc_type, job->type, w->scratch, out, count);
    if (tile == job->tiles - 1)
        job->total_bits = total;
}

/* A reduction's tile (dlscan_reduce): reduce, the protocol; the last tile keeps the total. */
static void dl_cpu_reduce_tile(dl_cpu_worker *w, uint32_t tile)
{
    dl_cpu_job *job = w->job;
    const size_t first = (size_t)tile * job->tile_items;
    const size_t count = job->n - first < job->tile_items ? job->n - first : job->tile_items;
    const void *in = job->in + first * job->in_size;
    if (job->in_type != job->acc_type) {
        dl_cpu_widen(job->in_type, job->acc_type, in, w->scratch, count);
        in = w->scratch;
    }
    const dl_bits aggregate = {job->ops->reduce(in, count, job->lookback.identity.lo), 0};
    const dl_bits prefix = dl_cpu_tile_prefix(w, tile, aggregate);
    if (tile == job->tiles - 1)
        job->total_bits = job->ops->combine(prefix, aggregate).lo;
}

/* Writes one value of r->type to r->total: the accumulator's `acc_bits` rounded to it. */
static void dl_cpu_write_total(const dl_scan_request *r, uint64_t acc_bits)
{
    dl_cpu_narrow_bits(r->acc_type, r->type, acc_bits, r->total);
}

static dlscan_status dl_cpu_scan(dlscan_handle_t h, const dl_scan_request *r)
{
    const dlscan_status status = dl_cpu_check_offsets(h, r);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (r->custom)
        return dl_cpu_custom_scan(h, r);
    /* The call runs now: d_init is read now. */
    const uint64_t seed_bits =
        dl_acc_bits(r->type, r->init ? dl_bits_read(r->init, r->type) : r->init_bits);
    /* Rows along an axis (stride 1) are segments of axis_length items. */
    if (r->keys || r->offsets || (r->axis_length && r->axis_stride == 1))
        return dl_cpu_segmented_scan(h, r, seed_bits);
    if (r->axis_length)
        return dl_cpu_column_scan(h, r, seed_bits);
    if (r->n == 0) {
        dl_cpu_write_total(r, seed_bits);
        return DLSCAN_SUCCESS;
    }
    dl_cpu_job job;
    dl_cpu_scan_job(&job, r, seed_bits, r->out ? dl_cpu_scan_tile : dl_cpu_reduce_tile);
    dl_cpu_run(h, &job);
    if (r->total)
        dl_cpu_write_total(r, job.total_bits);
    return DLSCAN_SUCCESS;
}

/* The handle's scratch for a call's few values (a scan across ranks), grown as needed. */
static dlscan_status dl_cpu_scratch(dlscan_handle_t h, size_t bytes, cudaStream_t stream, void **p)
{
    (void)stream;
    dl_cpu_state *s = dl_cpu(h);
    if (bytes > s->scratch_bytes) {
        void *grown = realloc(s->scratch, bytes);
        if (!grown)
            return dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY, "scratch of %zu bytes", bytes);
        s->scratch = grown;
        s->scratch_bytes = bytes;
    }
    *p = s->scratch;
    return DLSCAN_SUCCESS;
}

static dlscan_status dl_cpu_read_stats(dlscan_handle_t h, unsigned long long stats[DL_STAT_COUNT])
{
    for (int i = 0; i < DL_STAT_COUNT; ++i)
        stats[i] = atomic_load_explicit(&dl_cpu(h)->stats[i], memory_order_relaxed);
    return DLSCAN_SUCCESS;
}

static dlscan_status dl_cpu_reset_stats(dlscan_handle_t h)
{
    for (int i = 0; i < DL_STAT_COUNT; ++i)
        atomic_store_explicit(&dl_cpu(h)->stats[i], 0, memory_order_relaxed);
    return DLSCAN_SUCCESS;
}

/* Clears the descriptors too: those of an earlier call that used `epoch` must not pass for
 * the next call's. */
static dlscan_status dl_cpu_set_epoch(dlscan_handle_t h, uint32_t epoch)
{
    dl_cpu_state *s = dl_cpu(h);
    dl_cpu_clear_descriptors(s);
    atomic_store_explicit(&s->epoch, epoch, memory_order_relaxed);
    return DLSCAN_SUCCESS;
}

static dlscan_status dl_cpu_set_ticket_base(dlscan_handle_t h, uint32_t base)
{
    atomic_store_explicit(&dl_cpu(h)->ticket_base, base, memory_order_relaxed);
    atomic_store_explicit(&dl_cpu(h)->tiles_taken, base, memory_order_relaxed);
    return DLSCAN_SUCCESS;
}

static void dl_cpu_destroy(dlscan_handle_t h)
{
    dl_cpu_state *s = dl_cpu(h);
    for (int i = 0; i < s->threads; ++i)
        free(s->workers[i].scratch);
    free(s->descriptors);
    free(s->scratch);
    free(s->workers);
    free(s);
}

static const dl_backend dl_cpu_backend = {
    .name = "cpu",
    .tile_items = dl_cpu_tile_items,
    .compact_tile_items = dl_cpu_compact_tile_items,
    .segment_tile_items = dl_cpu_tile_items,
    .check_range = dl_cpu_check_range,
    .reserve = dl_cpu_reserve,
    .scan = dl_cpu_scan,
    .scratch = dl_cpu_scratch,
    .compact = dl_cpu_compact,
    .read_stats = dl_cpu_read_stats,
    .reset_stats = dl_cpu_reset_stats,
    .set_probe = NULL, /* each call reads the handle's settings */
    .set_epoch = dl_cpu_set_epoch,
    .set_ticket_base = dl_cpu_set_ticket_base,
    .set_tile_items = dl_cpu_set_tile_items,
    .destroy = dl_cpu_destroy,
};

dlscan_status dl_cpu_backend_init(dlscan_handle_t h, int threads)
{
    if (threads == 0) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int)cores : 1;
    }
    dl_cpu_state *s = calloc(1, sizeof *s);
    dl_cpu_worker *workers = calloc((size_t)threads, sizeof *workers);
    if (!s || !workers) {
        free(s);
        free(workers);
        return DLSCAN_ERROR_OUT_OF_MEMORY;
    }
    s->threads = threads;
    s->workers = workers;
    h->backend = &dl_cpu_backend;
    h->backend_state = s;
    if (dl_cpu_set_tile_items(h, DL_CPU_TILE_ITEMS) != DLSCAN_SUCCESS) {
        dl_cpu_destroy(h);
        return DLSCAN_ERROR_OUT_OF_MEMORY;
    }
    atomic_init(&s->tiles_taken, 0);
    atomic_init(&s->ticket_base, 0);
    atomic_init(&s->workers_done, 0);
    atomic_init(&s->epoch, DL_EPOCH_FIRST);
    for (int i = 0; i < DL_STAT_COUNT; ++i)
        atomic_init(&s->stats[i], 0);
    return DLSCAN_SUCCESS;
}
