/*
 * compact_check.h: the compaction tests the cpu and gpu suites share (and bench_compact.c's
 * inputs and reference): inputs with a chosen keep ratio or run-length pattern, the
 * sequential reference of each call, poisoned outputs (nothing past the count may be
 * written) and in-place runs, through one backend's memory functions (scan_check.h's
 * test_memory).
 */
#ifndef DLSCAN_COMPACT_CHECK_H
#define DLSCAN_COMPACT_CHECK_H

#include "scan_check.h"

typedef enum compact_call {
    COMPACT_SELECT_FLAGGED,
    COMPACT_SELECT_IF,
    COMPACT_UNIQUE,
    COMPACT_RUN_LENGTH,
    COMPACT_REDUCE_BY_KEY
} compact_call;

/* How items are drawn: a keep ratio (selects), or runs (unique, run-length, by-key). */
typedef enum compact_pattern {
    PATTERN_KEEP_NONE,       /* 0% kept */
    PATTERN_KEEP_1,          /* about 1% */
    PATTERN_KEEP_HALF,       /* about 50% */
    PATTERN_KEEP_99,         /* about 99% */
    PATTERN_KEEP_ALL,        /* 100% */
    PATTERN_RUNS_OF_1,       /* every item differs from the one before */
    PATTERN_RUNS_OF_TILE,    /* runs exactly `tile` items long */
    PATTERN_RUNS_OF_TILES,   /* runs of several tiles */
    PATTERN_RUNS_RANDOM,     /* random lengths, mean about 6 */
    PATTERN_RUNS_HALF,       /* each item repeats the one before with probability 1/2 */
    PATTERN_RUNS_MEAN_8,     /* ... with probability 1 - 1/L: runs of mean L = 8, */
    PATTERN_RUNS_MEAN_64,    /* 64 */
    PATTERN_RUNS_MEAN_1024,  /* and 1024 (PATTERN_RUNS_HALF is L = 2) */
    PATTERN_RUNS_NAN,        /* runs of mean 64; reduce-by-key's float values with NaNs and
                                infinities (TEST_VALUES_NAN) */
    PATTERN_EDGES            /* select_if: items and operand at a comparison's edges (signed
                                zeros, infinities, NaNs, the type's extremes) */
} compact_pattern;

/* The longest run PATTERN_RUNS_MEAN_* draw: sums of float32 values (multiples of 1/256 in
 * [-1, 1]) stay exact up to 2^16 items, in any order. A run of mean 1024 passes it with
 * probability about e^-64. */
#define COMPACT_LONGEST_RUN ((size_t)1 << 16)

typedef struct compact_case {
    compact_call call;
    dlscan_type type;        /* items, or keys */
    dlscan_type value_type;  /* reduce-by-key */
    dlscan_op op;            /* reduce-by-key */
    dlscan_predicate predicate; /* select_if */
    compact_pattern pattern;
    size_t tile;             /* for the run patterns */
    size_t n;
    int in_place;
} compact_case;

/* Host inputs of case c (n items; flags and values as the call needs; operand_bits for
 * select_if), drawn from rng. */
void compact_make_inputs(const compact_case *c, void *in, unsigned char *flags, void *values,
                         uint64_t *operand_bits, uint64_t *rng);

/* The sequential reference: writes the expected outputs, returns the expected count. */
size_t compact_reference(const compact_case *c, const void *in, const unsigned char *flags,
                         const void *values, const void *operand, void *out, void *out2);

/* Runs one case on handle h and checks (check.h) the count and every output item. */
void compact_check_case(dlscan_handle_t h, const test_memory *memory, const compact_case *c,
                        uint64_t *rng);

/* Every call on items (keys) of `type`, every pattern that fits it (the run calls also with
 * runs of mean 64 and 1024; select_if also at a comparison's edges under every predicate), sizes
 * at the tile edges of both backends (2048, 4096 and 8192) and random ones up to max_n, in place
 * and not. */
void compact_check_type(dlscan_handle_t h, const test_memory *memory, dlscan_type type,
                        size_t max_n, uint64_t *rng);

/* Bad compaction arguments: statuses, nothing written, the handle still works. */
void compact_check_bad_input(dlscan_handle_t h, const test_memory *memory, void *foreign);

/* select_if's reference: whether item i of `items` (one of compaction's types) passes
 * `item predicate operand`, as C compares them. */
int compact_check_keeps(dlscan_type type, dlscan_predicate predicate, const void *items, size_t i,
                        const void *operand);

#endif /* DLSCAN_COMPACT_CHECK_H */
