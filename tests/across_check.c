/*
 * across_check.c: reductions and scans across ranks, for any backend (across_check.h).
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "across_check.h"
#include "check.h"
#include "compact_check.h"

#define GUARD 64

/* A random init: an input item converted to out_type (its bits, the value's low bytes). */
static uint64_t random_init(dlscan_type in_type, dlscan_type out_type, uint64_t *rng)
{
    unsigned char item[8];
    test_fill_random(in_type, TEST_VALUES_UNIFORM, item, 1, rng);
    return test_convert_item(in_type, out_type, item);
}

static void *alloc_poisoned(const test_memory *m, size_t bytes)
{
    void *p = m->alloc(bytes + GUARD, m->context);
    CHECK(p, "allocating %zu bytes", bytes + GUARD);
    m->fill(p, TEST_POISON_BYTE, bytes + GUARD, m->context);
    return p;
}

/* Expects `bytes` of host memory at p to be poison. */
static int poisoned(const unsigned char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; ++i)
        if (p[i] != TEST_POISON_BYTE)
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- reductions */

static void reduce_case(dlscan_handle_t h, const test_memory *m, const pair_case *c, size_t tile,
                        uint64_t *rng)
{
    const size_t in_size = test_type_size(c->in_type), size = test_type_size(c->out_type);
    unsigned char *input = malloc(c->n * in_size + 1), total[8 + GUARD];
    CHECK(input, "host memory");
    test_fill_random(c->in_type, c->values, input, c->n, rng);
    const uint64_t init = random_init(c->in_type, c->out_type, rng);
    void *d_in = m->alloc(c->n * in_size + 1, m->context), *d_total = alloc_poisoned(m, size);
    CHECK(d_in, "device input");
    m->upload(d_in, input, c->n * in_size, m->context);
    const dlscan_status status = dlscan_reduce(h, d_in, d_total, c->n, c->in_type, c->out_type, c->op,
                                               c->init ? &init : NULL, m->stream);
    char what[160], message[256] = "";
    test_describe_pair(c, what, sizeof what);
    CHECK(status == DLSCAN_SUCCESS, "reduce %s: %s (%s)", what, dlscan_status_string(status),
          dlscan_last_error(h));
    m->wait(m->context);
    m->download(total, d_total, size + GUARD, m->context);
    EXPECT(poisoned(total + size, GUARD), "reduce %s: bytes past d_total written", what);
    EXPECT(scan_check_pair_output(c, tile, 0, input, c->init ? &init : NULL, NULL, total, message,
                                  sizeof message),
           "reduce %s: %s", what, message);
    m->release(d_in, m->context);
    m->release(d_total, m->context);
    free(input);
}

void across_check_reduce(dlscan_handle_t h, const test_memory *m, dlscan_type in_type, size_t max_n,
                         uint64_t *rng)
{
    for (int out = 0; out < TEST_TYPE_COUNT; ++out) {
        const dlscan_type out_type = (dlscan_type)out;
        if (!test_pair_supported(in_type, out_type))
            continue;
        size_t tile = 0, sizes[64];
        CHECK_OK(h, dlscan_tile_items(h, out_type, &tile));
        const int count = test_edge_sizes(tile, max_n, rng, sizes);
        for (int op = 0; op < 3; ++op)
            for (int i = 0; i < count; ++i) {
                if (op != DLSCAN_SUM && i % 3 != 0)
                    continue; /* min and max: a third of the sizes */
                const pair_case c = {
                    .in_type = in_type,
                    .out_type = out_type,
                    .op = (dlscan_op)op,
                    .init = i % 2 ? TEST_INIT_HOST : TEST_INIT_NONE,
                    .with_total = 1,
                    .n = sizes[i],
                    .values = test_type_is_float(in_type) && i % 4 == 3 ? TEST_VALUES_MIXED_MAGNITUDE
                                                                        : TEST_VALUES_UNIFORM,
                };
                reduce_case(h, m, &c, tile, rng);
            }
    }
}

/* ---------------------------------------------------------------- ranks as threads */

/* The most bytes a rank's value may have: a peer exchange's record (src/peers.c) fits. */
#define THREAD_VALUE_BYTES 256

typedef struct thread_exchange {
    pthread_barrier_t barrier;
    int ranks;
    int fail;                                  /* 1: every all-gather fails, giving a reason */
    int calls[ACROSS_MAX_RANKS];               /* all-gathers each rank made */
    unsigned char values[ACROSS_MAX_RANKS][THREAD_VALUE_BYTES]; /* each rank's value, in host memory */
} thread_exchange;

typedef struct rank_context {
    thread_exchange *x;
    int rank;
    const test_memory *memory;
} rank_context;

/* The rank's value to the host (its memory's copies wait for the work before them on its
 * stream), every rank's once all are there, back into recv. */
static int thread_all_gather(void *context, const void *send, void *recv, size_t bytes, int on_device,
                             cudaStream_t stream, char *why, size_t why_size)
{
    (void)on_device;
    (void)stream;
    rank_context *r = context;
    thread_exchange *x = r->x;
    ++x->calls[r->rank];
    if (x->fail || bytes > THREAD_VALUE_BYTES) {
        snprintf(why, why_size, x->fail ? "the test's exchange fails on purpose" : "%zu bytes", bytes);
        return 1;
    }
    const test_memory *m = r->memory;
    m->download(x->values[r->rank], send, bytes, m->context);
    pthread_barrier_wait(&x->barrier);
    unsigned char all[ACROSS_MAX_RANKS * THREAD_VALUE_BYTES];
    for (int k = 0; k < x->ranks; ++k)
        memcpy(all + (size_t)k * bytes, x->values[k], bytes);
    m->upload(recv, all, (size_t)x->ranks * bytes, m->context);
    pthread_barrier_wait(&x->barrier); /* no rank overwrites values before all have read them */
    return 0;
}

typedef struct rank_job {
    dlscan_handle_t h;
    const test_memory *memory;
    dlscan_scan_args args;
    dlscan_exchange exchange;
    rank_context context;
    dlscan_status status;
    char error[512];
} rank_job;

static void *rank_main(void *p)
{
    rank_job *job = p;
    job->status = dlscan_scan_across(job->h, &job->args, &job->exchange, job->memory->stream);
    snprintf(job->error, sizeof job->error, "%s", dlscan_last_error(job->h));
    if (job->status == DLSCAN_SUCCESS)
        job->memory->wait(job->memory->context);
    return NULL;
}

/* The ranks' lengths: empty, one item, around the tile, or random up to max_slice. */
static size_t slice_length(size_t tile, size_t max_slice, uint64_t *rng)
{
    const uint64_t r = test_random(rng);
    size_t n;
    switch (r % 6) {
    case 0: n = 0; break;
    case 1: n = 1; break;
    case 2: n = tile - 1 + (r >> 8) % 3; break;
    default: n = (size_t)((r >> 8) % (max_slice + 1));
    }
    return n < max_slice ? n : max_slice;
}

/* One scan across the ranks, each rank in a thread of its own, through `exchanges` (one a rank),
 * or this file's thread exchange where it is NULL. */
static void ranks_case(dlscan_handle_t *handles, const test_memory *memories, int ranks,
                       const pair_case *base, size_t tile, size_t max_slice, const dlscan_exchange *exchanges,
                       uint64_t *rng)
{
    const size_t in_size = test_type_size(base->in_type), size = test_type_size(base->out_type);
    size_t lengths[ACROSS_MAX_RANKS], firsts[ACROSS_MAX_RANKS], n = 0;
    for (int r = 0; r < ranks; ++r) {
        lengths[r] = slice_length(tile, max_slice, rng);
        firsts[r] = n;
        n += lengths[r];
    }
    pair_case c = *base;
    c.n = n;
    unsigned char *input = malloc(n * in_size + 1), *output = malloc(n * size + GUARD);
    CHECK(input && output, "host memory");
    test_fill_random(c.in_type, c.values, input, n, rng);
    const uint64_t init = random_init(c.in_type, c.out_type, rng);

    thread_exchange x = {.ranks = ranks};
    CHECK(pthread_barrier_init(&x.barrier, NULL, (unsigned)ranks) == 0, "barrier");
    rank_job jobs[ACROSS_MAX_RANKS];
    void *d_in[ACROSS_MAX_RANKS], *d_out[ACROSS_MAX_RANKS], *d_init[ACROSS_MAX_RANKS], *d_total[ACROSS_MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        const test_memory *m = &memories[r];
        d_in[r] = alloc_poisoned(m, lengths[r] * (in_size > size ? in_size : size));
        m->upload(d_in[r], input + firsts[r] * in_size, lengths[r] * in_size, m->context);
        d_out[r] = c.in_place ? d_in[r] : alloc_poisoned(m, lengths[r] * size);
        d_init[r] = NULL;
        if (c.init == TEST_INIT_DEVICE) {
            d_init[r] = m->alloc(size, m->context);
            m->upload(d_init[r], &init, size, m->context);
        }
        /* The total on rank 0 and on the last rank. */
        d_total[r] = c.with_total && (r == 0 || r == ranks - 1) ? alloc_poisoned(m, size) : NULL;
        dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
        a.d_in = d_in[r];
        a.d_out = d_out[r];
        a.n = lengths[r];
        a.in_type = c.in_type;
        a.out_type = c.out_type;
        a.op = c.op;
        a.exclusive = c.exclusive;
        a.init = c.init == TEST_INIT_HOST ? &init : NULL;
        a.d_init = d_init[r];
        a.d_total = d_total[r];
        jobs[r] = (rank_job){.h = handles[r], .memory = m, .args = a, .context = {&x, r, m}};
        jobs[r].exchange = exchanges ? exchanges[r] : (dlscan_exchange){r, ranks, thread_all_gather, &jobs[r].context, NULL};
    }
    pthread_t threads[ACROSS_MAX_RANKS];
    for (int r = 0; r < ranks; ++r)
        CHECK(pthread_create(&threads[r], NULL, rank_main, &jobs[r]) == 0, "starting rank %d", r);
    for (int r = 0; r < ranks; ++r)
        pthread_join(threads[r], NULL);
    pthread_barrier_destroy(&x.barrier);

    char what[160], message[256] = "";
    test_describe_pair(&c, what, sizeof what);
    for (int r = 0; r < ranks; ++r)
        CHECK(jobs[r].status == DLSCAN_SUCCESS, "across %d ranks, %s: rank %d: %s (%s)", ranks, what, r,
              dlscan_status_string(jobs[r].status), jobs[r].error);
    for (int r = 0; r < ranks; ++r) {
        const test_memory *m = &memories[r];
        unsigned char *at = output + firsts[r] * size, guard[GUARD];
        m->download(at, d_out[r], lengths[r] * size, m->context);
        if (!c.in_place) {
            m->download(guard, (unsigned char *)d_out[r] + lengths[r] * size, GUARD, m->context);
            EXPECT(poisoned(guard, GUARD), "across %d ranks, %s: rank %d wrote past its d_out", ranks, what, r);
        }
    }
    /* The slices' lengths as a chain of calls adds to the float tolerance. */
    const size_t extra = 2 * (size_t)ranks + 64;
    EXPECT(scan_check_pair_output(&c, tile, extra, input, c.init ? &init : NULL, output, NULL, message,
                                  sizeof message),
           "across %d ranks, %s: %s", ranks, what, message);
    for (int r = 0; r < ranks; ++r) {
        const test_memory *m = &memories[r];
        if (d_total[r]) {
            unsigned char total[8 + GUARD];
            m->download(total, d_total[r], size + GUARD, m->context);
            EXPECT(poisoned(total + size, GUARD), "across %d ranks, %s: rank %d wrote past d_total", ranks, what, r);
            EXPECT(scan_check_pair_output(&c, tile, extra, input, c.init ? &init : NULL, NULL, total, message,
                                          sizeof message),
                   "across %d ranks, %s: rank %d's total: %s", ranks, what, r, message);
            m->release(d_total[r], m->context);
        }
        if (!c.in_place)
            m->release(d_out[r], m->context);
        if (d_init[r])
            m->release(d_init[r], m->context);
        m->release(d_in[r], m->context);
    }
    free(input);
    free(output);
}

void across_check_scans(dlscan_handle_t *handles, const test_memory *memories, int ranks,
                        dlscan_type in_type, size_t max_slice, uint64_t *rng)
{
    CHECK(ranks >= 1 && ranks <= ACROSS_MAX_RANKS, "ranks = %d", ranks);
    int k = 0;
    for (int out = 0; out < TEST_TYPE_COUNT; ++out) {
        const dlscan_type out_type = (dlscan_type)out;
        if (!test_pair_supported(in_type, out_type))
            continue;
        size_t tile = 0;
        CHECK_OK(handles[0], dlscan_tile_items(handles[0], out_type, &tile));
        for (int op = 0; op < 3; ++op) {
            if (op == DLSCAN_SUM && test_type_is_float(out_type) && test_type_size(out_type) == 2)
                continue;
            for (int exclusive = 0; exclusive < 2; ++exclusive, ++k) {
                const pair_case c = {
                    .in_type = in_type,
                    .out_type = out_type,
                    .op = (dlscan_op)op,
                    .exclusive = exclusive,
                    .init = (test_init)(k % 3),
                    .with_total = k % 2,
                    .in_place = k % 4 == 1 && test_type_size(in_type) == test_type_size(out_type),
                    .values = test_type_is_float(in_type) && k % 5 == 4 ? TEST_VALUES_MIXED_MAGNITUDE
                                                                        : TEST_VALUES_UNIFORM,
                };
                ranks_case(handles, memories, ranks, &c, tile, max_slice, NULL, rng);
            }
        }
    }
}

/* ---------------------------------------------------------------- selects */

typedef struct select_job {
    dlscan_handle_t h;
    const test_memory *memory;
    const void *d_in;
    const unsigned char *d_flags; /* or NULL: the predicate */
    unsigned char *flags_buffer;  /* the flags in the rank's memory, given or not */
    void *d_out;
    size_t *d_counts;             /* the rank's count, offset and whole count */
    size_t n;
    dlscan_type type;
    const void *operand;
    dlscan_exchange exchange;
    rank_context context;
    dlscan_status status;
    char error[512];
} select_job;

static void *select_main(void *p)
{
    select_job *job = p;
    job->status = dlscan_select_across(job->h, job->d_in, job->d_flags, job->d_out, job->d_counts,
                                       job->d_counts + 1, job->d_counts + 2, job->n, job->type,
                                       DLSCAN_GREATER, job->operand, &job->exchange, job->memory->stream);
    snprintf(job->error, sizeof job->error, "%s", dlscan_last_error(job->h));
    if (job->status == DLSCAN_SUCCESS)
        job->memory->wait(job->memory->context);
    return NULL;
}

/* Selects across the ranks through `exchanges`, or the thread exchange where it is NULL. */
static void ranks_select(dlscan_handle_t *handles, const test_memory *memories, int ranks, dlscan_type type,
                         size_t max_slice, const dlscan_exchange *exchanges, uint64_t *rng)
{
    const size_t size = test_type_size(type);
    for (int by_flags = 0; by_flags < 2; ++by_flags) {
        size_t lengths[ACROSS_MAX_RANKS], n = 0;
        for (int r = 0; r < ranks; ++r) {
            lengths[r] = slice_length(256, max_slice, rng);
            n += lengths[r];
        }
        unsigned char *input = malloc(n * size + 1), *flags = malloc(n + 1), operand[8] = {0};
        CHECK(input && flags, "host memory");
        test_fill_random(type, TEST_VALUES_UNIFORM, input, n, rng);
        for (size_t i = 0; i < n; ++i)
            flags[i] = (unsigned char)(test_random(rng) % 3 == 0);
        /* the predicate: greater than an item of the input (or than 0) */
        if (n > 0)
            memcpy(operand, input + (size_t)(test_random(rng) % n) * size, size);
        thread_exchange x = {.ranks = ranks};
        CHECK(pthread_barrier_init(&x.barrier, NULL, (unsigned)ranks) == 0, "barrier");
        select_job jobs[ACROSS_MAX_RANKS];
        size_t first = 0;
        for (int r = 0; r < ranks; ++r) {
            const test_memory *m = &memories[r];
            void *d_in = m->alloc(lengths[r] * size + 1, m->context);
            unsigned char *d_flags = m->alloc(lengths[r] + 1, m->context);
            CHECK(d_in && d_flags, "memory");
            m->upload(d_in, input + first * size, lengths[r] * size, m->context);
            m->upload(d_flags, flags + first, lengths[r], m->context);
            jobs[r] = (select_job){.h = handles[r], .memory = m, .d_in = d_in, .d_flags = by_flags ? d_flags : NULL,
                                   .flags_buffer = d_flags,
                                   .d_out = alloc_poisoned(m, lengths[r] * size),
                                   .d_counts = alloc_poisoned(m, 3 * sizeof(size_t)), .n = lengths[r],
                                   .type = type, .operand = operand, .context = {&x, r, m}};
            jobs[r].exchange =
                exchanges ? exchanges[r] : (dlscan_exchange){r, ranks, thread_all_gather, &jobs[r].context, NULL};
            first += lengths[r];
        }
        pthread_t threads[ACROSS_MAX_RANKS];
        for (int r = 0; r < ranks; ++r)
            CHECK(pthread_create(&threads[r], NULL, select_main, &jobs[r]) == 0, "starting rank %d", r);
        for (int r = 0; r < ranks; ++r)
            pthread_join(threads[r], NULL);
        pthread_barrier_destroy(&x.barrier);

        /* The reference: each rank's kept items, their count and offset, the whole count. */
        size_t before = 0, everyone = 0;
        for (size_t i = 0; i < n; ++i)
            everyone += by_flags ? flags[i] != 0 : compact_check_keeps(type, DLSCAN_GREATER, input, i, operand);
        first = 0;
        for (int r = 0; r < ranks; ++r) {
            select_job *job = &jobs[r];
            const test_memory *m = job->memory;
            CHECK(job->status == DLSCAN_SUCCESS, "select across %d ranks, %s: rank %d: %s (%s)", ranks,
                  test_type_name(type), r, dlscan_status_string(job->status), job->error);
            unsigned char *got = malloc(lengths[r] * size + GUARD), *want = malloc(lengths[r] * size + 1);
            size_t counts[3], kept = 0;
            for (size_t i = 0; i < lengths[r]; ++i) {
                const unsigned char *item = input + (first + i) * size;
                const int keep = by_flags ? flags[first + i] != 0
                                          : compact_check_keeps(type, DLSCAN_GREATER, input, first + i, operand);
                if (keep)
                    memcpy(want + kept++ * size, item, size);
            }
            m->download(counts, job->d_counts, sizeof counts, m->context);
            m->download(got, job->d_out, lengths[r] * size + GUARD, m->context);
            EXPECT(counts[0] == kept && counts[1] == before && counts[2] == everyone,
                   "select across %d ranks, %s by %s: rank %d: count %zu offset %zu whole %zu, want %zu %zu %zu",
                   ranks, test_type_name(type), by_flags ? "flags" : "predicate", r, counts[0], counts[1], counts[2],
                   kept, before, everyone);
            EXPECT(memcmp(got, want, kept * size) == 0 && poisoned(got + lengths[r] * size, GUARD),
                   "select across %d ranks, %s: rank %d's items", ranks, test_type_name(type), r);
            before += kept;
            first += lengths[r];
            free(got);
            free(want);
            m->release((void *)job->d_in, m->context);
            m->release(job->flags_buffer, m->context);
            m->release(job->d_out, m->context);
            m->release(job->d_counts, m->context);
        }
        free(input);
        free(flags);
    }
}

void across_check_select(dlscan_handle_t *handles, const test_memory *memories, int ranks,
                         dlscan_type type, size_t max_slice, uint64_t *rng)
{
    ranks_select(handles, memories, ranks, type, max_slice, NULL, rng);
}

/* ---------------------------------------------------------------- the peer exchange */

typedef struct peers_job {
    dlscan_handle_t h;
    const test_memory *memory;
    dlscan_exchange bootstrap;
    rank_context context;
    dlscan_peers_t peers;
    dlscan_status status;
    char error[512];
    /* a burst: `calls` scans of the rank's slice, each from its own init into its own output */
    const void *d_in;
    size_t n;
    int32_t *d_outs;
    int calls;
} peers_job;

static void *peers_create_main(void *p)
{
    peers_job *job = p;
    job->status = dlscan_peers_create(job->h, &job->bootstrap, job->memory->stream, &job->peers);
    snprintf(job->error, sizeof job->error, "%s", dlscan_last_error(job->h));
    return NULL;
}

/* The burst: every call enqueued without waiting, so that ranks run ahead of each other. */
static void *peers_burst_main(void *p)
{
    peers_job *job = p;
    const dlscan_exchange exchange = dlscan_peers_exchange(job->peers);
    job->status = DLSCAN_SUCCESS;
    for (int k = 0; k < job->calls && job->status == DLSCAN_SUCCESS; ++k) {
        const int32_t init = k * 1000;
        dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
        a.d_in = job->d_in;
        a.d_out = job->d_outs + (size_t)k * job->n;
        a.n = job->n;
        a.in_type = a.out_type = DLSCAN_INT32;
        a.exclusive = k % 2;
        a.init = &init;
        job->status = dlscan_scan_across(job->h, &a, &exchange, job->memory->stream);
    }
    snprintf(job->error, sizeof job->error, "%s", dlscan_last_error(job->h));
    if (job->status == DLSCAN_SUCCESS)
        job->memory->wait(job->memory->context);
    return NULL;
}

static void run_peers_jobs(peers_job *jobs, int ranks, void *(*main)(void *))
{
    pthread_t threads[ACROSS_MAX_RANKS];
    for (int r = 0; r < ranks; ++r)
        CHECK(pthread_create(&threads[r], NULL, main, &jobs[r]) == 0, "starting rank %d", r);
    for (int r = 0; r < ranks; ++r)
        pthread_join(threads[r], NULL);
}

void across_check_peers(dlscan_handle_t *handles, const test_memory *memories, int ranks, size_t max_slice,
                        uint64_t *rng)
{
    CHECK(ranks >= 1 && ranks <= ACROSS_MAX_RANKS, "ranks = %d", ranks);
    thread_exchange x = {.ranks = ranks};
    CHECK(pthread_barrier_init(&x.barrier, NULL, (unsigned)ranks) == 0, "barrier");
    peers_job jobs[ACROSS_MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        jobs[r] = (peers_job){.h = handles[r], .memory = &memories[r], .context = {&x, r, &memories[r]}};
        jobs[r].bootstrap = (dlscan_exchange){r, ranks, thread_all_gather, &jobs[r].context, NULL};
    }
    run_peers_jobs(jobs, ranks, peers_create_main);
    const int cpu = strcmp(dlscan_backend_name(handles[0]), "cpu") == 0;
    for (int r = 0; r < ranks; ++r) {
        if (cpu) {
            EXPECT(jobs[r].status == DLSCAN_ERROR_NOT_SUPPORTED && !jobs[r].peers && jobs[r].error[0],
                   "peers on a CPU handle: rank %d got %s", r, dlscan_status_string(jobs[r].status));
            continue;
        }
        CHECK(jobs[r].status == DLSCAN_SUCCESS, "peers across %d ranks: rank %d: %s (%s)", ranks, r,
              dlscan_status_string(jobs[r].status), jobs[r].error);
    }
    EXPECT(x.calls[0] == (cpu ? 0 : 2), "peers' creation made %d all-gathers through its bootstrap, want %d",
           x.calls[0], cpu ? 0 : 2);
    if (cpu) {
        pthread_barrier_destroy(&x.barrier);
        return;
    }
    /* These ranks share one GPU: a handle that grew its storage during a call would free memory,
     * which waits for the whole device, and so for the all-gather of a rank that waits for this
     * one. Every handle grows first (dlscan.h). */
    for (int r = 0; r < ranks; ++r)
        CHECK_OK(handles[r], dlscan_reserve(handles[r], 8 * max_slice + 65536, DLSCAN_INT64));
    dlscan_exchange exchanges[ACROSS_MAX_RANKS];
    for (int r = 0; r < ranks; ++r)
        exchanges[r] = dlscan_peers_exchange(jobs[r].peers);

    /* The exact cases, then selects, each through the peers. */
    for (int i = 0; i < ACROSS_EXACT_CASE_COUNT; ++i) {
        const across_case *e = &across_exact_cases[i];
        const pair_case c = {
            .in_type = e->in_type,
            .out_type = e->out_type,
            .op = e->op,
            .exclusive = e->exclusive,
            .init = e->with_init ? (test_init)(1 + i % 2) : TEST_INIT_NONE,
            .with_total = i % 2,
            .values = TEST_VALUES_UNIFORM,
        };
        size_t tile = 0;
        CHECK_OK(handles[0], dlscan_tile_items(handles[0], c.out_type, &tile));
        ranks_case(handles, memories, ranks, &c, tile, max_slice, exchanges, rng);
    }
    ranks_select(handles, memories, ranks, DLSCAN_INT32, max_slice, exchanges, rng);
    ranks_select(handles, memories, ranks, DLSCAN_UINT64, max_slice, exchanges, rng);

    /* A burst of calls, each rank enqueueing all of its own before it waits. */
    enum { CALLS = 40 };
    size_t lengths[ACROSS_MAX_RANKS], n = 0;
    int32_t *input[ACROSS_MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        const test_memory *m = &memories[r];
        lengths[r] = slice_length(4096, max_slice < 20000 ? max_slice : 20000, rng);
        input[r] = malloc(lengths[r] * sizeof(int32_t) + 1);
        CHECK(input[r], "host memory");
        for (size_t i = 0; i < lengths[r]; ++i)
            input[r][i] = (int32_t)(test_random(rng) % 2001) - 1000;
        jobs[r].n = lengths[r];
        jobs[r].calls = CALLS;
        jobs[r].d_in = m->alloc(lengths[r] * sizeof(int32_t) + 1, m->context);
        jobs[r].d_outs = alloc_poisoned(m, CALLS * lengths[r] * sizeof(int32_t));
        m->upload((void *)jobs[r].d_in, input[r], lengths[r] * sizeof(int32_t), m->context);
        n += lengths[r];
    }
    run_peers_jobs(jobs, ranks, peers_burst_main);
    int64_t before = 0; /* the items of the ranks before, summed */
    for (int r = 0; r < ranks; ++r) {
        const test_memory *m = &memories[r];
        CHECK(jobs[r].status == DLSCAN_SUCCESS, "a burst across %d peers: rank %d: %s (%s)", ranks, r,
              dlscan_status_string(jobs[r].status), jobs[r].error);
        int32_t *got = malloc(CALLS * lengths[r] * sizeof(int32_t) + GUARD);
        CHECK(got, "host memory");
        m->download(got, jobs[r].d_outs, CALLS * lengths[r] * sizeof(int32_t) + GUARD, m->context);
        size_t wrong = 0;
        for (int k = 0; k < CALLS; ++k) {
            int64_t sum = before + k * 1000;
            for (size_t i = 0; i < lengths[r]; ++i) {
                if (k % 2 == 0)
                    sum += input[r][i];
                wrong += got[(size_t)k * lengths[r] + i] != (int32_t)sum;
                if (k % 2 == 1)
                    sum += input[r][i];
            }
        }
        EXPECT(wrong == 0, "a burst of %d calls across %d peers (%zu items in all): rank %d has %zu wrong items",
               CALLS, ranks, n, r, wrong);
        EXPECT(poisoned((unsigned char *)got + CALLS * lengths[r] * sizeof(int32_t), GUARD),
               "a burst across peers: rank %d wrote past its outputs", r);
        for (size_t i = 0; i < lengths[r]; ++i)
            before += input[r][i];
        free(got);
        free(input[r]);
        m->release((void *)jobs[r].d_in, m->context);
        m->release(jobs[r].d_outs, m->context);
    }
    for (int r = 0; r < ranks; ++r)
        dlscan_peers_destroy(jobs[r].peers);
    pthread_barrier_destroy(&x.barrier);
}

/* ---------------------------------------------------------------- refusals */

static void expect_refused(dlscan_handle_t h, dlscan_status got, dlscan_status want, const char *what)
{
    EXPECT(got == want, "%s: got %s, want %s", what, dlscan_status_string(got), dlscan_status_string(want));
    EXPECT(dlscan_last_error(h)[0] != '\0', "%s: no message", what);
}

void across_check_bad_input(dlscan_handle_t h, const test_memory *m, void *foreign)
{
    enum { N = 1000 };
    int32_t input[N];
    for (int i = 0; i < N; ++i)
        input[i] = i;
    unsigned char *d_in = m->alloc(N * 4, m->context), *d_out = alloc_poisoned(m, N * 4),
                  *d_total = alloc_poisoned(m, 8);
    CHECK(d_in, "memory");
    m->upload(d_in, input, sizeof input, m->context);
    const int32_t init = 7;

    /* dlscan_reduce */
    expect_refused(h, dlscan_reduce(h, d_in, NULL, N, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream),
                   DLSCAN_ERROR_INVALID_ARGUMENT, "reduce, d_total NULL");
    expect_refused(h, dlscan_reduce(h, NULL, d_total, N, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream),
                   DLSCAN_ERROR_INVALID_ARGUMENT, "reduce, d_in NULL");
    expect_refused(h, dlscan_reduce(h, d_in, d_total, N, (dlscan_type)99, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream),
                   DLSCAN_ERROR_INVALID_TYPE, "reduce, bad type");
    expect_refused(h, dlscan_reduce(h, d_in, d_total, N, DLSCAN_INT32, DLSCAN_INT32, (dlscan_op)7, NULL, m->stream),
                   DLSCAN_ERROR_INVALID_OP, "reduce, bad op");
    expect_refused(h, dlscan_reduce(h, d_in, d_total, N, DLSCAN_FLOAT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream),
                   DLSCAN_ERROR_TYPE_PAIR, "reduce, float32 into int32");
    expect_refused(h, dlscan_reduce(h, d_in, d_in + 8, N, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream),
                   DLSCAN_ERROR_OVERLAP, "reduce, d_total inside d_in");
    expect_refused(h, dlscan_reduce(h, d_in, d_total + 2, N, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream),
                   DLSCAN_ERROR_MISALIGNED, "reduce, misaligned d_total");
    EXPECT(dlscan_reduce(NULL, d_in, d_total, N, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream) ==
               DLSCAN_ERROR_INVALID_HANDLE,
           "reduce, NULL handle");
    if (foreign)
        expect_refused(h, dlscan_reduce(h, foreign, d_total, N, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream),
                       DLSCAN_ERROR_NOT_DEVICE_MEMORY, "reduce, d_in of the other kind");
    unsigned char total[8 + GUARD];
    m->wait(m->context);
    m->download(total, d_total, 8 + GUARD, m->context);
    EXPECT(poisoned(total, 8 + GUARD), "a refused reduction wrote d_total");
    /* n == 0 writes the init; then a reduction of the items. */
    CHECK_OK(h, dlscan_reduce(h, NULL, d_total, 0, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, &init, m->stream));
    m->wait(m->context);
    int32_t value = 0;
    m->download(&value, d_total, 4, m->context);
    EXPECT(value == 7, "a reduction of no items: got %d, want the init 7", (int)value);
    CHECK_OK(h, dlscan_reduce(h, d_in, d_total, N, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, &init, m->stream));
    m->wait(m->context);
    m->download(&value, d_total, 4, m->context);
    EXPECT(value == 7 + N * (N - 1) / 2, "the reduction after the refusals: got %d", (int)value);

    /* dlscan_scan_across: refused before the exchange, nothing written */
    m->fill(d_total, TEST_POISON_BYTE, 8 + GUARD, m->context);
    thread_exchange x = {.ranks = 2};
    CHECK(pthread_barrier_init(&x.barrier, NULL, 1) == 0, "barrier");
    rank_context context = {&x, 0, m};
    const dlscan_exchange good = {0, 2, thread_all_gather, &context, NULL};
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_out = d_out;
    a.n = N;
    a.d_total = d_total;
    dlscan_exchange bad = good;
    expect_refused(h, dlscan_scan_across(h, &a, NULL, m->stream), DLSCAN_ERROR_INVALID_ARGUMENT, "across, exchange NULL");
    bad.rank = 2;
    expect_refused(h, dlscan_scan_across(h, &a, &bad, m->stream), DLSCAN_ERROR_INVALID_ARGUMENT, "across, rank 2 of 2");
    bad = good;
    bad.ranks = 0;
    expect_refused(h, dlscan_scan_across(h, &a, &bad, m->stream), DLSCAN_ERROR_INVALID_ARGUMENT, "across, 0 ranks");
    bad = good;
    bad.error = "no communicator here";
    expect_refused(h, dlscan_scan_across(h, &a, &bad, m->stream), DLSCAN_ERROR_EXCHANGE, "across, a broken transport");
    EXPECT(strstr(dlscan_last_error(h), "no communicator here") != NULL, "the transport's error is not in the message: %s",
           dlscan_last_error(h));
    bad = good;
    bad.all_gather = NULL;
    expect_refused(h, dlscan_scan_across(h, &a, &bad, m->stream), DLSCAN_ERROR_INVALID_ARGUMENT, "across, all_gather NULL");
    dlscan_scan_args b = a;
    b.d_in = NULL;
    expect_refused(h, dlscan_scan_across(h, &b, &good, m->stream), DLSCAN_ERROR_INVALID_ARGUMENT, "across, d_in NULL");
    b = a;
    b.axis_length = 10;
    b.d_total = NULL;
    expect_refused(h, dlscan_scan_across(h, &b, &good, m->stream), DLSCAN_ERROR_NOT_SUPPORTED, "across, an axis");
    b = a;
    b.d_keys = d_in;
    b.d_in = d_out;
    b.d_out = d_out;
    b.d_total = NULL;
    expect_refused(h, dlscan_scan_across(h, &b, &good, m->stream), DLSCAN_ERROR_NOT_SUPPORTED, "across, segments");
    if (foreign) {
        b = a;
        b.d_in = foreign;
        expect_refused(h, dlscan_scan_across(h, &b, &good, m->stream), DLSCAN_ERROR_NOT_DEVICE_MEMORY,
                       "across, d_in of the other kind");
    }
    /* dlscan_select_across: its counts' buffers checked before anything is written */
    size_t *d_counts = (size_t *)d_total; /* 8 bytes: one count */
    const int32_t zero = 0;
    expect_refused(h, dlscan_select_across(h, d_in, NULL, d_out, d_counts, NULL, NULL, N, DLSCAN_INT32,
                                           DLSCAN_GREATER, &zero, &good, m->stream),
                   DLSCAN_ERROR_INVALID_ARGUMENT, "select across, d_offset NULL");
    expect_refused(h, dlscan_select_across(h, d_in, NULL, d_out, d_counts, (size_t *)(d_out + 8), NULL, N,
                                           DLSCAN_INT32, DLSCAN_GREATER, &zero, &good, m->stream),
                   DLSCAN_ERROR_OVERLAP, "select across, d_offset inside d_out");
    expect_refused(h, dlscan_select_across(h, d_in, NULL, d_out, d_counts, d_counts, NULL, 0, DLSCAN_INT32,
                                           DLSCAN_GREATER, &zero, &good, m->stream),
                   DLSCAN_ERROR_OVERLAP, "select across, d_offset == d_num_selected");
    expect_refused(h, dlscan_select_across(h, d_in, NULL, d_out, d_counts, (size_t *)(d_total + 1), NULL, N,
                                           DLSCAN_INT16, DLSCAN_GREATER, &zero, &good, m->stream),
                   DLSCAN_ERROR_INVALID_TYPE, "select across, int16 items");
    expect_refused(h, dlscan_select_across(h, d_in, NULL, d_out, d_counts, (size_t *)d_out, NULL, N,
                                           DLSCAN_INT32, (dlscan_predicate)40, &zero, &good, m->stream),
                   DLSCAN_ERROR_INVALID_ARGUMENT, "select across, no such predicate");
    /* dlscan_peers_create: refused before anything is made or exchanged */
    dlscan_peers_t peers = NULL;
    expect_refused(h, dlscan_peers_create(h, &good, m->stream, NULL), DLSCAN_ERROR_INVALID_ARGUMENT, "peers, NULL");
    expect_refused(h, dlscan_peers_create(h, NULL, m->stream, &peers), DLSCAN_ERROR_INVALID_ARGUMENT,
                   "peers, bootstrap NULL");
    bad = good;
    bad.rank = 5;
    expect_refused(h, dlscan_peers_create(h, &bad, m->stream, &peers), DLSCAN_ERROR_INVALID_ARGUMENT,
                   "peers, rank 5 of 2");
    EXPECT(peers == NULL, "a refused dlscan_peers_create gave peers");
    const dlscan_exchange no_peers = dlscan_peers_exchange(NULL);
    expect_refused(h, dlscan_scan_across(h, &a, &no_peers, m->stream), DLSCAN_ERROR_EXCHANGE, "across, peers NULL");
    dlscan_peers_destroy(NULL);
    EXPECT(x.calls[0] == 0, "a refused scan across ranks made %d exchanges", x.calls[0]);
    /* An exchange that fails. */
    x.fail = 1;
    expect_refused(h, dlscan_scan_across(h, &a, &good, m->stream), DLSCAN_ERROR_EXCHANGE, "across, the exchange fails");
    EXPECT(strstr(dlscan_last_error(h), "on purpose") != NULL, "the exchange's reason is not in the message: %s",
           dlscan_last_error(h));
    m->wait(m->context);
    unsigned char out[N * 4 + GUARD];
    m->download(out, d_out, sizeof out, m->context);
    m->download(total, d_total, 8 + GUARD, m->context);
    EXPECT(poisoned(out, sizeof out), "a refused or failed scan across ranks wrote d_out");
    EXPECT(poisoned(total, 8 + GUARD), "a refused or failed scan across ranks wrote d_total");
    pthread_barrier_destroy(&x.barrier);
    /* One rank is a plain scan, and the handle still works. */
    const dlscan_exchange alone = {0, 1, thread_all_gather, &context, NULL};
    a.exclusive = 1;
    a.init = &init;
    x.fail = 0;
    CHECK_OK(h, dlscan_scan_across(h, &a, &alone, m->stream));
    m->wait(m->context);
    int32_t scanned[N];
    m->download(scanned, d_out, sizeof scanned, m->context);
    m->download(&value, d_total, 4, m->context);
    int ok = 1;
    for (int i = 0; i < N; ++i)
        ok &= scanned[i] == 7 + i * (i - 1) / 2;
    EXPECT(ok && value == 7 + N * (N - 1) / 2, "one rank's scan after the refusals is wrong");
    EXPECT(x.calls[0] == 1, "one rank made %d exchanges, want none", x.calls[0] - 1);

    /* Peers whose bootstrap fails (a GPU handle) or that a CPU handle cannot make, then peers of
     * one rank, through which a scan is the plain one. */
    const int cpu = strcmp(dlscan_backend_name(h), "cpu") == 0;
    x.fail = 1;
    expect_refused(h, dlscan_peers_create(h, &good, m->stream, &peers),
                   cpu ? DLSCAN_ERROR_NOT_SUPPORTED : DLSCAN_ERROR_EXCHANGE, "peers, the bootstrap fails");
    EXPECT(peers == NULL, "a failed dlscan_peers_create gave peers");
    thread_exchange one = {.ranks = 1};
    CHECK(pthread_barrier_init(&one.barrier, NULL, 1) == 0, "barrier");
    rank_context one_context = {&one, 0, m};
    const dlscan_exchange one_rank = {0, 1, thread_all_gather, &one_context, NULL};
    const dlscan_status made = dlscan_peers_create(h, &one_rank, m->stream, &peers);
    if (cpu) {
        expect_refused(h, made, DLSCAN_ERROR_NOT_SUPPORTED, "peers on a CPU handle");
    } else {
        CHECK(made == DLSCAN_SUCCESS, "peers of one rank: %s (%s)", dlscan_status_string(made), dlscan_last_error(h));
        const dlscan_exchange through = dlscan_peers_exchange(peers);
        char why[200] = "";
        EXPECT(through.all_gather(through.context, d_in, d_out, 17, 1, m->stream, why, sizeof why) != 0 && why[0],
               "the peer exchange took a value of 17 bytes");
        a.exclusive = 0;
        CHECK_OK(h, dlscan_scan_across(h, &a, &through, m->stream));
        m->wait(m->context);
        m->download(scanned, d_out, sizeof scanned, m->context);
        ok = 1;
        for (int i = 0; i < N; ++i)
            ok &= scanned[i] == 7 + i * (i + 1) / 2;
        EXPECT(ok, "a scan through peers of one rank is wrong");
        dlscan_peers_destroy(peers);
    }
    EXPECT(one.calls[0] == (cpu ? 0 : 2), "peers of one rank made %d all-gathers, want %d", one.calls[0], cpu ? 0 : 2);
    pthread_barrier_destroy(&one.barrier);
    m->release(d_in, m->context);
    m->release(d_out, m->context);
    m->release(d_total, m->context);
}
