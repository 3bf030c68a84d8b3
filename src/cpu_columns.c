/*
 * cpu_columns.c: scans along an axis of stride > 1 (columns) on a CPU handle. The n items are
 * arrays [outer][axis_length][axis_stride], and scan (o, j) runs down column j of array o.
 * Rows (stride 1) are segmented scans instead (cpu_segment.c).
 *
 * The scans are independent, so no protocol is needed: they are cut into units of work, each
 * a run of consecutive scans (o, j) in the order of d_totals, which the handle's workers take
 * by ticket as they take tiles (cpu_engine.c). A unit walks the rows of its scans in memory
 * order, one array at a time, with one running accumulator per scan: each row's items widened
 * to the accumulator (where a type converts), stepped into the accumulators, the outputs
 * rounded from them; after the last row the accumulators are the totals. Each scan is a
 * sequential fold from the init, so float sums repeat exactly for any thread count.
 *
 * Memory: the worker's scratch (2 x tile items x 8 bytes), nothing allocated per call: a row's
 * items as accumulator values in the first half, the accumulators in the second; a unit holds
 * at most tile-items scans. A unit has about a tile's items (ceil(tile / axis_length) scans),
 * so there are no more units than the call has tiles, and at least DL_CPU_COLUMNS_WIDTH scans
 * where the rows are that wide, so that fewer neighbouring units write one cache line.
 */
#include "cpu_columns.h"

#include "cpu_engine.h"

/* The fewest scans of a unit, where a row and a tile have that many: a 64-byte line of 4-byte
 * items. */
#define DL_CPU_COLUMNS_WIDTH 16

/* Scans (o, j) .. (o, j + width - 1) of array o: their axis_length rows in memory order, then
 * their totals. */
static void dl_cpu_columns(dl_cpu_worker *w, size_t o, size_t j, size_t width)
{
    const dl_cpu_job *job = w->job;
    const size_t length = job->axis_length, stride = job->axis_stride;
    const size_t acc_size = dl_type_size(job->acc_type);
    const int converts = job->in_type != job->acc_type || job->type != job->acc_type;
    char *running = (char *)w->scratch + job->tile_items * sizeof(uint64_t);
    for (size_t i = 0; i < width; ++i)
        dl_cpu_narrow_bits(job->acc_type, job->acc_type, job->seed.lo, running + i * acc_size);
    for (size_t k = 0; k < length; ++k) {
        const size_t first = (o * length + k) * stride + j;
        const char *in = job->in + first * job->in_size;
        char *out = job->out + first * job->item_size;
        if (!converts) {
            job->ops->step(in, out, running, width, job->exclusive);
            continue;
        }
        dl_cpu_widen(job->in_type, job->acc_type, in, w->scratch, width);
        job->ops->step(w->scratch, w->scratch, running, width, job->exclusive);
        dl_cpu_narrow(job->acc_type, job->type, w->scratch, out, width);
    }
    if (job->totals)
        dl_cpu_narrow(job->acc_type, job->type, running,
                      job->totals + (o * stride + j) * job->item_size, width);
}

/* Unit `unit`: scans unit x unit_scans on, up to unit_scans of them, array by array. */
static void dl_cpu_columns_unit(dl_cpu_worker *w, uint32_t unit)
{
    const dl_cpu_job *job = w->job;
    const size_t stride = job->axis_stride, scans = job->n / job->axis_length;
    const size_t first = (size_t)unit * job->unit_scans;
    const size_t end = scans - first < job->unit_scans ? scans : first + job->unit_scans;
    for (size_t q = first; q < end;) {
        const size_t o = q / stride, j = q % stride;
        const size_t width = end - q < stride - j ? end - q : stride - j;
        dl_cpu_columns(w, o, j, width);
        q += width;
    }
}

dlscan_status dl_cpu_column_scan(dlscan_handle_t h, const dl_scan_request *r, uint64_t seed_bits)
{
    if (r->n == 0)
        return DLSCAN_SUCCESS;
    const dl_cpu_state *s = h->backend_state;
    const size_t tile = s->tile_items, length = r->axis_length, scans = r->n / length;
    /* At most a tile of scans, so that a unit's accumulators fit in the scratch. */
    size_t at_least = r->axis_stride < DL_CPU_COLUMNS_WIDTH ? r->axis_stride : DL_CPU_COLUMNS_WIDTH;
    at_least = at_least < tile ? at_least : tile;
    const size_t by_items = tile / length + (tile % length != 0);
    const size_t unit_scans = by_items > at_least ? by_items : at_least;
    dl_cpu_job job;
    dl_cpu_scan_job(&job, r, seed_bits, dl_cpu_columns_unit);
    job.axis_length = length;
    job.axis_stride = r->axis_stride;
    job.unit_scans = unit_scans;
    job.totals = r->totals;
    /* No more units than the call's tiles (r->tiles): ceil(scans / ceil(tile / length)) is at
     * most ceil(n / tile), which the checks keep within 32 bits. */
    job.tiles = (uint32_t)dl_tiles(scans, unit_scans);
    dl_cpu_run(h, &job);
    return DLSCAN_SUCCESS;
}
