/*
 * cpu_backend.c: the CPU backend: the GPU's single-pass protocol on host threads.
 *
 * Threads play the thread blocks. The calling thread and up to threads-1 helpers take
 * tiles from an atomic counter, publish descriptors with C11 atomics (release/acquire)
 * and look back over windows of predecessors with dl_cpu_lookback() (cpu_lookback.h), on
 * device/protocol.h, the file the GPU kernels include for the same protocol. The worker
 * that draws the call's last ticket resets the counter and moves the epoch on, as the
 * GPU's block with the last ticket does. A call returns when it is complete. This file
 * holds the workers and the scan's tiles; cpu_compact.c the compaction's.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_backend.h"

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
} dl_cpu_state;

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

/* The probe's pause (DL_PROBING builds only, config.h): a random 0 .. job->delay_us
 * microseconds, or, held, exactly 50 times that. */
static void dl_cpu_probe_pause(dl_cpu_worker *w, int held)
{
    if (!DL_PROBING || !w->job->delay_us)
        return;
    w->random ^= w->random << 13; /* xorshift32 */
    w->random ^= w->random >> 17;
    w->random ^= w->random << 5;
    const long long us = held ? 50 * w->job->delay_us
                              : (long long)(w->random % (uint32_t)(w->job->delay_us + 1));
    const struct timespec pause = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&pause, NULL);
}

/* Draws a ticket; the last of the call's tiles + workers tickets resets the counter and
 * moves the epoch on (protocol.h, "Tickets"). */
static uint32_t dl_cpu_draw_ticket(dl_cpu_job *job)
{
    dl_cpu_state *s = job->state;
    const uint32_t tile = dl_ticket_tile(
        atomic_fetch_add_explicit(&s->tiles_taken, 1, memory_order_acq_rel), job->ticket_base);
    const uint32_t epoch = job->lookback.epoch;
    if (dl_is_last_ticket(tile, job->tiles + job->workers) && !dl_epoch_wraps(epoch)) {
        atomic_store_explicit(&s->tiles_taken, job->ticket_base, memory_order_relaxed);
        atomic_store_explicit(&s->epoch, dl_epoch_next(epoch), memory_order_relaxed);
    }
    return tile;
}

/* Every descriptor to zero: epoch 0, never used, so each reads as X. */
static void dl_cpu_clear_descriptors(dl_cpu_state *s)
{
    for (size_t i = 0; i < s->descriptor_words; ++i)
        atomic_store_explicit(&s->descriptors[i], 0, memory_order_relaxed);
}

/* When the epoch wraps, the last worker to finish clears the descriptors and starts over. */
static void dl_cpu_finish(dl_cpu_job *job)
{
    dl_cpu_state *s = job->state;
    const uint32_t epoch = job->lookback.epoch;
    if (!dl_epoch_wraps(epoch))
        return;
    const uint32_t done_before = atomic_fetch_add_explicit(&s->workers_done, 1, memory_order_acq_rel);
    if (!dl_is_last_worker(done_before, job->workers))
        return;
    dl_cpu_clear_descriptors(s);
    atomic_store_explicit(&s->tiles_taken, job->ticket_base, memory_order_relaxed);
    atomic_store_explicit(&s->workers_done, 0, memory_order_relaxed);
    atomic_store_explicit(&s->epoch, dl_epoch_next(epoch), memory_order_relaxed);
}

dl_bits dl_cpu_tile_prefix(dl_cpu_worker *w, uint32_t tile, dl_bits aggregate)
{
    const dl_cpu_lookback_ctx *lookback = &w->job->lookback;
    if (tile == 0) {
        dl_cpu_publish(lookback, 0, DL_STATUS_P, lookback->combine(w->job->seed, aggregate));
        return w->job->seed;
    }
    dl_cpu_publish(lookback, tile, DL_STATUS_A, aggregate);
    dl_cpu_probe_pause(w, 0);
    const dl_bits prefix = dl_cpu_lookback(lookback, tile);
    dl_cpu_publish(lookback, tile, DL_STATUS_P, lookback->combine(prefix, aggregate));
    dl_cpu_probe_pause(w, 0);
    return prefix;
}

dl_bits dl_cpu_segment_prefix(dl_cpu_worker *w, uint32_t tile, dl_bits value, int has_head,
                              int needs_prefix)
{
    const dl_cpu_lookback_ctx *lookback = &w->job->lookback;
    dl_cpu_publish(lookback, tile, has_head ? DL_STATUS_P : DL_STATUS_A, value);
    if (!needs_prefix)
        return lookback->identity;
    dl_cpu_probe_pause(w, 0);
    const dl_bits prefix = dl_cpu_lookback(lookback, tile);
    if (!has_head)
        dl_cpu_publish(lookback, tile, DL_STATUS_P, lookback->combine(prefix, value));
    dl_cpu_probe_pause(w, 0);
    return prefix;
}

/* One worker: tiles from the counter until none are left. */
static void *dl_cpu_work(void *argument)
{
    dl_cpu_worker *w = argument;
    dl_cpu_job *job = w->job;
    while (!atomic_load_explicit(&job->go, memory_order_acquire))
        sched_yield();
    for (;;) {
        const uint32_t tile = dl_cpu_draw_ticket(job);
        if (tile >= job->tiles)
            break;
        /* One tile in 512 holds its aggregate back: up to 511 successors pile up as A. */
        dl_cpu_probe_pause(w, tile % 512 == 1);
        job->work_tile(w, tile);
    }
    dl_cpu_finish(job);
    return NULL;
}

void dl_cpu_run(dlscan_handle_t h, dl_cpu_job *job)
{
    dl_cpu_state *s = h->backend_state;
    job->state = s;
    job->tile_items = s->tile_items;
    job->tiles = (uint32_t)dl_tiles(job->n, s->tile_items);
    job->ticket_base = DL_PROBING ? atomic_load_explicit(&s->ticket_base, memory_order_relaxed) : 0;
    job->workers = job->tiles < (uint32_t)s->threads ? job->tiles : (uint32_t)s->threads;
    job->delay_us = h->test_delay_us;
    job->lookback.descriptors = s->descriptors;
    job->lookback.epoch = atomic_load_explicit(&s->epoch, memory_order_relaxed);
    job->lookback.stats = DL_PROBING && h->count_stats ? s->stats : NULL;
    for (uint32_t i = 0; i < job->workers; ++i) {
        dl_cpu_worker *w = &s->workers[i];
        w->job = job;
        w->random = 2654435761u * (i + 1) ^ job->lookback.epoch;
        w->started = 0;
    }
    /* Helpers first, then the calling thread works as worker 0. A helper that cannot start
     * is left out of the count before any ticket is drawn: the others take its tiles. */
    atomic_init(&job->go, 0);
    uint32_t started = 1;
    for (uint32_t i = 1; i < job->workers; ++i) {
        dl_cpu_worker *w = &s->workers[started];
        w->started = pthread_create(&w->thread, NULL, dl_cpu_work, w) == 0;
        started += (uint32_t)w->started;
    }
    job->workers = started;
    atomic_store_explicit(&job->go, 1, memory_order_release);
    dl_cpu_work(&s->workers[0]);
    for (uint32_t i = 1; i < job->workers; ++i)
        if (s->workers[i].started)
            pthread_join(s->workers[i].thread, NULL);
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

/* Writes one value of r->type to r->total: the accumulator's `acc_bits` rounded to it. */
static void dl_cpu_write_total(const dl_scan_request *r, uint64_t acc_bits)
{
    if (r->type == r->acc_type)
        memcpy(r->total, &acc_bits, dl_type_size(r->type)); /* little-endian: the low bytes */
    else
        dl_cpu_narrow(r->acc_type, r->type, &acc_bits, r->total, 1);
}

void dl_cpu_scan_job(dl_cpu_job *job, const dl_scan_request *r, uint64_t seed_bits, dl_cpu_tile_fn work_tile)
{
    *job = (dl_cpu_job){
        .work_tile = work_tile,
        .ops = dl_cpu_ops_for(r->acc_type, r->op),
        .in = r->in,
        .out = r->out,
        .n = r->n,
        .item_size = dl_type_size(r->type),
        .in_size = dl_type_size(r->in_type),
        .type = r->type,
        .in_type = r->in_type,
        .acc_type = r->acc_type,
        .seed = {seed_bits, 0},
        .exclusive = r->exclusive,
    };
    job->lookback.words = dl_words_per_tile(r->type);
    job->lookback.combine = job->ops->combine;
    job->lookback.identity = (dl_bits){dl_identity_bits(r->acc_type, r->op), 0};
}

static dlscan_status dl_cpu_scan(dlscan_handle_t h, const dl_scan_request *r)
{
    /* The call runs now: d_init is read now. */
    const uint64_t seed_bits =
        dl_acc_bits(r->type, r->init ? dl_bits_read(r->init, r->type) : r->init_bits);
    if (r->keys || r->offsets)
        return dl_cpu_segmented_scan(h, r, seed_bits);
    if (r->n == 0) {
        dl_cpu_write_total(r, seed_bits);
        return DLSCAN_SUCCESS;
    }
    dl_cpu_job job;
    dl_cpu_scan_job(&job, r, seed_bits, dl_cpu_scan_tile);
    dl_cpu_run(h, &job);
    if (r->total)
        dl_cpu_write_total(r, job.total_bits);
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
