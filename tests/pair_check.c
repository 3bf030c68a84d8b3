/*
 * pair_check.c: the shared tests of dlscan_scan (see pair_check.h): every pair and operator,
 * chains through a device-side init and total, 16-bit float special values, NaN in min and
 * max, refusals.
 */
#include "pair_check.h"

#include "check.h"
#include "compact_check.h"
#include "segment_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values for the i-th size of a pair: uniform, near the top of the input type, narrow. A
 * float32 or float64 sum into its own type would overflow on values near the top, so those
 * take mixed magnitudes instead. */
test_values pair_check_values(dlscan_type in, dlscan_type out, int i)
{
    static const test_values cycle[] = {TEST_VALUES_UNIFORM, TEST_VALUES_HIGH, TEST_VALUES_NARROW};
    const test_values values = cycle[i % 3];
    if (values == TEST_VALUES_HIGH && in == out && (in == DLSCAN_FLOAT32 || in == DLSCAN_FLOAT64))
        return TEST_VALUES_MIXED_MAGNITUDE;
    return values;
}

void pair_check_every_output(dlscan_handle_t h, const test_memory *m, dlscan_type in,
                             size_t max_n, uint64_t *rng)
{
    for (int o = 0; o < TEST_TYPE_COUNT; ++o) {
        const dlscan_type out = (dlscan_type)o;
        if (!test_pair_supported(in, out))
            continue;
        size_t tile = 0;
        CHECK(dlscan_tile_items(h, out, &tile) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        /* 33 tiles: a look-back window of 32 predecessors slides */
        const size_t sizes[] = {0,        1,        31,       tile - 1, tile,
                                tile + 1, 2 * tile + 1, 33 * tile + 1,
                                max_n / 2 + test_random(rng) % (max_n / 2 + 1)};
        const int same_size = test_type_size(in) == test_type_size(out);
        for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
            for (int i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); ++i)
                for (int exclusive = 0; exclusive <= 1 && sizes[i] <= max_n; ++exclusive) {
                    const pair_case c = {in,
                                         out,
                                         (dlscan_op)op,
                                         exclusive,
                                         (test_init)((i + op + exclusive) % 3),
                                         (i + exclusive) % 2,
                                         same_size && (i + op) % 2,
                                         sizes[i],
                                         pair_check_values(in, out, i)};
                    scan_check_pair_case(h, m, &c, rng);
                }
    }
}

/* ---- Chains ---- */

void test_chain_make(dlscan_handle_t h, const test_memory *m, test_chain *chain, dlscan_type in,
                     dlscan_type out, dlscan_op op, int exclusive, size_t max_n, uint64_t *rng)
{
    memset(chain, 0, sizeof *chain);
    CHECK(dlscan_tile_items(h, out, &chain->tile) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    const size_t tile = chain->tile;
    const size_t sizes[] = {tile + 1, 0, 1, 3 * tile, tile - 1, 33 * tile + 1,
                            1 + test_random(rng) % max_n};
    size_t n = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (sizes[i] <= max_n) {
            chain->chunk[chain->chunks++] = sizes[i];
            n += sizes[i];
        }
    /* integers: sums that overflow the input type; floats: exact partial sums */
    const int integer_in = in != DLSCAN_FLOAT16 && in != DLSCAN_BFLOAT16 && in != DLSCAN_FLOAT32 &&
                           in != DLSCAN_FLOAT64;
    const test_values values = !integer_in ? TEST_VALUES_UNIFORM
                               : out == DLSCAN_FLOAT64 ? TEST_VALUES_NARROW
                                                       : TEST_VALUES_HIGH;
    const pair_case whole = {in, out, op, exclusive, TEST_INIT_DEVICE, 1, 0, n, values};
    chain->whole = whole;
    const size_t in_bytes = n * test_type_size(in), bytes = n * test_type_size(out);
    chain->input = malloc(in_bytes ? in_bytes : 1);
    chain->output = malloc(bytes ? bytes : 1);
    chain->d_in = m->alloc(in_bytes ? in_bytes : 16, m->context);
    chain->d_out = m->alloc(bytes ? bytes : 16, m->context);
    chain->d_run = m->alloc(test_type_size(out), m->context);
    CHECK(chain->input && chain->output && chain->d_in && chain->d_out && chain->d_run,
          "allocation failed");
}

void test_chain_fill(const test_memory *m, test_chain *chain, uint64_t *rng)
{
    const pair_case *c = &chain->whole;
    test_fill_random(c->in_type, c->values, chain->input, c->n, rng);
    uint64_t item = 0;
    test_fill_random(c->in_type, c->values, &item, 1, rng);
    chain->init_bits = test_convert_item(c->in_type, c->out_type, &item);
    m->upload(chain->d_in, chain->input, c->n * test_type_size(c->in_type), m->context);
    m->fill(chain->d_out, TEST_POISON_BYTE, c->n * test_type_size(c->out_type), m->context);
    m->upload(chain->d_run, &chain->init_bits, test_type_size(c->out_type), m->context);
}

dlscan_status test_chain_enqueue(dlscan_handle_t h, const test_chain *chain, cudaStream_t stream)
{
    const pair_case *c = &chain->whole;
    size_t first = 0;
    for (int k = 0; k < chain->chunks; ++k) {
        dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
        a.d_in = (const char *)chain->d_in + first * test_type_size(c->in_type);
        a.d_out = (char *)chain->d_out + first * test_type_size(c->out_type);
        a.n = chain->chunk[k];
        a.in_type = c->in_type;
        a.out_type = c->out_type;
        a.op = c->op;
        a.exclusive = c->exclusive;
        a.d_init = chain->d_run;
        a.d_total = chain->d_run;
        const dlscan_status status = dlscan_scan(h, &a, stream);
        if (status != DLSCAN_SUCCESS)
            return status;
        first += chain->chunk[k];
    }
    return DLSCAN_SUCCESS;
}

/* A chain of float16 or bfloat16 sums into their own type keeps its running total as a 16-bit
 * value, rounded after each call, so it is not the one-shot scan: it is checked call by call,
 * each call from the value the one before left, which that call's check confirmed (the first
 * item of the next exclusive call, the last item of an inclusive one, or d_run). */
static int check_rounded_chain(const test_chain *chain, const uint64_t *total_bits, char *message,
                               size_t message_size)
{
    const pair_case *c = &chain->whole;
    const size_t size = test_type_size(c->out_type);
    const unsigned char *in = chain->input, *out = chain->output;
    uint64_t run = chain->init_bits;
    size_t first = 0;
    for (int k = 0; k < chain->chunks; ++k) {
        const size_t count = chain->chunk[k];
        if (count == 0)
            continue;
        uint64_t after = *total_bits;
        if (first + count < c->n)
            memcpy(&after, out + (c->exclusive ? first + count : first + count - 1) * size, size);
        pair_case call = *c;
        call.n = count;
        char detail[200];
        if (!scan_check_pair_output(&call, chain->tile, 0, in + first * size, &run, out + first * size,
                                    &after, detail, sizeof detail)) {
            snprintf(message, message_size, "call %d (items %zu on): %s", k, first, detail);
            return 0;
        }
        run = after;
        first += count;
    }
    return 1;
}

void test_chain_check(const test_memory *m, const test_chain *chain)
{
    const pair_case *c = &chain->whole;
    m->wait(m->context);
    m->download(chain->output, chain->d_out, c->n * test_type_size(c->out_type), m->context);
    uint64_t total_bits = 0;
    m->download(&total_bits, chain->d_run, test_type_size(c->out_type), m->context);
    char what[160], message[256];
    const int rounded = c->op == DLSCAN_SUM && c->in_type == c->out_type &&
                        (c->out_type == DLSCAN_FLOAT16 || c->out_type == DLSCAN_BFLOAT16);
    const int ok = rounded ? check_rounded_chain(chain, &total_bits, message, sizeof message)
                           : scan_check_pair_output(c, chain->tile, (size_t)chain->chunks,
                                                    chain->input, &chain->init_bits, chain->output,
                                                    &total_bits, message, sizeof message);
    CHECK(ok, "%s, chained over %d calls: %s", test_describe_pair(c, what, sizeof what),
          chain->chunks, message);
}

void test_chain_free(const test_memory *m, test_chain *chain)
{
    m->release(chain->d_in, m->context);
    m->release(chain->d_out, m->context);
    m->release(chain->d_run, m->context);
    free(chain->input);
    free(chain->output);
}

void pair_check_chains(dlscan_handle_t h, const test_memory *m, dlscan_type in, size_t max_n,
                       uint64_t *rng)
{
    for (int out = 0; out < TEST_TYPE_COUNT; ++out)
        for (int op = DLSCAN_SUM; op <= DLSCAN_MAX && test_pair_supported(in, (dlscan_type)out); ++op)
            for (int exclusive = 0; exclusive <= 1; ++exclusive) {
                test_chain chain;
                test_chain_make(h, m, &chain, in, (dlscan_type)out, (dlscan_op)op, exclusive, max_n, rng);
                test_chain_fill(m, &chain, rng);
                const dlscan_status status = test_chain_enqueue(h, &chain, m->stream);
                CHECK(status == DLSCAN_SUCCESS, "%s -> %s: %s (%s)", test_type_name(in),
                      test_type_name((dlscan_type)out), dlscan_status_string(status),
                      dlscan_last_error(h));
                test_chain_check(m, &chain);
                test_chain_free(m, &chain);
            }
}

/* ---- 16-bit float special values ---- */

/* The kinds of data pair_check_16_bit_float_specials scans. */
enum special_data {
    SPECIAL_INF_THEN_NAN,       /* sums, min, max: finite, then +-inf from tile 1, NaN from
                                   tile 2 */
    SPECIAL_INFS_OF_BOTH_SIGNS, /* sums: +inf in tile 0, -inf in tile 2: NaN from there */
    SPECIAL_SUBNORMALS_ONLY,    /* sums, min, max: subnormals and zeros of both signs */
    SPECIAL_INFS_NO_NAN,        /* min, max: infinities of both signs here and there */
    SPECIAL_DATA_COUNT
};

/* n items of a 16-bit float type: subnormals, zeros of both signs and normals of moderate
 * magnitude (sums of a few of them stay far inside float32's range), or subnormals and zeros
 * only. */
static void fill_small_floats(uint16_t *x, size_t n, dlscan_type type, int subnormals_only,
                              uint64_t *rng)
{
    const int mantissa_bits = type == DLSCAN_FLOAT16 ? 10 : 7;
    /* float16: every normal exponent; bfloat16: 2^-27 .. 2^27 */
    const unsigned low = type == DLSCAN_FLOAT16 ? 1 : 100, high = type == DLSCAN_FLOAT16 ? 30 : 154;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = test_random(rng);
        const unsigned sign = (unsigned)(r & 1) << 15;
        const unsigned mantissa = (unsigned)(r >> 8) & ((1u << mantissa_bits) - 1);
        const unsigned kind = (unsigned)(r >> 32) % 8;
        if (kind == 0)
            x[i] = (uint16_t)sign;
        else if (kind <= 3 || subnormals_only)
            x[i] = (uint16_t)(sign | (mantissa ? mantissa : 1u));
        else
            x[i] = (uint16_t)(sign | (low + (unsigned)(r >> 40) % (high - low + 1)) << mantissa_bits |
                              mantissa);
    }
}

void pair_check_16_bit_float_specials(dlscan_handle_t h, const test_memory *m, uint64_t *rng)
{
    static const dlscan_type halves[] = {DLSCAN_FLOAT16, DLSCAN_BFLOAT16};
    for (int t = 0; t < 2; ++t) {
        const dlscan_type in = halves[t];
        const int mantissa_bits = in == DLSCAN_FLOAT16 ? 10 : 7;
        const uint16_t inf = in == DLSCAN_FLOAT16 ? 0x7c00 : 0x7f80;
        const uint16_t nan = (uint16_t)(inf | 1u << (mantissa_bits - 1));
        const dlscan_type outs[] = {DLSCAN_FLOAT32, in};
        for (int o = 0; o < 2; ++o) {
            const dlscan_type out = outs[o];
            size_t tile = 0;
            CHECK(dlscan_tile_items(h, out, &tile) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
            const size_t n = 3 * tile + 7;
            uint16_t *x = malloc(n * sizeof *x);
            CHECK(x, "host allocation failed");
            for (int data = 0; data < SPECIAL_DATA_COUNT; ++data) {
                fill_small_floats(x, n, in, data == SPECIAL_SUBNORMALS_ONLY, rng);
                const size_t in_tile = test_random(rng) % tile;
                if (data == SPECIAL_INF_THEN_NAN) {
                    x[tile + in_tile] = (uint16_t)(inf | (in_tile & 1) << 15);
                    x[2 * tile + in_tile] = nan;
                } else if (data == SPECIAL_INFS_OF_BOTH_SIGNS) {
                    x[in_tile] = inf;
                    x[2 * tile + in_tile] = (uint16_t)(inf | 0x8000);
                } else if (data == SPECIAL_INFS_NO_NAN) {
                    for (int k = 0; k < 4; ++k)
                        x[test_random(rng) % n] = (uint16_t)(inf | (k & 1) << 15);
                }
                for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op) {
                    const int sums = data != SPECIAL_INFS_NO_NAN, minmax = data != SPECIAL_INFS_OF_BOTH_SIGNS;
                    if (op == DLSCAN_SUM ? !sums : !minmax)
                        continue;
                    for (int exclusive = 0; exclusive <= 1; ++exclusive) {
                        const pair_case c = {in, out, (dlscan_op)op, exclusive,
                                             exclusive ? TEST_INIT_DEVICE : TEST_INIT_HOST,
                                             1, 0, n, TEST_VALUES_MIXED_MAGNITUDE};
                        scan_check_pair_input(h, m, &c, x, rng);
                    }
                }
            }
            free(x);
        }
    }
}

/* ---- NaN in min and max ---- */

/* One float scan of n given items of `type` into itself, inclusive or exclusive. */
static void check_given(dlscan_handle_t h, const test_memory *m, dlscan_type type, dlscan_op op,
                        const double *items, size_t n, uint64_t *rng)
{
    unsigned char input[64];
    for (size_t i = 0; i < n; ++i) {
        const float f = (float)items[i];
        uint16_t half = type == DLSCAN_FLOAT16 ? test_float_to_half(f) : test_float_to_bfloat16(f);
        if (type == DLSCAN_FLOAT32)
            memcpy(input + 4 * i, &f, 4);
        else if (type == DLSCAN_FLOAT64)
            memcpy(input + 8 * i, &items[i], 8);
        else
            memcpy(input + 2 * i, &half, 2);
    }
    for (int exclusive = 0; exclusive <= 1; ++exclusive) {
        const pair_case c = {type, type, op, exclusive, TEST_INIT_NONE, 1, 0, n, TEST_VALUES_NAN};
        scan_check_pair_input(h, m, &c, input, rng);
    }
}

void pair_check_nans(dlscan_handle_t h, const test_memory *m, size_t max_n, uint64_t *rng)
{
    /* torch.cummax's own test case, and cummax([nan, 1.0]): NaN from the NaN on. */
    static const double torch_case[] = {4, INFINITY, 1.5, -INFINITY, 0, NAN, 1};
    static const double nan_first[] = {NAN, 1.0};
    static const dlscan_type floats[] = {DLSCAN_FLOAT16, DLSCAN_BFLOAT16, DLSCAN_FLOAT32, DLSCAN_FLOAT64};
    for (int t = 0; t < 4; ++t)
        for (int op = DLSCAN_MIN; op <= DLSCAN_MAX; ++op) {
            check_given(h, m, floats[t], (dlscan_op)op, torch_case, 7, rng);
            check_given(h, m, floats[t], (dlscan_op)op, nan_first, 2, rng);
        }

    static const struct {
        dlscan_type in, out;
    } pairs[] = {{DLSCAN_FLOAT16, DLSCAN_FLOAT16},   {DLSCAN_FLOAT16, DLSCAN_FLOAT32},
                 {DLSCAN_BFLOAT16, DLSCAN_BFLOAT16}, {DLSCAN_BFLOAT16, DLSCAN_FLOAT32},
                 {DLSCAN_FLOAT32, DLSCAN_FLOAT32},   {DLSCAN_FLOAT32, DLSCAN_FLOAT64},
                 {DLSCAN_FLOAT64, DLSCAN_FLOAT64}};
    int variant = 0;
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; ++p) {
        size_t tile = 0;
        CHECK(dlscan_tile_items(h, pairs[p].out, &tile) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
        const size_t sizes[] = {1, tile - 1, tile + 1, 3 * tile + 7, 37 * tile + 11,
                                1 + test_random(rng) % max_n};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
            if (sizes[i] > max_n)
                continue;
            for (int op = DLSCAN_MIN; op <= DLSCAN_MAX; ++op)
                for (int exclusive = 0; exclusive <= 1; ++exclusive, ++variant) {
                    const test_init init = variant % 3 == 0 ? TEST_INIT_NONE
                                           : variant % 3 == 1 ? TEST_INIT_HOST
                                                              : TEST_INIT_DEVICE;
                    const pair_case c = {pairs[p].in, pairs[p].out, (dlscan_op)op, exclusive, init,
                                         1, variant % 4 == 3 && pairs[p].in == pairs[p].out, sizes[i],
                                         TEST_VALUES_NAN};
                    scan_check_pair_case(h, m, &c, rng);
                }
        }
    }

    for (int t = DLSCAN_FLOAT32; t <= DLSCAN_FLOAT64; ++t)
        for (int op = DLSCAN_MIN; op <= DLSCAN_MAX; ++op) {
            for (int kind = SEGMENT_KEYS; kind <= SEGMENT_OFFSETS; ++kind)
                for (int layout = SEGMENTS_OF_TILES; layout <= SEGMENTS_SHORT; ++layout) {
                    const segment_case c = {{(dlscan_type)t, (dlscan_type)t, (dlscan_op)op, layout % 2,
                                             TEST_INIT_NONE, 0, 0, max_n < 200000 ? max_n : 200000,
                                             TEST_VALUES_NAN},
                                            (segment_kind)kind, DLSCAN_INT32, (segment_layout)layout};
                    segment_check_case(h, m, &c, rng);
                }
            const size_t n = max_n < 300000 ? max_n : 300000;
            const compact_case by_key = {COMPACT_REDUCE_BY_KEY, DLSCAN_INT32, (dlscan_type)t, (dlscan_op)op,
                                         DLSCAN_LESS, PATTERN_RUNS_NAN, 4096, n, op == DLSCAN_MAX};
            compact_check_case(h, m, &by_key, rng);
        }
}

/* ---- Refusals ---- */

/* Expects `status` to be `want`, with a message on the handle. */
void test_expect_refused(dlscan_handle_t h, dlscan_status status, dlscan_status want, const char *what)
{
    EXPECT(status == want, "%s: got %s, want %s", what, dlscan_status_string(status),
           dlscan_status_string(want));
    EXPECT(dlscan_last_error(h)[0] != '\0', "%s: no last-error message", what);
}

/* Expects `bytes` of device memory at p to hold the poison still. */
void test_expect_poisoned(const test_memory *m, const void *p, size_t bytes, const char *what)
{
    unsigned char *after = malloc(bytes);
    CHECK(after, "host allocation failed");
    m->wait(m->context);
    m->download(after, p, bytes, m->context);
    size_t written = 0;
    while (written < bytes && after[written] == TEST_POISON_BYTE)
        ++written;
    EXPECT(written == bytes, "%s: byte %zu of %zu was written", what, written, bytes);
    free(after);
}

/* Every one of the 12 x 12 pairs: those of dlscan.h's list scan (an inclusive or exclusive
 * sum, checked), the others are refused with DLSCAN_ERROR_TYPE_PAIR and write nothing. */
static void check_every_pair_of_types(dlscan_handle_t h, const test_memory *m, uint64_t *rng)
{
    const size_t n = 100, bytes = 8 * n;
    uint64_t input[100], output[100], total = 0;
    void *d_in = m->alloc(bytes, m->context), *d_out = m->alloc(bytes, m->context);
    void *d_total = m->alloc(8, m->context);
    CHECK(d_in && d_out && d_total, "allocation failed");
    for (int i = 0; i < TEST_TYPE_COUNT; ++i)
        for (int o = 0; o < TEST_TYPE_COUNT; ++o) {
            const dlscan_type in = (dlscan_type)i, out = (dlscan_type)o;
            test_fill_random(in, TEST_VALUES_UNIFORM, input, n, rng);
            m->upload(d_in, input, n * test_type_size(in), m->context);
            m->fill(d_out, TEST_POISON_BYTE, bytes, m->context);
            m->fill(d_total, TEST_POISON_BYTE, 8, m->context);
            const pair_case c = {in, out, DLSCAN_SUM, (i + o) % 2, TEST_INIT_NONE, 1, 0, n,
                                 TEST_VALUES_UNIFORM};
            char what[160];
            test_describe_pair(&c, what, sizeof what);
            dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
            a.d_in = d_in;
            a.d_out = d_out;
            a.n = n;
            a.in_type = in;
            a.out_type = out;
            a.exclusive = c.exclusive;
            a.d_total = d_total;
            const dlscan_status status = dlscan_scan(h, &a, m->stream);
            if (!test_pair_supported(in, out)) {
                test_expect_refused(h, status, DLSCAN_ERROR_TYPE_PAIR, what);
                test_expect_poisoned(m, d_out, bytes, what);
                test_expect_poisoned(m, d_total, 8, what);
                continue;
            }
            EXPECT(status == DLSCAN_SUCCESS, "%s: %s (%s)", what, dlscan_status_string(status),
                   dlscan_last_error(h));
            if (status != DLSCAN_SUCCESS)
                continue;
            m->wait(m->context);
            m->download(output, d_out, n * test_type_size(out), m->context);
            m->download(&total, d_total, test_type_size(out), m->context);
            size_t tile = 0;
            dlscan_tile_items(h, out, &tile);
            char message[256];
            EXPECT(scan_check_pair_output(&c, tile, 0, input, NULL, output, &total, message, sizeof message),
                   "%s: %s", what, message);
        }
    m->release(d_in, m->context);
    m->release(d_out, m->context);
    m->release(d_total, m->context);
}

/* Compaction takes the six 32- and 64-bit types only (dlscan.h). */
static void check_compaction_refuses_small_types(dlscan_handle_t h, const test_memory *m)
{
    const size_t n = 64, bytes = 8 * n;
    void *d_in = m->alloc(bytes, m->context), *d_out = m->alloc(bytes, m->context);
    void *d_values = m->alloc(bytes, m->context);
    unsigned char *d_flags = m->alloc(n, m->context);
    size_t *d_count = m->alloc(sizeof(size_t), m->context);
    CHECK(d_in && d_out && d_values && d_flags && d_count, "allocation failed");
    m->fill(d_in, 0, bytes, m->context);
    m->fill(d_flags, 1, n, m->context);
    m->fill(d_out, TEST_POISON_BYTE, bytes, m->context);
    m->fill(d_values, TEST_POISON_BYTE, bytes, m->context);
    m->fill(d_count, TEST_POISON_BYTE, sizeof(size_t), m->context);
    const uint64_t operand = 0;
    cudaStream_t s = m->stream;
    for (int t = DLSCAN_INT8; t < TEST_TYPE_COUNT; ++t) {
        const dlscan_type type = (dlscan_type)t;
        char what[64];
        snprintf(what, sizeof what, "compaction of %s", test_type_name(type));
        test_expect_refused(h, dlscan_select_flagged(h, d_in, d_flags, d_out, d_count, n, type, s),
                       DLSCAN_ERROR_INVALID_TYPE, what);
        test_expect_refused(h, dlscan_select_if(h, d_in, d_out, d_count, n, type, DLSCAN_LESS, &operand, s),
                       DLSCAN_ERROR_INVALID_TYPE, what);
        test_expect_refused(h, dlscan_unique(h, d_in, d_out, d_count, n, type, s), DLSCAN_ERROR_INVALID_TYPE,
                            what);
        test_expect_refused(h, dlscan_run_length_encode(h, d_in, d_out, d_values, d_count, n, type, s),
                       DLSCAN_ERROR_INVALID_TYPE, what);
        test_expect_refused(h, dlscan_reduce_by_key(h, d_in, d_in, d_out, d_values, d_count, n, type,
                                               DLSCAN_INT32, DLSCAN_SUM, s),
                       DLSCAN_ERROR_INVALID_TYPE, what);
        test_expect_refused(h, dlscan_reduce_by_key(h, d_in, d_in, d_out, d_values, d_count, n, DLSCAN_INT32,
                                               type, DLSCAN_SUM, s),
                       DLSCAN_ERROR_INVALID_TYPE, what);
    }
    test_expect_poisoned(m, d_out, bytes, "refused compaction");
    test_expect_poisoned(m, d_values, bytes, "refused compaction");
    test_expect_poisoned(m, d_count, sizeof(size_t), "refused compaction");
    m->release(d_in, m->context);
    m->release(d_out, m->context);
    m->release(d_values, m->context);
    m->release(d_flags, m->context);
    m->release(d_count, m->context);
}

void pair_check_refusals(dlscan_handle_t h, const test_memory *m, void *foreign, uint64_t *rng)
{
    for (int t = 0; t < TEST_TYPE_COUNT; ++t) {
        size_t items = 0;
        EXPECT(dlscan_tile_items(h, (dlscan_type)t, &items) == DLSCAN_SUCCESS && items > 0,
               "dlscan_tile_items of %s: %s", test_type_name((dlscan_type)t), dlscan_last_error(h));
        EXPECT(dlscan_reserve(h, 1000, (dlscan_type)t) == DLSCAN_SUCCESS, "dlscan_reserve of %s: %s",
               test_type_name((dlscan_type)t), dlscan_last_error(h));
    }
    check_every_pair_of_types(h, m, rng);
    check_compaction_refuses_small_types(h, m);

    /* uint8 -> int32: each argument in turn made wrong. */
    const size_t n = 100, bytes = 4 * n;
    uint8_t input[100];
    test_fill_random(DLSCAN_UINT8, TEST_VALUES_UNIFORM, input, n, rng);
    unsigned char *d_in = m->alloc(n, m->context), *d_out = m->alloc(bytes, m->context);
    unsigned char *d_init = m->alloc(16, m->context), *d_total = m->alloc(16, m->context);
    CHECK(d_in && d_out && d_init && d_total, "allocation failed");
    m->upload(d_in, input, n, m->context);
    m->fill(d_out, TEST_POISON_BYTE, bytes, m->context);
    m->fill(d_total, TEST_POISON_BYTE, 16, m->context);
    const int32_t init = -7;
    m->upload(d_init, &init, sizeof init, m->context);
    dlscan_scan_args good = DLSCAN_SCAN_ARGS_INIT;
    good.d_in = d_in;
    good.d_out = d_out;
    good.n = n;
    good.in_type = DLSCAN_UINT8;
    good.out_type = DLSCAN_INT32;
    good.exclusive = 1;
    good.d_total = d_total;
    cudaStream_t s = m->stream;
    struct {
        dlscan_scan_args args;
        unsigned char later[24]; /* fields of a later version */
    } larger;
    memset(&larger, 0, sizeof larger);
    larger.args = good;
    larger.args.size = sizeof larger;
    larger.later[5] = 1;
    dlscan_scan_args a;
#define REFUSED(change, want)                                                                    \
    do {                                                                                          \
        a = good;                                                                                 \
        change;                                                                                   \
        test_expect_refused(h, dlscan_scan(h, &a, s), want, #change);                                  \
    } while (0)
    test_expect_refused(h, dlscan_scan(h, NULL, s), DLSCAN_ERROR_INVALID_ARGUMENT, "args == NULL");
    EXPECT(dlscan_scan(NULL, &good, s) == DLSCAN_ERROR_INVALID_HANDLE, "a NULL handle is refused");
    REFUSED(a.size = DLSCAN_SCAN_ARGS_SIZE_V1 - 1, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(a.size = 0, DLSCAN_ERROR_INVALID_ARGUMENT);
    /* Sizes between two versions' (which once kept half of d_keys and read through it). */
    for (size_t size = DLSCAN_SCAN_ARGS_SIZE_V1 + 1; size < DLSCAN_SCAN_ARGS_SIZE_V2; ++size)
        REFUSED((a.size = size, a.d_keys = d_in, a.key_type = DLSCAN_UINT8),
                DLSCAN_ERROR_INVALID_ARGUMENT);
    for (size_t size = DLSCAN_SCAN_ARGS_SIZE_V2 + 1; size < DLSCAN_SCAN_ARGS_SIZE_V3; ++size)
        REFUSED(a.size = size, DLSCAN_ERROR_INVALID_ARGUMENT);
    for (size_t size = DLSCAN_SCAN_ARGS_SIZE_V3 + 1; size < sizeof(dlscan_scan_args); ++size)
        REFUSED(a.size = size, DLSCAN_ERROR_INVALID_ARGUMENT);
    test_expect_refused(h, dlscan_scan(h, &larger.args, s), DLSCAN_ERROR_NOT_SUPPORTED,
                   "a later version's field set");
    REFUSED(a.exclusive = 2, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(a.exclusive = -1, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED((a.init = &init, a.d_init = d_init), DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(a.in_type = (dlscan_type)TEST_TYPE_COUNT, DLSCAN_ERROR_INVALID_TYPE);
    REFUSED(a.out_type = (dlscan_type)-1, DLSCAN_ERROR_INVALID_TYPE);
    REFUSED(a.op = (dlscan_op)3, DLSCAN_ERROR_INVALID_OP);
    REFUSED(a.key_type = (dlscan_type)TEST_TYPE_COUNT, DLSCAN_ERROR_INVALID_TYPE); /* no d_keys */
    REFUSED(a.d_in = NULL, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(a.d_out = NULL, DLSCAN_ERROR_INVALID_ARGUMENT);
    REFUSED(a.d_out = d_in, DLSCAN_ERROR_OVERLAP); /* in place, 1-byte items into 4-byte ones */
    REFUSED(a.d_total = d_out + 4 * 3, DLSCAN_ERROR_OVERLAP);
    REFUSED(a.d_total = d_in + 8, DLSCAN_ERROR_OVERLAP);
    REFUSED(a.d_init = d_out + 4 * 5, DLSCAN_ERROR_OVERLAP);
    REFUSED((a.d_init = d_out + 4 * 5, a.d_total = d_out + 4 * 5), DLSCAN_ERROR_OVERLAP);
    REFUSED(a.d_init = d_init + 2, DLSCAN_ERROR_MISALIGNED);
    REFUSED(a.d_total = d_total + 1, DLSCAN_ERROR_MISALIGNED);
    if (foreign) {
        REFUSED(a.d_init = foreign, DLSCAN_ERROR_NOT_DEVICE_MEMORY);
        REFUSED(a.d_total = foreign, DLSCAN_ERROR_NOT_DEVICE_MEMORY);
    }
#undef REFUSED
    test_expect_poisoned(m, d_out, bytes, "a refused dlscan_scan");
    test_expect_poisoned(m, d_total, 16, "a refused dlscan_scan");

    /* What works: a larger struct whose later fields are zero, the first version's size, n == 0
     * (NULL items), which writes the init to d_total, and the second version's size. */
    larger.later[5] = 0;
    const pair_case c = {DLSCAN_UINT8, DLSCAN_INT32, DLSCAN_SUM, 1, TEST_INIT_DEVICE, 1, 0, n,
                         TEST_VALUES_UNIFORM};
    good.d_init = d_init;
    for (int call = 0; call < 4; ++call) {
        larger.args = good;
        larger.args.size = call == 0   ? sizeof larger
                           : call == 3 ? DLSCAN_SCAN_ARGS_SIZE_V2
                                       : DLSCAN_SCAN_ARGS_SIZE_V1;
        if (call == 2) {
            larger.args.d_in = larger.args.d_out = NULL;
            larger.args.n = 0;
        }
        m->fill(d_out, TEST_POISON_BYTE, bytes, m->context);
        m->fill(d_total, TEST_POISON_BYTE, 16, m->context);
        EXPECT(dlscan_scan(h, &larger.args, s) == DLSCAN_SUCCESS, "call %d: %s", call, dlscan_last_error(h));
        int32_t output[100], total = 0;
        m->wait(m->context);
        m->download(output, d_out, bytes, m->context);
        m->download(&total, d_total, sizeof total, m->context);
        size_t tile = 0;
        dlscan_tile_items(h, DLSCAN_INT32, &tile);
        pair_case checked = c;
        checked.n = larger.args.n;
        char message[256];
        EXPECT(scan_check_pair_output(&checked, tile, 0, input, &init, output, &total, message, sizeof message),
               "call %d: %s", call, message);
    }
    m->release(d_in, m->context);
    m->release(d_out, m->context);
    m->release(d_init, m->context);
    m->release(d_total, m->context);
}
