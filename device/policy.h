/*
 * policy.h: every tuned choice of the GPU kernels, in one place, as data. Plain C: the host
 * layer, the CPU backend and the CUDA kernels include it.
 *
 * Two parts:
 * - The shapes the kernels are compiled with (tile rows, threads, ring stages, blocks per SM as
 *   a register budget, look-back windows), with the invariants between them as static_asserts.
 *   A template parameter cannot change at run time, so every GPU of an architecture runs these.
 * - The policy table (DL_POLICY_ROWS, at the end): what a handle chooses at run time, one row
 *   per GPU: whether the persistent kernels run, their grid, from how many tiles each primitive
 *   takes them, and dependent launches. A handle picks its row once, at creation, from what its
 *   device reports (dl_policy_for); the launchers read the row's values from their parameters
 *   and decide nothing of their own. Adding a GPU is one new row.
 *
 * bench/NOTES.md says what each value won against (the topic named beside it); none of them is a
 * build-time knob.
 */
#ifndef DLSCAN_POLICY_H
#define DLSCAN_POLICY_H

#include <assert.h>

/* ---- The scan's tile (bench/NOTES.md, "Tile shape") ----
 * 256 threads, each with ROWS 16-byte rows of items in registers: 8192 32-bit items or 4096
 * 64-bit items per tile. */
#define DL_SCAN_THREADS 256
#define DL_SCAN_ROWS_4B 8
#define DL_SCAN_ROWS_8B 8
#define DL_SCAN_TILE_ITEMS_4B (DL_SCAN_THREADS * 4 * DL_SCAN_ROWS_4B)
#define DL_SCAN_TILE_ITEMS_8B (DL_SCAN_THREADS * 2 * DL_SCAN_ROWS_8B)

/* ---- The persistent kernels (bench/NOTES.md, "Persistent kernel and the ring") ----
 * Blocks per SM, the deepest ring of shared-memory stages (ring.cuh may choose fewer), the
 * reducer warp's independent accumulators per lane ("Reducer chains"). */
#define DL_SCAN_BLOCKS_PER_SM 2
/* The persistent scans that read items narrower than their 32-bit accumulator (uint8 into
 * int32, float16 into float32, ...) need 64 registers, so three blocks share an SM: a tile
 * moves fewer bytes, and with two blocks the tiles' latency, not memory, set their pace
 * (bench/NOTES.md, "Scans into a wider type"). */
#define DL_SCAN_BLOCKS_PER_SM_NARROW 3
#define DL_SCAN_STAGES 3
#define DL_SCAN_REDUCE_CHAINS 4
#define DL_SM_SHARED_BYTES (228 * 1024) /* Hopper's shared memory per SM; a GPU with less runs no
                                         persistent kernel (dl_policy_for) */
#define DL_RING_OTHER_BYTES (6 * 1024)  /* a block's own variables and the system's reservation */

/* ---- The look-back (bench/NOTES.md, "Look-back windows", "Back-off") ----
 * One warp reads a window of 32 lanes x slots predecessors. The persistent scan's tree fold
 * watches one slot per lane; the left fold, the other kernels and the CPU two. The
 * deterministic left fold buffers DL_FOLD_WINDOWS windows before it waits for a P. A window
 * holding X is read again after a doubling sleep. */
#define DL_WINDOW_LANES 32
#define DL_SLOTS_PER_LANE 2
#define DL_PERSISTENT_SLOTS_PER_LANE 1
#define DL_WINDOW (DL_WINDOW_LANES * DL_SLOTS_PER_LANE) /* the widest window */
#define DL_FOLD_WINDOWS 2
#define DL_BACKOFF_FIRST_NS 32u
#define DL_BACKOFF_LAST_NS 512u

/* ---- Segmented scans (bench/NOTES.md, "Segmented scans") ----
 * Half the scan's rows: a persistent block's stage carries the keys beside the items, and with
 * tiles of 4 rows three stages of both still let two blocks share an SM. Every segmented kernel
 * takes these tiles: 4096 items for 32-bit accumulators, 2048 for 64-bit ones. */
#define DL_SEGMENT_ROWS 4
/* The persistent kernel's stage also holds the tile's first offsets (by offsets): all of them,
 * and the first one past the tile, for segments of 8 items and more on average (a tile's 512
 * from an odd index take 514 from the even one before it); the compute warps read any others
 * from global memory. */
#define DL_SEGMENT_STAGED_OFFSETS 576
/* Over offsets the persistent kernel's reducer marks a tile's heads where they are this many or
 * fewer; more, the compute warps mark them, a share each, and meet at a barrier (bench/NOTES.md,
 * "Segmented scans", H100: segments of 1 item 0.32 to 0.76 of the floor with the warps' shares,
 * of 64 items 0.717 to 0.726 with the reducer's 128). */
#define DL_SEGMENT_REDUCER_MARKS 128
#define DL_SEGMENT_TILE_ITEMS_4B (DL_SCAN_THREADS * 4 * DL_SEGMENT_ROWS)
#define DL_SEGMENT_TILE_ITEMS_8B (DL_SCAN_THREADS * 2 * DL_SEGMENT_ROWS)
/* Short rows of lengths other than powers of two (segment_kernel.cu, dl_whole_rows_kernel): at
 * most this many registers a thread, so that four blocks share an SM with 32-bit items, three
 * with 64-bit ones (bench/NOTES.md, "Whole rows under a register cap"). */
#define DL_WHOLE_ROWS_REGISTERS_4B 64
#define DL_WHOLE_ROWS_REGISTERS_8B 80

/* ---- Scans along an axis of stride > 1: columns (columns.cuh) ----
 * 256 threads a block, as lanes x groups: one thread per column of the tile (at most 256 columns,
 * a strip of a wider array: DL_AXIS_STRIP below), groups of them down its rows, each with 128
 * bytes of its column's rows in registers: 32 rows of a 32-bit accumulator, 16 of a 64-bit one,
 * 4 of a user operator's 32-byte state. Columns narrower than a warp stage the tile through
 * shared memory, with an odd count of rows a thread (one fewer where it is even) so that a warp's
 * reads of it meet no bank twice. */
#define DL_AXIS_THREADS 256
#define DL_AXIS_THREAD_BYTES 128
#define DL_AXIS_NARROW_LANES 32 /* fewer columns than this: staged */
/* Arrays whose columns are a multiple of this are cut into strips of this many columns (a warp's
 * row of a strip: 32 consecutive items), each strip a chain of its own tiles, 8 groups of rows
 * deep: the more chains, the further back in the tile order a tile's predecessor, and the more
 * likely its P is out when the tile looks back (bench/NOTES.md, "Columns in strips of 32"). */
#define DL_AXIS_STRIP 32
/* Arrays narrower than a strip whose columns are a multiple of this, twice or more ([N, 16],
 * [N, 24]), are cut into strips of this many columns: two or three chains, not one, each warp
 * reading whole 32-byte sectors of four rows, not staged (bench/NOTES.md, "Narrow arrays in
 * strips of 8"). */
#define DL_AXIS_NARROW_STRIP 8
/* A thread's rows, for accumulators of acc_bytes (4 to 32), narrow (staged) or not: the host's tile
 * count (launch.h, dl_axis_shape_for) and the kernel's registers take it from here. */
#define DL_AXIS_ROWS(acc_bytes, narrow)                                                           \
    ((narrow) ? DL_AXIS_THREAD_BYTES / (acc_bytes) - 1 + DL_AXIS_THREAD_BYTES / (acc_bytes) % 2   \
              : DL_AXIS_THREAD_BYTES / (acc_bytes))
/* Columns of one array, of a type into itself, whose rows are 8 or 16 bytes (2 or 4 columns of a
 * 32-bit type, 2 of a 64-bit type), on sm_90 with the persistent kernels: a plain scan of rows of
 * lanes (scan_kernel.cu, dl_gpu_lanes_launch), each row one item of the plain scan's tile. */
#define DL_AXIS_LANES_4B 2
#define DL_AXIS_LANES_4B_WIDE 4
#define DL_AXIS_LANES_8B 2

/* ---- Reductions (reduce_kernel.cu; bench/NOTES.md, "Reductions") ----
 * 256 threads a block, each folding its 16-byte vectors into this many accumulators, one load of
 * each in flight; registers for DL_REDUCE_BLOCKS_PER_SM blocks an SM (the policy row's grid,
 * reduce_blocks, should not ask for more, or its blocks run in two waves). A chunk (one block's
 * items) is a whole number of DL_REDUCE_CHUNK_ALIGN items. */
#define DL_REDUCE_THREADS 256
#define DL_REDUCE_CHAINS 8
#define DL_REDUCE_BLOCKS_PER_SM 4
#define DL_REDUCE_CHUNK_ALIGN 64

/* ---- User operators' scans (user_kernel.cuh, compiled at run time; bench/NOTES.md, "User
 * operators") ----
 * Tiles of 256 threads, each with DL_USER_ITEMS items (rows of 4 consecutive ones), about 128
 * bytes of state. The persistent
 * kernel (sm_90) runs DL_USER_BLOCKS_PER_SM blocks an SM, each with a producer warp that
 * prefetches tiles (both inputs) into a ring of DL_USER_STAGES stages, or as many as fit, and a
 * reducer warp that publishes each tile's aggregate as it lands. */
#define DL_USER_THREADS 256
/* The value a kernel scans: the state, or along rows (rows 1) the state and a flag that a row starts
 * in its items (user_kernel.cuh). It sets the tile (DL_USER_ITEMS of it) and the descriptors'
 * words. */
#define DL_USER_VALUE(state_bytes, rows) ((state_bytes) + ((rows) ? 4 : 0))
#define DL_USER_ITEMS(state_bytes) ((state_bytes) <= 4 ? 32 : (state_bytes) <= 8 ? 16 : (state_bytes) <= 16 ? 8 : 4)
#define DL_USER_BLOCKS_PER_SM 2
/* The persistent kernel's look-back: along rows by a warp of its own (1), ahead of the compute
 * warps, which so never wait for the look-back's trip to memory; else by compute warp 0 in each
 * tile (0), as the built-in scans do, since an eleventh warp leaves two blocks an SM 80 registers a
 * thread, and the states' wider tiles then spill (bench/NOTES.md, "User operators", "Along rows"). */
#define DL_USER_LOOK_BACK_WARP(rows) (rows)
#define DL_USER_RING_THREADS(rows) /* + a producer and a reducer warp, and the look-back's */      \
    (DL_USER_THREADS + 64 + (DL_USER_LOOK_BACK_WARP(rows) ? 32 : 0))
/* A persistent block's stage: a tile's items of both inputs (in2_bytes 0: one input) and, for
 * segments by key (keys 1), 16 bytes that end with the key before the tile, then room for the
 * tile's keys of up to 8 bytes. */
#define DL_USER_STAGE(state_bytes, in_bytes, in2_bytes, keys)                                      \
    (DL_USER_THREADS * DL_USER_ITEMS(state_bytes) * ((in_bytes) + (in2_bytes) + ((keys) ? 8 : 0)) + \
     ((keys) ? 16 : 0))
#define DL_USER_STAGES_MOST 4
#define DL_USER_OTHER_BYTES (16 * 1024) /* a block's own: the warps' scratch for the transposed
                                           warp scan (up to 11 KB), the look-back's variables, the
                                           system's reservation */
#define DL_USER_STAGES(stage_bytes)                                                                \
    ((DL_SM_SHARED_BYTES / DL_USER_BLOCKS_PER_SM - DL_USER_OTHER_BYTES) / (stage_bytes) >= DL_USER_STAGES_MOST \
         ? DL_USER_STAGES_MOST                                                                     \
         : (DL_SM_SHARED_BYTES / DL_USER_BLOCKS_PER_SM - DL_USER_OTHER_BYTES) / (stage_bytes))

/* ---- Compaction's one-block-per-tile kernel (bench/NOTES.md, "Compaction kernels") ----
 * 256 threads of 16 consecutive items. */
#define DL_COMPACT_THREADS 256
#define DL_COMPACT_ITEMS 16
#define DL_COMPACT_TILE (DL_COMPACT_THREADS * DL_COMPACT_ITEMS)

/* ---- Compaction's persistent reduce-by-key (bench/NOTES.md, "Compaction kernels") ----
 * Its stage holds a tile's keys beside its values: 4096 items where both are 32-bit, 2048 where
 * either is 64-bit, so that three stages still let two blocks share an SM. (Run-length encoding
 * stages keys alone, and takes the scan's tiles.) */
#define DL_RUNS_TILE_ITEMS_4B 4096
#define DL_RUNS_TILE_ITEMS_8B 2048

/* ---- Compaction's persistent kernels (bench/NOTES.md, "Compaction kernels") ----
 * Reducer warps per block: two fold a tile's count or heads in half the time of one, and the
 * block's 384 threads still get 80 registers each at two blocks an SM. */
#define DL_COMPACT_REDUCERS 2

/* ---- Descriptor storage ----
 * A scan reserves descriptors for tiles of its type's DL_SCAN_TILE_ITEMS_*; a compaction for
 * tiles of DL_COMPACT_MIN_TILE items, the smallest tile of any compaction kernel, or they would
 * draw more tiles than the storage holds. */
#define DL_COMPACT_MIN_TILE DL_RUNS_TILE_ITEMS_8B
static_assert(DL_SCAN_TILE_ITEMS_4B >= DL_COMPACT_MIN_TILE && DL_SCAN_TILE_ITEMS_8B >= DL_COMPACT_MIN_TILE &&
                  DL_COMPACT_TILE >= DL_COMPACT_MIN_TILE && DL_RUNS_TILE_ITEMS_4B >= DL_COMPACT_MIN_TILE,
              "every compaction kernel's tiles hold at least DL_COMPACT_MIN_TILE items");
static_assert(DL_PERSISTENT_SLOTS_PER_LANE >= 1 && DL_PERSISTENT_SLOTS_PER_LANE <= DL_SLOTS_PER_LANE,
              "the fold buffer holds windows of DL_WINDOW");

/* ---- The test probe (probe.cuh) ----
 * 1 in the testing build of the library (compiled with DLSCAN_TESTING, not installed): its
 * kernels and CPU workers pause inside tiles, count look-back events and start the tile
 * counter where a test puts it. 0 in the release library, where those hooks compile away. */
#ifdef DLSCAN_TESTING
#define DL_PROBING 1
#else
#define DL_PROBING 0
#endif

/* ---- The policy table ----
 * What a device reports, and the row it runs. A row matches a device of its compute capability
 * major (0: any) whose memory moves at least min_gbs GB/s (bus width x memory clock x 2); the
 * first match wins, so rows run from the most particular to the least. The persistent kernels
 * need sm_90 (bulk copies and transaction barriers), and the shared memory per SM their blocks
 * were compiled to share (DL_SM_SHARED_BYTES): a row that runs them matches no device with less,
 * and rows for older GPUs leave them off.
 *
 * How a row is measured: on the GPU it is for, `tools/gpu-check build tests` and then the bench
 * steps (scans, pairs, segmented, compaction), once with the row as it is and once with each
 * value changed, memcpy and CUB in the same run (bench/NOTES.md, "The floor"). A value is kept
 * where it wins by more than the runs' spread, and the result goes to bench/results/<GPU>/. */
typedef struct dl_device_facts {
    int major, minor;     /* compute capability */
    int sms;              /* multiprocessors */
    int shared_per_sm;    /* bytes of shared memory per SM */
    int l2_bytes;
    long long memory_gbs; /* bus width x memory clock x 2, GB/s */
} dl_device_facts;

typedef struct dl_policy {
    const char *name;
    int major;             /* compute capability major (0: any) */
    long long min_gbs;     /* the least memory bandwidth it is for */
    int persistent;        /* 1: the persistent kernels (sm_90 and later) */
    int dependent_launch;  /* 1: programmatic dependent launches (sm_90 and later) */
    int blocks_per_sm;     /* the persistent grid: SMs x this (at most the register budget above) */
    /* Each persistent kernel runs for more tiles than its grid's blocks divided by this; fewer
     * finish sooner one block each. */
    int scan_from;    /* scans and segmented scans (bench/NOTES.md, "Which kernel runs") */
    int compact_from; /* select_if and unique: 2^22 int32 items, two tiles per block, 19-23 us
                         against 24-27 us one block per tile ("Compaction kernels") */
    int flagged_from; /* select_flagged, whose one-block kernel stages its flags in a second pass:
                         2^20 int32, 5.9-7.8 us against 7.8-8.7 */
    int runs_from;    /* run-length encoding and reduce-by-key, whose one-block kernel runs from
                         global memory at half the pace: 2^20 int32 run-length encoding, runs of
                         mean 2 to 1024, 8.1-9.9 us against 10.6-12.3 */
    int reduce_blocks; /* dlscan_reduce's grid: SMs x this blocks, one chunk each, all resident
                          (bench/NOTES.md, "Reductions") */
} dl_policy;

/* The rows. The H200's is the H100's: on the H200 the persistent scans are bound by the latency of
 * their tiles, not by a value here (bench/NOTES.md, "The H200"): the other shapes tried there
 * (three blocks of two stages, tiles of four rows with six stages) lost 17-18%. */
#define DL_POLICY_ROWS                                                                                     \
    /* name                        major min_gbs persistent dependent blocks scan compact flagged runs reduce */ \
    {"H200 (sm_90)",                9,   4500,         1,        1,     2,   2,      2,      4,   4,     4},   \
    {"H100 (sm_90)",                9,      0,         1,        1,     2,   2,      2,      4,   4,     4},   \
    {"sm_90, less shared memory",   9,      0,         0,        1,     0,   2,      2,      4,   4,     4},   \
    {"sm_80 and later",             8,      0,         0,        0,     0,   2,      2,      4,   4,     4},   \
    {"any GPU",                     0,      0,         0,        0,     0,   2,      2,      4,   4,     4}

/* The first row that matches `d`; a device of a later architecture than any row takes the row of
 * the newest one, which its binaries (PTX) run. */
static inline const dl_policy *dl_policy_for(const dl_device_facts *d)
{
    static const dl_policy rows[] = {DL_POLICY_ROWS};
    const int count = (int)(sizeof rows / sizeof rows[0]);
    int newest = 0;
    for (int i = 0; i < count; ++i)
        newest = rows[i].major > newest ? rows[i].major : newest;
    const int major = d->major > newest ? newest : d->major;
    for (int i = 0; i < count; ++i)
        if ((rows[i].major == major || rows[i].major == 0) && d->memory_gbs >= rows[i].min_gbs &&
            (!rows[i].persistent || d->shared_per_sm >= DL_SM_SHARED_BYTES))
            return &rows[i];
    return &rows[count - 1];
}

#endif /* DLSCAN_POLICY_H */
