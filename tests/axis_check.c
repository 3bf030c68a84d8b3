/*
 * axis_check.c: the shared tests of scans along an axis (see axis_check.h): one case's data and
 * call, the reference (each scan gathered and checked as a plain scan), the sweeps over pairs
 * and shapes, and the refusals.
 */
#include "axis_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pair_check.h"
#include "policy.h"
#include "segment_check.h"

/* Bytes past a separate d_out and past d_totals, poisoned: the call must not write there. */
#define GUARD_BYTES 64

static size_t axis_stride(const axis_case *c) { return c->stride ? c->stride : 1; }

size_t axis_items(const axis_case *c) { return c->outer * c->length * axis_stride(c); }

const char *axis_describe(const axis_case *c, char *buffer, size_t size)
{
    char scan[160];
    test_describe_pair(&c->scan, scan, sizeof scan);
    snprintf(buffer, size, "%s, %s of [%zu][%zu][%zu] (axis_stride %zu)%s", scan,
             axis_stride(c) == 1 ? "rows" : "columns", c->outer, c->length, axis_stride(c),
             c->stride, c->scan.with_total ? " with d_totals" : "");
    return buffer;
}

/* ---- One call ---- */

void axis_make(const axis_case *c, axis_data *d, uint64_t *rng)
{
    const pair_case *p = &c->scan;
    const size_t n = axis_items(c), size = test_type_size(p->out_type);
    const size_t in_bytes = n * test_type_size(p->in_type), bytes = n * size;
    const size_t total_bytes = c->outer * axis_stride(c) * size;
    memset(d, 0, sizeof *d);
    d->input = malloc(in_bytes ? in_bytes : 1);
    d->output = malloc(bytes ? bytes : 1);
    d->totals = malloc(total_bytes ? total_bytes : 1);
    CHECK(d->input && d->output && d->totals, "host allocation of %zu items failed", n);
    test_fill_random(p->in_type, p->values, d->input, n, rng);
    uint64_t item = 0; /* the init: an input item converted to out_type */
    test_fill_random(p->in_type, p->values, &item, 1, rng);
    d->init_bits = test_convert_item(p->in_type, p->out_type, &item);
}

void axis_free(axis_data *d)
{
    free(d->input);
    free(d->output);
    free(d->totals);
    memset(d, 0, sizeof *d);
}

dlscan_status axis_run(dlscan_handle_t h, const test_memory *m, const axis_case *c, axis_data *d)
{
    const pair_case *p = &c->scan;
    const size_t n = axis_items(c), size = test_type_size(p->out_type);
    const size_t in_bytes = n * test_type_size(p->in_type), bytes = n * size;
    const size_t total_bytes = c->outer * axis_stride(c) * size;
    char what[300];
    axis_describe(c, what, sizeof what);
    CHECK(!p->in_place || in_bytes == bytes, "%s: in place needs types of one size", what);
    void *d_in = m->alloc(in_bytes ? in_bytes : 16, m->context);
    void *d_out = p->in_place ? d_in : m->alloc(bytes + GUARD_BYTES, m->context);
    void *d_totals = p->with_total ? m->alloc(total_bytes + GUARD_BYTES, m->context) : NULL;
    CHECK(d_in && d_out && (d_totals || !p->with_total), "%s: allocation failed", what);
    m->upload(d_in, d->input, in_bytes, m->context);
    if (!p->in_place)
        m->fill(d_out, TEST_POISON_BYTE, bytes + GUARD_BYTES, m->context);
    if (d_totals)
        m->fill(d_totals, TEST_POISON_BYTE, total_bytes + GUARD_BYTES, m->context);

    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_out = d_out;
    a.n = n;
    a.in_type = p->in_type;
    a.out_type = p->out_type;
    a.op = p->op;
    a.exclusive = p->exclusive;
    a.init = p->init == TEST_INIT_HOST ? &d->init_bits : NULL;
    a.axis_length = c->length;
    a.axis_stride = c->stride;
    a.d_totals = d_totals;
    const dlscan_status status = dlscan_scan(h, &a, m->stream);

    m->wait(m->context);
    memset(d->output, TEST_POISON_BYTE, bytes);
    m->download(d->output, d_out, bytes, m->context);
    if (!p->in_place)
        test_expect_poisoned(m, (const char *)d_out + bytes, GUARD_BYTES, what);
    if (d_totals) {
        m->download(d->totals, d_totals, total_bytes, m->context);
        test_expect_poisoned(m, (const char *)d_totals + total_bytes, GUARD_BYTES, what);
        m->release(d_totals, m->context);
    }
    m->release(d_in, m->context);
    if (!p->in_place)
        m->release(d_out, m->context);
    return status;
}

/* ---- The reference ---- */

/* Scan (o, j): its items and outputs gathered into `in` and `out` (length items each), checked
 * as a plain scan with the total d_totals holds for it. */
static int check_scan(const axis_case *c, size_t row_tile, const axis_data *d, size_t o, size_t j,
                      void *in, void *out, char *message, size_t message_size)
{
    const pair_case *p = &c->scan;
    const size_t length = c->length, stride = axis_stride(c);
    const size_t in_size = test_type_size(p->in_type), size = test_type_size(p->out_type);
    for (size_t k = 0; k < length; ++k) {
        const size_t at = (o * length + k) * stride + j;
        memcpy((char *)in + k * in_size, (const char *)d->input + at * in_size, in_size);
        memcpy((char *)out + k * size, (const char *)d->output + at * size, size);
    }
    pair_case scan = *p;
    scan.n = length;
    /* Rows: as segments of the segmented scan's tiles, or as scans of their own on tiles twice
     * as large (a GPU's long rows: two more steps of its tree). Columns: one addition per item. */
    const size_t tile = stride == 1 ? row_tile : length > row_tile ? length : row_tile;
    const size_t extra_steps = stride == 1 ? o * length % row_tile + 2 : 0;
    const void *total = p->with_total ? (const char *)d->totals + (o * stride + j) * size : NULL;
    char detail[256];
    if (scan_check_pair_output(&scan, tile, extra_steps, in,
                               p->init == TEST_INIT_HOST ? &d->init_bits : NULL, out, total, detail,
                               sizeof detail))
        return 1;
    snprintf(message, message_size, "scan (%zu, %zu) (items %zu, %zu, ...): %s", o, j,
             o * length * stride + j, o * length * stride + stride + j, detail);
    return 0;
}

int axis_check_output(const axis_case *c, size_t row_tile, const axis_data *d, char *message,
                      size_t message_size)
{
    const pair_case *p = &c->scan;
    void *in = malloc(c->length * test_type_size(p->in_type));
    void *out = malloc(c->length * test_type_size(p->out_type));
    CHECK(in && out, "host allocation of %zu items failed", c->length);
    int ok = 1;
    for (size_t o = 0; o < c->outer && ok; ++o)
        for (size_t j = 0; j < axis_stride(c) && ok; ++j)
            ok = check_scan(c, row_tile, d, o, j, in, out, message, message_size);
    free(in);
    free(out);
    return ok;
}

void axis_check_case(dlscan_handle_t h, const test_memory *m, const axis_case *c, uint64_t *rng)
{
    size_t unit = 0, row_tile = 0;
    segment_tiles(h, c->scan.out_type, &unit, &row_tile);
    axis_data d;
    axis_make(c, &d, rng);
    const dlscan_status status = axis_run(h, m, c, &d);
    char what[300], message[400];
    axis_describe(c, what, sizeof what);
    CHECK(status == DLSCAN_SUCCESS, "%s: %s (%s)", what, dlscan_status_string(status),
          dlscan_last_error(h));
    const int ok = axis_check_output(c, row_tile, &d, message, sizeof message);
    axis_free(&d);
    CHECK(ok, "%s: %s", what, message);
}

/* ---- Sweeps ---- */

/* One shape: outer arrays of length x stride items. */
typedef struct axis_shape {
    size_t outer, length, stride;
} axis_shape;

/* The shapes of axis_check_every_output for the segmented tile `tile` (unit: half of it):
 * rows, then columns. Returns how many it wrote (at most 80). */
static int every_shape(size_t unit, size_t tile, uint64_t *rng, axis_shape shapes[80])
{
    const axis_shape rows[] = {
        {1, 1, 1},         {700, 1, 0},      {1, 2, 1},        {300, 2, 0},
        {200, 3, 1},       {40, 31, 0},      {3, tile - 1, 1}, {1, tile, 0},
        {4, tile, 1},      {5, tile + 1, 0}, {7, unit + 1, 1}, {3, 2 * tile + 1, 0},
        {2, 33 * tile + 1, 1},
        /* rows of whole 16-byte vectors from a tile on: on a GPU, chains of the plain scan's
         * tiles, one tile, a partial last one, many; 300 rows take its persistent kernel */
        {3, 2 * tile, 1},  {5, 3 * tile + 4, 0}, {2, 33 * tile + 8, 1}, {300, tile + 4, 0},
        /* rows of a power of two within a vector, a warp's row of vectors, a warp, a tile: on a
         * GPU, each tile on its own (short rows), with partial last tiles */
        {5, 4, 1},         {67, 8, 0},       {300, 16, 1},     {33, 64, 0},
        {129, 128, 1},     {9, 256, 0},      {7, 512, 1},      {11, 1024, 0},
        {3, tile / 2, 1},  {600, 32, 0},
        /* rows of other lengths from a vector to nearly a tile: on a GPU, tiles of whole rows,
         * each on its own (the first rows start past an aligned vector) */
        {1500, 5, 1},      {5000, 7, 0},     {77, 100, 1},     {9, 1000, 0},
        {6, unit * 2 / 3, 1}, {400, 33, 0},
        {1 + test_random(rng) % 8, 1 + test_random(rng) % (3 * tile), 1}};
    int count = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        shapes[count++] = rows[i];
    const size_t strides[] = {2, 3, 16, 96, 257, tile + 3}; /* (16: two strips of 8; 96: three of 32) */
    const size_t lengths[] = {1, 2, 3, 17, tile - 1, tile + 1};
    for (size_t s = 0; s < sizeof strides / sizeof strides[0]; ++s)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l)
            shapes[count++] = (axis_shape){(s + l) % 2 ? 3 : 1, lengths[l], strides[s]};
    shapes[count++] = (axis_shape){1 + test_random(rng) % 4, 1 + test_random(rng) % (2 * tile),
                                   2 + test_random(rng) % 300};
    /* Two and four columns of one array, of 300 or more plain scan tiles of rows and a partial
     * one: on an sm_90 GPU, a plain scan of rows of lanes (its persistent kernel; rows of 8 or 16
     * bytes of a type into itself); below its threshold of tiles, the column kernel. */
    shapes[count++] = (axis_shape){1, 300 * (size_t)DL_SCAN_TILE_ITEMS_8B + 7, 2};
    shapes[count++] = (axis_shape){1, 300 * (size_t)DL_SCAN_TILE_ITEMS_8B / 2 + 5, 4};
    return count;
}

/* The values of the i-th case of in -> out: pair_check.c's cycle, with mixed magnitudes for
 * every fourth float output (sums that round). */
static test_values axis_values(dlscan_type in, dlscan_type out, int i)
{
    return i % 4 == 3 && test_type_is_float(out) ? TEST_VALUES_MIXED_MAGNITUDE
                                                 : pair_check_values(in, out, i);
}

void axis_check_every_output(dlscan_handle_t h, const test_memory *m, dlscan_type in, size_t max_n,
                             uint64_t *rng)
{
    int variant = 0;
    for (int o = 0; o < TEST_TYPE_COUNT; ++o) {
        const dlscan_type out = (dlscan_type)o;
        if (!test_pair_supported(in, out))
            continue;
        size_t unit = 0, tile = 0;
        segment_tiles(h, out, &unit, &tile);
        axis_shape shapes[80];
        const int count = every_shape(unit, tile, rng, shapes);
        const int same_size = test_type_size(in) == test_type_size(out);
        for (int i = 0; i < count; ++i) {
            const size_t stride = shapes[i].stride ? shapes[i].stride : 1;
            const size_t n = shapes[i].outer * shapes[i].length * stride;
            if (n > max_n)
                continue;
            for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
                for (int exclusive = 0; exclusive <= 1; ++exclusive, ++variant) {
                    /* Shapes past 64 tiles run two of the six operator cases, turning. */
                    if (n > 64 * tile && (2 * op + exclusive + i) % 3 != 0)
                        continue;
                    /* Init, d_totals and in place turn at different paces, so that each
                     * operator meets each combination over the shapes. */
                    const axis_case c = {{in, out, (dlscan_op)op, exclusive,
                                          (variant / 3 + i) % 2 ? TEST_INIT_HOST : TEST_INIT_NONE,
                                          (variant + i / 2) % 3 != 0, same_size && (variant / 5) % 2,
                                          n, axis_values(in, out, variant + i)},
                                         shapes[i].outer,
                                         shapes[i].length,
                                         shapes[i].stride};
                    axis_check_case(h, m, &c, rng);
                }
        }
    }
}

void axis_check_random_shapes(dlscan_handle_t h, const test_memory *m, size_t max_n, int cases,
                              uint64_t *rng)
{
    static const struct {
        dlscan_type in, out;
        dlscan_op op;
        test_values values;
    } scans[] = {{DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, TEST_VALUES_UNIFORM},
                 {DLSCAN_FLOAT32, DLSCAN_FLOAT32, DLSCAN_SUM, TEST_VALUES_MIXED_MAGNITUDE},
                 {DLSCAN_FLOAT16, DLSCAN_FLOAT16, DLSCAN_SUM, TEST_VALUES_UNIFORM},
                 {DLSCAN_INT64, DLSCAN_INT64, DLSCAN_MIN, TEST_VALUES_NARROW},
                 {DLSCAN_FLOAT64, DLSCAN_FLOAT64, DLSCAN_MAX, TEST_VALUES_MIXED_MAGNITUDE},
                 {DLSCAN_INT8, DLSCAN_INT32, DLSCAN_SUM, TEST_VALUES_HIGH},
                 {DLSCAN_FLOAT16, DLSCAN_FLOAT32, DLSCAN_SUM, TEST_VALUES_MIXED_MAGNITUDE}};
    const int count = (int)(sizeof scans / sizeof scans[0]);
    static const size_t strides[] = {1, 0, 2, 3, 16, 257};
    for (int i = 0; i < cases; ++i) {
        const int s = i % count;
        size_t unit = 0, tile = 0;
        segment_tiles(h, scans[s].out, &unit, &tile);
        const uint64_t r = test_random(rng);
        size_t stride = i % 8 == 7 ? 2 + test_random(rng) % (2 * tile) : strides[r % 6];
        size_t length = (r >> 8) % 4 == 0 ? 1 + (r >> 16) % 5 : 1 + test_random(rng) % (4 * tile);
        while (length * (stride ? stride : 1) > max_n) { /* one array at least within max_n */
            length = length / 2 + 1;
            stride /= 2;
        }
        const size_t per_array = length * (stride ? stride : 1);
        const size_t most = max_n / per_array < 8 ? max_n / per_array : 8;
        const size_t outer = 1 + test_random(rng) % most;
        const int same_size = test_type_size(scans[s].in) == test_type_size(scans[s].out);
        const axis_case c = {{scans[s].in, scans[s].out, scans[s].op, (int)(r >> 40 & 1),
                              r >> 41 & 1 ? TEST_INIT_HOST : TEST_INIT_NONE, (int)(r >> 42 & 1),
                              same_size && (r >> 43 & 1), outer * per_array, scans[s].values},
                             outer,
                             length,
                             stride};
        axis_check_case(h, m, &c, rng);
    }
}

/* ---- Refusals ---- */

/* Expects `status` to be `want`, with a message that names `argument`. */
static void expect_refused(dlscan_handle_t h, dlscan_status status, dlscan_status want,
                           const char *argument, const char *what)
{
    test_expect_refused(h, status, want, what);
    EXPECT(strstr(dlscan_last_error(h), argument) != NULL, "%s: the message \"%s\" does not name %s",
           what, dlscan_last_error(h), argument);
}

void axis_check_bad_input(dlscan_handle_t h, const test_memory *m, void *foreign, uint64_t *rng)
{
    /* int32 rows: 10 arrays of 4 x 25 items (columns: stride 25, or rows of 100). */
    enum { N = 1000, LENGTH = 4, STRIDE = 25, TOTALS = N / LENGTH };
    const size_t n = N, bytes = n * sizeof(int32_t), total_bytes = TOTALS * sizeof(int32_t);
    int32_t values[N];
    test_fill_random(DLSCAN_INT32, TEST_VALUES_NARROW, values, n, rng);
    int32_t *d_in = m->alloc(bytes, m->context), *d_out = m->alloc(bytes, m->context);
    int32_t *d_totals = m->alloc(total_bytes + 16, m->context), *d_spare = m->alloc(64, m->context);
    size_t *d_offsets = m->alloc(2 * sizeof(size_t), m->context);
    CHECK(d_in && d_out && d_totals && d_spare && d_offsets, "allocation failed");
    const size_t offsets[2] = {0, N};
    m->upload(d_in, values, bytes, m->context);
    m->upload(d_offsets, offsets, sizeof offsets, m->context);
    m->fill(d_out, TEST_POISON_BYTE, bytes, m->context);
    m->fill(d_totals, TEST_POISON_BYTE, total_bytes + 16, m->context);
    m->fill(d_spare, 0, 64, m->context);
    const int32_t init = 5;
    cudaStream_t s = m->stream;

    dlscan_scan_args columns = DLSCAN_SCAN_ARGS_INIT;
    columns.d_in = d_in;
    columns.d_out = d_out;
    columns.n = n;
    columns.init = &init;
    columns.axis_length = LENGTH;
    columns.axis_stride = STRIDE;
    columns.d_totals = d_totals;
    dlscan_scan_args rows = columns, a;
    rows.axis_stride = 0;
    rows.axis_length = 100;
    rows.d_totals = NULL;
/* dlscan_scan and dlscan_reserve_scan, which checks its arguments the same way. */
#define REFUSED(base, change, want, argument)                                                     \
    do {                                                                                          \
        a = base;                                                                                 \
        change;                                                                                   \
        expect_refused(h, dlscan_scan(h, &a, s), want, argument, #base ": " #change);             \
        expect_refused(h, dlscan_reserve_scan(h, &a), want, argument,                             \
                       "dlscan_reserve_scan: " #base ": " #change);                              \
    } while (0)
    REFUSED(columns, a.n = n - 1, DLSCAN_ERROR_INVALID_ARGUMENT, "axis_length");
    REFUSED(columns, a.n = 50, DLSCAN_ERROR_INVALID_ARGUMENT, "axis_length"); /* a multiple of 25 */
    REFUSED(columns, a.axis_stride = 3, DLSCAN_ERROR_INVALID_ARGUMENT, "axis_length");
    REFUSED(rows, a.axis_length = 3, DLSCAN_ERROR_INVALID_ARGUMENT, "axis_length");
    REFUSED(rows, a.axis_length = 2 * n, DLSCAN_ERROR_INVALID_ARGUMENT, "axis_length");
    REFUSED(columns, (a.axis_length = SIZE_MAX / 2, a.axis_stride = 4), DLSCAN_ERROR_INVALID_ARGUMENT,
            "axis_length");
    REFUSED(columns, a.axis_length = 0, DLSCAN_ERROR_INVALID_ARGUMENT, "axis_stride");
    REFUSED(columns, (a.axis_length = 0, a.axis_stride = 0), DLSCAN_ERROR_INVALID_ARGUMENT, "d_totals");
    REFUSED(columns, (a.init = NULL, a.d_init = d_spare), DLSCAN_ERROR_INVALID_ARGUMENT, "d_init");
    REFUSED(rows, a.d_total = d_spare, DLSCAN_ERROR_INVALID_ARGUMENT, "d_total");
    REFUSED(columns, a.d_keys = d_spare, DLSCAN_ERROR_INVALID_ARGUMENT, "d_keys");
    REFUSED(rows, (a.d_offsets = d_offsets, a.num_segments = 1), DLSCAN_ERROR_INVALID_ARGUMENT,
            "d_offsets");
    REFUSED(columns, a.d_totals = d_in, DLSCAN_ERROR_OVERLAP, "d_totals");
    REFUSED(columns, a.d_totals = d_in + n - 10, DLSCAN_ERROR_OVERLAP, "d_totals");
    REFUSED(columns, a.d_totals = d_out, DLSCAN_ERROR_OVERLAP, "d_totals");
    REFUSED(columns, a.d_totals = d_out + 900, DLSCAN_ERROR_OVERLAP, "d_totals");
    REFUSED(columns, (a.d_out = d_in, a.d_totals = d_in + 500), DLSCAN_ERROR_OVERLAP, "d_totals");
    REFUSED(columns, a.d_totals = (int32_t *)(void *)((char *)d_totals + 2), DLSCAN_ERROR_MISALIGNED,
            "d_totals");
    REFUSED(columns, (a.out_type = a.in_type = DLSCAN_INT64, a.n = n / 2, a.axis_stride = 5,
                      a.d_totals = d_totals + 1),
            DLSCAN_ERROR_MISALIGNED, "d_totals");
    if (foreign)
        REFUSED(columns, a.d_totals = foreign, DLSCAN_ERROR_NOT_DEVICE_MEMORY, "d_totals");
#undef REFUSED
    expect_refused(h, dlscan_reserve_scan(h, NULL), DLSCAN_ERROR_INVALID_ARGUMENT, "args",
                   "dlscan_reserve_scan(h, NULL)");
    EXPECT(dlscan_reserve_scan(NULL, &columns) == DLSCAN_ERROR_INVALID_HANDLE,
           "dlscan_reserve_scan(NULL, ...) is not refused as an invalid handle");
    /* Reserving without the items' buffers: all of them NULL, or none (a scan takes none NULL). */
    a = columns;
    a.d_in = a.d_out = NULL;
    expect_refused(h, dlscan_scan(h, &a, s), DLSCAN_ERROR_INVALID_ARGUMENT, "d_in",
                   "columns: d_in = d_out = NULL");
    a.d_out = d_out;
    expect_refused(h, dlscan_reserve_scan(h, &a), DLSCAN_ERROR_INVALID_ARGUMENT, "d_in",
                   "dlscan_reserve_scan: columns: d_in = NULL, d_out set");
    /* Reserving for good calls succeeds and writes nothing, with or without the buffers. */
    dlscan_scan_args unbuffered[2] = {columns, rows};
    for (int i = 0; i < 2; ++i)
        unbuffered[i].d_in = unbuffered[i].d_out = NULL;
    const dlscan_status reserved[4] = {dlscan_reserve_scan(h, &columns), dlscan_reserve_scan(h, &rows),
                                       dlscan_reserve_scan(h, &unbuffered[0]),
                                       dlscan_reserve_scan(h, &unbuffered[1])};
    for (int i = 0; i < 4; ++i)
        EXPECT(reserved[i] == DLSCAN_SUCCESS, "dlscan_reserve_scan of the %s%s: %s (%s)",
               i % 2 ? "rows" : "columns", i >= 2 ? ", d_in = d_out = NULL" : "",
               dlscan_status_string(reserved[i]), dlscan_last_error(h));
    test_expect_poisoned(m, d_out, bytes, "a refused scan along an axis");
    test_expect_poisoned(m, d_totals, total_bytes + 16, "a refused scan along an axis (d_totals)");

    /* n == 0 along an axis succeeds and writes nothing: there are no scans, so no totals. */
    a = columns;
    a.n = 0;
    a.d_in = a.d_out = NULL;
    const dlscan_status empty = dlscan_scan(h, &a, s);
    EXPECT(empty == DLSCAN_SUCCESS, "n == 0 along an axis: %s (%s)", dlscan_status_string(empty),
           dlscan_last_error(h));
    test_expect_poisoned(m, d_totals, total_bytes + 16, "n == 0 along an axis (d_totals)");

    /* The handle still works: the columns, then the rows. */
    for (int call = 0; call < 2; ++call) {
        const axis_case c = {{DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, call, TEST_INIT_HOST, call == 0,
                              0, n, TEST_VALUES_NARROW},
                             call == 0 ? n / (LENGTH * STRIDE) : n / 100,
                             call == 0 ? LENGTH : 100,
                             call == 0 ? STRIDE : 0};
        axis_data d;
        axis_make(&c, &d, rng);
        const dlscan_status status = axis_run(h, m, &c, &d);
        EXPECT(status == DLSCAN_SUCCESS, "after the refusals, call %d: %s (%s)", call,
               dlscan_status_string(status), dlscan_last_error(h));
        size_t unit = 0, row_tile = 0;
        segment_tiles(h, DLSCAN_INT32, &unit, &row_tile);
        char message[400];
        EXPECT(status != DLSCAN_SUCCESS || axis_check_output(&c, row_tile, &d, message, sizeof message),
               "after the refusals, call %d: %s", call, message);
        axis_free(&d);
    }
    m->release(d_in, m->context);
    m->release(d_out, m->context);
    m->release(d_totals, m->context);
    m->release(d_spare, m->context);
    m->release(d_offsets, m->context);
}
