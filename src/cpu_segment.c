/*
 * cpu_segment.c: segmented scans on a CPU handle, by key, over segment offsets or along rows
 * (a scan along an axis of stride 1: a segment every axis_length items), on the
 * protocol of the plain scan (cpu_engine.c) with the rule for segments (device/protocol.h,
 * "Segments"): a tile's value is the reduction of its items from its last segment head on, the
 * init folded in first, and a tile that holds a head publishes it as its inclusive prefix P at
 * once. A tile without a head continues the segment before it: it publishes its aggregate A and
 * looks back, as a plain scan's tile does. Only a tile whose first item is not a head needs the
 * look-back's prefix.
 *
 * A tile works in the worker's scratch: its items as accumulator values (where a type converts)
 * in the first half, a byte per item saying "a segment starts here" in the second.
 *
 * Rows leave each row's total in d_totals: the run of items that ends a row (ends where the
 * next row's head is, or ends the tile where a row ends with it) returns the row's inclusive
 * value from the scan of its items as they were read, which serves exclusive and in-place
 * scans alike; it is rounded to the output type as the outputs are.
 */
#include <string.h>

#include "cpu_engine.h"
#include "cpu_segment.h"

/* The first k <= count - 1 with offsets[k] >= position, or count where there is none. */
static size_t dl_offsets_lower_bound(const size_t *offsets, size_t count, size_t position)
{
    size_t low = 0, high = count;
    while (low < high) {
        const size_t middle = low + (high - low) / 2;
        if (offsets[middle] < position)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

/* head[i] = 1 where tile item i (item first + i of the call) starts a segment: item 0; with keys,
 * an item whose key differs from the one before; with offsets, every offset (the last one starts
 * the items after every segment); along rows, every multiple of the row's length. */
static void dl_cpu_segment_heads(const dl_cpu_job *job, size_t first, size_t count,
                                 unsigned char *head)
{
    if (job->axis_length) {
        const size_t length = job->axis_length, past = first % length;
        memset(head, 0, count);
        for (size_t i = past ? length - past : 0; i < count; i += length)
            head[i] = 1;
        return;
    }
    if (job->keys) {
        const size_t size = job->key_size;
        for (size_t i = 0; i < count; ++i) {
            const size_t g = first + i;
            head[i] = g == 0 || memcmp(job->keys + g * size, job->keys + (g - 1) * size, size) != 0;
        }
        return;
    }
    memset(head, 0, count);
    head[0] = first == 0;
    const size_t offsets = job->num_segments + 1;
    for (size_t k = dl_offsets_lower_bound(job->offsets, offsets, first);
         k < offsets && job->offsets[k] < first + count; ++k)
        head[job->offsets[k] - first] = 1;
}

/* Is item g of the call in a segment (and so written)? With keys and along rows every item is;
 * with offsets, those from offsets[0] up to offsets[num_segments]. */
static int dl_cpu_in_segment(const dl_cpu_job *job, size_t g)
{
    return !job->offsets || (job->offsets[0] <= g && g < job->offsets[job->num_segments]);
}

/* Along rows: where a run of items ends at item `end` of the call and a row ends there, the
 * run's last running value (`running`, an accumulator value) is that row's total. */
static void dl_cpu_row_total(const dl_cpu_job *job, size_t end, uint64_t running)
{
    if (end % job->axis_length == 0)
        dl_cpu_narrow_bits(job->acc_type, job->type, running,
                           job->totals + (end / job->axis_length - 1) * job->item_size);
}

static void dl_cpu_segment_tile(dl_cpu_worker *w, uint32_t tile)
{
    dl_cpu_job *job = w->job;
    const size_t first = (size_t)tile * job->tile_items;
    const size_t count = job->n - first < job->tile_items ? job->n - first : job->tile_items;
    const size_t acc_size = dl_type_size(job->acc_type);
    const int converts = job->in_type != job->acc_type || job->type != job->acc_type;
    const char *in = job->in + first * job->in_size;
    char *out = job->out + first * job->item_size;
    if (converts) {
        dl_cpu_widen(job->in_type, job->acc_type, in, w->scratch, count);
        in = w->scratch;
    }
    char *scanned = converts ? w->scratch : out;
    unsigned char *head = (unsigned char *)w->scratch + job->tile_items * sizeof(uint64_t);
    dl_cpu_segment_heads(job, first, count, head);

    /* The tile's value: from its last head on, the init first; all its items where it has none. */
    size_t last = count;
    while (last > 0 && !head[last - 1])
        --last;
    const int has_head = last > 0;
    const size_t from = has_head ? last - 1 : 0;
    dl_bits value = {job->ops->reduce(in + from * acc_size, count - from, job->lookback.identity.lo), 0};
    if (has_head)
        value = job->lookback.combine(job->seed, value);
    const dl_bits prefix = dl_cpu_segment_prefix(w, tile, value, has_head, !head[0]);

    /* Each run between heads scanned from the init (a head) or the prefix (the tile's first run). */
    size_t written_from = count, written_to = 0;
    for (size_t i = 0; i < count;) {
        size_t j = i + 1;
        while (j < count && !head[j])
            ++j;
        if (dl_cpu_in_segment(job, first + i)) {
            const uint64_t running = job->ops->scan(in + i * acc_size, scanned + i * acc_size, j - i,
                                                    head[i] ? job->seed.lo : prefix.lo, job->exclusive);
            if (job->totals)
                dl_cpu_row_total(job, first + j, running);
            written_from = written_from < i ? written_from : i;
            written_to = j;
        }
        i = j;
    }
    if (converts && written_from < written_to)
        dl_cpu_narrow(job->acc_type, job->type, scanned + written_from * acc_size,
                      out + written_from * job->item_size, written_to - written_from);
}

dlscan_status dl_cpu_check_offsets(dlscan_handle_t h, const dl_scan_request *r)
{
    const size_t *offsets = r->offsets;
    if (!offsets)
        return DLSCAN_SUCCESS;
    for (size_t k = 0; k < r->num_segments; ++k)
        if (offsets[k + 1] < offsets[k])
            return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                           "d_offsets[%zu] = %zu is less than d_offsets[%zu] = %zu: offsets "
                           "must rise",
                           k + 1, offsets[k + 1], k, offsets[k]);
    if (offsets[r->num_segments] > r->n)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "d_offsets[%zu] = %zu is past n = %zu", r->num_segments,
                       offsets[r->num_segments], r->n);
    return DLSCAN_SUCCESS;
}

dlscan_status dl_cpu_segmented_scan(dlscan_handle_t h, const dl_scan_request *r, uint64_t seed_bits)
{
    if (r->n == 0)
        return DLSCAN_SUCCESS;
    dl_cpu_job job;
    dl_cpu_scan_job(&job, r, seed_bits, dl_cpu_segment_tile);
    job.keys = r->keys;
    job.key_size = r->key_size;
    job.offsets = r->offsets;
    job.num_segments = r->num_segments;
    job.axis_length = r->axis_length;
    job.axis_stride = r->axis_stride;
    job.totals = r->totals;
    dl_cpu_run(h, &job);
    return DLSCAN_SUCCESS;
}
