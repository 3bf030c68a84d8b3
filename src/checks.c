/*
 * checks.c: every argument check, in the order the header documents: a scan's (dl_check_scan,
 * which turns a dlscan_scan_args into the request the backends take) and a compaction's
 * (dl_check_compact over the buffers compact.c describes, dl_check_predicate), on types,
 * operators, counts, pointers, memory and overlaps. Each failed check records a message naming
 * the argument (dl_fail) and returns its status; nothing is written or enqueued here.
 */
#include <string.h>

#include "internal.h"

/* Tiles per call are counted in 32 bits and the GPU grid's x dimension holds 2^31 - 1. */
#define DL_MAX_TILES 0x7fffffffull

size_t dl_tiles(size_t n, size_t tile) { return n / tile + (n % tile != 0); }

dlscan_status dl_check_type(dlscan_handle_t h, dlscan_type type)
{
    if (!dl_type_valid(type))
        return dl_fail(h, DLSCAN_ERROR_INVALID_TYPE,
                       "type = %d is not a dlscan_type (DLSCAN_INT32 = 0 .. DLSCAN_BFLOAT16 = 11)",
                       (int)type);
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_op(dlscan_handle_t h, dlscan_op op)
{
    if (!dl_op_valid(op))
        return dl_fail(h, DLSCAN_ERROR_INVALID_OP,
                       "op = %d is not a dlscan_op (DLSCAN_SUM = 0, DLSCAN_MIN = 1, DLSCAN_MAX = 2)",
                       (int)op);
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_compact_type(dlscan_handle_t h, dlscan_type type)
{
    const dlscan_status status = dl_check_type(h, type);
    if (status == DLSCAN_SUCCESS && dl_type_size(type) < 4)
        return dl_fail(h, DLSCAN_ERROR_INVALID_TYPE,
                       "type = %s: compaction takes the 32- and 64-bit types (DLSCAN_INT32 .. "
                       "DLSCAN_FLOAT64)",
                       dl_type_name(type));
    return status;
}

dlscan_status dl_check_count(dlscan_handle_t h, size_t n, dlscan_type type, size_t tile)
{
    const size_t size = dl_type_size(type);
    size_t max_n = SIZE_MAX / size;
    if (max_n / tile > DL_MAX_TILES)
        max_n = (size_t)DL_MAX_TILES * tile;
    if (n > max_n)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "n = %zu is more than the %zu %s items one call can scan", n, max_n,
                       dl_type_name(type));
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_pointer(dlscan_handle_t h, const void *p, size_t size, const char *what)
{
    if (!p)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
    if ((uintptr_t)p % size)
        return dl_fail(h, DLSCAN_ERROR_MISALIGNED,
                       "%s = %p is not aligned to %zu bytes, the size of its elements", what, p,
                       size);
    return DLSCAN_SUCCESS;
}

int dl_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    if (!a_bytes || !b_bytes)
        return 0;
    return x < y ? y - x < a_bytes : x - y < b_bytes;
}

/* One pointer argument: not NULL, aligned to `size`, and `bytes` of memory the backend scans. */
static dlscan_status dl_check_buffer(dlscan_handle_t h, const void *p, size_t size, size_t bytes,
                                     const char *what)
{
    const dlscan_status status = dl_check_pointer(h, p, size, what);
    return status != DLSCAN_SUCCESS ? status : h->backend->check_range(h, p, bytes, what);
}

static dlscan_status dl_overlap(dlscan_handle_t h, const char *a_name, const void *a, size_t a_bytes,
                                const char *b_name, const void *b, size_t b_bytes)
{
    return dl_fail(h, DLSCAN_ERROR_OVERLAP, "%s = %p (%zu bytes) and %s = %p (%zu bytes) overlap",
                   a_name, a, a_bytes, b_name, b, b_bytes);
}

/* The arguments of a dlscan_scan_args of args->size bytes in *a: args itself, or `copy` with
 * the fields the caller lacks at their defaults. Fails where the size is not one this library
 * takes. */
static dlscan_status dl_scan_args(dlscan_handle_t h, const dlscan_scan_args *args,
                                  dlscan_scan_args *copy, const dlscan_scan_args **a)
{
    const size_t ours = sizeof *copy;
    if (args->size < DLSCAN_SCAN_ARGS_SIZE_V1)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "args->size = %zu is less than the first version's %zu: start from "
                       "DLSCAN_SCAN_ARGS_INIT",
                       args->size, (size_t)DLSCAN_SCAN_ARGS_SIZE_V1);
    if (args->size != DLSCAN_SCAN_ARGS_SIZE_V1 && args->size != DLSCAN_SCAN_ARGS_SIZE_V2 &&
        args->size != DLSCAN_SCAN_ARGS_SIZE_V3 && args->size != DLSCAN_SCAN_ARGS_SIZE_V4 && args->size < ours)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "args->size = %zu is no version's size (%zu, %zu, %zu or %zu, or more than this "
                       "library's %zu): start from DLSCAN_SCAN_ARGS_INIT",
                       args->size, (size_t)DLSCAN_SCAN_ARGS_SIZE_V1, (size_t)DLSCAN_SCAN_ARGS_SIZE_V2,
                       (size_t)DLSCAN_SCAN_ARGS_SIZE_V3, (size_t)DLSCAN_SCAN_ARGS_SIZE_V4, ours);
    if (args->size >= ours) { /* a later header's struct: its new fields must be unset */
        const unsigned char *tail = (const unsigned char *)args + ours;
        for (size_t i = 0; i < args->size - ours; ++i)
            if (tail[i])
                return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                               "args->size = %zu: byte %zu is set, in a field this library (%zu "
                               "bytes of dlscan_scan_args) does not know",
                               args->size, ours + i, ours);
        *a = args;
        return DLSCAN_SUCCESS;
    }
    const dlscan_scan_args defaults = DLSCAN_SCAN_ARGS_INIT;
    *copy = defaults;
    memcpy(copy, args, args->size);
    copy->size = ours;
    *a = copy;
    return DLSCAN_SUCCESS;
}

/* A segmented scan's arguments that need no memory: a valid key type (with or without keys),
 * one source of segments, no device init or total, a count of offsets that fits in memory. */
static dlscan_status dl_check_segments(dlscan_handle_t h, const dlscan_scan_args *a)
{
    const dlscan_status status = dl_check_type(h, a->key_type);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (a->d_keys && a->d_offsets)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "d_keys and d_offsets are both set: segments come from one or the other");
    if (!a->d_offsets && a->num_segments)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "num_segments = %zu without d_offsets", a->num_segments);
    if (!a->d_keys && !a->d_offsets)
        return DLSCAN_SUCCESS;
    if (a->d_init || a->d_total)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "%s is set with %s: a segmented scan takes its init from the host (init) "
                       "and leaves no total",
                       a->d_init ? "d_init" : "d_total", a->d_keys ? "d_keys" : "d_offsets");
    if (a->d_keys)
        return DLSCAN_SUCCESS;
    if (a->num_segments >= SIZE_MAX / sizeof(size_t))
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "num_segments = %zu: its offsets do not fit in memory", a->num_segments);
    return DLSCAN_SUCCESS;
}

/* A scan along an axis's arguments that need no memory: a length with any stride, nothing of a
 * single scan's chain or of segments beside it, and n whole arrays of length x stride items. */
static dlscan_status dl_check_axis(dlscan_handle_t h, const dlscan_scan_args *a)
{
    if (!a->axis_length) {
        if (a->axis_stride || a->d_totals)
            return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                           "%s is set without axis_length: give the length of each scan along the "
                           "axis",
                           a->axis_stride ? "axis_stride" : "d_totals");
        return DLSCAN_SUCCESS;
    }
    const char *other = a->d_init ? "d_init" : a->d_total ? "d_total" : a->d_keys ? "d_keys"
                                                          : a->d_offsets ? "d_offsets" : NULL;
    if (other)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "%s is set with axis_length: scans along an axis start from the host init "
                       "(init), leave their totals in d_totals, and take no segments",
                       other);
    const size_t stride = a->axis_stride ? a->axis_stride : 1;
    if (a->axis_length > SIZE_MAX / stride || a->n % (a->axis_length * stride) != 0)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "n = %zu is not a multiple of axis_length x axis_stride = %zu x %zu: the "
                       "items must be whole arrays [outer][axis_length][axis_stride]",
                       a->n, a->axis_length, stride);
    return DLSCAN_SUCCESS;
}

/* A column scan's tiles (columns.cuh's, a descriptor for each column of each) on backends that
 * have them, into *tiles and *tile_descriptors: no more than one call can take. */
static dlscan_status dl_check_axis_tiles(dlscan_handle_t h, size_t acc_bytes, size_t n, size_t length,
                                         size_t stride, size_t *tiles, size_t *tile_descriptors)
{
    if (!h->backend->axis_tiles)
        return DLSCAN_SUCCESS;
    *tiles = h->backend->axis_tiles(h, acc_bytes, n, length, stride, tile_descriptors);
    if (*tiles > DL_MAX_TILES)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "n = %zu in arrays of %zu x %zu: %zu tiles, more than the %llu one call "
                       "can take; scan fewer arrays a call",
                       n, length, stride, *tiles, DL_MAX_TILES);
    return DLSCAN_SUCCESS;
}

/* The keys (n of them) or the offsets (num_segments + 1): pointer and alignment, overlaps with
 * the values in and out (before the allocation's bounds: a key range inside d_in is an overlap
 * wherever it ends), then the bounds. The offsets may share memory with d_in, which is only
 * read, but not with d_out. */
static dlscan_status dl_check_segment_buffers(dlscan_handle_t h, const dlscan_scan_args *a,
                                              size_t in_bytes, size_t out_bytes)
{
    dlscan_status status;
    if (a->d_keys) {
        const size_t key_size = dl_type_size(a->key_type), key_bytes = a->n * key_size;
        if (a->n == 0)
            return DLSCAN_SUCCESS;
        if ((status = dl_check_pointer(h, a->d_keys, key_size, "d_keys")) != DLSCAN_SUCCESS)
            return status;
        if (dl_ranges_overlap(a->d_keys, key_bytes, a->d_in, in_bytes))
            return dl_overlap(h, "d_keys", a->d_keys, key_bytes, "d_in", a->d_in, in_bytes);
        if (dl_ranges_overlap(a->d_keys, key_bytes, a->d_out, out_bytes))
            return dl_overlap(h, "d_keys", a->d_keys, key_bytes, "d_out", a->d_out, out_bytes);
        return h->backend->check_range(h, a->d_keys, key_bytes, "d_keys");
    }
    const size_t offset_bytes = (a->num_segments + 1) * sizeof(size_t);
    if ((status = dl_check_pointer(h, a->d_offsets, sizeof(size_t), "d_offsets")) != DLSCAN_SUCCESS)
        return status;
    if (a->n > 0 && dl_ranges_overlap(a->d_offsets, offset_bytes, a->d_out, out_bytes))
        return dl_overlap(h, "d_offsets", a->d_offsets, offset_bytes, "d_out", a->d_out, out_bytes);
    return h->backend->check_range(h, a->d_offsets, offset_bytes, "d_offsets");
}

/* d_init and d_total, where set: one value of `value` bytes each (an out_type value, or a user
 * operator's state), aligned to `alignment`, in memory the backend scans; d_init not inside d_out,
 * d_total inside none of d_in, d_in2 (in2_bytes > 0), d_out and d_init (which it may equal). The
 * inputs' and output's bytes are n's: 0 for n == 0, when only the total is written. */
static dlscan_status dl_check_init_total(dlscan_handle_t h, const dlscan_scan_args *a, size_t value,
                                         size_t alignment, size_t in_bytes, size_t in2_bytes, size_t bytes)
{
    dlscan_status status;
    const int items = a->n > 0;
    if (a->d_init) {
        if ((status = dl_check_buffer(h, a->d_init, alignment, value, "d_init")) != DLSCAN_SUCCESS)
            return status;
        if (items && dl_ranges_overlap(a->d_init, value, a->d_out, bytes))
            return dl_overlap(h, "d_init", a->d_init, value, "d_out", a->d_out, bytes);
    }
    if (!a->d_total)
        return DLSCAN_SUCCESS;
    if ((status = dl_check_buffer(h, a->d_total, alignment, value, "d_total")) != DLSCAN_SUCCESS)
        return status;
    if (items && dl_ranges_overlap(a->d_total, value, a->d_in, in_bytes))
        return dl_overlap(h, "d_total", a->d_total, value, "d_in", a->d_in, in_bytes);
    if (items && in2_bytes && dl_ranges_overlap(a->d_total, value, a->d_in2, in2_bytes))
        return dl_overlap(h, "d_total", a->d_total, value, "d_in2", a->d_in2, in2_bytes);
    if (items && dl_ranges_overlap(a->d_total, value, a->d_out, bytes))
        return dl_overlap(h, "d_total", a->d_total, value, "d_out", a->d_out, bytes);
    if (a->d_init && a->d_init != a->d_total && dl_ranges_overlap(a->d_total, value, a->d_init, value))
        return dl_overlap(h, "d_total", a->d_total, value, "d_init", a->d_init, value);
    return DLSCAN_SUCCESS;
}

/* A scan along an axis's d_totals (where set): n / axis_length values of `value` bytes aligned to
 * `alignment`, overlapping none of the items' buffers (given by their bytes; 0, as where n is 0 or
 * the call is unbuffered: not checked).
 * The overlaps come before the allocation's bounds: totals inside d_in are an overlap wherever
 * they end. */
static dlscan_status dl_check_totals(dlscan_handle_t h, const dlscan_scan_args *a, size_t value, size_t alignment,
                                     size_t in_bytes, size_t in2_bytes, size_t bytes)
{
    if (!a->d_totals)
        return DLSCAN_SUCCESS;
    const size_t total_bytes = a->n / a->axis_length * value;
    dlscan_status status;
    if ((status = dl_check_pointer(h, a->d_totals, alignment, "d_totals")) != DLSCAN_SUCCESS)
        return status;
    if (in_bytes && dl_ranges_overlap(a->d_totals, total_bytes, a->d_in, in_bytes))
        return dl_overlap(h, "d_totals", a->d_totals, total_bytes, "d_in", a->d_in, in_bytes);
    if (in2_bytes && dl_ranges_overlap(a->d_totals, total_bytes, a->d_in2, in2_bytes))
        return dl_overlap(h, "d_totals", a->d_totals, total_bytes, "d_in2", a->d_in2, in2_bytes);
    if (bytes && dl_ranges_overlap(a->d_totals, total_bytes, a->d_out, bytes))
        return dl_overlap(h, "d_totals", a->d_totals, total_bytes, "d_out", a->d_out, bytes);
    return h->backend->check_range(h, a->d_totals, total_bytes, "d_totals");
}

/* The largest power of two that divides `bytes`, at most 16: the alignment an item of that size
 * must have (a user operator's, whose type dlscan does not know). */
static size_t dl_item_alignment(size_t bytes)
{
    size_t alignment = 1;
    while (alignment < 16 && bytes % (alignment * 2) == 0)
        alignment *= 2;
    return alignment;
}

/* A user operator's: made on this handle's backend (`name`: the argument that holds it); where the
 * call lifts its states (segments, runs), room for the 4 bytes more (`does`: what the call would
 * do, `why`: what the 4 bytes hold); a second input (`in2`, named in2_name) where the operator
 * takes one and `needs_in2`, and none where it does not. */
static dlscan_status dl_check_operator(dlscan_handle_t h, const struct dlscan_operator *op, const char *name,
                                       const char *does, const char *why, const void *in2, const char *in2_name,
                                       int needs_in2)
{
    if (op->device_memory != h->backend->device_memory)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "%s was made on a %s handle, and this is a %s handle", name,
                       op->device_memory ? "GPU" : "CPU", h->backend->name);
    if (does && DL_USER_VALUE(op->state_bytes, 1) > DLSCAN_STATE_MAX_BYTES)
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                       "a user operator of a %zu-byte state %s: there a state takes 4 bytes more (%s), and at "
                       "most %d bytes travel; use states of up to %d bytes",
                       op->state_bytes, does, why, DLSCAN_STATE_MAX_BYTES, DLSCAN_STATE_MAX_BYTES - 4);
    if (op->in2_bytes && needs_in2 && !in2)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "%s is NULL: this operator reads a second input of %zu-byte items", in2_name, op->in2_bytes);
    if (!op->in2_bytes && in2)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "%s is set, and this operator reads one input", in2_name);
    return DLSCAN_SUCCESS;
}

/* A scan with a user operator (args->custom): its own sizes in place of the types, over offsets,
 * by key, along rows, down columns or none of them, and not the reduction yet. */
static dlscan_status dl_check_custom_scan(dlscan_handle_t h, const dlscan_scan_args *a, int reduce,
                                          int unbuffered, cudaStream_t stream, dl_scan_request *request)
{
    const struct dlscan_operator *op = a->custom;
    if (op->device_memory != h->backend->device_memory) /* (before the reduction's refusal) */
        return dl_check_operator(h, op, "args->custom", NULL, NULL, NULL, NULL, 0);
    if (reduce)
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED, "dlscan_reduce does not take a user operator yet");
    if (a->exclusive != 0 && a->exclusive != 1)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "exclusive = %d is not 0 or 1", a->exclusive);
    if (a->init && a->d_init)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "init and d_init are both set: give the init one way");
    dlscan_status status;
    if ((status = dl_check_segments(h, a)) != DLSCAN_SUCCESS || (status = dl_check_axis(h, a)) != DLSCAN_SUCCESS)
        return status;
    const int columns = a->axis_length && a->axis_stride > 1, rows = a->axis_length && !columns;
    const int segmented = rows || a->d_offsets || a->d_keys;
    const char *does = !segmented ? NULL : rows ? "scans no rows" : "scans no segments";
    if ((status = dl_check_operator(h, op, "args->custom", does,
                                    rows ? "a flag that a row starts" : "a flag that a segment starts", a->d_in2,
                                    "d_in2", a->n > 0 && !unbuffered)) != DLSCAN_SUCCESS)
        return status;
    /* (a GPU scan's tiles; a CPU handle folds a user operator in one run, without tiles) */
    const size_t n = a->n, state = op->state_bytes,
                 tile = (size_t)DL_USER_THREADS * DL_USER_ITEMS(DL_USER_VALUE(state, segmented));
    const size_t widest = op->in_bytes > op->out_bytes ? op->in_bytes : op->out_bytes;
    if (n > SIZE_MAX / (widest > op->in2_bytes ? widest : op->in2_bytes) ||
        (h->backend->device_memory && n / tile >= DL_MAX_TILES))
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "n = %zu is more than one call can scan", n);
    size_t tiles = h->backend->device_memory ? dl_tiles(n, tile) : 0, tile_descriptors = 1;
    if (columns && (status = dl_check_axis_tiles(h, state, n, a->axis_length, a->axis_stride, &tiles,
                                                  &tile_descriptors)) != DLSCAN_SUCCESS)
        return status;
    const size_t in_bytes = unbuffered ? 0 : n * op->in_bytes, in2_bytes = unbuffered ? 0 : n * op->in2_bytes,
                 bytes = unbuffered ? 0 : n * op->out_bytes;
    if (n > 0 && !unbuffered) {
        const dl_buffer buffers[] = {
            {a->d_in, in_bytes, dl_item_alignment(op->in_bytes), "d_in", 0, NULL},
            {a->d_out, bytes, dl_item_alignment(op->out_bytes), "d_out", 1,
             op->in_bytes == op->out_bytes ? a->d_in : NULL},
            {a->d_in2, in2_bytes, dl_item_alignment(op->in2_bytes), "d_in2", 0, NULL},
        };
        if ((status = dl_check_buffers(h, buffers, op->in2_bytes ? 3 : 2)) != DLSCAN_SUCCESS)
            return status;
    }
    if ((a->d_offsets || a->d_keys) && !unbuffered &&
        (status = dl_check_segment_buffers(h, a, in_bytes, bytes)) != DLSCAN_SUCCESS)
        return status;
    if ((status = dl_check_init_total(h, a, state, 4, in_bytes, in2_bytes, bytes)) != DLSCAN_SUCCESS ||
        (status = dl_check_totals(h, a, state, 4, in_bytes, in2_bytes, bytes)) != DLSCAN_SUCCESS)
        return status;
    dl_scan_request r = {
        .in = a->d_in,
        .out = a->d_out,
        .n = n,
        .tiles = tiles,
        .tile_descriptors = tile_descriptors,
        .in_type = a->in_type,
        .type = a->out_type,
        .acc_type = a->out_type,
        .op = a->op,
        .exclusive = a->exclusive,
        .init = a->d_init,
        .total = a->d_total,
        .keys = a->d_keys,
        .key_size = a->d_keys ? dl_type_size(a->key_type) : 0,
        .offsets = a->d_offsets,
        .num_segments = a->num_segments,
        .axis_length = a->axis_length,
        .axis_stride = rows ? 1 : columns ? a->axis_stride : 0,
        .totals = a->d_totals,
        .custom = op,
        .in2 = op->in2_bytes ? a->d_in2 : NULL,
        .stream = stream,
    };
    memcpy(r.init_state, a->init && (n > 0 || a->d_total) ? a->init : (const void *)op->identity, state);
    *request = r;
    return DLSCAN_SUCCESS;
}

/* Reduce-by-key with a user operator: the operator (of this backend; a state with room for the
 * count of runs), the key type, n (on a GPU, runs counted in 32 bits), the buffers (keys in and
 * out apart: the kernel reads a run's key where it ends, when other runs' keys may have been
 * written; values out in place of values in where the sizes match), then the request: a scan by
 * key whose out is the runs' outputs. */
dlscan_status dl_check_runs(dlscan_handle_t h, const dl_runs_args *a, cudaStream_t stream, dl_scan_request *request)
{
    const struct dlscan_operator *op = a->op;
    if (!op)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "op is NULL");
    dlscan_status status = dl_check_operator(h, op, "op", "reduces no runs", "the count of runs", a->values_in2,
                                             "d_values_in2", a->n > 0);
    if (status != DLSCAN_SUCCESS || (status = dl_check_type(h, a->key_type)) != DLSCAN_SUCCESS)
        return status;
    const size_t n = a->n, tile = (size_t)DL_USER_THREADS * DL_USER_ITEMS(DL_USER_VALUE(op->state_bytes, 1));
    if (h->backend->device_memory && n > UINT32_MAX)
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                       "n = %zu: a GPU reduce-by-key with a user operator counts its runs in 32 bits; reduce at "
                       "most 2^32 - 1 items a call",
                       n);
    const size_t key_size = dl_type_size(a->key_type);
    dl_buffer buffers[] = {
        {a->num_runs, sizeof(size_t), sizeof(size_t), "d_num_runs", 1, NULL},
        {a->keys_in, n * key_size, key_size, "d_keys_in", 0, NULL},
        {a->values_in, n * op->in_bytes, dl_item_alignment(op->in_bytes), "d_values_in", 0, NULL},
        {a->keys_out, n * key_size, key_size, "d_keys_out", 1, NULL},
        {a->values_out, n * op->out_bytes, dl_item_alignment(op->out_bytes), "d_values_out", 1,
         op->in_bytes == op->out_bytes ? a->values_in : NULL},
        {a->values_in2, n * op->in2_bytes, dl_item_alignment(op->in2_bytes), "d_values_in2", 0, NULL},
    };
    /* (n == 0: the count alone) */
    if ((status = dl_check_buffers(h, buffers, n == 0 ? 1 : op->in2_bytes ? 6 : 5)) != DLSCAN_SUCCESS)
        return status;
    dl_scan_request r = {
        .in = a->values_in,
        .out = a->values_out,
        .n = n,
        .tiles = h->backend->device_memory ? dl_tiles(n, tile) : 0,
        .tile_descriptors = 1,
        .keys = a->keys_in,
        .key_size = key_size,
        .custom = op,
        .in2 = op->in2_bytes ? a->values_in2 : NULL,
        .keys_out = a->keys_out,
        .num_runs = a->num_runs,
        .stream = stream,
    };
    memcpy(r.init_state, a->init && n > 0 ? a->init : (const void *)op->identity, op->state_bytes);
    *request = r;
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_scan(dlscan_handle_t h, const dlscan_scan_args *args, dl_check_for call,
                            cudaStream_t stream, dl_scan_request *request)
{
    if (!args)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "args is NULL");
    dlscan_scan_args copy;
    const dlscan_scan_args *a = NULL;
    dlscan_status status = dl_scan_args(h, args, &copy, &a);
    if (status != DLSCAN_SUCCESS)
        return status;
    const int reduce = call == DL_CHECK_FOR_REDUCE;
    /* A reserve before the buffers are known: none of the items' buffers to check. */
    const int unbuffered = call == DL_CHECK_FOR_RESERVE && !a->d_in && !a->d_out && !a->d_in2;
    if (a->custom)
        return dl_check_custom_scan(h, a, reduce, unbuffered, stream, request);
    if (a->d_in2)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "d_in2 is set without an operator (args->custom) to read it");
    if ((status = dl_check_type(h, a->in_type)) != DLSCAN_SUCCESS ||
        (status = dl_check_type(h, a->out_type)) != DLSCAN_SUCCESS)
        return status;
    if ((status = dl_check_op(h, a->op)) != DLSCAN_SUCCESS)
        return status;
    if (!dl_pair_valid(a->in_type, a->out_type))
        return dl_fail(h, DLSCAN_ERROR_TYPE_PAIR,
                       "%s items into %s: not a pair dlscan scans (dlscan.h, dlscan_scan, lists them)",
                       dl_type_name(a->in_type), dl_type_name(a->out_type));
    if (a->exclusive != 0 && a->exclusive != 1)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "exclusive = %d is not 0 or 1", a->exclusive);
    if (a->init && a->d_init)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "init and d_init are both set: give the init one way");
    const int segmented = a->d_keys || a->d_offsets;
    if ((status = dl_check_segments(h, a)) != DLSCAN_SUCCESS ||
        (status = dl_check_axis(h, a)) != DLSCAN_SUCCESS)
        return status;
    /* Rows (stride 1) run on the segmented scans' tiles. */
    const size_t stride = a->axis_stride ? a->axis_stride : 1;
    const int rows = a->axis_length && stride == 1;

    const dlscan_type in_type = a->in_type, type = a->out_type, acc = dl_acc_type(type);
    const size_t in_size = dl_type_size(in_type), size = dl_type_size(type), n = a->n;
    const size_t tile =
        segmented || rows ? h->backend->segment_tile_items(h, acc) : h->backend->tile_items(h, acc);
    if ((status = dl_check_count(h, n, type, tile)) != DLSCAN_SUCCESS)
        return status;
    const size_t in_bytes = unbuffered ? 0 : n * in_size, bytes = reduce || unbuffered ? 0 : n * size;
    if (reduce && !a->d_total)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "d_total is NULL: a reduction writes its total there");
    if (reduce && n > 0 &&
        ((status = dl_check_pointer(h, a->d_in, in_size, "d_in")) != DLSCAN_SUCCESS ||
         (status = h->backend->check_range(h, a->d_in, in_bytes, "d_in")) != DLSCAN_SUCCESS))
        return status;
    if (!reduce && n > 0 && !unbuffered) {
        if ((status = dl_check_pointer(h, a->d_in, in_size, "d_in")) != DLSCAN_SUCCESS ||
            (status = dl_check_pointer(h, a->d_out, size, "d_out")) != DLSCAN_SUCCESS)
            return status;
        if (a->d_in == a->d_out && in_size != size)
            return dl_fail(h, DLSCAN_ERROR_OVERLAP,
                           "d_in == d_out = %p: a scan in place needs types of one size, and %s "
                           "items are %zu bytes, %s items %zu",
                           a->d_in, dl_type_name(in_type), in_size, dl_type_name(type), size);
        if (a->d_in != a->d_out && dl_ranges_overlap(a->d_in, in_bytes, a->d_out, bytes))
            return dl_fail(h, DLSCAN_ERROR_OVERLAP,
                           "d_in = %p (%zu bytes) and d_out = %p (%zu bytes) overlap; pass d_out == "
                           "d_in to scan in place",
                           a->d_in, in_bytes, a->d_out, bytes);
        if ((status = h->backend->check_range(h, a->d_in, in_bytes, "d_in")) != DLSCAN_SUCCESS ||
            (a->d_out != a->d_in &&
             (status = h->backend->check_range(h, a->d_out, bytes, "d_out")) != DLSCAN_SUCCESS))
            return status;
    }
    if (segmented && (status = dl_check_segment_buffers(h, a, in_bytes, bytes)) != DLSCAN_SUCCESS)
        return status;
    if ((status = dl_check_init_total(h, a, size, size, in_bytes, 0, bytes)) != DLSCAN_SUCCESS)
        return status;
    if ((status = dl_check_totals(h, a, size, size, in_bytes, 0, bytes)) != DLSCAN_SUCCESS)
        return status;
    /* (init is read only where the call writes something: an n == 0 call without d_total does not
     * run.) */
    const uint64_t init_bits = a->init && (n > 0 || a->d_total) ? dl_bits_read(a->init, type)
                                                                : dl_identity_bits(type, a->op);
    size_t tiles = dl_tiles(n, tile), tile_descriptors = 1;
    if (a->axis_length && !rows &&
        (status = dl_check_axis_tiles(h, dl_type_size(acc), n, a->axis_length, stride, &tiles,
                                      &tile_descriptors)) != DLSCAN_SUCCESS)
        return status;
    const dl_scan_request r = {
        .in = a->d_in,
        .out = a->d_out,
        .n = n,
        .tiles = tiles,
        .tile_descriptors = tile_descriptors,
        .in_type = in_type,
        .type = type,
        .acc_type = acc,
        .op = a->op,
        .exclusive = a->exclusive,
        .init_bits = init_bits,
        .init = a->d_init,
        .total = a->d_total,
        .keys = a->d_keys,
        .key_size = a->d_keys ? dl_type_size(a->key_type) : 0,
        .offsets = a->d_offsets,
        .num_segments = a->num_segments,
        .axis_length = a->axis_length,
        .axis_stride = a->axis_length ? stride : 0,
        .totals = a->d_totals,
        .stream = stream,
    };
    *request = r;
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_predicate(dlscan_handle_t h, dlscan_predicate predicate, const void *operand)
{
    if ((unsigned)predicate > DLSCAN_NONZERO)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "predicate = %d is not a dlscan_predicate (DLSCAN_LESS = 0 .. DLSCAN_NONZERO = 6)",
                       (int)predicate);
    if (!operand && predicate != DLSCAN_NONZERO)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "operand is NULL; every predicate but DLSCAN_NONZERO needs one");
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_buffers(dlscan_handle_t h, const dl_buffer *b, int count)
{
    dlscan_status status;
    for (int i = 0; i < count; ++i)
        if ((status = dl_check_pointer(h, b[i].p, b[i].alignment, b[i].name)) != DLSCAN_SUCCESS)
            return status;
    for (int i = 0; i < count; ++i)
        for (int j = i + 1; j < count; ++j) {
            if (!b[i].output && !b[j].output)
                continue; /* inputs may overlap: they are only read */
            const int in_place = b[i].p == b[j].p && b[i].bytes == b[j].bytes &&
                                 ((b[i].output && b[i].may_equal == b[j].p && !b[j].output) ||
                                  (b[j].output && b[j].may_equal == b[i].p && !b[i].output));
            if (!in_place && dl_ranges_overlap(b[i].p, b[i].bytes, b[j].p, b[j].bytes))
                return dl_fail(h, DLSCAN_ERROR_OVERLAP,
                               "%s = %p (%zu bytes) and %s = %p (%zu bytes) overlap; only an "
                               "output equal to its own input (in place) may share memory",
                               b[i].name, b[i].p, b[i].bytes, b[j].name, b[j].p, b[j].bytes);
        }
    for (int i = 0; i < count; ++i)
        if (b[i].bytes && (status = h->backend->check_range(h, b[i].p, b[i].bytes, b[i].name)) !=
                              DLSCAN_SUCCESS)
            return status;
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_compact(dlscan_handle_t h, const dl_compact_request *r, dl_buffer *buffers,
                               int count)
{
    const dlscan_status status = dl_check_count(h, r->n, r->type, h->backend->compact_tile_items(h));
    if (status != DLSCAN_SUCCESS)
        return status;
    if (r->n == 0) {
        buffers[0] = buffers[count - 1]; /* the count comes last: check it alone */
        count = 1;
    }
    return dl_check_buffers(h, buffers, count);
}

dlscan_status dl_check_exchange(dlscan_handle_t h, const dlscan_exchange *exchange)
{
    if (!exchange)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "exchange is NULL");
    if (exchange->error)
        return dl_fail(h, DLSCAN_ERROR_EXCHANGE, "%s", exchange->error);
    if (exchange->ranks < 1 || exchange->rank < 0 || exchange->rank >= exchange->ranks)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "exchange->rank = %d of ranks = %d: a rank is 0 .. ranks - 1", exchange->rank,
                       exchange->ranks);
    if (!exchange->all_gather)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "exchange->all_gather is NULL");
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_peers(dlscan_handle_t h, const dlscan_exchange *bootstrap, dlscan_peers_t *peers)
{
    if (!peers)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "dlscan_peers_create: peers is NULL");
    *peers = NULL;
    const dlscan_status status = dl_check_exchange(h, bootstrap);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (!h->backend->device_memory)
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                       "dlscan_peers_create takes a GPU handle: the ranks of CPU handles exchange through MPI "
                       "(dlscan_mpi.h)");
    return DLSCAN_SUCCESS;
}
