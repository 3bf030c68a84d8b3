/*
 * types.c: facts about the element types and operators: validity, sizes, names and
 * identities (as value bits, for the exclusive scan's default init).
 */
#include <math.h>
#include <string.h>

#include "internal.h"

int dl_type_valid(dlscan_type type) { return type >= DLSCAN_INT32 && type <= DLSCAN_FLOAT64; }

int dl_op_valid(dlscan_op op) { return op >= DLSCAN_SUM && op <= DLSCAN_MAX; }

size_t dl_type_size(dlscan_type type)
{
    switch (type) {
    case DLSCAN_INT32:
    case DLSCAN_UINT32:
    case DLSCAN_FLOAT32: return 4;
    case DLSCAN_INT64:
    case DLSCAN_UINT64:
    case DLSCAN_FLOAT64: return 8;
    }
    return 0;
}

int dl_words_per_tile(dlscan_type type) { return dl_type_size(type) == 8 ? 2 : 1; }

const char *dl_type_name(dlscan_type type)
{
    static const char *const names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
    return dl_type_valid(type) ? names[type] : "invalid";
}

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
        return type == DLSCAN_FLOAT32 ? float_bits(-0.0f) : type == DLSCAN_FLOAT64 ? double_bits(-0.0) : 0;
    const int lowest = op == DLSCAN_MAX; /* max starts from the lowest value, min from the highest */
    switch (type) {
    case DLSCAN_INT32: return (uint32_t)(lowest ? INT32_MIN : INT32_MAX);
    case DLSCAN_UINT32: return lowest ? 0 : UINT32_MAX;
    case DLSCAN_INT64: return (uint64_t)(lowest ? INT64_MIN : INT64_MAX);
    case DLSCAN_UINT64: return lowest ? 0 : UINT64_MAX;
    case DLSCAN_FLOAT32: return float_bits(lowest ? -INFINITY : INFINITY);
    case DLSCAN_FLOAT64: return double_bits(lowest ? -INFINITY : INFINITY);
    }
    return 0;
}
