/*
 * test_subset.cu: the kernels a build with a subset of them keeps (meson's only_types and
 * only_ops; device/ops.cuh, dl_built), checked on the host: the dispatch runs with launchers
 * that launch nothing, so no GPU is needed. This file is compiled as
 *   meson -Donly_types=int32,int8,float64 -Donly_ops=sum,max
 * compiles the library. Each call must reach its launcher exactly where all its types and its
 * operator are listed, and return DL_NOT_BUILT elsewhere (DL_NO_PAIR for a pair dlscan never
 * scans); the static_asserts in the launchers fail the build where the dispatch instantiates
 * a left-out kernel. Plain TAP output.
 */
#define DL_ONLY_TYPES ((1u << DLSCAN_INT32) | (1u << DLSCAN_INT8) | (1u << DLSCAN_FLOAT64))
#define DL_ONLY_OPS ((1u << DLSCAN_SUM) | (1u << DLSCAN_MAX))

#include <cuda_runtime.h>
#include <stdio.h>

#include <type_traits>

#include "ops.cuh"
extern "C" {
#include "internal.h" /* dl_pair_valid, dl_type_name, dl_op_name: the testing library's */
}

static int listed_type(int type) { return type == DLSCAN_INT32 || type == DLSCAN_INT8 || type == DLSCAN_FLOAT64; }
static int listed_op(int op) { return op == DLSCAN_SUM || op == DLSCAN_MAX; }

/* What the launchers return: a value no dispatch gives of its own. */
#define RAN 1000

/* A scan's launcher. The listed types run in these C types: int32 and int8 items (sums as
 * unsigned bits), accumulated in 32 bits or in double (int32 into float64). */
struct scan_probe {
    template <typename IN, typename T, typename OUT, typename Op> static int run(int unused)
    {
        (void)unused;
        static_assert(!std::is_same<Op, dl_min<T>>::value, "only_ops leaves min out");
        static_assert(sizeof(IN) != 2 && sizeof(OUT) != 2, "no 16-bit type is listed");
        static_assert(sizeof(T) == 4 ? std::is_integral<T>::value : std::is_same<T, double>::value,
                      "no float32 or 64-bit integer is listed");
        return RAN;
    }
};

/* Compaction's launchers: items of int32 or float64; reduce-by-key's values likewise. */
struct item_probe {
    template <typename X> static int run(int unused)
    {
        (void)unused;
        static_assert(std::is_same<X, int32_t>::value || std::is_same<X, double>::value,
                      "int32 and float64 are the compaction types listed");
        return RAN;
    }
};

struct value_probe {
    template <typename T, typename Op> static int run(int unused)
    {
        (void)unused;
        static_assert(!std::is_same<Op, dl_min<T>>::value, "only_ops leaves min out");
        static_assert(std::is_same<T, uint32_t>::value || std::is_same<T, int32_t>::value ||
                          std::is_same<T, double>::value,
                      "int32 and float64 are the value types listed");
        return RAN;
    }
};

static int tests;
static int failed;

static void ok(int pass, const char *what)
{
    printf("%s %d - %s\n", pass ? "ok" : "not ok", ++tests, what);
    failed += !pass;
}

int main(void)
{
    printf("TAP version 13\n1..4\n");

    int wrong = 0;
    for (int in = DLSCAN_INT32; in <= DLSCAN_BFLOAT16; ++in)
        for (int out = DLSCAN_INT32; out <= DLSCAN_BFLOAT16; ++out)
            for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op) {
                const int got = dl_dispatch_pair<scan_probe>((dlscan_type)in, (dlscan_type)out, (dlscan_op)op, 0);
                const int want = !dl_pair_valid((dlscan_type)in, (dlscan_type)out) ? DL_NO_PAIR
                                 : listed_type(in) && listed_type(out) && listed_op(op) ? RAN
                                                                                        : DL_NOT_BUILT;
                if (got != want) {
                    printf("# scan of %s into %s, %s: got %d, want %d\n", dl_type_name((dlscan_type)in),
                           dl_type_name((dlscan_type)out), dl_op_name((dlscan_op)op), got, want);
                    ++wrong;
                }
            }
    ok(!wrong, "scans: every pair and operator built or DL_NOT_BUILT as listed");

    wrong = 0;
    for (int type = DLSCAN_INT32; type <= DLSCAN_FLOAT64; ++type) {
        const int got = dl_dispatch_item<item_probe>((dlscan_type)type, 0);
        const int want = listed_type(type) ? RAN : DL_NOT_BUILT;
        if (got != want) {
            printf("# compaction of %s: got %d, want %d\n", dl_type_name((dlscan_type)type), got, want);
            ++wrong;
        }
    }
    ok(!wrong, "compaction: every item type built or DL_NOT_BUILT as listed");

    wrong = 0;
    for (int type = DLSCAN_INT32; type <= DLSCAN_FLOAT64; ++type)
        for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op) {
            const int got = dl_dispatch<value_probe>((dlscan_type)type, (dlscan_op)op, 0);
            const int want = listed_type(type) && listed_op(op) ? RAN : DL_NOT_BUILT;
            if (got != want) {
                printf("# reduce-by-key values of %s, %s: got %d, want %d\n", dl_type_name((dlscan_type)type),
                       dl_op_name((dlscan_op)op), got, want);
                ++wrong;
            }
        }
    ok(!wrong, "reduce-by-key: every value type and operator built or DL_NOT_BUILT as listed");

    ok(dl_dispatch_item<item_probe>((dlscan_type)12, 0) == (int)cudaErrorInvalidValue &&
           dl_dispatch<value_probe>(DLSCAN_INT32, (dlscan_op)3, 0) == (int)cudaErrorInvalidValue &&
           dl_dispatch_pair<scan_probe>(DLSCAN_INT32, DLSCAN_INT32, (dlscan_op)3, 0) == (int)cudaErrorInvalidValue,
       "values outside the enums stay cudaErrorInvalidValue");
    return failed != 0;
}
