/*
 * ops.cuh: the scan operators for device code (sum, min, max with their identities and
 * traits; the segmented operator over them), the conversions of items into a scan's accumulator
 * and of its results into the output type, rows of lanes (a narrow array's columns as one
 * value, combined lane by lane), and the dispatch from dlscan's enums to a kernel
 * instantiated over them.
 *
 * Signed integer sums run as unsigned sums of the same bits: two's-complement wrap-around
 * without undefined behaviour, and one kernel fewer per type.
 */
#ifndef DLSCAN_OPS_CUH
#define DLSCAN_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "dlscan.h"
#include "launch.h"
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
 * key (dl_double_key): of two equal zeros, it returns +0 (dlscan.h leaves which one open), and
 * any NaN makes the result a NaN. */
template <bool MAX, typename T> __device__ __forceinline__ T dl_redux(T v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (!dl_limits<T>::is_integer) {
        static_assert(sizeof(T) == 8, "float64 only: float32 keeps its tree (dl_op_has_warp_reduce)");
        /* A NaN wins (dlscan.h): its key is the extreme the reduction picks, INT64_MAX, or
         * INT64_MIN + 1, the key of the NaN 0xffffffffffffffff (INT64_MIN itself would come
         * back as -0). */
        const int64_t key = v != v ? (MAX ? INT64_MAX : INT64_MIN + 1) : dl_double_key(v);
        return dl_double_from_key(dl_redux<MAX>(key));
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

/* Each operator combines (earlier, later). Min and max of floats propagate NaN, as NumPy's
 * and PyTorch's do (dlscan.h): a NaN `b` wins by `b != b`, a NaN `a` by losing every
 * comparison; for integers `b != b` is false and compiles away. For float64 that is a second
 * comparison (DSETP) an operation, which costs these scans about 5% on the H200; testing the
 * bits with integer instructions instead cost about 17% (bench/NOTES.md, "NaN in min and
 * max"). */
template <typename T> struct dl_sum {
    __device__ static T identity() { return dl_sum_identity<T>(); }
    __device__ T operator()(T a, T b) const { return a + b; }
};
template <typename T> struct dl_min {
    __device__ static T identity() { return dl_limits<T>::highest(); }
    __device__ T operator()(T a, T b) const { return b < a || b != b ? b : a; }
    __device__ static T warp_reduce(T v) { return dl_redux<false>(v); } /* not float32 */
};
template <typename T> struct dl_max {
    __device__ static T identity() { return dl_limits<T>::lowest(); }
    __device__ T operator()(T a, T b) const { return a < b || b != b ? b : a; }
    __device__ static T warp_reduce(T v) { return dl_redux<true>(v); } /* not float32 */
};
/* float32: min.NaN and max.NaN (sm_80 on), one instruction (FMNMX) where the comparisons and
 * select are several in a row on the scan's critical path (bench/NOTES.md, "Min and max:
 * redux.sync and FMNMX"). A NaN in gives the canonical NaN; of two equal zeros, either may
 * come out (dlscan.h). */
template <> struct dl_min<float> {
    __device__ static float identity() { return dl_limits<float>::highest(); }
    __device__ float operator()(float a, float b) const
    {
        float r;
        asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
};
template <> struct dl_max<float> {
    __device__ static float identity() { return dl_limits<float>::lowest(); }
    __device__ float operator()(float a, float b) const
    {
        float r;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
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

/* ---------------------------------------------------------------- segments */

/* A value of a segmented operator: the segment heads (first items of segments) among the items
 * it reduces, counted in H, and the reduction of its items from the last head on (of all of them
 * where it has none). Segmented scans count in 32 bits within a tile; reduce-by-key counts runs
 * over the whole input in 64. */
template <typename H, typename Y> struct dl_segment {
    H heads;
    Y value;
};

/* The segmented operator on Y's operator YOp: the later value where it holds a head, else the
 * two combined. Associative (it does not commute), and a left fold where YOp is one. */
template <typename H, typename Y, typename YOp> struct dl_segmented {
    __device__ static dl_segment<H, Y> identity() { return dl_segment<H, Y>{0, YOp::identity()}; }
    __device__ dl_segment<H, Y> operator()(dl_segment<H, Y> a, dl_segment<H, Y> b) const
    {
        return dl_segment<H, Y>{a.heads + b.heads, b.heads ? b.value : YOp()(a.value, b.value)};
    }
};
template <typename H> struct dl_fold_order_matters<dl_segment<H, float>, dl_segmented<H, float, dl_sum<float>>> {
    static constexpr bool value = true;
};
template <typename H> struct dl_fold_order_matters<dl_segment<H, double>, dl_segmented<H, double, dl_sum<double>>> {
    static constexpr bool value = true;
};

/* ---------------------------------------------------------------- conversions */

/* An item of IN as a value of the accumulator T, as C converts it; float16 and bfloat16
 * convert exactly to float. */
template <typename T, typename IN> struct dl_convert {
    __device__ static T widen(IN x) { return (T)x; }
};
template <typename T> struct dl_convert<T, __half> {
    __device__ static T widen(__half x) { return (T)__half2float(x); }
};
template <typename T> struct dl_convert<T, __nv_bfloat16> {
    __device__ static T widen(__nv_bfloat16 x) { return (T)__bfloat162float(x); }
};

template <typename T, typename IN> __device__ __forceinline__ T dl_widen(IN x)
{
    return dl_convert<T, IN>::widen(x);
}

/* A value of the accumulator T as the output type OUT: integers keep their low bytes, float
 * rounds to float16 or bfloat16 to nearest, ties to even. */
template <typename OUT> struct dl_round {
    template <typename T> __device__ static OUT from(T x) { return (OUT)x; }
};
template <> struct dl_round<__half> {
    __device__ static __half from(float x) { return __float2half_rn(x); }
};
template <> struct dl_round<__nv_bfloat16> {
    __device__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
};

template <typename OUT, typename T> __device__ __forceinline__ OUT dl_narrow(T x)
{
    return dl_round<OUT>::from(x);
}

/* ---------------------------------------------------------------- rows of lanes */

/* A row of M neighbouring columns' items as one value, combined lane by lane: the columns of an
 * [N, M] array whose rows are 8 or 16 bytes (policy.h, DL_AXIS_LANES_*) are then a plain scan of
 * its N rows, on the plain scan's kernel (scan_kernel.cu, dl_gpu_lanes_launch). */
template <typename Y, int M> struct dl_lanes {
    Y lane[M];
};

template <typename Y, int M> __device__ __forceinline__ dl_lanes<Y, M> dl_lanes_of(Y y)
{
    dl_lanes<Y, M> x;
#pragma unroll
    for (int k = 0; k < M; ++k)
        x.lane[k] = y;
    return x;
}

template <typename Y, typename YOp, int M> struct dl_lanewise {
    __device__ static dl_lanes<Y, M> identity() { return dl_lanes_of<Y, M>(YOp::identity()); }
    __device__ dl_lanes<Y, M> operator()(dl_lanes<Y, M> a, dl_lanes<Y, M> b) const
    {
#pragma unroll
        for (int k = 0; k < M; ++k)
            a.lane[k] = YOp()(a.lane[k], b.lane[k]);
        return a;
    }
};
template <typename Y, typename YOp, int M> struct dl_fold_order_matters<dl_lanes<Y, M>, dl_lanewise<Y, YOp, M>> {
    static constexpr bool value = dl_fold_order_matters<Y, YOp>::value;
};

/* A scan's seed as a value of T: from the init's bits (the low bytes of a 64-bit word, the host's
 * dl_acc_bits) or from the init in device memory, one item of OUT. A row of lanes takes the one
 * init in every lane. */
template <typename T, typename OUT> struct dl_seed_of {
    __device__ static T bits(uint64_t bits) { return dl_value_from_bits<T>(bits); }
    __device__ static T read(const void *init) { return dl_widen<T>(*static_cast<const OUT *>(init)); }
};
template <typename Y, int M> struct dl_seed_of<dl_lanes<Y, M>, dl_lanes<Y, M>> {
    __device__ static dl_lanes<Y, M> bits(uint64_t bits) { return dl_lanes_of<Y, M>(dl_value_from_bits<Y>(bits)); }
    __device__ static dl_lanes<Y, M> read(const void *init) { return dl_lanes_of<Y, M>(*static_cast<const Y *>(init)); }
};

/* ---------------------------------------------------------------- dispatch */

/* Whether two types are one: the launchers' test for a pair scanned into its own type. */
template <typename A, typename B> struct dl_same {
    static constexpr bool value = false;
};
template <typename A> struct dl_same<A, A> {
    static constexpr bool value = true;
};

/*
 * The build's subset: meson's only_types and only_ops (meson_options.txt) as bitmasks over
 * dlscan_type and dlscan_op (bit 1 << DLSCAN_INT32, ...), defined only where an option is
 * set; unset, everything is built. A call is built where every type it names (items and
 * output; compaction's items, or reduce-by-key's keys and values) is in only_types and its
 * operator, where it takes one, in only_ops. The dispatch below tests this with `if constexpr`
 * before each kernel, so a left-out kernel is never instantiated, and returns DL_NOT_BUILT
 * (launch.h) for the call. A kernel that serves several calls (int32 and uint32 sums) is
 * built where one of them is.
 */
#ifndef DL_ONLY_TYPES
#define DL_ONLY_TYPES (~0u)
#endif
#ifndef DL_ONLY_OPS
#define DL_ONLY_OPS (~0u)
#endif

static constexpr bool dl_type_built(dlscan_type type) { return (DL_ONLY_TYPES) >> type & 1u; }

static constexpr bool dl_built(dlscan_type in, dlscan_type out, dlscan_op op)
{
    return dl_type_built(in) && dl_type_built(out) && ((DL_ONLY_OPS) >> op & 1u);
}

/* Calls LAUNCHER::template run<X>(args...) for items of `type`, one of compaction's six 32-
 * and 64-bit types, as its C type X; DL_NOT_BUILT where the build left the type out;
 * cudaErrorInvalidValue for other values (the host layer checks them first). */
template <typename LAUNCHER, typename... ARGS>
static int dl_dispatch_item(dlscan_type type, ARGS... args)
{
#define DL_DISPATCH_ITEM(TYPE, X)                                                              \
    case TYPE:                                                                                 \
        if constexpr (dl_type_built(TYPE))                                                     \
            return LAUNCHER::template run<X>(args...);                                         \
        else                                                                                   \
            return DL_NOT_BUILT;
    switch (type) {
        DL_DISPATCH_ITEM(DLSCAN_INT32, int32_t)
        DL_DISPATCH_ITEM(DLSCAN_UINT32, uint32_t)
        DL_DISPATCH_ITEM(DLSCAN_INT64, int64_t)
        DL_DISPATCH_ITEM(DLSCAN_UINT64, uint64_t)
        DL_DISPATCH_ITEM(DLSCAN_FLOAT32, float)
        DL_DISPATCH_ITEM(DLSCAN_FLOAT64, double)
    default: return (int)cudaErrorInvalidValue;
    }
#undef DL_DISPATCH_ITEM
}

/* Calls LAUNCHER::template run<T, Op>(args...) for (type, op), where the build has them
 * (DL_NOT_BUILT otherwise); returns cudaErrorInvalidValue for values outside the enums.
 * Reduce-by-key's values: the six 32- and 64-bit types. */
template <typename LAUNCHER, typename... ARGS>
static int dl_dispatch(dlscan_type type, dlscan_op op, ARGS... args)
{
#define DL_DISPATCH_RUN(TYPE, OP, T, Op)                                                       \
    if constexpr (dl_built(TYPE, TYPE, OP))                                                    \
        return LAUNCHER::template run<T, Op>(args...);                                         \
    else                                                                                       \
        return DL_NOT_BUILT;
#define DL_DISPATCH_OPS(TYPE, SUM_T, T)                                                        \
    case TYPE:                                                                                 \
        switch (op) {                                                                          \
        case DLSCAN_SUM: DL_DISPATCH_RUN(TYPE, DLSCAN_SUM, SUM_T, dl_sum<SUM_T>)               \
        case DLSCAN_MIN: DL_DISPATCH_RUN(TYPE, DLSCAN_MIN, T, dl_min<T>)                       \
        case DLSCAN_MAX: DL_DISPATCH_RUN(TYPE, DLSCAN_MAX, T, dl_max<T>)                       \
        default: return (int)cudaErrorInvalidValue;                                            \
        }
    switch (type) {
        DL_DISPATCH_OPS(DLSCAN_INT32, uint32_t, int32_t)
        DL_DISPATCH_OPS(DLSCAN_UINT32, uint32_t, uint32_t)
        DL_DISPATCH_OPS(DLSCAN_INT64, uint64_t, int64_t)
        DL_DISPATCH_OPS(DLSCAN_UINT64, uint64_t, uint64_t)
        DL_DISPATCH_OPS(DLSCAN_FLOAT32, float, float)
        DL_DISPATCH_OPS(DLSCAN_FLOAT64, double, double)
    default: return (int)cudaErrorInvalidValue;
    }
#undef DL_DISPATCH_OPS
#undef DL_DISPATCH_RUN
}

/* What dl_dispatch_pair returns for a pair of types it has no kernel for. */
#define DL_NO_PAIR (-1)

/* Calls LAUNCHER::template run<IN, T, OUT, Op>(args...) for a scan of IN_TYPE into OUT_TYPE,
 * where the build has it (DL_NOT_BUILT otherwise): a sum reads SUM_IN, accumulates in SUM_T
 * and writes SUM_OUT; min and max read IN, accumulate in T and write OUT. */
template <typename LAUNCHER, dlscan_type IN_TYPE, dlscan_type OUT_TYPE, typename SUM_IN, typename SUM_T,
          typename SUM_OUT, typename IN, typename T, typename OUT, typename... ARGS>
static int dl_dispatch_op(dlscan_op op, ARGS... args)
{
    switch (op) {
    case DLSCAN_SUM:
        if constexpr (dl_built(IN_TYPE, OUT_TYPE, DLSCAN_SUM))
            return LAUNCHER::template run<SUM_IN, SUM_T, SUM_OUT, dl_sum<SUM_T>>(args...);
        else
            return DL_NOT_BUILT;
    case DLSCAN_MIN:
        if constexpr (dl_built(IN_TYPE, OUT_TYPE, DLSCAN_MIN))
            return LAUNCHER::template run<IN, T, OUT, dl_min<T>>(args...);
        else
            return DL_NOT_BUILT;
    case DLSCAN_MAX:
        if constexpr (dl_built(IN_TYPE, OUT_TYPE, DLSCAN_MAX))
            return LAUNCHER::template run<IN, T, OUT, dl_max<T>>(args...);
        else
            return DL_NOT_BUILT;
    default: return (int)cudaErrorInvalidValue;
    }
}

/*
 * The scan's dispatch, over the pairs of input and output types dlscan.h lists: calls
 * LAUNCHER::template run<IN, T, OUT, Op>(args...), where IN is the items' type, T the
 * accumulator, OUT the output type. Instantiations are shared where the code is the same:
 * - an integer sum's result does not depend on the output's signedness (int8 into int32 and
 *   into uint32 run one kernel), nor, written back into 8 or 16 bits, on the input's;
 * - a 32- or 64-bit integer into the other signedness of its own size is the same bits.
 * Returns DL_NO_PAIR for other pairs, DL_NOT_BUILT for a pair or operator the build left out.
 */
template <typename LAUNCHER, typename... ARGS>
static int dl_dispatch_pair(dlscan_type in, dlscan_type out, dlscan_op op, ARGS... args)
{
/* A case of `in` for the scan of IN_TYPE into OUT_TYPE, with dl_dispatch_op's C types. */
#define DL_PAIR(IN_TYPE, OUT_TYPE, ...)                                                          \
    case IN_TYPE: return dl_dispatch_op<LAUNCHER, IN_TYPE, OUT_TYPE, __VA_ARGS__>(op, args...);
/* Integers into the 32- or 64-bit integer OUT_T (sums in SUM_T). */
#define DL_INTEGER_INTO(OUT_TYPE, SUM_T, OUT_T)                                                  \
    DL_PAIR(DLSCAN_INT8, OUT_TYPE, int8_t, SUM_T, SUM_T, int8_t, OUT_T, OUT_T)                   \
    DL_PAIR(DLSCAN_UINT8, OUT_TYPE, uint8_t, SUM_T, SUM_T, uint8_t, OUT_T, OUT_T)                \
    DL_PAIR(DLSCAN_INT16, OUT_TYPE, int16_t, SUM_T, SUM_T, int16_t, OUT_T, OUT_T)                \
    DL_PAIR(DLSCAN_UINT16, OUT_TYPE, uint16_t, SUM_T, SUM_T, uint16_t, OUT_T, OUT_T)
/* OUT_T into itself, or from its other signedness (the same bits). */
#define DL_OWN(OUT_TYPE, OTHER_IN, SUM_T, OUT_T)                                                 \
    DL_PAIR(OUT_TYPE, OUT_TYPE, SUM_T, SUM_T, SUM_T, OUT_T, OUT_T, OUT_T)                        \
    DL_PAIR(OTHER_IN, OUT_TYPE, SUM_T, SUM_T, SUM_T, OUT_T, OUT_T, OUT_T)
/* An 8- or 16-bit integer into itself: accumulated in 32 bits (min and max as OUT_T's
 * signedness), its outputs cut back to its bits. */
#define DL_NARROW_OWN(OUT_TYPE, SUM_X, X, T)                                                     \
    case OUT_TYPE:                                                                              \
        switch (in) {                                                                           \
            DL_PAIR(OUT_TYPE, OUT_TYPE, SUM_X, uint32_t, SUM_X, X, T, X)                         \
        default: return DL_NO_PAIR;                                                             \
        }
    switch (out) {
    case DLSCAN_INT32:
        switch (in) {
            DL_OWN(DLSCAN_INT32, DLSCAN_UINT32, uint32_t, int32_t)
            DL_INTEGER_INTO(DLSCAN_INT32, uint32_t, int32_t)
        default: return DL_NO_PAIR;
        }
    case DLSCAN_UINT32:
        switch (in) {
            DL_OWN(DLSCAN_UINT32, DLSCAN_INT32, uint32_t, uint32_t)
            DL_INTEGER_INTO(DLSCAN_UINT32, uint32_t, uint32_t)
        default: return DL_NO_PAIR;
        }
    case DLSCAN_INT64:
        switch (in) {
            DL_OWN(DLSCAN_INT64, DLSCAN_UINT64, uint64_t, int64_t)
            DL_INTEGER_INTO(DLSCAN_INT64, uint64_t, int64_t)
            DL_PAIR(DLSCAN_INT32, DLSCAN_INT64, int32_t, uint64_t, uint64_t, int32_t, int64_t, int64_t)
            DL_PAIR(DLSCAN_UINT32, DLSCAN_INT64, uint32_t, uint64_t, uint64_t, uint32_t, int64_t, int64_t)
        default: return DL_NO_PAIR;
        }
    case DLSCAN_UINT64:
        switch (in) {
            DL_OWN(DLSCAN_UINT64, DLSCAN_INT64, uint64_t, uint64_t)
            DL_INTEGER_INTO(DLSCAN_UINT64, uint64_t, uint64_t)
            DL_PAIR(DLSCAN_INT32, DLSCAN_UINT64, int32_t, uint64_t, uint64_t, int32_t, uint64_t, uint64_t)
            DL_PAIR(DLSCAN_UINT32, DLSCAN_UINT64, uint32_t, uint64_t, uint64_t, uint32_t, uint64_t, uint64_t)
        default: return DL_NO_PAIR;
        }
    case DLSCAN_FLOAT32:
        switch (in) {
            DL_PAIR(DLSCAN_FLOAT32, DLSCAN_FLOAT32, float, float, float, float, float, float)
            DL_PAIR(DLSCAN_FLOAT16, DLSCAN_FLOAT32, __half, float, float, __half, float, float)
            DL_PAIR(DLSCAN_BFLOAT16, DLSCAN_FLOAT32, __nv_bfloat16, float, float, __nv_bfloat16, float, float)
        default: return DL_NO_PAIR;
        }
    case DLSCAN_FLOAT64:
        switch (in) {
            DL_PAIR(DLSCAN_FLOAT64, DLSCAN_FLOAT64, double, double, double, double, double, double)
            DL_PAIR(DLSCAN_FLOAT32, DLSCAN_FLOAT64, float, double, double, float, double, double)
            DL_PAIR(DLSCAN_INT32, DLSCAN_FLOAT64, int32_t, double, double, int32_t, double, double)
        default: return DL_NO_PAIR;
        }
    DL_NARROW_OWN(DLSCAN_INT8, uint8_t, int8_t, int32_t)
    DL_NARROW_OWN(DLSCAN_UINT8, uint8_t, uint8_t, uint32_t)
    DL_NARROW_OWN(DLSCAN_INT16, uint16_t, int16_t, int32_t)
    DL_NARROW_OWN(DLSCAN_UINT16, uint16_t, uint16_t, uint32_t)
    case DLSCAN_FLOAT16:
        switch (in) {
            DL_PAIR(DLSCAN_FLOAT16, DLSCAN_FLOAT16, __half, float, __half, __half, float, __half)
        default: return DL_NO_PAIR;
        }
    case DLSCAN_BFLOAT16:
        switch (in) {
            DL_PAIR(DLSCAN_BFLOAT16, DLSCAN_BFLOAT16, __nv_bfloat16, float, __nv_bfloat16, __nv_bfloat16, float, __nv_bfloat16)
        default: return DL_NO_PAIR;
        }
    default: return DL_NO_PAIR;
    }
#undef DL_PAIR
#undef DL_INTEGER_INTO
#undef DL_OWN
#undef DL_NARROW_OWN
}

#endif /* DLSCAN_OPS_CUH */
