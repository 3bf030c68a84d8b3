/*
 * scan_check.c: the shared test harness of the cpu and gpu suites (see scan_check.h):
 * random inputs, the sequential reference of any pair of types (with its own 16-bit float
 * conversions), the comparison, one scan case run on a backend, and the bad-input checks.
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

size_t test_type_size(dlscan_type type)
{
    switch (type) {
    case DLSCAN_INT8:
    case DLSCAN_UINT8: return 1;
    case DLSCAN_INT16:
    case DLSCAN_UINT16:
    case DLSCAN_FLOAT16:
    case DLSCAN_BFLOAT16: return 2;
    case DLSCAN_INT32:
    case DLSCAN_UINT32:
    case DLSCAN_FLOAT32: return 4;
    case DLSCAN_INT64:
    case DLSCAN_UINT64:
    case DLSCAN_FLOAT64: return 8;
    }
    return 0;
}

const char *test_type_name(dlscan_type type)
{
    static const char *const names[TEST_TYPE_COUNT] = {
        "int32", "uint32", "int64", "uint64", "float32", "float64",
        "int8",  "uint8",  "int16", "uint16", "float16", "bfloat16"};
    return (int)type >= 0 && (int)type < TEST_TYPE_COUNT ? names[type] : NULL;
}

int test_type_is_float(dlscan_type t)
{
    return t == DLSCAN_FLOAT32 || t == DLSCAN_FLOAT64 || t == DLSCAN_FLOAT16 || t == DLSCAN_BFLOAT16;
}

static int is_signed(dlscan_type t)
{
    return t == DLSCAN_INT8 || t == DLSCAN_INT16 || t == DLSCAN_INT32 || t == DLSCAN_INT64;
}

int test_pair_supported(dlscan_type in, dlscan_type out)
{
    if (in == out)
        return 1;
    switch (out) {
    case DLSCAN_INT32:
    case DLSCAN_UINT32: /* from every integer type of 32 bits or fewer */
        return !test_type_is_float(in) && test_type_size(in) <= 4;
    case DLSCAN_INT64:
    case DLSCAN_UINT64: return !test_type_is_float(in);
    case DLSCAN_FLOAT32: return in == DLSCAN_FLOAT16 || in == DLSCAN_BFLOAT16;
    case DLSCAN_FLOAT64: return in == DLSCAN_FLOAT32 || in == DLSCAN_INT32;
    default: return 0; /* nothing into the 8- and 16-bit types but themselves */
    }
}

/* ---- The 16-bit floats, by arithmetic on their fields ---- */

/* A float of `precision` significant bits and `max_exponent` (the largest finite value is
 * just under 2^(max_exponent + 1)) from its exponent field and mantissa. */
static float small_float_value(unsigned sign, unsigned exponent, unsigned mantissa,
                               int mantissa_bits, int max_exponent)
{
    const unsigned all_ones = (1u << (15 - mantissa_bits)) - 1;
    const int min_exponent = 1 - max_exponent; /* of the smallest normal */
    float magnitude;
    if (exponent == all_ones)
        magnitude = mantissa ? NAN : INFINITY;
    else if (exponent == 0) /* subnormal: mantissa units of 2^(min_exponent - mantissa_bits) */
        magnitude = ldexpf((float)mantissa, min_exponent - mantissa_bits);
    else
        magnitude = ldexpf((float)(mantissa | 1u << mantissa_bits),
                           (int)exponent - max_exponent - mantissa_bits);
    return sign ? -magnitude : magnitude;
}

float test_half_to_float(uint16_t bits)
{
    return small_float_value(bits >> 15, bits >> 10 & 0x1f, bits & 0x3ff, 10, 15);
}

float test_bfloat16_to_float(uint16_t bits)
{
    return small_float_value(bits >> 15, bits >> 7 & 0xff, bits & 0x7f, 7, 127);
}

/* The nearest 16-bit float (ties to even): the magnitude scaled so that one unit in the
 * last place of the result is 1, rounded to an integer q; q then is the subnormal's
 * mantissa, or 2^mantissa_bits plus the normal's, and the field arithmetic carries a
 * mantissa that rounds up to the next power of two into the exponent. */
static uint16_t small_float_round(float value, int mantissa_bits, int max_exponent)
{
    const uint16_t sign = signbit(value) ? 0x8000 : 0;
    const unsigned all_ones = (1u << (15 - mantissa_bits)) - 1;
    if (isnan(value))
        return sign | (uint16_t)(all_ones << mantissa_bits | 1u << (mantissa_bits - 1));
    const double magnitude = fabs((double)value);
    /* halfway between the largest finite value and 2^(max_exponent + 1) rounds up */
    if (magnitude >= ldexp(2.0 - ldexp(1.0, -mantissa_bits - 1), max_exponent))
        return sign | (uint16_t)(all_ones << mantissa_bits);
    const int min_exponent = 1 - max_exponent;
    int exponent; /* magnitude = m * 2^exponent, m in [1, 2) */
    frexp(magnitude, &exponent);
    exponent -= 1;
    if (magnitude < ldexp(1.0, min_exponent))
        exponent = min_exponent;
    const double scaled = ldexp(magnitude, mantissa_bits - exponent); /* exact */
    double q = floor(scaled);
    const double fraction = scaled - q;
    if (fraction > 0.5 || (fraction == 0.5 && fmod(q, 2.0) != 0.0))
        q += 1.0;
    if (q < ldexp(1.0, mantissa_bits)) /* subnormal (or zero) */
        return sign | (uint16_t)q;
    const unsigned biased = (unsigned)(exponent + max_exponent);
    return sign | (uint16_t)((biased << mantissa_bits) + ((unsigned)q - (1u << mantissa_bits)));
}

uint16_t test_float_to_half(float value) { return small_float_round(value, 10, 15); }

uint16_t test_float_to_bfloat16(float value) { return small_float_round(value, 7, 127); }

/* ---- Random inputs ---- */

/* A random integer of `bits` bits (returned in the low bits) as `kind` says. */
static uint64_t draw_integer(uint64_t r, test_values kind, int bits, int signed_type)
{
    const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    switch (kind) {
    case TEST_VALUES_NARROW:
        return bits <= 16 ? r % 32 - 16 : bits == 32 ? r % 65536 - 32768 : r % (1ull << 33) - (1ull << 32);
    case TEST_VALUES_HIGH: {
        const uint64_t below = (r >> 8) % 16, largest = signed_type ? mask >> 1 : mask;
        return signed_type && (r & 1) ? largest + 1 + below /* near the smallest */ : largest - below;
    }
    default: return r;
    }
}

/* A random 16-bit float with a random sign and mantissa and an exponent field in
 * [low, high]. */
static uint16_t draw_small_float(uint64_t r, int mantissa_bits, unsigned low, unsigned high)
{
    const unsigned exponent = low + (unsigned)((r >> 20) % (high - low + 1));
    const unsigned mantissa = (unsigned)(r >> 40) & ((1u << mantissa_bits) - 1);
    return (uint16_t)((r & 1) << 15 | exponent << mantissa_bits | mantissa);
}

/* Item i of a float array of `type` set to an infinity (nan == 0) or a NaN with the sign
 * and payload bits of r. */
static void put_float_special(dlscan_type type, void *values, size_t i, int nan, uint64_t r)
{
    const uint64_t sign = r & 1;
    switch (type) {
    case DLSCAN_FLOAT16:
    case DLSCAN_BFLOAT16: {
        const int mantissa_bits = type == DLSCAN_FLOAT16 ? 10 : 7;
        const unsigned mask = (1u << mantissa_bits) - 1, payload = nan ? ((unsigned)(r >> 8) & mask) | 1u : 0;
        ((uint16_t *)values)[i] = (uint16_t)(sign << 15 | (0xffffu >> 1 & ~mask) | payload);
        break;
    }
    case DLSCAN_FLOAT32: {
        const uint32_t bits = (uint32_t)(sign << 31) | 0x7f800000u | (nan ? ((uint32_t)(r >> 8) & 0x7fffffu) | 1u : 0);
        memcpy((uint32_t *)values + i, &bits, sizeof bits);
        break;
    }
    case DLSCAN_FLOAT64: {
        const uint64_t bits = sign << 63 | 0x7ff0000000000000ull | (nan ? (r >> 8 & 0xfffffffffffffull) | 1u : 0);
        memcpy((uint64_t *)values + i, &bits, sizeof bits);
        break;
    }
    default: break;
    }
}

/* TEST_VALUES_NAN's NaNs and infinities, over values drawn as UNIFORM. */
static void put_nans(dlscan_type type, void *values, size_t n, uint64_t *rng)
{
    const size_t first = (size_t)(test_random(rng) % (n + n / 4 + 1));
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = test_random(rng);
        if (i == first || (i > first && (r >> 40) % 256 == 0))
            put_float_special(type, values, i, 1, r);
        else if ((r >> 48) % 64 == 0)
            put_float_special(type, values, i, 0, r);
    }
}

void test_fill_random(dlscan_type type, test_values kind, void *values, size_t n, uint64_t *rng)
{
    if (kind == TEST_VALUES_NAN) {
        test_fill_random(type, TEST_VALUES_UNIFORM, values, n, rng);
        if (test_type_is_float(type))
            put_nans(type, values, n, rng);
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = test_random(rng);
        const int narrow = kind == TEST_VALUES_NARROW;
        const int mixed = kind == TEST_VALUES_MIXED_MAGNITUDE ||
                          (kind == TEST_VALUES_HIGH && type == DLSCAN_FLOAT64);
        double real;
        if (mixed)
            real = ldexp((double)(r >> 11) / 9007199254740992.0, (int)((r >> 3) % 41) - 20) *
                   ((r & 1) ? -1.0 : 1.0);
        else if (kind == TEST_VALUES_HIGH) /* float32: [1, 2) * 2^120 .. 2^127 */
            real = ldexp(1.0 + (double)(r >> 12) / 4503599627370496.0, 120 + (int)((r >> 4) % 8)) *
                   ((r & 1) ? -1.0 : 1.0);
        else
            real = (double)((int)(r % 513) - 256) / 256.0; /* k/256, |k| <= 256 */
        if (narrow && real == 0.0 && (r >> 10 & 1))
            real = -0.0;
        const int bits = (int)test_type_size(type) * 8;
        switch (type) {
        case DLSCAN_INT8:
        case DLSCAN_UINT8:
            ((uint8_t *)values)[i] = (uint8_t)draw_integer(r, kind, bits, is_signed(type));
            break;
        case DLSCAN_INT16:
        case DLSCAN_UINT16:
            ((uint16_t *)values)[i] = (uint16_t)draw_integer(r, kind, bits, is_signed(type));
            break;
        case DLSCAN_INT32:
        case DLSCAN_UINT32:
            ((uint32_t *)values)[i] = (uint32_t)draw_integer(r, kind, bits, is_signed(type));
            break;
        case DLSCAN_INT64:
        case DLSCAN_UINT64:
            ((uint64_t *)values)[i] = draw_integer(r, kind, bits, is_signed(type));
            break;
        case DLSCAN_FLOAT16: /* MIXED: every normal exponent; HIGH: 2^14 .. 65504 */
            ((uint16_t *)values)[i] = kind == TEST_VALUES_MIXED_MAGNITUDE ? draw_small_float(r, 10, 1, 30)
                                      : kind == TEST_VALUES_HIGH ? draw_small_float(r, 10, 29, 30)
                                                                 : test_float_to_half((float)real);
            break;
        case DLSCAN_BFLOAT16: /* MIXED: 2^-20 .. 2^21; HIGH: 2^14 .. 2^16 */
            ((uint16_t *)values)[i] = kind == TEST_VALUES_MIXED_MAGNITUDE ? draw_small_float(r, 7, 107, 147)
                                      : kind == TEST_VALUES_HIGH ? draw_small_float(r, 7, 141, 142)
                                                                 : test_float_to_bfloat16((float)real);
            break;
        case DLSCAN_FLOAT32: ((float *)values)[i] = (float)real; break;
        case DLSCAN_FLOAT64: ((double *)values)[i] = real; break;
        }
    }
}

/* ---- The reference ---- */

/* Item i of an integer array of type t, sign- or zero-extended to 64 bits. */
static uint64_t integer_at(const void *p, size_t i, dlscan_type t)
{
    switch (t) {
    case DLSCAN_INT8: return (uint64_t)(int64_t)((const int8_t *)p)[i];
    case DLSCAN_UINT8: return ((const uint8_t *)p)[i];
    case DLSCAN_INT16: return (uint64_t)(int64_t)((const int16_t *)p)[i];
    case DLSCAN_UINT16: return ((const uint16_t *)p)[i];
    case DLSCAN_INT32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case DLSCAN_UINT32: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
    }
}

/* v converted to integer type t as C converts it (modulo 2^bits), kept sign-extended for a
 * signed t, so that 64-bit comparisons order values of t. */
static uint64_t to_integer(uint64_t v, dlscan_type t)
{
    const int bits = (int)test_type_size(t) * 8;
    if (bits == 64)
        return v;
    v &= (1ull << bits) - 1;
    if (is_signed(t) && (v >> (bits - 1) & 1))
        v |= ~0ull << bits;
    return v;
}

static int integer_less(uint64_t a, uint64_t b, dlscan_type t)
{
    return is_signed(t) ? (int64_t)a < (int64_t)b : a < b;
}

/* Item i of a float array (or of int32, scanned into float64), exactly. */
static long double real_at(const void *p, size_t i, dlscan_type t)
{
    switch (t) {
    case DLSCAN_FLOAT16: return test_half_to_float(((const uint16_t *)p)[i]);
    case DLSCAN_BFLOAT16: return test_bfloat16_to_float(((const uint16_t *)p)[i]);
    case DLSCAN_FLOAT32: return ((const float *)p)[i];
    case DLSCAN_FLOAT64: return ((const double *)p)[i];
    default: return (long double)(int64_t)integer_at(p, i, t);
    }
}

/* A float value (exactly representable in t, or, for 16-bit t, rounded once) as bits of t. */
static uint64_t real_bits(long double x, dlscan_type t)
{
    uint64_t bits = 0;
    if (t == DLSCAN_FLOAT64) {
        const double d = (double)x;
        memcpy(&bits, &d, sizeof d);
    } else if (t == DLSCAN_FLOAT32) {
        const float f = (float)x;
        memcpy(&bits, &f, sizeof f);
    } else {
        bits = t == DLSCAN_FLOAT16 ? test_float_to_half((float)x) : test_float_to_bfloat16((float)x);
    }
    return bits;
}

uint64_t test_convert_item(dlscan_type in, dlscan_type out, const void *item)
{
    if (test_type_is_float(out))
        return real_bits(real_at(item, 0, in), out);
    const uint64_t v = to_integer(integer_at(item, 0, in), out);
    return test_type_size(out) == 8 ? v : v & ((1ull << (8 * test_type_size(out))) - 1);
}

static const char *const op_names[] = {"sum", "min", "max"};

const char *test_describe_pair(const pair_case *c, char *buffer, size_t size)
{
    static const char *const inits[] = {"", " with host init", " with device init"};
    snprintf(buffer, size, "%s -> %s %s %s%s%s%s n=%zu", test_type_name(c->in_type),
             test_type_name(c->out_type), (unsigned)c->op < 3 ? op_names[c->op] : "bad-op",
             c->exclusive ? "exclusive" : "inclusive", inits[c->init],
             c->with_total ? " and total" : "", c->in_place ? " in place" : "", c->n);
    return buffer;
}

static void integer_mismatch(dlscan_type t, const char *where, uint64_t got, uint64_t want,
                             char *message, size_t message_size)
{
    if (is_signed(t))
        snprintf(message, message_size, "%s: got %lld, want %lld", where, (long long)got, (long long)want);
    else
        snprintf(message, message_size, "%s: got %llu, want %llu", where, (unsigned long long)got,
                 (unsigned long long)want);
}

/* Integer outputs: exact, sums modulo 2^bits of the output type. An 8- or 16-bit type
 * scanned into itself accumulates in 32 bits, which gives the same low bits. */
static int check_integers(const pair_case *c, const void *in, const void *init, const void *out,
                          const void *total, char *message, size_t message_size)
{
    const dlscan_type t = c->out_type;
    const int bits = (int)test_type_size(t) * 8;
    const uint64_t largest = to_integer(is_signed(t) ? (1ull << (bits - 1)) - 1 : ~0ull, t);
    const uint64_t smallest = is_signed(t) ? to_integer(1ull << (bits - 1), t) : 0;
    uint64_t run = c->op == DLSCAN_SUM ? 0 : c->op == DLSCAN_MIN ? largest : smallest;
    if (init)
        run = to_integer(integer_at(init, 0, t), t);
    char where[64];
    for (size_t j = 0; j < c->n; ++j) {
        const uint64_t x = to_integer(integer_at(in, j, c->in_type), t), before = run;
        run = c->op == DLSCAN_SUM   ? to_integer(run + x, t)
              : c->op == DLSCAN_MIN ? (integer_less(x, run, t) ? x : run)
                                    : (integer_less(run, x, t) ? x : run);
        if (!out)
            continue;
        const uint64_t want = c->exclusive ? before : run, got = to_integer(integer_at(out, j, t), t);
        if (got != want) {
            snprintf(where, sizeof where, "item %zu of %zu", j, c->n);
            integer_mismatch(t, where, got, want, message, message_size);
            return 0;
        }
    }
    if (total) {
        const uint64_t got = to_integer(integer_at(total, 0, t), t);
        if (got != run) {
            integer_mismatch(t, "the total", got, run, message, message_size);
            return 0;
        }
    }
    return 1;
}

/*
 * The float-sum tolerance of item j (or of the total), against the extended-precision
 * reference sum:
 *   exact values (float inputs drawn UNIFORM or NARROW, multiples of 1/256; int32 inputs
 *     drawn NARROW): every partial sum is exact while it stays below 2^16 (float32) in
 *     magnitude, which random signs keep it far under: |error| <= 2^-10, less than half of
 *     the smallest nonzero item, so a lost or doubled item always fails;
 *   others: the first-order bound of a sum evaluated along a chain of at most m additions,
 *     |error| <= m * (eps * S_j + tiny) with S_j = |init| + sum of |x_i| up to j, where
 *     m = 2 * log2(tile items) + 16 (inside the tile, the GPU's tree) + j's position in its
 *     tile (a CPU handle scans a tile in item order: with 65536-item tiles and random signs
 *     the GPU's term alone was exceeded now and then) + tiles before j (the look-back's left
 *     fold) + the calls before (a chain over chunks), eps the accumulator's unit roundoff
 *     (float32's for the 16-bit floats) and tiny its smallest subnormal (subnormal sums).
 * A 16-bit output is the float32 sum rounded once: it must lie between the roundings of
 * the two ends of that interval (rounding is monotonic).
 */
static long double sum_tolerance(const pair_case *c, size_t j, long double abs_sum, size_t tile,
                                 size_t extra_steps)
{
    const int exact = (c->values == TEST_VALUES_UNIFORM || c->values == TEST_VALUES_NARROW) &&
                      (test_type_is_float(c->in_type) || c->values == TEST_VALUES_NARROW);
    if (exact)
        return 1.0L / 1024;
    const int wide = c->out_type == DLSCAN_FLOAT64;
    const long double eps = wide ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
    const long double tiny = wide ? DBL_TRUE_MIN : FLT_TRUE_MIN;
    const long double chain = 2.0 * log2((double)tile) + 16.0 + (double)(j % tile) +
                              (double)(j / tile) + (double)extra_steps;
    return chain * (eps * abs_sum + tiny);
}

/* A 16-bit float rounded from x, back as a value. */
static long double small_float_rounded(long double x, dlscan_type t)
{
    const float f = (float)x;
    return t == DLSCAN_FLOAT16 ? test_half_to_float(test_float_to_half(f))
                               : test_bfloat16_to_float(test_float_to_bfloat16(f));
}

static int sum_matches(const pair_case *c, long double got, long double want, long double tolerance)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    if (test_type_size(c->out_type) == 2)
        return small_float_rounded(want - tolerance, c->out_type) <= got &&
               got <= small_float_rounded(want + tolerance, c->out_type);
    return fabsl(got - want) <= tolerance;
}

/* Float outputs: min and max exactly (either zero where +0 and -0 tie; a NaN wins, any
 * NaN), sums within the tolerance above; NaN and infinities as the reference has them. */
static int check_floats(const pair_case *c, size_t tile, size_t extra_steps, const void *in,
                        const void *init, const void *out, const void *total, char *message,
                        size_t message_size)
{
    const dlscan_type t = c->out_type;
    long double run = c->op == DLSCAN_SUM ? -0.0L : c->op == DLSCAN_MIN ? INFINITY : -INFINITY;
    long double abs_sum = 0.0L;
    if (init) {
        run = real_at(init, 0, t);
        abs_sum = fabsl(run);
    }
    for (size_t j = 0; j <= c->n; ++j) {
        const int is_total = j == c->n;
        if (is_total && !total)
            break;
        const long double before = run, abs_before = abs_sum;
        if (!is_total) {
            const long double x = real_at(in, j, c->in_type);
            run = c->op == DLSCAN_SUM ? run + x
                  : c->op == DLSCAN_MIN ? (x < run || isnan(x) ? x : run)
                                        : (run < x || isnan(x) ? x : run);
            abs_sum += fabsl(x);
        }
        if (!is_total && !out)
            continue;
        const int exclusive_item = c->exclusive && !is_total;
        const long double want = exclusive_item ? before : run;
        const long double got = real_at(is_total ? total : out, is_total ? 0 : j, t);
        const size_t last = is_total && j > 0 ? j - 1 : j;
        const long double tolerance =
            sum_tolerance(c, last, exclusive_item ? abs_before : abs_sum, tile, extra_steps);
        const int ok = c->op == DLSCAN_SUM ? sum_matches(c, got, want, tolerance)
                       : isnan(want)        ? isnan(got)
                                            : got == want;
        if (!ok) {
            char where[64];
            if (is_total)
                snprintf(where, sizeof where, "the total");
            else
                snprintf(where, sizeof where, "item %zu of %zu", j, c->n);
            snprintf(message, message_size, "%s: got %.17Lg, want %.17Lg (tolerance %.3Lg)", where,
                     got, want, c->op == DLSCAN_SUM ? tolerance : 0.0L);
            return 0;
        }
    }
    return 1;
}

int scan_check_pair_output(const pair_case *c, size_t tile, size_t extra_steps, const void *in,
                           const void *init, const void *out, const void *total, char *message,
                           size_t message_size)
{
    const int ok = test_type_is_float(c->out_type)
                       ? check_floats(c, tile, extra_steps, in, init, out, total, message, message_size)
                       : check_integers(c, in, init, out, total, message, message_size);
    if (!ok || !out || !total || c->exclusive || c->n == 0)
        return ok;
    /* An inclusive scan's total is its last item. */
    const size_t size = test_type_size(c->out_type);
    const void *last = (const unsigned char *)out + (c->n - 1) * size;
    const int same = memcmp(total, last, size) == 0 ||
                     (test_type_is_float(c->out_type) &&
                      (real_at(total, 0, c->out_type) == real_at(last, 0, c->out_type) ||
                       (isnan(real_at(total, 0, c->out_type)) && isnan(real_at(last, 0, c->out_type)))));
    if (!same)
        snprintf(message, message_size, "the total differs from the last item of the inclusive scan");
    return same;
}

/* The tile size the tolerance of scan_check_output assumes; set by scan_check_case from the
 * handle. */
static size_t check_tile = 4096;

int scan_check_output(const scan_case *c, const void *in, const void *init, const void *out,
                      char *message, size_t message_size)
{
    if (!test_type_name(c->type)) {
        snprintf(message, message_size, "unknown type %d", (int)c->type);
        return 0;
    }
    /* scan_case's init is an exclusive scan's only */
    const void *used = c->exclusive ? init : NULL;
    const pair_case p = {c->type, c->type,   c->op, c->exclusive, used ? TEST_INIT_HOST : TEST_INIT_NONE,
                         0,       c->in_place, c->n, c->values};
    return scan_check_pair_output(&p, check_tile, 0, in, used, out, NULL, message, message_size);
}

void scan_check_case(dlscan_handle_t h, const test_memory *m, const scan_case *c, uint64_t *rng)
{
    const size_t bytes = c->n * test_type_size(c->type);
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
        m->fill(d_out, TEST_POISON_BYTE, bytes, m->context);
    m->upload(d_in, input, bytes, m->context);

    const dlscan_status status =
        c->exclusive ? dlscan_exclusive_scan(h, d_in, d_out, c->n, c->type, c->op, init, m->stream)
                     : dlscan_inclusive_scan(h, d_in, d_out, c->n, c->type, c->op, m->stream);
    CHECK(status == DLSCAN_SUCCESS, "%s %s %s n=%zu: %s (%s)", test_type_name(c->type),
                 op_names[c->op], c->exclusive ? "exclusive" : "inclusive", c->n,
                 dlscan_status_string(status), dlscan_last_error(h));
    m->wait(m->context);
    memset(output, TEST_POISON_BYTE, bytes);
    m->download(output, d_out, bytes, m->context);

    char message[256];
    const int ok = scan_check_output(c, input, init, output, message, sizeof message);
    m->release(d_in, m->context);
    if (!c->in_place)
        m->release(d_out, m->context);
    free(input);
    free(output);
    CHECK(ok, "%s %s %s%s%s n=%zu: %s", test_type_name(c->type), op_names[c->op],
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

void scan_check_pair_input(dlscan_handle_t h, const test_memory *m, const pair_case *c,
                           const void *input, uint64_t *rng)
{
    char what[160];
    test_describe_pair(c, what, sizeof what);
    const size_t size = test_type_size(c->out_type), bytes = c->n * size;
    const size_t in_bytes = c->n * test_type_size(c->in_type);
    CHECK(!c->in_place || in_bytes == bytes, "%s: in place needs types of one size", what);
    size_t tile = 0;
    CHECK(dlscan_tile_items(h, c->out_type, &tile) == DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    uint64_t item = 0; /* the init: an input item converted to out_type */
    test_fill_random(c->in_type, c->values, &item, 1, rng);
    const uint64_t init_bits = test_convert_item(c->in_type, c->out_type, &item);

    void *output = malloc(bytes ? bytes : 1);
    void *d_in = m->alloc(in_bytes ? in_bytes : 16, m->context);
    void *d_out = c->in_place ? d_in : m->alloc(bytes ? bytes : 16, m->context);
    void *d_init = c->init == TEST_INIT_DEVICE ? m->alloc(size, m->context) : NULL;
    void *d_total = c->with_total ? m->alloc(size, m->context) : NULL;
    CHECK(output && d_in && d_out && (d_init || c->init != TEST_INIT_DEVICE) &&
              (d_total || !c->with_total),
          "%s: allocation failed", what);
    m->upload(d_in, input, in_bytes, m->context);
    if (!c->in_place)
        m->fill(d_out, TEST_POISON_BYTE, bytes, m->context);
    if (d_init)
        m->upload(d_init, &init_bits, size, m->context);
    if (d_total)
        m->fill(d_total, TEST_POISON_BYTE, size, m->context);

    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_out = d_out;
    a.n = c->n;
    a.in_type = c->in_type;
    a.out_type = c->out_type;
    a.op = c->op;
    a.exclusive = c->exclusive;
    a.init = c->init == TEST_INIT_HOST ? &init_bits : NULL;
    a.d_init = d_init;
    a.d_total = d_total;
    const dlscan_status status = dlscan_scan(h, &a, m->stream);
    CHECK(status == DLSCAN_SUCCESS, "%s: %s (%s)", what, dlscan_status_string(status),
          dlscan_last_error(h));
    m->wait(m->context);
    memset(output, TEST_POISON_BYTE, bytes);
    m->download(output, d_out, bytes, m->context);
    uint64_t total_bits = 0, init_after = init_bits;
    if (d_total)
        m->download(&total_bits, d_total, size, m->context);
    if (d_init)
        m->download(&init_after, d_init, size, m->context);

    char message[256];
    int ok = scan_check_pair_output(c, tile, 0, input, c->init ? &init_bits : NULL, output,
                                    d_total ? &total_bits : NULL, message, sizeof message);
    if (ok && init_after != init_bits) {
        snprintf(message, sizeof message, "d_init was written");
        ok = 0;
    }
    m->release(d_in, m->context);
    if (!c->in_place)
        m->release(d_out, m->context);
    if (d_init)
        m->release(d_init, m->context);
    if (d_total)
        m->release(d_total, m->context);
    free(output);
    CHECK(ok, "%s: %s", what, message);
}

void scan_check_pair_case(dlscan_handle_t h, const test_memory *m, const pair_case *c, uint64_t *rng)
{
    void *input = malloc(c->n ? c->n * test_type_size(c->in_type) : 1);
    CHECK(input, "host allocation failed");
    test_fill_random(c->in_type, c->values, input, c->n, rng);
    scan_check_pair_input(h, m, c, input, rng);
    free(input);
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
    m->fill(d_out, TEST_POISON_BYTE, bytes + 64, m->context);
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
        EXPECT(after[i] == TEST_POISON_BYTE, "a refused call wrote byte %zu of the output", i);

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
        const size_t size = test_type_size((dlscan_type)type);
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
            m->fill(d_out, TEST_POISON_BYTE, n * size, m->context);
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
                   test_type_name((dlscan_type)type), call == 0 ? "inclusive" : call == 1 ? "exclusive" : "by key");
        }
        m->release(d_in, m->context);
        m->release(d_out, m->context);
        m->release(d_keys, m->context);
        m->release(d_count, m->context);
        free(zeros);
        free(out);
    }
}
