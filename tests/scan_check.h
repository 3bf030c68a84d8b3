/*
 * scan_check.h: what the cpu and gpu suites share: fresh random inputs, the sequential
 * CPU reference, poisoned outputs and the comparison, run through one backend's memory
 * functions (host memory for the cpu suite, device memory for the gpu suite).
 *
 * The reference takes any pair of input and output types dlscan scans (dlscan.h,
 * dlscan_scan): each item converted as C converts it, integers exact (sums modulo 2^bits of
 * the output type), float min/max exact, float sums against an extended-precision sum with
 * the tolerance documented at sum_tolerance() in scan_check.c. Its 16-bit float
 * conversions are its own, written apart from the library's.
 */
#ifndef DLSCAN_SCAN_CHECK_H
#define DLSCAN_SCAN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "dlscan.h"

/* The element types: DLSCAN_INT32 .. DLSCAN_BFLOAT16. */
#define TEST_TYPE_COUNT 12

/* What outputs are poisoned with before a call: a call must not write where it should not. */
#define TEST_POISON_BYTE 0xa5

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
    /* floats: random signs and mantissas, magnitudes from 2^-20 to 2^20 (float16: 2^-14 to
     * 65504, its normal range) */
    TEST_VALUES_MIXED_MAGNITUDE,
    /* integers within 2^32 of zero (2^15 for 32-bit ones, 16 for 8- and 16-bit ones), so that
     * many 64-bit values share their high 32 bits and their low ones decide a min or a max;
     * floats as UNIFORM, with zeros of both signs */
    TEST_VALUES_NARROW,
    /* near the top of the input type, so that sums overflow it at once but not a wider
     * accumulator: integers within 16 of the type's largest value (signed ones: or of its
     * smallest); float16 and bfloat16 magnitudes 2^14 to 65504; float32 magnitudes 2^120 to
     * 2^128 (for sums into float64 only); float64 as MIXED_MAGNITUDE */
    TEST_VALUES_HIGH,
    /* floats as UNIFORM, with NaNs of both signs and random payloads (signalling ones too)
     * from a random place on (the first NaN at a random item, or none: the place is drawn
     * from 1.25 n), then at about one item in 256, and infinities of both signs at about one
     * item in 64 anywhere; integers as UNIFORM */
    TEST_VALUES_NAN
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

/* Where a pair scan's init comes from. */
typedef enum test_init { TEST_INIT_NONE, TEST_INIT_HOST, TEST_INIT_DEVICE } test_init;

/* One dlscan_scan call: n items of in_type scanned into out_type. */
typedef struct pair_case {
    dlscan_type in_type;
    dlscan_type out_type;
    dlscan_op op;
    int exclusive;
    test_init init;  /* a random init (an input item converted to out_type), or none */
    int with_total;  /* d_total set, and checked */
    int in_place;    /* d_out == d_in: types of one size only */
    size_t n;
    test_values values;
} pair_case;

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

/* Bytes of one item, and the name dlscan's command uses (NULL for a bad type). */
size_t test_type_size(dlscan_type type);
const char *test_type_name(dlscan_type type);

/* Is `type` one of the four float types (float16, bfloat16, float32, float64)? */
int test_type_is_float(dlscan_type type);

/* Does dlscan scan items of `in` into `out`? The list of dlscan.h, written out apart from the
 * library's. */
int test_pair_supported(dlscan_type in, dlscan_type out);

/* IEEE binary16 and bfloat16 bits: exactly to float, and a float to the nearest (ties to
 * even, overflow to infinity, NaN to a quiet NaN). */
float test_half_to_float(uint16_t bits);
float test_bfloat16_to_float(uint16_t bits);
uint16_t test_float_to_half(float value);
uint16_t test_float_to_bfloat16(float value);

/* Runs one case on handle h and checks (check.h) that every output item is right. */
void scan_check_case(dlscan_handle_t h, const test_memory *memory, const scan_case *c,
                     uint64_t *rng);

/* Runs every operator, inclusive and exclusive, with and without init, in place and not,
 * at every edge size up to max_n. */
void scan_check_type(dlscan_handle_t h, const test_memory *memory, dlscan_type type,
                     size_t max_n, uint64_t *rng);

/* Runs one dlscan_scan case on handle h with fresh random input, init in host or device
 * memory as the case says, poisoned output and total, and checks (check.h) every output item,
 * the total, and that d_init was only read. */
void scan_check_pair_case(dlscan_handle_t h, const test_memory *memory, const pair_case *c,
                          uint64_t *rng);

/* The same on a given input: n items of c->in_type in host memory. */
void scan_check_pair_input(dlscan_handle_t h, const test_memory *memory, const pair_case *c,
                           const void *input, uint64_t *rng);

/* Fills `values` with n random items of `type`. */
void test_fill_random(dlscan_type type, test_values kind, void *values, size_t n, uint64_t *rng);

/* Checks that `out` is the scan of `in` for case c (init: NULL or one value); on a
 * mismatch returns 0 and describes the first bad item in message. */
int scan_check_output(const scan_case *c, const void *in, const void *init, const void *out,
                      char *message, size_t message_size);

/* The same for a pair case: init is NULL or one out_type value (from the host or the
 * device, as c->init says), total NULL or the out_type value the call left at d_total
 * (which, for an inclusive scan, must equal out[n-1]). `tile` is the handle's tile for
 * out_type (dlscan_tile_items), `extra_steps` the additions a chain of calls puts on the
 * fold, or a segment's first item's place in its tile (segment_check.c) (float tolerance).
 * out may be NULL: only the total is checked (a reduction, across_check.c). */
int scan_check_pair_output(const pair_case *c, size_t tile, size_t extra_steps, const void *in,
                           const void *init, const void *out, const void *total, char *message,
                           size_t message_size);

/* An input item of `in` converted to `out` as C converts it (exact for the float pairs
 * dlscan scans), as the bits of one `out` value. */
uint64_t test_convert_item(dlscan_type in, dlscan_type out, const void *item);

/* A short description of a pair case for failure messages. */
const char *test_describe_pair(const pair_case *c, char *buffer, size_t size);

/* The argument checks both backends share: each bad call returns its status, leaves the
 * poisoned output alone and leaves the handle usable. `memory` allocates the kind of
 * memory the handle scans; `foreign` is a pointer of the wrong kind, or NULL. */
void scan_check_bad_input(dlscan_handle_t h, const test_memory *memory, void *foreign);

/* A float sum of -0.0 items is -0.0 bit for bit: inclusive, exclusive without init (the
 * identity is -0.0) and reduced by key, over several tiles. */
void scan_check_signed_zeros(dlscan_handle_t h, const test_memory *memory);

#endif /* DLSCAN_SCAN_CHECK_H */
