/*
 * compact.c: the stream compaction entry points (select_flagged, select_if, unique,
 * run-length encode, reduce-by-key, and reduce-by-key with a user operator, which runs as a scan
 * by key: dl_scan_run). Each describes its buffers and has them checked
 * (checks.c: NULL, alignment, the kind of memory, bounds, overlaps), then hands over to the
 * backend: the GPU's device/compact_kernel.cu or the CPU's cpu_compact.c.
 */
#include <string.h>

#include "internal.h"

/* The checks every compaction shares (checks.c), then the backend. */
static dlscan_status dl_compact(dlscan_handle_t h, const dl_compact_request *r, dl_buffer *buffers,
                                int count)
{
    dlscan_status status = dl_check_compact(h, r, buffers, count);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (r->n > 0 &&
        (status = h->backend->reserve(h, dl_tiles(r->n, h->backend->compact_tile_items(h)),
                                      dl_compact_words_per_tile(r->kind), r->stream)) !=
            DLSCAN_SUCCESS)
        return status;
    return h->backend->compact(h, r);
}

static dlscan_status dl_start(dlscan_handle_t h, dlscan_type type)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    return dl_check_compact_type(h, type);
}

#define DL_COUNT_BUFFER(name, p) {p, sizeof(size_t), sizeof(size_t), name, 1, NULL}

dlscan_status dlscan_select_flagged(dlscan_handle_t h, const void *d_in, const unsigned char *d_flags,
                                    void *d_out, size_t *d_num_selected, size_t n, dlscan_type type,
                                    cudaStream_t stream)
{
    dlscan_status status = dl_start(h, type);
    if (status != DLSCAN_SUCCESS)
        return status;
    const size_t size = dl_type_size(type), bytes = n * size;
    dl_buffer buffers[] = {{d_in, bytes, size, "d_in", 0, NULL},
                           {d_flags, n, 1, "d_flags", 0, NULL},
                           {d_out, bytes, size, "d_out", 1, d_in},
                           DL_COUNT_BUFFER("d_num_selected", d_num_selected)};
    const dl_compact_request r = {.kind = DL_COMPACT_SELECT_FLAGGED, .in = d_in, .flags = d_flags,
                                  .out = d_out, .num_out = d_num_selected, .n = n, .type = type,
                                  .stream = stream};
    return dl_compact(h, &r, buffers, 4);
}

dlscan_status dlscan_select_if(dlscan_handle_t h, const void *d_in, void *d_out,
                               size_t *d_num_selected, size_t n, dlscan_type type,
                               dlscan_predicate predicate, const void *operand, cudaStream_t stream)
{
    dlscan_status status = dl_start(h, type);
    if (status != DLSCAN_SUCCESS)
        return status;
    if ((status = dl_check_predicate(h, predicate, operand)) != DLSCAN_SUCCESS)
        return status;
    const size_t size = dl_type_size(type), bytes = n * size;
    uint64_t operand_bits = 0;
    if (operand)
        memcpy(&operand_bits, operand, size);
    dl_buffer buffers[] = {{d_in, bytes, size, "d_in", 0, NULL},
                           {d_out, bytes, size, "d_out", 1, d_in},
                           DL_COUNT_BUFFER("d_num_selected", d_num_selected)};
    const dl_compact_request r = {.kind = DL_COMPACT_SELECT_IF, .in = d_in, .out = d_out,
                                  .num_out = d_num_selected, .n = n, .type = type,
                                  .predicate = (int)predicate, .operand_bits = operand_bits,
                                  .stream = stream};
    return dl_compact(h, &r, buffers, 3);
}

dlscan_status dlscan_unique(dlscan_handle_t h, const void *d_in, void *d_out, size_t *d_num_selected,
                            size_t n, dlscan_type type, cudaStream_t stream)
{
    dlscan_status status = dl_start(h, type);
    if (status != DLSCAN_SUCCESS)
        return status;
    const size_t size = dl_type_size(type), bytes = n * size;
    dl_buffer buffers[] = {{d_in, bytes, size, "d_in", 0, NULL},
                           {d_out, bytes, size, "d_out", 1, d_in},
                           DL_COUNT_BUFFER("d_num_selected", d_num_selected)};
    const dl_compact_request r = {.kind = DL_COMPACT_UNIQUE, .in = d_in, .out = d_out,
                                  .num_out = d_num_selected, .n = n, .type = type, .stream = stream};
    return dl_compact(h, &r, buffers, 3);
}

dlscan_status dlscan_run_length_encode(dlscan_handle_t h, const void *d_in, void *d_unique_out,
                                       size_t *d_run_lengths, size_t *d_num_runs, size_t n,
                                       dlscan_type type, cudaStream_t stream)
{
    dlscan_status status = dl_start(h, type);
    if (status != DLSCAN_SUCCESS)
        return status;
    const size_t size = dl_type_size(type), bytes = n * size;
    dl_buffer buffers[] = {{d_in, bytes, size, "d_in", 0, NULL},
                           {d_unique_out, bytes, size, "d_unique_out", 1, d_in},
                           {d_run_lengths, n * sizeof(size_t), sizeof(size_t), "d_run_lengths", 1, NULL},
                           DL_COUNT_BUFFER("d_num_runs", d_num_runs)};
    const dl_compact_request r = {.kind = DL_COMPACT_RUN_LENGTH, .in = d_in, .out = d_unique_out,
                                  .out2 = d_run_lengths, .num_out = d_num_runs, .n = n,
                                  .type = type, .stream = stream};
    return dl_compact(h, &r, buffers, 4);
}

dlscan_status dlscan_reduce_by_key(dlscan_handle_t h, const void *d_keys_in, const void *d_values_in,
                                   void *d_keys_out, void *d_values_out, size_t *d_num_runs, size_t n,
                                   dlscan_type key_type, dlscan_type value_type, dlscan_op op,
                                   cudaStream_t stream)
{
    dlscan_status status = dl_start(h, key_type);
    if (status != DLSCAN_SUCCESS || (status = dl_check_compact_type(h, value_type)) != DLSCAN_SUCCESS ||
        (status = dl_check_op(h, op)) != DLSCAN_SUCCESS)
        return status;
    const size_t key_size = dl_type_size(key_type), value_size = dl_type_size(value_type);
    dl_buffer buffers[] = {{d_keys_in, n * key_size, key_size, "d_keys_in", 0, NULL},
                           {d_values_in, n * value_size, value_size, "d_values_in", 0, NULL},
                           {d_keys_out, n * key_size, key_size, "d_keys_out", 1, d_keys_in},
                           {d_values_out, n * value_size, value_size, "d_values_out", 1, d_values_in},
                           DL_COUNT_BUFFER("d_num_runs", d_num_runs)};
    const dl_compact_request r = {.kind = DL_COMPACT_REDUCE_BY_KEY, .in = d_keys_in,
                                  .values_in = d_values_in, .out = d_keys_out,
                                  .out2 = d_values_out, .num_out = d_num_runs, .n = n,
                                  .type = key_type, .value_type = value_type, .op = op,
                                  .stream = stream};
    return dl_compact(h, &r, buffers, 5);
}

dlscan_status dlscan_reduce_by_key_custom(dlscan_handle_t h, dlscan_operator_t op, const void *d_keys_in,
                                          const void *d_values_in, const void *d_values_in2, void *d_keys_out,
                                          void *d_values_out, size_t *d_num_runs, size_t n, dlscan_type key_type,
                                          const void *init, cudaStream_t stream)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    const dl_runs_args a = {op, d_keys_in, d_values_in, d_values_in2, d_keys_out, d_values_out, d_num_runs, n,
                            key_type, init};
    dl_scan_request r;
    const dlscan_status status = dl_check_runs(h, &a, stream, &r);
    return status != DLSCAN_SUCCESS ? status : dl_scan_run(h, &r);
}
