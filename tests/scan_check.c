/*
 * scan_check.c: the shared test harness of the cpu and gpu suites (see scan_check.h):
 * random inputs, the sequential reference, the comparison and the bad-input checks.
 */
#include "scan_check.h"

#include "check.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POISON_BYTE 0xa5

uint64_t test_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t test_seed(void)
{
    const char *forced = getenv("DLSCAN_TEST_SEED");
    uint64_t seed = forced ? strtoull(forced, NULL, 0)
                           : (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() << 20 ^
                                 (uint64_t)clock();
    TEST_LOG("random seed %llu (set DLSCAN_TEST_SEED to repeat)", (unsigned long long)seed);
    return seed;
}

size_t test_max_n(size_t fallback)
{
    const char *limit = getenv("DLSCAN_TEST_MAX_N");
    return limit ? (size_t)strtoull(limit, NULL, 0) : fallback;
}

int test_edge_sizes(size_t tile, size_t max_n, uint64_t *rng, size_t sizes[64])
{
    const size_t candidates[] = {
        0, 1, 2, 31, 32, 33, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile, 2 * tile + 1,
        /* 32 predecessors fill a look-back window; 33 and more make it slide */
        32 * tile, 32 * tile + 1, 33 * tile + 1, 65 * tile - 1, 129 * tile + 7,
        (1u << 10) - 1, (1u << 10) + 1, (1u << 16) - 1, (1u << 16) + 1, (1u << 20) - 1,
        (1u << 20) + 1, (1u << 22) + 1, (1u << 24) - 1};
    int count = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; ++i)
        if (candidates[i] <= max_n)
            sizes[count++] = candidates[i];
    for (int i = 0; i < 3; ++i)
        sizes[count++] = 1 + test_random(rng) % max_n;
    return count;
}

static size_t type_size(dlscan_type type)
{
    return type == DLSCAN_INT32 || type == DLSCAN_UINT32 || type == DLSCAN_FLOAT32 ? 4 : 8;
}

void test_fill_random(dlscan_type type, test_values kind, void *values, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = test_random(rng);
        const int narrow = kind == TEST_VALUES_NARROW;
        double real;
        if (kind == TEST_VALUES_MIXED_MAGNITUDE)
            real = ldexp((double)(r >> 11) / 9007199254740992.0, (int)((r >> 3) % 41) - 20) *
                   ((r & 1) ? -1.0 : 1.0);
        else
            real = (double)((int)(r % 513) - 256) / 256.0; /* k/256, |k| <= 256 */
        if (narrow && real == 0.0 && (r >> 10 & 1))
            real = -0.0;
        switch (type) {
        case DLSCAN_INT32:
        case DLSCAN_UINT32:
            ((uint32_t *)values)[i] = narrow ? (uint32_t)(r % 65536) - 32768u : (uint32_t)r;
            break;
        case DLSCAN_INT64:
        case DLSCAN_UINT64:
            ((uint64_t *)values)[i] = narrow ? r % (1ull << 33) - (1ull << 32) : r;
            break;
        case DLSCAN_FLOAT32: ((float *)values)[i] = (float)real; break;
        case DLSCAN_FLOAT64: ((double *)values)[i] = real; break;
        }
    }
}

/*
 * The float-sum tolerance, per output item j, against the float64 reference:
 *   uniform values (multiples of 1/256): every partial sum is exact while it stays below
 *     2^16 (float32) in magnitude, which random signs keep it far under: |error| <= 2^-10,
 *     less than half of the smallest nonzero item, so a lost or doubled item always fails;
 *   mixed magnitudes: the first-order bound of a sum evaluated along a chain of at most
 *     m additions, |error| <= m * eps * S_j with S_j = |init| + sum of |x_i| up to j, where
 *     m = 2 * log2(tile items) + 16 (inside the tile) + tiles before j (the look-back's
 *     left fold), and eps the type's unit roundoff.
 */
static double scan_check_tolerance(const scan_case *c, size_t j, double abs_sum, size_t tile,
                                   double eps)
{
    if (c->values != TEST_VALUES_MIXED_MAGNITUDE)
        return 1.0 / 1024.0;
    const double chain = 2.0 * log2((double)tile) + 16.0 + (double)(j / tile);
    return chain * eps * abs_sum;
}

/* The tile size the tolerance assumes; set by scan_check_case from the handle. */
static size_t check_tile = 4096;

#define INT_SUM(T, UT, a, b) ((T)((UT)(a) + (UT)(b)))
#define MIN_OF(a, b) ((b) < (a) ? (b) : (a))
#define MAX_OF(a, b) ((a) < (b) ? (b) : (a))

/* Exact check for one integer type, or float min/max. */
#define COMPARE_EXACT(T, UT, LOWEST, HIGHEST, FORMAT, CAST)                                         \
    do {                                                                                          \
        const T *x = in, *y = out;                                                                \
        T run = c->op == DLSCAN_SUM ? (T)0 : c->op == DLSCAN_MIN ? (HIGHEST) : (LOWEST);          \
        if (c->exclusive && init)                                                                 \
            memcpy(&run, init, sizeof run);                                                       \
        for (size_t j = 0; j < c->n; ++j) {                                                       \
            T expect = run;                                                                           \
            if (c->exclusive)                                                                     \
                expect = run;                                                                     \
            run = c->op == DLSCAN_SUM   ? INT_SUM(T, UT, run, x[j])                               \
                  : c->op == DLSCAN_MIN ? MIN_OF(run, x[j])                                       \
                                        : MAX_OF(run, x[j]);                                      \
            if (!c->exclusive)                                                                    \
                expect = run;                                                                     \
            /* bit for bit, but for the sign of a float zero (dlscan.h leaves it open) */        \
            if (memcmp(&y[j], &expect, sizeof expect) != 0 && !(y[j] == expect)) {               \
                snprintf(message, message_size, "item %zu of %zu: got " FORMAT ", want " FORMAT,  \
                         j, c->n, CAST y[j], CAST expect);                                        \
                return 0;                                                                         \
            }                                                                                     \
        }                                                                                         \
        return 1;                                                                                 \
    } while (0)

/* Float sums against the float64 reference. */
#define COMPARE_FLOAT_SUM(T, EPS)                                                                   \
    do {                                                                                          \
        const T *x = in, *y = out;                                                                \
        double run = 0.0, abs_sum = 0.0;                                                          \
        if (c->exclusive && init) {                                                               \
            T start;                                                                              \
            memcpy(&start, init, sizeof start);                                                   \
            run = start;                                                                          \
            abs_sum = fabs((double)start);                                                        \
        }                                                                                         \
        for (size_t j = 0; j < c->n; ++j) {                                                       \
            double expect = run;                                                                  \
            run += (double)x[j];                                                                  \
            abs_sum += fabs((double)x[j]);                                                        \
            if (!c->exclusive)                                                                    \
                expect = run;                                                                     \
            const double tolerance = scan_check_tolerance(c, j, abs_sum, check_tile, EPS);        \
            if (!(fabs((double)y[j] - expect) <= tolerance)) {                                    \
                snprintf(message, message_size,                                                   \
                         "item %zu of %zu: got %.17g, want %.17g (tolerance %.3g)", j, c->n,       \
                         (double)y[j], expect, tolerance);                                        \
                return 0;                                                                         \
            }                                                                                     \
        }                                                                                         \
        return 1;                                                                                 \
    } while (0)

int scan_check_output(const scan_case *c, const void *in, const void *init, const void *out,
                      char *message, size_t message_size)
{
    switch (c->type) {
    case DLSCAN_INT32: COMPARE_EXACT(int32_t, uint32_t, INT32_MIN, INT32_MAX, "%lld", (long long));
    case DLSCAN_UINT32: COMPARE_EXACT(uint32_t, uint32_t, 0, UINT32_MAX, "%llu", (unsigned long long));
    case DLSCAN_INT64: COMPARE_EXACT(int64_t, uint64_t, INT64_MIN, INT64_MAX, "%lld", (long long));
    case DLSCAN_UINT64: COMPARE_EXACT(uint64_t, uint64_t, 0, UINT64_MAX, "%llu", (unsigned long long));
    case DLSCAN_FLOAT32:
        if (c->op == DLSCAN_SUM)
            COMPARE_FLOAT_SUM(float, FLT_EPSILON / 2);
        COMPARE_EXACT(float, float, -INFINITY, INFINITY, "%.9g", (double));
    case DLSCAN_FLOAT64:
        if (c->op == DLSCAN_SUM)
            COMPARE_FLOAT_SUM(double, DBL_EPSILON / 2);
        COMPARE_EXACT(double, double, -INFINITY, INFINITY, "%.17g", (double));
    }
    snprintf(message, message_size, "unknown type %d", (int)c->type);
    return 0;
}

static const char *const type_names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
static const char *const op_names[] = {"sum", "min", "max"};

void scan_check_case(dlscan_handle_t h, const test_memory *m, const scan_case *c, uint64_t *rng)
{
    const size_t bytes = c->n * type_size(c->type);
    dlscan_tile_items(h, c->type, &check_tile);
    void *input = malloc(bytes ? bytes : 1);
    void *output = malloc(bytes ? bytes : 1);
    CHECK(input && output, "host allocation of %zu bytes failed", bytes);
    test_fill_random(c->type, c->values, input, c->n, rng);
    uint64_t init_bits = 0;
    test_fill_random(c->type, c->values, &init_bits, 1, rng);
    const void *init = c->exclusive && c->with_init ? &init_bits : NULL;

    void *d_in = m->alloc(bytes ? bytes : 16, m->context);
    void *d_out = c->in_place ? d_in : m->alloc(bytes ? bytes : 16, m->context);
    CHECK(d_in && d_out, "allocation of %zu bytes failed", bytes);
    if (!c->in_place)
        m->fill(d_out, POISON_BYTE, bytes, m->context);
    m->upload(d_in, input, bytes, m->context);

    const dlscan_status status =
        c->exclusive ? dlscan_exclusive_scan(h, d_in, d_out, c->n, c->type, c->op, init, m->stream)
                     : dlscan_inclusive_scan(h, d_in, d_out, c->n, c->type, c->op, m->stream);
    CHECK(status == DLSCAN_SUCCESS, "%s %s %s n=%zu: %s (%s)", type_names[c->type],
                 op_names[c->op], c->exclusive ? "exclusive" : "inclusive", c->n,
                 dlscan_status_string(status), dlscan_last_error(h));
    m->wait(m->context);
    memset(output, POISON_BYTE, bytes);
    m->download(output, d_out, bytes, m->context);

    char message[256];
    const int ok = scan_check_output(c, input, init, output, message, sizeof message);
    m->release(d_in, m->context);
    if (!c->in_place)
        m->release(d_out, m->context);
    free(input);
    free(output);
    CHECK(ok, "%s %s %s%s%s n=%zu: %s", type_names[c->type], op_names[c->op],
              c->exclusive ? "exclusive" : "inclusive", init ? " with init" : "",
              c->in_place ? " in place" : "", c->n, message);
}

void scan_check_type(dlscan_handle_t h, const test_memory *m, dlscan_type type, size_t max_n,
                     uint64_t *rng)
{
    size_t tile = 0;
    CHECK(dlscan_tile_items(h, type, &tile) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    size_t sizes[64];
    const int count = test_edge_sizes(tile, max_n, rng, sizes);
    for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
        for (int i = 0; i < count; ++i)
            for (int exclusive = 0; exclusive <= 1; ++exclusive) {
                /* every other size narrow: low words decide integer minima and maxima */
                const test_values values = i % 2 ? TEST_VALUES_NARROW : TEST_VALUES_UNIFORM;
                const scan_case c = {type, (dlscan_op)op, exclusive, (i + op) % 2,
                                     (i + exclusive) % 2, sizes[i], values};
                scan_check_case(h, m, &c, rng);
            }
}

/* Expects `call` to return `want` with a message, and the poisoned output untouched. */
#define EXPECT_REFUSED(call, want)                                                                \
    do {                                                                                          \
        const dlscan_status got = (call);                                                         \
        EXPECT(got == (want), "%s: got %s, want %s", #call, dlscan_status_string(got),            \
                     dlscan_status_string(want));                                                 \
        if (h)                                                                                    \
            EXPECT(dlscan_last_error(h)[0] != '\0', "%s: no last-error message", #call);      \
    } while (0)

void scan_check_bad_input(dlscan_handle_t h, const test_memory *m, void *foreign)
{
    const size_t n = 1000;
    const size_t bytes = n * sizeof(int32_t);
    int32_t *d_in = m->alloc(bytes + 64, m->context);
    int32_t *d_out = m->alloc(bytes + 64, m->context);
    int32_t values[1000];
    uint64_t rng = 12345;
    test_fill_random(DLSCAN_INT32, TEST_VALUES_UNIFORM, values, n, &rng);
    m->upload(d_in, values, bytes, m->context);
    m->fill(d_out, POISON_BYTE, bytes + 64, m->context);
    cudaStream_t s = m->stream;
    const dlscan_type bad_type = (dlscan_type)99;
    const dlscan_op bad_op = (dlscan_op)7;

    {
        const dlscan_handle_t saved = h;
        h = NULL; /* EXPECT_REFUSED reads no message from a NULL handle */
        EXPECT_REFUSED(dlscan_inclusive_scan(NULL, d_in, d_out, n, DLSCAN_INT32, DLSCAN_SUM, s),
                       DLSCAN_ERROR_INVALID_HANDLE);
        EXPECT_REFUSED(dlscan_exclusive_scan(NULL, d_in, d_out, n, DLSCAN_INT32, DLSCAN_SUM, NULL, s),
                       DLSCAN_ERROR_INVALID_HANDLE);
        EXPECT_REFUSED(dlscan_reserve(NULL, n, DLSCAN_INT32), DLSCAN_ERROR_INVALID_HANDLE);
        h = saved;
    }
    EXPECT_REFUSED(dlscan_inclusive_scan(h, d_in, d_out, n, bad_type, DLSCAN_SUM, s),
                   DLSCAN_ERROR_INVALID_TYPE);
    EXPECT_REFUSED(dlscan_inclusive_scan(h, d_in, d_out, n, DLSCAN_INT32, bad_op, s),
                   DLSCAN_ERROR_INVALID_OP);
    EXPECT_REFUSED(dlscan_inclusive_scan(h, NULL, d_out, n, DLSCAN_INT32, DLSCAN_SUM, s),
                   DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_exclusive_scan(h, d_in, NULL, n, DLSCAN_INT32, DLSCAN_SUM, NULL, s),
                   DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_inclusive_scan(h, d_in, d_out, SIZE_MAX / 2, DLSCAN_INT32, DLSCAN_SUM, s),
                   DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_inclusive_scan(h, (char *)d_in + 1, d_out, n, DLSCAN_INT32, DLSCAN_SUM, s),
                   DLSCAN_ERROR_MISALIGNED);
    EXPECT_REFUSED(dlscan_inclusive_scan(h, d_in, (char *)d_out + 2, n, DLSCAN_INT32, DLSCAN_SUM, s),
                   DLSCAN_ERROR_MISALIGNED);
    EXPECT_REFUSED(dlscan_inclusive_scan(h, d_out, d_out + 1, n, DLSCAN_INT32, DLSCAN_SUM, s),
                   DLSCAN_ERROR_OVERLAP);
    EXPECT_REFUSED(dlscan_inclusive_scan(h, d_out + 7, d_out, n, DLSCAN_INT32, DLSCAN_SUM, s),
                   DLSCAN_ERROR_OVERLAP);
    if (foreign) {
        EXPECT_REFUSED(dlscan_inclusive_scan(h, foreign, d_out, n, DLSCAN_INT32, DLSCAN_SUM, s),
                       DLSCAN_ERROR_NOT_DEVICE_MEMORY);
        EXPECT_REFUSED(dlscan_inclusive_scan(h, d_in, foreign, n, DLSCAN_INT32, DLSCAN_SUM, s),
                       DLSCAN_ERROR_NOT_DEVICE_MEMORY);
    }
    EXPECT_REFUSED(dlscan_set_option(h, (dlscan_option)77, 1), DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, 2), DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, 3), DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_tile_items(h, DLSCAN_INT32, NULL), DLSCAN_ERROR_INVALID_ARGUMENT);
    EXPECT_REFUSED(dlscan_get_lookback_stats(h, NULL), DLSCAN_ERROR_INVALID_ARGUMENT);

    /* n == 0 does nothing, even with NULL pointers. */
    EXPECT(dlscan_inclusive_scan(h, NULL, NULL, 0, DLSCAN_INT32, DLSCAN_SUM, s) == DLSCAN_SUCCESS,
           "n == 0 with NULL pointers succeeds");
    EXPECT(dlscan_exclusive_scan(h, NULL, NULL, 0, DLSCAN_FLOAT64, DLSCAN_MAX, NULL, s) ==
               DLSCAN_SUCCESS,
           "n == 0 with NULL pointers succeeds");
    EXPECT(dlscan_last_error(h)[0] == '\0', "a successful call leaves no message");

    /* Nothing was written. */
    m->wait(m->context);
    unsigned char after[4000 + 64];
    m->download(after, d_out, sizeof after, m->context);
    for (size_t i = 0; i < sizeof after; ++i)
        EXPECT(after[i] == POISON_BYTE, "a refused call wrote byte %zu of the output", i);

    /* The handle still works. */
    EXPECT(dlscan_inclusive_scan(h, d_in, d_out, n, DLSCAN_INT32, DLSCAN_SUM, s) == DLSCAN_SUCCESS,
           "%s", dlscan_last_error(h));
    m->wait(m->context);
    int32_t scanned[1000];
    m->download(scanned, d_out, bytes, m->context);
    const scan_case c = {DLSCAN_INT32, DLSCAN_SUM, 0, 0, 0, n, TEST_VALUES_UNIFORM};
    char message[256];
    EXPECT(scan_check_output(&c, values, NULL, scanned, message, sizeof message), "%s", message);
    m->release(d_in, m->context);
    m->release(d_out, m->context);
}

void scan_check_signed_zeros(dlscan_handle_t h, const test_memory *m)
{
    for (int type = DLSCAN_FLOAT32; type <= DLSCAN_FLOAT64; ++type) {
        const size_t size = type_size((dlscan_type)type);
        size_t tile = 0;
        CHECK(dlscan_tile_items(h, (dlscan_type)type, &tile) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        const size_t n = 3 * tile + 5;
        unsigned char *zeros = malloc(n * size), *out = malloc(n * size);
        CHECK(zeros && out, "host allocation failed");
        for (size_t i = 0; i < n; ++i) {
            if (type == DLSCAN_FLOAT32)
                ((float *)zeros)[i] = -0.0f;
            else
                ((double *)zeros)[i] = -0.0;
        }
        void *d_in = m->alloc(n * size, m->context), *d_out = m->alloc(n * size, m->context);
        void *d_keys = m->alloc(n * size, m->context);
        size_t *d_count = m->alloc(sizeof(size_t), m->context);
        CHECK(d_in && d_out && d_keys && d_count, "allocation failed");
        m->upload(d_in, zeros, n * size, m->context);
        /* Inclusive and exclusive (no init: the identity, -0.0) sums, and one run of equal
         * keys across the tiles, reduced by key: -0.0 everywhere, bit for bit. */
        for (int call = 0; call < 3; ++call) {
            m->fill(d_out, POISON_BYTE, n * size, m->context);
            const dlscan_status status =
                call == 0 ? dlscan_inclusive_scan(h, d_in, d_out, n, (dlscan_type)type, DLSCAN_SUM, m->stream)
                : call == 1
                    ? dlscan_exclusive_scan(h, d_in, d_out, n, (dlscan_type)type, DLSCAN_SUM, NULL, m->stream)
                    : dlscan_reduce_by_key(h, d_in, d_in, d_keys, d_out, d_count, n, (dlscan_type)type,
                                           (dlscan_type)type, DLSCAN_SUM, m->stream);
            CHECK(status == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
            m->wait(m->context);
            const size_t count = call == 2 ? 1 : n; /* reduce-by-key: one run, its sum */
            m->download(out, d_out, count * size, m->context);
            EXPECT(memcmp(out, zeros, count * size) == 0,
                   "%s sum (%s) of -0.0 items does not give -0.0 bit for bit",
                   type_names[type], call == 0 ? "inclusive" : call == 1 ? "exclusive" : "by key");
        }
        m->release(d_in, m->context);
        m->release(d_out, m->context);
        m->release(d_keys, m->context);
        m->release(d_count, m->context);
        free(zeros);
        free(out);
    }
}
