/*
 * test_slow.c: the `slow` suite, off by default (meson test --setup slow --suite slow):
 * scans of more than 2^32 items, in place, one of uint8 items into int32 (dlscan_scan,
 * with d_total), segmented scans in place with a segment longer than 2^32 items, by
 * offsets and by keys, and compactions of more than 2^32 items in place (select_if,
 * run-length encoding, persistent and one block per tile), and scans along an axis in place
 * (rows longer than 2^32 items, columns past 2^32 items); each checked chunk by chunk against
 * a running reference. Values come from a counter-based generator, so the check regenerates
 * them instead of keeping a copy of the input.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/options.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "dlscan.h"
#include "scan_check.h"

#define CHUNK (1ull << 26)

static uint64_t value_at(uint64_t seed, uint64_t i)
{
    uint64_t state = seed + i * 0x9e3779b97f4a7c15ull;
    return test_random(&state);
}

/* A handle for a test that needs `bytes` of device memory (and 1 GiB to spare); skips the test
 * where there is no device or not enough free memory. */
static dlscan_handle_t huge_handle(size_t bytes)
{
    dlscan_handle_t h = NULL;
    const dlscan_status created = dlscan_create(&h);
    if (created == DLSCAN_ERROR_NO_DEVICE)
        cr_skip_test("no CUDA device here");
    cr_assert_eq(created, DLSCAN_SUCCESS);
    size_t free_bytes = 0, total_bytes = 0;
    cr_assert_eq(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
    if (free_bytes < bytes + (1ull << 30))
        cr_skip_test("needs %zu GiB of device memory, %zu GiB free", (bytes >> 30) + 1, free_bytes >> 30);
    return h;
}

/* Fills device memory with n items of `size` bytes, scans it in place, and checks it. */
static void scan_huge_in_place(size_t n, dlscan_type type, int exclusive)
{
    const size_t size = type == DLSCAN_INT32 ? 4 : 8;
    dlscan_handle_t h = huge_handle(n * size);

    const uint64_t seed = test_seed();
    char *d = NULL;
    cr_assert_eq(cudaMalloc((void **)&d, n * size), cudaSuccess);
    uint64_t *chunk = malloc(CHUNK * 8);
    cr_assert(chunk);
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        for (size_t i = 0; i < count; ++i) {
            const uint64_t v = value_at(seed, first + i);
            if (size == 4)
                ((uint32_t *)chunk)[i] = (uint32_t)v;
            else
                chunk[i] = v;
        }
        cr_assert_eq(cudaMemcpy(d + first * size, chunk, count * size, cudaMemcpyHostToDevice),
                     cudaSuccess);
    }

    const dlscan_status status =
        exclusive ? dlscan_exclusive_scan(h, d, d, n, type, DLSCAN_SUM, NULL, NULL)
                  : dlscan_inclusive_scan(h, d, d, n, type, DLSCAN_SUM, NULL);
    cr_assert_eq(status, DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);

    uint64_t running = 0; /* sums wrap modulo 2^(8 * size) */
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        cr_assert_eq(cudaMemcpy(chunk, d + first * size, count * size, cudaMemcpyDeviceToHost),
                     cudaSuccess);
        for (size_t i = 0; i < count; ++i) {
            const uint64_t v = value_at(seed, first + i);
            uint64_t expect;
            if (exclusive) {
                expect = running;
                running += v;
            } else {
                running += v;
                expect = running;
            }
            const uint64_t got = size == 4 ? ((uint32_t *)chunk)[i] : chunk[i];
            if (size == 4)
                expect = (uint32_t)expect;
            cr_assert_eq(got, expect, "item %zu of %zu: got %llu, want %llu", first + i, n,
                         (unsigned long long)got, (unsigned long long)expect);
        }
    }
    free(chunk);
    cudaFree(d);
    dlscan_destroy(h);
}

Test(slow, int32_sum_past_2_pow_32_in_place, .timeout = 3600)
{
    scan_huge_in_place((1ull << 32) + 12345, DLSCAN_INT32, 0);
}

Test(slow, uint64_exclusive_sum_past_2_pow_32_in_place, .timeout = 3600)
{
    scan_huge_in_place((1ull << 32) + 7, DLSCAN_UINT64, 1);
}

/* n uint8 items (4 GiB) summed into int32 (16 GiB), inclusive, with the total on the device:
 * the sum wraps modulo 2^32 many times over. */
Test(slow, uint8_into_int32_sum_past_2_pow_32, .timeout = 3600)
{
    const size_t n = (1ull << 32) + 4099;
    dlscan_handle_t h = huge_handle(5 * n);

    const uint64_t seed = test_seed();
    uint8_t *d_in = NULL;
    uint32_t *d_out = NULL, *d_total = NULL;
    cr_assert_eq(cudaMalloc((void **)&d_in, n), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&d_out, 4 * n), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&d_total, 4), cudaSuccess);
    uint32_t *chunk = malloc(CHUNK * 4);
    cr_assert(chunk);
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        uint8_t *bytes = (uint8_t *)chunk;
        for (size_t i = 0; i < count; ++i)
            bytes[i] = (uint8_t)value_at(seed, first + i);
        cr_assert_eq(cudaMemcpy(d_in + first, bytes, count, cudaMemcpyHostToDevice), cudaSuccess);
    }

    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d_in;
    a.d_out = d_out;
    a.n = n;
    a.in_type = DLSCAN_UINT8;
    a.out_type = DLSCAN_INT32;
    a.d_total = d_total;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);

    uint32_t running = 0; /* int32 sums wrap modulo 2^32 */
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        cr_assert_eq(cudaMemcpy(chunk, d_out + first, count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t i = 0; i < count; ++i) {
            running += (uint8_t)value_at(seed, first + i);
            cr_assert_eq(chunk[i], running, "item %zu of %zu: got %u, want %u", first + i, n,
                         chunk[i], running);
        }
    }
    uint32_t total = 0;
    cr_assert_eq(cudaMemcpy(&total, d_total, 4, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert_eq(total, running, "the total: got %u, want %u", total, running);
    free(chunk);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_total);
    dlscan_destroy(h);
}

/* The segment boundaries of scan_huge_segmented over n items. By keys, segments of 5099
 * items, 2^32 + 3 (longer than 2^32), the rest but 777, 700 and 77; by offsets, the first 1000
 * items are in no segment, then segments of 4099 items, 2^32 + 3, the rest but 777, an empty
 * one and 700, and the last 77 items in none. */
#define HUGE_BOUNDARIES 6
static void huge_boundaries(size_t n, int by_keys, size_t boundaries[HUGE_BOUNDARIES])
{
    const size_t second = 1000 + 4099, third = second + (1ull << 32) + 3;
    const size_t keys[HUGE_BOUNDARIES] = {0, second, third, n - 777, n - 77, n};
    const size_t offsets[HUGE_BOUNDARIES] = {1000, second, third, n - 777, n - 777, n - 77};
    memcpy(boundaries, by_keys ? keys : offsets, sizeof keys);
}

/* n items of `type` (int32 or uint64) scanned in place as sums, by offsets or by uint8 keys
 * (each segment's key differs from the one before), and checked: sums start over at every
 * head and wrap modulo 2^bits; items in no segment keep their values. */
static void scan_huge_segmented(size_t n, dlscan_type type, int by_keys, int exclusive)
{
    const size_t size = type == DLSCAN_INT32 ? 4 : 8;
    dlscan_handle_t h = huge_handle(n * size + (by_keys ? n : 0));

    size_t boundaries[HUGE_BOUNDARIES];
    const size_t count = HUGE_BOUNDARIES;
    huge_boundaries(n, by_keys, boundaries);
    const uint64_t seed = test_seed();
    char *d = NULL;
    uint8_t *d_keys = NULL;
    size_t *d_offsets = NULL;
    cr_assert_eq(cudaMalloc((void **)&d, n * size), cudaSuccess);
    if (by_keys)
        cr_assert_eq(cudaMalloc((void **)&d_keys, n), cudaSuccess);
    else
        cr_assert_eq(cudaMalloc((void **)&d_offsets, count * sizeof(size_t)), cudaSuccess);
    uint64_t *chunk = malloc(CHUNK * 8);
    uint8_t *keys = malloc(CHUNK);
    cr_assert(chunk && keys);
    size_t segment = 0; /* the segment of item first + i, by keys */
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count_here = n - first < CHUNK ? n - first : CHUNK;
        for (size_t i = 0; i < count_here; ++i) {
            const uint64_t v = value_at(seed, first + i);
            if (size == 4)
                ((uint32_t *)chunk)[i] = (uint32_t)v;
            else
                chunk[i] = v;
            if (!by_keys)
                continue;
            while (first + i >= boundaries[segment + 1])
                ++segment;
            keys[i] = (uint8_t)(37 * segment + 1);
        }
        cr_assert_eq(cudaMemcpy(d + first * size, chunk, count_here * size, cudaMemcpyHostToDevice),
                     cudaSuccess);
        if (by_keys)
            cr_assert_eq(cudaMemcpy(d_keys + first, keys, count_here, cudaMemcpyHostToDevice), cudaSuccess);
    }
    if (!by_keys)
        cr_assert_eq(cudaMemcpy(d_offsets, boundaries, count * sizeof(size_t), cudaMemcpyHostToDevice),
                     cudaSuccess);

    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = d;
    a.d_out = d;
    a.n = n;
    a.in_type = a.out_type = type;
    a.exclusive = exclusive;
    a.d_keys = d_keys;
    a.key_type = DLSCAN_UINT8;
    a.d_offsets = d_offsets;
    a.num_segments = by_keys ? 0 : count - 1;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);

    uint64_t running = 0; /* sums wrap modulo 2^(8 * size) */
    size_t next = 0;      /* the next boundary */
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count_here = n - first < CHUNK ? n - first : CHUNK;
        cr_assert_eq(cudaMemcpy(chunk, d + first * size, count_here * size, cudaMemcpyDeviceToHost),
                     cudaSuccess);
        for (size_t i = 0; i < count_here; ++i) {
            const size_t j = first + i;
            const uint64_t v = value_at(seed, j);
            int head = 0;
            while (next < count && boundaries[next] <= j)
                head |= boundaries[next++] == j;
            uint64_t expect = v; /* in no segment: as it was */
            if (j >= boundaries[0] && j < boundaries[count - 1]) {
                if (head)
                    running = 0;
                expect = exclusive ? running : running + v;
                running += v;
            }
            const uint64_t got = size == 4 ? ((uint32_t *)chunk)[i] : chunk[i];
            if (size == 4)
                expect = (uint32_t)expect;
            cr_assert_eq(got, expect, "item %zu of %zu: got %llu, want %llu", j, n,
                         (unsigned long long)got, (unsigned long long)expect);
        }
    }
    free(chunk);
    free(keys);
    cudaFree(d);
    cudaFree(d_keys);
    cudaFree(d_offsets);
    dlscan_destroy(h);
}

Test(slow, int32_sum_by_offsets_past_2_pow_32_in_place, .timeout = 3600)
{
    scan_huge_segmented((1ull << 32) + (1ull << 22) + 12345, DLSCAN_INT32, 0, 0);
}

Test(slow, uint64_exclusive_sum_by_uint8_keys_past_2_pow_32_in_place, .timeout = 3600)
{
    scan_huge_segmented((1ull << 32) + (1ull << 21) + 777, DLSCAN_UINT64, 1, 1);
}

/* ---------------------------------------------------------------- along an axis */

/* n int32 items, arrays [n / (length x stride)][length][stride], scanned in place along the
 * middle axis as sums with each scan's total in d_totals, and checked: every scan's running
 * sum (one per column of the current array, wrapping modulo 2^32) and its total. */
static void scan_huge_axis(size_t n, size_t length, size_t stride)
{
    const size_t scans = n / length;
    dlscan_handle_t h = huge_handle(n * 4 + scans * 4);
    const uint64_t seed = test_seed();
    uint32_t *d = NULL, *d_totals = NULL;
    cr_assert_eq(cudaMalloc((void **)&d, n * 4), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&d_totals, scans * 4), cudaSuccess);
    uint32_t *chunk = malloc(CHUNK * 4), *running = calloc(stride, 4), *totals = malloc(scans * 4);
    cr_assert(chunk && running && totals);
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        for (size_t i = 0; i < count; ++i)
            chunk[i] = (uint32_t)value_at(seed, first + i);
        cr_assert_eq(cudaMemcpy(d + first, chunk, count * 4, cudaMemcpyHostToDevice), cudaSuccess);
    }

    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = a.d_out = d;
    a.n = n;
    a.axis_length = length;
    a.axis_stride = stride;
    a.d_totals = d_totals;
    cr_assert_eq(dlscan_scan(h, &a, NULL), DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    cr_assert_eq(cudaMemcpy(totals, d_totals, scans * 4, cudaMemcpyDeviceToHost), cudaSuccess);

    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        cr_assert_eq(cudaMemcpy(chunk, d + first, count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t i = 0; i < count; ++i) {
            const size_t g = first + i, j = g % stride, k = g / stride % length;
            if (k == 0)
                running[j] = 0;
            running[j] += (uint32_t)value_at(seed, g);
            cr_assert_eq(chunk[i], running[j], "item %zu of %zu (row %zu, column %zu): got %u, want %u",
                         g, n, k, j, chunk[i], running[j]);
            if (k + 1 == length) {
                const size_t scan = g / (length * stride) * stride + j;
                cr_assert_eq(totals[scan], running[j], "total %zu: got %u, want %u", scan, totals[scan],
                             running[j]);
            }
        }
    }
    free(chunk);
    free(running);
    free(totals);
    cudaFree(d);
    cudaFree(d_totals);
    dlscan_destroy(h);
}

/* Two rows of 2^32 + 3 items: a row longer than 2^32, heads past it. */
Test(slow, int32_rows_past_2_pow_32_in_place, .timeout = 3600)
{
    scan_huge_axis(2 * ((1ull << 32) + 3), (1ull << 32) + 3, 1);
}

/* Columns past 2^32 items: three of (2^32 + 12) / 3 rows (the narrow kernel), and 300 (a strip
 * of 256 and one of 44) in two arrays. */
Test(slow, int32_columns_past_2_pow_32_in_place, .timeout = 3600)
{
    scan_huge_axis(3 * (((1ull << 32) + 12) / 3), ((1ull << 32) + 12) / 3, 3);
    scan_huge_axis(300ull * 2 * 7158282, 7158282, 300);
}

/* ---------------------------------------------------------------- compaction */

/* Chunk by chunk reads of n device items of `size` bytes (4 or 8), in rising order. */
typedef struct huge_reader {
    const char *d;
    size_t n, size, first, count;
    void *chunk;
} huge_reader;

static uint64_t huge_read(huge_reader *r, size_t k)
{
    if (k < r->first || k >= r->first + r->count) {
        r->first = k;
        r->count = r->n - k < CHUNK ? r->n - k : CHUNK;
        cr_assert_eq(cudaMemcpy(r->chunk, r->d + k * r->size, r->count * r->size, cudaMemcpyDeviceToHost),
                     cudaSuccess);
    }
    return r->size == 4 ? ((const uint32_t *)r->chunk)[k - r->first] : ((const uint64_t *)r->chunk)[k - r->first];
}

/* Item i of a compaction's input, given the item before it: runs of mean length 64 (a run
 * starts where a draw is 0 mod 64) of drawn keys. */
static uint32_t huge_run_item(uint64_t seed, uint64_t i, uint32_t before)
{
    return i == 0 || value_at(seed, i) % 64 == 0 ? (uint32_t)value_at(~seed, i) : before;
}

/* n int32 items compacted in place: select_if (kept where >= 0, about half) or run-length
 * encoding (runs of mean 64, their lengths beside), by the persistent kernels or (one_block) one
 * block per tile; checked against the regenerated input. */
static void compact_huge_in_place(size_t n, int run_length, int one_block)
{
    dlscan_handle_t h = huge_handle(4 * n + (run_length ? 8 * n : 0));
    if (one_block)
        cr_assert_eq(dlscan_set_option(h, DLSCAN_OPTION_PERSISTENT, 0), DLSCAN_SUCCESS);

    const uint64_t seed = test_seed();
    uint32_t *d = NULL;
    size_t *d_lengths = NULL, *d_count = NULL;
    cr_assert_eq(cudaMalloc((void **)&d, 4 * n), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&d_count, sizeof(size_t)), cudaSuccess);
    if (run_length)
        cr_assert_eq(cudaMalloc((void **)&d_lengths, 8 * n), cudaSuccess);
    uint32_t *chunk = malloc(CHUNK * 4);
    uint64_t *lengths_chunk = malloc(CHUNK * 8);
    cr_assert(chunk && lengths_chunk);
    uint32_t item = 0;
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        for (size_t i = 0; i < count; ++i)
            chunk[i] = item = run_length ? huge_run_item(seed, first + i, item) : (uint32_t)value_at(seed, first + i);
        cr_assert_eq(cudaMemcpy(d + first, chunk, count * 4, cudaMemcpyHostToDevice), cudaSuccess);
    }

    const int32_t zero = 0;
    const dlscan_status status =
        run_length ? dlscan_run_length_encode(h, d, d, d_lengths, d_count, n, DLSCAN_INT32, NULL)
                   : dlscan_select_if(h, d, d, d_count, n, DLSCAN_INT32, DLSCAN_GREATER_EQUAL, &zero, NULL);
    cr_assert_eq(status, DLSCAN_SUCCESS, "%s", dlscan_last_error(h));
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    size_t got_count = 0;
    cr_assert_eq(cudaMemcpy(&got_count, d_count, sizeof got_count, cudaMemcpyDeviceToHost), cudaSuccess);

    huge_reader items = {(const char *)d, n, 4, 0, 0, chunk};
    huge_reader lengths = {(const char *)d_lengths, n, 8, 0, 0, lengths_chunk};
    size_t k = 0, run_start = 0;
    item = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t before = item;
        item = run_length ? huge_run_item(seed, i, item) : (uint32_t)value_at(seed, i);
        const int kept = run_length ? i == 0 || item != before : (int32_t)item >= 0;
        if (!kept)
            continue;
        if (run_length && k > 0) {
            const uint64_t length = huge_read(&lengths, k - 1);
            cr_assert_eq(length, i - run_start, "run %zu: length %llu, want %zu", k - 1,
                         (unsigned long long)length, i - run_start);
        }
        cr_assert(k < got_count, "item %zu: output %zu, past the count %zu", i, k, got_count);
        const uint64_t got = huge_read(&items, k);
        cr_assert_eq(got, item, "output %zu (item %zu of %zu): got %llu, want %u", k, i, n,
                     (unsigned long long)got, item);
        run_start = i;
        ++k;
    }
    cr_assert_eq(got_count, k, "count %zu, want %zu", got_count, k);
    if (run_length)
        cr_assert_eq(huge_read(&lengths, k - 1), n - run_start, "the last run's length");
    free(chunk);
    free(lengths_chunk);
    cudaFree(d);
    cudaFree(d_lengths);
    cudaFree(d_count);
    dlscan_destroy(h);
}

Test(slow, int32_select_if_past_2_pow_32_in_place, .timeout = 3600)
{
    compact_huge_in_place((1ull << 32) + 9999, 0, 0);
}

Test(slow, int32_run_length_encode_past_2_pow_32_in_place, .timeout = 3600)
{
    compact_huge_in_place((1ull << 32) + 4097, 1, 0);
}

/* The one-block kernel's 64-bit counts: below 2^32 items it carries 32-bit ones. */
Test(slow, int32_run_length_encode_past_2_pow_32_one_block_in_place, .timeout = 3600)
{
    compact_huge_in_place((1ull << 32) + 12289, 1, 1);
}

/* Each test needs up to 49 GiB of device memory, so the suite runs one test at a time: run
 * side by side, as Criterion runs tests by default, all but one or two skip for want of
 * memory. `--jobs` on the command line still overrides this. */
int main(int argc, char *argv[])
{
    struct criterion_test_set *tests = criterion_initialize();
    criterion_options.jobs = 1;
    int result = 0;
    if (criterion_handle_args(argc, argv, true))
        result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    return result;
}
