/*
 * values.h: the element types and operators as the `dlscan` command names them, and their
 * numbers: one value of any type, read from text and written as text; whole numbers for
 * option values; a printable copy of a token for messages. values.c implements them.
 * float16 and bfloat16 values are 16-bit patterns here, as in the files.
 */
#ifndef DLSCAN_CLI_VALUES_H
#define DLSCAN_CLI_VALUES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dlscan.h"

typedef struct type_info {
    const char *name;
    dlscan_type type;
    size_t size;
    const char *range; /* for messages */
} type_info;

#define TYPE_COUNT 12
extern const type_info all_types[TYPE_COUNT]; /* in dlscan_type's order */
extern const char *const op_names[3];         /* in dlscan_op's order */

/* The types' names, for messages. */
#define TYPE_NAMES                                                                         \
    "int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, float32 " \
    "or float64"

/* The type called `name`, or NULL. */
const type_info *find_type(const char *name);

/* One value of any type; the member of the type lies at offset 0. */
typedef union scan_value {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16; /* also float16 and bfloat16: their bits */
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
} scan_value;

typedef enum parse_result {
    PARSE_OK,
    PARSE_NOT_A_NUMBER,
    PARSE_NOT_WHOLE, /* a number, but not a whole one, for an integer type */
    PARSE_OUT_OF_RANGE
} parse_result;

/* Parses `length` bytes at `text` (any length; leading white space is skipped, trailing is
 * not a number) as one value of `type`: decimal integers, where unsigned types take no
 * negative number but -0, also written with a point or an exponent where the value is whole
 * (1e3, 2.50e1; not 1.5 or 1e-1: PARSE_NOT_WHOLE); floats as strtod and strtof read them
 * (also inf and nan), float16 and bfloat16 rounded once to the nearest (ties to even) from
 * the decimal text itself: where strtod's double lies on a tie, the exact digits decide
 * (hexadecimal text goes through the double). Float underflow rounds to 0 or a subnormal;
 * overflow is out of range. */
parse_result parse_value(dlscan_type type, const char *text, size_t length, scan_value *v);

/* Writes one value as text (and a newline) to `out`. Floats: the shortest text in %g's
 * form that reads back (parse_value) as the same bits: the fewest significant digits, at
 * most 5 for float16, 4 for bfloat16, 9 for float32, 17 for float64 (subnormals fewer:
 * 1e-45), or an integer's digits where those are shorter (2050, not 2.05e+03). */
void write_text_value(FILE *out, dlscan_type type, const void *p);

/* float16 and bfloat16 (`type`) from and to float32: exactly, and rounded to the nearest,
 * ties to even. */
float float_from_16_bits(dlscan_type type, uint16_t bits);
uint16_t float_to_16_bits(dlscan_type type, float x);

/* One item of type `from` at `src`, converted to `to` at `dst` as dlscan_scan converts an
 * item to its output type (as C converts it): the same type is copied bit for bit (NaN
 * payloads too), integers are sign- or zero-extended and keep their low bits (int8 -1 is
 * uint32 4294967295), float16 and bfloat16 widen exactly, floats round to the nearest. */
void convert_value(dlscan_type from, dlscan_type to, const void *src, void *dst);

/* A whole decimal number in [low, high] (for option values). */
int parse_count(const char *text, unsigned long long low, unsigned long long high,
                unsigned long long *value);

/* A bounded, printable copy of a token for messages. */
const char *printable(const char *text, size_t length, char buffer[48]);

#endif /* DLSCAN_CLI_VALUES_H */
