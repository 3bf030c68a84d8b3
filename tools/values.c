/*
 * values.c: the element types and operators of the `dlscan` command and their numbers
 * (values.h): parsing, printing and converting values of each type, whole numbers for
 * options, and printable copies of bad tokens for messages. float16 and bfloat16 are
 * converted here, with the command's own code: it links only the public library; decimal
 * text is rounded to them once, exact decimal digits deciding the ties.
 */
#define _POSIX_C_SOURCE 200809L
#include "values.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const type_info all_types[TYPE_COUNT] = {
    {"int32", DLSCAN_INT32, 4, "-2147483648 .. 2147483647"},
    {"uint32", DLSCAN_UINT32, 4, "0 .. 4294967295"},
    {"int64", DLSCAN_INT64, 8, "-9223372036854775808 .. 9223372036854775807"},
    {"uint64", DLSCAN_UINT64, 8, "0 .. 18446744073709551615"},
    {"float32", DLSCAN_FLOAT32, 4, "about -3.4e38 .. 3.4e38"},
    {"float64", DLSCAN_FLOAT64, 8, "about -1.8e308 .. 1.8e308"},
    {"int8", DLSCAN_INT8, 1, "-128 .. 127"},
    {"uint8", DLSCAN_UINT8, 1, "0 .. 255"},
    {"int16", DLSCAN_INT16, 2, "-32768 .. 32767"},
    {"uint16", DLSCAN_UINT16, 2, "0 .. 65535"},
    {"float16", DLSCAN_FLOAT16, 2, "-65504 .. 65504"},
    {"bfloat16", DLSCAN_BFLOAT16, 2, "about -3.4e38 .. 3.4e38"},
};
const char *const op_names[3] = {"sum", "min", "max"};

const type_info *find_type(const char *name)
{
    for (size_t t = 0; t < TYPE_COUNT; ++t)
        if (strcmp(name, all_types[t].name) == 0)
            return &all_types[t];
    return NULL;
}

/* ---------------------------------------------------------------- 16-bit floats */

/* float16 (IEEE binary16) and bfloat16: a sign bit, an exponent field and `fraction_bits`
 * bits of fraction, in 16 bits. */
typedef struct small_float {
    int fraction_bits;
    int bias;
} small_float;

static small_float small_float_of(dlscan_type type)
{
    const small_float float16 = {10, 15}, bfloat16 = {7, 127};
    return type == DLSCAN_FLOAT16 ? float16 : bfloat16;
}

/* The bits of infinity: the exponent field all ones. */
static unsigned small_float_infinity(small_float f)
{
    return ((1u << (15 - f.fraction_bits)) - 1) << f.fraction_bits;
}

/* |x| (finite, not 0) in steps of its binade, and the binade's exponent: 2^exponent <= |x|
 * < 2^(exponent+1); subnormals share the lowest normal binade's step, 2^(exponent -
 * fraction_bits). x lies on a tie where the steps end in .5. */
static double small_float_steps(double x, small_float f, int *exponent)
{
    int e;
    frexp(x, &e);
    *exponent = e - 1 < 1 - f.bias ? 1 - f.bias : e - 1;
    return ldexp(fabs(x), f.fraction_bits - *exponent);
}

static int small_float_tie(double x, small_float f)
{
    int exponent;
    const double steps = isfinite(x) && x != 0 ? small_float_steps(x, f, &exponent) : 0;
    return steps - floor(steps) == 0.5;
}

/* x rounded to the nearest pattern; beyond the largest finite value, infinity. A tie goes
 * by `above` where that is not 0: the sign of |the true value| - |x|, for an x that was
 * itself rounded from a longer text; else (and where the true value is x) to even. A NaN
 * keeps its sign and becomes the quiet NaN. */
static uint16_t small_float_round(double x, small_float f, int above)
{
    const unsigned sign = signbit(x) ? 0x8000u : 0, infinity = small_float_infinity(f);
    x = fabs(x);
    if (isnan(x))
        return (uint16_t)(sign | infinity | 1u << (f.fraction_bits - 1));
    if (x == 0 || isinf(x))
        return (uint16_t)(sign | (x == 0 ? 0 : infinity));
    /* x in steps, rounded (nearbyint: ties to even in the default rounding mode). A normal x
     * has 2^fraction_bits steps or more: the leading step carries into the exponent field,
     * which starts at 1 (at 0 for subnormals), and so does a round up to the next binade. */
    int exponent;
    const double exact = small_float_steps(x, f, &exponent);
    const double steps = !above || exact - floor(exact) != 0.5 ? nearbyint(exact)
                         : above > 0                            ? ceil(exact)
                                                                : floor(exact);
    const double bits = ldexp(exponent + f.bias - 1, f.fraction_bits) + steps;
    return (uint16_t)(sign | (bits >= infinity ? infinity : (unsigned)bits));
}

static uint16_t small_float_from_double(double x, small_float f)
{
    return small_float_round(x, f, 0);
}

/* The pattern's value, exactly. */
static double small_float_to_double(uint16_t bits, small_float f)
{
    const unsigned fraction = bits & ((1u << f.fraction_bits) - 1);
    const int field = (bits & 0x7fff) >> f.fraction_bits;
    double x;
    if ((unsigned)(bits & 0x7fff) >= small_float_infinity(f))
        x = fraction ? NAN : INFINITY;
    else if (field == 0)
        x = ldexp(fraction, 1 - f.bias - f.fraction_bits);
    else
        x = ldexp(fraction + (1u << f.fraction_bits), field - f.bias - f.fraction_bits);
    return bits & 0x8000 ? -x : x;
}

float float_from_16_bits(dlscan_type type, uint16_t bits)
{
    return (float)small_float_to_double(bits, small_float_of(type));
}

uint16_t float_to_16_bits(dlscan_type type, float x)
{
    return small_float_from_double(x, small_float_of(type));
}

/* ---------------------------------------------------------------- exact decimals */

/* Where strtod's double lies on a tie of a 16-bit type, the text may lie on either side of
 * it, or on it: the decimal digits decide. A whole number in base 10^9 limbs, least
 * significant first, and its decimal digits. */
#define LIMBS 48 /* 432 digits: a tie of bfloat16 (from 2^-134) or float16 needs fewer */
typedef struct big_decimal {
    uint32_t limb[LIMBS];
    int count;
} big_decimal;

static void big_multiply(big_decimal *n, uint32_t factor)
{
    uint64_t carry = 0;
    for (int k = 0; k < n->count; ++k) {
        carry += (uint64_t)n->limb[k] * factor;
        n->limb[k] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
    for (; carry && n->count < LIMBS; carry /= 1000000000u)
        n->limb[n->count++] = (uint32_t)(carry % 1000000000u);
}

/* The decimal digits of x > 0, a double with at most LIMBS * 9 of them (a tie of the 16-bit
 * types has about 100 at most: 2^-134, bfloat16's smallest, has 94), into
 * `digits` (no leading zero, NUL-terminated); returns the power of ten of the point: x is
 * 0.digits * 10^power. */
static int double_digits(double x, char *digits, size_t size)
{
    int e;
    uint64_t mantissa = (uint64_t)ldexp(frexp(x, &e), 53);
    e -= 53; /* x = mantissa * 2^e */
    for (; e < 0 && !(mantissa & 1); ++e)
        mantissa >>= 1;
    big_decimal n = {{(uint32_t)(mantissa % 1000000000u),
                      (uint32_t)(mantissa / 1000000000u % 1000000000u),
                      (uint32_t)(mantissa / 1000000000u / 1000000000u)},
                     3};
    /* mantissa * 2^e = mantissa * 5^-e / 10^-e */
    for (int k = e; k < 0; k += 13)
        big_multiply(&n, k + 13 <= 0 ? 1220703125u : (uint32_t)pow(5, -k)); /* 5^13 */
    for (int k = 0; k < e; k += 29)
        big_multiply(&n, e - k >= 29 ? 1u << 29 : 1u << (e - k));
    while (n.count > 1 && n.limb[n.count - 1] == 0)
        --n.count;
    int length = snprintf(digits, size, "%" PRIu32, n.limb[n.count - 1]);
    for (int k = n.count - 2; k >= 0 && length + 9 < (int)size; --k)
        length += snprintf(digits + length, size - (size_t)length, "%09" PRIu32, n.limb[k]);
    return length + (e < 0 ? e : 0);
}

/* The sign of |text| - x, -1, 0 or 1, for x > 0 that strtod read from `text` (decimal, NUL-
 * terminated); 0 also for a text that is not a plain decimal number (hexadecimal). */
static int compare_decimal(const char *text, double x)
{
    text += *text == '-' || *text == '+';
    /* The text is 0.<its digits from the first nonzero one, points skipped> * 10^power. */
    const char *t = text;
    int point = 0;
    long power = 0;
    for (; *t == '0' || (*t == '.' && !point); ++t) {
        power -= point && *t == '0';
        point |= *t == '.';
    }
    const char *first = t;
    for (; isdigit((unsigned char)*t) || (*t == '.' && !point); ++t) {
        power += !point && *t != '.';
        point |= *t == '.';
    }
    const char *end = t;
    long exponent = 0;
    if (*t == 'e' || *t == 'E') {
        const int minus = t[1] == '-';
        for (t += 1 + (t[1] == '-' || t[1] == '+'); isdigit((unsigned char)*t); ++t)
            exponent = exponent < 1000000 ? 10 * exponent + (*t - '0') : exponent;
        power += minus ? -exponent : exponent;
    }
    if (*t || first == end)
        return 0;
    char digits[LIMBS * 9 + 16];
    const long x_power = double_digits(x, digits, sizeof digits);
    if (power != x_power)
        return power > x_power ? 1 : -1;
    const char *d = digits;
    for (t = first; t < end; ++t) {
        if (*t == '.')
            continue;
        const char next = *d ? *d++ : '0';
        if (*t != next)
            return *t > next ? 1 : -1;
    }
    for (; *d; ++d)
        if (*d != '0')
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- parsing */

/* A decimal number with a point or an exponent ("1e3", "-2.50e1") that an integer type
 * takes where it is whole: its sign and magnitude. Returns PARSE_OK, PARSE_NOT_A_NUMBER (no
 * such number), PARSE_NOT_WHOLE, or PARSE_OUT_OF_RANGE (past 2^64 - 1). Exact: digits, not
 * a double. */
static parse_result parse_whole_decimal(const char *text, int *negative,
                                        unsigned long long *magnitude)
{
    *negative = *text == '-';
    text += *text == '-' || *text == '+';
    const char *digits = text, *point = NULL;
    for (; isdigit((unsigned char)*text) || (*text == '.' && !point); ++text)
        point = *text == '.' ? text : point;
    const char *digits_end = text;
    if (digits_end - digits == (point != NULL)) /* no digit */
        return PARSE_NOT_A_NUMBER;
    long exponent = 0;
    if (*text == 'e' || *text == 'E') {
        const int minus = text[1] == '-';
        text += 1 + (text[1] == '-' || text[1] == '+');
        if (!isdigit((unsigned char)*text))
            return PARSE_NOT_A_NUMBER;
        for (; isdigit((unsigned char)*text); ++text)
            if (exponent < 100000)
                exponent = 10 * exponent + (*text - '0');
        exponent = minus ? -exponent : exponent;
    }
    if (*text)
        return PARSE_NOT_A_NUMBER;
    /* value = the digits, read as a whole number, * 10^scale */
    long scale = exponent - (point ? (long)(digits_end - point - 1) : 0);
    for (; digits_end > digits && (digits_end[-1] == '0' || digits_end[-1] == '.'); --digits_end)
        scale += digits_end[-1] == '0';
    while (digits < digits_end && (*digits == '0' || *digits == '.'))
        ++digits;
    *magnitude = 0;
    if (digits == digits_end)
        return PARSE_OK; /* zero */
    if (scale < 0)
        return PARSE_NOT_WHOLE;
    const long count = (long)(digits_end - digits) - (point >= digits && point < digits_end);
    if (count + scale > 20)
        return PARSE_OUT_OF_RANGE;
    unsigned long long m = 0;
    for (long k = 0; k < count + scale; ++digits) {
        if (digits < digits_end && *digits == '.')
            continue;
        const unsigned digit = digits < digits_end ? (unsigned)(*digits - '0') : 0;
        if (m > (UINT64_MAX - digit) / 10)
            return PARSE_OUT_OF_RANGE;
        m = 10 * m + digit;
        ++k;
    }
    *magnitude = m;
    return PARSE_OK;
}

/* parse_value's work on a NUL-terminated token. */
static parse_result parse_token(dlscan_type type, const char *token, scan_value *v)
{
    /* strto* skip leading white space (\v and \f too) before the sign: so does the check
     * for a negative unsigned number. */
    const char *start = token;
    while (isspace((unsigned char)*start))
        ++start;
    const int bits = 8 * (int)all_types[type].size;
    char *end;
    long long integer = 0;
    unsigned long long natural = 0;
    double real = 0;
    int out_of_range;
    errno = 0;
    switch (type) {
    case DLSCAN_INT8:
    case DLSCAN_INT16:
    case DLSCAN_INT32:
    case DLSCAN_INT64: {
        const long long high = (long long)(UINT64_MAX >> (65 - bits));
        integer = strtoll(start, &end, 10);
        out_of_range = errno == ERANGE || integer > high || integer < -high - 1;
        break;
    }
    case DLSCAN_UINT8:
    case DLSCAN_UINT16:
    case DLSCAN_UINT32:
    case DLSCAN_UINT64:
        if (start[0] == '-') { /* strtoull would wrap negative numbers around: only -0 fits */
            integer = strtoll(start, &end, 10);
            out_of_range = errno == ERANGE || integer != 0;
        } else {
            natural = strtoull(start, &end, 10);
            out_of_range = errno == ERANGE || natural > UINT64_MAX >> (64 - bits);
        }
        break;
    case DLSCAN_FLOAT32: /* strtof's float, exactly, as a double */
        real = (double)strtof(start, &end);
        out_of_range = errno == ERANGE && isinf(real);
        break;
    case DLSCAN_FLOAT64:
    case DLSCAN_FLOAT16: /* rounded from strtod's double below */
    case DLSCAN_BFLOAT16:
        real = strtod(start, &end);
        out_of_range = errno == ERANGE && isinf(real);
        break;
    default:
        return PARSE_NOT_A_NUMBER;
    }
    const int whole_type = type != DLSCAN_FLOAT16 && type != DLSCAN_BFLOAT16 &&
                           type != DLSCAN_FLOAT32 && type != DLSCAN_FLOAT64;
    if (whole_type && *end && start[strspn(start, "0123456789.eE+-")] == '\0') {
        /* an integer written with a point or an exponent: 1e3, 2.50e1, -0.0 */
        const int is_signed = type == DLSCAN_INT8 || type == DLSCAN_INT16 ||
                              type == DLSCAN_INT32 || type == DLSCAN_INT64;
        int negative;
        const parse_result whole = parse_whole_decimal(start, &negative, &natural);
        if (whole != PARSE_OK)
            return whole;
        const unsigned long long high = UINT64_MAX >> (64 - bits + is_signed);
        out_of_range = natural > high + (unsigned long long)(is_signed && negative) ||
                       (!is_signed && negative && natural != 0);
        integer = negative ? (long long)(0 - natural) : (long long)natural;
        end += strlen(end);
    }
    if (end == start || *end)
        return PARSE_NOT_A_NUMBER;
    memset(v, 0, sizeof *v);
    switch (type) {
    case DLSCAN_INT8: v->i8 = (int8_t)integer; break;
    case DLSCAN_INT16: v->i16 = (int16_t)integer; break;
    case DLSCAN_INT32: v->i32 = (int32_t)integer; break;
    case DLSCAN_INT64: v->i64 = (int64_t)integer; break;
    case DLSCAN_UINT8: v->u8 = (uint8_t)natural; break;
    case DLSCAN_UINT16: v->u16 = (uint16_t)natural; break;
    case DLSCAN_UINT32: v->u32 = (uint32_t)natural; break;
    case DLSCAN_UINT64: v->u64 = (uint64_t)natural; break;
    case DLSCAN_FLOAT32: v->f32 = (float)real; break;
    case DLSCAN_FLOAT64: v->f64 = real; break;
    case DLSCAN_FLOAT16:
    case DLSCAN_BFLOAT16: {
        const small_float f = small_float_of(type);
        /* strtod's double may lie on a tie that the text does not lie on: the text decides */
        v->u16 = small_float_round(real, f,
                                   small_float_tie(real, f) ? compare_decimal(start, fabs(real))
                                                            : 0);
        out_of_range |= !isinf(real) && (v->u16 & 0x7fff) == small_float_infinity(f);
        break;
    }
    }
    return out_of_range ? PARSE_OUT_OF_RANGE : PARSE_OK;
}

parse_result parse_value(dlscan_type type, const char *text, size_t length, scan_value *v)
{
    /* Any length: a text line's limit is the reader's; --init has none. */
    char small[320];
    char *token = length < sizeof small ? small : malloc(length + 1);
    if (length == 0 || !token || memchr(text, '\0', length)) {
        if (token != small)
            free(token);
        return PARSE_NOT_A_NUMBER;
    }
    memcpy(token, text, length);
    token[length] = '\0';
    const parse_result result = parse_token(type, token, v);
    if (token != small)
        free(token);
    return result;
}

/* ---------------------------------------------------------------- printing */

/* Whether `text` reads back (parse_value) as the bits of v. */
static int reads_back(dlscan_type type, const char *text, scan_value v)
{
    scan_value back;
    memset(&back, 0, sizeof back);
    return parse_value(type, text, strlen(text), &back) == PARSE_OK &&
           memcmp(&back, &v, all_types[type].size) == 0;
}

/* The shortest text of %.Ng that reads back as the same bits: the fewest digits N (float16
 * 1 .. 5, bfloat16 1 .. 4, float32 1 .. 9, float64 1 .. 17, the most always reading back
 * but for NaN payloads), found by bisection, as N digits reading back means N+1 do; then
 * the same value with the digits of its integer part, where that is shorter than the
 * exponent form (2050, not 2.05e+03). Subnormals have fewer digits: 1e-45, 5e-324. */
static void write_shortest_float(FILE *out, dlscan_type type, scan_value v)
{
    const int half = type == DLSCAN_FLOAT16 || type == DLSCAN_BFLOAT16;
    const double x = half                    ? small_float_to_double(v.u16, small_float_of(type))
                     : type == DLSCAN_FLOAT32 ? (double)v.f32
                                              : v.f64;
    const int most = type == DLSCAN_FLOAT16    ? 5
                     : type == DLSCAN_BFLOAT16 ? 4
                     : type == DLSCAN_FLOAT32  ? 9
                                               : 17;
    char best[40], text[40];
    int low = 1, high = most; /* high reads back, or is the most */
    while (low < high) {
        const int digits = (low + high) / 2;
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (reads_back(type, text, v))
            high = digits;
        else
            low = digits + 1;
    }
    snprintf(best, sizeof best, "%.*g", high, x);
    const char *e = strchr(best, 'e');
    const int power = e ? atoi(e + 1) : 0;
    if (e && power >= high && power < most) { /* the integer part's digits, if shorter */
        snprintf(text, sizeof text, "%.*g", power + 1, x);
        if (strlen(text) < strlen(best))
            memcpy(best, text, sizeof text);
    }
    fprintf(out, "%s\n", best);
}

void write_text_value(FILE *out, dlscan_type type, const void *p)
{
    scan_value v;
    memset(&v, 0, sizeof v);
    memcpy(&v, p, all_types[type].size);
    switch (type) {
    case DLSCAN_INT8: fprintf(out, "%" PRId8 "\n", v.i8); break;
    case DLSCAN_UINT8: fprintf(out, "%" PRIu8 "\n", v.u8); break;
    case DLSCAN_INT16: fprintf(out, "%" PRId16 "\n", v.i16); break;
    case DLSCAN_UINT16: fprintf(out, "%" PRIu16 "\n", v.u16); break;
    case DLSCAN_INT32: fprintf(out, "%" PRId32 "\n", v.i32); break;
    case DLSCAN_UINT32: fprintf(out, "%" PRIu32 "\n", v.u32); break;
    case DLSCAN_INT64: fprintf(out, "%" PRId64 "\n", v.i64); break;
    case DLSCAN_UINT64: fprintf(out, "%" PRIu64 "\n", v.u64); break;
    case DLSCAN_FLOAT16:
    case DLSCAN_BFLOAT16:
    case DLSCAN_FLOAT32:
    case DLSCAN_FLOAT64: write_shortest_float(out, type, v); break;
    }
}

/* ---------------------------------------------------------------- conversions */

static int is_float_type(dlscan_type type)
{
    return type == DLSCAN_FLOAT16 || type == DLSCAN_BFLOAT16 || type == DLSCAN_FLOAT32 ||
           type == DLSCAN_FLOAT64;
}

void convert_value(dlscan_type from, dlscan_type to, const void *src, void *dst)
{
    scan_value v, r;
    memset(&v, 0, sizeof v);
    memset(&r, 0, sizeof r);
    memcpy(&v, src, all_types[from].size);
    if (from == to) {
        r = v;
    } else if (!is_float_type(from) && !is_float_type(to)) {
        /* the bits sign-extended to 64; little-endian: the low bytes come first */
        const int64_t wide = from == DLSCAN_INT8    ? v.i8
                             : from == DLSCAN_INT16 ? v.i16
                             : from == DLSCAN_INT32 ? v.i32
                                                    : v.i64; /* unsigned: zero-extended */
        r.u64 = from == DLSCAN_UINT8 || from == DLSCAN_UINT16 || from == DLSCAN_UINT32
                    ? v.u64
                    : (uint64_t)wide;
    } else if ((from == DLSCAN_FLOAT16 || from == DLSCAN_BFLOAT16) && to == DLSCAN_FLOAT32 &&
               (v.u16 & 0x7fffu) > small_float_infinity(small_float_of(from))) {
        /* a NaN keeps its sign and its payload bits */
        const int fraction_bits = small_float_of(from).fraction_bits;
        r.u32 = (uint32_t)(v.u16 & 0x8000u) << 16 | 0x7f800000u |
                (uint32_t)(v.u16 & ((1u << fraction_bits) - 1)) << (23 - fraction_bits);
    } else {
        double x;
        switch (from) {
        case DLSCAN_INT8: x = v.i8; break;
        case DLSCAN_UINT8: x = v.u8; break;
        case DLSCAN_INT16: x = v.i16; break;
        case DLSCAN_UINT16: x = v.u16; break;
        case DLSCAN_INT32: x = v.i32; break;
        case DLSCAN_UINT32: x = v.u32; break;
        case DLSCAN_INT64: x = (double)v.i64; break;
        case DLSCAN_UINT64: x = (double)v.u64; break;
        case DLSCAN_FLOAT16:
        case DLSCAN_BFLOAT16: x = small_float_to_double(v.u16, small_float_of(from)); break;
        case DLSCAN_FLOAT32: x = v.f32; break;
        default: x = v.f64; break;
        }
        switch (to) {
        case DLSCAN_FLOAT16:
        case DLSCAN_BFLOAT16: r.u16 = small_float_from_double(x, small_float_of(to)); break;
        case DLSCAN_FLOAT32: r.f32 = (float)x; break;
        case DLSCAN_FLOAT64: r.f64 = x; break;
        default: /* a float into an integer: no pair of the library; truncated, or 0 */
            r.i64 = x > -9.2e18 && x < 9.2e18 ? (int64_t)x : 0;
            break;
        }
    }
    memcpy(dst, &r, all_types[to].size);
}

/* ---------------------------------------------------------------- options and messages */

int parse_count(const char *text, unsigned long long low, unsigned long long high,
                unsigned long long *value)
{
    char *end;
    if (!text || !*text || *text == '-' || *text == '+' || *text == ' ')
        return 0;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    if (*end || errno == ERANGE || v < low || v > high)
        return 0;
    *value = v;
    return 1;
}

const char *printable(const char *text, size_t length, char buffer[48])
{
    size_t k = 0;
    for (; k < length && k < 40; ++k)
        buffer[k] = text[k] >= 0x20 && text[k] < 0x7f ? text[k] : '?';
    if (length > 40)
        memcpy(buffer + k, "...", 3), k += 3;
    buffer[k] = '\0';
    return buffer;
}
