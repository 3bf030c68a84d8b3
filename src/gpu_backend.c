/*
 * gpu_backend.c: the GPU backend. It owns the handle's device storage (a control block
 * with the tile counter and epoch, the descriptors, and a scratch for scans across ranks,
 * grown when a call needs more), picks the device's row of the policy table (device/policy.h)
 * once, checks that pointers are device memory of the handle's device and long enough, and
 * enqueues the one kernel per call (device/scan_kernel.cu, segment_kernel.cu, axis_kernel.cu,
 * reduce_kernel.cu, compact_kernel.cu) with the row's choices.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "launch.h"
#include "policy.h"

typedef CUresult (*dl_get_address_range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr p);
typedef CUresult (*dl_pointer_attributes_fn)(unsigned count, CUpointer_attribute *attributes,
                                             void **data, CUdeviceptr p);

typedef struct dl_gpu_state {
    int device;
    dl_control *control;     /* device memory */
    dl_word *descriptors;    /* device memory, zeroed when allocated */
    size_t descriptor_words; /* capacity */
    dl_get_address_range_fn get_address_range; /* the driver's cuMemGetAddressRange, or NULL */
    dl_pointer_attributes_fn pointer_attributes; /* the driver's cuPointerGetAttributes, or NULL */
    const dl_policy *policy;    /* the device's row of the policy table (device/policy.h) */
    uint32_t persistent_blocks; /* the persistent kernels' grid; 0 where the row has none */
    uint32_t reduce_blocks;     /* dlscan_reduce's grid at most: SMs x the row's reduce_blocks */
    void *scratch;              /* a call's few values (dl_gpu_scratch), device memory */
    size_t scratch_bytes;
} dl_gpu_state;

static dl_gpu_state *dl_gpu(dlscan_handle_t h) { return (dl_gpu_state *)h->backend_state; }

dlscan_status dl_cuda_fail(dlscan_handle_t h, int error, const char *what)
{
    (void)cudaGetLastError();
    const cudaError_t e = (cudaError_t)error;
    return dl_fail(h, e == cudaErrorMemoryAllocation ? DLSCAN_ERROR_OUT_OF_MEMORY : DLSCAN_ERROR_CUDA,
                   "%s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* The build's subset, as meson.build words it: "meson option only_types = [int32]" (unset: the
 * build has every call, and no launcher returns DL_NOT_BUILT). */
#ifndef DL_ONLY_OPTIONS
#define DL_ONLY_OPTIONS "meson options only_types and only_ops"
#endif

/* A call the build left out (a launcher's DL_NOT_BUILT); `what` names it: "int64 sum". */
static dlscan_status dl_not_built(dlscan_handle_t h, const char *what)
{
    return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                   "%s: this build of dlscan left it out (%s); rebuild without the option, or with "
                   "this call's types and operator listed",
                   what, DL_ONLY_OPTIONS);
}

static dlscan_status dl_gpu_check_device(dlscan_handle_t h)
{
    int current = -1;
    const cudaError_t error = cudaGetDevice(&current);
    if (error != cudaSuccess)
        return dl_cuda_fail(h, error, "cudaGetDevice");
    if (current != dl_gpu(h)->device)
        return dl_fail(h, DLSCAN_ERROR_WRONG_DEVICE,
                       "the current CUDA device is %d, but the handle was created on device %d; "
                       "call cudaSetDevice(%d) first",
                       current, dl_gpu(h)->device, dl_gpu(h)->device);
    return DLSCAN_SUCCESS;
}

/* Items per tile of a scan (segmented: of a segmented scan) accumulating in `type`: the tiles
 * the kernels are compiled with (device/policy.h). */
static size_t dl_gpu_tile_items(dlscan_handle_t h, dlscan_type type)
{
    (void)h;
    return dl_type_size(type) == 4 ? DL_SCAN_TILE_ITEMS_4B : DL_SCAN_TILE_ITEMS_8B;
}

static size_t dl_gpu_segment_tile_items(dlscan_handle_t h, dlscan_type type)
{
    (void)h;
    return dl_type_size(type) == 4 ? DL_SEGMENT_TILE_ITEMS_4B : DL_SEGMENT_TILE_ITEMS_8B;
}

static const char *dl_memory_type_name(enum cudaMemoryType type)
{
    switch (type) {
    case cudaMemoryTypeUnregistered: return "unregistered host";
    case cudaMemoryTypeHost: return "pinned host";
    case cudaMemoryTypeDevice: return "device";
    case cudaMemoryTypeManaged: return "managed";
    }
    return "unknown";
}

/* Is [p, p + bytes) device (or managed) memory of the handle's device, inside one
 * allocation? One driver call (cuPointerGetAttributes) answers all of it; where the driver
 * does not offer it, the runtime's cudaPointerGetAttributes and cuMemGetAddressRange do. */
static dlscan_status dl_gpu_check_range(dlscan_handle_t h, const void *p, size_t bytes,
                                        const char *what)
{
    dl_gpu_state *s = dl_gpu(h);
    dlscan_status status = dl_gpu_check_device(h);
    if (status != DLSCAN_SUCCESS)
        return status;
    enum cudaMemoryType type = cudaMemoryTypeUnregistered;
    int device = -1;
    CUdeviceptr base = 0;
    size_t size = 0;
    unsigned memory_type = 0, managed = 0;
    CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                        CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&memory_type, &managed, &device, &base, &size};
    if (s->pointer_attributes &&
        s->pointer_attributes(5, attributes, data, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS) {
        type = managed                                 ? cudaMemoryTypeManaged
               : memory_type == CU_MEMORYTYPE_DEVICE ? cudaMemoryTypeDevice
               : memory_type == CU_MEMORYTYPE_HOST   ? cudaMemoryTypeHost
                                                     : cudaMemoryTypeUnregistered;
    } else {
        struct cudaPointerAttributes runtime;
        const cudaError_t error = cudaPointerGetAttributes(&runtime, p);
        if (error != cudaSuccess) {
            (void)cudaGetLastError();
            return dl_fail(h, DLSCAN_ERROR_NOT_DEVICE_MEMORY, "%s = %p is not memory CUDA knows: %s",
                           what, p, cudaGetErrorString(error));
        }
        type = runtime.type;
        device = runtime.device;
        if (!s->get_address_range ||
            s->get_address_range(&base, &size, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
            size = 0; /* no bounds known */
    }
    if (type != cudaMemoryTypeDevice && type != cudaMemoryTypeManaged)
        return dl_fail(h, DLSCAN_ERROR_NOT_DEVICE_MEMORY,
                       "%s = %p is %s memory; a GPU handle scans device (or managed) memory", what,
                       p, dl_memory_type_name(type));
    if (type == cudaMemoryTypeDevice && device != s->device)
        return dl_fail(h, DLSCAN_ERROR_NOT_DEVICE_MEMORY,
                       "%s = %p is memory of device %d, but the handle is on device %d", what, p,
                       device, s->device);
    if (size) {
        const size_t left = (size_t)(base + size - (CUdeviceptr)(uintptr_t)p);
        if (bytes > left)
            return dl_fail(h, DLSCAN_ERROR_OUT_OF_BOUNDS,
                           "%s = %p: the call reads or writes %zu bytes from there, but its "
                           "allocation ends %zu bytes later",
                           what, p, bytes, left);
    }
    return DLSCAN_SUCCESS;
}

/* `count` descriptor words to zero (epoch 0, never used: each reads as X), complete when it
 * returns, before work on any stream, blocking or not. */
static cudaError_t dl_gpu_zero_words(dl_word *words, size_t count)
{
    const cudaError_t error = cudaMemset(words, 0, count * sizeof *words);
    return error == cudaSuccess ? cudaDeviceSynchronize() : error;
}

/* The handle's storage may grow on `stream` only where the stream is not being captured: a
 * graph cannot hold a cudaMalloc. `what` says what the call needs and how to have it first. */
static dlscan_status dl_gpu_may_grow(dlscan_handle_t h, cudaStream_t stream, const char *what)
{
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    const cudaError_t error = cudaStreamIsCapturing(stream, &capture);
    if (error != cudaSuccess)
        return dl_cuda_fail(h, error, "cudaStreamIsCapturing");
    if (capture != cudaStreamCaptureStatusNone)
        return dl_fail(h, DLSCAN_ERROR_CAPTURING, "this call needs %s before capturing", what);
    return DLSCAN_SUCCESS;
}

/* Grows the descriptors to hold `tiles` tiles. Growing frees the old storage (after the
 * device is idle, as queued kernels may use it) and zeroes the new one: epoch 0, never
 * used, so every descriptor reads as X. */
static dlscan_status dl_gpu_reserve(dlscan_handle_t h, size_t tiles, int words_per_tile,
                                    cudaStream_t stream)
{
    dl_gpu_state *s = dl_gpu(h);
    const size_t needed = tiles * (size_t)words_per_tile;
    if (needed <= s->descriptor_words)
        return DLSCAN_SUCCESS;
    dlscan_status status = dl_gpu_check_device(h);
    if (status != DLSCAN_SUCCESS)
        return status;
    char what[224];
    snprintf(what, sizeof what, "descriptor storage for %zu tiles, the handle has %zu; call dlscan_reserve() "
             "with the largest n, or dlscan_reserve_scan() with this call's arguments",
             tiles, s->descriptor_words / (size_t)words_per_tile);
    if ((status = dl_gpu_may_grow(h, stream, what)) != DLSCAN_SUCCESS)
        return status;
    const size_t words = needed + needed / 2; /* room to grow a little without reallocating */
    dl_word *grown = NULL;
    cudaError_t error;
    if ((error = cudaMalloc((void **)&grown, words * sizeof *grown)) != cudaSuccess)
        return dl_cuda_fail(h, error, "cudaMalloc of the descriptor storage");
    if ((error = dl_gpu_zero_words(grown, words)) != cudaSuccess) {
        cudaFree(grown);
        return dl_cuda_fail(h, error, "zeroing the descriptor storage");
    }
    cudaFree(s->descriptors);
    s->descriptors = grown;
    s->descriptor_words = words;
    return DLSCAN_SUCCESS;
}

/* The persistent kernels' grid for this call: the row's, or none (DLSCAN_OPTION_PERSISTENT 0). */
static uint32_t dl_gpu_persistent_blocks(dlscan_handle_t h)
{
    return h->persistent ? dl_gpu(h)->persistent_blocks : 0;
}

/* From how many tiles a persistent kernel runs: more than the grid's blocks divided by the row's
 * `divisor` for this primitive, or any number (DLSCAN_TESTING_PERSISTENT_ALWAYS). */
static uint32_t dl_gpu_persistent_from(dlscan_handle_t h, int divisor)
{
    return h->persistent == 2 ? 0 : dl_gpu(h)->persistent_blocks / (uint32_t)divisor;
}

/* A column scan's layout (device/launch.h, dl_axis_shape) for n items of arrays [length][stride]
 * accumulating in values of acc_bytes (a type's, or a user operator's state): its tile's shape,
 * and in *strips and *chains the tiles side by side across an array and the call's chains of
 * tiles (arrays x strips). */
static dl_axis_shape dl_gpu_axis_layout(size_t acc_bytes, size_t n, size_t length, size_t stride,
                                        size_t *strips, size_t *chains)
{
    const dl_axis_shape shape = dl_axis_shape_for(stride, acc_bytes);
    *strips = dl_tiles(stride, shape.lanes);
    *chains = n / (length * stride) * *strips;
    return shape;
}

/* The column scan of r (its axis of stride > 1) on `scan`'s parameters, accumulating in values of
 * acc_bytes. */
static dl_axis_params dl_gpu_axis_params(const dl_scan_request *r, const dl_scan_params *scan, size_t acc_bytes)
{
    size_t strips, chains; /* at most the call's tiles, which the checks kept in 31 bits */
    const dl_axis_shape shape = dl_gpu_axis_layout(acc_bytes, r->n, r->axis_length, r->axis_stride, &strips, &chains);
    return (dl_axis_params){
        .scan = *scan,
        .length = r->axis_length,
        .stride = r->axis_stride,
        .shape = shape,
        .strips = (uint32_t)strips,
        .chains = (uint32_t)chains,
        .totals = r->totals,
    };
}

/* Whether the plain scan's persistent kernel takes r as `tiles` tiles: a type scanned into itself,
 * at 16-byte aligned pointers, where the persistent kernels run and for more tiles than the
 * policy row's threshold. (The long rows and the columns' rows of lanes, below.) */
static int dl_gpu_plain_persistent(dlscan_handle_t h, const dl_scan_request *r, size_t tiles)
{
    return r->in_type == r->type && r->acc_type == r->type && ((uintptr_t)r->in | (uintptr_t)r->out) % 16 == 0 &&
           dl_gpu_persistent_blocks(h) && tiles > dl_gpu_persistent_from(h, dl_gpu(h)->policy->scan_from);
}

/* A scan along rows (a request's axis of stride 1) on the plain scan's persistent kernel, each row
 * a chain of its own (device/scan_kernel.cu, dl_tile_place): sets p's tiles and rows and returns
 * 1, or returns 0 where the segmented kernels take the rows (rows of a power of two up to a
 * segmented tile: their short rows' kernel, which needs no look-back). It takes rows longer than a
 * segmented tile, of a type scanned into itself, whose rows are whole 16-byte vectors at 16-byte
 * aligned pointers, where the persistent kernel runs for the call: its tiles then number no more
 * than the segmented tiles the call reserved descriptors for. */
static int dl_gpu_long_rows(dlscan_handle_t h, const dl_scan_request *r, dl_scan_params *p)
{
    const size_t size = dl_type_size(r->type), length = r->axis_length;
    if (length <= dl_gpu_segment_tile_items(h, r->type) || length * size % 16 != 0)
        return 0;
    const size_t row_tiles = dl_tiles(length, dl_gpu_tile_items(h, r->type));
    const size_t tiles = r->n / length * row_tiles;
    if (tiles > r->tiles || !dl_gpu_plain_persistent(h, r, tiles))
        return 0;
    p->tiles = (uint32_t)tiles;
    p->row_length = length;
    p->row_tiles = (uint32_t)row_tiles;
    p->totals = r->totals;
    return 1;
}

/* The columns of one [N, M] array whose rows are 8 or 16 bytes as a plain scan of its N rows of
 * lanes on the persistent kernel (device/scan_kernel.cu, dl_gpu_lanes_launch): sets p and returns
 * 1 for the widths of policy.h's DL_AXIS_LANES_* where the persistent kernel takes the rows'
 * tiles (dl_gpu_plain_persistent); else returns 0, and the column kernel takes the columns. Its
 * descriptors (a tile of rows takes one value of the row's bytes) are fewer than the column
 * kernel's, which the call reserved (dl_gpu_axis_tiles): checked here all the same. */
static int dl_gpu_lanes(dlscan_handle_t h, const dl_scan_request *r, dl_scan_params *p)
{
    const size_t size = dl_type_size(r->type), lanes = r->axis_stride, length = r->axis_length;
    const int width = size == 4 ? lanes == DL_AXIS_LANES_4B || lanes == DL_AXIS_LANES_4B_WIDE
                                : size == 8 && lanes == DL_AXIS_LANES_8B;
    if (!width || length * lanes != r->n)
        return 0;
    const size_t row_bytes = lanes * size, tiles = dl_tiles(length, DL_SCAN_TILE_ITEMS_8B * 8 / row_bytes);
    if (tiles * DL_DESCRIPTOR_WORDS((int)(row_bytes / 4)) > r->tiles * r->tile_descriptors * dl_words_per_tile(r->type) ||
        !dl_gpu_plain_persistent(h, r, tiles))
        return 0;
    p->n = length;
    p->tiles = (uint32_t)tiles;
    p->total = r->totals;
    return 1;
}

static dlscan_status dl_gpu_scan(dlscan_handle_t h, const dl_scan_request *r)
{
    dl_gpu_state *s = dl_gpu(h);
    /* Rows (an axis of stride 1) are segments whose heads the kernel computes, or, long ones,
     * chains of the plain scan's tiles (dl_gpu_long_rows). */
    const int rows = r->axis_length && r->axis_stride == 1, columns = r->axis_length && !rows;
    const int segmented = r->keys || r->offsets || rows;
    if (r->n == 0 && r->num_runs) { /* a reduce-by-key of nothing: no runs */
        const cudaError_t error = cudaMemsetAsync(r->num_runs, 0, sizeof *r->num_runs, r->stream);
        return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "writing the count");
    }
    if (r->n == 0 && (segmented || columns)) /* nothing to write; the offsets' values are the
                                                caller's promise */
        return DLSCAN_SUCCESS;
    if (r->n == 0) { /* only the total: a value, or a user operator's state 8 bytes at a time */
        const size_t bytes = r->custom ? r->custom->state_bytes : dl_type_size(r->type);
        cudaError_t error = cudaSuccess;
        for (size_t at = 0; at < bytes && error == cudaSuccess; at += 8) {
            uint64_t bits = r->init_bits;
            if (r->custom)
                memcpy(&bits, (const unsigned char *)r->init_state + at, 8);
            error = (cudaError_t)dl_gpu_scan_total(r->init ? (const unsigned char *)r->init + at : NULL,
                                                   (unsigned char *)r->total + at, bits,
                                                   bytes - at < 8 ? bytes - at : 8, r->stream);
        }
        return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "writing the total");
    }
    const dl_scan_params params = {
        .in = r->in,
        .out = r->out,
        .n = r->n,
        .tiles = (uint32_t)r->tiles,
        .seed_bits = dl_acc_bits(r->type, r->init_bits),
        .init = r->init,
        .total = r->total,
        .descriptors = s->descriptors,
        .descriptor_words = s->descriptor_words,
        .control = s->control,
        .exclusive = r->exclusive,
        .persistent_blocks = dl_gpu_persistent_blocks(h),
        .persistent_from = dl_gpu_persistent_from(h, s->policy->scan_from),
        .dependent_launch = s->policy->dependent_launch,
    };
    int error;
    dl_scan_params long_rows = params, lanes = params;
    if (r->custom && r->custom->device != s->device) {
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "args->custom was made for device %d, and this handle scans on device %d",
                       r->custom->device, s->device);
    } else if (r->custom && columns) {
        dl_user_column_params user = {.axis = dl_gpu_axis_params(r, &params, r->custom->state_bytes), .in2 = r->in2};
        memcpy(user.seed, r->init_state, sizeof user.seed);
        error = dl_jit_launch_columns(r->custom, &user, s->policy->dependent_launch, r->stream);
    } else if (r->custom) {
        dl_user_params user = {.scan = params, .in2 = r->in2, .offsets = r->offsets, .num_segments = r->num_segments,
                               .keys = r->keys, .key_size = (uint32_t)r->key_size, .keys_out = r->keys_out,
                               .num_runs = r->num_runs};
        user.scan.row_length = rows ? r->axis_length : 0; /* (its programs of segments: dl_scan_reserve) */
        user.row_inverse = rows ? 1.0 / (double)r->axis_length : 0.0;
        user.scan.totals = r->totals;
        if (DL_USER_ROW_CHAINS(r->axis_length, r->axis_stride, r->custom->state_bytes)) {
            /* rows of whole tiles of the one scan, a chain each, or of whole warps' runs of a
             * tile: no more tiles and descriptors than the rows' program the call reserved for */
            const size_t tile = DL_USER_CHAIN_TILE(r->custom->state_bytes), length = r->axis_length;
            user.scan.row_tiles = length >= tile ? (uint32_t)(length / tile) : 1;
            user.row_warps = length >= tile ? 0 : (uint32_t)(length / DL_USER_WARP_RUN(r->custom->state_bytes));
            user.scan.tiles = (uint32_t)dl_tiles(r->n, tile);
        }
        memcpy(user.seed, r->init_state, sizeof user.seed);
        error = dl_jit_launch(r->custom, &user, h->deterministic, s->policy->dependent_launch, r->stream);
    } else if (!r->out) { /* a reduction: chunks of whole scan tiles, at most the row's grid */
        dl_scan_params reduce = params;
        reduce.tiles = r->tiles < s->reduce_blocks ? (uint32_t)r->tiles : s->reduce_blocks;
        error = dl_gpu_reduce_launch(&reduce, r->in_type, r->type, r->op, h->deterministic, r->stream);
    } else if (columns && dl_gpu_lanes(h, r, &lanes)) {
        error = dl_gpu_lanes_launch(&lanes, r->type, r->op, (uint32_t)r->axis_stride, h->deterministic, r->stream);
    } else if (columns) {
        const dl_axis_params axis = dl_gpu_axis_params(r, &params, dl_type_size(r->acc_type));
        error = dl_gpu_axis_launch(&axis, r->in_type, r->type, r->op, r->stream);
    } else if (rows && dl_gpu_long_rows(h, r, &long_rows)) {
        error = dl_gpu_scan_launch(&long_rows, r->in_type, r->type, r->op, h->deterministic, r->stream);
    } else if (segmented) {
        const dl_segment_params segment = {
            .scan = params,
            .keys = r->keys,
            .key_size = (uint32_t)r->key_size,
            .offsets = r->offsets,
            .num_segments = r->num_segments,
            .row_length = rows ? r->axis_length : 0,
            .row_inverse = rows ? 1.0 / (double)r->axis_length : 0.0,
            .totals = r->totals,
        };
        error = dl_gpu_segment_launch(&segment, r->in_type, r->type, r->op, h->deterministic, r->stream);
    } else {
        error = dl_gpu_scan_launch(&params, r->in_type, r->type, r->op, h->deterministic, r->stream);
    }
    if (error == DL_NOT_BUILT) {
        char what[64];
        snprintf(what, sizeof what, "%s%s%s%s %s",
                 !r->out ? "reductions of " : rows ? "rows' " : columns ? "columns' " : segmented ? "segmented " : "",
                 r->in_type == r->type ? "" : dl_type_name(r->in_type),
                 r->in_type == r->type ? "" : " into ", dl_type_name(r->type), dl_op_name(r->op));
        return dl_not_built(h, what);
    }
    if (error != cudaSuccess)
        return dl_cuda_fail(h, (cudaError_t)error, r->custom ? "launching the operator's scan kernel" : "launching the scan kernel");
    return DLSCAN_SUCCESS;
}

/* A column scan's tiles: each chain's `rows` rows at a time, each column of a tile with a
 * descriptor of its own. */
static size_t dl_gpu_axis_tiles(dlscan_handle_t h, size_t acc_bytes, size_t n, size_t length,
                                size_t stride, size_t *descriptors)
{
    (void)h;
    size_t strips, chains;
    const dl_axis_shape shape = dl_gpu_axis_layout(acc_bytes, n, length, stride, &strips, &chains);
    *descriptors = shape.lanes;
    return chains * dl_tiles(length, shape.rows);
}

/* Compaction reserves descriptors for the smallest tile of any compaction kernel. */
static size_t dl_gpu_compact_tile_items(dlscan_handle_t h)
{
    (void)h;
    return DL_COMPACT_MIN_TILE;
}

/* The row's divisor for a compaction of `kind` (dl_gpu_persistent_from). */
static int dl_gpu_compact_from(const dl_policy *row, int kind)
{
    switch (kind) {
    case DL_COMPACT_SELECT_FLAGGED: return row->flagged_from;
    case DL_COMPACT_RUN_LENGTH:
    case DL_COMPACT_REDUCE_BY_KEY: return row->runs_from;
    default: return row->compact_from; /* select_if, unique */
    }
}

static dlscan_status dl_gpu_compact(dlscan_handle_t h, const dl_compact_request *r)
{
    dl_gpu_state *s = dl_gpu(h);
    cudaError_t error;
    if (r->n == 0) {
        error = cudaMemsetAsync(r->num_out, 0, sizeof *r->num_out, r->stream);
        return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "writing the count");
    }
    const dl_compact_params params = {
        .kind = r->kind,
        .in = r->in,
        .flags = r->flags,
        .values_in = r->values_in,
        .out = r->out,
        .out2 = r->out2,
        .num_out = r->num_out,
        .n = r->n,
        .predicate = r->predicate,
        .operand_bits = r->operand_bits,
        .descriptors = s->descriptors,
        .descriptor_words = s->descriptor_words,
        .control = s->control,
        .persistent_blocks = dl_gpu_persistent_blocks(h),
        .persistent_from = dl_gpu_persistent_from(h, dl_gpu_compact_from(s->policy, r->kind)),
        .dependent_launch = s->policy->dependent_launch,
    };
    const int launched = dl_gpu_compact_launch(&params, r->type, r->value_type, r->op,
                                               h->deterministic, r->stream);
    if (launched == DL_NOT_BUILT) {
        static const char *const kinds[] = {"select_flagged", "select_if", "unique", "run_length_encode",
                                            "reduce_by_key"};
        char what[96];
        if (r->kind == DL_COMPACT_REDUCE_BY_KEY)
            snprintf(what, sizeof what, "reduce_by_key of %s keys and %s values, %s", dl_type_name(r->type),
                     dl_type_name(r->value_type), dl_op_name(r->op));
        else
            snprintf(what, sizeof what, "%s of %s", kinds[r->kind], dl_type_name(r->type));
        return dl_not_built(h, what);
    }
    error = (cudaError_t)launched;
    return error == cudaSuccess ? DLSCAN_SUCCESS
                                : dl_cuda_fail(h, error, "launching the compaction kernel");
}

/* Diagnostics wait for the device, then copy. */
static dlscan_status dl_gpu_idle(dlscan_handle_t h)
{
    dlscan_status status = dl_gpu_check_device(h);
    if (status != DLSCAN_SUCCESS)
        return status;
    const cudaError_t error = cudaDeviceSynchronize();
    return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "cudaDeviceSynchronize");
}

static dlscan_status dl_gpu_read_stats(dlscan_handle_t h, unsigned long long stats[DL_STAT_COUNT])
{
    dlscan_status status = dl_gpu_idle(h);
    if (status != DLSCAN_SUCCESS)
        return status;
    const cudaError_t error = cudaMemcpy(stats, dl_gpu(h)->control->stats,
                                         sizeof(unsigned long long) * DL_STAT_COUNT,
                                         cudaMemcpyDeviceToHost);
    return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "reading the counters");
}

static dlscan_status dl_gpu_reset_stats(dlscan_handle_t h)
{
    static const unsigned long long zeros[DL_STAT_COUNT];
    dlscan_status status = dl_gpu_idle(h);
    if (status != DLSCAN_SUCCESS)
        return status;
    const cudaError_t error = cudaMemcpy(dl_gpu(h)->control->stats, zeros, sizeof zeros,
                                         cudaMemcpyHostToDevice);
    return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "resetting the counters");
}

/* The probe's settings (testing builds, testing.h) into the control block, where the testing
 * kernels read them (device/probe.cuh), the GPU being idle: the pauses, whether to count, and
 * the counter word (tile counter and epoch) with the counter's base, where a negative
 * argument keeps what is there. */
static dlscan_status dl_gpu_update_control(dlscan_handle_t h, long long base, long long epoch)
{
    dlscan_status status = dl_gpu_idle(h);
    if (status != DLSCAN_SUCCESS)
        return status;
    dl_control *control = dl_gpu(h)->control;
    dl_control host;
    cudaError_t error = cudaMemcpy(&host, control, sizeof host, cudaMemcpyDeviceToHost);
    if (error == cudaSuccess) {
        if (base >= 0)
            host.probe_ticket_base = (uint32_t)base;
        host.counter = dl_counter_word(host.probe_ticket_base,
                                       epoch >= 0 ? (uint32_t)epoch : dl_counter_epoch(host.counter));
        host.probe_delay_ns = (uint32_t)(h->test_delay_us * 1000);
        host.probe_count_stats = (uint32_t)h->count_stats;
        error = cudaMemcpy(control, &host, sizeof host, cudaMemcpyHostToDevice);
    }
    return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "setting the probe");
}

static dlscan_status dl_gpu_set_probe(dlscan_handle_t h) { return dl_gpu_update_control(h, -1, -1); }

/* Clears the descriptors too: those of an earlier call that used `epoch` must not pass for
 * the next call's. */
static dlscan_status dl_gpu_set_epoch(dlscan_handle_t h, uint32_t epoch)
{
    dl_gpu_state *s = dl_gpu(h);
    const dlscan_status status = dl_gpu_update_control(h, -1, epoch);
    if (status != DLSCAN_SUCCESS || !s->descriptor_words)
        return status;
    const cudaError_t error = dl_gpu_zero_words(s->descriptors, s->descriptor_words);
    return error == cudaSuccess ? DLSCAN_SUCCESS : dl_cuda_fail(h, error, "clearing the descriptors");
}

/* Moves the tile counter and its base together. */
static dlscan_status dl_gpu_set_ticket_base(dlscan_handle_t h, uint32_t base)
{
    return dl_gpu_update_control(h, base, -1);
}

/* The handle's scratch for a call's few values (a scan across ranks: its totals and prefixes),
 * grown as dl_gpu_reserve grows the descriptors: never while the stream is captured. Calls are
 * ordered on the handle's streams, so one call's scratch is free when the next call's work runs. */
static dlscan_status dl_gpu_scratch(dlscan_handle_t h, size_t bytes, cudaStream_t stream, void **p)
{
    dl_gpu_state *s = dl_gpu(h);
    if (bytes > s->scratch_bytes) {
        char what[160];
        snprintf(what, sizeof what, "%zu bytes of scratch, the handle has %zu; make the same call once",
                 bytes, s->scratch_bytes);
        const dlscan_status status = dl_gpu_may_grow(h, stream, what);
        if (status != DLSCAN_SUCCESS)
            return status;
        void *grown = NULL;
        const cudaError_t error = cudaMalloc(&grown, bytes);
        if (error != cudaSuccess)
            return dl_cuda_fail(h, error, "cudaMalloc of the handle's scratch");
        cudaFree(s->scratch); /* waits for the device */
        s->scratch = grown;
        s->scratch_bytes = bytes;
    }
    *p = s->scratch;
    return DLSCAN_SUCCESS;
}

static void dl_gpu_destroy(dlscan_handle_t h)
{
    dl_gpu_state *s = dl_gpu(h);
    cudaFree(s->descriptors); /* cudaFree waits for the device */
    cudaFree(s->scratch);
    cudaFree(s->control);
    free(s);
}

static const dl_backend dl_gpu_backend = {
    .name = "gpu",
    .device_memory = 1,
    .tile_items = dl_gpu_tile_items,
    .compact_tile_items = dl_gpu_compact_tile_items,
    .segment_tile_items = dl_gpu_segment_tile_items,
    .axis_tiles = dl_gpu_axis_tiles,
    .check_range = dl_gpu_check_range,
    .reserve = dl_gpu_reserve,
    .scan = dl_gpu_scan,
    .compact = dl_gpu_compact,
    .scratch = dl_gpu_scratch,
    .read_stats = dl_gpu_read_stats,
    .reset_stats = dl_gpu_reset_stats,
    .set_probe = dl_gpu_set_probe,
    .set_epoch = dl_gpu_set_epoch,
    .set_ticket_base = dl_gpu_set_ticket_base,
    .set_tile_items = NULL, /* GPU tiles are fixed at build time */
    .destroy = dl_gpu_destroy,
};

dlscan_status dl_gpu_backend_init(dlscan_handle_t h)
{
    int count = 0;
    cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return dl_fail(h, DLSCAN_ERROR_NO_DEVICE, "no CUDA device: %s",
                       error == cudaSuccess ? "none found" : cudaGetErrorString(error));
    }
    dl_gpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return DLSCAN_ERROR_OUT_OF_MEMORY;
    h->backend = &dl_gpu_backend;
    h->backend_state = s;
    const dl_control initial = {.counter = dl_counter_word(0, DL_EPOCH_FIRST)};
    if ((error = cudaGetDevice(&s->device)) != cudaSuccess ||
        (error = cudaMalloc((void **)&s->control, sizeof *s->control)) != cudaSuccess ||
        (error = cudaMemcpy(s->control, &initial, sizeof initial, cudaMemcpyHostToDevice)) !=
            cudaSuccess) {
        cudaFree(s->control);
        free(s);
        return dl_cuda_fail(h, error, "creating the handle's control block");
    }
    /* The device's row of the policy table (device/policy.h). */
    dl_device_facts facts = {0};
    int bus_bits = 0, memory_khz = 0;
    if ((error = cudaDeviceGetAttribute(&facts.major, cudaDevAttrComputeCapabilityMajor, s->device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&facts.minor, cudaDevAttrComputeCapabilityMinor, s->device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&facts.sms, cudaDevAttrMultiProcessorCount, s->device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&facts.shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                        s->device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&facts.l2_bytes, cudaDevAttrL2CacheSize, s->device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, s->device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, s->device)) != cudaSuccess) {
        cudaFree(s->control);
        free(s);
        return dl_cuda_fail(h, error, "reading the device's properties");
    }
    facts.memory_gbs = (long long)bus_bits / 8 * memory_khz * 2 / 1000000;
    s->policy = dl_policy_for(&facts);
    if (s->policy->persistent)
        s->persistent_blocks = (uint32_t)facts.sms * (uint32_t)s->policy->blocks_per_sm;
    s->reduce_blocks = (uint32_t)facts.sms * (uint32_t)s->policy->reduce_blocks;
    enum cudaDriverEntryPointQueryResult found;
    void *function = NULL;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &function, 3020, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
        s->get_address_range = (dl_get_address_range_fn)function;
    function = NULL;
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &function, 7000, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
        s->pointer_attributes = (dl_pointer_attributes_fn)function;
    (void)cudaGetLastError();
    return DLSCAN_SUCCESS;
}

int dl_is_device_pointer(const void *p)
{
    struct cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attributes.type == cudaMemoryTypeDevice;
}
