/*
 * operator.c: user operators (dlscan.h, "Your own operator"): their descriptions checked and
 * copied, the built-in ones (product, logsumexp, linear recurrences, real and complex) as CUDA C
 * source for GPU handles and C functions for CPU handles, and a CPU handle's scan with one. A GPU
 * handle's operator is compiled and launched by jit.c.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static dlscan_status dl_check_desc(dlscan_handle_t h, const dlscan_operator_desc *d)
{
    if (d->size < sizeof *d)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "desc->size = %zu is less than this library's %zu: set it to "
                       "sizeof(dlscan_operator_desc)",
                       d->size, sizeof *d);
    if (d->state_bytes < 4 || d->state_bytes > DLSCAN_STATE_MAX_BYTES || d->state_bytes % 4)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "state_bytes = %zu: a state is 4 to %d bytes, a multiple of 4", d->state_bytes,
                       DLSCAN_STATE_MAX_BYTES);
    if (!d->identity)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "desc->identity is NULL: an operator needs its identity");
    if (d->flags & ~(DLSCAN_OPERATOR_LOAD | DLSCAN_OPERATOR_STORE))
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "desc->flags = 0x%x: unknown flags", d->flags);
    const int load = (d->flags & DLSCAN_OPERATOR_LOAD) != 0, store = (d->flags & DLSCAN_OPERATOR_STORE) != 0;
    if (d->in_bytes < 1 || d->in_bytes > DLSCAN_STATE_MAX_BYTES || d->out_bytes < 1 ||
        d->out_bytes > DLSCAN_STATE_MAX_BYTES || d->in2_bytes > DLSCAN_STATE_MAX_BYTES)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "in_bytes = %zu, in2_bytes = %zu, out_bytes = %zu: items are 1 to %d bytes "
                       "(in2_bytes 0: one input)",
                       d->in_bytes, d->in2_bytes, d->out_bytes, DLSCAN_STATE_MAX_BYTES);
    if (!load && (d->in_bytes != d->state_bytes || d->in2_bytes))
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "without DLSCAN_OPERATOR_LOAD an item is a state: in_bytes = %zu is not "
                       "state_bytes = %zu, or in2_bytes = %zu is not 0",
                       d->in_bytes, d->state_bytes, d->in2_bytes);
    if (!store && d->out_bytes != d->state_bytes)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "without DLSCAN_OPERATOR_STORE an output is a state: out_bytes = %zu is not "
                       "state_bytes = %zu",
                       d->out_bytes, d->state_bytes);
    if (h->backend->device_memory && !d->source)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "desc->source is NULL: a GPU handle's operator is CUDA C source");
    if (!h->backend->device_memory &&
        (!d->combine || (load && !d->load) || (store && !d->store)))
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "a CPU handle's operator is C functions: combine%s%s is NULL",
                       load ? ", load" : "", store ? ", store" : "");
    return DLSCAN_SUCCESS;
}

/* An operator from its description; constant (in_bytes, or NULL) is a built-in's value that
 * load takes for every item (the scalar recurrence's a): the CPU's load gets it as item2, and the
 * GPU's code reads it from its module's dlscan_constant. */
static dlscan_status dl_operator_make(dlscan_handle_t h, const dlscan_operator_desc *desc, const void *constant,
                                      dlscan_operator_t *op)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    if (!op)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "op is NULL");
    *op = NULL;
    if (!desc)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "desc is NULL");
    dlscan_status status = dl_check_desc(h, desc);
    if (status != DLSCAN_SUCCESS)
        return status;
    struct dlscan_operator *o = calloc(1, sizeof *o);
    if (!o)
        return dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY, "allocating the operator");
    o->device_memory = h->backend->device_memory;
    o->state_bytes = desc->state_bytes;
    o->in_bytes = desc->in_bytes;
    o->in2_bytes = desc->in2_bytes;
    o->out_bytes = desc->out_bytes;
    o->flags = desc->flags;
    memcpy(o->identity, desc->identity, desc->state_bytes);
    o->combine = desc->combine;
    o->load = desc->load;
    o->store = desc->store;
    if (constant) {
        memcpy(o->item2, constant, desc->in_bytes);
        o->has_item2 = 1;
    }
    if (o->device_memory && !(o->text = strdup(desc->source))) {
        free(o);
        return dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY, "copying the operator's source");
    }
    if (o->device_memory && (status = dl_jit_build(h, o, 0)) != DLSCAN_SUCCESS) {
        free(o->text);
        free(o);
        return status;
    }
    *op = o;
    return DLSCAN_SUCCESS;
}

dlscan_status dlscan_operator_create(dlscan_handle_t h, const dlscan_operator_desc *desc, dlscan_operator_t *op)
{
    return dl_operator_make(h, desc, NULL, op);
}

void dlscan_operator_destroy(dlscan_operator_t op)
{
    if (!op)
        return;
    if (op->device_memory)
        dl_jit_free(op);
    free(op->text);
    free(op);
}

dlscan_status dlscan_operator_info(dlscan_operator_t op, double *milliseconds, int *source)
{
    if (!op)
        return DLSCAN_ERROR_INVALID_ARGUMENT;
    if (milliseconds)
        *milliseconds = op->milliseconds;
    if (source)
        *source = op->source;
    return DLSCAN_SUCCESS;
}

/* ---------------------------------------------------------------- a CPU handle's scan */

/* Item i of a CPU scan with op as a state. */
static void dl_cpu_custom_state(const struct dlscan_operator *op, const dl_scan_request *r, size_t i,
                                unsigned char *item)
{
    const unsigned char *in = r->in, *in2 = r->in2;
    const void *constant = op->has_item2 ? op->item2 : NULL; /* a scalar recurrence's a */
    if (op->flags & DLSCAN_OPERATOR_LOAD)
        op->load(item, in + i * op->in_bytes, in2 ? in2 + i * op->in2_bytes : constant);
    else
        memcpy(item, in + i * op->in_bytes, op->state_bytes);
}

/* A state as output k of r->out: op's store, or the state itself. */
static void dl_cpu_custom_output(const struct dlscan_operator *op, const dl_scan_request *r, size_t k,
                                 const unsigned char *state)
{
    unsigned char out[DLSCAN_STATE_MAX_BYTES];
    if (op->flags & DLSCAN_OPERATOR_STORE)
        op->store(out, state);
    else
        memcpy(out, state, op->state_bytes);
    memcpy((unsigned char *)r->out + k * op->out_bytes, out, op->out_bytes);
}

/* Item i of a CPU scan with op: its state combined into acc, its output written (in place, out[i]
 * is in[i]: the item is read first). */
static void dl_cpu_custom_item(const struct dlscan_operator *op, const dl_scan_request *r, size_t i,
                               unsigned char *acc)
{
    unsigned char item[DLSCAN_STATE_MAX_BYTES];
    dl_cpu_custom_state(op, r, i, item);
    if (r->exclusive) {
        dl_cpu_custom_output(op, r, i, acc);
        op->combine(acc, acc, item);
    } else {
        op->combine(acc, acc, item);
        dl_cpu_custom_output(op, r, i, acc);
    }
}

/* Reduce-by-key: each run of keys of the same bits folded from the init; at its end its output to
 * out[k] and its key to keys_out[k], k its number (in place, k <= the item's index: the item is
 * read first); the count to num_runs. */
static dlscan_status dl_cpu_custom_runs(const dl_scan_request *r)
{
    const struct dlscan_operator *op = r->custom;
    const size_t size = r->key_size;
    const unsigned char *key = r->keys;
    unsigned char acc[DLSCAN_STATE_MAX_BYTES], item[DLSCAN_STATE_MAX_BYTES];
    size_t runs = 0;
    for (size_t i = 0; i < r->n; ++i, key += size) {
        if (i == 0 || memcmp(key - size, key, size) != 0)
            memcpy(acc, r->init_state, op->state_bytes);
        dl_cpu_custom_state(op, r, i, item);
        op->combine(acc, acc, item);
        if (i + 1 < r->n && memcmp(key, key + size, size) == 0)
            continue;
        dl_cpu_custom_output(op, r, runs, acc);
        memcpy((unsigned char *)r->keys_out + runs * size, key, size);
        ++runs;
    }
    *r->num_runs = runs;
    return DLSCAN_SUCCESS;
}

/* Columns: each array's rows in order, a state for each of its columns, each column from the
 * host's init, its total to d_totals. */
static dlscan_status dl_cpu_custom_columns(dlscan_handle_t h, const dl_scan_request *r)
{
    const struct dlscan_operator *op = r->custom;
    const size_t length = r->axis_length, stride = r->axis_stride, state = op->state_bytes;
    unsigned char *acc = malloc(stride * state);
    if (!acc)
        return dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY, "the states of %zu columns (%zu bytes)", stride, stride * state);
    for (size_t array = 0; array < r->n / (length * stride); ++array) {
        for (size_t j = 0; j < stride; ++j)
            memcpy(acc + j * state, r->init_state, state);
        const size_t first = array * length * stride;
        for (size_t row = 0; row < length; ++row)
            for (size_t j = 0; j < stride; ++j)
                dl_cpu_custom_item(op, r, first + row * stride + j, acc + j * state);
        if (r->totals)
            memcpy((unsigned char *)r->totals + array * stride * state, acc, stride * state);
    }
    free(acc);
    return DLSCAN_SUCCESS;
}

/* In one loop, from the init: over offsets each segment from the host's init (the items outside
 * them not written); by key each run of keys of the same bits from it; along rows each row, its
 * total to d_totals; columns and runs as above; else the whole, its total to d_total. */
dlscan_status dl_cpu_custom_scan(dlscan_handle_t h, const dl_scan_request *r)
{
    const struct dlscan_operator *op = r->custom;
    if (r->num_runs)
        return dl_cpu_custom_runs(r);
    if (r->axis_length && r->axis_stride > 1)
        return dl_cpu_custom_columns(h, r);
    unsigned char acc[DLSCAN_STATE_MAX_BYTES];
    if (r->keys) {
        const unsigned char *key = r->keys;
        for (size_t i = 0; i < r->n; ++i, key += r->key_size) {
            if (i == 0 || memcmp(key - r->key_size, key, r->key_size) != 0)
                memcpy(acc, r->init_state, op->state_bytes);
            dl_cpu_custom_item(op, r, i, acc);
        }
        return DLSCAN_SUCCESS;
    }
    if (r->offsets) {
        for (size_t k = 0; k < r->num_segments; ++k) {
            memcpy(acc, r->init_state, op->state_bytes);
            for (size_t i = r->offsets[k]; i < r->offsets[k + 1]; ++i)
                dl_cpu_custom_item(op, r, i, acc);
        }
        return DLSCAN_SUCCESS;
    }
    memcpy(acc, r->init ? r->init : (const void *)r->init_state, op->state_bytes);
    unsigned char *totals = r->totals;
    const size_t length = r->axis_length ? r->axis_length : r->n;
    for (size_t i = 0, at = 0; i < r->n; ++i) {
        if (at == length) { /* the next row */
            memcpy(acc, r->init_state, op->state_bytes);
            at = 0;
        }
        dl_cpu_custom_item(op, r, i, acc);
        if (++at == length && totals) /* a row's end */
            memcpy(totals + i / length * op->state_bytes, acc, op->state_bytes);
    }
    if (r->total)
        memcpy(r->total, acc, op->state_bytes);
    return DLSCAN_SUCCESS;
}

/* ---------------------------------------------------------------- built-in operators */

/* The C functions of the built-ins, one set per type (T, its suffix, its name in CUDA C). */
#define DL_PRODUCT(SUFFIX, T)                                                                      \
    static void dl_product_##SUFFIX(void *r, const void *a, const void *b)                         \
    {                                                                                              \
        T x, y;                                                                                    \
        memcpy(&x, a, sizeof x);                                                                   \
        memcpy(&y, b, sizeof y);                                                                   \
        x = (T)(x * y);                                                                            \
        memcpy(r, &x, sizeof x);                                                                   \
    }
DL_PRODUCT(u32, uint32_t)
DL_PRODUCT(u64, uint64_t)
DL_PRODUCT(f32, float)
DL_PRODUCT(f64, double)

/* logsumexp's state: the running maximum m and the sum s of exp(x - m). A NaN item makes
 * every later output NaN; an infinite maximum keeps it. */
#define DL_LOGSUMEXP(SUFFIX, T, EXP, LOG)                                                          \
    typedef struct {                                                                               \
        T m, s;                                                                                    \
    } dl_lse_##SUFFIX;                                                                             \
    static void dl_lse_combine_##SUFFIX(void *r, const void *a, const void *b)                     \
    {                                                                                              \
        dl_lse_##SUFFIX x, y, z;                                                                   \
        memcpy(&x, a, sizeof x);                                                                   \
        memcpy(&y, b, sizeof y);                                                                   \
        z.m = x.m != x.m || y.m != y.m ? x.m + y.m : x.m > y.m ? x.m : y.m;                        \
        if (isinf(z.m))                                                                            \
            z.s = (x.m == z.m ? x.s : 0) + (y.m == z.m ? y.s : 0);                                 \
        else                                                                                       \
            z.s = x.s * EXP(x.m - z.m) + y.s * EXP(y.m - z.m);                                     \
        memcpy(r, &z, sizeof z);                                                                   \
    }                                                                                              \
    static void dl_lse_load_##SUFFIX(void *state, const void *item, const void *item2)             \
    {                                                                                              \
        (void)item2;                                                                               \
        dl_lse_##SUFFIX z = {0, 1};                                                                \
        memcpy(&z.m, item, sizeof z.m);                                                            \
        memcpy(state, &z, sizeof z);                                                               \
    }                                                                                              \
    static void dl_lse_store_##SUFFIX(void *item, const void *state)                               \
    {                                                                                              \
        dl_lse_##SUFFIX z;                                                                         \
        memcpy(&z, state, sizeof z);                                                               \
        const T y = isinf(z.m) ? z.m : z.m + LOG(z.s);                                             \
        memcpy(item, &y, sizeof y);                                                                \
    }
DL_LOGSUMEXP(f32, float, expf, logf)
DL_LOGSUMEXP(f64, double, exp, log)

/* The linear recurrence's state (a, b): (a1, b1) then (a2, b2) is (a1 a2, a2 b1 + b2). */
#define DL_RECURRENCE(SUFFIX, T, FMA)                                                              \
    typedef struct {                                                                               \
        T a, b;                                                                                    \
    } dl_lr_##SUFFIX;                                                                              \
    static void dl_lr_combine_##SUFFIX(void *r, const void *p, const void *q)                      \
    {                                                                                              \
        dl_lr_##SUFFIX x, y, z;                                                                    \
        memcpy(&x, p, sizeof x);                                                                   \
        memcpy(&y, q, sizeof y);                                                                   \
        z.a = x.a * y.a;                                                                           \
        z.b = FMA(y.a, x.b, y.b);                                                                  \
        memcpy(r, &z, sizeof z);                                                                   \
    }                                                                                              \
    static void dl_lr_load_##SUFFIX(void *state, const void *item, const void *item2)              \
    {                                                                                              \
        dl_lr_##SUFFIX z;                                                                          \
        memcpy(&z.a, item, sizeof z.a);                                                            \
        memcpy(&z.b, item2, sizeof z.b);                                                           \
        memcpy(state, &z, sizeof z);                                                               \
    }                                                                                              \
    static void dl_lr_store_##SUFFIX(void *item, const void *state)                                \
    {                                                                                              \
        memcpy(item, (const unsigned char *)state + sizeof(T), sizeof(T));                         \
    }
DL_RECURRENCE(f32, float, fmaf)
DL_RECURRENCE(f64, double, fma)

/* The scalar recurrence's load on a CPU handle: b the item, a the operator's constant (its
 * item2, dl_cpu_custom_scan). */
#define DL_RECURRENCE_SCALAR(SUFFIX, T)                                                            \
    static void dl_lr_scalar_load_##SUFFIX(void *state, const void *item, const void *item2)       \
    {                                                                                              \
        dl_lr_load_##SUFFIX(state, item2, item);                                                   \
    }
DL_RECURRENCE_SCALAR(f32, float)
DL_RECURRENCE_SCALAR(f64, double)

/* The complex recurrence's state (a, b), each (re, im), combined as the real one's with the
 * complex product x y + z written out in fused multiply-adds, as the GPU's source does (C's own
 * complex product also mends infinities, at a call an item). An addend of -0 keeps a product's
 * bits. */
#define DL_COMPLEX_RECURRENCE(SUFFIX, T, FMA)                                                      \
    typedef struct {                                                                               \
        T re, im;                                                                                  \
    } dl_cx_##SUFFIX;                                                                              \
    static dl_cx_##SUFFIX dl_cx_mad_##SUFFIX(dl_cx_##SUFFIX x, dl_cx_##SUFFIX y, dl_cx_##SUFFIX z) \
    {                                                                                              \
        return (dl_cx_##SUFFIX){FMA(x.re, y.re, FMA(-x.im, y.im, z.re)),                           \
                                FMA(x.re, y.im, FMA(x.im, y.re, z.im))};                           \
    }                                                                                              \
    static void dl_clr_combine_##SUFFIX(void *r, const void *p, const void *q)                     \
    {                                                                                              \
        dl_cx_##SUFFIX x[2], y[2], z[2];                                                           \
        memcpy(x, p, sizeof x);                                                                    \
        memcpy(y, q, sizeof y);                                                                    \
        z[0] = dl_cx_mad_##SUFFIX(x[0], y[0], (dl_cx_##SUFFIX){-(T)0, -(T)0});                     \
        z[1] = dl_cx_mad_##SUFFIX(y[0], x[1], y[1]);                                               \
        memcpy(r, z, sizeof z);                                                                    \
    }                                                                                              \
    static void dl_clr_load_##SUFFIX(void *state, const void *item, const void *item2)             \
    {                                                                                              \
        memcpy(state, item, 2 * sizeof(T));                                                        \
        memcpy((unsigned char *)state + 2 * sizeof(T), item2, 2 * sizeof(T));                      \
    }                                                                                              \
    static void dl_clr_scalar_load_##SUFFIX(void *state, const void *item, const void *item2)      \
    {                                                                                              \
        dl_clr_load_##SUFFIX(state, item2, item);                                                  \
    }                                                                                              \
    static void dl_clr_store_##SUFFIX(void *item, const void *state)                               \
    {                                                                                              \
        memcpy(item, (const unsigned char *)state + 2 * sizeof(T), 2 * sizeof(T));                 \
    }
DL_COMPLEX_RECURRENCE(f32, float, fmaf)
DL_COMPLEX_RECURRENCE(f64, double, fma)

/* The built-ins' CUDA C. %s: the state's C type. The scalar recurrence's a is the module's
 * dlscan_constant, which jit.c sets from the operator's item2 once its code is loaded: one
 * compiled program serves every a. */
static const char dl_product_source[] = "typedef %s dlscan_state;\n"
                                        "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)"
                                        " { return x * y; }\n";

static const char dl_logsumexp_source[] =
    "typedef %s real;\n"
    "struct dlscan_state { real m, s; };\n"
    "typedef real dlscan_in; typedef real dlscan_out;\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)\n"
    "{\n"
    "    dlscan_state z;\n"
    "    z.m = x.m != x.m || y.m != y.m ? x.m + y.m : x.m > y.m ? x.m : y.m;\n"
    "    if (isinf(z.m))\n"
    "        z.s = (x.m == z.m ? x.s : real(0)) + (y.m == z.m ? y.s : real(0));\n"
    "    else\n"
    "        z.s = x.s * exp(x.m - z.m) + y.s * exp(y.m - z.m);\n"
    "    return z;\n"
    "}\n"
    "__device__ dlscan_state dlscan_load(real x) { return dlscan_state{x, real(1)}; }\n"
    "__device__ real dlscan_store(dlscan_state z) { return isinf(z.m) ? z.m : z.m + log(z.s); }\n";

static const char dl_recurrence_source[] =
    "typedef %s real;\n"
    "struct dlscan_state { real a, b; };\n"
    "typedef real dlscan_in; typedef real dlscan_in2; typedef real dlscan_out;\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)\n"
    "{ return dlscan_state{x.a * y.a, fma(y.a, x.b, y.b)}; }\n"
    "__device__ dlscan_state dlscan_load(real a, real b) { return dlscan_state{a, b}; }\n"
    "__device__ real dlscan_store(dlscan_state s) { return s.b; }\n";

static const char dl_recurrence_scalar_source[] =
    "typedef %s real;\n"
    "struct dlscan_state { real a, b; };\n"
    "typedef real dlscan_in; typedef real dlscan_out;\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)\n"
    "{ return dlscan_state{x.a * y.a, fma(y.a, x.b, y.b)}; }\n"
    "__constant__ real dlscan_constant;\n"
    "__device__ dlscan_state dlscan_load(real b) { return dlscan_state{dlscan_constant, b}; }\n"
    "__device__ real dlscan_store(dlscan_state s) { return s.b; }\n";

/* %s: the parts' C type; then the load, of (a, b) or, with a scalar a, of b. */
static const char dl_complex_recurrence_source[] =
    "typedef %s real;\n"
    "struct complex_t { real re, im; };\n"
    "__device__ complex_t complex_mad(complex_t x, complex_t y, complex_t z)\n"
    "{ return complex_t{fma(x.re, y.re, fma(-x.im, y.im, z.re)), fma(x.re, y.im, fma(x.im, y.re, z.im))}; }\n"
    "struct dlscan_state { complex_t a, b; };\n"
    "typedef complex_t dlscan_in; typedef complex_t dlscan_out;\n"
    "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)\n"
    "{ return dlscan_state{complex_mad(x.a, y.a, complex_t{-real(0), -real(0)}), complex_mad(y.a, x.b, y.b)}; }\n"
    "__device__ complex_t dlscan_store(dlscan_state s) { return s.b; }\n"
    "%s";
static const char dl_complex_load[] =
    "typedef complex_t dlscan_in2;\n"
    "__device__ dlscan_state dlscan_load(complex_t a, complex_t b) { return dlscan_state{a, b}; }\n";
static const char dl_complex_scalar_load[] =
    "__constant__ complex_t dlscan_constant;\n"
    "__device__ dlscan_state dlscan_load(complex_t b) { return dlscan_state{dlscan_constant, b}; }\n";

dlscan_status dlscan_operator_builtin(dlscan_handle_t h, dlscan_builtin which, dlscan_type type,
                                      const void *parameter, dlscan_operator_t *op)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    if (!op)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "op is NULL");
    *op = NULL;
    const int f32 = type == DLSCAN_FLOAT32, f64 = type == DLSCAN_FLOAT64;
    const int real = f32 || f64, word32 = type == DLSCAN_INT32 || type == DLSCAN_UINT32,
              word64 = type == DLSCAN_INT64 || type == DLSCAN_UINT64;
    const char *c_type = f32 ? "float" : f64 ? "double" : word32 ? "unsigned int" : "unsigned long long";
    const size_t size = real || word32 || word64 ? dl_type_size(type) : 0;
    char source[2048];
    dlscan_operator_desc d = {.size = sizeof d};
    /* Identities: 1 (products), (-inf, 0) (logsumexp), (1, -0) (recurrences), (1 + 0i, -0 - 0i)
     * (complex recurrences). */
    unsigned char identity[32] = {0};
    const float one32 = 1.0f, minus_inf32 = -INFINITY, minus_zero32 = -0.0f;
    const double one64 = 1.0, minus_inf64 = -INFINITY, minus_zero64 = -0.0;
    const uint32_t one_u32 = 1;
    const uint64_t one_u64 = 1;
    switch (which) {
    case DLSCAN_BUILTIN_PRODUCT:
        if (!size)
            return dl_fail(h, DLSCAN_ERROR_INVALID_TYPE,
                           "DLSCAN_BUILTIN_PRODUCT takes int32, uint32, int64, uint64, float32 and float64, not %s",
                           dl_type_valid(type) ? dl_type_name(type) : "an unknown type");
        memcpy(identity, f32 ? (const void *)&one32 : f64 ? (const void *)&one64 : word32 ? (const void *)&one_u32 : (const void *)&one_u64, size);
        snprintf(source, sizeof source, dl_product_source, c_type);
        d.state_bytes = d.in_bytes = d.out_bytes = size;
        d.combine = f32 ? dl_product_f32 : f64 ? dl_product_f64 : word32 ? dl_product_u32 : dl_product_u64;
        break;
    case DLSCAN_BUILTIN_LOGSUMEXP:
    case DLSCAN_BUILTIN_LINEAR_RECURRENCE:
        if (!real)
            return dl_fail(h, DLSCAN_ERROR_INVALID_TYPE, "%s takes float32 and float64, not %s",
                           which == DLSCAN_BUILTIN_LOGSUMEXP ? "DLSCAN_BUILTIN_LOGSUMEXP"
                                                             : "DLSCAN_BUILTIN_LINEAR_RECURRENCE",
                           dl_type_valid(type) ? dl_type_name(type) : "an unknown type");
        d.state_bytes = 2 * size;
        d.in_bytes = d.out_bytes = size;
        d.flags = DLSCAN_OPERATOR_LOAD | DLSCAN_OPERATOR_STORE;
        if (which == DLSCAN_BUILTIN_LOGSUMEXP) {
            memcpy(identity, f32 ? (const void *)&minus_inf32 : (const void *)&minus_inf64, size);
            snprintf(source, sizeof source, dl_logsumexp_source, c_type);
            d.combine = f32 ? dl_lse_combine_f32 : dl_lse_combine_f64;
            d.load = f32 ? dl_lse_load_f32 : dl_lse_load_f64;
            d.store = f32 ? dl_lse_store_f32 : dl_lse_store_f64;
        } else {
            memcpy(identity, f32 ? (const void *)&one32 : (const void *)&one64, size);
            memcpy(identity + size, f32 ? (const void *)&minus_zero32 : (const void *)&minus_zero64, size);
            d.combine = f32 ? dl_lr_combine_f32 : dl_lr_combine_f64;
            d.store = f32 ? dl_lr_store_f32 : dl_lr_store_f64;
            if (parameter) {
                snprintf(source, sizeof source, dl_recurrence_scalar_source, c_type);
                d.load = f32 ? dl_lr_scalar_load_f32 : dl_lr_scalar_load_f64;
            } else {
                snprintf(source, sizeof source, dl_recurrence_source, c_type);
                d.in2_bytes = size;
                d.load = f32 ? dl_lr_load_f32 : dl_lr_load_f64;
            }
        }
        break;
    case DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE:
        if (!real)
            return dl_fail(h, DLSCAN_ERROR_INVALID_TYPE,
                           "DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE takes float32 (complex64 items) and "
                           "float64 (complex128), not %s",
                           dl_type_valid(type) ? dl_type_name(type) : "an unknown type");
        d.state_bytes = 4 * size;
        d.in_bytes = d.out_bytes = 2 * size;
        d.in2_bytes = parameter ? 0 : 2 * size;
        d.flags = DLSCAN_OPERATOR_LOAD | DLSCAN_OPERATOR_STORE;
        memcpy(identity, f32 ? (const void *)&one32 : (const void *)&one64, size);
        for (int part = 2; part < 4; ++part)
            memcpy(identity + part * size, f32 ? (const void *)&minus_zero32 : (const void *)&minus_zero64, size);
        snprintf(source, sizeof source, dl_complex_recurrence_source, c_type,
                 parameter ? dl_complex_scalar_load : dl_complex_load);
        d.combine = f32 ? dl_clr_combine_f32 : dl_clr_combine_f64;
        d.load = parameter ? (f32 ? dl_clr_scalar_load_f32 : dl_clr_scalar_load_f64)
                           : (f32 ? dl_clr_load_f32 : dl_clr_load_f64);
        d.store = f32 ? dl_clr_store_f32 : dl_clr_store_f64;
        break;
    default:
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "which = %d is no dlscan_builtin", (int)which);
    }
    d.identity = identity;
    d.source = source;
    const int takes_a = which == DLSCAN_BUILTIN_LINEAR_RECURRENCE || which == DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE;
    return dl_operator_make(h, &d, takes_a ? parameter : NULL, op);
}
