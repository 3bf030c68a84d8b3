/*
 * compact_check.c: the shared compaction tests (see compact_check.h): input patterns, the
 * sequential references, and the comparison of counts and outputs.
 */
#include "compact_check.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define POISON 0xa5

static size_t size_of(dlscan_type type)
{
    return type == DLSCAN_INT32 || type == DLSCAN_UINT32 || type == DLSCAN_FLOAT32 ? 4 : 8;
}

static const char *const call_names[] = {"select_flagged", "select_if", "unique",
                                         "run_length_encode", "reduce_by_key"};

/* ---------------------------------------------------------------- inputs */

/* Item i of a select_if input: a whole number in [0, 1000) as `type`. */
static void put_number(dlscan_type type, void *items, size_t i, unsigned value)
{
    switch (type) {
    case DLSCAN_INT32: ((int32_t *)items)[i] = (int32_t)value; break;
    case DLSCAN_UINT32: ((uint32_t *)items)[i] = value; break;
    case DLSCAN_INT64: ((int64_t *)items)[i] = value; break;
    case DLSCAN_UINT64: ((uint64_t *)items)[i] = value; break;
    case DLSCAN_FLOAT32: ((float *)items)[i] = (float)value; break;
    case DLSCAN_FLOAT64: ((double *)items)[i] = value; break;
    default: break; /* compaction takes the six types above */
    }
}

/* Item i of 4- or 8-byte items (the only sizes compaction takes), as bits. The two sizes are
 * spelt out so that each copy is one load or store: the benches' references run over 2^28
 * items. */
static uint64_t get_bits(const void *items, size_t i, size_t size)
{
    if (size == 4) {
        uint32_t bits;
        memcpy(&bits, (const char *)items + i * 4, 4);
        return bits;
    }
    uint64_t bits;
    memcpy(&bits, (const char *)items + i * 8, 8);
    return bits;
}

static void put_bits(void *items, size_t i, size_t size, uint64_t bits)
{
    if (size == 4) {
        const uint32_t low = (uint32_t)bits;
        memcpy((char *)items + i * 4, &low, 4);
    } else {
        memcpy((char *)items + i * 8, &bits, 8);
    }
}

/* The select_if threshold (items are in [0, 1000)) for a keep ratio, with LESS. */
static unsigned keep_threshold(compact_pattern pattern)
{
    switch (pattern) {
    case PATTERN_KEEP_NONE: return 0;
    case PATTERN_KEEP_1: return 10;
    case PATTERN_KEEP_HALF: return 500;
    case PATTERN_KEEP_99: return 990;
    default: return 1000;
    }
}

/* Value k (any k: taken modulo their number) of the values at a comparison's edges, for
 * PATTERN_EDGES: the type's extremes and their neighbours, 0 and 1; floats' signed zeros,
 * infinities, NaNs of both signs and the smallest subnormals. */
static void put_edge(dlscan_type type, void *items, size_t i, uint64_t k)
{
#define PUT_EDGE(T, ...)                                                                              do {                                                                                                  static const T edges[] = {__VA_ARGS__};                                                           memcpy((T *)items + i, &edges[k % (sizeof edges / sizeof edges[0])], sizeof(T));              } while (0)
    switch (type) {
    case DLSCAN_FLOAT32:
        PUT_EDGE(float, 0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 1.5f, -1.5f, FLT_MAX, -FLT_MAX,
                 FLT_TRUE_MIN, -FLT_TRUE_MIN);
        break;
    case DLSCAN_FLOAT64:
        PUT_EDGE(double, 0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 1.5, -1.5, DBL_MAX, -DBL_MAX,
                 DBL_TRUE_MIN, -DBL_TRUE_MIN);
        break;
    case DLSCAN_INT32: PUT_EDGE(int32_t, 0, 1, -1, INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1); break;
    case DLSCAN_INT64: PUT_EDGE(int64_t, 0, 1, -1, INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1); break;
    case DLSCAN_UINT32: PUT_EDGE(uint32_t, 0, 1, UINT32_MAX, UINT32_MAX - 1, 0x80000000u, 0x7fffffffu); break;
    case DLSCAN_UINT64:
        PUT_EDGE(uint64_t, 0, 1, UINT64_MAX, UINT64_MAX - 1, 0x8000000000000000u, 0x7fffffffffffffffu);
        break;
    default: break;
    }
#undef PUT_EDGE
}

/* L of the patterns PATTERN_RUNS_MEAN_L, else 0. */
static size_t mean_run(compact_pattern pattern)
{
    switch (pattern) {
    case PATTERN_RUNS_MEAN_8: return 8;
    case PATTERN_RUNS_MEAN_64: return 64;
    case PATTERN_RUNS_MEAN_1024: return 1024;
    case PATTERN_RUNS_NAN: return 64;
    default: return 0;
    }
}

/* The length of the next run. log_q: log(1 - 1/L), for PATTERN_RUNS_MEAN_L. */
static size_t run_length(const compact_case *c, double log_q, uint64_t *rng)
{
    switch (c->pattern) {
    case PATTERN_RUNS_OF_1: return 1;
    case PATTERN_RUNS_OF_TILE: return c->tile;
    case PATTERN_RUNS_OF_TILES: return 3 * c->tile + 5;
    case PATTERN_RUNS_HALF: {
        size_t length = 1;
        while (test_random(rng) & 1)
            ++length;
        return length;
    }
    case PATTERN_RUNS_MEAN_8:
    case PATTERN_RUNS_MEAN_64:
    case PATTERN_RUNS_MEAN_1024:
    case PATTERN_RUNS_NAN: {
        /* Geometric with P(length > k) = q^k, q = 1 - 1/L, drawn by inversion from u in
         * (0, 1]: one number a run, however long. */
        const double u = (double)((test_random(rng) >> 11) + 1) * 0x1p-53;
        const double length = 1.0 + floor(log(u) / log_q);
        return length < (double)COMPACT_LONGEST_RUN ? (size_t)length : COMPACT_LONGEST_RUN;
    }
    default: return 1 + test_random(rng) % 11;
    }
}

/* ---------------------------------------------------------------- references */

/* value_type op on bits: integer sums wrap; the float values are multiples of 1/256 in
 * [-1, 1], so the sums of a run of at most 2^16 items (COMPACT_LONGEST_RUN; runs of tiles:
 * 3 x 8192 + 5) are exact in float32 and float64, in any order. */
static uint64_t combine_bits(dlscan_type type, dlscan_op op, uint64_t a, uint64_t b)
{
#define COMBINE_AS(T)                                                                             \
    do {                                                                                          \
        T x, y, r;                                                                                \
        memcpy(&x, &a, sizeof x);                                                                 \
        memcpy(&y, &b, sizeof y);                                                                 \
        r = op == DLSCAN_SUM ? (T)(x + y)                                                         \
            : op == DLSCAN_MIN ? (y < x || y != y ? y : x) /* a NaN wins */                       \
                               : (x < y || y != y ? y : x);                                        \
        uint64_t out = 0;                                                                         \
        memcpy(&out, &r, sizeof r);                                                               \
        return out;                                                                               \
    } while (0)
    switch (type) {
    case DLSCAN_INT32:
        if (op == DLSCAN_SUM)
            return (uint32_t)((uint32_t)a + (uint32_t)b);
        COMBINE_AS(int32_t);
    case DLSCAN_UINT32: COMBINE_AS(uint32_t);
    case DLSCAN_INT64:
        if (op == DLSCAN_SUM)
            return a + b;
        COMBINE_AS(int64_t);
    case DLSCAN_UINT64: COMBINE_AS(uint64_t);
    case DLSCAN_FLOAT32: COMBINE_AS(float);
    case DLSCAN_FLOAT64: COMBINE_AS(double);
    default: return 0; /* compaction takes the six types above */
    }
#undef COMBINE_AS
}

/* Are these the bits of a NaN of `type`? */
static int is_nan(dlscan_type type, uint64_t bits)
{
    if (type == DLSCAN_FLOAT32)
        return (bits & 0x7fffffffu) > 0x7f800000u;
    return type == DLSCAN_FLOAT64 && (bits & ~(1ull << 63)) > 0x7ff0000000000000ull;
}

int compact_check_keeps(dlscan_type type, dlscan_predicate predicate, const void *items, size_t i,
                        const void *operand)
{
#define TEST_AS(T)                                                                                \
    do {                                                                                          \
        T x, o;                                                                                   \
        memcpy(&x, (const char *)items + i * sizeof x, sizeof x);                                 \
        memcpy(&o, operand, sizeof o);                                                            \
        switch (predicate) {                                                                      \
        case DLSCAN_LESS: return x < o;                                                           \
        case DLSCAN_LESS_EQUAL: return x <= o;                                                    \
        case DLSCAN_GREATER: return x > o;                                                        \
        case DLSCAN_GREATER_EQUAL: return x >= o;                                                 \
        case DLSCAN_EQUAL: return x == o;                                                         \
        case DLSCAN_NOT_EQUAL: return x != o;                                                     \
        default: return x != (T)0;                                                                \
        }                                                                                         \
    } while (0)
    switch (type) {
    case DLSCAN_INT32: TEST_AS(int32_t);
    case DLSCAN_UINT32: TEST_AS(uint32_t);
    case DLSCAN_INT64: TEST_AS(int64_t);
    case DLSCAN_UINT64: TEST_AS(uint64_t);
    case DLSCAN_FLOAT32: TEST_AS(float);
    case DLSCAN_FLOAT64: TEST_AS(double);
    default: return 0; /* compaction takes the six types above */
    }
#undef TEST_AS
}

size_t compact_reference(const compact_case *c, const void *in, const unsigned char *flags,
                         const void *values, const void *operand, void *out, void *out2)
{
    const size_t size = size_of(c->type), vsize = size_of(c->value_type);
    size_t count = 0;
    for (size_t i = 0; i < c->n; ++i) {
        int kept;
        if (c->call == COMPACT_SELECT_FLAGGED)
            kept = flags[i] != 0;
        else if (c->call == COMPACT_SELECT_IF)
            kept = compact_check_keeps(c->type, c->predicate, in, i, operand);
        else
            kept = i == 0 || get_bits(in, i, size) != get_bits(in, i - 1, size);
        if (kept)
            put_bits(out, count++, size, get_bits(in, i, size));
        if (c->call == COMPACT_RUN_LENGTH)
            ((size_t *)out2)[count - 1] = kept ? 1 : ((size_t *)out2)[count - 1] + 1;
        if (c->call == COMPACT_REDUCE_BY_KEY)
            put_bits(out2, count - 1, vsize,
                     kept ? get_bits(values, i, vsize)
                          : combine_bits(c->value_type, c->op, get_bits(out2, count - 1, vsize),
                                         get_bits(values, i, vsize)));
    }
    return count;
}

/* ---------------------------------------------------------------- one case */

void compact_make_inputs(const compact_case *c, void *in, unsigned char *flags, void *values,
                         uint64_t *operand_bits, uint64_t *rng)
{
    const size_t n = c->n, size = size_of(c->type);
    const int has_flags = c->call == COMPACT_SELECT_FLAGGED;
    const int has_values = c->call == COMPACT_REDUCE_BY_KEY;
    if (c->pattern == PATTERN_EDGES) {
        for (size_t i = 0; i < n; ++i)
            put_edge(c->type, in, i, test_random(rng));
        put_edge(c->type, operand_bits, 0, test_random(rng));
    } else if (c->call == COMPACT_SELECT_FLAGGED || c->call == COMPACT_SELECT_IF) {
        const unsigned threshold = keep_threshold(c->pattern);
        for (size_t i = 0; i < n; ++i) {
            const unsigned number = (unsigned)(test_random(rng) % 1000);
            if (has_flags) {
                put_bits(in, i, size, test_random(rng));
                flags[i] = number < threshold ? (unsigned char)(1 + number % 255) : 0;
            } else {
                put_number(c->type, in, i, number);
            }
        }
        unsigned operand = threshold;
        if (c->predicate == DLSCAN_EQUAL || c->predicate == DLSCAN_NOT_EQUAL)
            operand = 7;
        else if (c->predicate == DLSCAN_LESS_EQUAL || c->predicate == DLSCAN_GREATER)
            operand = threshold ? threshold - 1 : 0;
        put_number(c->type, operand_bits, 0, operand);
    } else {
        const size_t mean = mean_run(c->pattern);
        const double log_q = mean ? log1p(-1.0 / (double)mean) : 0.0;
        uint64_t bits = test_random(rng);
        for (size_t i = 0; i < n;) {
            const size_t length = run_length(c, log_q, rng);
            for (size_t j = 0; j < length && i < n; ++j, ++i)
                put_bits(in, i, size, bits);
            uint64_t next;
            do
                next = test_random(rng) & (size == 4 ? 0xffffffffull : ~0ull);
            while (next == bits);
            bits = next;
        }
        if (has_values)
            test_fill_random(c->value_type,
                             c->pattern == PATTERN_RUNS_NAN ? TEST_VALUES_NAN : TEST_VALUES_UNIFORM,
                             values, n, rng);
    }
}


void compact_check_case(dlscan_handle_t h, const test_memory *m, const compact_case *c,
                        uint64_t *rng)
{
    const size_t n = c->n, size = size_of(c->type), vsize = size_of(c->value_type);
    const int has_flags = c->call == COMPACT_SELECT_FLAGGED;
    const int has_values = c->call == COMPACT_REDUCE_BY_KEY;
    const size_t out2_size = c->call == COMPACT_RUN_LENGTH ? sizeof(size_t) : vsize;
    const int has_out2 = c->call == COMPACT_RUN_LENGTH || has_values;
    const size_t items_bytes = n * size, values_bytes = n * vsize, out2_bytes = n * out2_size;

    /* Inputs. */
    char *in = malloc(items_bytes + 8), *values = malloc(values_bytes + 8);
    unsigned char *flags = malloc(n + 8);
    char *want = malloc(items_bytes + 8), *want2 = malloc(out2_bytes + 8);
    char *got = malloc(items_bytes + 8), *got2 = malloc(out2_bytes + 8);
    CHECK(in && values && flags && want && want2 && got && got2, "host allocation failed");
    uint64_t operand_bits = 0;
    compact_make_inputs(c, in, flags, values, &operand_bits, rng);
    const size_t want_count = compact_reference(c, in, flags, values, &operand_bits, want, want2);

    /* Device buffers; outputs poisoned. */
    void *d_in = m->alloc(items_bytes + 8, m->context);
    void *d_flags = has_flags ? m->alloc(n + 8, m->context) : NULL;
    void *d_values = has_values ? m->alloc(values_bytes + 8, m->context) : NULL;
    void *d_out = c->in_place ? d_in : m->alloc(items_bytes + 8, m->context);
    void *d_out2 = !has_out2 ? NULL
                   : c->in_place && has_values ? d_values
                                               : m->alloc(out2_bytes + 8, m->context);
    size_t *d_count = m->alloc(sizeof(size_t), m->context);
    CHECK(d_in && d_out && d_count && (!has_flags || d_flags) && (!has_values || d_values) &&
              (!has_out2 || d_out2),
          "device allocation failed");
    m->upload(d_in, in, items_bytes, m->context);
    if (has_flags)
        m->upload(d_flags, flags, n, m->context);
    if (has_values)
        m->upload(d_values, values, values_bytes, m->context);
    if (!c->in_place)
        m->fill(d_out, POISON, items_bytes, m->context);
    if (has_out2 && !(c->in_place && has_values))
        m->fill(d_out2, POISON, out2_bytes, m->context);
    m->fill(d_count, POISON, sizeof(size_t), m->context);

    dlscan_status status = DLSCAN_SUCCESS;
    cudaStream_t s = m->stream;
    switch (c->call) {
    case COMPACT_SELECT_FLAGGED:
        status = dlscan_select_flagged(h, d_in, d_flags, d_out, d_count, n, c->type, s);
        break;
    case COMPACT_SELECT_IF:
        status = dlscan_select_if(h, d_in, d_out, d_count, n, c->type, c->predicate, &operand_bits, s);
        break;
    case COMPACT_UNIQUE: status = dlscan_unique(h, d_in, d_out, d_count, n, c->type, s); break;
    case COMPACT_RUN_LENGTH:
        status = dlscan_run_length_encode(h, d_in, d_out, d_out2, d_count, n, c->type, s);
        break;
    case COMPACT_REDUCE_BY_KEY:
        status = dlscan_reduce_by_key(h, d_in, d_values, d_out, d_out2, d_count, n, c->type,
                                      c->value_type, c->op, s);
        break;
    }
    CHECK(status == DLSCAN_SUCCESS, "%s n=%zu: %s (%s)", call_names[c->call], n,
          dlscan_status_string(status), dlscan_last_error(h));
    m->wait(m->context);
    size_t got_count = 0;
    m->download(&got_count, d_count, sizeof got_count, m->context);
    m->download(got, d_out, items_bytes, m->context);
    if (has_out2)
        m->download(got2, d_out2, out2_bytes, m->context);

    char where[160];
    snprintf(where, sizeof where, "%s type %d (values %d, op %d, predicate %d) n=%zu pattern %d%s",
             call_names[c->call], (int)c->type, (int)c->value_type, (int)c->op, (int)c->predicate, n,
             (int)c->pattern, c->in_place ? " in place" : "");
    int ok = got_count == want_count;
    EXPECT(ok, "%s: count %zu, want %zu", where, got_count, want_count);
    for (size_t k = 0; ok && k < want_count; ++k) {
        ok = get_bits(got, k, size) == get_bits(want, k, size);
        EXPECT(ok, "%s: item %zu of %zu is %#llx, want %#llx", where, k, want_count,
               (unsigned long long)get_bits(got, k, size), (unsigned long long)get_bits(want, k, size));
        if (ok && has_out2) {
            ok = get_bits(got2, k, out2_size) == get_bits(want2, k, out2_size) ||
                 (has_values && is_nan(c->value_type, get_bits(got2, k, out2_size)) &&
                  is_nan(c->value_type, get_bits(want2, k, out2_size))); /* any NaN */
            EXPECT(ok, "%s: %s %zu of %zu is %#llx, want %#llx", where,
                   c->call == COMPACT_RUN_LENGTH ? "run length" : "run value", k, want_count,
                   (unsigned long long)get_bits(got2, k, out2_size),
                   (unsigned long long)get_bits(want2, k, out2_size));
        }
    }
    /* Nothing past the count was written. */
    for (size_t b = want_count * size; ok && !c->in_place && b < items_bytes; ++b) {
        ok = (unsigned char)got[b] == POISON;
        EXPECT(ok, "%s: output byte %zu, past the count, was written", where, b);
    }
    for (size_t b = want_count * out2_size; ok && has_out2 && !(c->in_place && has_values) &&
                                            b < out2_bytes; ++b) {
        ok = (unsigned char)got2[b] == POISON;
        EXPECT(ok, "%s: second output byte %zu, past the count, was written", where, b);
    }
    CHECK(ok, "%s failed (see above)", where);

    m->release(d_in, m->context);
    if (d_flags)
        m->release(d_flags, m->context);
    if (d_values)
        m->release(d_values, m->context);
    if (!c->in_place)
        m->release(d_out, m->context);
    if (has_out2 && !(c->in_place && has_values))
        m->release(d_out2, m->context);
    m->release(d_count, m->context);
    free(in), free(values), free(flags), free(want), free(want2), free(got), free(got2);
}

/* ---------------------------------------------------------------- sweeps */

void compact_check_type(dlscan_handle_t h, const test_memory *m, dlscan_type type, size_t max_n,
                        uint64_t *rng)
{
    const size_t candidates[] = {0,        1,        2,        2047,     2048,        2049,
                                 4095,     4096,     4097,
                                 8191,     8192,     8193,     3 * 4096 + 5, 33 * 4096 + 1,
                                 (1u << 16) + 1, (1u << 20) - 1};
    size_t sizes[20];
    int count = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; ++i)
        if (candidates[i] <= max_n)
            sizes[count++] = candidates[i];
    for (int i = 0; i < 2; ++i)
        sizes[count++] = 1 + test_random(rng) % max_n;
    static const dlscan_type value_types[] = {DLSCAN_INT32, DLSCAN_FLOAT32, DLSCAN_INT64,
                                              DLSCAN_FLOAT64, DLSCAN_UINT32, DLSCAN_UINT64};
    static const dlscan_predicate others[] = {DLSCAN_LESS_EQUAL, DLSCAN_GREATER, DLSCAN_GREATER_EQUAL,
                                              DLSCAN_EQUAL, DLSCAN_NOT_EQUAL, DLSCAN_NONZERO};
    /* The run calls' patterns, the last two long runs (of mean 64 and 1024). */
    static const compact_pattern runs[] = {PATTERN_RUNS_OF_1,    PATTERN_RUNS_OF_TILE,
                                           PATTERN_RUNS_OF_TILES, PATTERN_RUNS_RANDOM,
                                           PATTERN_RUNS_MEAN_64, PATTERN_RUNS_MEAN_1024};
    int variant = 0;
    for (int i = 0; i < count; ++i) {
        for (int p = PATTERN_KEEP_NONE; p <= PATTERN_KEEP_ALL; ++p) {
            const compact_case flagged = {COMPACT_SELECT_FLAGGED, type, type, DLSCAN_SUM, DLSCAN_LESS,
                                          (compact_pattern)p, 4096, sizes[i], ++variant % 2};
            compact_check_case(h, m, &flagged, rng);
            const compact_case if_less = {COMPACT_SELECT_IF, type, type, DLSCAN_SUM, DLSCAN_LESS,
                                          (compact_pattern)p, 4096, sizes[i], ++variant % 2};
            compact_check_case(h, m, &if_less, rng);
        }
        const compact_case if_other = {COMPACT_SELECT_IF, type, type, DLSCAN_SUM, others[i % 6],
                                       PATTERN_KEEP_HALF, 4096, sizes[i], ++variant % 2};
        compact_check_case(h, m, &if_other, rng);
        for (int q = DLSCAN_LESS; q <= DLSCAN_NONZERO; ++q) {
            const compact_case edges = {COMPACT_SELECT_IF, type, type, DLSCAN_SUM, (dlscan_predicate)q,
                                        PATTERN_EDGES, 4096, sizes[i], ++variant % 2};
            compact_check_case(h, m, &edges, rng);
        }
        for (int k = 0; k < (int)(sizeof runs / sizeof runs[0]); ++k) {
            const int p = PATTERN_RUNS_OF_1 + k; /* picks the value type and the operator */
            const size_t tile = i % 2 ? 8192 : 4096;
            const compact_case unique = {COMPACT_UNIQUE, type, type, DLSCAN_SUM, DLSCAN_LESS,
                                         runs[k], tile, sizes[i], ++variant % 2};
            compact_check_case(h, m, &unique, rng);
            const compact_case encode = {COMPACT_RUN_LENGTH, type, type, DLSCAN_SUM, DLSCAN_LESS,
                                         runs[k], tile, sizes[i], ++variant % 2};
            compact_check_case(h, m, &encode, rng);
            const compact_case by_key = {COMPACT_REDUCE_BY_KEY, type, value_types[(i + p) % 6],
                                         (dlscan_op)((i + 2 * p) % 3), DLSCAN_LESS, runs[k], tile,
                                         sizes[i], ++variant % 2};
            compact_check_case(h, m, &by_key, rng);
        }
    }
}

/* Expects `call` to return `want`, with a message. */
#define EXPECT_REFUSED(call, want)                                                                \
    do {                                                                                          \
        const dlscan_status got = (call);                                                         \
        EXPECT(got == (want), "%s: got %s, want %s", #call, dlscan_status_string(got),            \
               dlscan_status_string(want));                                                       \
        EXPECT(dlscan_last_error(h)[0] != '\0', "%s: no last-error message", #call);              \
    } while (0)

void compact_check_bad_input(dlscan_handle_t h, const test_memory *m, void *foreign)
{
    const size_t n = 1000;
    int32_t *d_in = m->alloc(n * 4 + 64, m->context), *d_out = m->alloc(n * 4 + 64, m->context);
    size_t *d_count = m->alloc(2 * sizeof(size_t), m->context);
    size_t *d_lengths = m->alloc(n * sizeof(size_t), m->context);
    unsigned char *d_flags = m->alloc(n, m->context);
    m->fill(d_in, 1, n * 4 + 64, m->context);
    m->fill(d_flags, 1, n, m->context);
    m->fill(d_out, POISON, n * 4 + 64, m->context);
    m->fill(d_count, POISON, 2 * sizeof(size_t), m->context);
    cudaStream_t s = m->stream;
    const int32_t operand = 5;

    EXPECT(dlscan_unique(NULL, d_in, d_out, d_count, n, DLSCAN_INT32, s) == DLSCAN_ERROR_INVALID_HANDLE,
           "a NULL handle is refused");
    EXPECT_REFUSED(dlscan_unique(h, d_in, d_out, d_count, n, (dlscan_type)42, s), DLSCAN_ERROR_INVALID_TYPE);
    EXPECT_REFUSED(dlscan_unique(h, d_in, d_out, NULL, n, DLSCAN_INT32, s), DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_unique(h, d_in, d_out, NULL, 0, DLSCAN_INT32, s), DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_select_if(h, d_in, d_out, d_count, n, DLSCAN_INT32, (dlscan_predicate)9,
                                    &operand, s),
                   DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_select_if(h, d_in, d_out, d_count, n, DLSCAN_INT32, DLSCAN_LESS, NULL, s),
                   DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_select_flagged(h, d_in, NULL, d_out, d_count, n, DLSCAN_INT32, s),
                   DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_unique(h, (char *)d_in + 2, d_out, d_count, n, DLSCAN_INT32, s),
                   DLSCAN_ERROR_MISALIGNED);
    EXPECT_REFUSED(dlscan_unique(h, d_in, d_out, (size_t *)((char *)d_count + 4), n, DLSCAN_INT32, s),
                   DLSCAN_ERROR_MISALIGNED);
    EXPECT_REFUSED(dlscan_unique(h, d_in, d_in + 1, d_count, n, DLSCAN_INT32, s), DLSCAN_ERROR_OVERLAP);
    EXPECT_REFUSED(dlscan_unique(h, d_in, d_out, (size_t *)(void *)(d_out + 8), n, DLSCAN_INT32, s),
                   DLSCAN_ERROR_OVERLAP);
    EXPECT_REFUSED(dlscan_select_flagged(h, d_in, (unsigned char *)d_out, d_out, d_count, n, DLSCAN_INT32, s),
                   DLSCAN_ERROR_OVERLAP);
    EXPECT_REFUSED(dlscan_run_length_encode(h, d_in, d_out, d_lengths, (size_t *)(void *)d_lengths, n,
                                            DLSCAN_INT32, s),
                   DLSCAN_ERROR_OVERLAP);
    EXPECT_REFUSED(dlscan_reduce_by_key(h, d_in, d_out, d_out, d_lengths, d_count, n, DLSCAN_INT32,
                                        DLSCAN_INT32, DLSCAN_SUM, s),
                   DLSCAN_ERROR_OVERLAP); /* keys_out equals values_in, not its own input */
    EXPECT_REFUSED(dlscan_reduce_by_key(h, d_in, d_in, d_out, d_lengths, d_count, n, DLSCAN_INT32,
                                        DLSCAN_INT32, (dlscan_op)5, s),
                   DLSCAN_ERROR_INVALID_OP);
    if (foreign)
        EXPECT_REFUSED(dlscan_unique(h, foreign, d_out, d_count, n, DLSCAN_INT32, s),
                       DLSCAN_ERROR_NOT_DEVICE_MEMORY);

    /* Nothing was written. */
    m->wait(m->context);
    unsigned char after[4000 + 64];
    m->download(after, d_out, sizeof after, m->context);
    for (size_t i = 0; i < sizeof after; ++i)
        EXPECT(after[i] == POISON, "a refused call wrote output byte %zu", i);
    size_t counts[2];
    m->download(counts, d_count, sizeof counts, m->context);
    EXPECT(counts[0] == counts[1] && counts[0] != 0, "a refused call wrote the count");

    /* n == 0 writes a count of 0, even with NULL items; the handle still works. */
    EXPECT(dlscan_unique(h, NULL, NULL, d_count, 0, DLSCAN_INT32, s) == DLSCAN_SUCCESS, "%s",
           dlscan_last_error(h));
    m->wait(m->context);
    m->download(counts, d_count, sizeof counts, m->context);
    EXPECT(counts[0] == 0, "n == 0 wrote a count of %zu", counts[0]);
    EXPECT(dlscan_select_flagged(h, d_in, d_flags, d_out, d_count, n, DLSCAN_INT32, s) == DLSCAN_SUCCESS,
           "%s", dlscan_last_error(h));
    m->wait(m->context);
    m->download(counts, d_count, sizeof counts, m->context);
    EXPECT(counts[0] == n, "all %zu flagged items kept: got %zu", n, counts[0]);

    m->release(d_in, m->context);
    m->release(d_out, m->context);
    m->release(d_count, m->context);
    m->release(d_lengths, m->context);
    m->release(d_flags, m->context);
}
