/*
 * cpu_ops.c: the CPU backend's loops, one set per accumulator type and operator, stamped out
 * by DL_CPU_OPS, and the conversions into and out of the accumulator. Signed integer sums run
 * on the unsigned type of the same size: two's-complement wrap-around without undefined
 * behaviour (as on the GPU).
 */
#include <string.h>

#include "cpu_ops.h"
#include "internal.h"

#define DL_SUM(a, b) ((a) + (b))
#define DL_MIN(a, b) ((b) < (a) ? (b) : (a))
#define DL_MAX(a, b) ((a) < (b) ? (b) : (a))
/* Floats: a NaN wins, as in NumPy and PyTorch (dlscan.h): a NaN b by b != b, a NaN a by
 * losing every comparison. */
#define DL_FMIN(a, b) ((b) < (a) || (b) != (b) ? (b) : (a))
#define DL_FMAX(a, b) ((a) < (b) || (b) != (b) ? (b) : (a))

/* Partial accumulators of a reduction: independent chains the compiler can vectorize,
 * combined in a fixed order at the end. */
#define DL_LANES 8

#define DL_CPU_OPS(NAME, T, COMBINE)                                                              \
    static T NAME##_from_bits(uint64_t bits)                                                     \
    {                                                                                             \
        T value;                                                                                  \
        if (sizeof(T) == 4) {                                                                     \
            const uint32_t low = (uint32_t)bits;                                                  \
            memcpy(&value, &low, sizeof low);                                                     \
        } else {                                                                                  \
            memcpy(&value, &bits, sizeof bits);                                                   \
        }                                                                                         \
        return value;                                                                             \
    }                                                                                             \
    static uint64_t NAME##_to_bits(T value)                                                      \
    {                                                                                             \
        if (sizeof(T) == 4) {                                                                     \
            uint32_t low;                                                                         \
            memcpy(&low, &value, sizeof low);                                                     \
            return low;                                                                           \
        }                                                                                         \
        uint64_t bits;                                                                            \
        memcpy(&bits, &value, sizeof bits);                                                       \
        return bits;                                                                              \
    }                                                                                             \
    static dl_bits NAME##_combine(dl_bits earlier, dl_bits later)                                 \
    {                                                                                             \
        const dl_bits result = {                                                                  \
            NAME##_to_bits(COMBINE(NAME##_from_bits(earlier.lo), NAME##_from_bits(later.lo))), 0}; \
        return result;                                                                            \
    }                                                                                             \
    static dl_bits NAME##_segmented(dl_bits earlier, dl_bits later)                               \
    {                                                                                             \
        const dl_bits result = {                                                                  \
            earlier.lo + later.lo,                                                                \
            later.lo ? later.hi                                                                   \
                     : NAME##_to_bits(COMBINE(NAME##_from_bits(earlier.hi),                       \
                                              NAME##_from_bits(later.hi)))};                      \
        return result;                                                                            \
    }                                                                                             \
    static uint64_t NAME##_reduce(const void *in, size_t n, uint64_t identity_bits)               \
    {                                                                                             \
        const T *x = in;                                                                          \
        const T identity = NAME##_from_bits(identity_bits);                                      \
        T lanes[DL_LANES];                                                                        \
        for (int k = 0; k < DL_LANES; ++k)                                                        \
            lanes[k] = identity;                                                                  \
        size_t i = 0;                                                                             \
        for (; i + DL_LANES <= n; i += DL_LANES)                                                  \
            for (int k = 0; k < DL_LANES; ++k)                                                    \
                lanes[k] = COMBINE(lanes[k], x[i + k]);                                           \
        T total = lanes[0];                                                                       \
        for (int k = 1; k < DL_LANES; ++k)                                                        \
            total = COMBINE(total, lanes[k]);                                                     \
        for (; i < n; ++i)                                                                        \
            total = COMBINE(total, x[i]);                                                         \
        return NAME##_to_bits(total);                                                             \
    }                                                                                             \
    static uint64_t NAME##_scan(const void *in, void *out, size_t n, uint64_t prefix_bits,        \
                                int exclusive)                                                    \
    {                                                                                             \
        const T *x = in;                                                                          \
        T *y = out;                                                                               \
        T running = NAME##_from_bits(prefix_bits);                                               \
        if (exclusive) {                                                                          \
            for (size_t i = 0; i < n; ++i) {                                                      \
                const T item = x[i];                                                              \
                y[i] = running;                                                                   \
                running = COMBINE(running, item);                                                 \
            }                                                                                     \
        } else {                                                                                  \
            for (size_t i = 0; i < n; ++i) {                                                      \
                running = COMBINE(running, x[i]);                                                 \
                y[i] = running;                                                                   \
            }                                                                                     \
        }                                                                                         \
        return NAME##_to_bits(running);                                                           \
    }                                                                                             \
    static void NAME##_step(const void *in, void *out, void *running, size_t n, int exclusive)    \
    {                                                                                             \
        const T *x = in;                                                                          \
        T *y = out, *r = running;                                                                 \
        if (exclusive) {                                                                          \
            for (size_t i = 0; i < n; ++i) {                                                      \
                const T item = x[i];                                                              \
                y[i] = r[i];                                                                      \
                r[i] = COMBINE(r[i], item);                                                       \
            }                                                                                     \
        } else {                                                                                  \
            for (size_t i = 0; i < n; ++i) {                                                      \
                r[i] = COMBINE(r[i], x[i]);                                                       \
                y[i] = r[i];                                                                      \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static const dl_cpu_ops NAME = {NAME##_combine, NAME##_segmented, NAME##_reduce, NAME##_scan, \
                                    NAME##_step};

DL_CPU_OPS(dl_u32_sum, uint32_t, DL_SUM)
DL_CPU_OPS(dl_i32_min, int32_t, DL_MIN)
DL_CPU_OPS(dl_i32_max, int32_t, DL_MAX)
DL_CPU_OPS(dl_u32_min, uint32_t, DL_MIN)
DL_CPU_OPS(dl_u32_max, uint32_t, DL_MAX)
DL_CPU_OPS(dl_u64_sum, uint64_t, DL_SUM)
DL_CPU_OPS(dl_i64_min, int64_t, DL_MIN)
DL_CPU_OPS(dl_i64_max, int64_t, DL_MAX)
DL_CPU_OPS(dl_u64_min, uint64_t, DL_MIN)
DL_CPU_OPS(dl_u64_max, uint64_t, DL_MAX)
DL_CPU_OPS(dl_f32_sum, float, DL_SUM)
DL_CPU_OPS(dl_f32_min, float, DL_FMIN)
DL_CPU_OPS(dl_f32_max, float, DL_FMAX)
DL_CPU_OPS(dl_f64_sum, double, DL_SUM)
DL_CPU_OPS(dl_f64_min, double, DL_FMIN)
DL_CPU_OPS(dl_f64_max, double, DL_FMAX)

const dl_cpu_ops *dl_cpu_ops_for(dlscan_type type, dlscan_op op)
{
    /* [type][op], in the enums' order: sum, min, max. */
    static const dl_cpu_ops *const table[6][3] = {
        {&dl_u32_sum, &dl_i32_min, &dl_i32_max}, {&dl_u32_sum, &dl_u32_min, &dl_u32_max},
        {&dl_u64_sum, &dl_i64_min, &dl_i64_max}, {&dl_u64_sum, &dl_u64_min, &dl_u64_max},
        {&dl_f32_sum, &dl_f32_min, &dl_f32_max}, {&dl_f64_sum, &dl_f64_min, &dl_f64_max},
    };
    if ((unsigned)type >= 6 || (unsigned)op >= 3)
        return NULL;
    return table[type][op];
}

/* One item of `type` at p: integers as int64 (signed types sign-extended) or, for the
 * unsigned ones, their value; floats as double. */
static int64_t dl_read_integer(dlscan_type type, const char *p)
{
    switch (type) {
    case DLSCAN_INT8: return *(const int8_t *)p;
    case DLSCAN_UINT8: return *(const uint8_t *)p;
    case DLSCAN_INT16: return *(const int16_t *)p;
    case DLSCAN_UINT16: return *(const uint16_t *)p;
    case DLSCAN_INT32: return *(const int32_t *)p;
    case DLSCAN_UINT32: return *(const uint32_t *)p;
    default: { /* 64-bit: the bits */
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    }
}

static double dl_read_float(dlscan_type type, const char *p)
{
    switch (type) {
    case DLSCAN_FLOAT16: return dl_half_to_float(*(const uint16_t *)p);
    case DLSCAN_BFLOAT16: return dl_bfloat16_to_float(*(const uint16_t *)p);
    case DLSCAN_FLOAT32: return *(const float *)p;
    case DLSCAN_FLOAT64: return *(const double *)p;
    default: return (double)dl_read_integer(type, p); /* int32 into float64: exact */
    }
}

void dl_cpu_widen(dlscan_type from, dlscan_type acc, const void *in, void *out, size_t n)
{
    const size_t size = dl_type_size(from);
    const char *x = in;
    for (size_t i = 0; i < n; ++i, x += size)
        switch (acc) {
        case DLSCAN_FLOAT32: ((float *)out)[i] = (float)dl_read_float(from, x); break;
        case DLSCAN_FLOAT64: ((double *)out)[i] = dl_read_float(from, x); break;
        case DLSCAN_INT32:
        case DLSCAN_UINT32: ((uint32_t *)out)[i] = (uint32_t)dl_read_integer(from, x); break;
        default: ((uint64_t *)out)[i] = (uint64_t)dl_read_integer(from, x); break;
        }
}

void dl_cpu_narrow(dlscan_type acc, dlscan_type to, const void *in, void *out, size_t n)
{
    const size_t size = dl_type_size(to);
    char *y = out;
    for (size_t i = 0; i < n; ++i, y += size) {
        if (to == DLSCAN_FLOAT16 || to == DLSCAN_BFLOAT16) {
            const float f = ((const float *)in)[i];
            const uint16_t bits = to == DLSCAN_FLOAT16 ? dl_float_to_half(f) : dl_float_to_bfloat16(f);
            memcpy(y, &bits, sizeof bits);
        } else { /* integers: the low bytes (little-endian) */
            memcpy(y, (const char *)in + i * dl_type_size(acc), size);
        }
    }
}

void dl_cpu_narrow_bits(dlscan_type acc, dlscan_type to, uint64_t bits, void *out)
{
    /* The value in a variable of its own type, for dl_cpu_narrow to read. */
    const uint32_t low = (uint32_t)bits;
    float single;
    memcpy(&single, &low, sizeof single);
    if (acc == DLSCAN_FLOAT32)
        dl_cpu_narrow(acc, to, &single, out, 1);
    else if (dl_type_size(acc) == 4)
        dl_cpu_narrow(acc, to, &low, out, 1);
    else
        dl_cpu_narrow(acc, to, &bits, out, 1);
}
