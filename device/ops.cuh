/*
 * ops.cuh: the scan operators for device code (sum, min, max with their identities and
 * traits) and the dispatch from (dlscan_type, dlscan_op) to a kernel instantiated over them.
 *
 * Signed integer sums run as unsigned sums of the same bits: two's-complement wrap-around
 * without undefined behaviour, and one kernel fewer per type.
 */
#ifndef DLSCAN_OPS_CUH
#define DLSCAN_OPS_CUH

#include <stdint.h>

#include "dlscan.h"
#include "warp.cuh"

template <typename T> struct dl_limits;
template <> struct dl_limits<int32_t> {
    static constexpr bool is_integer = true;
    __device__ static int32_t lowest() { return INT32_MIN; }
    __device__ static int32_t highest() { return INT32_MAX; }
};
template <> struct dl_limits<uint32_t> {
    static constexpr bool is_integer = true;
    __device__ static uint32_t lowest() { return 0u; }
    __device__ static uint32_t highest() { return UINT32_MAX; }
};
template <> struct dl_limits<int64_t> {
    static constexpr bool is_integer = true;
    __device__ static int64_t lowest() { return INT64_MIN; }
    __device__ static int64_t highest() { return INT64_MAX; }
};
template <> struct dl_limits<uint64_t> {
    static constexpr bool is_integer = true;
    __device__ static uint64_t lowest() { return 0u; }
    __device__ static uint64_t highest() { return UINT64_MAX; }
};
template <> struct dl_limits<float> {
    static constexpr bool is_integer = false;
    __device__ static float lowest() { return __int_as_float(0xff800000); }  /* -inf */
    __device__ static float highest() { return __int_as_float(0x7f800000); } /* +inf */
};
template <> struct dl_limits<double> {
    static constexpr bool is_integer = false;
    __device__ static double lowest() { return __longlong_as_double(0xfff0000000000000ll); }
    __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000ll); }
};

/* The type of a 64-bit integer's high 32 bits, signed like it. */
template <typename T> struct dl_high_word;
template <> struct dl_high_word<int64_t> {
    using type = int32_t;
};
template <> struct dl_high_word<uint64_t> {
    using type = uint32_t;
};

/* float64 items as int64 keys in the same order: negative ones by their magnitude negated,
 * so that -0 and +0 tie, as under `<` (the key of both gives back +0). */
__device__ __forceinline__ int64_t dl_double_key(double x)
{
    const int64_t bits = __double_as_longlong(x);
    return bits < 0 ? -(bits & INT64_MAX) : bits;
}

__device__ __forceinline__ double dl_double_from_key(int64_t key)
{
    return __longlong_as_double(key < 0 ? -key | INT64_MIN : key);
}

/* The minimum (MAX: the maximum) over the warp, in every lane, through redux.sync (sm_80 on):
 * one instruction for 32-bit integers, where the shuffle tree takes five shuffles and five
 * operations in a row. A 64-bit integer takes two: the high words first (signed ones for
 * signed T), then the low words of the lanes whose high word won. A float64 goes through its
 * key (dl_double_key): of two equal zeros, it returns +0 (dlscan.h leaves which one open). */
template <bool MAX, typename T> __device__ __forceinline__ T dl_redux(T v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (!dl_limits<T>::is_integer) {
        static_assert(sizeof(T) == 8, "float64 only: float32 keeps its tree (dl_op_has_warp_reduce)");
        return dl_double_from_key(dl_redux<MAX>(dl_double_key(v)));
    } else if constexpr (sizeof(T) == 4) {
        return MAX ? __reduce_max_sync(0xffffffffu, v) : __reduce_min_sync(0xffffffffu, v);
    } else {
        using HIGH = typename dl_high_word<T>::type;
        const HIGH mine = (HIGH)((uint64_t)v >> 32);
        const HIGH high = dl_redux<MAX>(mine);
        const uint32_t low = dl_redux<MAX>(mine == high ? (uint32_t)v : MAX ? 0u : UINT32_MAX);
        return (T)((uint64_t)(uint32_t)high << 32 | low);
    }
#else
    return v; /* not reached: dl_warp_reduce asks for it on sm_80 and later only */
#endif
}

/* The sum's identity: 0, and for floats -0.0 (-0.0 + x is x for every x, -0.0 included,
 * where +0.0 + -0.0 is +0.0). */
template <typename T> __device__ __forceinline__ T dl_sum_identity() { return T(0); }
template <> __device__ __forceinline__ float dl_sum_identity<float>() { return -0.0f; }
template <> __device__ __forceinline__ double dl_sum_identity<double>() { return -0.0; }

/* Each operator combines (earlier, later). */
template <typename T> struct dl_sum {
    __device__ static T identity() { return dl_sum_identity<T>(); }
    __device__ T operator()(T a, T b) const { return a + b; }
};
template <typename T> struct dl_min {
    __device__ static T identity() { return dl_limits<T>::highest(); }
    __device__ T operator()(T a, T b) const { return b < a ? b : a; }
    __device__ static T warp_reduce(T v) { return dl_redux<false>(v); } /* not float32 */
};
template <typename T> struct dl_max {
    __device__ static T identity() { return dl_limits<T>::lowest(); }
    __device__ T operator()(T a, T b) const { return a < b ? b : a; }
    __device__ static T warp_reduce(T v) { return dl_redux<true>(v); } /* not float32 */
};
/* float32: fminf and fmaxf, one instruction (FMNMX) where the comparison and select are two
 * in a row on the scan's critical path (bench/NOTES.md, "Min and max: redux.sync and FMNMX").
 * They differ from the comparison only where dlscan.h leaves the result open: NaNs, and which
 * of two equal zeros. */
template <> struct dl_min<float> {
    __device__ static float identity() { return dl_limits<float>::highest(); }
    __device__ float operator()(float a, float b) const { return fminf(a, b); }
};
template <> struct dl_max<float> {
    __device__ static float identity() { return dl_limits<float>::lowest(); }
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/* Min and max reduce a warp through redux.sync (warp.cuh, dl_warp_reduce), but for float32:
 * its FMNMX makes a step of the tree one instruction and one shuffle, and its min and max
 * kept pace with the sum without it (bench/NOTES.md, "Min and max: redux.sync and FMNMX"). */
template <typename T> struct dl_op_has_warp_reduce<dl_min<T>> {
    static constexpr bool value = sizeof(T) == 8 || dl_limits<T>::is_integer;
};
template <typename T> struct dl_op_has_warp_reduce<dl_max<T>> {
    static constexpr bool value = sizeof(T) == 8 || dl_limits<T>::is_integer;
};

/* Min and max are idempotent: warp scans and reductions skip their lane masks (warp.cuh). */
template <typename T> struct dl_op_idempotent<dl_min<T>> {
    static constexpr bool value = true;
};
template <typename T> struct dl_op_idempotent<dl_max<T>> {
    static constexpr bool value = true;
};

/* Whether a left-fold (deterministic) look-back changes anything for T and Op: only
 * float sums are not associative. */
template <typename T, typename Op> struct dl_fold_order_matters {
    static constexpr bool value = false;
};
template <> struct dl_fold_order_matters<float, dl_sum<float>> {
    static constexpr bool value = true;
};
template <> struct dl_fold_order_matters<double, dl_sum<double>> {
    static constexpr bool value = true;
};

/* Calls LAUNCHER::template run<T, Op>(args...) for (type, op); returns
 * cudaErrorInvalidValue for values outside the enums (the host layer checks them first). */
template <typename LAUNCHER, typename... ARGS>
static int dl_dispatch(dlscan_type type, dlscan_op op, ARGS... args)
{
#define DL_DISPATCH_OPS(SUM_T, T)                                                              \
    switch (op) {                                                                              \
    case DLSCAN_SUM: return LAUNCHER::template run<SUM_T, dl_sum<SUM_T>>(args...);             \
    case DLSCAN_MIN: return LAUNCHER::template run<T, dl_min<T>>(args...);                     \
    case DLSCAN_MAX: return LAUNCHER::template run<T, dl_max<T>>(args...);                     \
    default: return (int)cudaErrorInvalidValue;                                                \
    }
    switch (type) {
    case DLSCAN_INT32: DL_DISPATCH_OPS(uint32_t, int32_t)
    case DLSCAN_UINT32: DL_DISPATCH_OPS(uint32_t, uint32_t)
    case DLSCAN_INT64: DL_DISPATCH_OPS(uint64_t, int64_t)
    case DLSCAN_UINT64: DL_DISPATCH_OPS(uint64_t, uint64_t)
    case DLSCAN_FLOAT32: DL_DISPATCH_OPS(float, float)
    case DLSCAN_FLOAT64: DL_DISPATCH_OPS(double, double)
    default: return (int)cudaErrorInvalidValue;
    }
#undef DL_DISPATCH_OPS
}

#endif /* DLSCAN_OPS_CUH */
