/*
 * values.c: the element types and operators of the `dlscan` command and their numbers
 * (values.h): parsing and printing values of each type, whole numbers for options, and
 * printable copies of bad tokens for messages.
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
};
const char *const op_names[3] = {"sum", "min", "max"};

const type_info *find_type(const char *name)
{
    for (size_t t = 0; t < TYPE_COUNT; ++t)
        if (strcmp(name, all_types[t].name) == 0)
            return &all_types[t];
    return NULL;
}

/* parse_value's work on a NUL-terminated token. */
static parse_result parse_token(dlscan_type type, const char *token, scan_value *v)
{
    /* strto* skip leading white space (\v and \f too) before the sign: so does the check
     * for a negative unsigned number. */
    const char *start = token;
    while (isspace((unsigned char)*start))
        ++start;
    char *end;
    long long integer = 0;
    unsigned long long natural = 0;
    double real = 0;
    int out_of_range;
    errno = 0;
    switch (type) {
    case DLSCAN_INT32:
    case DLSCAN_INT64:
        integer = strtoll(start, &end, 10);
        out_of_range = errno == ERANGE ||
                       (type == DLSCAN_INT32 && (integer < INT32_MIN || integer > INT32_MAX));
        break;
    case DLSCAN_UINT32:
    case DLSCAN_UINT64:
        if (start[0] == '-') { /* strtoull would wrap negative numbers around: only -0 fits */
            integer = strtoll(start, &end, 10);
            out_of_range = errno == ERANGE || integer != 0;
        } else {
            natural = strtoull(start, &end, 10);
            out_of_range = errno == ERANGE || (type == DLSCAN_UINT32 && natural > UINT32_MAX);
        }
        break;
    case DLSCAN_FLOAT32: /* strtof's float, exactly, as a double */
    case DLSCAN_FLOAT64:
        real = type == DLSCAN_FLOAT32 ? (double)strtof(start, &end) : strtod(start, &end);
        out_of_range = errno == ERANGE && isinf(real);
        break;
    default:
        return PARSE_NOT_A_NUMBER;
    }
    if (end == start || *end)
        return PARSE_NOT_A_NUMBER;
    if (out_of_range)
        return PARSE_OUT_OF_RANGE;
    memset(v, 0, sizeof *v);
    switch (type) {
    case DLSCAN_INT32: v->i32 = (int32_t)integer; break;
    case DLSCAN_INT64: v->i64 = (int64_t)integer; break;
    case DLSCAN_UINT32: v->u32 = (uint32_t)natural; break;
    case DLSCAN_UINT64: v->u64 = (uint64_t)natural; break;
    case DLSCAN_FLOAT32: v->f32 = (float)real; break;
    case DLSCAN_FLOAT64: v->f64 = real; break;
    }
    return PARSE_OK;
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

/* The shortest of %.6g .. %.9g (float32) or %.15g .. %.17g (float64) that reads back as
 * the same bits; the widest always does. */
static void write_shortest_float(FILE *out, dlscan_type type, scan_value v)
{
    const int single = type == DLSCAN_FLOAT32;
    const double x = single ? (double)v.f32 : v.f64;
    char text[40];
    for (int digits = single ? 6 : 15;; ++digits) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        scan_value back;
        memset(&back, 0, sizeof back);
        if (single)
            back.f32 = strtof(text, NULL);
        else
            back.f64 = strtod(text, NULL);
        if (memcmp(&back, &v, single ? 4 : 8) == 0 || digits == (single ? 9 : 17))
            break;
    }
    fprintf(out, "%s\n", text);
}

void write_text_value(FILE *out, dlscan_type type, const void *p)
{
    scan_value v;
    memset(&v, 0, sizeof v);
    memcpy(&v, p, type == DLSCAN_INT32 || type == DLSCAN_UINT32 || type == DLSCAN_FLOAT32 ? 4 : 8);
    switch (type) {
    case DLSCAN_INT32: fprintf(out, "%" PRId32 "\n", v.i32); break;
    case DLSCAN_UINT32: fprintf(out, "%" PRIu32 "\n", v.u32); break;
    case DLSCAN_INT64: fprintf(out, "%" PRId64 "\n", v.i64); break;
    case DLSCAN_UINT64: fprintf(out, "%" PRIu64 "\n", v.u64); break;
    case DLSCAN_FLOAT32:
    case DLSCAN_FLOAT64: write_shortest_float(out, type, v); break;
    }
}

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
