/*
 * scan_check.h: what the cpu and gpu suites share: fresh random inputs, the sequential
 * CPU reference, poisoned outputs and the comparison, run through one backend's memory
 * functions (host memory for the cpu suite, device memory for the gpu suite).
 *
 * Checks: integers and float min/max exactly; float sums against a float64 reference,
 * with the tolerance documented at scan_check_tolerance() in scan_check.c.
 */
#ifndef DLSCAN_SCAN_CHECK_H
#define DLSCAN_SCAN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "dlscan.h"

/* Memory of the backend under test. Copies and fills are complete when they return. */
typedef struct test_memory {
    void *(*alloc)(size_t bytes, void *context);
    void (*release)(void *p, void *context);
    void (*upload)(void *dst, const void *src, size_t bytes, void *context);
    void (*download)(void *dst, const void *src, size_t bytes, void *context);
    void (*fill)(void *dst, int byte, size_t bytes, void *context);
    void (*wait)(void *context); /* waits for the scans enqueued on `stream` */
    void *context;
    cudaStream_t stream;
} test_memory;

/* How input values are drawn. */
typedef enum test_values {
    /* integers: uniform over all bits; floats: multiples of 1/256 in [-1, 1], so every
     * partial sum is exact and any lost or doubled item shows */
    TEST_VALUES_UNIFORM,
    /* floats: random signs and mantissas, magnitudes from 2^-20 to 2^20 */
    TEST_VALUES_MIXED_MAGNITUDE,
    /* integers within 2^32 of zero (2^15 for 32-bit ones), so that many 64-bit values share
     * their high 32 bits and their low ones decide a min or a max; floats as UNIFORM, with
     * zeros of both signs */
    TEST_VALUES_NARROW
} test_values;

typedef struct scan_case {
    dlscan_type type;
    dlscan_op op;
    int exclusive;
    int with_init; /* exclusive only: a random init instead of NULL (the identity) */
    int in_place;
    size_t n;
    test_values values;
} scan_case;

/* A fresh seed per run (DLSCAN_TEST_SEED overrides it), logged so a failure can be
 * repeated. */
uint64_t test_seed(void);

/* Next value of a splitmix64 stream. */
uint64_t test_random(uint64_t *state);

/* Upper bound on sizes, from DLSCAN_TEST_MAX_N (for sanitizer runs), else `fallback`. */
size_t test_max_n(size_t fallback);

/* Sizes at and around tile edges, window edges and powers of two, up to max_n (plus
 * random ones). Returns how many it wrote (at most 64). */
int test_edge_sizes(size_t tile, size_t max_n, uint64_t *rng, size_t sizes[64]);

/* Runs one case on handle h and checks (check.h) that every output item is right. */
void scan_check_case(dlscan_handle_t h, const test_memory *memory, const scan_case *c,
                     uint64_t *rng);

/* Runs every operator, inclusive and exclusive, with and without init, in place and not,
 * at every edge size up to max_n. */
void scan_check_type(dlscan_handle_t h, const test_memory *memory, dlscan_type type,
                     size_t max_n, uint64_t *rng);

/* Fills `values` with n random items of `type`. */
void test_fill_random(dlscan_type type, test_values kind, void *values, size_t n, uint64_t *rng);

/* Checks that `out` is the scan of `in` for case c (init: NULL or one value); on a
 * mismatch returns 0 and describes the first bad item in message. */
int scan_check_output(const scan_case *c, const void *in, const void *init, const void *out,
                      char *message, size_t message_size);

/* The argument checks both backends share: each bad call returns its status, leaves the
 * poisoned output alone and leaves the handle usable. `memory` allocates the kind of
 * memory the handle scans; `foreign` is a pointer of the wrong kind, or NULL. */
void scan_check_bad_input(dlscan_handle_t h, const test_memory *memory, void *foreign);

/* A float sum of -0.0 items is -0.0 bit for bit: inclusive, exclusive without init (the
 * identity is -0.0) and reduced by key, over several tiles. */
void scan_check_signed_zeros(dlscan_handle_t h, const test_memory *memory);

#endif /* DLSCAN_SCAN_CHECK_H */
