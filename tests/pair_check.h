/*
 * pair_check.h: the tests of dlscan_scan that the cpu and gpu suites share, on scan_check.h's
 * reference and memory functions: every pair of input and output types with every operator,
 * calls chained over chunks through a device-side init and total, 16-bit floats with NaN,
 * infinities and subnormals, and the refusals.
 */
#ifndef DLSCAN_PAIR_CHECK_H
#define DLSCAN_PAIR_CHECK_H

#include "scan_check.h"

/* Every output type that in_type scans into, every operator, inclusive and exclusive, with
 * no init, a host init and a device init, with and without d_total, in place where the
 * types have one size, at sizes around the output type's tile and one random size in
 * [max_n / 2, max_n]; values uniform, narrow and near the top of the input type (sums that
 * overflow it but not the accumulator). */
void pair_check_every_output(dlscan_handle_t h, const test_memory *memory, dlscan_type in_type,
                             size_t max_n, uint64_t *rng);

/* The values of the i-th size of in -> out in pair_check_every_output's cycle: uniform, near
 * the top of the input type, narrow (mixed magnitudes where a float32 or float64 sum into its
 * own type would overflow near the top). */
test_values pair_check_values(dlscan_type in, dlscan_type out, int i);

/* Expects `status` to be `want`, with a message on the handle (check.h's EXPECT). */
void test_expect_refused(dlscan_handle_t h, dlscan_status status, dlscan_status want, const char *what);

/* Expects `bytes` of the backend's memory at p to hold TEST_POISON_BYTE still. */
void test_expect_poisoned(const test_memory *m, const void *p, size_t bytes, const char *what);

/* Calls chained over chunks: one running out_type value at d_run is every call's d_init and
 * d_total, so that the chunks scan as one scan of all their items with the init the chain
 * starts from. Shared with the gpu suite's graph test, which captures test_chain_enqueue. */
typedef struct test_chain {
    pair_case whole;  /* the one scan the chain equals (n = all chunks) */
    size_t tile;      /* dlscan_tile_items of the output type */
    size_t chunk[8];  /* items per call, some 0 */
    int chunks;
    void *input, *output;  /* host */
    uint64_t init_bits;    /* the init, as out_type bits */
    void *d_in, *d_out, *d_run;
} test_chain;

/* Picks chunk sizes (around the tile, 0 and 1, and one random, each at most max_n) and
 * allocates the buffers. */
void test_chain_make(dlscan_handle_t h, const test_memory *memory, test_chain *chain,
                     dlscan_type in_type, dlscan_type out_type, dlscan_op op, int exclusive,
                     size_t max_n, uint64_t *rng);
/* Fresh input and init: uploads them (the init to d_run) and poisons the output. */
void test_chain_fill(const test_memory *memory, test_chain *chain, uint64_t *rng);
/* Enqueues the chained calls; returns the first status that is not success. */
dlscan_status test_chain_enqueue(dlscan_handle_t h, const test_chain *chain, cudaStream_t stream);
/* Waits, and checks (check.h) the output and the total left at d_run. */
void test_chain_check(const test_memory *memory, const test_chain *chain);
void test_chain_free(const test_memory *memory, test_chain *chain);

/* A chain for every output type of in_type and every operator, inclusive and exclusive:
 * integers as exact as the one-shot scan, floats within the reference's tolerance. */
void pair_check_chains(dlscan_handle_t h, const test_memory *memory, dlscan_type in_type,
                       size_t max_n, uint64_t *rng);

/* float16 and bfloat16 into float32 and into themselves, over several tiles: sums, min and
 * max of data with NaN, infinities of both signs and subnormals (NaN and infinities propagate
 * as in the reference), of subnormals alone (nothing flushed to zero), and min and max of data
 * with infinities and subnormals but no NaN. */
void pair_check_16_bit_float_specials(dlscan_handle_t h, const test_memory *memory, uint64_t *rng);

/* Min and max propagate NaN (dlscan.h), as NumPy and PyTorch do: PyTorch's and NumPy's own
 * cases, then every float pair, inclusive and exclusive, with and without an init, at tile
 * edges and over many tiles (up to max_n), on TEST_VALUES_NAN; segmented scans by keys and by
 * offsets, and reduce-by-key with float32 and float64 values. */
void pair_check_nans(dlscan_handle_t h, const test_memory *memory, size_t max_n, uint64_t *rng);

/* What dlscan_scan refuses, each with its status and nothing written to the poisoned output
 * and total: every pair of types not in dlscan.h's list (and every pair in it scans), bad
 * args (NULL, sizes, exclusive, both inits), overlaps of d_init and d_total, misaligned ones,
 * pointers of the wrong kind (`foreign`, or NULL); larger structs with zero tails work, n == 0
 * writes the init to d_total, and compaction refuses the 8- and 16-bit types. */
void pair_check_refusals(dlscan_handle_t h, const test_memory *memory, void *foreign, uint64_t *rng);

#endif /* DLSCAN_PAIR_CHECK_H */
