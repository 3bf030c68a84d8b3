/*
 * reduce_kernel.cu: dlscan_reduce's kernel and its launcher: the total of n items, and nothing
 * else written (one read of each item).
 *
 * The items are cut into `tiles` chunks of dl_reduce_chunk_items (launch.h) each, one block per
 * chunk, the grid the policy row's (a few blocks per SM, all resident). A block takes its chunk
 * from the handle's counter in ticket order; each thread folds its 16-byte vectors of the chunk
 * into DL_REDUCE_CHAINS accumulators (the items before the first 16-byte boundary and after the
 * last one item by item; loads that keep the lines in L2, where a scan across ranks reads the
 * same slice next: a slice that fits is read from memory once), the warps reduce their threads in a fixed tree, and the block takes its
 * chunk's prefix from the look-back (tile.cuh, dl_tile_warp_prefix): the chunks are one scan's
 * tiles of the protocol, so the last chunk's last warp ends with the total. The partition depends
 * only on n and the grid, so with the left fold (DLSCAN_OPTION_DETERMINISTIC) a float sum is the
 * same from run to run.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "launch.h"
#include "ops.cuh"
#include "tile.cuh"

template <typename IN, typename T, typename OUT, typename Op, bool LEFT_FOLD>
__global__ void __launch_bounds__(DL_REDUCE_THREADS, DL_REDUCE_BLOCKS_PER_SM)
    dl_reduce_kernel(const dl_scan_params p)
{
    constexpr int WARPS = DL_REDUCE_THREADS / 32, CHAINS = DL_REDUCE_CHAINS;
    constexpr int per_vector = 16 / (int)sizeof(IN);
    __shared__ dl_tile_shared<T, WARPS, LEFT_FOLD> sh;
    const dl_probe probe(p.control);
    dl_grid_dependency();
    uint32_t chunk, epoch;
    dl_tile_take(p.control, probe, sh, &chunk, &epoch);

    /* The chunk [lo, hi), and within it [vlo, vhi), the items in whole 16-byte vectors. */
    const IN *in = static_cast<const IN *>(p.in);
    const uint64_t per = dl_reduce_chunk_items(p.n, p.tiles);
    const uint64_t lo = (uint64_t)chunk * per < p.n ? (uint64_t)chunk * per : p.n;
    const uint64_t hi = p.n - lo < per ? p.n : lo + per;
    const uint64_t skew = (uintptr_t)in % 16 / sizeof(IN); /* items before in's vector boundary */
    uint64_t vlo = lo + (per_vector - (lo + skew) % per_vector) % per_vector;
    vlo = vlo < hi ? vlo : hi;
    uint64_t vhi = hi - (hi + skew) % per_vector;
    vhi = vhi > vlo ? vhi : vlo;

    T acc[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
        acc[c] = Op::identity();
    const uint64_t vectors = (vhi - vlo) / per_vector;
    const uint4 *v = reinterpret_cast<const uint4 *>(in + vlo);
    constexpr uint64_t round = (uint64_t)DL_REDUCE_THREADS * CHAINS;
    uint64_t j = threadIdx.x;
    for (; j + (CHAINS - 1) * DL_REDUCE_THREADS < vectors; j += round) {
        dl_row_items<IN, per_vector> u[CHAINS];
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            u[c].raw = __ldg(v + j + c * DL_REDUCE_THREADS);
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
#pragma unroll
            for (int k = 0; k < per_vector; ++k)
                acc[c] = Op()(acc[c], dl_widen<T>(u[c].item[k]));
    }
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) {
        if (j + c * DL_REDUCE_THREADS < vectors) {
            dl_row_items<IN, per_vector> u;
            u.raw = __ldg(v + j + c * DL_REDUCE_THREADS);
#pragma unroll
            for (int k = 0; k < per_vector; ++k)
                acc[c] = Op()(acc[c], dl_widen<T>(u.item[k]));
        }
    }
    /* The items outside whole vectors, fewer than per_vector at each end. */
    const uint64_t head = vlo - lo;
    if (threadIdx.x < head)
        acc[0] = Op()(acc[0], dl_widen<T>(in[lo + threadIdx.x]));
    else if (threadIdx.x - head < hi - vhi)
        acc[0] = Op()(acc[0], dl_widen<T>(in[vhi + threadIdx.x - head]));
    T mine = acc[0];
#pragma unroll
    for (int c = 1; c < CHAINS; ++c)
        mine = Op()(mine, acc[c]);

    const T warp_total = dl_warp_reduce<T, Op>(mine);
    const T seed = p.init && chunk == 0 ? dl_widen<T>(*static_cast<const OUT *>(p.init))
                                        : dl_value_from_bits<T>(p.seed_bits);
    const T before = dl_tile_warp_prefix<T, Op, LEFT_FOLD, WARPS, false>(
        sh, warp_total, chunk, epoch, seed, p.descriptors, probe, false, Op::identity());
    if (chunk == p.tiles - 1 && threadIdx.x == DL_REDUCE_THREADS - 32)
        *static_cast<OUT *>(p.total) = dl_narrow<OUT>(Op()(before, warp_total));
    dl_epoch_finish(p.control, epoch, sh.ticket_base, p.descriptors, p.descriptor_words);
}

/* The kernel for IN, T, OUT and Op, tree or left fold (for float sums). */
struct dl_reduce_launcher {
    template <typename IN, typename T, typename OUT, typename Op>
    static int run(const dl_scan_params *p, int left_fold, cudaStream_t stream)
    {
        constexpr bool fold_matters = dl_fold_order_matters<T, Op>::value;
        return dl_launch(left_fold && fold_matters ? dl_reduce_kernel<IN, T, OUT, Op, fold_matters>
                                                   : dl_reduce_kernel<IN, T, OUT, Op, false>,
                         *p, dim3(p->tiles), dim3(DL_REDUCE_THREADS), 0, p->dependent_launch, stream);
    }
};

extern "C" int dl_gpu_reduce_launch(const dl_scan_params *params, dlscan_type in_type, dlscan_type type,
                                    dlscan_op op, int left_fold, cudaStream_t stream)
{
    const int error = dl_dispatch_pair<dl_reduce_launcher>(in_type, type, op, params, left_fold, stream);
    return error == DL_NO_PAIR ? (int)cudaErrorInvalidValue : error;
}
