/*
 * operator_check.c: the shared checks of user operators (operator_check.h).
 */
#include "operator_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "launch.h"
#include "policy.h"

/* Items a GPU tile of a user operator holds (device/policy.h): the sizes at its edges are the
 * ones that matter on either backend. */
static size_t tile_items(size_t state_bytes) { return (size_t)DL_USER_THREADS * DL_USER_ITEMS(state_bytes); }

static double uniform(uint64_t *rng) { return (double)(test_random(rng) >> 11) * 0x1p-53; } /* [0, 1) */

/* ---------------------------------------------------------------- one call */

enum { INIT_NONE, INIT_HOST, INIT_DEVICE };

typedef struct op_call {
    dlscan_operator_t op;
    size_t state_bytes, in_bytes, in2_bytes, out_bytes;
    size_t n;
    int exclusive;
    int init;           /* INIT_* */
    const void *init_state;
    int with_total;
    int in_place;       /* d_out == d_in (in_bytes == out_bytes) */
    const void *in;     /* host */
    const void *in2;    /* host, or NULL */
    size_t axis_length; /* rows of this length (axis_stride 1), or 0 */
    void *totals;       /* along rows: each row's total comes back here (host), or NULL */
    const size_t *offsets; /* segments: num_segments + 1 offsets (host), or NULL */
    size_t num_segments;
    const void *keys;      /* segments by key: n keys of key_bytes (host), or NULL */
    dlscan_type key_type;
    size_t key_bytes;
    size_t axis_stride; /* columns: arrays [n / (axis_length x axis_stride)][axis_length][axis_stride] */
} op_call;

#define PAD_ITEMS 4 /* poisoned items past the output, which must stay poisoned */

/* Runs the call through `m`; out (n items) and total (one state) come back to the host. */
static void op_run(dlscan_handle_t h, const test_memory *m, const op_call *c, void *out, void *total)
{
    const size_t n = c->n, out_bytes = (n + PAD_ITEMS) * c->out_bytes;
    const size_t in_bytes = n * c->in_bytes > out_bytes ? n * c->in_bytes : out_bytes;
    unsigned char *d_in = m->alloc(in_bytes + 1, m->context);
    unsigned char *d_out = c->in_place ? d_in : m->alloc(out_bytes, m->context);
    unsigned char *d_in2 = c->in2 ? m->alloc(n * c->in2_bytes + 1, m->context) : NULL;
    unsigned char *d_state = m->alloc(2 * 32, m->context); /* init, total */
    m->fill(d_in, TEST_POISON_BYTE, in_bytes, m->context);
    if (n)
        m->upload(d_in, c->in, n * c->in_bytes, m->context);
    if (!c->in_place)
        m->fill(d_out, TEST_POISON_BYTE, out_bytes, m->context);
    else if (c->out_bytes * n < out_bytes)
        m->fill(d_out + n * c->out_bytes, TEST_POISON_BYTE, out_bytes - n * c->out_bytes, m->context);
    if (d_in2 && n)
        m->upload(d_in2, c->in2, n * c->in2_bytes, m->context);
    m->fill(d_state, TEST_POISON_BYTE, 64, m->context);
    if (c->init == INIT_DEVICE)
        m->upload(d_state, c->init_state, c->state_bytes, m->context);

    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.custom = c->op;
    a.d_in = d_in;
    a.d_in2 = d_in2;
    a.d_out = d_out;
    a.n = n;
    a.exclusive = c->exclusive;
    a.init = c->init == INIT_HOST ? c->init_state : NULL;
    a.d_init = c->init == INIT_DEVICE ? d_state : NULL;
    a.d_total = c->with_total ? d_state + 32 : NULL;
    const size_t rows = c->axis_length ? n / c->axis_length : 0, totals_bytes = (rows + 1) * c->state_bytes;
    unsigned char *d_totals = c->totals ? m->alloc(totals_bytes, m->context) : NULL;
    a.axis_length = c->axis_length;
    a.axis_stride = c->axis_stride;
    a.d_totals = d_totals;
    size_t *d_offsets = NULL;
    if (c->offsets) {
        d_offsets = m->alloc((c->num_segments + 1) * sizeof(size_t), m->context);
        m->upload(d_offsets, c->offsets, (c->num_segments + 1) * sizeof(size_t), m->context);
        a.d_offsets = d_offsets;
        a.num_segments = c->num_segments;
    }
    unsigned char *d_keys = NULL;
    if (c->keys) { /* (one key past 16-byte alignment in half the variants: the kernels' other path) */
        const size_t shift = c->exclusive != (c->init != INIT_NONE) ? c->key_bytes : 0;
        d_keys = m->alloc((n + 1) * c->key_bytes, m->context);
        if (n)
            m->upload(d_keys + shift, c->keys, n * c->key_bytes, m->context);
        a.d_keys = d_keys + shift;
        a.key_type = c->key_type;
    }
    if (d_totals)
        m->fill(d_totals, TEST_POISON_BYTE, totals_bytes, m->context);
    CHECK_OK(h, dlscan_scan(h, &a, m->stream));
    m->wait(m->context);
    if (d_totals) { /* each row's, and nothing past them */
        unsigned char *totals = malloc(totals_bytes);
        CHECK(totals, "malloc");
        m->download(totals, d_totals, totals_bytes, m->context);
        memcpy(c->totals, totals, rows * c->state_bytes);
        for (size_t i = rows * c->state_bytes; i < totals_bytes; ++i)
            CHECK(totals[i] == TEST_POISON_BYTE, "%zu rows: byte %zu past the totals was written", rows,
                  i - rows * c->state_bytes);
        free(totals);
        m->release(d_totals, m->context);
    }

    unsigned char *back = malloc(out_bytes);
    CHECK(back, "malloc");
    m->download(back, d_out, out_bytes, m->context);
    memcpy(out, back, n * c->out_bytes);
    for (size_t i = n * c->out_bytes; i < out_bytes; ++i)
        CHECK(back[i] == TEST_POISON_BYTE, "n = %zu: byte %zu past the output was written", n, i - n * c->out_bytes);
    unsigned char state[64];
    m->download(state, d_state, 64, m->context);
    if (c->with_total)
        memcpy(total, state + 32, c->state_bytes);
    for (size_t i = 32 + (c->with_total ? c->state_bytes : 0); i < 64; ++i)
        CHECK(state[i] == TEST_POISON_BYTE, "n = %zu: byte %zu past the total was written", n, i - 32);
    free(back);
    if (!c->in_place)
        m->release(d_out, m->context);
    m->release(d_in, m->context);
    if (d_in2)
        m->release(d_in2, m->context);
    m->release(d_state, m->context);
    if (d_offsets)
        m->release(d_offsets, m->context);
    if (d_keys)
        m->release(d_keys, m->context);
}

/* The variants of a size: exclusive, init, total, in place, cycled by the case number. */
static void op_variant(op_call *c, int number, int may_in_place)
{
    c->exclusive = number % 2;
    c->init = (number / 2) % 3;
    c->with_total = (number / 3) % 2 || c->init == INIT_DEVICE;
    c->in_place = may_in_place && (number / 5) % 2;
}

/* ---------------------------------------------------------------- the built-ins */

/* Bound on a float result's error: (rounds) eps times the magnitude the result is made of. On a
 * GPU a result goes through at most about 2 log2 n + 64 roundings in the tiles' trees and
 * look-back windows plus one per tile before it in the chain of inclusive prefixes (n / 512 at
 * the least tile); a CPU handle folds a user operator in order, n roundings. Stated once here for
 * every float check below. */
static int on_gpu;
static double rounds(size_t n)
{
    return on_gpu ? 2.0 * log2((double)n + 2) + 64 + (double)n / 512 : (double)n + 64;
}

/* A product's relative error, in any order of its n - 1 multiplications: at most about n eps,
 * and their roundings add up as a random walk, so (16 sqrt(n) + 64) eps holds all but never
 * (a missing or doubled item near 1 +- 2^-8 moves the product 200 times that at n = 2^22). */
static double product_rounds(size_t n) { return 16.0 * sqrt((double)n) + 64; }

/* scalar: 0 a from an array; 1 and 2 a scalar a, drawn afresh (|a| in [0.5, 1), negative for 1,
 * positive for 2). On a GPU handle the second scalar a's operator must come from the process's
 * cache: a is a constant of the operator's module, not of its source. */
static void check_recurrence(dlscan_handle_t h, const test_memory *m, dlscan_type type, int scalar, size_t max_n,
                             uint64_t *rng)
{
    const int f32 = type == DLSCAN_FLOAT32;
    const size_t size = f32 ? 4 : 8;
    const float a32 = (float)((0.5 + 0.5 * uniform(rng)) * (scalar == 1 ? -1 : 1));
    const double eps = f32 ? 0x1p-24 : 0x1p-53, scalar_a = a32;
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, type,
                                        !scalar ? NULL : f32 ? (const void *)&a32 : (const void *)&scalar_a, &op));
    int source = -1;
    CHECK_OK(h, dlscan_operator_info(op, NULL, &source));
    EXPECT(!on_gpu || scalar != 2 || source == 1, "%s recurrence with a second scalar a: source %d, want 1 (the process's cache)",
           f32 ? "float32" : "float64", source);
    size_t sizes[64];
    const int count = test_edge_sizes(tile_items(2 * size), max_n, rng, sizes);
    for (int s = 0; s < count; ++s) {
        const size_t n = sizes[s];
        unsigned char *a = malloc(n * size + 1), *b = malloc(n * size + 1), *out = malloc(n * size + 1);
        CHECK(a && b && out, "malloc");
        double *ad = malloc((n + 1) * sizeof(double)), *bd = malloc((n + 1) * sizeof(double));
        CHECK(ad && bd, "malloc");
        for (size_t i = 0; i < n; ++i) { /* decays: |a| in [0.5, 1), b in [-1, 1] */
            ad[i] = scalar ? scalar_a : (0.5 + 0.5 * uniform(rng)) * (test_random(rng) & 1 ? -1 : 1);
            bd[i] = 2 * uniform(rng) - 1;
            if (f32) {
                const float x = (float)ad[i], y = (float)bd[i];
                ad[i] = x, bd[i] = y;
                memcpy(a + 4 * i, &x, 4), memcpy(b + 4 * i, &y, 4);
            } else {
                memcpy(a + 8 * i, &ad[i], 8), memcpy(b + 8 * i, &bd[i], 8);
            }
        }
        op_call c = {op, 2 * size, size, scalar ? 0 : size, size, n, 0, 0, NULL, 0, 0,
                     scalar ? b : a, scalar ? NULL : b, 0, NULL, NULL, 0, NULL, DLSCAN_INT32, 0, 0};
        op_variant(&c, s, scalar);
        const double h0 = c.init != INIT_NONE ? 2 * uniform(rng) - 1 : 0.0;
        unsigned char init[16], total[16];
        if (f32) {
            const float state[2] = {1.0f, (float)h0};
            memcpy(init, state, 8);
        } else {
            const double state[2] = {1.0, h0};
            memcpy(init, state, 16);
        }
        c.init_state = init;
        op_run(h, m, &c, out, total);
        /* The reference, and the recurrence of magnitudes that bounds its error. */
        long double hx = h0, magnitude = fabs(h0), product = 1;
        int bad = 0;
        const double tolerance = rounds(n) * eps;
        for (size_t i = 0; i < n && bad < 5; ++i) {
            const long double before = hx, before_magnitude = magnitude;
            hx = ad[i] * hx + bd[i];
            magnitude = fabsl((long double)ad[i]) * magnitude + fabsl((long double)bd[i]);
            product *= ad[i];
            const long double want = c.exclusive ? before : hx, scale = c.exclusive ? before_magnitude : magnitude;
            const double got = f32 ? (double)((const float *)out)[i] : ((const double *)out)[i];
            if (!(fabsl(got - want) <= tolerance * (scale + 1e-30))) {
                EXPECT(0, "%s recurrence%s n = %zu (case %d) item %zu: %.9g, want %.9Lg (bound %.3g)",
                       f32 ? "float32" : "float64", scalar ? " with a scalar a" : "", n, s, i, got, want,
                       tolerance * (double)scale);
                ++bad;
            }
        }
        if (c.with_total && !bad) {
            double ta, tb;
            if (f32)
                ta = ((const float *)total)[0], tb = ((const float *)total)[1];
            else
                ta = ((const double *)total)[0], tb = ((const double *)total)[1];
            const double tiny = f32 ? 0x1p-126 : 0x1p-1022; /* a product of many a's underflows */
            /* (one scalar a's power rounds alike at every step: its errors add up in a line, not as
             * product_rounds's random walk) */
            const double product_bound = scalar ? (double)n + 64 : product_rounds(n);
            EXPECT(fabsl(tb - hx) <= tolerance * (magnitude + 1e-30) &&
                       fabsl(ta - product) <= product_bound * eps * fabsl(product) + 4 * tiny,
                   "recurrence n = %zu: total (%.9g, %.9g), want (%.9Lg, %.9Lg)", n, ta, tb, product, hx);
        }
        free(a), free(b), free(out), free(ad), free(bd);
    }
    dlscan_operator_destroy(op);
}

static void check_product_and_logsumexp(dlscan_handle_t h, const test_memory *m, dlscan_type type, int logsumexp,
                                        size_t max_n, uint64_t *rng)
{
    const int f32 = type == DLSCAN_FLOAT32, f64 = type == DLSCAN_FLOAT64, real = f32 || f64;
    const size_t size = test_type_size(type);
    const double eps = f32 ? 0x1p-24 : 0x1p-53;
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_builtin(h, logsumexp ? DLSCAN_BUILTIN_LOGSUMEXP : DLSCAN_BUILTIN_PRODUCT, type, NULL, &op));
    const size_t state_bytes = logsumexp ? 2 * size : size;
    size_t sizes[64];
    const int count = test_edge_sizes(tile_items(state_bytes), max_n, rng, sizes);
    for (int s = 0; s < count; ++s) {
        const size_t n = sizes[s];
        unsigned char *in = malloc(n * size + 1), *out = malloc(n * size + 1);
        double *x = malloc((n + 1) * sizeof(double));
        CHECK(in && out && x, "malloc");
        for (size_t i = 0; i < n; ++i) {
            if (!real) { /* odd integers: a product never turns 0 */
                const uint64_t v = test_random(rng) | 1;
                memcpy(in + i * size, &v, size);
                continue;
            }
            /* products: near 1 (a missing item moves the result by up to 0.4%); logsumexp: [-8, 8],
             * with -inf at one item in 64 */
            x[i] = logsumexp ? (test_random(rng) % 64 == 0 ? -INFINITY : 16 * uniform(rng) - 8)
                             : 1 + (2 * uniform(rng) - 1) * 0x1p-8;
            if (f32) {
                const float v = (float)x[i];
                x[i] = v;
                memcpy(in + 4 * i, &v, 4);
            } else {
                memcpy(in + 8 * i, &x[i], 8);
            }
        }
        op_call c = {op, state_bytes, size, 0, size, n, 0, 0, NULL, 0, 0, in, NULL, 0, NULL, NULL, 0, NULL, DLSCAN_INT32, 0, 0};
        op_variant(&c, s, 1);
        unsigned char init[16], total[16];
        double init_value = 1; /* products: the init's value; logsumexp: its maximum (s = 1) */
        if (!real) {
            const uint64_t v = test_random(rng) | 1;
            memcpy(init, &v, size);
        } else if (logsumexp) {
            init_value = 4 * uniform(rng) - 2;
            if (f32) {
                const float state[2] = {(float)init_value, 1.0f};
                init_value = state[0];
                memcpy(init, state, 8);
            } else {
                const double state[2] = {init_value, 1.0};
                memcpy(init, state, 16);
            }
        } else {
            init_value = 1 + (2 * uniform(rng) - 1) * 0x1p-8;
            if (f32) {
                const float v = (float)init_value;
                init_value = v;
                memcpy(init, &v, 4);
            } else {
                memcpy(init, &init_value, 8);
            }
        }
        c.init_state = init;
        op_run(h, m, &c, out, total);
        const int with_init = c.init != INIT_NONE;
        int bad = 0;
        if (!real) { /* exact, modulo 2^bits */
            uint64_t acc = 1, init_bits = 0;
            memcpy(&init_bits, init, size);
            if (with_init)
                acc = init_bits;
            for (size_t i = 0; i < n && bad < 5; ++i) {
                uint64_t v = 0, got = 0;
                memcpy(&v, in + i * size, size);
                const uint64_t before = acc;
                acc *= v;
                const uint64_t mask = size == 4 ? 0xffffffffull : ~0ull;
                memcpy(&got, out + i * size, size);
                const uint64_t want = (c.exclusive ? before : acc) & mask;
                if (got != want) {
                    EXPECT(0, "%s product n = %zu item %zu: %llu, want %llu", test_type_name(type), n, i,
                           (unsigned long long)got, (unsigned long long)want);
                    ++bad;
                }
            }
        } else {
            /* Reference: the running product, or the log of the running sum of exps in long double. */
            long double acc = logsumexp ? (with_init ? expl(init_value) : 0) : (with_init ? init_value : 1);
            const double tolerance = rounds(n) * eps;
            for (size_t i = 0; i < n && bad < 5; ++i) {
                const long double before = acc;
                acc = logsumexp ? acc + expl(x[i]) : acc * x[i];
                const long double value = c.exclusive ? before : acc;
                const long double want = logsumexp ? logl(value) : value;
                const double got = f32 ? (double)((const float *)out)[i] : ((const double *)out)[i];
                /* products: relative; logsumexp: absolute, its result's error is the sum's relative */
                const long double bound = logsumexp ? tolerance * 4 : product_rounds(n) * eps * fabsl(want);
                const int same_inf = isinf(got) && isinf((double)want) && (got < 0) == (want < 0);
                if (!same_inf && !(fabsl(got - want) <= bound)) {
                    EXPECT(0, "%s %s n = %zu (case %d) item %zu: %.9g, want %.9Lg", test_type_name(type),
                           logsumexp ? "logsumexp" : "product", n, s, i, got, want);
                    ++bad;
                }
            }
        }
        free(in), free(out), free(x);
    }
    dlscan_operator_destroy(op);
}

static void check_complex_recurrence(dlscan_handle_t h, const test_memory *m, dlscan_type type, int scalar,
                                     int along_rows, size_t max_n, uint64_t *rng); /* (below, after the rows' helpers) */

void operator_check_builtins(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    on_gpu = dlscan_backend_name(h)[0] == 'g';
    for (int scalar = 0; scalar <= 2; ++scalar) {
        check_recurrence(h, m, DLSCAN_FLOAT32, scalar, max_n, rng);
        check_recurrence(h, m, DLSCAN_FLOAT64, scalar, max_n, rng);
    }
    for (int scalar = 0; scalar <= 1; ++scalar) {
        check_complex_recurrence(h, m, DLSCAN_FLOAT32, scalar, 0, max_n, rng);
        check_complex_recurrence(h, m, DLSCAN_FLOAT64, scalar, 0, max_n, rng);
    }
    const dlscan_type product_types[] = {DLSCAN_INT32, DLSCAN_UINT64, DLSCAN_FLOAT32, DLSCAN_FLOAT64};
    for (size_t t = 0; t < sizeof product_types / sizeof product_types[0]; ++t)
        check_product_and_logsumexp(h, m, product_types[t], 0, max_n, rng);
    check_product_and_logsumexp(h, m, DLSCAN_FLOAT32, 1, max_n, rng);
    check_product_and_logsumexp(h, m, DLSCAN_FLOAT64, 1, max_n, rng);
}

/* ---------------------------------------------------------------- operators written here */

/* 2x2 matrices of uint32 and uint64, row-major, multiplied earlier x later modulo 2^bits. */
#define MATRIX_SOURCE(T)                                                                           \
    "struct dlscan_state { " T " m[4]; };\n"                                                       \
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)\n"                     \
    "{\n"                                                                                          \
    "    dlscan_state z;\n"                                                                        \
    "    z.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2]; z.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];\n" \
    "    z.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2]; z.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];\n" \
    "    return z;\n"                                                                              \
    "}\n"
#define MATRIX_FUNCTION(NAME, T)                                                                   \
    static void NAME(void *r, const void *a, const void *b)                                        \
    {                                                                                              \
        T x[4], y[4], z[4];                                                                        \
        memcpy(x, a, sizeof x);                                                                    \
        memcpy(y, b, sizeof y);                                                                    \
        z[0] = x[0] * y[0] + x[1] * y[2], z[1] = x[0] * y[1] + x[1] * y[3];                        \
        z[2] = x[2] * y[0] + x[3] * y[2], z[3] = x[2] * y[1] + x[3] * y[3];                        \
        memcpy(r, z, sizeof z);                                                                    \
    }
MATRIX_FUNCTION(matrix32, uint32_t)
MATRIX_FUNCTION(matrix64, uint64_t)

/* Upper-triangular 2x2 matrices [[a, b], [0, c]] of uint32, multiplied earlier x later: a
 * 12-byte state, whose descriptor takes a padding word (protocol.h, DL_DESCRIPTOR_WORDS). */
static const char triangle_source[] =
    "struct dlscan_state { unsigned int a, b, c; };\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)\n"
    "{ return dlscan_state{x.a * y.a, x.a * y.b + x.b * y.c, x.c * y.c}; }\n";

static void triangle_combine(void *r, const void *p, const void *q)
{
    uint32_t x[3], y[3], z[3];
    memcpy(x, p, sizeof x);
    memcpy(y, q, sizeof y);
    z[0] = x[0] * y[0], z[1] = x[0] * y[1] + x[1] * y[2], z[2] = x[2] * y[2];
    memcpy(r, z, sizeof z);
}

/* Arg-max over (value, index) items: the larger value, of equal ones the earlier. */
typedef struct arg_max {
    float value;
    uint32_t index;
} arg_max;

static const char arg_max_source[] =
    "struct dlscan_state { float value; unsigned int index; };\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y) { return y.value > x.value ? y : x; }\n";

static void arg_max_combine(void *r, const void *a, const void *b)
{
    arg_max x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    memcpy(r, y.value > x.value ? &y : &x, sizeof x);
}

static const char sum_source[] =
    "typedef unsigned int dlscan_state;\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y) { return x + y; }\n";

static void sum_combine(void *r, const void *a, const void *b)
{
    uint32_t x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    x += y;
    memcpy(r, &x, 4);
}

/* Along rows: row lengths around the GPU's tiles of `value_bytes` values (the state and the row's
 * start flag): short rows, rows that straddle tiles, rows of many tiles, and rows of one and of
 * three whole tiles of the state alone, or of one and two warps' runs of such a tile (the one
 * scan's program: DL_USER_ROW_CHAINS);
 * each with at least one row and n at most max_n (where a length's one row passes max_n, none).
 * Then, from *many_from on, lengths whose cases take many rows (row_count): an unaligned one and
 * a vector's multiple. */
static int row_lengths(size_t value_bytes, size_t max_n, uint64_t *rng, size_t *lengths, int *many_from)
{
    const size_t tile = tile_items(value_bytes), chain = DL_USER_CHAIN_TILE(value_bytes - 4);
    const size_t run = DL_USER_WARP_RUN(value_bytes - 4);
    const size_t wanted[] = {1, 2, 3, 5, 16, 17, 127, 128, 129, tile - 1, tile, tile + 1, 3 * tile + 5,
                             21 * tile + 7, run, 2 * run, chain, 3 * chain, 1 + test_random(rng) % 5000,
                             1 + test_random(rng) % (40 * tile)};
    const size_t many[] = {1031, 2048};
    int count = 0;
    for (size_t k = 0; k < sizeof wanted / sizeof wanted[0]; ++k)
        if (wanted[k] <= max_n)
            lengths[count++] = wanted[k];
    *many_from = count;
    for (size_t k = 0; k < sizeof many / sizeof many[0]; ++k)
        if (many[k] <= max_n)
            lengths[count++] = many[k];
    return count;
}

/* How many rows of `length` a case scans: one to enough for several tiles of short rows (about
 * 2^18 items at most), n at most max_n; or, `many`, 1400 where max_n allows (rows of many
 * tiles' worth, the shape of a batch of sequences). */
static size_t row_count(size_t length, size_t max_n, uint64_t *rng, int many)
{
    const size_t most = max_n / length, cap = (1u << 18) / length + 2;
    if (many)
        return most < 1400 ? most : 1400;
    return most < 2 ? 1 : 1 + test_random(rng) % (most < cap ? most : cap);
}

/* The variants of a case along rows: exclusive, a host init (no device init, no d_total along an
 * axis), in place, d_totals. */
static void rows_variant(op_call *c, int number, int may_in_place)
{
    c->exclusive = number % 2;
    c->init = (number / 2) % 2 ? INIT_HOST : INIT_NONE;
    c->with_total = 0;
    c->in_place = may_in_place && (number / 3) % 2;
}

/* The complex recurrence (complex64 for float32, complex128 for float64): a of modulus in [0.5, 1)
 * at any angle, b in the unit square, h0 likewise; scalar 1: one a drawn for the call. One scan at
 * sizes around the tiles, or (along_rows) rows of lengths around them, each from h0, with d_totals
 * in some cases. Reference: long double, the bound check_recurrence's times 4 (a complex product
 * rounds each part up to twice, from two products of parts), against the recurrence of moduli. */
static void check_complex_recurrence(dlscan_handle_t h, const test_memory *m, dlscan_type type, int scalar,
                                     int along_rows, size_t max_n, uint64_t *rng)
{
    const int f32 = type == DLSCAN_FLOAT32;
    const size_t size = f32 ? 4 : 8, item = 2 * size;
    const double eps = f32 ? 0x1p-24 : 0x1p-53, pi = 3.14159265358979323846;
    const double modulus = 0.5 + 0.5 * uniform(rng), angle = 2 * pi * uniform(rng);
    double one_a[2] = {modulus * cos(angle), modulus * sin(angle)};
    float one_a32[2] = {(float)one_a[0], (float)one_a[1]};
    if (f32)
        one_a[0] = one_a32[0], one_a[1] = one_a32[1];
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE, type,
                                        !scalar ? NULL : f32 ? (const void *)one_a32 : (const void *)one_a, &op));
    size_t sizes[64];
    int many_from = 64;
    const int count = along_rows ? row_lengths(DL_USER_VALUE(4 * size, 1), max_n, rng, sizes, &many_from)
                                 : test_edge_sizes(tile_items(4 * size), max_n, rng, sizes);
    for (int s = 0; s < count; ++s) {
        const size_t length = along_rows ? sizes[s] : 0;
        const size_t n = along_rows ? length * row_count(length, max_n, rng, s >= many_from) : sizes[s];
        const size_t rows = along_rows ? n / length : 0, row = along_rows ? length : n;
        unsigned char *a = malloc(n * item + 1), *b = malloc(n * item + 1), *out = malloc(n * item + 1);
        unsigned char *totals = malloc(rows * 2 * item + 1);
        double *ad = malloc((2 * n + 1) * sizeof(double)), *bd = malloc((2 * n + 1) * sizeof(double));
        CHECK(a && b && out && totals && ad && bd, "malloc");
        for (size_t i = 0; i < n; ++i) {
            const double r = 0.5 + 0.5 * uniform(rng), t = 2 * pi * uniform(rng);
            ad[2 * i] = scalar ? one_a[0] : r * cos(t), ad[2 * i + 1] = scalar ? one_a[1] : r * sin(t);
            bd[2 * i] = 2 * uniform(rng) - 1, bd[2 * i + 1] = 2 * uniform(rng) - 1;
            for (int k = 0; k < 2; ++k) {
                if (f32) {
                    const float x = (float)ad[2 * i + k], y = (float)bd[2 * i + k];
                    ad[2 * i + k] = x, bd[2 * i + k] = y;
                    memcpy(a + item * i + 4 * k, &x, 4), memcpy(b + item * i + 4 * k, &y, 4);
                } else {
                    memcpy(a + item * i + 8 * k, &ad[2 * i + k], 8), memcpy(b + item * i + 8 * k, &bd[2 * i + k], 8);
                }
            }
        }
        op_call c = {op, 4 * size, item, scalar ? 0 : item, item, n, 0, 0, NULL, 0, 0,
                     scalar ? b : a, scalar ? NULL : b, length, along_rows && (s / 5) % 2 ? totals : NULL, NULL, 0, NULL, DLSCAN_INT32, 0, 0};
        if (along_rows)
            rows_variant(&c, s, 1);
        else
            op_variant(&c, s, 1);
        double h0[2] = {0, 0};
        if (c.init != INIT_NONE)
            h0[0] = 2 * uniform(rng) - 1, h0[1] = 2 * uniform(rng) - 1;
        unsigned char init[32], total[32];
        if (f32) {
            const float state[4] = {1.0f, 0.0f, (float)h0[0], (float)h0[1]};
            h0[0] = state[2], h0[1] = state[3];
            memcpy(init, state, 16);
        } else {
            const double state[4] = {1.0, 0.0, h0[0], h0[1]};
            memcpy(init, state, 32);
        }
        c.init_state = init;
        op_run(h, m, &c, out, total);
        const double tolerance = 4 * rounds(row) * eps;
        long double hr = 0, hi = 0, magnitude = 0, prod_r = 1, prod_i = 0;
        int bad = 0;
        for (size_t i = 0; i < n && bad < 5; ++i) {
            if (i % row == 0)
                hr = h0[0], hi = h0[1], magnitude = hypot(h0[0], h0[1]), prod_r = 1, prod_i = 0;
            const long double before_r = hr, before_i = hi, before_magnitude = magnitude;
            const long double ar = ad[2 * i], ai = ad[2 * i + 1];
            hr = ar * before_r - ai * before_i + bd[2 * i];
            hi = ar * before_i + ai * before_r + bd[2 * i + 1];
            magnitude = sqrtl(ar * ar + ai * ai) * magnitude + sqrtl((long double)bd[2 * i] * bd[2 * i] +
                                                                     (long double)bd[2 * i + 1] * bd[2 * i + 1]);
            const long double p_r = prod_r * ar - prod_i * ai;
            prod_i = prod_r * ai + prod_i * ar, prod_r = p_r;
            const long double want_r = c.exclusive ? before_r : hr, want_i = c.exclusive ? before_i : hi;
            const long double scale = c.exclusive ? before_magnitude : magnitude;
            double got[2];
            for (int k = 0; k < 2; ++k)
                got[k] = f32 ? (double)((const float *)out)[2 * i + k] : ((const double *)out)[2 * i + k];
            if (!(fabsl(got[0] - want_r) <= tolerance * (scale + 1e-30) &&
                  fabsl(got[1] - want_i) <= tolerance * (scale + 1e-30))) {
                EXPECT(0, "%s recurrence%s n = %zu, rows of %zu (case %d) item %zu: %.9g%+.9gi, want %.9Lg%+.9Lgi",
                       f32 ? "complex64" : "complex128", scalar ? " with a scalar a" : "", n, length, s, i, got[0],
                       got[1], want_r, want_i);
                ++bad;
            }
            const int end = i % row == row - 1;
            const unsigned char *state = c.totals && end ? totals + (i / row) * 2 * item
                                       : !along_rows && end && c.with_total ? total : NULL;
            if (state && !bad) { /* (a, b): a the product of the row's a, b its last h */
                double t[4];
                for (int k = 0; k < 4; ++k)
                    t[k] = f32 ? (double)((const float *)state)[k] : ((const double *)state)[k];
                const long double product = sqrtl(prod_r * prod_r + prod_i * prod_i), tiny = f32 ? 0x1p-126 : 0x1p-1022;
                const double product_bound = 4 * (scalar ? (double)row + 64 : product_rounds(row)) * eps;
                EXPECT(fabsl(t[2] - hr) <= tolerance * (magnitude + 1e-30) &&
                           fabsl(t[3] - hi) <= tolerance * (magnitude + 1e-30) &&
                           fabsl(t[0] - prod_r) <= product_bound * product + 4 * tiny &&
                           fabsl(t[1] - prod_i) <= product_bound * product + 4 * tiny,
                       "%s recurrence n = %zu, rows of %zu: total (%.9g%+.9gi, %.9g%+.9gi), want (%.9Lg%+.9Lgi, "
                       "%.9Lg%+.9Lgi)",
                       f32 ? "complex64" : "complex128", n, length, t[0], t[1], t[2], t[3], prod_r, prod_i, hr, hi);
            }
        }
        free(a), free(b), free(out), free(totals), free(ad), free(bd);
    }
    dlscan_operator_destroy(op);
}

/* Checks a scan of states whose combine is `combine` (exact, on bytes) against a sequential
 * fold of the same function: one scan at sizes around the tiles, or along rows of lengths
 * around them (each row from the init, with d_totals in some cases). */
static void check_exact(dlscan_handle_t h, const test_memory *m, const dlscan_operator_desc *d, const char *name,
                        size_t max_n, uint64_t *rng, void (*draw)(void *state, uint64_t *rng), int along_rows)
{
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_create(h, d, &op));
    const size_t bytes = d->state_bytes;
    size_t sizes[64];
    int many_from = 0;
    const int count = along_rows ? row_lengths(DL_USER_VALUE(bytes, 1), max_n, rng, sizes, &many_from)
                                 : test_edge_sizes(tile_items(bytes), max_n, rng, sizes);
    for (int s = 0; s < count; ++s) {
        const size_t n = along_rows ? sizes[s] * row_count(sizes[s], max_n, rng, s >= many_from) : sizes[s];
        const size_t length = along_rows ? sizes[s] : SIZE_MAX, rows = along_rows ? n / length : 0;
        unsigned char *in = malloc(n * bytes + 1), *out = malloc(n * bytes + 1), *totals = malloc(rows * bytes + 1);
        CHECK(in && out && totals, "malloc");
        for (size_t i = 0; i < n; ++i)
            draw(in + i * bytes, rng);
        unsigned char init[32], total[32], acc[32], before[32];
        draw(init, rng);
        op_call c = {op, bytes, bytes, 0, bytes, n, 0, 0, init, 0, 0, in, NULL,
                     along_rows ? length : 0, along_rows && (s / 5) % 2 ? totals : NULL, NULL, 0, NULL, DLSCAN_INT32, 0, 0};
        if (along_rows)
            rows_variant(&c, s, 1);
        else
            op_variant(&c, s, 1);
        op_run(h, m, &c, out, total);
        int bad = 0;
        for (size_t i = 0; i < n && bad < 5; ++i) {
            if (i % length == 0)
                memcpy(acc, c.init != INIT_NONE ? init : d->identity, bytes);
            memcpy(before, acc, bytes);
            d->combine(acc, acc, in + i * bytes);
            if (memcmp(out + i * bytes, c.exclusive ? before : acc, bytes) != 0) {
                EXPECT(0, "%s n = %zu, rows of %zu (case %d, %s, init %d) item %zu differs", name, n,
                       along_rows ? length : n, s, c.exclusive ? "exclusive" : "inclusive", c.init, i);
                ++bad;
            }
            if (c.totals && i % length == length - 1 && memcmp(totals + i / length * bytes, acc, bytes) != 0) {
                EXPECT(0, "%s rows of %zu: row %zu's total differs", name, length, i / length);
                ++bad;
            }
        }
        if (n == 0)
            memcpy(acc, c.init != INIT_NONE ? init : d->identity, bytes);
        if (c.with_total)
            EXPECT(memcmp(total, acc, bytes) == 0, "%s n = %zu: the total differs", name, n);
        free(in), free(out), free(totals);
    }
    dlscan_operator_destroy(op);
}

static void draw_matrix32(void *state, uint64_t *rng)
{
    uint32_t x[4];
    for (int k = 0; k < 4; ++k)
        x[k] = (uint32_t)test_random(rng);
    memcpy(state, x, sizeof x);
}

static void draw_triangle(void *state, uint64_t *rng)
{
    uint32_t x[3];
    for (int k = 0; k < 3; ++k)
        x[k] = (uint32_t)test_random(rng);
    memcpy(state, x, sizeof x);
}

static void draw_matrix64(void *state, uint64_t *rng)
{
    uint64_t x[4];
    for (int k = 0; k < 4; ++k)
        x[k] = test_random(rng);
    memcpy(state, x, sizeof x);
}

static void draw_arg_max(void *state, uint64_t *rng)
{
    static uint32_t counter;
    const arg_max x = {(float)(test_random(rng) % 16), counter++}; /* many ties */
    memcpy(state, &x, sizeof x);
}

static void draw_word(void *state, uint64_t *rng)
{
    const uint32_t x = (uint32_t)test_random(rng);
    memcpy(state, &x, 4);
}

/* The operators written here, each as source and as C functions. */
static const uint32_t identity32[4] = {1, 0, 0, 1};
static const uint64_t identity64[4] = {1, 0, 0, 1};
static const uint32_t identity_triangle[3] = {1, 0, 1};
static const arg_max lowest = {-INFINITY, 0};
static const uint32_t zero = 0;
static const dlscan_operator_desc matrices32 = {.size = sizeof(dlscan_operator_desc), .state_bytes = 16,
                                                .identity = identity32, .in_bytes = 16, .out_bytes = 16,
                                                .source = MATRIX_SOURCE("unsigned int"), .combine = matrix32};
static const dlscan_operator_desc matrices64 = {.size = sizeof(dlscan_operator_desc), .state_bytes = 32,
                                                .identity = identity64, .in_bytes = 32, .out_bytes = 32,
                                                .source = MATRIX_SOURCE("unsigned long long"), .combine = matrix64};
static const dlscan_operator_desc triangles = {.size = sizeof(dlscan_operator_desc), .state_bytes = 12,
                                               .identity = identity_triangle, .in_bytes = 12, .out_bytes = 12,
                                               .source = triangle_source, .combine = triangle_combine};
static const dlscan_operator_desc arg = {.size = sizeof(dlscan_operator_desc), .state_bytes = 8, .identity = &lowest,
                                         .in_bytes = 8, .out_bytes = 8, .source = arg_max_source,
                                         .combine = arg_max_combine};
static const dlscan_operator_desc sum = {.size = sizeof(dlscan_operator_desc), .state_bytes = 4, .identity = &zero,
                                         .in_bytes = 4, .out_bytes = 4, .source = sum_source, .combine = sum_combine};

void operator_check_user(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    check_exact(h, m, &matrices32, "2x2 uint32 matrices", max_n, rng, draw_matrix32, 0);
    check_exact(h, m, &matrices64, "2x2 uint64 matrices", max_n / 2, rng, draw_matrix64, 0);
    check_exact(h, m, &triangles, "2x2 uint32 upper-triangular matrices", max_n, rng, draw_triangle, 0);
    check_exact(h, m, &arg, "arg-max", max_n, rng, draw_arg_max, 0);
    check_exact(h, m, &sum, "user sum", max_n, rng, draw_word, 0);

    /* The user sum's bits are the built-in sum's. */
    const size_t n = max_n < 1000003 ? max_n : 1000003;
    uint32_t *in = malloc(n * 4), *mine = malloc(n * 4), *theirs = malloc(n * 4);
    CHECK(in && mine && theirs, "malloc");
    for (size_t i = 0; i < n; ++i)
        in[i] = (uint32_t)test_random(rng);
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_create(h, &sum, &op));
    op_call c = {op, 4, 4, 0, 4, n, 0, INIT_NONE, NULL, 0, 0, in, NULL, 0, NULL, NULL, 0, NULL, DLSCAN_INT32, 0, 0};
    unsigned char total[4];
    op_run(h, m, &c, mine, total);
    uint32_t *d_in = m->alloc(n * 4, m->context), *d_out = m->alloc(n * 4, m->context);
    m->upload(d_in, in, n * 4, m->context);
    CHECK_OK(h, dlscan_inclusive_scan(h, d_in, d_out, n, DLSCAN_UINT32, DLSCAN_SUM, m->stream));
    m->wait(m->context);
    m->download(theirs, d_out, n * 4, m->context);
    EXPECT(memcmp(mine, theirs, n * 4) == 0, "the user sum differs from the built-in sum");
    m->release(d_in, m->context), m->release(d_out, m->context);
    free(in), free(mine), free(theirs);
    dlscan_operator_destroy(op);
}

/* ---------------------------------------------------------------- chains */

void operator_check_chain(dlscan_handle_t h, const test_memory *m, uint64_t *rng)
{
    on_gpu = dlscan_backend_name(h)[0] == 'g';
    /* The recurrence over 9 chunks of random lengths, state through d_total = d_init, against
     * one call over the whole (the same tolerance as above: both are scans of the same items). */
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT64, NULL, &op));
    size_t lengths[9], n = 0;
    for (int k = 0; k < 9; ++k)
        n += lengths[k] = test_random(rng) % 20000;
    double *a = malloc((n + 1) * 8), *b = malloc((n + 1) * 8), *whole = malloc((n + 1) * 8), *chained = malloc((n + 1) * 8);
    CHECK(a && b && whole && chained, "malloc");
    for (size_t i = 0; i < n; ++i)
        a[i] = 0.5 + 0.5 * uniform(rng), b[i] = 2 * uniform(rng) - 1;
    const double start[2] = {1.0, 0.25};
    double total[2];
    op_call c = {op, 16, 8, 8, 8, n, 0, INIT_HOST, start, 1, 0, a, b, 0, NULL, NULL, 0, NULL, DLSCAN_INT32, 0, 0};
    op_run(h, m, &c, whole, total);

    double *d_a = m->alloc((n + 1) * 8, m->context), *d_b = m->alloc((n + 1) * 8, m->context);
    double *d_out = m->alloc((n + 1) * 8, m->context), *d_state = m->alloc(16, m->context);
    m->upload(d_a, a, n * 8, m->context);
    m->upload(d_b, b, n * 8, m->context);
    m->upload(d_state, start, 16, m->context);
    size_t at = 0;
    for (int k = 0; k < 9; ++k) {
        dlscan_scan_args args = DLSCAN_SCAN_ARGS_INIT;
        args.custom = op;
        args.d_in = d_a + at;
        args.d_in2 = d_b + at;
        args.d_out = d_out + at;
        args.n = lengths[k];
        args.d_init = d_state;
        args.d_total = d_state;
        CHECK_OK(h, dlscan_scan(h, &args, m->stream));
        at += lengths[k];
    }
    m->wait(m->context);
    m->download(chained, d_out, n * 8, m->context);
    double chained_total[2];
    m->download(chained_total, d_state, 16, m->context);
    int bad = 0;
    for (size_t i = 0; i < n && bad < 5; ++i)
        if (!(fabs(chained[i] - whole[i]) <= rounds(n) * 0x1p-53 * 64)) {
            EXPECT(0, "chained recurrence item %zu: %.17g, one call %.17g", i, chained[i], whole[i]);
            ++bad;
        }
    EXPECT(fabs(chained_total[1] - total[1]) <= rounds(n) * 0x1p-53 * 64, "chained total %.17g, one call %.17g",
           chained_total[1], total[1]);
    m->release(d_a, m->context), m->release(d_b, m->context), m->release(d_out, m->context);
    m->release(d_state, m->context);
    free(a), free(b), free(whole), free(chained);
    dlscan_operator_destroy(op);
}

/* ---------------------------------------------------------------- along rows */

/* The float32 recurrence along rows, two inputs, load and store: each row from h0 (the init's b),
 * against a long double reference with check_recurrence's bound for the row's length. */
static void check_rows_recurrence(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &op));
    size_t lengths[32];
    int many_from;
    const int count = row_lengths(DL_USER_VALUE(8, 1), max_n, rng, lengths, &many_from);
    for (int s = 0; s < count; ++s) {
        const size_t length = lengths[s], n = length * row_count(length, max_n, rng, s >= many_from);
        const size_t rows = n / length;
        float *a = malloc(n * 4), *b = malloc(n * 4), *out = malloc(n * 4), *totals = malloc(rows * 8);
        CHECK(a && b && out && totals, "malloc");
        for (size_t i = 0; i < n; ++i) {
            a[i] = (float)((0.5 + 0.5 * uniform(rng)) * (test_random(rng) & 1 ? -1 : 1));
            b[i] = (float)(2 * uniform(rng) - 1);
        }
        const float init[2] = {1.0f, (float)(2 * uniform(rng) - 1)};
        op_call c = {op, 8, 4, 4, 4, n, 0, 0, init, 0, 0, a, b, length, (s / 5) % 2 ? totals : NULL, NULL, 0, NULL, DLSCAN_INT32, 0, 0};
        rows_variant(&c, s, 1);
        float total[2];
        op_run(h, m, &c, out, total);
        const double h0 = c.init != INIT_NONE ? init[1] : 0.0, tolerance = rounds(length) * 0x1p-24;
        long double hx = 0, magnitude = 0;
        int bad = 0;
        for (size_t i = 0; i < n && bad < 5; ++i) {
            if (i % length == 0)
                hx = h0, magnitude = fabs(h0);
            const long double before = hx, before_magnitude = magnitude;
            hx = a[i] * hx + b[i];
            magnitude = fabsl((long double)a[i]) * magnitude + fabsl((long double)b[i]);
            const long double want = c.exclusive ? before : hx, scale = c.exclusive ? before_magnitude : magnitude;
            if (!(fabsl(out[i] - want) <= tolerance * (scale + 1e-30))) {
                EXPECT(0, "float32 recurrence rows of %zu (case %d) item %zu: %.9g, want %.9Lg", length, s, i,
                       (double)out[i], want);
                ++bad;
            }
            if (c.totals && i % length == length - 1 && !(fabsl(totals[2 * (i / length) + 1] - hx) <= tolerance * (magnitude + 1e-30))) {
                EXPECT(0, "float32 recurrence rows of %zu: row %zu's total %.9g, want %.9Lg", length, i / length,
                       (double)totals[2 * (i / length) + 1], hx);
                ++bad;
            }
        }
        free(a), free(b), free(out), free(totals);
    }
    dlscan_operator_destroy(op);
}

void operator_check_rows(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    on_gpu = dlscan_backend_name(h)[0] == 'g';
    check_exact(h, m, &sum, "user sum", max_n, rng, draw_word, 1);
    check_exact(h, m, &arg, "arg-max", max_n, rng, draw_arg_max, 1);
    check_exact(h, m, &triangles, "2x2 uint32 upper-triangular matrices", max_n, rng, draw_triangle, 1);
    check_exact(h, m, &matrices32, "2x2 uint32 matrices", max_n, rng, draw_matrix32, 1);
    check_rows_recurrence(h, m, max_n, rng);
    check_complex_recurrence(h, m, DLSCAN_FLOAT32, 0, 1, max_n, rng);
    check_complex_recurrence(h, m, DLSCAN_FLOAT32, 1, 1, max_n, rng);
}

/* ---------------------------------------------------------------- down columns */

/* The shapes of the column cases of `state_bytes` states (arrays [outer][length][stride]): strides
 * narrow (staged), narrow in strips of 8 (16 and 24) and wide, in strips (of 32 columns, or of up
 * to 256 where 32 do not divide them);
 * lengths around the GPU's column tile of that stride (launch.h, dl_axis_shape_for: one row, a
 * tile's rows and one either side, several tiles, 300 tiles); outer 1 to 3; n at most max_n.
 * Returns the count; each case's shape in the arrays. */
static int column_shapes(size_t state_bytes, size_t max_n, uint64_t *rng, size_t *lengths, size_t *strides,
                         size_t *outers)
{
    const size_t wanted[] = {2, 3, 7, 16, 24, 31, 32, 33, 200, 256, 257, 600, 1 + test_random(rng) % 1000};
    int count = 0;
    for (size_t k = 0; k < sizeof wanted / sizeof wanted[0]; ++k) {
        const size_t stride = wanted[k], rows = dl_axis_shape_for(stride, state_bytes).rows;
        /* (300 tiles: a long chain of look-backs; twice, so that the filter below keeps one for every
         * stride) */
        const size_t length_of[] = {1, rows - 1, rows, rows + 1, 3 * rows + 2, 1 + test_random(rng) % (4 * rows),
                                    300 * rows + 5, 300 * rows + 5};
        for (size_t l = 0; l < sizeof length_of / sizeof length_of[0]; ++l) {
            const size_t outer = 1 + test_random(rng) % 3, length = length_of[l];
            if (length == 0 || length * stride > max_n || (l + k) % 2) /* (half the pairs: the suite's time) */
                continue;
            lengths[count] = length, strides[count] = stride;
            outers[count++] = outer * length * stride <= max_n ? outer : 1;
        }
    }
    return count;
}

/* Operators written here, exactly, down columns: each column from the init, against a fold of
 * the same C function, with d_totals in some cases. */
static void check_columns_exact(dlscan_handle_t h, const test_memory *m, const dlscan_operator_desc *d,
                                const char *name, size_t max_n, uint64_t *rng, void (*draw)(void *state, uint64_t *rng))
{
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_create(h, d, &op));
    const size_t bytes = d->state_bytes;
    size_t lengths[128], strides[128], outers[128];
    const int count = column_shapes(bytes, max_n, rng, lengths, strides, outers);
    for (int s = 0; s < count; ++s) {
        const size_t length = lengths[s], stride = strides[s], n = outers[s] * length * stride, columns = n / length;
        unsigned char *in = malloc(n * bytes + 1), *out = malloc(n * bytes + 1), *totals = malloc(columns * bytes);
        unsigned char *acc = malloc(columns * bytes);
        CHECK(in && out && totals && acc, "malloc");
        for (size_t i = 0; i < n; ++i)
            draw(in + i * bytes, rng);
        unsigned char init[32], before[32];
        draw(init, rng);
        op_call c = {op, bytes, bytes, 0, bytes, n, 0, 0, init, 0, 0, in, NULL,
                     length, (s / 3) % 2 ? totals : NULL, NULL, 0, NULL, DLSCAN_INT32, 0, stride};
        rows_variant(&c, s, 1);
        op_run(h, m, &c, out, NULL);
        int bad = 0;
        for (size_t k = 0; k < columns; ++k)
            memcpy(acc + k * bytes, c.init != INIT_NONE ? init : d->identity, bytes);
        for (size_t i = 0; i < n && bad < 5; ++i) {
            const size_t column = i / (length * stride) * stride + i % stride; /* (array, j) */
            unsigned char *a = acc + column * bytes;
            memcpy(before, a, bytes);
            d->combine(a, a, in + i * bytes);
            if (memcmp(out + i * bytes, c.exclusive ? before : a, bytes) != 0) {
                EXPECT(0, "%s [%zu][%zu][%zu] (case %d, %s, init %d) item %zu differs", name, outers[s], length,
                       stride, s, c.exclusive ? "exclusive" : "inclusive", c.init, i);
                ++bad;
            }
        }
        if (c.totals && memcmp(totals, acc, columns * bytes) != 0)
            EXPECT(0, "%s [%zu][%zu][%zu]: the columns' totals differ", name, outers[s], length, stride);
        free(in), free(out), free(totals), free(acc);
    }
    dlscan_operator_destroy(op);
}

/* The float32 recurrence down columns (two inputs, load and store), each column from h0, against a
 * long double reference with check_recurrence's bound for the column's length. */
static void check_columns_recurrence(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &op));
    size_t lengths[128], strides[128], outers[128];
    const int count = column_shapes(8, max_n, rng, lengths, strides, outers);
    for (int s = 0; s < count; ++s) {
        const size_t length = lengths[s], stride = strides[s], n = outers[s] * length * stride, columns = n / length;
        float *a = malloc(n * 4), *b = malloc(n * 4), *out = malloc(n * 4), *totals = malloc(columns * 8);
        long double *hx = malloc(columns * sizeof *hx), *magnitude = malloc(columns * sizeof *magnitude);
        CHECK(a && b && out && totals && hx && magnitude, "malloc");
        for (size_t i = 0; i < n; ++i) {
            a[i] = (float)((0.5 + 0.5 * uniform(rng)) * (test_random(rng) % 2 ? -1 : 1));
            b[i] = (float)(2 * uniform(rng) - 1);
        }
        const float init[2] = {1.0f, (float)(2 * uniform(rng) - 1)};
        op_call c = {op, 8, 4, 4, 4, n, 0, 0, init, 0, 0, a, b, length, (s / 3) % 2 ? totals : NULL,
                     NULL, 0, NULL, DLSCAN_INT32, 0, stride};
        rows_variant(&c, s, 1);
        op_run(h, m, &c, out, NULL);
        const double h0 = c.init != INIT_NONE ? init[1] : 0.0, tolerance = rounds(length) * 0x1p-24;
        for (size_t k = 0; k < columns; ++k)
            hx[k] = h0, magnitude[k] = fabs(h0);
        int bad = 0;
        for (size_t i = 0; i < n && bad < 5; ++i) {
            const size_t k = i / (length * stride) * stride + i % stride;
            const long double before = hx[k], before_magnitude = magnitude[k];
            hx[k] = a[i] * hx[k] + b[i];
            magnitude[k] = fabsl((long double)a[i]) * magnitude[k] + fabsl((long double)b[i]);
            const long double want = c.exclusive ? before : hx[k], scale = c.exclusive ? before_magnitude : magnitude[k];
            if (!(fabsl(out[i] - want) <= tolerance * (scale + 1e-30))) {
                EXPECT(0, "float32 recurrence [%zu][%zu][%zu] (case %d) item %zu: %.9g, want %.9Lg", outers[s], length,
                       stride, s, i, (double)out[i], want);
                ++bad;
            }
        }
        for (size_t k = 0; c.totals && k < columns && bad < 5; ++k)
            if (!(fabsl(totals[2 * k + 1] - hx[k]) <= tolerance * (magnitude[k] + 1e-30))) {
                EXPECT(0, "float32 recurrence [%zu][%zu][%zu]: column %zu's total %.9g, want %.9Lg", outers[s], length,
                       stride, k, (double)totals[2 * k + 1], hx[k]);
                ++bad;
            }
        free(a), free(b), free(out), free(totals), free(hx), free(magnitude);
    }
    dlscan_operator_destroy(op);
}

void operator_check_columns(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    on_gpu = dlscan_backend_name(h)[0] == 'g';
    check_columns_exact(h, m, &sum, "user sum", max_n, rng, draw_word);
    check_columns_exact(h, m, &arg, "arg-max", max_n, rng, draw_arg_max);
    check_columns_exact(h, m, &triangles, "2x2 uint32 upper-triangular matrices", max_n, rng, draw_triangle);
    check_columns_exact(h, m, &matrices32, "2x2 uint32 matrices", max_n, rng, draw_matrix32);
    check_columns_exact(h, m, &matrices64, "2x2 uint64 matrices", max_n / 2, rng, draw_matrix64);
    check_columns_recurrence(h, m, max_n, rng);
}

/* ---------------------------------------------------------------- over offsets */

/* Offsets of a case over n items (num_segments returned, *offsets malloc'd): items before the
 * first segment and after the last (none, or up to 100 each), and segment lengths by `kind`: 0
 * all 1; 1 around a tile (tile - 1 .. tile + 1); 2 random 0 .. 63, empty ones included; 3 random
 * 1 .. 5000; 4 one segment. */
static size_t draw_offsets(size_t n, int kind, size_t tile, uint64_t *rng, size_t **offsets)
{
    const size_t lead = test_random(rng) % 2 ? test_random(rng) % (n < 100 ? n + 1 : 101) : 0;
    const size_t left = n - lead, tail = test_random(rng) % 2 ? test_random(rng) % (left < 100 ? left + 1 : 101) : 0;
    const size_t end = n - tail;
    size_t capacity = 16, count = 0;
    size_t *o = malloc(capacity * sizeof *o);
    CHECK(o, "malloc");
    o[0] = lead;
    for (size_t at = lead; at < end || (kind == 4 && count == 0);) {
        const size_t length = kind == 0 ? 1
                              : kind == 1 ? tile - 1 + test_random(rng) % 3
                              : kind == 2 ? test_random(rng) % 64
                              : kind == 3 ? 1 + test_random(rng) % 5000
                                          : end - lead;
        at = at + length < end ? at + length : end;
        if (++count == capacity) {
            capacity *= 2;
            o = realloc(o, capacity * sizeof *o);
            CHECK(o, "realloc");
        }
        o[count] = at;
    }
    *offsets = o;
    return count;
}

/* By key, the case's segments as keys (malloc'd; n items of *bytes), of a type cycled by `number`
 * (1-, 2-, 4- and 8-byte keys): the items before the first segment count 0, segment k's k + 1,
 * those after the last num_segments + 1; count c makes the key (c / 2) times an odd constant, its
 * top bit flipped where c is odd, so that neighbours differ in their top byte alone (float32's 0.0
 * and -0.0 among them) or, across an empty segment, in their low bytes (empty segments vanish). */
static unsigned char *keys_of(const size_t *offsets, size_t segments, size_t n, int number, dlscan_type *type,
                              size_t *bytes)
{
    static const dlscan_type types[] = {DLSCAN_UINT8, DLSCAN_INT16, DLSCAN_FLOAT32, DLSCAN_UINT64};
    static const size_t sizes[] = {1, 2, 4, 8};
    *type = types[number % 4];
    *bytes = sizes[number % 4];
    unsigned char *keys = malloc(n * *bytes + 1);
    CHECK(keys, "malloc");
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        while (k <= segments && offsets[k] <= i)
            ++k; /* (the offsets at or before i: 0 before the segments, segment k - 1's, n + 1 after) */
        const uint64_t key = k / 2 * 0x9e3779b97f4a7c15u;
        memcpy(keys + i * *bytes, &key, *bytes); /* (the low bytes, on a little-endian host) */
        keys[i * *bytes + *bytes - 1] ^= (unsigned char)((k & 1) << 7);
    }
    return keys;
}

/* The call's segments by key in place of its offsets (keys_of, malloc'd into c->keys). */
static void as_keys(op_call *c, int number)
{
    c->keys = keys_of(c->offsets, c->num_segments, c->n, number, &c->key_type, &c->key_bytes);
    c->offsets = NULL, c->num_segments = 0;
}

/* By key, whether item i starts a run of keys of the same bits. */
static int key_head(const op_call *c, size_t i)
{
    const unsigned char *keys = c->keys;
    return i == 0 || memcmp(keys + i * c->key_bytes, keys + (i - 1) * c->key_bytes, c->key_bytes) != 0;
}

/* An exact operator (d's combine, on bytes) over offsets: out[i] for the items of each segment
 * against a sequential fold from the init, the items outside the segments unwritten (poisoned,
 * or in place the input's). by_key: the same segments as keys (keys_of), every item in a run. */
static void check_offsets_exact(dlscan_handle_t h, const test_memory *m, const dlscan_operator_desc *d,
                                const char *name, int by_key, size_t max_n, uint64_t *rng,
                                void (*draw)(void *state, uint64_t *rng))
{
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_create(h, d, &op));
    const size_t bytes = d->state_bytes, tile = tile_items(DL_USER_VALUE(bytes, 1));
    const size_t wanted[] = {0, 1, 5, tile - 1, tile + 1, 3 * tile + 5, 40 * tile + 7, max_n};
    int number = 0;
    for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; ++w)
        for (int kind = 0; kind <= 4 && wanted[w] <= max_n; ++kind, ++number) {
            const size_t n = wanted[w];
            size_t *offsets;
            const size_t segments = draw_offsets(n, kind, tile, rng, &offsets);
            unsigned char *in = malloc(n * bytes + 1), *out = malloc(n * bytes + 1);
            CHECK(in && out, "malloc");
            for (size_t i = 0; i < n; ++i)
                draw(in + i * bytes, rng);
            unsigned char init[32], acc[32], before[32];
            draw(init, rng);
            op_call c = {op, bytes, bytes, 0, bytes, n, 0, 0, init, 0, 0, in, NULL, 0, NULL, offsets, segments, NULL, DLSCAN_INT32, 0, 0};
            if (by_key)
                as_keys(&c, number);
            rows_variant(&c, number, 1);
            op_run(h, m, &c, out, NULL);
            int bad = 0;
            for (size_t i = 0; by_key && i < n && bad < 5; ++i) {
                if (key_head(&c, i))
                    memcpy(acc, c.init != INIT_NONE ? init : d->identity, bytes);
                memcpy(before, acc, bytes);
                d->combine(acc, acc, in + i * bytes);
                if (memcmp(out + i * bytes, c.exclusive ? before : acc, bytes) != 0) {
                    EXPECT(0, "%s n = %zu by %zu-byte key (kind %d, %s, init %d) item %zu differs", name, n,
                           c.key_bytes, kind, c.exclusive ? "exclusive" : "inclusive", c.init, i);
                    ++bad;
                }
            }
            for (size_t k = 0; !by_key && k < segments && bad < 5; ++k) {
                memcpy(acc, c.init != INIT_NONE ? init : d->identity, bytes);
                for (size_t i = offsets[k]; i < offsets[k + 1] && bad < 5; ++i) {
                    memcpy(before, acc, bytes);
                    d->combine(acc, acc, in + i * bytes);
                    if (memcmp(out + i * bytes, c.exclusive ? before : acc, bytes) != 0) {
                        EXPECT(0, "%s n = %zu over %zu offsets (kind %d, %s, init %d) item %zu of segment %zu differs",
                               name, n, segments + 1, kind, c.exclusive ? "exclusive" : "inclusive", c.init, i, k);
                        ++bad;
                    }
                }
            }
            for (size_t i = 0; !by_key && i < n && bad < 5; ++i) {
                if (i >= offsets[0] && i < offsets[segments])
                    continue;
                int kept = 1;
                for (size_t b = 0; b < bytes; ++b) /* (in place the input's bytes stay) */
                    kept &= out[i * bytes + b] == (c.in_place ? in[i * bytes + b] : TEST_POISON_BYTE);
                if (!kept) {
                    EXPECT(0, "%s n = %zu over offsets (kind %d): item %zu, outside the segments, was written", name,
                           n, kind, i);
                    ++bad;
                }
            }
            free(in), free(out), free(offsets), free((void *)c.keys);
        }
    dlscan_operator_destroy(op);
}

/* The float32 recurrence over offsets (two inputs, load and store), exact: a is +-1 and b a small
 * integer, so every h is an integer below 2^24. by_key: the same segments as keys. */
static void check_offsets_recurrence(dlscan_handle_t h, const test_memory *m, int by_key, size_t max_n,
                                     uint64_t *rng)
{
    dlscan_operator_t op;
    CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &op));
    const size_t tile = tile_items(DL_USER_VALUE(8, 1));
    const size_t wanted[] = {1, tile + 1, 21 * tile + 7, max_n};
    int number = 0;
    for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; ++w)
        for (int kind = 0; kind <= 4 && wanted[w] <= max_n; ++kind, ++number) {
            const size_t n = wanted[w];
            size_t *offsets;
            const size_t segments = draw_offsets(n, kind, tile, rng, &offsets);
            float *a = malloc(n * 4 + 4), *b = malloc(n * 4 + 4), *out = malloc(n * 4 + 4);
            CHECK(a && b && out, "malloc");
            for (size_t i = 0; i < n; ++i) {
                a[i] = test_random(rng) % 2 ? 1.0f : -1.0f;
                b[i] = (float)((int)(test_random(rng) % 9) - 4);
            }
            const float init[2] = {1.0f, (float)((int)(test_random(rng) % 9) - 4)};
            op_call c = {op, 8, 4, 4, 4, n, 0, 0, init, 0, 0, a, b, 0, NULL, offsets, segments, NULL, DLSCAN_INT32, 0, 0};
            if (by_key)
                as_keys(&c, number);
            rows_variant(&c, number, 0);
            op_run(h, m, &c, out, NULL);
            int bad = 0;
            double hk = 0.0;
            for (size_t i = 0; by_key && i < n && bad < 5; ++i) {
                if (key_head(&c, i))
                    hk = c.init != INIT_NONE ? init[1] : 0.0;
                const double before = hk;
                hk = a[i] * hk + b[i];
                if (out[i] != (float)(c.exclusive ? before : hk)) {
                    EXPECT(0, "recurrence n = %zu by %zu-byte key (kind %d) item %zu: %g, want %g", n, c.key_bytes,
                           kind, i, (double)out[i], c.exclusive ? before : hk);
                    ++bad;
                }
            }
            for (size_t k = 0; !by_key && k < segments && bad < 5; ++k) {
                double hx = c.init != INIT_NONE ? init[1] : 0.0;
                for (size_t i = offsets[k]; i < offsets[k + 1] && bad < 5; ++i) {
                    const double before = hx;
                    hx = a[i] * hx + b[i];
                    if (out[i] != (float)(c.exclusive ? before : hx)) {
                        EXPECT(0, "recurrence n = %zu over offsets (kind %d) item %zu of segment %zu: %g, want %g", n,
                               kind, i, k, (double)out[i], c.exclusive ? before : hx);
                        ++bad;
                    }
                }
            }
            free(a), free(b), free(out), free(offsets), free((void *)c.keys);
        }
    dlscan_operator_destroy(op);
}

void operator_check_segments(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    on_gpu = dlscan_backend_name(h)[0] == 'g';
    for (int by_key = 0; by_key < 2; ++by_key) {
        check_offsets_exact(h, m, &sum, "user sum", by_key, max_n, rng, draw_word);
        check_offsets_exact(h, m, &arg, "arg-max", by_key, max_n, rng, draw_arg_max);
        check_offsets_exact(h, m, &matrices32, "2x2 uint32 matrices", by_key, max_n / 2, rng, draw_matrix32);
        check_offsets_recurrence(h, m, by_key, max_n, rng);
    }
}

/* ---------------------------------------------------------------- reduce-by-key */

/* One dlscan_reduce_by_key_custom through `m`: n items (in, in2: host, or in2 NULL) by the keys
 * (n of key_bytes; on the device one key past 16-byte alignment where `shift`), values out in place
 * where `in_place`, from init (NULL: the identity). out (n outputs), keys_out (n keys) and *count
 * come back; nothing past the count's outputs and keys may be written. */
static void runs_run(dlscan_handle_t h, const test_memory *m, dlscan_operator_t op, size_t in_bytes,
                     size_t in2_bytes, size_t out_bytes, const void *in, const void *in2, const void *keys,
                     dlscan_type key_type, size_t key_bytes, size_t n, const void *init, int in_place, int shift,
                     void *out, void *keys_out, size_t *count)
{
    const size_t out_size = (n + PAD_ITEMS) * out_bytes, in_size = n * in_bytes > out_size ? n * in_bytes : out_size;
    const size_t keys_size = (n + PAD_ITEMS) * key_bytes;
    unsigned char *d_in = m->alloc(in_size + 1, m->context), *d_in2 = in2 ? m->alloc(n * in2_bytes + 1, m->context) : NULL;
    unsigned char *d_out = in_place ? d_in : m->alloc(out_size, m->context);
    unsigned char *d_keys = m->alloc((n + 1) * key_bytes, m->context), *d_keys_out = m->alloc(keys_size, m->context);
    size_t *d_count = m->alloc(sizeof(size_t), m->context);
    m->fill(d_in, TEST_POISON_BYTE, in_size, m->context);
    if (!in_place)
        m->fill(d_out, TEST_POISON_BYTE, out_size, m->context);
    m->fill(d_keys_out, TEST_POISON_BYTE, keys_size, m->context);
    m->fill(d_count, TEST_POISON_BYTE, sizeof(size_t), m->context);
    const size_t at = shift ? key_bytes : 0;
    if (n) {
        m->upload(d_in, in, n * in_bytes, m->context);
        if (d_in2)
            m->upload(d_in2, in2, n * in2_bytes, m->context);
        m->upload(d_keys + at, keys, n * key_bytes, m->context);
    }
    CHECK_OK(h, dlscan_reduce_by_key_custom(h, op, d_keys + at, d_in, d_in2, d_keys_out, d_out, d_count, n, key_type,
                                            init, m->stream));
    m->wait(m->context);
    m->download(count, d_count, sizeof(size_t), m->context);
    CHECK(*count <= n, "n = %zu: a count of %zu runs", n, *count);
    unsigned char *back = malloc(out_size > keys_size ? out_size : keys_size);
    CHECK(back, "malloc");
    m->download(back, d_out, out_size, m->context);
    memcpy(out, back, *count * out_bytes);
    for (size_t i = (in_place ? n : *count) * out_bytes; i < out_size; ++i)
        CHECK(back[i] == TEST_POISON_BYTE, "n = %zu, %zu runs: output byte %zu past them was written", n, *count, i);
    m->download(back, d_keys_out, keys_size, m->context);
    memcpy(keys_out, back, *count * key_bytes);
    for (size_t i = *count * key_bytes; i < keys_size; ++i)
        CHECK(back[i] == TEST_POISON_BYTE, "n = %zu, %zu runs: key byte %zu past them was written", n, *count, i);
    free(back);
    if (!in_place)
        m->release(d_out, m->context);
    m->release(d_in, m->context), m->release(d_keys, m->context), m->release(d_keys_out, m->context);
    m->release(d_count, m->context);
    if (d_in2)
        m->release(d_in2, m->context);
}

/* Reduce-by-key with an operator written here (exact: d's combine on bytes; items are states), or
 * with recurrence set the float32 recurrence (two inputs, load and store; within rounding): at
 * sizes around the GPU's tiles, runs as the offsets' segments by key (keys_of: 1-, 2-, 4- and
 * 8-byte keys, runs of one item, around a tile, of up to 63, up to 5000, one run, and the items
 * before and after them runs of their own); from the identity or a host init, values in place in
 * some cases; against a sequential fold of each run, the keys and the count. */
static void check_runs(dlscan_handle_t h, const test_memory *m, const dlscan_operator_desc *d, const char *name,
                       int recurrence, size_t max_n, uint64_t *rng, void (*draw)(void *state, uint64_t *rng))
{
    dlscan_operator_t op;
    if (recurrence)
        CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &op));
    else
        CHECK_OK(h, dlscan_operator_create(h, d, &op));
    const size_t state = recurrence ? 8 : d->state_bytes, item = recurrence ? 4 : state;
    const size_t tile = tile_items(DL_USER_VALUE(state, 1));
    size_t sizes[64];
    const int count = test_edge_sizes(tile, max_n, rng, sizes);
    for (int s = 0; s < count; ++s) {
        const size_t n = sizes[s];
        size_t *offsets;
        const size_t segments = draw_offsets(n, s % 5, tile, rng, &offsets);
        dlscan_type key_type;
        size_t key_bytes;
        unsigned char *keys = keys_of(offsets, segments, n, s / 5 + s, &key_type, &key_bytes);
        unsigned char *in = malloc(n * item + 1), *in2 = recurrence ? malloc(n * 4 + 1) : NULL;
        unsigned char *out = malloc(n * item + 1), *keys_out = malloc(n * key_bytes + 1);
        CHECK(in && (!recurrence || in2) && out && keys_out, "malloc");
        for (size_t i = 0; i < n; ++i) {
            if (recurrence) {
                const float a = (float)((0.5 + 0.5 * uniform(rng)) * (test_random(rng) % 2 ? -1 : 1));
                const float b = (float)(2 * uniform(rng) - 1);
                memcpy(in + 4 * i, &a, 4), memcpy(in2 + 4 * i, &b, 4);
            } else {
                draw(in + i * item, rng);
            }
        }
        unsigned char init[32];
        if (recurrence) {
            const float pair[2] = {1.0f, (float)(2 * uniform(rng) - 1)};
            memcpy(init, pair, 8);
        } else {
            draw(init, rng);
        }
        const int with_init = s % 2, in_place = (s / 2) % 2, shift = (s / 4) % 2;
        size_t runs = 0;
        runs_run(h, m, op, item, recurrence ? 4 : 0, item, in, in2, keys, key_type, key_bytes, n,
                 with_init ? init : NULL, in_place, shift, out, keys_out, &runs);
        /* the reference: each run folded from the init */
        size_t want_runs = 0, first = 0;
        int bad = 0;
        for (size_t i = 0; i < n && bad < 5; ++i) {
            const unsigned char *key = keys + i * key_bytes;
            if (i + 1 < n && memcmp(key, key + key_bytes, key_bytes) == 0)
                continue;
            const size_t k = want_runs++; /* run k: items first .. i */
            if (k >= runs) {
                ++bad;
                break;
            }
            if (memcmp(keys_out + k * key_bytes, key, key_bytes) != 0) {
                uint64_t got = 0, want = 0;
                memcpy(&got, keys_out + k * key_bytes, key_bytes), memcpy(&want, key, key_bytes);
                EXPECT(0, "%s n = %zu (case %d, %zu-byte keys): run %zu's key %#llx, want %#llx", name, n, s, key_bytes,
                       k, (unsigned long long)got, (unsigned long long)want);
                ++bad;
            }
            if (recurrence) {
                const float *a = (const float *)in, *b = (const float *)in2;
                long double hx = with_init ? ((const float *)init)[1] : 0, magnitude = fabsl(hx);
                for (size_t j = first; j <= i; ++j) {
                    hx = a[j] * hx + b[j];
                    magnitude = fabsl((long double)a[j]) * magnitude + fabsl((long double)b[j]);
                }
                float got;
                memcpy(&got, out + k * 4, 4);
                if (!(fabsl(got - hx) <= rounds(i + 1 - first) * 0x1p-24 * (magnitude + 1e-30))) {
                    EXPECT(0, "%s n = %zu (case %d): run %zu (items %zu .. %zu) %.9g, want %.9Lg", name, n, s, k,
                           first, i, (double)got, hx);
                    ++bad;
                }
            } else {
                unsigned char acc[32];
                memcpy(acc, with_init ? init : d->identity, state);
                for (size_t j = first; j <= i; ++j)
                    d->combine(acc, acc, in + j * item);
                if (memcmp(out + k * item, acc, state) != 0) {
                    uint32_t got = 0, want = 0;
                    memcpy(&got, out + k * item, 4), memcpy(&want, acc, 4);
                    EXPECT(0, "%s n = %zu (case %d, init %d): run %zu (items %zu .. %zu) differs: its first word %#x, "
                           "want %#x", name, n, s, with_init, k, first, i, got, want);
                    ++bad;
                }
            }
            first = i + 1;
        }
        want_runs = 0;
        for (size_t i = 0; i < n; ++i)
            want_runs += i + 1 == n || memcmp(keys + i * key_bytes, keys + (i + 1) * key_bytes, key_bytes) != 0;
        EXPECT(runs == want_runs, "%s n = %zu (case %d): %zu runs, want %zu", name, n, s, runs, want_runs);
        free(offsets), free(keys), free(in), free(in2), free(out), free(keys_out);
    }
    dlscan_operator_destroy(op);
}

void operator_check_runs(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    on_gpu = dlscan_backend_name(h)[0] == 'g';
    check_runs(h, m, &sum, "user sum", 0, max_n, rng, draw_word);
    check_runs(h, m, &arg, "arg-max", 0, max_n, rng, draw_arg_max);
    check_runs(h, m, &triangles, "2x2 uint32 upper-triangular matrices", 0, max_n, rng, draw_triangle);
    check_runs(h, m, &matrices32, "2x2 uint32 matrices", 0, max_n / 2, rng, draw_matrix32);
    check_runs(h, m, NULL, "float32 recurrence", 1, max_n, rng, NULL);
}

/* ---------------------------------------------------------------- refusals */

void operator_check_refusals(dlscan_handle_t h, const test_memory *m)
{
    const uint32_t zeros[9] = {0};
    const dlscan_operator_desc good = {.size = sizeof good, .state_bytes = 4, .identity = zeros, .in_bytes = 4,
                                       .out_bytes = 4, .source = sum_source, .combine = sum_combine};
    dlscan_operator_t op = (dlscan_operator_t)1;
    dlscan_operator_desc d = good;
    d.state_bytes = 36, d.in_bytes = d.out_bytes = 36;
    EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_INVALID_ARGUMENT && !op, "a 36-byte state: %s",
           dlscan_last_error(h));
    d = good, d.state_bytes = 6, d.in_bytes = d.out_bytes = 6;
    EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_INVALID_ARGUMENT, "a 6-byte state");
    d = good, d.identity = NULL;
    EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_INVALID_ARGUMENT && !op, "no identity");
    d = good, d.in_bytes = 8;
    EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_INVALID_ARGUMENT, "items of 8 bytes without load");
    d = good, d.flags = DLSCAN_OPERATOR_STORE, d.store = NULL, d.source = NULL;
    EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_INVALID_ARGUMENT, "no store function or source");
    d = good, d.size = 8;
    EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_INVALID_ARGUMENT, "a short desc->size");
    EXPECT(dlscan_operator_create(h, NULL, &op) == DLSCAN_ERROR_INVALID_ARGUMENT, "desc NULL");
    EXPECT(dlscan_operator_create(h, &good, NULL) == DLSCAN_ERROR_INVALID_ARGUMENT, "op NULL");
    EXPECT(dlscan_operator_create(NULL, &good, &op) == DLSCAN_ERROR_INVALID_HANDLE, "h NULL");
    EXPECT(dlscan_operator_builtin(h, DLSCAN_BUILTIN_LOGSUMEXP, DLSCAN_INT32, NULL, &op) == DLSCAN_ERROR_INVALID_TYPE,
           "logsumexp of int32");
    EXPECT(dlscan_operator_builtin(h, DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE, DLSCAN_INT64, NULL, &op) ==
               DLSCAN_ERROR_INVALID_TYPE && !op,
           "a complex recurrence of int64");
    EXPECT(dlscan_operator_builtin(h, (dlscan_builtin)7, DLSCAN_FLOAT32, NULL, &op) == DLSCAN_ERROR_INVALID_ARGUMENT,
           "builtin 7");
    if (dlscan_backend_name(h)[0] == 'g') {
        d = good, d.source = "typedef unsigned int dlscan_state;\n__device__ dlscan_state dlscan_combine(dlscan_state x) { return x; }\n";
        EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_COMPILE && !op, "a source that does not compile");
        EXPECT(strstr(dlscan_last_error(h), "operator") != NULL, "the compiler's log names the source: %s",
               dlscan_last_error(h));
        d = good, d.state_bytes = 8, d.in_bytes = d.out_bytes = 8; /* the source's state is 4 bytes */
        EXPECT(dlscan_operator_create(h, &d, &op) == DLSCAN_ERROR_COMPILE, "a state of another size than the source's");
    }

    /* Scans that are refused write nothing. */
    CHECK_OK(h, dlscan_operator_create(h, &good, &op));
    dlscan_operator_t recurrence;
    CHECK_OK(h, dlscan_operator_builtin(h, DLSCAN_BUILTIN_LINEAR_RECURRENCE, DLSCAN_FLOAT32, NULL, &recurrence));
    const size_t n = 5000;
    unsigned char *d_in = m->alloc(n * 4, m->context), *d_out = m->alloc(n * 4, m->context);
    size_t *d_offsets = m->alloc(2 * sizeof(size_t), m->context);
    m->fill(d_in, 1, n * 4, m->context);
    m->fill(d_out, TEST_POISON_BYTE, n * 4, m->context);
    m->fill(d_offsets, 0, 2 * sizeof(size_t), m->context);
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.custom = op, a.d_in = d_in, a.d_out = d_out, a.n = n;
    dlscan_scan_args bad = a;
    bad.d_keys = d_out, bad.key_type = DLSCAN_INT32;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_OVERLAP, "keys in d_out: %s", dlscan_last_error(h));
    bad = a, bad.d_keys = d_in, bad.key_type = DLSCAN_INT32, bad.d_total = d_out + 4 * (n - 1);
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "keys with d_total: %s",
           dlscan_last_error(h));
    bad = a, bad.d_keys = d_in, bad.key_type = (dlscan_type)99;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_TYPE, "keys of type 99: %s", dlscan_last_error(h));
    bad = a, bad.d_offsets = d_offsets, bad.num_segments = 1, bad.d_total = d_out + 4 * (n - 1);
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "segments with d_total: %s",
           dlscan_last_error(h));
    bad = a, bad.d_offsets = d_offsets, bad.num_segments = 1, bad.axis_length = 100;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "segments along rows: %s",
           dlscan_last_error(h));
    bad = a, bad.d_offsets = (const size_t *)(d_in + 4);
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_MISALIGNED, "misaligned offsets: %s", dlscan_last_error(h));
    bad = a, bad.d_offsets = (const size_t *)d_out;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_OVERLAP, "offsets inside d_out: %s", dlscan_last_error(h));
    if (dlscan_backend_name(h)[0] == 'c') { /* (a CPU handle reads the offsets: falling ones) */
        const size_t falling[3] = {0, 9, 4};
        bad = a, bad.d_offsets = falling, bad.num_segments = 2;
        EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "falling offsets: %s",
               dlscan_last_error(h));
    }
    bad = a, bad.axis_length = 100, bad.axis_stride = 3;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "columns that do not divide n: %s",
           dlscan_last_error(h));
    bad = a, bad.axis_length = 100, bad.axis_stride = 2, bad.d_totals = d_out + 4 * (n - 100);
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_OVERLAP, "columns' totals inside d_out: %s",
           dlscan_last_error(h));
    bad = a, bad.axis_length = 100, bad.axis_stride = 2, bad.d_total = d_out;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "columns with d_total");
    bad = a, bad.axis_length = 300;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "rows that do not divide n");
    bad = a, bad.axis_length = 100, bad.d_total = d_out;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "rows with d_total");
    bad = a, bad.axis_length = 100, bad.d_totals = d_out + 2;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_MISALIGNED, "d_totals misaligned");
    bad = a, bad.axis_length = 100, bad.d_totals = d_out + 400;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_OVERLAP, "d_totals inside d_out");
    bad = a, bad.d_totals = d_out;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "d_totals without axis_length");
    bad = a, bad.d_in2 = d_in;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "d_in2 with one input");
    bad = a, bad.custom = recurrence;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "no d_in2 for two inputs");
    bad = a, bad.d_out = d_out + 2;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_MISALIGNED, "d_out misaligned");
    bad = a, bad.d_out = d_in + 4;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_OVERLAP, "overlap");
    bad = a, bad.custom = NULL, bad.d_in2 = d_in;
    EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "d_in2 without an operator");
    EXPECT(dlscan_reduce(h, d_in, d_out, n, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, NULL, m->stream) == DLSCAN_SUCCESS,
           "a plain reduction still runs");
    m->wait(m->context);
    m->fill(d_out, TEST_POISON_BYTE, n * 4, m->context);
    /* A 32-byte state has no room for the row's-start flag, nor a segment's. */
    {
        dlscan_operator_t matrices;
        CHECK_OK(h, dlscan_operator_create(h, &matrices64, &matrices));
        bad = a, bad.custom = matrices, bad.n = n / 8, bad.axis_length = 125;
        EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_NOT_SUPPORTED, "rows of a 32-byte state: %s",
               dlscan_last_error(h));
        bad = a, bad.custom = matrices, bad.n = n / 8, bad.d_offsets = d_offsets, bad.num_segments = 1;
        EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_NOT_SUPPORTED, "segments of a 32-byte state: %s",
               dlscan_last_error(h));
        EXPECT(dlscan_reduce_by_key_custom(h, matrices, d_in, d_in, NULL, d_out + n * 2, d_out, (size_t *)(d_out + n * 3),
                                           n / 8, DLSCAN_INT32, NULL, m->stream) == DLSCAN_ERROR_NOT_SUPPORTED,
               "runs of a 32-byte state: %s", dlscan_last_error(h));
        dlscan_operator_destroy(matrices);
    }
    /* Reduce-by-key: keys (d_in) and outputs in the back half of d_out, which must stay poisoned. */
    {
        unsigned char *keys_out = d_out + n * 2, *values_out = d_out + n * 3;
        size_t *count = (size_t *)(d_out + n * 2 - 8);
        const size_t half = n / 4;
        EXPECT(dlscan_reduce_by_key_custom(h, NULL, d_in, d_in, NULL, keys_out, values_out, count, half,
                                           DLSCAN_INT32, NULL, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT,
               "reduce-by-key without an operator");
        EXPECT(dlscan_reduce_by_key_custom(h, op, d_in, d_in, NULL, d_in + 8, values_out, count, half, DLSCAN_INT32,
                                           NULL, m->stream) == DLSCAN_ERROR_OVERLAP,
               "reduce-by-key's keys out over its keys in: %s", dlscan_last_error(h));
        EXPECT(dlscan_reduce_by_key_custom(h, op, d_in, d_in, NULL, keys_out, keys_out + 4, count, half, DLSCAN_INT32,
                                           NULL, m->stream) == DLSCAN_ERROR_OVERLAP,
               "reduce-by-key's values out over its keys out");
        EXPECT(dlscan_reduce_by_key_custom(h, op, d_in, d_in, NULL, keys_out, values_out, count, half,
                                           (dlscan_type)99, NULL, m->stream) == DLSCAN_ERROR_INVALID_TYPE,
               "reduce-by-key with keys of type 99");
        EXPECT(dlscan_reduce_by_key_custom(h, op, d_in, d_in, d_in, keys_out, values_out, count, half, DLSCAN_INT32,
                                           NULL, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT,
               "reduce-by-key with d_values_in2 for one input");
        EXPECT(dlscan_reduce_by_key_custom(h, recurrence, d_in, d_in, NULL, keys_out, values_out, count, half,
                                           DLSCAN_INT32, NULL, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT,
               "reduce-by-key without d_values_in2 for two inputs");
        EXPECT(dlscan_reduce_by_key_custom(h, op, d_in, d_in, NULL, keys_out, values_out, (size_t *)(d_out + 2),
                                           half, DLSCAN_INT32, NULL, m->stream) == DLSCAN_ERROR_MISALIGNED,
               "reduce-by-key's count misaligned");
        EXPECT(dlscan_reduce_by_key_custom(NULL, op, d_in, d_in, NULL, keys_out, values_out, count, half,
                                           DLSCAN_INT32, NULL, m->stream) == DLSCAN_ERROR_INVALID_HANDLE,
               "reduce-by-key with h NULL");
    }
    /* An operator of the other backend. */
    dlscan_handle_t other;
    const int gpu = dlscan_backend_name(h)[0] == 'g';
    if (gpu ? dlscan_create_cpu(&other, 1) == DLSCAN_SUCCESS : dlscan_create(&other) == DLSCAN_SUCCESS) {
        dlscan_operator_t foreign;
        CHECK_OK(other, dlscan_operator_create(other, &good, &foreign));
        bad = a, bad.custom = foreign;
        EXPECT(dlscan_scan(h, &bad, m->stream) == DLSCAN_ERROR_INVALID_ARGUMENT, "an operator of the other backend: %s",
               dlscan_last_error(h));
        dlscan_operator_destroy(foreign);
        dlscan_destroy(other);
    }
    m->wait(m->context);
    unsigned char *back = malloc(n * 4);
    CHECK(back, "malloc");
    m->download(back, d_out, n * 4, m->context);
    for (size_t i = 0; i < n * 4; ++i)
        if (back[i] != TEST_POISON_BYTE) {
            EXPECT(0, "a refused scan wrote byte %zu", i);
            break;
        }
    free(back);
    m->release(d_in, m->context), m->release(d_out, m->context), m->release(d_offsets, m->context);
    dlscan_operator_destroy(op);
    dlscan_operator_destroy(recurrence);
    dlscan_operator_destroy(NULL);
}
