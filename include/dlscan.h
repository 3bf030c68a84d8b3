/*
 * dlscan.h: the public C API of dlscan, a device-wide prefix scan for NVIDIA GPUs that
 * runs as one kernel launch per call (single-pass scan with decoupled look-back,
 * Merrill & Garland 2016), with a CPU backend that runs the same protocol on threads.
 *
 * Conventions, as in NCCL and zstd:
 * - every call returns a dlscan_status; outputs go through pointers;
 * - counts are size_t, inputs are const, the stream comes last;
 * - GPU calls only enqueue work on `stream` and return: no host-device synchronization
 *   and no allocation happen in a steady-state call, so a call can be captured in a
 *   CUDA graph (call dlscan_reserve first, so that nothing has to grow while capturing);
 * - on failure nothing is written to the output, the handle stays usable and
 *   dlscan_last_error(h) says which argument or which CUDA call was wrong.
 *
 * A handle may be used by one host thread at a time, and its calls must be ordered:
 * enqueue them on one stream, or order the streams yourself. Two handles may run at
 * the same time on two streams.
 */
#ifndef DLSCAN_H
#define DLSCAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLSCAN_VERSION_MAJOR 0
#define DLSCAN_VERSION_MINOR 1
#define DLSCAN_VERSION_PATCH 0
/* One number: major * 10000 + minor * 100 + patch. */
#define DLSCAN_VERSION \
    (DLSCAN_VERSION_MAJOR * 10000 + DLSCAN_VERSION_MINOR * 100 + DLSCAN_VERSION_PATCH)

#if defined(DLSCAN_BUILDING_LIBRARY) && defined(__GNUC__)
#define DLSCAN_API __attribute__((visibility("default")))
#else
#define DLSCAN_API
#endif

/* The CUDA runtime's stream type, declared here so that this header needs no CUDA header.
 * The typedef is identical to the one in <driver_types.h>, so either order of includes
 * works. */
struct CUstream_st;
typedef struct CUstream_st *cudaStream_t;

/* The one list of statuses: it generates the enum below and dlscan_status_string().
 * X(name, number, message). The numbers are fixed; new statuses are added at the end. */
#define DLSCAN_STATUS_LIST(X)                                                                   \
    X(DLSCAN_SUCCESS, 0, "success")                                                             \
    X(DLSCAN_ERROR_INVALID_HANDLE, 1, "the handle is NULL")                                     \
    X(DLSCAN_ERROR_INVALID_ARGUMENT, 2,                                                         \
      "an argument is NULL or out of range; dlscan_last_error() names it")                      \
    X(DLSCAN_ERROR_INVALID_TYPE, 3, "unknown dlscan_type, or one this call does not take")                                      \
    X(DLSCAN_ERROR_INVALID_OP, 4, "unknown dlscan_op")                                          \
    X(DLSCAN_ERROR_NOT_DEVICE_MEMORY, 5,                                                        \
      "a pointer is not memory this handle can scan: device memory of the handle's device "    \
      "for a GPU handle, host memory for a CPU handle")                                         \
    X(DLSCAN_ERROR_MISALIGNED, 6, "a pointer is not aligned to the size of its element type")  \
    X(DLSCAN_ERROR_OVERLAP, 7, "the input and output ranges overlap without being equal")      \
    X(DLSCAN_ERROR_OUT_OF_BOUNDS, 8, "n elements run past the end of the pointer's allocation") \
    X(DLSCAN_ERROR_NO_DEVICE, 9, "no usable CUDA device (or dlscan was built without CUDA)")   \
    X(DLSCAN_ERROR_WRONG_DEVICE, 10,                                                            \
      "the current CUDA device is not the device the handle was created on")                   \
    X(DLSCAN_ERROR_OUT_OF_MEMORY, 11, "out of memory while growing the handle's storage")       \
    X(DLSCAN_ERROR_CAPTURING, 12,                                                               \
      "the handle's storage must grow while the stream is being captured; call "               \
      "dlscan_reserve() before capturing")                                                      \
    X(DLSCAN_ERROR_CUDA, 13, "a CUDA call failed; dlscan_last_error() has the CUDA error")      \
    X(DLSCAN_ERROR_NOT_SUPPORTED, 14,                                                           \
      "not supported by this handle's backend, or a GPU call this build of dlscan left out "    \
      "(meson options only_types and only_ops)")                                                \
    X(DLSCAN_ERROR_SYSTEM, 15, "a system call failed (starting a thread)")                       \
    X(DLSCAN_ERROR_TYPE_PAIR, 16,                                                               \
      "dlscan does not scan this input type into this output type (dlscan.h lists the pairs)") \
    X(DLSCAN_ERROR_EXCHANGE, 17,                                                                \
      "the exchange between ranks failed (NCCL, MPI); dlscan_last_error() has its error")      \
    X(DLSCAN_ERROR_COMPILE, 18,                                                                 \
      "a user operator's source did not compile; dlscan_last_error() has the compiler's log")  \
    X(DLSCAN_ERROR_NO_COMPILER, 19,                                                             \
      "NVRTC, CUDA's run-time compiler (libnvrtc), could not be loaded: user operators on a "  \
      "GPU handle need it")

typedef enum dlscan_status {
#define DLSCAN_STATUS_ENUM_ENTRY(name, number, message) name = number,
    DLSCAN_STATUS_LIST(DLSCAN_STATUS_ENUM_ENTRY)
#undef DLSCAN_STATUS_ENUM_ENTRY
} dlscan_status;

/* Element types. Integer sums wrap around modulo 2^bits of the output type (two's
 * complement). FLOAT16 (IEEE binary16) and BFLOAT16 are 16-bit patterns on the host side, so
 * no CUDA header is needed: a uint16_t array holds them. Every type can be scanned; stream
 * compaction takes the first six (the 32- and 64-bit types). */
typedef enum dlscan_type {
    DLSCAN_INT32 = 0,
    DLSCAN_UINT32 = 1,
    DLSCAN_INT64 = 2,
    DLSCAN_UINT64 = 3,
    DLSCAN_FLOAT32 = 4,
    DLSCAN_FLOAT64 = 5,
    DLSCAN_INT8 = 6,
    DLSCAN_UINT8 = 7,
    DLSCAN_INT16 = 8,
    DLSCAN_UINT16 = 9,
    DLSCAN_FLOAT16 = 10,
    DLSCAN_BFLOAT16 = 11
} dlscan_type;

/* Operators, with their identities: sum 0 (-0.0 for floats, so that a sum of -0.0 items is
 * -0.0, as a left fold gives); min the largest value of the output type (+inf for floats; for
 * an 8- or 16-bit type scanned into itself, that type's own largest value, such as 127 for
 * int8, although it accumulates in 32 bits); max the output type's smallest value (-inf for
 * floats). min(a, b) is `b < a ? b : a` and max(a, b) is `a < b ? b : a`, with a the earlier
 * item, except for floats:
 * - NaN propagates, as in NumPy's minimum.accumulate and torch.cummin: from the first NaN
 *   on, every inclusive output of its scan (or segment, or reduce-by-key run) is a NaN, and
 *   so are the exclusive outputs after it. Which NaN (sign and payload) is not specified: the
 *   GPU gives a canonical quiet NaN.
 * - of two equal zeros, +0 or -0, either may come out. */
typedef enum dlscan_op { DLSCAN_SUM = 0, DLSCAN_MIN = 1, DLSCAN_MAX = 2 } dlscan_op;

/* A build of dlscan may hold a subset of the GPU kernels (meson options only_types and
 * only_ops; by default it holds all of them). A GPU call is built when every type it names
 * (a scan's or segmented scan's input and output types; compaction's item type;
 * reduce-by-key's key and value types) is in only_types and its operator, where it takes one,
 * in only_ops. Another call on a GPU handle returns DLSCAN_ERROR_NOT_SUPPORTED, and
 * dlscan_last_error() names the call and the options. CPU handles run every call. */

/* An opaque handle: the backend (GPU or CPU), the descriptor storage it keeps between
 * calls, its options and its last error message. */
typedef struct dlscan_handle *dlscan_handle_t;

/* ---- Versions and statuses ---- */

/* The library's version, as DLSCAN_VERSION computes it; compare with the header's. */
DLSCAN_API int dlscan_version(void);

/* A fixed English sentence for a status; never NULL ("unknown dlscan_status" for numbers
 * not in the list). */
DLSCAN_API const char *dlscan_status_string(dlscan_status status);

/* The detail of the last failed call on h: which argument, which CUDA error. The empty
 * string after a successful call. Valid until the next call on h. With h == NULL it
 * returns a fixed message saying so. */
DLSCAN_API const char *dlscan_last_error(dlscan_handle_t h);

/* ---- Handles ---- */

/* Creates a GPU handle bound to the current CUDA device. Allocates the handle's control
 * block on that device and synchronizes with it once, and picks the device's row of the
 * library's tuning table (which kernels run, and from what size). Kernels are loaded at their
 * first use in the process, CUDA's lazy loading, also where that first use is captured in a
 * graph. Returns DLSCAN_ERROR_NO_DEVICE
 * (and *h = NULL) where no CUDA device can be used, DLSCAN_ERROR_INVALID_ARGUMENT if h
 * is NULL. */
DLSCAN_API dlscan_status dlscan_create(dlscan_handle_t *h);

/* Creates a CPU handle: the same calls, run on host memory by `threads` threads (0: one
 * per online core). A CPU call runs to completion before it returns; `stream` is
 * ignored. Works without a GPU and in builds without CUDA. */
DLSCAN_API dlscan_status dlscan_create_cpu(dlscan_handle_t *h, int threads);

/* Frees the handle and its storage. Accepts NULL. For a GPU handle it waits for the
 * device first (work still queued may be using the storage). */
DLSCAN_API void dlscan_destroy(dlscan_handle_t h);

/* Grows the handle's storage so that scans of up to n items into `type` (the output type),
 * segmented or not, never allocate. Call it before capturing calls into a CUDA graph (for
 * columns and wide user states, dlscan_reserve_scan). Synchronizes the device when it must
 * grow. */
DLSCAN_API dlscan_status dlscan_reserve(dlscan_handle_t h, size_t n, dlscan_type type);

/* Items per partition (tile) of a scan whose output type is `type`, on this handle's
 * backend. Tests and tools use it to pick sizes at tile edges. A segmented scan (dlscan_scan
 * with keys or offsets) on a GPU handle takes tiles of half as many items. */
DLSCAN_API dlscan_status dlscan_tile_items(dlscan_handle_t h, dlscan_type type, size_t *items);

/* "gpu" or "cpu"; "invalid" for NULL. */
DLSCAN_API const char *dlscan_backend_name(dlscan_handle_t h);

/* ---- Scans ---- */

/* out[j] = in[0] op in[1] op ... op in[j], for j < n.
 *
 * d_in and d_out are device memory of the handle's device (host memory for a CPU
 * handle), aligned to the element size. d_out == d_in scans in place; other overlaps
 * are refused with DLSCAN_ERROR_OVERLAP. n == 0 succeeds and does nothing (NULL
 * pointers are then allowed). n may exceed 2^32.
 *
 * For a GPU handle the call enqueues one kernel on `stream` and returns; the first call
 * with a larger n than before may grow the handle's storage, which allocates and
 * synchronizes (see dlscan_reserve). The result of float sums: see
 * DLSCAN_OPTION_DETERMINISTIC.
 *
 * Errors: DLSCAN_ERROR_INVALID_HANDLE, _INVALID_ARGUMENT (a NULL pointer with n > 0, n too
 * large), _INVALID_TYPE, _INVALID_OP, _NOT_DEVICE_MEMORY, _MISALIGNED, _OVERLAP,
 * _OUT_OF_BOUNDS (n items run past the end of an allocation), _WRONG_DEVICE,
 * _OUT_OF_MEMORY, _CAPTURING, _CUDA (the launch failed; the CUDA error is in
 * dlscan_last_error). Errors from earlier asynchronous work are not detected here. */
DLSCAN_API dlscan_status dlscan_inclusive_scan(dlscan_handle_t h, const void *d_in, void *d_out,
                                               size_t n, dlscan_type type, dlscan_op op,
                                               cudaStream_t stream);

/* out[0] = init, out[j] = init op in[0] op ... op in[j-1], for 0 < j < n.
 *
 * init points to one host value of `type`, read before the call returns; NULL means the
 * operator's identity. Everything else as for dlscan_inclusive_scan. */
DLSCAN_API dlscan_status dlscan_exclusive_scan(dlscan_handle_t h, const void *d_in, void *d_out,
                                               size_t n, dlscan_type type, dlscan_op op,
                                               const void *init, cudaStream_t stream);

/* ---- Every scan: dlscan_scan ----
 *
 * One call for every scan: an output type apart from the input type, the init from the host
 * or from device memory, and the total written to device memory. The two calls above are
 * dlscan_scan with out_type = in_type.
 *
 * - The scan accumulates in out_type. Each item is first converted to out_type as C converts
 *   it: integers widen (sign-extended from signed types, so int8 -1 into uint32 is
 *   0xffffffff), float16 and bfloat16 convert exactly to float32. The pairs (in -> out):
 *     every type into itself;
 *     every integer type into each 32- or 64-bit integer type at least as wide;
 *     float16 and bfloat16 into float32; float32 into float64; int32 into float64.
 *   Others get DLSCAN_ERROR_TYPE_PAIR. An 8- or 16-bit type scanned into itself accumulates
 *   in 32 bits (float16 and bfloat16 in float32) and rounds each output to its type: integer
 *   sums wrap modulo 2^8 or 2^16 all the same, float sums are a float32 sum rounded once.
 *   The accuracy of float16 and bfloat16 outputs: each is its float32 running value rounded
 *   to the nearest 16-bit value (ties to even; past the largest finite value, +-inf), so a sum
 *   is within half a 16-bit unit in the last place of the float32 sum, which is as accurate as
 *   any float32 sum (DLSCAN_OPTION_DETERMINISTIC); min and max are exact.
 * - init (host memory, read before the call returns) or d_init (device memory of the handle's
 *   device, read when the kernel runs, so earlier work on the stream may write it; host memory
 *   for a CPU handle, like d_total): one
 *   out_type value, folded in first. For an exclusive scan it is out[0]; an inclusive scan
 *   starts from it too (out[j] = init op in[0] op ... op in[j]). Neither: the operator's
 *   identity. Both: DLSCAN_ERROR_INVALID_ARGUMENT.
 * - d_total (device memory, or NULL): gets init op in[0] op ... op in[n-1], as out_type (for
 *   n == 0, init itself, copied as a value: a signalling NaN init may arrive quieted). d_total may equal d_init: each call of a chain over chunks reads the
 *   running total there and leaves the next one, with no trip to the host. The total is an
 *   out_type value: a float16 or bfloat16 sum into itself, chained, rounds its running total
 *   to 16 bits at each chunk's end (chain float16 into float32 to keep float32 throughout).
 * - d_out == d_in scans in place where the two types have the same size. d_init and d_total
 *   may not overlap d_out, d_total not d_in; each is aligned to out_type's size.
 * - Segmented scans (the struct's second version): the scan starts over at the first item of
 *   every segment. With d_keys, a segment is a run of equal keys (compared bit for bit, as
 *   dlscan_unique compares them, so float keys -0.0 and 0.0 differ and a NaN equals the same NaN
 *   bits, where CUB's by-key scans compare with ==): n keys of key_type, any of the twelve
 *   types. With d_offsets,
 *   segment k is the items d_offsets[k] .. d_offsets[k+1] - 1 for k < num_segments (empty
 *   segments are allowed), and the items before d_offsets[0] or from d_offsets[num_segments]
 *   on belong to no segment: they are not written. Within a segment that starts at item s:
 *     inclusive: out[j] = init op in[s] op ... op in[j];
 *     exclusive: out[s] = init, out[j] = init op in[s] op ... op in[j-1];
 *   the init (host memory, or the identity) starting every segment. d_keys and d_offsets may
 *   not both be set; d_init and d_total are not taken with segments. The keys may not overlap
 *   d_in or d_out, the offsets not d_out. The offsets are num_segments + 1 size_t values in
 *   the memory the handle scans (device memory for a GPU handle), rising (each at least the
 *   one before) and at most n. A CPU handle checks all of that before it writes anything. A
 *   GPU handle cannot read them without waiting for the device, so it checks what the host
 *   knows (the pointer, its alignment, that num_segments + 1 offsets fit in its allocation,
 *   overlaps); that they rise and stay within n is the caller's promise: with offsets that
 *   break it, the values written to d_out[0 .. n-1] are unspecified, but nothing outside it
 *   is written and no offset past d_offsets[num_segments] is read.
 *
 *     a.d_keys = d_user_ids;  a.key_type = DLSCAN_INT64;   (per-user running totals)
 *
 * - Scans along an axis (the struct's third version): many scans of one length in one call. The
 *   n items are viewed as a C-contiguous array [outer][axis_length][axis_stride], and each of the
 *   outer x axis_stride scans runs down the middle axis: scan (o, j) has the axis_length items
 *   in[o * axis_length * axis_stride + k * axis_stride + j], k = 0 .. axis_length - 1.
 *     rows of a [B, L] array (cumsum along the last axis):   axis_length = L, axis_stride = 1;
 *     columns of an [N, M] array (along the first axis):    axis_length = N, axis_stride = M;
 *     axis d of an N-D array: axis_length = its extent, axis_stride = the product of the
 *     extents after it.
 *   axis_length == 0 is a plain scan (axis_stride must then be 0 too); axis_stride 0 means 1.
 *   n must be a multiple of axis_length x axis_stride. Every scan starts from init (host
 *   memory, or the identity), as a segment does; inclusive and exclusive, every pair and
 *   operator, in place. d_totals, where not NULL, gets each scan's total in out_type, n /
 *   axis_length values in the order (o, j): init op every item of the scan (the row sums of
 *   a [B, L] array). It may not overlap d_in or d_out. d_init, d_total, d_keys and d_offsets
 *   are not taken with an axis. On a GPU, rows (axis_stride 1) run on the segmented scans'
 *   tiles (rows of a type into itself: short ones each tile on its own, long ones as plain
 *   scans of their own, on at most as many tiles), and other strides give each column of a
 *   tile a descriptor of its own (one [N, 2] or [N, 4] array of a 32-bit type into itself, or
 *   [N, 2] of a 64-bit type, runs as a plain scan of its N rows, on fewer): such a call needs
 *   more descriptor storage than
 *   dlscan_reserve(n) provides, so before capturing one in a graph, call dlscan_reserve_scan
 *   with its arguments.
 *
 *     a.n = B * L;  a.axis_length = L;  a.d_totals = d_row_sums;   (B rows of L items)
 *
 * - The struct: start from DLSCAN_SCAN_ARGS_INIT and set the fields you need. `size` says
 *   which fields the caller was built with: later versions add fields at the end only, and a
 *   library takes the size of any version up to its own (DLSCAN_SCAN_ARGS_SIZE_V1, _V2, ...;
 *   fields the caller lacks keep their defaults), or a larger one whose fields unknown to it
 *   are all zero (DLSCAN_ERROR_NOT_SUPPORTED otherwise), so a program keeps working with later
 *   libraries. Any other size, one that falls between two versions' sizes, is no version's:
 *   DLSCAN_ERROR_INVALID_ARGUMENT.
 *
 *     dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
 *     a.d_in = d_flags;    a.in_type = DLSCAN_UINT8;
 *     a.d_out = d_offsets; a.out_type = DLSCAN_INT64;
 *     a.n = n;             a.exclusive = 1;
 *     dlscan_status status = dlscan_scan(h, &a, stream);
 *
 * Errors: those of the two calls above, DLSCAN_ERROR_TYPE_PAIR, and
 * DLSCAN_ERROR_INVALID_ARGUMENT for args == NULL, a size smaller than the first version's
 * (DLSCAN_SCAN_ARGS_SIZE_V1) or between two versions' sizes, exclusive not 0 or 1, both
 * inits; with segments, both d_keys and d_offsets, num_segments without d_offsets, d_init or
 * d_total, and on a CPU handle offsets that fall or pass n; along an axis, an n that is no
 * multiple of axis_length x axis_stride (or a product that overflows), axis_stride or d_totals
 * without axis_length, or d_init, d_total, d_keys or d_offsets set. DLSCAN_ERROR_INVALID_TYPE for a
 * key_type that is no dlscan_type, with or without d_keys (it is checked like every field,
 * although only d_keys reads it). */
typedef struct dlscan_scan_args {
    size_t size;          /* sizeof(dlscan_scan_args) as the caller was compiled */
    const void *d_in;     /* n items of in_type */
    void *d_out;          /* n items of out_type */
    size_t n;
    dlscan_type in_type;
    dlscan_type out_type; /* the accumulator */
    dlscan_op op;
    int exclusive;        /* 0: inclusive scan; 1: exclusive scan */
    const void *init;     /* one out_type value in host memory, or NULL */
    const void *d_init;   /* one out_type value in device memory, or NULL */
    void *d_total;        /* one out_type value in device memory, or NULL */
    /* ---- version 2: segmented scans ---- */
    const void *d_keys;       /* n keys of key_type: runs of equal keys are segments, or NULL */
    dlscan_type key_type;
    const size_t *d_offsets;  /* num_segments + 1 segment offsets, or NULL */
    size_t num_segments;
    /* ---- version 3: scans along an axis ---- */
    size_t axis_length;       /* items in each scan, or 0: one scan of all n items */
    size_t axis_stride;       /* items between two consecutive items of a scan (0: 1) */
    void *d_totals;           /* n / axis_length out_type values in device memory, or NULL */
    /* ---- version 4: your own operator (below, "Your own operator") ---- */
    const struct dlscan_operator *custom; /* NULL: `op` on in_type and out_type */
    const void *d_in2;        /* the operator's second input: n items of its in2_bytes, or NULL */
} dlscan_scan_args;

/* The sizes of the struct's versions: the first is the smallest `size` taken. */
#define DLSCAN_SCAN_ARGS_SIZE_V1 (offsetof(dlscan_scan_args, d_total) + sizeof(void *))
#define DLSCAN_SCAN_ARGS_SIZE_V2 (offsetof(dlscan_scan_args, num_segments) + sizeof(size_t))
#define DLSCAN_SCAN_ARGS_SIZE_V3 (offsetof(dlscan_scan_args, d_totals) + sizeof(void *))
#define DLSCAN_SCAN_ARGS_SIZE_V4 (offsetof(dlscan_scan_args, d_in2) + sizeof(void *))
#define DLSCAN_SCAN_ARGS_INIT                                                                   \
    {sizeof(dlscan_scan_args), NULL, NULL, 0, DLSCAN_INT32, DLSCAN_INT32, DLSCAN_SUM, 0, NULL, NULL,  \
     NULL, NULL, DLSCAN_INT32, NULL, 0, 0, 0, NULL, NULL, NULL}

DLSCAN_API dlscan_status dlscan_scan(dlscan_handle_t h, const dlscan_scan_args *args,
                                     cudaStream_t stream);

/* Grows the handle's storage so that dlscan_scan with these arguments never allocates: the scans
 * dlscan_reserve cannot size (along columns, where each column of a tile has a descriptor of its
 * own, and with a user operator whose state is wider than 8 bytes) and any other. The arguments
 * are checked as dlscan_scan checks them, with its errors, so pass the ones the captured call
 * will take; nothing is read from or written to their memory. Where the buffers are not known
 * yet, leave d_in and d_out (and d_in2) all NULL: what a call takes depends only on n, the types,
 * the operator and the axis. Synchronizes the device when it must grow. */
DLSCAN_API dlscan_status dlscan_reserve_scan(dlscan_handle_t h, const dlscan_scan_args *args);

/* ---- Your own operator ----
 *
 * Any associative operator on a state of up to 32 bytes: a linear recurrence h[t] = a[t] h[t-1] +
 * b[t] (the state (a, b), combined as (a1, b1) then (a2, b2) -> (a1 a2, a2 b1 + b2)), a product,
 * logcumsumexp, an arg-max with its index, a matrix product. The operator need not commute:
 * `earlier` is always the state of the items before `later`'s.
 *
 * An operator is made once, on a handle, and then given to dlscan_scan (the struct's version 4:
 * args.custom), which scans with it as with a built-in operator:
 *   - the items of d_in (and, where the operator takes a second input, of args.d_in2, item for
 *     item) become states through its load function (or each item is a state), the states are
 *     scanned, and each output state becomes an item of d_out through its store function (or is
 *     written as it is);
 *   - exclusive, init and d_init (one state, host or device memory), d_total (one state: init
 *     combined with every item's, so a chain over chunks passes d_total as the next call's d_init)
 *     and scans in place (d_out == d_in where in_bytes == out_bytes) work as for the built-in
 *     operators; in_type, out_type and op are not read.
 *   - Along rows (axis_length, axis_stride 0 or 1: a batch [B, L] of scans of L items, as for the
 *     built-in operators): every row starts from init, and d_totals, where set, gets each row's
 *     final state (n / axis_length states, aligned to 4 bytes). The kernel scans the state with a
 *     flag that a row starts (4 bytes more), so a state of 32 bytes scans no rows. On a GPU the
 *     first scan along rows with an operator compiles its program of rows (as the operator's
 *     making did, and cached alike); rows whose length is a multiple of the operator's tile on
 *     the GPU (256 threads x 32, 16, 8 or 4 items for a state of up to 4, 8, 16 or 28 bytes), or
 *     divides it and is a multiple of an eighth of it, need no flag and run on the operator's
 *     one-scan program.
 *   - Over offsets (d_offsets and num_segments, as for the built-in operators): every segment
 *     starts from init, and the items outside the segments are not written; the same flag as
 *     along rows, so a state of 32 bytes scans no segments. The first such scan with an
 *     operator compiles its program of segments, as along rows.
 *   - By key (d_keys and key_type, as for the built-in operators): every run of keys of the same
 *     bits starts from init; the same flag, and a program of its own, compiled on first use.
 *   - Down columns (axis_length, axis_stride > 1, as for the built-in operators): every column
 *     starts from init, and d_totals, where set, gets each column's final state (n / axis_length
 *     states, aligned to 4 bytes); states of every size up to 32 bytes. A program of its own,
 *     compiled on first use.
 *   - dlscan_reduce takes none; reduce-by-key takes one through dlscan_reduce_by_key_custom.
 *   - A state wider than 8 bytes (along rows or in segments, than 4 bytes) takes more descriptor
 *     storage than dlscan_reserve(n) provides, and a scan along rows or in segments needs its
 *     program: before capturing such a scan in a graph, call dlscan_reserve_scan with its
 *     arguments (which compiles the program where it is missing).
 * On a GPU handle the operator is CUDA C source, compiled by NVRTC (CUDA's run-time compiler,
 * loaded from libnvrtc when first needed) for the handle's GPU into dlscan's scan kernel when the
 * operator is made, and kept: a scan with it costs what a built-in scan costs. The compiled code
 * is cached in memory (for the process) and on disk, keyed by the source, the sizes, the identity,
 * the GPU's architecture and the library's version: in $DLSCAN_CACHE_DIR, or else
 * $XDG_CACHE_HOME/dlscan or ~/.cache/dlscan; DLSCAN_CACHE_DIR=off turns the disk cache off. On a
 * CPU handle the operator is C functions. One description may carry both, so one program runs on
 * either handle.
 *
 * The source (CUDA C, compiled as C++17 device code; no #include is needed or available beyond
 * <stdint.h>) defines:
 *     dlscan_state                                   a type of state_bytes bytes;
 *     __device__ dlscan_state dlscan_combine(dlscan_state earlier, dlscan_state later);
 *   with DLSCAN_OPERATOR_LOAD: the item types dlscan_in (in_bytes) and, for a second input,
 *   dlscan_in2 (in2_bytes), and
 *     __device__ dlscan_state dlscan_load(dlscan_in x)  or  dlscan_load(dlscan_in x, dlscan_in2 y);
 *   with DLSCAN_OPERATOR_STORE: the output type dlscan_out (out_bytes), and
 *     __device__ dlscan_out dlscan_store(dlscan_state s);
 * A size that differs from the description's is a compile error. The C functions do the same on
 * bytes: combine(result, earlier, later), load(state, item, item2) (item2 NULL with one input)
 * and store(item, state); result may equal earlier or later.
 *
 *     static const char source[] =
 *         "typedef struct { float a, b; } dlscan_state;\n"
 *         "typedef float dlscan_in; typedef float dlscan_in2; typedef float dlscan_out;\n"
 *         "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)\n"
 *         "{ return dlscan_state{x.a * y.a, y.a * x.b + y.b}; }\n"
 *         "__device__ dlscan_state dlscan_load(float a, float b) { return dlscan_state{a, b}; }\n"
 *         "__device__ float dlscan_store(dlscan_state s) { return s.b; }\n";
 *
 * (or dlscan_operator_builtin, below, with DLSCAN_BUILTIN_LINEAR_RECURRENCE).
 *
 * Errors of dlscan_operator_create: DLSCAN_ERROR_INVALID_ARGUMENT (a NULL desc, identity or op,
 * a size out of range, a GPU handle without source or a CPU handle without combine, a flag's
 * function missing), DLSCAN_ERROR_COMPILE (the log in dlscan_last_error(h)),
 * DLSCAN_ERROR_NO_COMPILER, DLSCAN_ERROR_CUDA (loading the compiled code), and
 * DLSCAN_ERROR_OUT_OF_MEMORY; on failure *op is NULL. A scan with an operator made on a handle of
 * another backend or GPU gets DLSCAN_ERROR_INVALID_ARGUMENT. */
typedef struct dlscan_operator *dlscan_operator_t;

#define DLSCAN_STATE_MAX_BYTES 32
#define DLSCAN_OPERATOR_LOAD 1u  /* items become states through load (else an item is a state) */
#define DLSCAN_OPERATOR_STORE 2u /* states become outputs through store (else an output is a state) */

typedef struct dlscan_operator_desc {
    size_t size;            /* sizeof(dlscan_operator_desc) */
    size_t state_bytes;     /* 4 .. 32, a multiple of 4 */
    const void *identity;   /* state_bytes of host memory: combine(identity, s) = s = combine(s, identity) */
    unsigned flags;         /* DLSCAN_OPERATOR_LOAD, DLSCAN_OPERATOR_STORE */
    size_t in_bytes;        /* an item of d_in, 1 .. 32 (without LOAD: state_bytes) */
    size_t in2_bytes;       /* an item of d_in2, 1 .. 32, or 0: one input (only with LOAD) */
    size_t out_bytes;       /* an item of d_out, 1 .. 32 (without STORE: state_bytes) */
    const char *source;     /* GPU handles: the CUDA C source above */
    void (*combine)(void *result, const void *earlier, const void *later); /* CPU handles */
    void (*load)(void *state, const void *item, const void *item2);        /* CPU, with LOAD */
    void (*store)(void *item, const void *state);                          /* CPU, with STORE */
} dlscan_operator_desc;

/* Makes an operator on h's backend (and GPU): on a GPU handle compiles its source, or finds it
 * compiled in the cache; on a CPU handle keeps its functions. The description is copied. */
DLSCAN_API dlscan_status dlscan_operator_create(dlscan_handle_t h, const dlscan_operator_desc *desc,
                                                dlscan_operator_t *op);

/* Frees an operator (NULL is taken). Scans enqueued with it must have finished. */
DLSCAN_API void dlscan_operator_destroy(dlscan_operator_t op);

/* How the operator's code was had, on a GPU handle: *milliseconds the time dlscan_operator_create
 * took, *source 0 compiled now, 1 from the process's cache, 2 from the disk cache (CPU handles: 0
 * and 0). Either pointer may be NULL. */
DLSCAN_API dlscan_status dlscan_operator_info(dlscan_operator_t op, double *milliseconds, int *source);

/* Built-in operators, made by the same means (no kernel of their own is compiled into dlscan).
 * type: the items', outputs' and state's type. */
typedef enum dlscan_builtin {
    /* x[0] x[1] ... x[j]: int32, uint32, int64, uint64 (wrapping), float32, float64. */
    DLSCAN_BUILTIN_PRODUCT = 0,
    /* log(exp(x[0]) + ... + exp(x[j])) without overflow (torch.logcumsumexp): float32, float64.
     * The state is the running maximum and the sum of exp(x - maximum). */
    DLSCAN_BUILTIN_LOGSUMEXP = 1,
    /* h[j] = a[j] h[j-1] + b[j], h[-1] = 0: a from d_in, b from d_in2; float32, float64. The state
     * is (a, b) of two values of type (combined as above); an init is the state (1, h0) for a
     * start of h0 (an exclusive scan's first output is then h0), and d_total leaves the state
     * whose b is the last h, for a chain. With `parameter` pointing to one value of type, a is
     * that value for every item and the scan reads b alone, from d_in. */
    DLSCAN_BUILTIN_LINEAR_RECURRENCE = 2,
    /* The same recurrence over complex numbers (the SSMs' diagonal recurrences): type float32 for
     * complex64 items, float64 for complex128, each item its real part, then its imaginary part
     * (C's float _Complex, NumPy's and PyTorch's complex64 and complex128). The state is (a, b),
     * four values of type; an init is (1 + 0i, h0); parameter, where set, points to one complex a
     * (two values of type). A complex128 state is 32 bytes: it scans no rows or segments. */
    DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE = 3
} dlscan_builtin;

/* Makes the built-in operator `which` on `type`; parameter: see the operator (NULL otherwise).
 * Errors: dlscan_operator_create's, and DLSCAN_ERROR_INVALID_TYPE for a type it does not take. */
DLSCAN_API dlscan_status dlscan_operator_builtin(dlscan_handle_t h, dlscan_builtin which, dlscan_type type,
                                                 const void *parameter, dlscan_operator_t *op);

/* ---- Reductions: dlscan_reduce ----
 *
 * d_total gets init op in[0] op ... op in[n-1] as out_type: what dlscan_scan writes to its
 * d_total for the same arguments, without writing a scan (one read of each item). The pairs,
 * the accumulation and the init (host memory, or NULL for the operator's identity) are
 * dlscan_scan's; n == 0 writes the init. d_total (device memory for a GPU handle, host memory
 * for a CPU handle) is aligned to out_type's size and may not overlap d_in. A float sum groups
 * the items otherwise than a scan does, so its last bits may differ from a scan's total;
 * DLSCAN_OPTION_DETERMINISTIC makes them the same from run to run, as for the scans.
 * Errors: dlscan_scan's, and DLSCAN_ERROR_INVALID_ARGUMENT for a NULL d_total. */
DLSCAN_API dlscan_status dlscan_reduce(dlscan_handle_t h, const void *d_in, void *d_total, size_t n,
                                       dlscan_type in_type, dlscan_type out_type, dlscan_op op,
                                       const void *init, cudaStream_t stream);

/* ---- Stream compaction ----
 *
 * Each call is one kernel launch on the scan's machinery: the exclusive prefix of the
 * keep-flags (or run heads) is each kept item's output position. The order of the input is
 * kept (stable). The count goes to device memory (a size_t at d_num_selected / d_num_runs),
 * so nothing synchronizes; n == 0 writes a count of 0.
 *
 * In place: d_out == d_in (and for reduce-by-key d_keys_out == d_keys_in, d_values_out ==
 * d_values_in) is supported. It is safe because of the single pass: a tile writes its
 * output only after every tile before it has published its descriptor, that is after
 * those tiles have read their input, and each item only ever moves to a lower index.
 * Other overlaps between inputs, outputs and counts are refused (DLSCAN_ERROR_OVERLAP).
 *
 * Equality (dlscan_unique, dlscan_run_length_encode, dlscan_reduce_by_key) compares the
 * bits of the items: integers as usual; floats with -0.0 and 0.0 as different values and a
 * NaN equal to the same NaN bits. Errors: as for the scans, plus DLSCAN_ERROR_INVALID_ARGUMENT
 * for an unknown predicate or a NULL operand that the predicate needs. */

/* select_if's test of in[i] against the operand. */
typedef enum dlscan_predicate {
    DLSCAN_LESS = 0,          /* in[i] <  operand */
    DLSCAN_LESS_EQUAL = 1,    /* in[i] <= operand */
    DLSCAN_GREATER = 2,       /* in[i] >  operand */
    DLSCAN_GREATER_EQUAL = 3, /* in[i] >= operand */
    DLSCAN_EQUAL = 4,         /* in[i] == operand */
    DLSCAN_NOT_EQUAL = 5,     /* in[i] != operand */
    DLSCAN_NONZERO = 6        /* in[i] != 0 (operand unused, may be NULL) */
} dlscan_predicate;

/* Keeps in[i] where the byte flags[i] is not 0. */
DLSCAN_API dlscan_status dlscan_select_flagged(dlscan_handle_t h, const void *d_in,
                                               const unsigned char *d_flags, void *d_out,
                                               size_t *d_num_selected, size_t n, dlscan_type type,
                                               cudaStream_t stream);

/* Keeps in[i] where `in[i] predicate operand` holds; operand points to one host value of
 * `type` (C comparison semantics: a NaN passes only DLSCAN_NOT_EQUAL and DLSCAN_NONZERO). */
DLSCAN_API dlscan_status dlscan_select_if(dlscan_handle_t h, const void *d_in, void *d_out,
                                          size_t *d_num_selected, size_t n, dlscan_type type,
                                          dlscan_predicate predicate, const void *operand,
                                          cudaStream_t stream);

/* Keeps in[i] where i == 0 or in[i] differs from in[i-1]. */
DLSCAN_API dlscan_status dlscan_unique(dlscan_handle_t h, const void *d_in, void *d_out,
                                       size_t *d_num_selected, size_t n, dlscan_type type,
                                       cudaStream_t stream);

/* Runs of equal items: d_unique_out[k] is the item of run k and d_run_lengths[k] its length
 * (size_t), for k < *d_num_runs. d_unique_out may equal d_in. */
DLSCAN_API dlscan_status dlscan_run_length_encode(dlscan_handle_t h, const void *d_in,
                                                  void *d_unique_out, size_t *d_run_lengths,
                                                  size_t *d_num_runs, size_t n, dlscan_type type,
                                                  cudaStream_t stream);

/* Runs of equal keys: d_keys_out[k] is the key of run k and d_values_out[k] the reduction
 * (op: sum, min or max, in input order) of its values, for k < *d_num_runs. Float sums are
 * deterministic as for the scans (DLSCAN_OPTION_DETERMINISTIC). */
DLSCAN_API dlscan_status dlscan_reduce_by_key(dlscan_handle_t h, const void *d_keys_in,
                                              const void *d_values_in, void *d_keys_out,
                                              void *d_values_out, size_t *d_num_runs, size_t n,
                                              dlscan_type key_type, dlscan_type value_type,
                                              dlscan_op op, cudaStream_t stream);

/* Reduce-by-key with a user operator (dlscan_operator_t, "Your own operator" above): for each run
 * of keys of the same bits in d_keys_in (n keys of key_type, any type: 1 to 8 bytes compared bit
 * for bit), its key in d_keys_out[k] and in d_values_out[k] the store of init (one state in host
 * memory, or NULL: the identity) combined with the loads of the run's values in input order
 * (d_values_in, and d_values_in2 item for item where op takes a second input), for
 * k < *d_num_runs. d_values_out may equal d_values_in (in_bytes == out_bytes); d_keys_out may not
 * share memory with d_keys_in. The values travel with a count of runs (4 bytes more), so states
 * of up to 28 bytes, and on a GPU at most 2^32 - 1 items a call (DLSCAN_ERROR_NOT_SUPPORTED
 * past either). On a GPU handle the first call with an operator compiles its program of runs,
 * as a scan by key compiles its own, and grows the handle's descriptors to its size: make that
 * call once before capturing one in a CUDA graph. */
DLSCAN_API dlscan_status dlscan_reduce_by_key_custom(dlscan_handle_t h, dlscan_operator_t op,
                                                     const void *d_keys_in, const void *d_values_in,
                                                     const void *d_values_in2, void *d_keys_out,
                                                     void *d_values_out, size_t *d_num_runs, size_t n,
                                                     dlscan_type key_type, const void *init,
                                                     cudaStream_t stream);

/* ---- Scans across ranks: dlscan_scan_across ----
 *
 * One array spread over `ranks` participants (the processes of an MPI job, the GPUs of a NCCL
 * communicator): rank r holds the r-th slice, of any length (zero included), and each rank's
 * output is its slice of one scan of the whole array in rank order. Every rank calls
 * dlscan_scan_across with its own slice (args->d_in, d_out, n) and the same in_type, out_type,
 * op, exclusive and init value (from the host or from device memory). d_total, where a rank
 * sets it, gets the whole array's total (init op every item of every rank). Segments and axes
 * (the struct's versions 2 and 3) are not taken yet (DLSCAN_ERROR_NOT_SUPPORTED).
 *
 * The work, on each rank: a reduction of its slice (dlscan_reduce: one read), an all-gather of
 * the ranks' totals (one out_type value each), a scan of those few values from the init, and
 * the scan of the slice from its rank's prefix (one read, one write): 1.5 times the bytes of a
 * local scan. On a GPU handle every step is enqueued on `stream` (with the exchange's own
 * all-gather in between), so nothing waits for the device and a whole call can be captured in
 * a graph where the exchange allows it (NCCL does: make the same call once before capturing,
 * so that the handle's storage, descriptors and scratch for the ranks' totals, has grown).
 * Results: integers exactly as one scan; a float sum differs from one device's by rounding
 * only (each slice is reduced on its own and the totals folded in rank order); an 8- or 16-bit
 * output carries its prefix between ranks rounded to its type, as a chain over chunks does
 * (dlscan_scan, d_total): integer sums wrap the same, float16 and bfloat16 sums round once per
 * rank (scan into float32 to keep float32).
 *
 * The exchange is the caller's transport: dlscan_nccl.h and dlscan_mpi.h make one from a NCCL
 * or MPI communicator (each its own library, libdlscan_nccl and libdlscan_mpi). Its all_gather
 * gathers `bytes` from every rank's `send` into `recv` (ranks x bytes, in rank order), both in
 * the memory the handle scans: on a GPU handle (on_device 1) device memory, the gather
 * enqueued on `stream` after the work before it; on a CPU handle (on_device 0) host memory,
 * done when it returns. It returns 0, or non-zero with a message in why (why_size bytes). A
 * transport that could not be made (a NULL communicator, say) sets `error` to its reason: the
 * call then fails with DLSCAN_ERROR_EXCHANGE and that message, having done nothing.
 *
 * As with any collective, every rank must make the call. A rank whose arguments are refused
 * returns before the exchange, and the other ranks then wait in theirs: check the status on
 * every rank (for NCCL, abort the communicator on an error). Errors: dlscan_scan's,
 * DLSCAN_ERROR_INVALID_ARGUMENT for a NULL exchange, a rank outside 0 .. ranks - 1 or no
 * all_gather, DLSCAN_ERROR_NOT_SUPPORTED for segments or an axis, and DLSCAN_ERROR_EXCHANGE
 * where the transport could not be made or the all-gather failed. */
typedef struct dlscan_exchange {
    int rank;  /* this rank: 0 .. ranks - 1 */
    int ranks; /* at least 1 */
    int (*all_gather)(void *context, const void *send, void *recv, size_t bytes, int on_device,
                      cudaStream_t stream, char *why, size_t why_size);
    void *context;
    const char *error; /* NULL, or why the transport could not be made */
} dlscan_exchange;

DLSCAN_API dlscan_status dlscan_scan_across(dlscan_handle_t h, const dlscan_scan_args *args,
                                            const dlscan_exchange *exchange, cudaStream_t stream);

/* A select across ranks: each rank keeps its own items of its slice (in[i] where d_flags[i] is
 * not 0, as dlscan_select_flagged; with d_flags NULL, where `in[i] predicate operand` holds, as
 * dlscan_select_if), writes them to d_out from 0 and their count to *d_num_selected, as those
 * calls do, and learns where they go in the selection of the whole array: *d_offset gets the
 * count the ranks before it kept, *d_total_selected (where not NULL) the count of every rank.
 * The counts are size_t values in the memory the handle scans (device memory for a GPU handle),
 * written on `stream` with no trip to the host where the exchange needs none (NCCL). The items'
 * types are compaction's (the 32- and 64-bit types). Errors: those of the two select calls and
 * of dlscan_scan_across's exchange; d_offset and d_total_selected are checked as d_num_selected
 * is, before anything is written. */
DLSCAN_API dlscan_status dlscan_select_across(dlscan_handle_t h, const void *d_in,
                                              const unsigned char *d_flags, void *d_out,
                                              size_t *d_num_selected, size_t *d_offset,
                                              size_t *d_total_selected, size_t n, dlscan_type type,
                                              dlscan_predicate predicate, const void *operand,
                                              const dlscan_exchange *exchange, cudaStream_t stream);

/* ---- An exchange through the GPUs' memory: dlscan_peers ----
 *
 * The exchange of a scan across ranks whose GPUs reach each other's memory (the GPUs of one
 * host, over NVLink or PCIe, or ranks that share one GPU): one small kernel writes the rank's
 * value into every rank's device memory and waits for every rank's value in its own, with no
 * communication library in between (on the GPUs of one H200 host an all-gather of one value
 * through NCCL takes 15-27 us; bench/NOTES.md, "Scans across GPUs").
 *
 *   dlscan_peers_t peers;
 *   dlscan_peers_create(h, &bootstrap, stream, &peers);  (every rank, once; bootstrap: NCCL's, say)
 *   dlscan_exchange x = dlscan_peers_exchange(peers);
 *   dlscan_scan_across(h, &args, &x, stream);            (every rank, as often as needed)
 *   dlscan_peers_destroy(peers);                         (every rank, at the end)
 *
 * dlscan_peers_create is collective: every rank calls it on a GPU handle, with an exchange of
 * the same ranks (dlscan_nccl_peers_create and dlscan_mpi_peers_create make one from their
 * communicators). It allocates the rank's slots on the handle's device (64 bytes a rank),
 * all-gathers through `bootstrap` where each rank's are (a CUDA IPC handle, the process, the
 * host), waits for that on `stream`, and maps every rank's slots: within a process the pointer
 * itself (enabling peer access between two devices), between processes of one host through
 * cudaIpcOpenMemHandle. Whether every rank could is all-gathered too, so every rank succeeds or
 * every rank fails: DLSCAN_ERROR_NOT_SUPPORTED where a rank is on another host or cannot map
 * another's memory (scan through the bootstrap exchange itself then), DLSCAN_ERROR_EXCHANGE
 * where `bootstrap` failed, and for a CPU handle (its ranks exchange through MPI). Creation
 * waits for the device and cannot be captured in a graph; the calls through the exchange can.
 *
 * The exchange's all-gather takes values of up to 16 bytes of device memory of the handle's
 * device. Every rank makes the same calls through it in the same order, each enqueued after
 * the rank's previous one (on one stream, or on streams ordered by events), and, as with any
 * collective, a rank that never makes its call leaves the others' kernels waiting. Ranks that
 * share one GPU within one process must not wait for the whole device while another rank's call
 * waits, or neither goes on: a handle that grows its storage frees memory, and a kernel's first
 * load in the process (CUDA's lazy loading) may wait for the device. So dlscan_reserve each
 * handle for its largest slice first (dlscan_peers_create grows the scratch for the ranks'
 * values), and load the kernels at the start: CUDA_MODULE_LOADING=EAGER in the environment.
 * dlscan_peers_exchange(NULL) gives an exchange whose calls fail with DLSCAN_ERROR_EXCHANGE.
 * dlscan_peers_destroy unmaps and frees; call it on every rank once no rank's call is still
 * running (after cudaStreamSynchronize and a barrier of the caller's, say). NULL is ignored. */
typedef struct dlscan_peers *dlscan_peers_t;

DLSCAN_API dlscan_status dlscan_peers_create(dlscan_handle_t h, const dlscan_exchange *bootstrap,
                                             cudaStream_t stream, dlscan_peers_t *peers);
DLSCAN_API dlscan_exchange dlscan_peers_exchange(dlscan_peers_t peers);
DLSCAN_API void dlscan_peers_destroy(dlscan_peers_t peers);

/* ---- Options and diagnostics ---- */

typedef enum dlscan_option {
    /* 1: float32 and float64 sums (scans and reduce-by-key) are bitwise identical from run
     * to run on the same GPU with the same build: the look-back folds tile aggregates
     * strictly left to right, so every prefix is the same left fold whichever predecessor
     * the look-back stopped at. 0 (default on GPU handles): the look-back folds each window
     * as a tree, and the last bits of float sums may differ between runs. What 1 costs on an
     * H100 is in bench/NOTES.md ("Deterministic left fold"). CPU handles always fold left to
     * right. Other types and operators are exact either way. What is not fixed: results on
     * another GPU model or build, or with another tile configuration, can differ in the last
     * bits. Against a float64 scan of the same data a float sum differs by rounding only, at
     * most about (2 log2(tile items) + 16 + tiles before the item) * eps * sum of |x| (first
     * order; on CPU handles, whose tiles scan their items in order, add the item's position in
     * its tile), as long as no partial sum overflows. Either way the items are not added in the
     * order of a sequential loop: each tile is reduced as a tree (on CPU handles, in 8 lanes
     * first), so where a loop's running sum stays finite only because large items of opposite
     * signs cancel, a partial sum of a few of them can overflow to +-inf, and the result be inf
     * or NaN where the loop's is finite. Keep sums of any few items inside the type's range
     * (below about 1.7e38 for float32), or scan in float64. */
    DLSCAN_OPTION_DETERMINISTIC = 1,
    /* 1: count look-back events, read with dlscan_get_lookback_stats(). Default 0. Counting
     * is a test probe: only the testing build of the library (libdlscan_testing.a, built
     * with the tests and not installed) takes 1; the release library, whose kernels carry
     * no counters, answers it with DLSCAN_ERROR_NOT_SUPPORTED. */
    DLSCAN_OPTION_LOOKBACK_STATS = 2,
    /* (3, 4 and 6 are the testing build's own options.) */
    /* GPU handles: 1 (default) runs the persistent kernels (scans, segmented scans and
     * compaction) where the GPU (sm_90 and newer, as the device's row of the tuning table
     * says), the alignment (16-byte aligned inputs) and the size (from a count of tiles the
     * row sets for each kind of call) allow: a few blocks per SM that prefetch tiles into
     * shared memory.
     * 0 always runs one block per tile. Results are the same. */
    DLSCAN_OPTION_PERSISTENT = 5,
    /* CPU handles: items per tile, 16 .. 2^20 (default 65536; dlscan_tile_items() reports
     * it). Smaller tiles give more tiles, hence more look-back, for the same input. GPU
     * handles: DLSCAN_ERROR_NOT_SUPPORTED (their tiles are fixed at build time). */
    DLSCAN_OPTION_CPU_TILE_ITEMS = 7
} dlscan_option;

DLSCAN_API dlscan_status dlscan_set_option(dlscan_handle_t h, dlscan_option option, long long value);
DLSCAN_API dlscan_status dlscan_get_option(dlscan_handle_t h, dlscan_option option, long long *value);

/* Look-back events counted since the handle was created or the counters reset, while
 * DLSCAN_OPTION_LOOKBACK_STATS was 1 (all zero where the library does not count). */
typedef struct dlscan_lookback_stats {
    unsigned long long lookbacks;         /* tiles that looked back (all but tile 0)        */
    unsigned long long waits_on_x;        /* windows that held a not-ready descriptor (X)  */
    unsigned long long aggregates_folded; /* aggregates (A) folded into an exclusive prefix  */
    unsigned long long stops_at_p;        /* look-backs that ended at an inclusive prefix (P) */
    unsigned long long windows_slid;      /* windows of aggregates passed over (32 tiles in
                                              the persistent scan without
                                              DLSCAN_OPTION_DETERMINISTIC, 64 elsewhere)    */
    unsigned long long waits_for_p;       /* deterministic look-backs that filled their buffer
                                              of windows and waited for one P instead        */
} dlscan_lookback_stats;

/* Reads the counters. For a GPU handle it waits for the handle's device. */
DLSCAN_API dlscan_status dlscan_get_lookback_stats(dlscan_handle_t h, dlscan_lookback_stats *stats);
DLSCAN_API dlscan_status dlscan_reset_lookback_stats(dlscan_handle_t h);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_H */
