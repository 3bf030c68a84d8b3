/*
 * bench_segmented.c: segmented scans (issue 23), dlscan_scan by key and over segment offsets,
 * against their floor and CUB's scan by key, side by side in one run.
 *
 *   bench_segmented [--quick] [--modes keys,offsets] [--lengths 1,8,64,4096,r32]
 *                   [--key-type int32|int64] [--type int32|int64|float32|float64]
 *                   [--op sum|min|max] [--min-log 16] [--max-log 28] [--repeats 5]
 *                   [--csv FILE] [--markdown FILE]
 *
 * --quick: every other size, 3 repeats. --max-log 30 where memory allows (the largest size
 * is lowered to what the GPU's free memory holds; CUB takes int counts, so 2^30 at most).
 *
 * The segments, per run length of --lengths, the same for both modes:
 *   L    every segment L items long, the first from item 0;
 *   rL   lengths drawn uniformly from 1 .. 2L - 1 (mean L), once per run length and run.
 * The keys are the segments' numbers (item i of segment s has key s, as --key-type), the
 * offsets the segments' first items. A size n below the largest takes the first n items: the
 * keys' prefix, and the offsets of the segments that start before n, the last set to n.
 *
 * Per mode, run length and size, three variants:
 *   floor   cudaMemcpyAsync device to device of half the bytes a single-pass segmented scan
 *           must move (the copy reads them and writes them): by key, the n keys and n values
 *           read and the n outputs written ((key + 2 x value size) x n bytes: 12 for int32
 *           keys and values); over offsets, the n values read and written and the
 *           num_segments + 1 offsets (size_t) read;
 *   dlscan  dlscan_scan with d_keys and key_type (mode keys), or d_offsets and num_segments
 *           (mode offsets); default handle options;
 *   cub     cub::DeviceScan::InclusiveSumByKey (for --op min and max InclusiveScanByKey with
 *           cuda::minimum, cuda::maximum) on the keys, in both modes: over offsets CUB is
 *           given the keys made from the offsets (made before the timing, not timed), and its
 *           fraction of the floor is of the offsets' floor.
 * Method (timing.c, as bench.c's): the three are warmed up (3 calls), then timed back to back
 * between CUDA events in batches of about 4 ms, the variants' batches alternating round by
 * round; the median of --repeats batches gives the time per call. Reported: us per call, the
 * fraction of the floor (floor time / time), dlscan / CUB (CUB's time over dlscan's: the ratio
 * of calls per second) and calls per second.
 *
 * The correctness guard, once per row, after its timing: CUB's output, then dlscan's into a
 * poisoned output, compared bit for bit. CUB's own output is checked against the sequential
 * reference below at each run length and mode's first size; without CUB, dlscan's is checked
 * against the reference at every size. A mismatch is reported on stderr, the row's dlscan
 * numbers read WRONG and the program exits 1.
 *
 * Data: integers uniform over all their bits (the sums wrap); floats multiples of 1/256 in
 * [-1, 1] (tests/scan_check.c), so that every partial sum of a segment of up to 2^16 items is
 * exact in float32, whatever the order: float outputs are compared bit for bit too, and with
 * float values a run length may not make segments longer than 2^16 items.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (stats.h) */

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "dlscan.h"
#include "host.h"
#include "scan_check.h"
#include "timing.h"
#include "variants.h"

int test_expect_failures; /* scan_check.c's plain-build counter (unused here) */

#define MAX_LENGTHS 16
#define MAX_SIZES 31

enum mode { BY_KEYS, BY_OFFSETS, MODES };
static const char *const mode_names[MODES] = {"keys", "offsets"};

enum variant { FLOOR, DLSCAN, CUB, VARIANTS };
static const char *const variant_names[VARIANTS] = {"floor", "dlscan", "cub"};
static const char *const op_names[] = {"sum", "min", "max"};

/* A run length of --lengths: every segment `mean` items long, or lengths drawn uniformly from
 * 1 .. 2 x mean - 1. */
typedef struct run_length {
    size_t mean;
    int random;
} run_length;

static size_t longest(run_length l) { return l.random ? 2 * l.mean - 1 : l.mean; }

static const char *length_label(run_length l, char *buffer, size_t size)
{
    snprintf(buffer, size, "%s%zu", l.random ? "r" : "", l.mean);
    return buffer;
}

static int is_float(dlscan_type type) { return type == DLSCAN_FLOAT32 || type == DLSCAN_FLOAT64; }

/* ---------------------------------------------------------------- options */

typedef struct options {
    int quick;
    int modes[MODES], mode_count;
    run_length lengths[MAX_LENGTHS];
    int length_count;
    dlscan_type key_type, type;
    dlscan_op op;
    int min_log, max_log, repeats;
    const char *csv, *markdown;
} options;

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_segmented [--quick] [--modes keys,offsets] [--lengths 1,8,64,4096,r32]\n"
            "                       [--key-type int32|int64] [--type int32|int64|float32|float64]\n"
            "                       [--op sum|min|max] [--min-log N] [--max-log N] [--repeats N]\n"
            "                       [--csv FILE] [--markdown FILE]\n"
            "lengths: L (every segment L items) or rL (uniform in 1 .. 2L-1); with float values\n"
            "         no segment may pass 2^16 items\n");
    exit(2);
}

static dlscan_type parse_type(const char *name, int keys)
{
    const dlscan_type allowed[4] = {DLSCAN_INT32, DLSCAN_INT64, DLSCAN_FLOAT32, DLSCAN_FLOAT64};
    for (int k = 0; k < (keys ? 2 : 4); ++k) /* keys: the integers, which CUB and dlscan compare alike */
        if (strcmp(name, test_type_name(allowed[k])) == 0)
            return allowed[k];
    usage();
    return DLSCAN_INT32;
}

static options parse_options(int argc, char **argv)
{
    options o = {0};
    o.modes[0] = BY_KEYS, o.modes[1] = BY_OFFSETS, o.mode_count = 2;
    const run_length defaults[] = {{1, 0}, {8, 0}, {64, 0}, {4096, 0}, {32, 1}};
    memcpy(o.lengths, defaults, sizeof defaults);
    o.length_count = (int)(sizeof defaults / sizeof defaults[0]);
    o.key_type = o.type = DLSCAN_INT32;
    o.op = DLSCAN_SUM;
    o.min_log = 16, o.max_log = 28, o.repeats = 5;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        char copy[256];
        if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (value && strcmp(a, "--modes") == 0) {
            snprintf(copy, sizeof copy, "%s", value);
            o.mode_count = 0;
            for (char *t = strtok(copy, ","); t; t = strtok(NULL, ","))
                if (o.mode_count == MODES ||
                    (o.modes[o.mode_count++] = bench_find_name(t, mode_names, MODES)) < 0)
                    usage();
            ++i;
        } else if (value && strcmp(a, "--lengths") == 0) {
            snprintf(copy, sizeof copy, "%s", value);
            o.length_count = 0;
            for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
                if (o.length_count == MAX_LENGTHS)
                    usage();
                run_length *l = &o.lengths[o.length_count++];
                l->random = *t == 'r';
                char *end = NULL;
                const unsigned long long mean = strtoull(t + l->random, &end, 10);
                if (*end || mean < 1 || mean > (1ull << 30))
                    usage();
                l->mean = (size_t)mean;
            }
            ++i;
        } else if (value && strcmp(a, "--key-type") == 0) {
            o.key_type = parse_type(value, 1), ++i;
        } else if (value && strcmp(a, "--type") == 0) {
            o.type = parse_type(value, 0), ++i;
        } else if (value && strcmp(a, "--op") == 0) {
            const int op = bench_find_name(value, op_names, 3);
            if (op < 0)
                usage();
            o.op = (dlscan_op)op, ++i;
        } else if (value && strcmp(a, "--min-log") == 0) {
            o.min_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--max-log") == 0) {
            o.max_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--repeats") == 0) {
            o.repeats = atoi(value), ++i;
        } else if (value && strcmp(a, "--csv") == 0) {
            o.csv = value, ++i;
        } else if (value && strcmp(a, "--markdown") == 0) {
            o.markdown = value, ++i;
        } else {
            usage();
        }
    }
    if (o.quick)
        o.repeats = 3;
    for (int k = 0; k < o.length_count; ++k)
        if (is_float(o.type) && longest(o.lengths[k]) > (size_t)1 << 16)
            usage(); /* float sums would no longer be exact */
    /* CUB takes int counts: below 2^31 items */
    if (o.mode_count < 1 || o.length_count < 1 || o.min_log < 1 || o.max_log > 30 ||
        o.min_log > o.max_log || o.repeats < 1 || o.repeats > 64)
        usage();
    return o;
}

/* ---------------------------------------------------------------- data and reference */

/* Cuts max_n items into segments of run length l: writes each item's key (its segment's
 * number) and each segment's first item, then offsets[count] = max_n. Returns the count. */
static size_t make_segments(run_length l, dlscan_type key_type, size_t max_n, void *keys,
                            size_t *offsets, uint64_t *rng)
{
    size_t count = 0;
    for (size_t start = 0; start < max_n; ++count) {
        size_t length = l.random ? 1 + test_random(rng) % longest(l) : l.mean;
        length = length < max_n - start ? length : max_n - start;
        offsets[count] = start;
        for (size_t i = start; i < start + length; ++i)
            if (key_type == DLSCAN_INT32)
                ((int32_t *)keys)[i] = (int32_t)count;
            else
                ((int64_t *)keys)[i] = (int64_t)count;
        start += length;
    }
    offsets[count] = max_n;
    return count;
}

/* The segments of the first n items: those that start before n. offsets[0] = 0 < n and
 * offsets[count] = max_n >= n. */
static size_t segments_before(const size_t *offsets, size_t count, size_t n)
{
    size_t low = 1, high = count; /* the first k with offsets[k] >= n lies in [low, high] */
    while (low < high) {
        const size_t mid = low + (high - low) / 2;
        if (offsets[mid] >= n)
            high = mid;
        else
            low = mid + 1;
    }
    return low;
}

/* Item i as an integer (sign-extended) or a float. */
static int64_t integer_at(dlscan_type type, const void *values, size_t i)
{
    return type == DLSCAN_INT32 ? ((const int32_t *)values)[i] : ((const int64_t *)values)[i];
}

static double float_at(dlscan_type type, const void *values, size_t i)
{
    return type == DLSCAN_FLOAT32 ? ((const float *)values)[i] : ((const double *)values)[i];
}

/* The sequential reference: the index of the first item of out that is not the inclusive scan
 * of its segment (runs of equal keys) so far, or n when all are right. Integer sums wrap;
 * float sums are exact (see Data above): every item is compared bit for bit. */
static size_t first_wrong(const options *o, const void *keys, const void *values, const void *out,
                          size_t n)
{
    const size_t key_size = test_type_size(o->key_type), size = test_type_size(o->type);
    const unsigned char *key = keys;
    uint64_t integer = 0;
    double real = 0;
    for (size_t i = 0; i < n; ++i) {
        const int head = i == 0 || memcmp(key + i * key_size, key + (i - 1) * key_size, key_size) != 0;
        unsigned char want[8];
        if (is_float(o->type)) {
            const double x = float_at(o->type, values, i);
            real = head                  ? x
                   : o->op == DLSCAN_SUM ? real + x
                   : o->op == DLSCAN_MIN ? fmin(real, x)
                                         : fmax(real, x);
            const float narrow = (float)real;
            memcpy(want, size == 4 ? (const void *)&narrow : (const void *)&real, size);
        } else {
            const int64_t x = integer_at(o->type, values, i);
            if (head || (o->op == DLSCAN_MIN && x < (int64_t)integer) ||
                (o->op == DLSCAN_MAX && x > (int64_t)integer))
                integer = (uint64_t)x;
            else if (o->op == DLSCAN_SUM)
                integer += (uint64_t)x; /* wraps; its low 32 bits are the int32 sum */
            const uint32_t narrow = (uint32_t)integer;
            memcpy(want, size == 4 ? (const void *)&narrow : (const void *)&integer, size);
        }
        if (memcmp(want, (const unsigned char *)out + i * size, size) != 0)
            return i;
    }
    return n;
}

/* ---------------------------------------------------------------- the calls */

/* What one row's calls use: a bench_run_fn's context (timing.h). */
typedef struct row_calls {
    const options *o;
    int mode;
    dlscan_handle_t h;
    const void *d_keys, *d_values;
    void *d_out;
    const size_t *d_offsets;
    size_t segments;   /* num_segments, mode offsets */
    void *cub_temp;
    size_t cub_temp_bytes;
    char *d_copy;      /* the floor: copy_bytes from d_copy to d_copy + copy_bytes */
    size_t copy_bytes;
} row_calls;

static int run_variant(const void *context, int v, size_t n, cudaStream_t stream)
{
    const row_calls *c = context;
    const options *o = c->o;
    if (v == FLOOR)
        return (int)cudaMemcpyAsync(c->d_copy + c->copy_bytes, c->d_copy, c->copy_bytes,
                                    cudaMemcpyDeviceToDevice, stream);
    if (v == CUB) {
        size_t bytes = c->cub_temp_bytes;
        return bench_cub_scan_by_key(o->key_type, o->type, o->op, c->cub_temp, &bytes, c->d_keys,
                                     c->d_values, c->d_out, n, stream);
    }
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = c->d_values, a.in_type = o->type;
    a.d_out = c->d_out, a.out_type = o->type;
    a.n = n, a.op = o->op;
    if (c->mode == BY_KEYS)
        a.d_keys = c->d_keys, a.key_type = o->key_type;
    else
        a.d_offsets = c->d_offsets, a.num_segments = c->segments;
    const dlscan_status status = dlscan_scan(c->h, &a, stream);
    if (status != DLSCAN_SUCCESS)
        fprintf(stderr, "bench_segmented: dlscan: %s: %s\n", dlscan_status_string(status),
                dlscan_last_error(c->h));
    return status == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}

/* ---------------------------------------------------------------- a row */

typedef struct row {
    int mode, length, log; /* length: the index in options.lengths */
    size_t n, segments, floor_bytes;
    int valid[VARIANTS];
    int in_l2;                /* the floor's bytes fit in L2 */
    int wrong;                /* dlscan's output was not CUB's (or the reference's) */
    double us[VARIANTS];      /* per call, median */
    double host_us[VARIANTS]; /* the host's time to enqueue a call, median */
} row;

/* The host's copies: inputs, and the two outputs the guard compares. */
typedef struct host_data {
    const void *keys, *values;
    void *want, *got;
} host_data;

/* Runs variant v once into a poisoned d_out and copies its output to `to` (timing.c). Returns 1
 * if the call went. */
static int run_into(const row_calls *c, int v, size_t n, cudaStream_t stream, void *to)
{
    return bench_run_poisoned(run_variant, c, v, n, c->d_out, n * test_type_size(c->o->type),
                              TEST_POISON_BYTE, to, stream, "bench_segmented", variant_names[v]);
}

/* The guard, after the row's timing: CUB's output (checked against the reference where
 * check_cub is set), then dlscan's, compared bit for bit with CUB's, or with the reference
 * where CUB is missing or wrong. Returns how many outputs were wrong. */
static int check_row(const row_calls *c, row *r, const host_data *d, int check_cub, const char *block,
                     cudaStream_t stream)
{
    const size_t n = r->n, size = test_type_size(c->o->type);
    int failed = 0;
    if (r->valid[CUB] && !run_into(c, CUB, n, stream, d->want))
        r->valid[CUB] = 0, ++failed;
    if (r->valid[CUB] && check_cub) {
        const size_t wrong = first_wrong(c->o, d->keys, d->values, d->want, n);
        if (wrong < n) {
            fprintf(stderr, "bench_segmented: WRONG: cub, %s, n = %zu: item %zu is not the "
                            "sequential reference's\n", block, n, wrong);
            r->valid[CUB] = 0, ++failed;
        }
    }
    if (!r->valid[DLSCAN])
        return failed;
    if (!run_into(c, DLSCAN, n, stream, d->got)) {
        r->valid[DLSCAN] = 0;
        return failed + 1;
    }
    const int against_cub = r->valid[CUB];
    const size_t wrong = against_cub ? bench_first_difference(d->want, d->got, n, size)
                                     : first_wrong(c->o, d->keys, d->values, d->got, n);
    if (wrong < n) {
        uint64_t got = 0, want = 0;
        memcpy(&got, (const char *)d->got + wrong * size, size);
        if (against_cub)
            memcpy(&want, (const char *)d->want + wrong * size, size);
        fprintf(stderr, "bench_segmented: WRONG: dlscan, %s, n = %zu: item %zu is 0x%llx", block, n, wrong,
                (unsigned long long)got);
        if (against_cub)
            fprintf(stderr, " where CUB's is 0x%llx\n", (unsigned long long)want);
        else
            fprintf(stderr, ", not the sequential reference's\n");
        r->valid[DLSCAN] = 0, r->wrong = 1, ++failed;
    }
    return failed;
}

/* ---------------------------------------------------------------- output */

static void print_us(FILE *f, const row *r, int v)
{
    bench_cell_us(f, r->valid[v], r->us[v], v == DLSCAN && r->wrong ? "WRONG" : "-");
}

/* "1.234" or "-" where either time is missing: a / b as times, so b's speed over a's. */
static void print_ratio(FILE *f, const row *r, int over, int under)
{
    bench_cell_ratio(f, r->valid[over] && r->valid[under], r->us[over], r->us[under]);
}

static void print_csv(FILE *csv, const options *o, const row *r)
{
    char label[32];
    for (int v = 0; v < VARIANTS; ++v) {
        if (!r->valid[v])
            continue;
        const double seconds = r->us[v] * 1e-6;
        fprintf(csv, "%s,%s,%s,%s,inclusive,%s,%s,%zu,%zu,%.3f,%zu,%d,%.4f,%.6g,%.6g,%.6g,%.6g,%.3f\n",
                mode_names[r->mode], test_type_name(o->key_type), test_type_name(o->type), op_names[o->op],
                length_label(o->lengths[r->length], label, sizeof label), variant_names[v], r->n,
                r->segments, (double)r->n / (double)r->segments, r->floor_bytes, r->in_l2,
                r->us[v], (double)r->n / seconds, (double)r->floor_bytes / seconds / 1e9,
                r->valid[FLOOR] ? r->us[FLOOR] / r->us[v] : NAN, 1.0 / seconds, r->host_us[v]);
    }
}

static void markdown(FILE *f, const struct cudaDeviceProp *prop, const options *o, const row *rows,
                     int count)
{
    const char *key = test_type_name(o->key_type), *type = test_type_name(o->type);
    int top_log = 0;
    for (int i = 0; i < count; ++i)
        top_log = rows[i].log > top_log ? rows[i].log : top_log;
    fprintf(f, "\n## %s: segmented inclusive %ss (%s keys, %s values) against their floor and CUB\n\n",
            prop->name, op_names[o->op], key, type);
    fprintf(f, "Floor: a device-to-device memcpy of the bytes a single-pass segmented scan moves: by "
               "key, the keys and values read and the outputs written (%zu bytes an item); over "
               "offsets, the values read and written and the offsets read. CUB: "
               "cub::DeviceScan::%s on the keys; over offsets, by key, keys made from the offsets "
               "(the segments' numbers, made before the timing), its fraction against the offsets' "
               "floor. Run lengths: L, every segment L items from item 0; rL, lengths uniform in "
               "1 .. 2L-1 (mean L), drawn once per run.\n"
               "us per call (back-to-back calls, median of %d batches); GB/s: the floor's bytes over "
               "dlscan's time; / floor: floor time over the variant's; dlscan / CUB: CUB's time over "
               "dlscan's (the ratio of calls per second). Every other size and the largest; the CSV "
               "has them all. Checked once per row: dlscan's output against CUB's, bit for bit.\n",
            test_type_size(o->key_type) + 2 * test_type_size(o->type),
            o->op == DLSCAN_SUM ? "InclusiveSumByKey" : "InclusiveScanByKey", o->repeats);
    for (int m = 0; m < o->mode_count; ++m) {
        const int mode = o->modes[m];
        fprintf(f, "\n### %s\n\n",
                mode == BY_KEYS ? "By key" : "Over offsets (CUB: by key, keys made from the offsets)");
        fprintf(f, "| length | n | floor us | dlscan us | CUB us | dlscan GB/s | dlscan / floor | "
                   "CUB / floor | "
                   "dlscan / CUB | dlscan calls/s | CUB calls/s |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int k = 0; k < o->length_count; ++k)
            for (int i = 0; i < count; ++i) {
                const row *r = &rows[i];
                char label[32];
                if (r->mode != mode || r->length != k || (r->log % 2 && r->log != top_log))
                    continue;
                fprintf(f, "| %s | 2^%d |", length_label(o->lengths[k], label, sizeof label), r->log);
                print_us(f, r, FLOOR);
                print_us(f, r, DLSCAN);
                print_us(f, r, CUB);
                if (r->valid[DLSCAN])
                    fprintf(f, " %.1f |", (double)r->floor_bytes / (r->us[DLSCAN] * 1e3));
                else
                    fprintf(f, " - |");
                print_ratio(f, r, FLOOR, DLSCAN);
                print_ratio(f, r, FLOOR, CUB);
                print_ratio(f, r, CUB, DLSCAN);
                for (int v = DLSCAN; v <= CUB; ++v)
                    if (r->valid[v])
                        fprintf(f, " %.0f |", 1e6 / r->us[v]);
                    else
                        fprintf(f, " - |");
                fprintf(f, "\n");
            }
    }

    /* Issue 23's targets, per mode and run length. */
    fprintf(f, "\n### Targets\n\n"
               "| segments | length | floor (2^%d) us | CUB us | CUB / floor | dlscan us | dlscan / floor | "
               "dlscan / floor, min from 2^26 | dlscan / CUB, min from 2^16 | "
               "dlscan / CUB, min up to 2^18 |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n",
            top_log);
    for (int m = 0; m < o->mode_count; ++m)
        for (int k = 0; k < o->length_count; ++k) {
            const row *top = NULL;
            double floor_from_26 = INFINITY, cub_from_16 = INFINITY, cub_to_18 = INFINITY;
            int wrong = 0;
            for (int i = 0; i < count; ++i) {
                const row *r = &rows[i];
                if (r->mode != o->modes[m] || r->length != k)
                    continue;
                wrong |= r->wrong;
                if (r->log == top_log)
                    top = r;
                if (r->valid[DLSCAN] && r->valid[FLOOR] && r->log >= 26)
                    floor_from_26 = fmin(floor_from_26, r->us[FLOOR] / r->us[DLSCAN]);
                if (r->valid[DLSCAN] && r->valid[CUB] && r->log >= 16)
                    cub_from_16 = fmin(cub_from_16, r->us[CUB] / r->us[DLSCAN]);
                if (r->valid[DLSCAN] && r->valid[CUB] && r->log <= 18)
                    cub_to_18 = fmin(cub_to_18, r->us[CUB] / r->us[DLSCAN]);
            }
            char label[32];
            fprintf(f, "| %s | %s |", o->modes[m] == BY_KEYS ? "by key" : "offsets (CUB by key)",
                    length_label(o->lengths[k], label, sizeof label));
            if (top) {
                print_us(f, top, FLOOR);
                print_us(f, top, CUB);
                print_ratio(f, top, FLOOR, CUB);
                print_us(f, top, DLSCAN);
                print_ratio(f, top, FLOOR, DLSCAN);
            } else {
                fprintf(f, " - | - | - | - | - |");
            }
            const double mins[3] = {floor_from_26, cub_from_16, cub_to_18};
            for (int i = 0; i < 3; ++i)
                if (wrong)
                    fprintf(f, " WRONG |");
                else if (isinf(mins[i]))
                    fprintf(f, " - |");
                else
                    fprintf(f, " %.3f |", mins[i]);
            fprintf(f, "\n");
        }
}

/* ---------------------------------------------------------------- the sweep */

/* The largest floor's bytes, up to max_n items with up to offset_count offsets (0: no mode
 * offsets). */
static size_t largest_floor(const options *o, size_t max_n, size_t offset_count)
{
    const size_t key = test_type_size(o->key_type), size = test_type_size(o->type);
    const size_t by_keys = max_n * (key + 2 * size), by_offsets = max_n * 2 * size + offset_count * 8;
    return by_keys > by_offsets ? by_keys : by_offsets;
}

/* The device's bytes for a run up to max_n items: keys, values, the output, the offsets, the
 * floor's copy (source and destination) and a margin for dlscan's and CUB's own storage. */
static size_t device_bytes(const options *o, size_t max_n, size_t offset_count)
{
    const size_t key = test_type_size(o->key_type), size = test_type_size(o->type);
    return max_n * (key + 2 * size) + offset_count * 8 + largest_floor(o, max_n, offset_count) +
           max_n / 16 + ((size_t)64 << 20);
}

/* The most segments a run length of --lengths makes of max_n items, plus one: the offsets'
 * count. */
static size_t offset_capacity(const options *o, size_t max_n)
{
    size_t capacity = 2;
    for (int k = 0; k < o->length_count; ++k) {
        const size_t mean = o->lengths[k].mean;
        const size_t most = o->lengths[k].random ? max_n : (max_n + mean - 1) / mean;
        capacity = most + 1 > capacity ? most + 1 : capacity;
    }
    return capacity;
}

/* The offsets' count on the device: offset_capacity with mode offsets, else none. */
static size_t device_offsets(const options *o, size_t max_n)
{
    for (int m = 0; m < o->mode_count; ++m)
        if (o->modes[m] == BY_OFFSETS)
            return offset_capacity(o, max_n);
    return 0;
}

static int run(const options *o, const struct cudaDeviceProp *prop, const bench_timer *t)
{
    const size_t key_size = test_type_size(o->key_type), size = test_type_size(o->type);
    FILE *csv = o->csv ? fopen(o->csv, "w") : NULL;
    if (o->csv && !csv) {
        fprintf(stderr, "bench_segmented: cannot write %s\n", o->csv);
        return 1;
    }
    char operation[160], header[1024];
    snprintf(operation, sizeof operation,
             "segmented inclusive %s, %s keys, %s values, by key and over offsets", op_names[o->op],
             test_type_name(o->key_type), test_type_name(o->type));
    bench_provenance(header, sizeof header, prop, operation);
    fputs(header, stdout);
    if (csv) {
        fputs(header, csv);
        fprintf(csv, "# variant floor: cudaMemcpyAsync device to device of half the bytes moved (read "
                     "and written): keys: n keys + n values read, n outputs written; offsets: n values "
                     "read and written, num_segments + 1 size_t offsets read\n"
                     "# variant dlscan: dlscan_scan with d_keys (keys) or d_offsets (offsets)\n"
                     "# variant cub: cub::DeviceScan::%s on the keys; mode offsets: by key, keys made "
                     "from the offsets (not timed), against the offsets' floor\n"
                     "# length: L, every segment L items from item 0; rL, lengths uniform in 1 .. 2L-1\n"
                     "mode,key_type,type,op,kind,length,variant,n,segments,mean_length,bytes_moved,"
                     "fits_in_l2,per_call_us,items_per_second,gb_per_second,fraction_of_floor,"
                     "calls_per_second,host_us\n",
                o->op == DLSCAN_SUM ? "InclusiveSumByKey" : "InclusiveScanByKey");
    }
    /* The largest size the GPU's free memory holds. */
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    int max_log = o->max_log;
    for (; max_log > o->min_log; --max_log) {
        const size_t n = (size_t)1 << max_log;
        if (device_bytes(o, n, device_offsets(o, n)) <= free_bytes / 20 * 19)
            break;
    }
    if (max_log < o->max_log)
        printf("# 2^%d items at most: the GPU's free memory holds no more\n", max_log);
    const size_t max_n = (size_t)1 << max_log, on_device = device_offsets(o, max_n);
    const size_t copy_half = largest_floor(o, max_n, on_device) / 2;

    void *keys = malloc(max_n * key_size), *values = malloc(max_n * size);
    void *want = malloc(max_n * size), *got = malloc(max_n * size);
    size_t *offsets = malloc(offset_capacity(o, max_n) * sizeof *offsets); /* both modes count with them */
    if (!keys || !values || !want || !got || !offsets) {
        fprintf(stderr, "bench_segmented: host allocation failed\n");
        return 1;
    }
    uint64_t rng = 0x5e9e0000u + (uint64_t)time(NULL);
    test_fill_random(o->type, TEST_VALUES_UNIFORM, values, max_n, &rng);
    row_calls c = {.o = o, .mode = BY_KEYS};
    void *d_keys, *d_values, *d_offsets = NULL;
    CUDA_CHECK(cudaMalloc(&d_keys, max_n * key_size));
    CUDA_CHECK(cudaMalloc(&d_values, max_n * size));
    CUDA_CHECK(cudaMalloc(&c.d_out, max_n * size));
    CUDA_CHECK(cudaMalloc((void **)&c.d_copy, 2 * copy_half));
    if (on_device)
        CUDA_CHECK(cudaMalloc(&d_offsets, on_device * sizeof(size_t)));
    CUDA_CHECK(cudaMemcpy(d_values, values, max_n * size, cudaMemcpyHostToDevice));
    c.d_keys = d_keys, c.d_values = d_values, c.d_offsets = d_offsets;
    /* dlscan_reserve sizes the plain scan's tiles; the first segmented call at a new largest n
     * grows the storage further, in its warm-up. */
    if (dlscan_create(&c.h) != DLSCAN_SUCCESS || dlscan_reserve(c.h, max_n, o->type) != DLSCAN_SUCCESS) {
        fprintf(stderr, "bench_segmented: dlscan_create or dlscan_reserve failed: %s\n",
                dlscan_last_error(c.h));
        return 1;
    }
    const int have_cub = bench_cub_variant() != NULL;
    if (have_cub) {
        CUDA_CHECK((cudaError_t)bench_cub_scan_by_key(o->key_type, o->type, o->op, NULL, &c.cub_temp_bytes,
                                                      NULL, NULL, NULL, max_n, 0));
        CUDA_CHECK(cudaMalloc(&c.cub_temp, c.cub_temp_bytes ? c.cub_temp_bytes : 1));
    }
    const host_data d = {keys, values, want, got};

    row *rows = calloc((size_t)MODES * MAX_LENGTHS * MAX_SIZES, sizeof *rows);
    int row_count = 0, failed = 0;
    for (int k = 0; k < o->length_count; ++k) {
        char label[32];
        length_label(o->lengths[k], label, sizeof label);
        const size_t count = make_segments(o->lengths[k], o->key_type, max_n, keys, offsets, &rng);
        CUDA_CHECK(cudaMemcpy(d_keys, keys, max_n * key_size, cudaMemcpyHostToDevice));
        if (on_device)
            CUDA_CHECK(cudaMemcpy(d_offsets, offsets, (count + 1) * sizeof(size_t), cudaMemcpyHostToDevice));
        for (int m = 0; m < o->mode_count; ++m) {
            const int mode = o->modes[m];
            char block[96];
            snprintf(block, sizeof block, "%s, run length %s",
                     mode == BY_KEYS ? "by key" : "over offsets", label);
            printf("\n%s%s: us per call (fraction of the floor), median of %d\n", block,
                   mode == BY_OFFSETS ? " (CUB: by key, keys made from the offsets)" : "", o->repeats);
            printf("%-8s %-4s %10s %10s %16s %16s %9s\n", "n", "L2", "segments", "floor", "dlscan", "cub",
                   "dl / cub");
            for (int log = o->min_log; log <= max_log; log += o->quick ? 2 : 1) {
                const size_t n = (size_t)1 << log, segments = segments_before(offsets, count, n);
                row *r = &rows[row_count++];
                r->mode = mode, r->length = k, r->log = log, r->n = n, r->segments = segments;
                r->floor_bytes = mode == BY_KEYS ? n * (key_size + 2 * size)
                                                 : n * 2 * size + (segments + 1) * sizeof(size_t);
                r->in_l2 = r->floor_bytes <= (size_t)prop->l2CacheSize;
                c.mode = mode, c.segments = segments, c.copy_bytes = r->floor_bytes / 2;
                /* The first n items' offsets end at n: the last segment cut there, for the row. */
                const int cut = mode == BY_OFFSETS && offsets[segments] != n;
                size_t *const d_last = cut ? (size_t *)d_offsets + segments : NULL;
                if (cut)
                    CUDA_CHECK(cudaMemcpy(d_last, &n, sizeof n, cudaMemcpyHostToDevice));
                r->valid[FLOOR] = r->valid[DLSCAN] = 1, r->valid[CUB] = have_cub;
                failed += bench_time_variants(t, run_variant, &c, n, VARIANTS, o->repeats, "bench_segmented",
                                              variant_names, r->valid, r->us, r->host_us);
                failed += check_row(&c, r, &d, log == o->min_log, block, t->stream);
                if (cut)
                    CUDA_CHECK(cudaMemcpy(d_last, &offsets[segments], sizeof n, cudaMemcpyHostToDevice));

                printf("2^%-6d %-4s %10zu", log, r->in_l2 ? "yes" : "", segments);
                for (int v = 0; v < VARIANTS; ++v)
                    if (!r->valid[v])
                        printf(" %*s", v == FLOOR ? 10 : 16, v == DLSCAN && r->wrong ? "WRONG" : "-");
                    else if (v == FLOOR)
                        printf(" %10.2f", r->us[v]);
                    else
                        printf(" %8.2f (%5.3f)", r->us[v], r->valid[FLOOR] ? r->us[FLOOR] / r->us[v] : NAN);
                if (r->valid[DLSCAN] && r->valid[CUB])
                    printf(" %9.3f", r->us[CUB] / r->us[DLSCAN]);
                printf("\n");
                fflush(stdout);
                if (csv)
                    print_csv(csv, o, r);
            }
        }
    }
    markdown(stdout, prop, o, rows, row_count);
    FILE *md = o->markdown ? fopen(o->markdown, "w") : NULL;
    if (o->markdown && !md) {
        fprintf(stderr, "bench_segmented: cannot write %s\n", o->markdown);
        ++failed;
    }
    if (md) {
        markdown(md, prop, o, rows, row_count);
        fclose(md);
    }
    if (csv)
        fclose(csv);
    dlscan_destroy(c.h);
    cudaFree(c.cub_temp);
    cudaFree(d_keys);
    cudaFree(d_values);
    cudaFree(d_offsets);
    cudaFree(c.d_out);
    cudaFree(c.d_copy);
    free(rows);
    free(keys);
    free(values);
    free(want);
    free(got);
    free(offsets);
    if (failed)
        fprintf(stderr, "bench_segmented: %d measurements or checks failed (see above)\n", failed);
    return failed ? 1 : 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    const options o = parse_options(argc, argv);
    int device = 0;
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    bench_timer t;
    bench_timer_create(&t);
    const int status = run(&o, &prop, &t);
    bench_timer_destroy(&t);
    return status;
}
