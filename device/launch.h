/*
 * launch.h: what the C host layer (src/) and the CUDA kernels (device/) share: the scan
 * kernel's parameters and the launchers' C signatures. Plain C, included by both sides.
 */
#ifndef DLSCAN_LAUNCH_H
#define DLSCAN_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "dlscan.h"
#include "protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a launcher returns for a call this build left out (meson's only_types and only_ops;
 * ops.cuh, dl_built): no kernel was instantiated for it. Not a cudaError_t (those are >= 0). */
#define DL_NOT_BUILT (-2)

/* One scan call, as the kernel sees it. */
typedef struct dl_scan_params {
    const void *in;
    void *out;
    uint64_t n;                  /* > 0 */
    uint32_t tiles;              /* n in the kernels' tiles (a segmented scan's: its own) */
    uint64_t seed_bits;          /* the init (or the identity) as the accumulator's bits */
    const void *init;            /* d_init: one output value read by tile 0's block, or NULL */
    void *total;                 /* d_total: one output value, or NULL */
    dl_word *descriptors;        /* the handle's descriptor storage, zeroed when allocated */
    uint64_t descriptor_words;   /* its size in words (cleared when the epoch wraps) */
    dl_control *control;         /* the handle's control block */
    int exclusive;               /* 0: inclusive scan, 1: exclusive scan */
    /* The handle's policy row (policy.h) for this call: */
    uint32_t persistent_blocks;  /* the persistent kernels' grid, SMs x the row's blocks per SM
                                    (the kernels of DL_SCAN_BLOCKS_PER_SM_NARROW scale it); 0:
                                    one block per tile */
    uint32_t persistent_from;    /* a persistent kernel runs for more tiles than this */
    int dependent_launch;        /* 1: launch as a programmatic dependent of the stream's
                                    previous kernel (tile.cuh, dl_grid_dependency) */
    /* Long rows (a scan along an axis of stride 1, scan_kernel.cu's chains, and a user operator's
     * one scan: DL_USER_ROW_CHAINS): n / row_length scans of row_length items, each row its own
     * chain of row_tiles tiles, from the seed; init and total unused. row_length 0: one scan of n
     * items (a user operator's rows' program sets it with row_tiles 0). */
    uint64_t row_length;
    uint32_t row_tiles;
    void *totals;                /* each row's total (n / row_length values), or NULL */
} dl_scan_params;

/* A scan with a user operator (src/jit.c; device/user_kernel.cuh, compiled at run time): the
 * plain scan's parameters (init and total: one state each in device memory, or NULL; seed_bits
 * unused), the operator's second input, the host's init as a state (the identity where it gave
 * none), along rows the length's inverse, and the segments' offsets or keys. */
typedef struct dl_user_params {
    dl_scan_params scan;
    const void *in2;        /* n items of the operator's in2_bytes, or NULL */
    uint32_t seed[8];       /* the seed state's words (its state_bytes / 4 first ones) */
    double row_inverse;     /* rows: 1 / scan.row_length (rows.cuh) */
    uint32_t row_warps;     /* rows shorter than a tile (DL_USER_ROW_CHAINS, scan.row_tiles 1): the
                               warps' runs of a tile that make a row; else 0 */
    const size_t *offsets;  /* segments: num_segments + 1 offsets (offsets.cuh), or NULL */
    uint64_t num_segments;
    const void *keys;       /* segments: n keys of key_size bytes (1, 2, 4 or 8), or NULL */
    uint32_t key_size;
    void *keys_out;         /* reduce-by-key (DL_USER_PROGRAM_RUNS): each run's key, its output in */
    size_t *num_runs;       /* scan.out, and the count of runs here; else NULL */
} dl_user_params;

/* A user operator's programs, each compiled when first needed (user_kernel.cuh's
 * DL_USER_THIS_PROGRAM): one scan; scans along rows (heads from the index); segments over offsets;
 * segments by key; columns (an axis of stride > 1: columns.cuh's tile); reduce-by-key (runs of
 * keys, written at their ends). The three of segments and the runs scan the operator lifted to
 * segments (DL_USER_LIFTED: the state and a flag, or for the runs a count of heads, policy.h's
 * DL_USER_VALUE); one scan and the columns scan the state. */
#define DL_USER_PROGRAM_ONE 0
#define DL_USER_PROGRAM_ROWS 1
#define DL_USER_PROGRAM_OFFSETS 2
#define DL_USER_PROGRAM_KEYS 3
#define DL_USER_PROGRAM_COLUMNS 4
#define DL_USER_PROGRAM_RUNS 5
#define DL_USER_PROGRAMS 6
/* Rows whose length is a multiple of the one scan's tile (its state's DL_USER_ITEMS a thread), or
 * divides it and is a multiple of a warp's run of it, take the one scan's program: each row a
 * chain of whole tiles (user_kernel.cuh, dl_user_link; the params' scan.row_tiles set), or of a
 * tile's whole warps' runs (row_warps set), not the lifted operator of the rows' program. */
#define DL_USER_CHAIN_TILE(state_bytes) (DL_USER_THREADS * DL_USER_ITEMS(state_bytes))
#define DL_USER_WARP_RUN(state_bytes) (32 * DL_USER_ITEMS(state_bytes))
#define DL_USER_ROW_CHAINS(axis_length, axis_stride, state_bytes)                                  \
    ((axis_length) && (axis_stride) == 1 &&                                                        \
     ((axis_length) % DL_USER_CHAIN_TILE(state_bytes) == 0 ||                                       \
      (DL_USER_CHAIN_TILE(state_bytes) % (axis_length) == 0 && (axis_length) % DL_USER_WARP_RUN(state_bytes) == 0)))
/* The program of a call of an operator with a state of state_bytes. */
#define DL_USER_PROGRAM(axis_length, axis_stride, offsets, keys, runs, state_bytes)                \
    ((runs)                             ? DL_USER_PROGRAM_RUNS                                     \
     : (axis_length) && (axis_stride) > 1 ? DL_USER_PROGRAM_COLUMNS                                \
     : DL_USER_ROW_CHAINS(axis_length, axis_stride, state_bytes) ? DL_USER_PROGRAM_ONE             \
     : (axis_length)                    ? DL_USER_PROGRAM_ROWS                                     \
     : (offsets)                        ? DL_USER_PROGRAM_OFFSETS                                  \
     : (keys)                           ? DL_USER_PROGRAM_KEYS                                     \
                                        : DL_USER_PROGRAM_ONE)
#define DL_USER_LIFTED(program)                                                                    \
    ((program) == DL_USER_PROGRAM_ROWS || (program) == DL_USER_PROGRAM_OFFSETS ||                  \
     (program) == DL_USER_PROGRAM_KEYS || (program) == DL_USER_PROGRAM_RUNS)

/* Enqueues one scan kernel on `stream`: items of in_type into `type` (a pair dlscan.h lists).
 * `left_fold` selects the deterministic look-back for float sums (other types and operators
 * ignore it: they are exact either way). Returns a cudaError_t as int (0 = cudaSuccess), or
 * DL_NOT_BUILT. */
int dl_gpu_scan_launch(const dl_scan_params *params, dlscan_type in_type, dlscan_type type,
                       dlscan_op op, int left_fold, cudaStream_t stream);

/* The total of a scan of no items: `bytes` from `init` (device memory) or, where it is NULL,
 * the low `bytes` of init_bits, to `total`. One small kernel on `stream`. */
int dl_gpu_scan_total(const void *init, void *total, uint64_t init_bits, size_t bytes,
                      cudaStream_t stream);

/* A reduction (device/reduce_kernel.cu, dlscan_reduce): the params' in, n, seed bits, init
 * (d_init) and total; its `tiles` are its chunks, one block each; out is unused. Returns what
 * dl_gpu_scan_launch does. */
int dl_gpu_reduce_launch(const dl_scan_params *params, dlscan_type in_type, dlscan_type type,
                         dlscan_op op, int left_fold, cudaStream_t stream);

/* The items of each of a reduction's `chunks` chunks of n items: n / chunks, rounded up to whole
 * DL_REDUCE_CHUNK_ALIGN; the last chunks may be shorter, or empty. */
DL_PROTOCOL_FN uint64_t dl_reduce_chunk_items(uint64_t n, uint32_t chunks)
{
    const uint64_t per = n / chunks + (n % chunks != 0);
    return (per + DL_REDUCE_CHUNK_ALIGN - 1) / DL_REDUCE_CHUNK_ALIGN * DL_REDUCE_CHUNK_ALIGN;
}

/* A segmented scan (device/segment_kernel.cu): the values' scan (in, out, n, the init's bits,
 * the descriptors and the choice of kernel, as for a plain scan; init and total unused) and
 * where its segments come from: keys, offsets, or rows of one length (a scan along an axis of
 * stride 1, whose heads are where the index divides by the length: nothing is read for them). */
typedef struct dl_segment_params {
    dl_scan_params scan;
    const void *keys;            /* n keys of key_size bytes (1, 2, 4 or 8), or NULL */
    uint32_t key_size;
    const size_t *offsets;       /* num_segments + 1 offsets, or NULL */
    uint64_t num_segments;
    uint64_t row_length;         /* rows: the items in each (n a multiple of it), or 0 */
    double row_inverse;          /* rows: 1 / row_length, for remainders without a division */
    void *totals;                /* rows: n / row_length output values, each row's total, or NULL */
} dl_segment_params;

/* Enqueues one segmented scan kernel on `stream` (n > 0), as dl_gpu_scan_launch does (and
 * returns what it does). */
int dl_gpu_segment_launch(const dl_segment_params *params, dlscan_type in_type, dlscan_type type,
                          dlscan_op op, int left_fold, cudaStream_t stream);

/* A scan along an axis of stride > 1 (device/axis_kernel.cu): columns. The items are arrays
 * [outer][length][stride], and each of the outer x stride columns is a scan. A tile is `rows`
 * rows of `lanes` neighbouring columns of one array; `strips` tiles side by side cover an
 * array's columns, and the chains (outer x strips of them) follow each other in the tile order:
 * tile t is row block t / chains of chain t % chains. Each (tile, column) has a descriptor of
 * its own: a tile takes lanes x dl_words_per_tile words of descriptors. */
typedef struct dl_axis_shape {
    uint32_t lanes;  /* columns per tile: DL_AXIS_STRIP where it divides the stride (below it,
                        DL_AXIS_NARROW_STRIP where that does), else the stride, at most
                        DL_AXIS_THREADS */
    uint32_t groups; /* thread groups down the rows: lanes x groups <= DL_AXIS_THREADS */
    uint32_t rows;   /* rows per tile: groups x the rows a thread holds */
    uint32_t narrow; /* 1: a whole array of fewer columns than DL_AXIS_NARROW_LANES, the tile
                        staged in shared memory */
} dl_axis_shape;

/* The tile of a column scan of `stride` (> 1) into an accumulator of acc_bytes. */
static inline dl_axis_shape dl_axis_shape_for(uint64_t stride, size_t acc_bytes)
{
    dl_axis_shape s;
    s.lanes = stride % DL_AXIS_STRIP == 0 ? DL_AXIS_STRIP
              : stride < DL_AXIS_STRIP && stride > DL_AXIS_NARROW_STRIP && stride % DL_AXIS_NARROW_STRIP == 0
                  ? DL_AXIS_NARROW_STRIP
              : stride < DL_AXIS_THREADS ? (uint32_t)stride
                                         : DL_AXIS_THREADS;
    s.narrow = s.lanes == stride && s.lanes < DL_AXIS_NARROW_LANES;
    s.groups = DL_AXIS_THREADS / s.lanes;
    s.rows = s.groups * (uint32_t)DL_AXIS_ROWS(acc_bytes, s.narrow);
    return s;
}

typedef struct dl_axis_params {
    dl_scan_params scan;  /* in, out, n, tiles, the init's bits, descriptors, exclusive */
    uint64_t length;      /* items of each scan (rows of each array) */
    uint64_t stride;      /* columns of each array */
    dl_axis_shape shape;
    uint32_t strips;      /* tiles across an array: stride / lanes, rounded up */
    uint32_t chains;      /* outer x strips */
    void *totals;         /* outer x stride output values, or NULL */
} dl_axis_params;

/* A column scan with a user operator (DL_USER_PROGRAM_COLUMNS): the layout's parameters (totals:
 * states), the operator's second input and the host's init as a state, as dl_user_params'. */
typedef struct dl_user_column_params {
    dl_axis_params axis;
    const void *in2;
    uint32_t seed[8];
} dl_user_column_params;

/* Enqueues one column scan kernel on `stream` (n > 0), as dl_gpu_scan_launch does. */
int dl_gpu_axis_launch(const dl_axis_params *params, dlscan_type in_type, dlscan_type type,
                       dlscan_op op, cudaStream_t stream);

/* Enqueues the columns of one [N, lanes] array of a type scanned into itself whose rows are 8 or
 * 16 bytes (policy.h, DL_AXIS_LANES_*) as a plain scan of its N rows of lanes on the persistent
 * kernel (device/scan_kernel.cu): the params' n and tiles count rows and their tiles
 * (DL_SCAN_TILE_ITEMS_8B x 8 / the row's bytes rows each), seed_bits is the init's (every lane
 * starts from it), init is one item, total is d_totals (lanes items) or NULL. Returns what
 * dl_gpu_scan_launch does. */
int dl_gpu_lanes_launch(const dl_scan_params *params, dlscan_type type, dlscan_op op, uint32_t lanes,
                        int left_fold, cudaStream_t stream);

/* Stream compaction (device/compact_kernel.cu). */
typedef enum dl_compact_kind {
    DL_COMPACT_SELECT_FLAGGED = 0,
    DL_COMPACT_SELECT_IF = 1,
    DL_COMPACT_UNIQUE = 2,
    DL_COMPACT_RUN_LENGTH = 3,
    DL_COMPACT_REDUCE_BY_KEY = 4
} dl_compact_kind;

typedef struct dl_compact_params {
    int kind;                    /* dl_compact_kind */
    const void *in;              /* items (reduce-by-key: keys) */
    const unsigned char *flags;  /* select_flagged */
    const void *values_in;       /* reduce-by-key */
    void *out;                   /* kept items, run items or run keys */
    void *out2;                  /* run lengths (size_t) or run values */
    size_t *num_out;             /* the count, in device memory */
    uint64_t n;                  /* > 0 */
    int predicate;               /* select_if: dlscan_predicate */
    uint64_t operand_bits;       /* select_if: the operand's bits */
    dl_word *descriptors;
    uint64_t descriptor_words;
    dl_control *control;
    uint32_t persistent_blocks;  /* as dl_scan_params' */
    uint32_t persistent_from;
    int dependent_launch;
} dl_compact_params;

/* Descriptor words per tile a compaction needs: a 64-bit count, or a 128-bit pair. */
static inline int dl_compact_words_per_tile(int kind)
{
    return kind == DL_COMPACT_RUN_LENGTH || kind == DL_COMPACT_REDUCE_BY_KEY ? 4 : 2;
}

/* Enqueues one compaction kernel; type is the items' (keys') type, value_type and op are
 * reduce-by-key's. Returns a cudaError_t as int, or DL_NOT_BUILT. */
int dl_gpu_compact_launch(const dl_compact_params *params, dlscan_type type, dlscan_type value_type,
                          dlscan_op op, int left_fold, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* DLSCAN_LAUNCH_H */
