/*
 * cpu_engine.c: the CPU backend's engine: the GPU's single-pass protocol on host threads, for
 * every kind of call.
 *
 * Threads play the thread blocks. The calling thread and up to threads-1 helpers take
 * tiles from an atomic counter, publish descriptors with C11 atomics (release/acquire)
 * and look back over windows of predecessors with dl_cpu_lookback() (cpu_lookback.h), on
 * device/protocol.h, the file the GPU kernels include for the same protocol. The worker
 * that draws the call's last ticket resets the counter and moves the epoch on, as the
 * GPU's block with the last ticket does. A call returns when it is complete. This file
 * holds the workers, the protocol step each kind of tile takes and a scan's job; the tiles
 * themselves are cpu_backend.c's (the scan's), cpu_segment.c's and cpu_compact.c's, and
 * cpu_columns.c's units of work take tickets as tiles do.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "cpu_engine.h"

/* The probe's pause (DL_PROBING builds only, policy.h): a random 0 .. job->delay_us
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

void dl_cpu_clear_descriptors(dl_cpu_state *s)
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
    if (!job->tiles)
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
