/*
 * segment_check.c: the shared tests of segmented scans (see segment_check.h): layouts of
 * segments and the keys or offsets that give them, the sequential reference, one case run on a
 * backend, the sweeps over pairs and key types, and the refusals.
 */
#include "segment_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pair_check.h"

/* Bytes past a separate d_out, poisoned: a segmented scan must not write there either. */
#define GUARD_BYTES 64

static const char *const layout_names[SEGMENT_LAYOUT_COUNT] = {
    "heads at tile edges",       "one segment",
    "segments of one item",      "segments of 1 item to 3 tiles",
    "segments of 1 to 16 items", "empty segments and items outside"};

void segment_tiles(dlscan_handle_t h, dlscan_type out, size_t *unit, size_t *tile)
{
    size_t items = 0;
    CHECK(dlscan_tile_items(h, out, &items) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    *unit = items / 2;
    *tile = strcmp(dlscan_backend_name(h), "gpu") == 0 ? items / 2 : items;
}

const char *segment_describe(const segment_case *c, char *buffer, size_t size)
{
    char scan[160];
    test_describe_pair(&c->scan, scan, sizeof scan);
    const char *layout = (unsigned)c->layout < SEGMENT_LAYOUT_COUNT ? layout_names[c->layout] : "?";
    if (c->kind == SEGMENT_KEYS) {
        const char *key = test_type_name(c->key_type);
        snprintf(buffer, size, "%s, by %s keys, %s", scan, key ? key : "bad-type", layout);
    } else {
        snprintf(buffer, size, "%s, by offsets, %s", scan, layout);
    }
    return buffer;
}

/* ---- Layouts, keys and offsets ---- */

/* A growing list of offsets. */
typedef struct offset_list {
    size_t *at;
    size_t count, capacity;
} offset_list;

static void push_offset(offset_list *list, size_t offset)
{
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 64;
        list->at = realloc(list->at, list->capacity * sizeof *list->at);
        CHECK(list->at, "host allocation of %zu offsets failed", list->capacity);
    }
    list->at[list->count++] = offset;
}

/* The heads of SEGMENTS_AT_EDGES between `first` and `end`: at the k-th multiple of the unit,
 * by k % 4, the multiple itself, the item before it, the item after it, or all three. */
static void push_edge_heads(offset_list *list, size_t unit, size_t first, size_t end)
{
    for (size_t k = 1; k * unit <= end; ++k) {
        const size_t edge = k * unit, mode = k % 4;
        const size_t heads[3] = {edge - 1, edge, edge + 1};
        const int wanted[4][3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}, {1, 1, 1}};
        for (int i = 0; i < 3; ++i)
            if (wanted[mode][i] && heads[i] > first && heads[i] < end &&
                heads[i] > list->at[list->count - 1])
                push_offset(list, heads[i]);
    }
}

/* The offsets of c's layout over its n items: *num_segments + 1 of them, rising. For keys
 * (no empty segments, no items outside) they run from 0 to n. */
static size_t *make_layout(const segment_case *c, size_t unit, size_t tile, size_t *num_segments,
                           uint64_t *rng)
{
    const size_t n = c->scan.n;
    const int empties = c->layout == SEGMENTS_EMPTY && c->kind == SEGMENT_OFFSETS;
    size_t first = 0, end = n;
    if (empties && n >= 2) { /* 1 to 2 units + 1 items outside on either side */
        const size_t most = 2 * unit + 1 < n / 2 ? 2 * unit + 1 : n / 2;
        first = 1 + test_random(rng) % most;
        end = n - 1 - test_random(rng) % most;
    }
    offset_list list = {NULL, 0, 0};
    push_offset(&list, first);
    if (empties) { /* two empty segments at the start */
        push_offset(&list, first);
        push_offset(&list, first);
    }
    if (c->layout == SEGMENTS_AT_EDGES) {
        push_edge_heads(&list, unit, first, end);
    } else if (c->layout != SEGMENTS_ONE) {
        int middle_empty = 0; /* an empty segment between two others, at least one */
        for (size_t at = first;;) {
            const uint64_t r = test_random(rng);
            size_t length = 1;
            if (c->layout == SEGMENTS_SHORT)
                length = 1 + r % 16;
            else if (c->layout != SEGMENTS_OF_ONE)
                length = 1 + r % (3 * tile);
            if (empties && at > first && (!middle_empty || r >> 60 == 0)) {
                length = 0;
                middle_empty = 1;
            }
            if (length >= end - at)
                break;
            at += length;
            push_offset(&list, at);
        }
    }
    push_offset(&list, end);
    if (empties) { /* two empty segments at the end */
        push_offset(&list, end);
        push_offset(&list, end);
    }
    *num_segments = list.count - 1;
    return list.at;
}

/* The bits of a quiet NaN of float type t, with a random sign and payload. */
static uint64_t nan_bits(dlscan_type t, uint64_t r)
{
    const uint64_t payload = r >> 16;
    switch (t) {
    case DLSCAN_FLOAT16: return 0x7e00u | (payload & 0x1ff) | (r >> 8 & 1) << 15;
    case DLSCAN_BFLOAT16: return 0x7fc0u | (payload & 0x3f) | (r >> 8 & 1) << 15;
    case DLSCAN_FLOAT32: return 0x7fc00000u | (payload & 0x3fffff) | (r >> 8 & 1) << 31;
    default: return 0x7ff8000000000000ull | (payload & 0x7ffffffffffffull) | (r >> 8 & 1) << 63;
    }
}

/* A key of type t whose bits differ from `previous` (any key for the first run): random bits;
 * the key of the run before the previous one (runs, not groups: equal keys apart are two
 * segments); `previous` with one bit flipped (a compare of part of the key misses it); a zero
 * of the other sign than `previous` (+0.0 and -0.0 are equal floats but different keys); for
 * floats a NaN (a run of NaN with the same bits is one segment, though NaN != NaN). */
static uint64_t next_key(dlscan_type t, uint64_t previous, uint64_t before, int first, uint64_t *rng)
{
    const int bits = 8 * (int)test_type_size(t);
    const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, sign = 1ull << (bits - 1);
    for (;;) {
        const uint64_t r = test_random(rng);
        uint64_t key;
        switch (r % 8) {
        case 0: key = before; break;
        case 1: key = previous ^ 1ull << (r >> 8) % (uint64_t)bits; break;
        case 2: key = previous == 0 ? sign : 0; break;
        case 3: key = test_type_is_float(t) ? nan_bits(t, r) : test_random(rng); break;
        default: key = test_random(rng); break;
        }
        key &= mask;
        if (first || key != previous)
            return key;
    }
}

/* Keys that make the nonempty segments of `offsets` runs of equal keys. */
static void make_keys(dlscan_type t, const size_t *offsets, size_t num_segments, void *keys,
                      uint64_t *rng)
{
    const size_t size = test_type_size(t);
    uint64_t previous = 0, before = 0;
    int first = 1;
    for (size_t k = 0; k < num_segments; ++k) {
        if (offsets[k + 1] == offsets[k])
            continue;
        const uint64_t key = next_key(t, previous, before, first, rng);
        for (size_t i = offsets[k]; i < offsets[k + 1]; ++i)
            memcpy((char *)keys + i * size, &key, size);
        before = previous;
        previous = key;
        first = 0;
    }
}

void segment_make(const segment_case *c, size_t unit, size_t tile, segment_data *d, uint64_t *rng)
{
    const pair_case *p = &c->scan;
    memset(d, 0, sizeof *d);
    const size_t in_bytes = p->n * test_type_size(p->in_type);
    const size_t bytes = p->n * test_type_size(p->out_type);
    d->input = malloc(in_bytes ? in_bytes : 1);
    d->output = malloc(bytes ? bytes : 1);
    CHECK(d->input && d->output, "host allocation of %zu items failed", p->n);
    test_fill_random(p->in_type, p->values, d->input, p->n, rng);
    uint64_t item = 0; /* the init: an input item converted to out_type */
    test_fill_random(p->in_type, p->values, &item, 1, rng);
    d->init_bits = test_convert_item(p->in_type, p->out_type, &item);
    size_t num_segments = 0;
    size_t *offsets = make_layout(c, unit, tile, &num_segments, rng);
    if (c->kind == SEGMENT_OFFSETS) {
        d->offsets = offsets;
        d->num_segments = num_segments;
        return;
    }
    d->keys = malloc(p->n ? p->n * test_type_size(c->key_type) : 1);
    CHECK(d->keys, "host allocation of %zu keys failed", p->n);
    make_keys(c->key_type, offsets, num_segments, d->keys, rng);
    free(offsets);
}

void segment_free(segment_data *d)
{
    free(d->input);
    free(d->keys);
    free(d->offsets);
    free(d->output);
    memset(d, 0, sizeof *d);
}

/* ---- One call ---- */

void segment_upload(const test_memory *m, const segment_case *c, const segment_data *d,
                    segment_buffers *b)
{
    const pair_case *p = &c->scan;
    const size_t in_bytes = p->n * test_type_size(p->in_type);
    const size_t bytes = p->n * test_type_size(p->out_type);
    CHECK(!p->in_place || in_bytes == bytes, "in place needs types of one size");
    const size_t key_bytes = d->keys ? p->n * test_type_size(c->key_type) : 0;
    const size_t offset_bytes = d->offsets ? (d->num_segments + 1) * sizeof(size_t) : 0;
    b->d_in = m->alloc(in_bytes ? in_bytes : 16, m->context);
    b->d_out = p->in_place ? b->d_in : m->alloc(bytes + GUARD_BYTES, m->context);
    b->d_keys = d->keys ? m->alloc(key_bytes ? key_bytes : 16, m->context) : NULL;
    b->d_offsets = d->offsets ? m->alloc(offset_bytes, m->context) : NULL;
    CHECK(b->d_in && b->d_out && (b->d_keys || !d->keys) && (b->d_offsets || !d->offsets),
          "allocation for %zu items failed", p->n);
    m->upload(b->d_in, d->input, in_bytes, m->context);
    if (!p->in_place)
        m->fill(b->d_out, TEST_POISON_BYTE, bytes + GUARD_BYTES, m->context);
    if (b->d_keys)
        m->upload(b->d_keys, d->keys, key_bytes, m->context);
    if (b->d_offsets)
        m->upload(b->d_offsets, d->offsets, offset_bytes, m->context);
}

dlscan_status segment_enqueue(dlscan_handle_t h, const segment_case *c, const segment_data *d,
                              const segment_buffers *b, cudaStream_t stream)
{
    const pair_case *p = &c->scan;
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = b->d_in;
    a.d_out = b->d_out;
    a.n = p->n;
    a.in_type = p->in_type;
    a.out_type = p->out_type;
    a.op = p->op;
    a.exclusive = p->exclusive;
    a.init = p->init == TEST_INIT_HOST ? &d->init_bits : NULL;
    a.d_keys = b->d_keys;
    a.key_type = c->key_type;
    a.d_offsets = b->d_offsets;
    a.num_segments = d->num_segments;
    return dlscan_scan(h, &a, stream);
}

void segment_download(const test_memory *m, const segment_case *c, segment_data *d,
                      const segment_buffers *b)
{
    const size_t bytes = c->scan.n * test_type_size(c->scan.out_type);
    m->wait(m->context);
    memset(d->output, TEST_POISON_BYTE, bytes);
    m->download(d->output, b->d_out, bytes, m->context);
    if (!c->scan.in_place) { /* nothing past d_out */
        char what[300];
        test_expect_poisoned(m, (const unsigned char *)b->d_out + bytes, GUARD_BYTES,
                             segment_describe(c, what, sizeof what));
    }
}

void segment_release(const test_memory *m, const segment_case *c, segment_buffers *b)
{
    m->release(b->d_in, m->context);
    if (!c->scan.in_place)
        m->release(b->d_out, m->context);
    if (b->d_keys)
        m->release(b->d_keys, m->context);
    if (b->d_offsets)
        m->release(b->d_offsets, m->context);
    memset(b, 0, sizeof *b);
}

dlscan_status segment_run(dlscan_handle_t h, const test_memory *m, const segment_case *c,
                          segment_data *d)
{
    segment_buffers b;
    segment_upload(m, c, d, &b);
    const dlscan_status status = segment_enqueue(h, c, d, &b, m->stream);
    segment_download(m, c, d, &b);
    segment_release(m, c, &b);
    return status;
}

/* ---- The reference ---- */

/* Items first .. end - 1 as one segment: a plain scan of them from the init. `tile` and the
 * segment's start within its tile set the float tolerance (scan_check.c: the tolerance grows
 * with the item's position in its tile and the tiles before it, and an item's tile position
 * within a segment that starts at `first` is at most first % tile more than its own). */
static int check_segment(const segment_case *c, size_t tile, const segment_data *d, size_t k,
                         size_t first, size_t end, char *message, size_t message_size)
{
    pair_case segment = c->scan;
    segment.n = end - first;
    segment.with_total = 0;
    const size_t in_size = test_type_size(c->scan.in_type), size = test_type_size(c->scan.out_type);
    char detail[200];
    if (scan_check_pair_output(&segment, tile, first % tile, (const char *)d->input + first * in_size,
                               c->scan.init == TEST_INIT_HOST ? &d->init_bits : NULL,
                               (const char *)d->output + first * size, NULL, detail, sizeof detail))
        return 1;
    snprintf(message, message_size, "segment %zu, items %zu .. %zu of %zu (counted from %zu): %s", k,
             first, end - 1, c->scan.n, first, detail);
    return 0;
}

/* Item j belongs to no segment: the call left it as it was (poisoned, or the input in place). */
static int check_untouched(const segment_case *c, const segment_data *d, size_t j, char *message,
                           size_t message_size)
{
    const size_t size = test_type_size(c->scan.out_type);
    const unsigned char *got = (const unsigned char *)d->output + j * size;
    const unsigned char *in = (const unsigned char *)d->input + j * size;
    for (size_t b = 0; b < size; ++b)
        if (got[b] != (c->scan.in_place ? in[b] : TEST_POISON_BYTE)) {
            snprintf(message, message_size,
                     "item %zu of %zu lies in no segment (offsets %zu .. %zu) but was written", j,
                     c->scan.n, d->offsets[0], d->offsets[d->num_segments]);
            return 0;
        }
    return 1;
}

int segment_check_output(const segment_case *c, size_t tile, const segment_data *d, char *message,
                         size_t message_size)
{
    const size_t n = c->scan.n;
    if (d->offsets) {
        const size_t first = d->offsets[0], end = d->offsets[d->num_segments];
        for (size_t j = 0; j < first && j < n; ++j)
            if (!check_untouched(c, d, j, message, message_size))
                return 0;
        for (size_t j = end; j < n; ++j)
            if (!check_untouched(c, d, j, message, message_size))
                return 0;
        for (size_t k = 0; k < d->num_segments; ++k)
            if (d->offsets[k + 1] > d->offsets[k] &&
                !check_segment(c, tile, d, k, d->offsets[k], d->offsets[k + 1], message, message_size))
                return 0;
        return 1;
    }
    /* Keys: a segment is a maximal run of keys with the same bits. */
    const size_t key_size = test_type_size(c->key_type);
    const unsigned char *keys = d->keys;
    size_t first = 0, k = 0;
    for (size_t j = 1; j <= n; ++j)
        if (j == n || memcmp(keys + j * key_size, keys + (j - 1) * key_size, key_size) != 0) {
            if (!check_segment(c, tile, d, k++, first, j, message, message_size))
                return 0;
            first = j;
        }
    return 1;
}

void segment_check_case(dlscan_handle_t h, const test_memory *m, const segment_case *c, uint64_t *rng)
{
    size_t unit = 0, tile = 0;
    segment_tiles(h, c->scan.out_type, &unit, &tile);
    segment_data d;
    segment_make(c, unit, tile, &d, rng);
    const dlscan_status status = segment_run(h, m, c, &d);
    char what[300], message[400];
    segment_describe(c, what, sizeof what);
    CHECK(status == DLSCAN_SUCCESS, "%s: %s (%s)", what, dlscan_status_string(status),
          dlscan_last_error(h));
    const int ok = segment_check_output(c, tile, &d, message, sizeof message);
    segment_free(&d);
    CHECK(ok, "%s: %s", what, message);
}

/* ---- Sweeps ---- */

/* The values of the i-th case of in -> out: pair_check.c's cycle, with mixed magnitudes for
 * every fourth float output (sums that round). */
static test_values segment_values(dlscan_type in, dlscan_type out, int i)
{
    return i % 4 == 3 && test_type_is_float(out) ? TEST_VALUES_MIXED_MAGNITUDE
                                                 : pair_check_values(in, out, i);
}

void segment_check_every_output(dlscan_handle_t h, const test_memory *m, dlscan_type in,
                                size_t max_n, uint64_t *rng)
{
    int variant = 0;
    for (int o = 0; o < TEST_TYPE_COUNT; ++o) {
        const dlscan_type out = (dlscan_type)o;
        if (!test_pair_supported(in, out))
            continue;
        size_t unit = 0, tile = 0;
        segment_tiles(h, out, &unit, &tile);
        size_t sizes[64];
        const int count = test_edge_sizes(unit, max_n, rng, sizes);
        const int same_size = test_type_size(in) == test_type_size(out);
        for (int i = 0; i < count; ++i)
            for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
                for (int exclusive = 0; exclusive <= 1; ++exclusive, ++variant) {
                    /* Sizes past 64 units run two of the six operator cases, turning from
                     * size to size (the host's reference costs more than the call). */
                    if (sizes[i] > 64 * unit && (2 * op + exclusive + i) % 3 != 0)
                        continue;
                    /* The layout turns with each case and shifts with each size, the kind
                     * with every other size and the operator: from 12 sizes on, every operator,
                     * inclusive and exclusive, meets every layout by keys and by offsets. */
                    const int layout = (variant + i) % SEGMENT_LAYOUT_COUNT;
                    const segment_case c = {{in, out, (dlscan_op)op, exclusive,
                                             (variant / 3 + i) % 2 ? TEST_INIT_HOST : TEST_INIT_NONE,
                                             0, same_size && (variant / 7) % 2, sizes[i],
                                             segment_values(in, out, variant + i)},
                                            (i / 2 + op) % 2 ? SEGMENT_OFFSETS : SEGMENT_KEYS,
                                            (dlscan_type)((variant / 2 + (int)in) % TEST_TYPE_COUNT),
                                            (segment_layout)layout};
                    segment_check_case(h, m, &c, rng);
                }
    }
}

void segment_check_keys(dlscan_handle_t h, const test_memory *m, dlscan_type key_type, size_t max_n,
                        uint64_t *rng)
{
    static const struct {
        dlscan_type in, out;
        dlscan_op op;
    } scans[] = {{DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM},     {DLSCAN_UINT8, DLSCAN_INT64, DLSCAN_SUM},
                 {DLSCAN_FLOAT32, DLSCAN_FLOAT64, DLSCAN_SUM}, {DLSCAN_FLOAT16, DLSCAN_FLOAT32, DLSCAN_SUM},
                 {DLSCAN_INT64, DLSCAN_INT64, DLSCAN_MIN},     {DLSCAN_FLOAT64, DLSCAN_FLOAT64, DLSCAN_MAX},
                 {DLSCAN_INT16, DLSCAN_INT16, DLSCAN_SUM},     {DLSCAN_FLOAT32, DLSCAN_FLOAT32, DLSCAN_SUM}};
    const int count = (int)(sizeof scans / sizeof scans[0]);
    int variant = 0;
    for (int layout = 0; layout < SEGMENT_LAYOUT_COUNT; ++layout)
        for (int i = 0; i < 12; ++i, ++variant) {
            const int s = (i + 5 * layout) % count; /* each size meets six of the scans */
            size_t unit = 0, tile = 0;
            segment_tiles(h, scans[s].out, &unit, &tile);
            const size_t sizes[12] = {0,        1,        2,           33,
                                      unit - 1, unit,     unit + 1,    2 * unit + 1,
                                      3 * unit + 2, 33 * unit + 1, 65 * unit - 1,
                                      max_n / 2 + test_random(rng) % (max_n / 2 + 1)};
            if (sizes[i] > max_n)
                continue;
            const int same_size = test_type_size(scans[s].in) == test_type_size(scans[s].out);
            const segment_case c = {{scans[s].in, scans[s].out, scans[s].op, variant % 2,
                                     (variant / 2) % 2 ? TEST_INIT_HOST : TEST_INIT_NONE, 0,
                                     same_size && (variant / 3) % 2, sizes[i],
                                     segment_values(scans[s].in, scans[s].out, variant)},
                                    SEGMENT_KEYS,
                                    key_type,
                                    (segment_layout)layout};
            segment_check_case(h, m, &c, rng);
        }
}

/* ---- Refusals ---- */

void segment_check_bad_input(dlscan_handle_t h, const test_memory *m, void *foreign, uint64_t *rng)
{
    const int gpu = strcmp(dlscan_backend_name(h), "gpu") == 0;
    enum { N = 1000, GUARD = 16 /* int32 items of poison on either side of d_out */ };
    const size_t n = N, bytes = n * sizeof(int32_t), out_bytes = bytes + 2 * GUARD * sizeof(int32_t);
    int32_t values[N], keys[N], out[N];
    test_fill_random(DLSCAN_INT32, TEST_VALUES_NARROW, values, n, rng);
    for (size_t i = 0; i < n; ++i)
        keys[i] = (int32_t)(i / 37 % 5); /* runs of 37, keys repeating apart */
    size_t offsets[] = {3, 10, 10, 500, 990}; /* items 0 .. 2 and 990 .. 999 in no segment */
    const size_t num_segments = sizeof offsets / sizeof offsets[0] - 1;
    /* 4096 bytes where an allocation's end matters: a GPU allocation ends where asked */
    int32_t *d_in = m->alloc(bytes, m->context), *d_out_base = m->alloc(out_bytes, m->context);
    int32_t *d_keys = m->alloc(bytes + 16, m->context), *d_init = m->alloc(16, m->context);
    size_t *d_offsets = m->alloc(4096, m->context), *d_spare = m->alloc(4096, m->context);
    CHECK(d_in && d_out_base && d_keys && d_init && d_offsets && d_spare, "allocation failed");
    int32_t *d_out = d_out_base + GUARD;
    m->upload(d_in, values, bytes, m->context);
    m->upload(d_keys, keys, bytes, m->context);
    m->upload(d_offsets, offsets, sizeof offsets, m->context);
    m->fill(d_out_base, TEST_POISON_BYTE, out_bytes, m->context);
    m->fill(d_init, 0, 16, m->context);
    cudaStream_t s = m->stream;

    dlscan_scan_args plain = DLSCAN_SCAN_ARGS_INIT;
    plain.d_in = d_in;
    plain.d_out = d_out;
    plain.n = n;
    dlscan_scan_args by_keys = plain, by_offsets = plain, a;
    by_keys.d_keys = d_keys;
    by_offsets.d_offsets = d_offsets;
    by_offsets.num_segments = num_segments;
#define REFUSED(base, change, want)                                                               \
    do {                                                                                          \
        a = base;                                                                                 \
        change;                                                                                   \
        test_expect_refused(h, dlscan_scan(h, &a, s), want, #base ": " #change);                  \
    } while (0)
    REFUSED(by_keys, (a.d_offsets = d_offsets, a.num_segments = num_segments),
            DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_offsets, a.d_keys = d_keys, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(plain, a.num_segments = num_segments, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_offsets, a.num_segments = SIZE_MAX / sizeof(size_t), DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_offsets, a.num_segments = SIZE_MAX, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_keys, a.num_segments = 1, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_keys, a.d_init = d_init, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_keys, a.d_total = d_init, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_offsets, a.d_init = d_init, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_offsets, a.d_total = d_init, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_offsets, (a.d_init = d_init, a.d_total = d_init), DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(by_keys, a.key_type = (dlscan_type)TEST_TYPE_COUNT, DLSCAN_ERROR_INVALID_TYPE);
    REFUSED(by_keys, a.key_type = (dlscan_type)-1, DLSCAN_ERROR_INVALID_TYPE);
    REFUSED(by_keys, a.d_keys = d_in, DLSCAN_ERROR_OVERLAP);
    REFUSED(by_keys, a.d_keys = d_out, DLSCAN_ERROR_OVERLAP);
    REFUSED(by_keys, a.d_keys = d_in + 10, DLSCAN_ERROR_OVERLAP);
    REFUSED(by_keys, a.d_keys = d_out - 8, DLSCAN_ERROR_OVERLAP);
    REFUSED(by_keys, (a.d_out = d_in, a.d_keys = d_in), DLSCAN_ERROR_OVERLAP); /* in place */
    /* keys inside d_in or d_out that run past its allocation: the overlap is what is wrong */
    REFUSED(by_keys, (a.d_keys = d_in + 500, a.key_type = DLSCAN_INT64), DLSCAN_ERROR_OVERLAP);
    REFUSED(by_keys, (a.d_keys = d_out + 500, a.key_type = DLSCAN_INT64), DLSCAN_ERROR_OVERLAP);
    REFUSED(by_offsets, a.d_offsets = (const size_t *)(void *)d_out, DLSCAN_ERROR_OVERLAP);
    REFUSED(by_offsets, a.d_offsets = (const size_t *)(void *)(d_out + n - 2), DLSCAN_ERROR_OVERLAP);
    REFUSED(by_offsets, a.d_offsets = (const size_t *)(void *)((char *)d_offsets + 4),
            DLSCAN_ERROR_MISALIGNED);
    REFUSED(by_keys, a.d_keys = (char *)d_keys + 2, DLSCAN_ERROR_MISALIGNED);
    REFUSED(by_keys, (a.d_keys = (char *)d_keys + 4, a.key_type = DLSCAN_FLOAT64, a.n = 400),
            DLSCAN_ERROR_MISALIGNED);
    if (foreign) {
        REFUSED(by_keys, a.d_keys = foreign, DLSCAN_ERROR_NOT_DEVICE_MEMORY);
        REFUSED(by_offsets, a.d_offsets = foreign, DLSCAN_ERROR_NOT_DEVICE_MEMORY);
    }
    if (gpu) { /* past the end of their allocations: 4 offsets of 5 fit, 924 keys of 1000 */
        REFUSED(by_offsets, a.d_offsets = d_spare + 4096 / sizeof(size_t) - num_segments,
                DLSCAN_ERROR_OUT_OF_BOUNDS);
        REFUSED(by_keys, a.d_keys = (int32_t *)(void *)d_spare + 100, DLSCAN_ERROR_OUT_OF_BOUNDS);
    } else { /* a CPU handle reads the offsets: falling ones, and ones past n */
        static const size_t falling[] = {0, 500, 400, 1000}, past[] = {0, 500, 1001};
        m->upload(d_spare, falling, sizeof falling, m->context);
        REFUSED(by_offsets, (a.d_offsets = d_spare, a.num_segments = 3), DLSCAN_ERROR_INVALID_ARGUMENT);
        m->upload(d_spare, past, sizeof past, m->context);
        REFUSED(by_offsets, (a.d_offsets = d_spare, a.num_segments = 2), DLSCAN_ERROR_INVALID_ARGUMENT);
        REFUSED(by_offsets, (a.d_offsets = d_spare + 2, a.num_segments = 0), DLSCAN_ERROR_INVALID_ARGUMENT);
        REFUSED(by_offsets, a.n = 900, DLSCAN_ERROR_INVALID_ARGUMENT); /* 990 is past n */
        REFUSED(by_offsets, (a.n = 0, a.d_in = NULL, a.d_out = NULL), DLSCAN_ERROR_INVALID_ARGUMENT);
    }
#undef REFUSED
    test_expect_poisoned(m, d_out_base, out_bytes, "a refused segmented scan");

    /* What succeeds and writes nothing: n == 0 (no items; offsets all 0), no segment at all,
     * one empty segment. */
    static const size_t zeros[3] = {0, 0, 0};
    m->upload(d_spare, zeros, sizeof zeros, m->context);
    for (int call = 0; call < 5; ++call) {
        a = call == 0 ? by_keys : by_offsets;
        if (call <= 1) {
            a.n = 0;
            a.d_in = a.d_out = NULL;
        }
        if (call == 1) {
            a.d_offsets = d_spare;
            a.num_segments = 2;
        }
        if (call == 2) { /* {3}: one offset, no segment */
            a.num_segments = 0;
        }
        if (call == 3) { /* {10, 10}: one empty segment */
            a.d_offsets = d_offsets + 1;
            a.num_segments = 1;
        }
        if (call == 4) { /* {990}: no segment, the last offset alone */
            a.d_offsets = d_offsets + num_segments;
            a.num_segments = 0;
        }
        const dlscan_status status = dlscan_scan(h, &a, s);
        EXPECT(status == DLSCAN_SUCCESS, "call %d, which writes nothing: %s (%s)", call,
               dlscan_status_string(status), dlscan_last_error(h));
    }
    test_expect_poisoned(m, d_out_base, out_bytes, "a segmented scan over no items");

    /* A GPU handle cannot read the offsets: with ones that fall or pass n the call goes through
     * and its output is unspecified, but nothing outside d_out[0 .. n - 1] is written (nor
     * read past the last offset: these end their allocation, for compute-sanitizer). */
    if (gpu) {
        static const size_t falling[] = {0, 600, 200, 1000}, past[] = {0, 500, 5000},
                            beyond[] = {2000, 3000}, backward[] = {900, 100};
        const struct {
            const size_t *offsets;
            size_t count;
        } broken[] = {{falling, 4}, {past, 3}, {beyond, 2}, {backward, 2}};
        for (int b = 0; b < 4; ++b) {
            size_t *at = d_spare + 4096 / sizeof(size_t) - broken[b].count;
            m->upload(at, broken[b].offsets, broken[b].count * sizeof(size_t), m->context);
            for (int exclusive = 0; exclusive <= 1; ++exclusive) {
                a = by_offsets;
                a.d_offsets = at;
                a.num_segments = broken[b].count - 1;
                a.exclusive = exclusive;
                const dlscan_status status = dlscan_scan(h, &a, s);
                EXPECT(status == DLSCAN_SUCCESS, "broken offsets %d: %s (%s)", b,
                       dlscan_status_string(status), dlscan_last_error(h));
                test_expect_poisoned(m, d_out_base, GUARD * sizeof(int32_t), "before d_out, broken offsets");
                test_expect_poisoned(m, d_out + n, GUARD * sizeof(int32_t), "after d_out, broken offsets");
            }
        }
    }

    /* The handle still works. */
    size_t unit = 0, tile = 0;
    segment_tiles(h, DLSCAN_INT32, &unit, &tile);
    for (int kind = SEGMENT_KEYS; kind <= SEGMENT_OFFSETS; ++kind) {
        a = kind == SEGMENT_KEYS ? by_keys : by_offsets;
        a.exclusive = 1;
        m->fill(d_out_base, TEST_POISON_BYTE, out_bytes, m->context);
        const dlscan_status status = dlscan_scan(h, &a, s);
        EXPECT(status == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        m->wait(m->context);
        m->download(out, d_out, bytes, m->context);
        const segment_case c = {{DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, 1, TEST_INIT_NONE, 0, 0, n,
                                 TEST_VALUES_NARROW},
                                (segment_kind)kind,
                                DLSCAN_INT32,
                                SEGMENTS_SHORT};
        const segment_data d = {values, kind == SEGMENT_KEYS ? keys : NULL,
                                kind == SEGMENT_KEYS ? NULL : offsets,
                                kind == SEGMENT_KEYS ? 0 : num_segments, 0, out};
        char message[400];
        EXPECT(status != DLSCAN_SUCCESS || segment_check_output(&c, tile, &d, message, sizeof message),
               "after the refusals, by %s: %s", kind == SEGMENT_KEYS ? "keys" : "offsets", message);
    }
    m->release(d_in, m->context);
    m->release(d_out_base, m->context);
    m->release(d_keys, m->context);
    m->release(d_init, m->context);
    m->release(d_offsets, m->context);
    m->release(d_spare, m->context);
}
