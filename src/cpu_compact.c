/*
 * cpu_compact.c: stream compaction on a CPU handle: select_flagged, select_if, unique,
 * run-length encode and reduce-by-key on the same protocol as the CPU scan
 * (cpu_engine.c) and the GPU's compaction (device/compact_kernel.cu), with the same
 * carried values:
 *   select, unique       lo = count of kept items;
 *   run-length encode    lo = heads, hi = position of the last head, under (sum, max);
 *   reduce-by-key        lo = heads, hi = bits of the open run's aggregate (segmented).
 * A tile first copies its input to the worker's scratch: in place, a later tile may write
 * its outputs over this tile's input as soon as this tile has published its aggregate. In
 * place, an item whose output index is its input index is not written again: every write
 * then goes to a lower index, so the item before a tile, which unique, run-length and
 * by-key read from the input, is only ever written by that tile or a later one, after it
 * was read (ordered by the descriptors' release and acquire).
 */
#include <string.h>

#include "cpu_compact.h"
#include "cpu_engine.h"

static dl_bits dl_count_combine(dl_bits earlier, dl_bits later)
{
    const dl_bits sum = {earlier.lo + later.lo, 0};
    return sum;
}

static dl_bits dl_runs_combine(dl_bits earlier, dl_bits later)
{
    const dl_bits runs = {earlier.lo + later.lo, earlier.hi > later.hi ? earlier.hi : later.hi};
    return runs;
}

/* The bits of an item of `size` bytes (little-endian: the low bytes come first). */
static uint64_t dl_item_bits(const char *p, size_t size)
{
    uint64_t bits = 0;
    memcpy(&bits, p, size);
    return bits;
}

#define DL_COMPARE(T, item, operand_bits, predicate)                                              \
    do {                                                                                          \
        T x, operand;                                                                             \
        memcpy(&x, item, sizeof x);                                                               \
        memcpy(&operand, &(operand_bits), sizeof operand);                                        \
        switch (predicate) {                                                                      \
        case DLSCAN_LESS: return x < operand;                                                     \
        case DLSCAN_LESS_EQUAL: return x <= operand;                                              \
        case DLSCAN_GREATER: return x > operand;                                                  \
        case DLSCAN_GREATER_EQUAL: return x >= operand;                                           \
        case DLSCAN_EQUAL: return x == operand;                                                   \
        case DLSCAN_NOT_EQUAL: return x != operand;                                               \
        default: return x != (T)0;                                                                \
        }                                                                                         \
    } while (0)

static int dl_cpu_select_if_keeps(const dl_cpu_job *job, const char *item)
{
    switch (job->type) {
    case DLSCAN_INT32: DL_COMPARE(int32_t, item, job->operand_bits, job->predicate);
    case DLSCAN_UINT32: DL_COMPARE(uint32_t, item, job->operand_bits, job->predicate);
    case DLSCAN_INT64: DL_COMPARE(int64_t, item, job->operand_bits, job->predicate);
    case DLSCAN_UINT64: DL_COMPARE(uint64_t, item, job->operand_bits, job->predicate);
    case DLSCAN_FLOAT32: DL_COMPARE(float, item, job->operand_bits, job->predicate);
    case DLSCAN_FLOAT64: DL_COMPARE(double, item, job->operand_bits, job->predicate);
    default: return 0; /* compaction takes the six types above (dl_check_compact_type) */
    }
}

/* Does the tile's item i (copied to `items`) stay (selects) or start a run (the others)?
 * `before` is the bits of the item before the tile. */
static int dl_cpu_kept(const dl_cpu_job *job, const char *items, size_t first, size_t i,
                       uint64_t before)
{
    const char *item = items + i * job->item_size;
    switch (job->kind) {
    case DL_COMPACT_SELECT_FLAGGED: return job->in2[first + i] != 0;
    case DL_COMPACT_SELECT_IF: return dl_cpu_select_if_keeps(job, item);
    default:
        if (first + i == 0)
            return 1;
        return dl_item_bits(item, job->item_size) !=
               (i ? dl_item_bits(item - job->item_size, job->item_size) : before);
    }
}

static dl_bits dl_cpu_contribution(const dl_cpu_job *job, const char *values, size_t first,
                                   size_t i, int kept)
{
    dl_bits c = {(uint64_t)kept, 0};
    if (job->kind == DL_COMPACT_RUN_LENGTH)
        c.hi = kept ? first + i : 0;
    else if (job->kind == DL_COMPACT_REDUCE_BY_KEY)
        c.hi = dl_item_bits(values + i * job->value_size, job->value_size);
    return c;
}

static void dl_cpu_compact_tile(dl_cpu_worker *w, uint32_t tile)
{
    const dl_cpu_job *job = w->job;
    const dl_combine_fn combine = job->lookback.combine;
    const size_t first = (size_t)tile * job->tile_items;
    const size_t count = job->n - first < job->tile_items ? job->n - first : job->tile_items;
    const size_t size = job->item_size;
    char *items = w->scratch;
    char *values = items + job->tile_items * sizeof(uint64_t);

    /* The input, before anything is published. */
    memcpy(items, job->in + first * size, count * size);
    if (job->kind == DL_COMPACT_REDUCE_BY_KEY)
        memcpy(values, job->in2 + first * job->value_size, count * job->value_size);
    const int selects = job->kind == DL_COMPACT_SELECT_FLAGGED || job->kind == DL_COMPACT_SELECT_IF;
    const uint64_t before = tile > 0 && !selects ? dl_item_bits(job->in + (first - 1) * size, size) : 0;
    const int in_place = job->out == job->in;

    dl_bits aggregate = job->lookback.identity;
    for (size_t i = 0; i < count; ++i)
        aggregate = combine(aggregate,
                            dl_cpu_contribution(job, values, first, i,
                                                dl_cpu_kept(job, items, first, i, before)));
    const dl_bits prefix = dl_cpu_tile_prefix(w, tile, aggregate);
    const dl_bits end = combine(prefix, aggregate);

    dl_bits running = prefix;
    for (size_t i = 0; i < count; ++i) {
        const int kept = dl_cpu_kept(job, items, first, i, before);
        const uint64_t k = running.lo; /* kept items, or heads, before item i */
        if (kept) {
            if (!in_place || k != first + i)
                memcpy(job->out + k * size, items + i * size, size);
            if (k > 0 && job->kind == DL_COMPACT_RUN_LENGTH)
                ((size_t *)(void *)job->out2)[k - 1] = first + i - running.hi;
            if (k > 0 && job->kind == DL_COMPACT_REDUCE_BY_KEY)
                memcpy(job->out2 + (k - 1) * job->value_size, &running.hi, job->value_size);
        }
        running = combine(running, dl_cpu_contribution(job, values, first, i, kept));
    }
    if (tile + 1 == job->tiles) { /* the last run and the count */
        if (job->kind == DL_COMPACT_RUN_LENGTH)
            ((size_t *)(void *)job->out2)[end.lo - 1] = job->n - end.hi;
        if (job->kind == DL_COMPACT_REDUCE_BY_KEY)
            memcpy(job->out2 + (end.lo - 1) * job->value_size, &end.hi, job->value_size);
        *job->num_out = (size_t)end.lo;
    }
}

dlscan_status dl_cpu_compact(dlscan_handle_t h, const dl_compact_request *r)
{
    if (r->n == 0) {
        *r->num_out = 0;
        return DLSCAN_SUCCESS;
    }
    dl_cpu_job job = {
        .work_tile = dl_cpu_compact_tile,
        .in = r->in,
        .in2 = r->kind == DL_COMPACT_SELECT_FLAGGED ? (const char *)r->flags : r->values_in,
        .out = r->out,
        .out2 = r->out2,
        .num_out = r->num_out,
        .n = r->n,
        .item_size = dl_type_size(r->type),
        .value_size = r->kind == DL_COMPACT_REDUCE_BY_KEY ? dl_type_size(r->value_type) : 0,
        .type = r->type,
        .kind = r->kind,
        .predicate = r->predicate,
        .operand_bits = r->operand_bits,
    };
    job.lookback.words = dl_compact_words_per_tile(r->kind);
    job.lookback.identity = (dl_bits){0, 0};
    if (r->kind == DL_COMPACT_RUN_LENGTH) {
        job.lookback.combine = dl_runs_combine;
    } else if (r->kind == DL_COMPACT_REDUCE_BY_KEY) {
        job.ops = dl_cpu_ops_for(r->value_type, r->op);
        job.lookback.combine = job.ops->segmented;
        job.lookback.identity.hi = dl_identity_bits(r->value_type, r->op);
    } else {
        job.lookback.combine = dl_count_combine;
    }
    job.seed = job.lookback.identity;
    dl_cpu_run(h, &job);
    return DLSCAN_SUCCESS;
}
