/*
 * axis_kernel.cu: scans along an axis whose items lie apart (columns: axis_stride > 1) of the
 * built-in types and operators, in one kernel launch, one block per tile: columns.cuh's tile,
 * reading items of IN, scanning in T and writing OUT.
 *
 * One array of rows of 8 or 16 bytes of a type into itself ([N, 2] or [N, 4] of a 32-bit type,
 * [N, 2] of a 64-bit one) does not come here where the persistent kernel runs: gpu_backend.c
 * scans it as N rows of lanes on that kernel (scan_kernel.cu, dl_gpu_lanes_launch).
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "columns.cuh"
#include "launch.h"
#include "ops.cuh"
#include "tile.cuh"

/* What a column tile reads and writes (columns.cuh, ITEMS): the call's items, widened to T. */
template <typename IN, typename T, typename OUT, typename Op> struct dl_axis_items {
    typedef T value;
    typedef Op op;
    const IN *in;
    OUT *out;
    OUT *totals_out;
    bool totals;
    uint64_t seed_bits;
    __device__ T load(uint64_t i) const { return dl_widen<T>(in[i]); }
    __device__ void store(uint64_t i, T v) const { out[i] = dl_narrow<OUT>(v); }
    __device__ void total(uint64_t k, T v) const { totals_out[k] = dl_narrow<OUT>(v); }
    __device__ T seed() const { return dl_value_from_bits<T>(seed_bits); }
};

template <typename IN, typename T, typename OUT, typename Op, bool NARROW>
__global__ void __launch_bounds__(DL_AXIS_THREADS) dl_axis_kernel(const dl_axis_params p)
{
    const dl_axis_items<IN, T, OUT, Op> items = {static_cast<const IN *>(p.scan.in), static_cast<OUT *>(p.scan.out),
                                                 static_cast<OUT *>(p.totals), p.totals != nullptr, p.scan.seed_bits};
    dl_axis_tile<dl_axis_items<IN, T, OUT, Op>, NARROW>(p, items);
}

/* ---------------------------------------------------------------- launcher */

struct dl_axis_launcher {
    template <typename IN, typename T, typename OUT, typename Op>
    static int run(const dl_axis_params *p, cudaStream_t stream)
    {
        return dl_launch(p->shape.narrow ? dl_axis_kernel<IN, T, OUT, Op, true> : dl_axis_kernel<IN, T, OUT, Op, false>,
                         *p, dim3(p->scan.tiles), dim3(DL_AXIS_THREADS), 0, p->scan.dependent_launch, stream);
    }
};

extern "C" int dl_gpu_axis_launch(const dl_axis_params *params, dlscan_type in_type, dlscan_type type,
                                  dlscan_op op, cudaStream_t stream)
{
    const int error = dl_dispatch_pair<dl_axis_launcher>(in_type, type, op, params, stream);
    return error == DL_NO_PAIR ? (int)cudaErrorInvalidValue : error;
}
