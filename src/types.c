/*
 * types.c: facts about the element types and operators: validity, sizes, names, the pairs
 * of input and output types a scan takes, the accumulator of each output type, identities
 * (as value bits), and the 16-bit floats' conversions (for inits and the CPU backend).
 */
#include <math.h>
#include <string.h>

#include "internal.h"

int dl_type_valid(dlscan_type type) { return type >= DLSCAN_INT32 && type <= DLSCAN_BFLOAT16; }

int dl_op_valid(dlscan_op op) { return op >= DLSCAN_SUM && op <= DLSCAN_MAX; }

size_t dl_type_size(dlscan_type type)
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

const char *dl_type_name(dlscan_type type)
{
    static const char *const names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64",
                                        "int8",  "uint8",  "int16", "uint16", "float16", "bfloat16"};
    return dl_type_valid(type) ? names[type] : "invalid";
}

const char *dl_op_name(dlscan_op op)
{
    static const char *const names[] = {"sum", "min", "max"};
    return dl_op_valid(op) ? names[op] : "invalid";
}

static int dl_is_integer(dlscan_type type)
{
    return type != DLSCAN_FLOAT32 && type != DLSCAN_FLOAT64 && type != DLSCAN_FLOAT16 &&
           type != DLSCAN_BFLOAT16;
}

int dl_pair_valid(dlscan_type in, dlscan_type out)
{
    if (in == out)
        return 1;
    if (dl_is_integer(in) && dl_is_integer(out))
        return dl_type_size(out) >= 4 && dl_type_size(out) >= dl_type_size(in);
    if (out == DLSCAN_FLOAT32)
        return in == DLSCAN_FLOAT16 || in == DLSCAN_BFLOAT16;
    if (out == DLSCAN_FLOAT64)
        return in == DLSCAN_FLOAT32 || in == DLSCAN_INT32;
    return 0;
}

dlscan_type dl_acc_type(dlscan_type type)
{
    switch (type) {
    case DLSCAN_INT8:
    case DLSCAN_INT16: return DLSCAN_INT32;
    case DLSCAN_UINT8:
    case DLSCAN_UINT16: return DLSCAN_UINT32;
    case DLSCAN_FLOAT16:
    case DLSCAN_BFLOAT16: return DLSCAN_FLOAT32;
    default: return type;
    }
}

int dl_words_per_tile(dlscan_type type) { return dl_type_size(dl_acc_type(type)) == 8 ? 2 : 1; }

static uint64_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

uint64_t dl_identity_bits(dlscan_type type, dlscan_op op)
{
    if (op == DLSCAN_SUM) /* 0 for integers; -0.0 for floats, since -0.0 + x is x for every x,
                             -0.0 included, where +0.0 + -0.0 is +0.0 */
        switch (type) {
        case DLSCAN_FLOAT32: return float_bits(-0.0f);
        case DLSCAN_FLOAT64: return double_bits(-0.0);
        case DLSCAN_FLOAT16:
        case DLSCAN_BFLOAT16: return 0x8000;
        default: return 0;
        }
    const int lowest = op == DLSCAN_MAX; /* max starts from the lowest value, min from the highest */
    switch (type) {
    case DLSCAN_INT8: return (uint8_t)(lowest ? INT8_MIN : INT8_MAX);
    case DLSCAN_UINT8: return lowest ? 0 : UINT8_MAX;
    case DLSCAN_INT16: return (uint16_t)(lowest ? INT16_MIN : INT16_MAX);
    case DLSCAN_UINT16: return lowest ? 0 : UINT16_MAX;
    case DLSCAN_INT32: return (uint32_t)(lowest ? INT32_MIN : INT32_MAX);
    case DLSCAN_UINT32: return lowest ? 0 : UINT32_MAX;
    case DLSCAN_INT64: return (uint64_t)(lowest ? INT64_MIN : INT64_MAX);
    case DLSCAN_UINT64: return lowest ? 0 : UINT64_MAX;
    case DLSCAN_FLOAT32: return float_bits(lowest ? -INFINITY : INFINITY);
    case DLSCAN_FLOAT64: return double_bits(lowest ? -INFINITY : INFINITY);
    case DLSCAN_FLOAT16: return lowest ? 0xfc00 : 0x7c00;
    case DLSCAN_BFLOAT16: return lowest ? 0xff80 : 0x7f80;
    }
    return 0;
}

uint64_t dl_bits_read(const void *value, dlscan_type type)
{
    uint64_t bits = 0;
    memcpy(&bits, value, dl_type_size(type)); /* little-endian: the low bytes */
    return bits;
}

uint64_t dl_acc_bits(dlscan_type type, uint64_t bits)
{
    switch (type) {
    case DLSCAN_INT8: return (uint32_t)(int32_t)(int8_t)(uint8_t)bits;
    case DLSCAN_INT16: return (uint32_t)(int32_t)(int16_t)(uint16_t)bits;
    case DLSCAN_UINT8: return (uint8_t)bits;
    case DLSCAN_UINT16: return (uint16_t)bits;
    case DLSCAN_FLOAT16: return float_bits(dl_half_to_float((uint16_t)bits));
    case DLSCAN_BFLOAT16: return float_bits(dl_bfloat16_to_float((uint16_t)bits));
    default: return bits;
    }
}

float dl_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    uint32_t bits;
    if (exponent == 0x1f) { /* inf, NaN (payload kept) */
        bits = sign | 0x7f800000u | mantissa << 13;
    } else if (exponent != 0) {
        bits = sign | (exponent + 112) << 23 | mantissa << 13;
    } else if (mantissa == 0) {
        bits = sign;
    } else { /* subnormal: mantissa * 2^-24, exact in float32 */
        const float magnitude = (float)mantissa * 0x1p-24f;
        bits = sign | (uint32_t)float_bits(magnitude);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float dl_bfloat16_to_float(uint16_t b)
{
    const uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round to nearest, ties to even, as the GPU's __float2half_rn; NaNs stay NaNs (quiet). */
uint16_t dl_float_to_half(float f)
{
    const uint32_t x = (uint32_t)float_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    const uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude > 0x7f800000u) /* NaN */
        return sign | 0x7e00 | (uint16_t)((magnitude >> 13) & 0x3ff);
    if (magnitude >= 0x477ff000u) /* rounds to inf (65520 and up), or is inf */
        return sign | 0x7c00;
    if (magnitude < 0x38800000u) { /* below 2^-14: a subnormal half (or zero) */
        const float scaled = fabsf(f) * 0x1p24f; /* exact; the default rounding is to even */
        return sign | (uint16_t)nearbyintf(scaled);
    }
    const uint32_t rounded = magnitude + 0xfff + ((magnitude >> 13) & 1);
    return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

uint16_t dl_float_to_bfloat16(float f)
{
    const uint32_t x = (uint32_t)float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it one, quiet */
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
