/*
 * segment_check.h: the tests of segmented scans (dlscan_scan with d_keys or d_offsets) that the
 * cpu and gpu suites share, on scan_check.h's memory functions and reference: segments laid
 * out at tile edges, one over everything, one per item, runs of random length, empty segments
 * and items outside every segment; keys of every type; the refusals.
 *
 * The reference is sequential and knows nothing of tiles: it cuts the items into segments
 * (runs of bitwise-equal keys, or the offsets), checks each segment as a plain scan of its own
 * items from the init (scan_check_pair_output: integers exact, float sums within
 * scan_check.c's tolerance, counted from the segment's first item), and checks that items in
 * no segment were not written.
 *
 * Segment edges sit at multiples of the edge unit, dlscan_tile_items(h, out_type) / 2 on both
 * backends: a GPU segmented scan's tile is that half tile, a CPU handle's its one tile, so the
 * unit's multiples are tile edges of both.
 */
#ifndef DLSCAN_SEGMENT_CHECK_H
#define DLSCAN_SEGMENT_CHECK_H

#include "scan_check.h"

/* How the segments are given. */
typedef enum segment_kind { SEGMENT_KEYS, SEGMENT_OFFSETS } segment_kind;

/* How the items are cut into segments (unit: the edge unit; tile: the segmented scan's tile). */
typedef enum segment_layout {
    SEGMENTS_AT_EDGES,  /* heads at multiples of the unit, one item before, one after, or all
                           three (segments of one item on either side of the edge) */
    SEGMENTS_ONE,       /* one segment over everything */
    SEGMENTS_OF_ONE,    /* every item its own segment */
    SEGMENTS_OF_TILES,  /* random lengths, 1 item to 3 tiles */
    SEGMENTS_SHORT,     /* random lengths, 1 to 16 items: many heads in every tile */
    SEGMENTS_EMPTY,     /* offsets: items before the first segment and after the last, empty
                           segments at the start, here and there and at the end, the others
                           1 item to 3 tiles long; keys: as SEGMENTS_OF_TILES */
    SEGMENT_LAYOUT_COUNT
} segment_layout;

typedef struct segment_case {
    pair_case scan;       /* types, operator, exclusive, init (TEST_INIT_NONE or _HOST), in
                             place, n, values; with_total 0 (segmented scans take no total) */
    segment_kind kind;
    dlscan_type key_type; /* SEGMENT_KEYS */
    segment_layout layout;
} segment_case;

/* A case's host data. */
typedef struct segment_data {
    void *input;          /* n items of in_type */
    void *keys;           /* n keys of key_type (SEGMENT_KEYS), else NULL */
    size_t *offsets;      /* num_segments + 1 offsets (SEGMENT_OFFSETS), else NULL */
    size_t num_segments;
    uint64_t init_bits;   /* the host init, an out_type value (an input item converted) */
    void *output;         /* n out_type items, as the last segment_run left d_out */
} segment_data;

/* The edge unit (dlscan_tile_items(h, out_type) / 2) and the tile of a segmented scan into
 * out_type on h (the unit on a GPU handle, dlscan_tile_items on a CPU handle). */
void segment_tiles(dlscan_handle_t h, dlscan_type out_type, size_t *unit, size_t *tile);

/* Fresh random data for case c: the input, the init, and keys or offsets in c's layout. */
void segment_make(const segment_case *c, size_t unit, size_t tile, segment_data *d, uint64_t *rng);
void segment_free(segment_data *d);

/* A case's buffers in the backend's memory (d_out == d_in in place). */
typedef struct segment_buffers {
    void *d_in, *d_out, *d_keys;
    size_t *d_offsets;
} segment_buffers;

/* One call in four steps: allocates the buffers, uploads the input, keys and offsets and
 * poisons d_out (and 64 bytes past it, unless in place); enqueues the dlscan_scan call;
 * waits and downloads d_out into d->output, expecting (check.h) the bytes past it still
 * poisoned; frees the buffers. */
void segment_upload(const test_memory *memory, const segment_case *c, const segment_data *d,
                    segment_buffers *b);
dlscan_status segment_enqueue(dlscan_handle_t h, const segment_case *c, const segment_data *d,
                              const segment_buffers *b, cudaStream_t stream);
void segment_download(const test_memory *memory, const segment_case *c, segment_data *d,
                      const segment_buffers *b);
void segment_release(const test_memory *memory, const segment_case *c, segment_buffers *b);

/* The four in a row; returns the call's status. */
dlscan_status segment_run(dlscan_handle_t h, const test_memory *memory, const segment_case *c,
                          segment_data *d);

/* Checks d->output against the sequential reference; `tile` is the segmented scan's tile
 * (float tolerance). On a mismatch returns 0 and describes the first bad item in message. */
int segment_check_output(const segment_case *c, size_t tile, const segment_data *d, char *message,
                         size_t message_size);

/* A short description of case c for failure messages. */
const char *segment_describe(const segment_case *c, char *buffer, size_t size);

/* Makes, runs and checks (check.h) one case with fresh random data. */
void segment_check_case(dlscan_handle_t h, const test_memory *memory, const segment_case *c,
                        uint64_t *rng);

/* Every output type that in_type scans into, every operator, inclusive and exclusive, with no
 * init and a host init, in place where the types have one size; keys (of a type that changes
 * from case to case) and offsets, in every layout, at the edge sizes of the edge unit
 * (test_edge_sizes) up to max_n: every operator case at each size up to 64 units, two of the
 * six (turning) at each larger one. */
void segment_check_every_output(dlscan_handle_t h, const test_memory *memory, dlscan_type in_type,
                                size_t max_n, uint64_t *rng);

/* Keys of key_type in every layout over values of several pairs and operators, at sizes
 * around the edge unit and one random size in [max_n / 2, max_n]; float keys take runs of
 * NaN (one segment: equal bits) and of +0.0 next to -0.0 (two segments: different bits). */
void segment_check_keys(dlscan_handle_t h, const test_memory *memory, dlscan_type key_type,
                        size_t max_n, uint64_t *rng);

/* What segmented scans refuse, each with its status and nothing written, the handle usable
 * afterwards: keys and offsets both, num_segments without offsets or too large for memory,
 * d_init or d_total with segments, a bad key_type, keys overlapping d_in or d_out (also where the keys run past
 * d_in's allocation), offsets overlapping d_out, misaligned keys and offsets, pointers of the
 * wrong kind (`foreign`, or NULL); GPU handles: keys and offsets past their allocation, and
 * offsets that break the caller's promise write nothing outside d_out; CPU handles: offsets
 * that fall or pass n. What succeeds and writes nothing: n == 0, no segments, one empty one. */
void segment_check_bad_input(dlscan_handle_t h, const test_memory *memory, void *foreign,
                             uint64_t *rng);

#endif /* DLSCAN_SEGMENT_CHECK_H */
