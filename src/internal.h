/*
 * internal.h: what the host layer's files share: the handle, the interface each backend
 * (GPU, CPU) implements, error reporting and facts about element types.
 */
#ifndef DLSCAN_INTERNAL_H
#define DLSCAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dlscan.h"
#include "launch.h"
#include "protocol.h"

/* A checked scan request, as the backends receive it. The scan accumulates in acc_type
 * (dl_acc_type of the output type) and rounds each output to `type`. */
typedef struct dl_scan_request {
    const void *in;
    void *out;            /* NULL: a reduction (dlscan_reduce), only the total is written */
    size_t n; /* > 0, or 0 with total set: only the total is written */
    size_t tiles; /* n in the backend's tiles for this scan (dl_backend's tile_items, or
                     segment_tile_items for a segmented scan or rows; axis_tiles for columns) */
    size_t tile_descriptors; /* descriptors a tile takes: 1, or one per column (axis_tiles) */
    dlscan_type in_type;  /* the items' type */
    dlscan_type type;     /* the output type */
    dlscan_type acc_type; /* dl_acc_type(type) */
    dlscan_op op;
    int exclusive;
    uint64_t init_bits;   /* the host init (or the identity), as a `type` value (dl_acc_bits
                             gives the accumulator's) */
    const void *init;     /* d_init: one `type` value read when the scan runs, or NULL */
    void *total;          /* d_total: one `type` value, or NULL */
    /* Segmented scans (at most one of keys and offsets; neither init nor total with them). */
    const void *keys;     /* n keys of key_size bytes, compared bit for bit, or NULL */
    size_t key_size;
    const size_t *offsets; /* num_segments + 1 segment offsets, or NULL */
    size_t num_segments;
    /* Scans along an axis (none of the above with them): n / (axis_length x axis_stride) arrays
     * [axis_length][axis_stride], each column of them scanned; axis_length 0: not along an axis. */
    size_t axis_length;
    size_t axis_stride;   /* 1: rows, on the segmented scans' tiles */
    void *totals;         /* d_totals: n / axis_length `type` values, or NULL */
    /* A user operator (with offsets or rows, or neither): in_type, type, acc_type, op and
     * init_bits are unused; init and total are states. */
    const struct dlscan_operator *custom;
    const void *in2;      /* its second input, or NULL */
    uint32_t init_state[DLSCAN_STATE_MAX_BYTES / 4]; /* the host init, or the identity */
    /* Its reduce-by-key (dlscan_reduce_by_key_custom; with keys): each run's key and output, in
     * keys_out and out, and the count in num_runs; NULL: a scan. */
    void *keys_out;
    size_t *num_runs;
    cudaStream_t stream;
} dl_scan_request;

/* A user operator (operator.c): its description's sizes and functions, and on a GPU handle its
 * compiled kernels (jit.c). */
struct dlscan_operator {
    int device_memory;      /* the backend it was made for: 1 GPU, 0 CPU */
    int device;             /* GPU handles: the device */
    size_t state_bytes, in_bytes, in2_bytes, out_bytes;
    unsigned flags;
    uint32_t identity[DLSCAN_STATE_MAX_BYTES / 4];
    void (*combine)(void *result, const void *earlier, const void *later);
    void (*load)(void *state, const void *item, const void *item2);
    void (*store)(void *item, const void *state);
    unsigned char item2[DLSCAN_STATE_MAX_BYTES]; /* a built-in's constant (in_bytes): the CPU's */
    int has_item2;                               /* load's item2, the GPU code's dlscan_constant */
    char *text;             /* GPU: the source, for the later programs */
    void *library[DL_USER_PROGRAMS]; /* GPU: the loaded programs (cudaLibrary_t, launch.h's
                               DL_USER_PROGRAM_*): one scan; along rows, over offsets, by key and
                               down columns, each made when first needed */
    const void *kernels[DL_USER_PROGRAMS][4]; /* GPU (cudaKernel_t), each program's: one block per
                                  tile, tree and left fold; persistent, tree and left fold (the
                                  columns': wide and narrow tiles) */
    double milliseconds;    /* dlscan_operator_info */
    int source;
};

/* A checked compaction request (dl_compact_kind in device/launch.h). */
typedef struct dl_compact_request {
    int kind;
    const void *in;              /* items (reduce-by-key: keys) */
    const unsigned char *flags;  /* select_flagged */
    const void *values_in;       /* reduce-by-key */
    void *out;                   /* kept items, run items or run keys */
    void *out2;                  /* run lengths (size_t) or run values */
    size_t *num_out;
    size_t n;                    /* may be 0: the count is written as 0 */
    dlscan_type type;            /* the items' (keys') type */
    dlscan_type value_type;      /* reduce-by-key */
    dlscan_op op;                /* reduce-by-key */
    int predicate;               /* select_if */
    uint64_t operand_bits;       /* select_if */
    cudaStream_t stream;
} dl_compact_request;

/* What a backend does. Every function gets a valid handle and checked arguments; each
 * reports its own errors through dl_fail(). */
typedef struct dl_backend {
    const char *name;
    int device_memory; /* 1: the handle scans device memory (GPU), 0: host memory (CPU) */
    size_t (*tile_items)(dlscan_handle_t h, dlscan_type type);
    size_t (*compact_tile_items)(dlscan_handle_t h);
    /* Items per tile of a segmented scan accumulating in `type`. */
    size_t (*segment_tile_items)(dlscan_handle_t h, dlscan_type type);
    /* Tiles of a scan along an axis of stride > 1 (columns) of n items accumulating in values of
     * acc_bytes, and in *descriptors each tile's descriptors; NULL where columns take no
     * descriptors (CPU). */
    size_t (*axis_tiles)(dlscan_handle_t h, size_t acc_bytes, size_t n, size_t length, size_t stride,
                         size_t *descriptors);
    /* Is [p, p + bytes) memory this backend can read and write? `what` names the argument. */
    dlscan_status (*check_range)(dlscan_handle_t h, const void *p, size_t bytes, const char *what);
    /* Grows the descriptor storage to `tiles` tiles; `stream` is the call's (NULL from
     * dlscan_reserve), for the GPU's capture check. */
    dlscan_status (*reserve)(dlscan_handle_t h, size_t tiles, int words_per_tile,
                             cudaStream_t stream);
    dlscan_status (*scan)(dlscan_handle_t h, const dl_scan_request *request);
    dlscan_status (*compact)(dlscan_handle_t h, const dl_compact_request *request);
    /* The handle's scratch, in the memory it scans, of at least `bytes`, for one call's few
     * values (the next call may reuse it: calls are ordered). */
    dlscan_status (*scratch)(dlscan_handle_t h, size_t bytes, cudaStream_t stream, void **p);
    /* Look-back counters and the probe's settings (DL_PROBING builds: src/testing.h).
     * set_probe hands h->count_stats and h->test_delay_us to the workers (NULL: each call
     * reads them from the handle). */
    dlscan_status (*read_stats)(dlscan_handle_t h, unsigned long long stats[DL_STAT_COUNT]);
    dlscan_status (*reset_stats)(dlscan_handle_t h);
    dlscan_status (*set_probe)(dlscan_handle_t h);
    dlscan_status (*set_epoch)(dlscan_handle_t h, uint32_t epoch);
    dlscan_status (*set_ticket_base)(dlscan_handle_t h, uint32_t base);
    /* DLSCAN_OPTION_CPU_TILE_ITEMS (NULL: the backend has fixed tiles). */
    dlscan_status (*set_tile_items)(dlscan_handle_t h, size_t items);
    void (*destroy)(dlscan_handle_t h);
} dl_backend;

struct dlscan_handle {
    const dl_backend *backend;
    void *backend_state;
    int deterministic;     /* DLSCAN_OPTION_DETERMINISTIC */
    int count_stats;       /* DLSCAN_OPTION_LOOKBACK_STATS (1 only in DL_PROBING builds) */
    int persistent;        /* DLSCAN_OPTION_PERSISTENT (2: DLSCAN_TESTING_PERSISTENT_ALWAYS) */
    long long test_delay_us; /* DLSCAN_TESTING_OPTION_DELAY_US (DL_PROBING builds only) */
    char last_error[512];
};

/* GPU builds (gpu_backend.c): reports a failed CUDA call, `error` a cudaError_t (and clears the
 * runtime's last error, if it is not sticky): DLSCAN_ERROR_OUT_OF_MEMORY or DLSCAN_ERROR_CUDA. */
dlscan_status dl_cuda_fail(dlscan_handle_t h, int error, const char *what);

/* Records a formatted message as h's last error and returns `status`. */
dlscan_status dl_fail(dlscan_handle_t h, dlscan_status status, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Element types (types.c). */
int dl_type_valid(dlscan_type type);
int dl_op_valid(dlscan_op op);
size_t dl_type_size(dlscan_type type);
const char *dl_type_name(dlscan_type type);
const char *dl_op_name(dlscan_op op);
/* Does a scan take items of `in` into `out` (dlscan.h lists the pairs)? */
int dl_pair_valid(dlscan_type in, dlscan_type out);
/* What a scan into `type` accumulates in: int32 for int8 and int16, uint32 for uint8 and
 * uint16, float32 for float16 and bfloat16, the type itself for the others. */
dlscan_type dl_acc_type(dlscan_type type);
/* The identity of op on type, as the bits of one value of type. */
uint64_t dl_identity_bits(dlscan_type type, dlscan_op op);
/* One value of `type` at `value` as bits (the low bytes of the word). */
uint64_t dl_bits_read(const void *value, dlscan_type type);
/* A value of `type` (its bits) as the same value of dl_acc_type(type). */
uint64_t dl_acc_bits(dlscan_type type, uint64_t bits);
/* Descriptor words per tile for a scan into type: 1 for 32-bit accumulators, 2 for 64-bit. */
int dl_words_per_tile(dlscan_type type);
/* IEEE binary16 and bfloat16 to float32 (exact), and back (to nearest, ties to even). */
float dl_half_to_float(uint16_t h);
float dl_bfloat16_to_float(uint16_t b);
uint16_t dl_float_to_half(float f);
uint16_t dl_float_to_bfloat16(float f);

/* One buffer of a call. An output may share its memory with one input exactly (in place);
 * any other overlap with an output is refused. */
typedef struct dl_buffer {
    const void *p;
    size_t bytes;
    size_t alignment;
    const char *name;
    int output;
    const void *may_equal; /* outputs: the input it may equal */
} dl_buffer;

/* Argument checks (checks.c). A scan's, all of them: a dlscan_scan_args of any version into
 * *request, or a status with h's last error set, for one of three calls: dlscan_scan;
 * dlscan_reduce, whose args have no d_out and need d_total (the request's `out` is NULL); and
 * dlscan_reserve_scan, whose args may leave the items' buffers (d_in, d_out and d_in2) all NULL. */
typedef enum dl_check_for { DL_CHECK_FOR_SCAN, DL_CHECK_FOR_REDUCE, DL_CHECK_FOR_RESERVE } dl_check_for;
dlscan_status dl_check_scan(dlscan_handle_t h, const dlscan_scan_args *args, dl_check_for call,
                            cudaStream_t stream, dl_scan_request *request);
dlscan_status dl_check_type(dlscan_handle_t h, dlscan_type type);
/* dlscan_reduce_by_key_custom's arguments (compact.c), checked into *request (checks.c): a scan by
 * key with the request's keys_out and num_runs. */
typedef struct dl_runs_args {
    const struct dlscan_operator *op;
    const void *keys_in, *values_in, *values_in2;
    void *keys_out, *values_out;
    size_t *num_runs;
    size_t n;
    dlscan_type key_type;
    const void *init;
} dl_runs_args;
dlscan_status dl_check_runs(dlscan_handle_t h, const dl_runs_args *a, cudaStream_t stream, dl_scan_request *request);
/* A dlscan_op. */
dlscan_status dl_check_op(dlscan_handle_t h, dlscan_op op);
/* A compaction's count (no more than one call can take) and its buffers; a call of n == 0
 * checks only its count's buffer, the last (its items may be NULL: only the count is written). */
dlscan_status dl_check_compact(dlscan_handle_t h, const dl_compact_request *r, dl_buffer *buffers,
                               int count);
/* Buffers: each not NULL, aligned, memory the backend scans; no output overlapping another
 * buffer but an output equal to its own input (in place). */
dlscan_status dl_check_buffers(dlscan_handle_t h, const dl_buffer *b, int count);
/* select_if's predicate, and its operand where it takes one. */
dlscan_status dl_check_predicate(dlscan_handle_t h, dlscan_predicate predicate, const void *operand);
/* For compaction: one of the six 32- and 64-bit types. */
dlscan_status dl_check_compact_type(dlscan_handle_t h, dlscan_type type);
/* n items of `type` in tiles of `tile` items: no more than one call can scan. */
dlscan_status dl_check_count(dlscan_handle_t h, size_t n, dlscan_type type, size_t tile);
/* A scan across ranks' exchange (dlscan_scan_across, dlscan_peers_create): not NULL, made, its
 * rank among its ranks, an all-gather. */
dlscan_status dl_check_exchange(dlscan_handle_t h, const dlscan_exchange *exchange);
/* dlscan_peers_create's arguments: *peers (set to NULL), the bootstrap exchange, a GPU handle. */
dlscan_status dl_check_peers(dlscan_handle_t h, const dlscan_exchange *bootstrap, dlscan_peers_t *peers);
/* Not NULL, and aligned to `alignment` bytes; `what` names the argument. */
dlscan_status dl_check_pointer(dlscan_handle_t h, const void *p, size_t alignment, const char *what);
/* Do [a, a + a_bytes) and [b, b + b_bytes) share a byte? */
int dl_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes);
size_t dl_tiles(size_t n, size_t tile);

/* Runs a checked request (api.c): reserves its descriptors and hands it to the backend; an
 * n == 0 request without a total or offsets writes nothing. */
dlscan_status dl_scan_run(dlscan_handle_t h, const dl_scan_request *r);

/* User operators on a GPU handle (jit.c; gpu_stub.c without CUDA): compiles op's source (op->text)
 * for the handle's device into `program` (launch.h's DL_USER_PROGRAM_*: one scan; along rows, over
 * offsets, by key or down columns, once, whichever thread asks first), or finds it in the caches,
 * and loads it into op; frees what it loaded; launches the scan of a checked request with it
 * (n > 0; columns with dl_jit_launch_columns) and returns a cudaError_t as int. */
dlscan_status dl_jit_build(dlscan_handle_t h, struct dlscan_operator *op, int program);
void dl_jit_free(struct dlscan_operator *op);
int dl_jit_launch(const struct dlscan_operator *op, const dl_user_params *params, int left_fold,
                  int dependent_launch, cudaStream_t stream);
int dl_jit_launch_columns(const struct dlscan_operator *op, const dl_user_column_params *params,
                          int dependent_launch, cudaStream_t stream);
/* A user operator's scan on a CPU handle (operator.c), n > 0, a total or offsets (checked
 * before: cpu_segment.h, dl_cpu_check_offsets). */
dlscan_status dl_cpu_custom_scan(dlscan_handle_t h, const dl_scan_request *r);

/* Backends. Each fills in h->backend and h->backend_state, or fails. */
dlscan_status dl_gpu_backend_init(dlscan_handle_t h);
dlscan_status dl_cpu_backend_init(dlscan_handle_t h, int threads);

/* For the CPU backend: is p device memory of some GPU? (0 in builds without CUDA, and
 * where no CUDA driver is loaded.) */
int dl_is_device_pointer(const void *p);

#endif /* DLSCAN_INTERNAL_H */
