/*
 * bench_axis.c: scans along an axis (dlscan_scan's axis_length, axis_stride and d_totals), the
 * rows of [B, L] arrays and the columns of [N, M] arrays, against their floor; the rows also
 * over offsets (dlscan's way to scan rows before the axis) and with CUB's two ways (its segmented
 * scan, its scan by key); side by side in one run.
 *
 *   bench_axis [--quick] [--types float32,int32] [--op sum|min|max] [--exclusive]
 *              [--layout rows|columns] [--log 26] [--repeats 5] [--csv FILE] [--markdown FILE]
 *
 * --types: any of int32, int64, float32, float64 (default float32 and int32). --quick: fewer
 * shapes (rows of 16, 1024 and 32000 items and one row; columns of 2, 256 and 65536), 3 repeats.
 * --layout: the rows' shapes only, or the columns'.
 *
 * The shapes, each of about 2^log items (--log, 26 by default, at most 30; lowered to what the
 * GPU's free memory holds):
 *   rows [B, L]     L = 1, 2, 4, 16, 64, 256, 1000, 1024, 4096, 32000, 131072, 2^20 and 2^log (one
 *                   row), B = 2^log / L rounded down, n = B x L (32000 at 2^26: 2097 rows, n =
 *                   67104000); a length of 2^log or more before the one row is left out;
 *   columns [N, M]  M = 2, 4, 16, 64, 256, 4096, 65536, N = 2^log / M; left out where N < 2.
 *
 * Per shape, up to four variants:
 *   memcpy          cudaMemcpyAsync device to device of the n items, d_in to d_out: the floor.
 *                   A single-pass scan reads each item once and writes it once, n x (in size +
 *                   out size) bytes, which is what the copy of n x size bytes reads and writes;
 *   dlscan          dlscan_scan along the axis, default handle options, no d_totals in the
 *                   timed calls. Rows: axis_length = L, axis_stride = 1, served by the short
 *                   rows' kernels, each tile on its own, where L is at most a segmented tile
 *                   (float32 and int32: 4096 items; a power of two, or from 4 to 4093 items on
 *                   tiles of whole rows); by the plain scan's persistent kernel, each row a
 *                   chain of its own tiles, where L is longer and rows are whole 16-byte vectors
 *                   (a multiple of 4); else by the segmented scan's kernels with each segment's
 *                   head computed from the index. Columns:
 *                   axis_length = N, axis_stride = M, served by the column kernel
 *                   (device/axis_kernel.cu), a look-back descriptor per column of each tile,
 *                   but for rows of 8 or 16 bytes (M = 2 and 4 of 32-bit types, 2 of 64-bit
 *                   types, into themselves, sm_90): the plain scan's persistent kernel over
 *                   the N rows as values of M lanes;
 *   dlscan-offsets  rows only: dlscan_scan over offsets 0, L, 2L, ..., B x L (d_offsets,
 *                   num_segments = B);
 *   cub             rows only: cub::DeviceSegmentedScan (CUB 3.3 and newer: bench_cub_segmented_scan
 *                   in cub.cu) over the same offsets, begin d_offsets and end d_offsets + 1; CUB
 *                   gives each segment one block. Where the CUB built lacks it, "-";
 *   cub-by-key      rows only, inclusive only: cub::DeviceScan::InclusiveSumByKey (min, max:
 *                   InclusiveScanByKey; bench_cub_scan_by_key in cub.cu) with each item's row as
 *                   its int32 key, the keys n x 4 more bytes read (not timed: made on the host).
 * The offsets (size_t) and keys are made and uploaded once per shape, before its timing. Method
 * (timing.c, as bench.c's): the variants are warmed up (3 calls), then timed back to back
 * between CUDA events in batches of about 4 ms, the variants' batches alternating round by
 * round; the median of --repeats batches gives the time per call. Reported: us per call, the
 * fraction of the floor (floor time / time), dlscan along the axis against the offsets and CUB
 * (their time over its: the ratio of calls per second).
 *
 * The correctness guard, once per shape after its timing. dlscan along the axis runs into a
 * poisoned d_out, with a poisoned d_totals; every scan of its output is checked against the
 * sequential reference of tests/scan_check.c (scan_check_pair_output, a column gathered into
 * one array first): integers exactly (sums wrap), float min and max exactly, float sums against
 * an extended-precision sum within scan_check.c's first-order bound for a fold in any order,
 * (2 log2 L + 16 + k) x (eps x the sum of |items| + the smallest subnormal) at item k of a scan
 * of L items, eps the type's unit roundoff: a tolerance that grows with the scan's length (its
 * "tile" taken as the scan's length, as tests/axis_check.c takes it for columns). Each scan's
 * total in d_totals is checked with it (an inclusive scan's total equals its last item), and
 * the 64 bytes past d_out and past d_totals must still hold the poison. Then the offsets
 * variant and CUB run into a poisoned d_out: right where their output equals dlscan's checked
 * one bit for bit, else checked against the reference the same way. A wrong output is reported
 * on stderr, its numbers read WRONG and the program exits 1.
 *
 * Data: integers uniform over all their bits; floats with random signs and mantissas,
 * magnitudes 2^-20 .. 2^20 (TEST_VALUES_MIXED_MAGNITUDE), so that float sums round.
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

#define MAX_TYPES 4
#define MAX_SHAPES 24
#define GUARD_BYTES 64   /* poisoned bytes past d_out and d_totals, checked after each guard call */
#define GATHER_WIDTH 64  /* columns gathered at a time for the reference */

enum variant { FLOOR, AXIS, OFFSETS, CUB, CUB_KEYS, VARIANTS };
static const char *const variant_names[VARIANTS] = {"memcpy", "dlscan", "dlscan-offsets", "cub", "cub-by-key"};
static const char *const op_names[] = {"sum", "min", "max"};
static const char *const layout_names[] = {"rows", "columns"};

/* The shapes of the full run and of --quick: rows by L (0: one row of all the items), columns
 * by M. */
static const size_t row_lengths[] = {1, 2, 4, 16, 64, 256, 1000, 1024, 4096, 32000, 131072, (size_t)1 << 20, 0};
static const size_t quick_row_lengths[] = {16, 1024, 32000, 0};
static const size_t column_widths[] = {2, 4, 16, 64, 256, 4096, 65536};
static const size_t quick_column_widths[] = {2, 256, 65536};

/* ---------------------------------------------------------------- options */

typedef struct options {
    int quick;
    dlscan_type types[MAX_TYPES];
    int type_count;
    dlscan_op op;
    int exclusive;
    int layouts; /* bit 0: rows, bit 1: columns */
    int log, repeats;
    const char *csv, *markdown;
} options;

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_axis [--quick] [--types float32,int32] [--op sum|min|max] [--exclusive]\n"
            "                  [--layout rows|columns] [--log N] [--repeats N] [--csv FILE] [--markdown FILE]\n"
            "types: int32, int64, float32, float64; --layout: one of them only (default both);\n"
            "--log: 2^N items a shape (10 .. 30, default 26)\n");
    exit(2);
}

static options parse_options(int argc, char **argv)
{
    options o = {0};
    o.types[0] = DLSCAN_FLOAT32, o.types[1] = DLSCAN_INT32, o.type_count = 2;
    o.op = DLSCAN_SUM;
    o.log = 26, o.repeats = 5, o.layouts = 3;
    const char *const type_names[MAX_TYPES] = {"int32", "int64", "float32", "float64"};
    const dlscan_type types[MAX_TYPES] = {DLSCAN_INT32, DLSCAN_INT64, DLSCAN_FLOAT32, DLSCAN_FLOAT64};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        char copy[256];
        if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (strcmp(a, "--exclusive") == 0) {
            o.exclusive = 1;
        } else if (value && strcmp(a, "--types") == 0) {
            snprintf(copy, sizeof copy, "%s", value);
            o.type_count = 0;
            for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
                const int k = bench_find_name(t, type_names, MAX_TYPES);
                if (k < 0 || o.type_count == MAX_TYPES)
                    usage();
                o.types[o.type_count++] = types[k];
            }
            ++i;
        } else if (value && strcmp(a, "--op") == 0) {
            const int op = bench_find_name(value, op_names, 3);
            if (op < 0)
                usage();
            o.op = (dlscan_op)op, ++i;
        } else if (value && strcmp(a, "--layout") == 0) {
            const int layout = bench_find_name(value, layout_names, 2);
            if (layout < 0)
                usage();
            o.layouts = 1 << layout, ++i;
        } else if (value && strcmp(a, "--log") == 0) {
            o.log = atoi(value), ++i;
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
    if (o.type_count < 1 || o.log < 10 || o.log > 30 || o.repeats < 1 || o.repeats > 64)
        usage();
    return o;
}

/* What the operation is called in headers: "inclusive sum", "exclusive max", ... */
static const char *operation_name(const options *o, char *buffer, size_t size)
{
    snprintf(buffer, size, "%s %s", o->exclusive ? "exclusive" : "inclusive", op_names[o->op]);
    return buffer;
}

/* The CUB call the cub variant makes. */
static const char *cub_call_name(const options *o)
{
    if (o->op == DLSCAN_SUM)
        return o->exclusive ? "ExclusiveSegmentedSum" : "InclusiveSegmentedSum";
    return o->exclusive ? "ExclusiveSegmentedScan" : "InclusiveSegmentedScan";
}

/* ---------------------------------------------------------------- shapes */

/* One shape of one type, and what was measured on it. In dlscan.h's terms the items are an
 * array [outer][length][stride]: rows [B, L] are outer = B, length = L, stride = 1; columns
 * [N, M] are outer = 1, length = N, stride = M. */
typedef struct row {
    dlscan_type type;
    int columns;              /* 0: rows; 1: columns */
    size_t outer, length, stride;
    size_t scans, n;          /* scans: outer x stride (the totals' count) */
    size_t floor_bytes;       /* n x (in size + out size) */
    int in_l2;                /* the floor's bytes fit in L2 */
    int valid[VARIANTS];
    int wrong[VARIANTS];      /* the variant's output failed the guard */
    double us[VARIANTS];      /* per call, median */
    double host_us[VARIANTS]; /* the host's time to enqueue a call, median */
} row;

/* The shape of rows of `length` items (0: one row) or of columns `width` wide, over `total`
 * items, into r. Returns 0 where the shape is left out (see the top of the file). */
static int make_shape(int columns, size_t size, size_t total, row *r)
{
    if (!columns) {
        if (size >= total)
            return 0; /* as long as the one row, or longer */
        const size_t length = size ? size : total;
        r->outer = total / length, r->length = length, r->stride = 1, r->scans = r->outer;
    } else {
        if (total / size < 2)
            return 0;
        r->outer = 1, r->length = total / size, r->stride = size, r->scans = size;
    }
    r->columns = columns;
    r->n = r->outer * r->length * r->stride;
    return 1;
}

/* "[B, L]" or "[N, M]". */
static const char *shape_label(const row *r, char *buffer, size_t size)
{
    if (r->columns)
        snprintf(buffer, size, "[%zu, %zu]", r->length, r->stride);
    else
        snprintf(buffer, size, "[%zu, %zu]", r->outer, r->length);
    return buffer;
}

/* The shapes of a run over `total` items, rows first; returns how many it wrote. */
static int all_shapes(const options *o, size_t total, row *shapes)
{
    const size_t *lengths = o->quick ? quick_row_lengths : row_lengths;
    const size_t *widths = o->quick ? quick_column_widths : column_widths;
    const int length_count = o->quick ? (int)(sizeof quick_row_lengths / sizeof *quick_row_lengths)
                                      : (int)(sizeof row_lengths / sizeof *row_lengths);
    const int width_count = o->quick ? (int)(sizeof quick_column_widths / sizeof *quick_column_widths)
                                     : (int)(sizeof column_widths / sizeof *column_widths);
    int count = 0;
    for (int k = 0; k < length_count && (o->layouts & 1); ++k) {
        row r = {0};
        if (make_shape(0, lengths[k], total, &r))
            shapes[count++] = r;
    }
    for (int k = 0; k < width_count && (o->layouts & 2); ++k) {
        row r = {0};
        if (make_shape(1, widths[k], total, &r))
            shapes[count++] = r;
    }
    return count;
}

/* ---------------------------------------------------------------- the calls */

/* What one shape's calls use: a bench_run_fn's context (timing.h). */
typedef struct shape_calls {
    const options *o;
    dlscan_type type;
    dlscan_handle_t h;
    const void *d_in;
    void *d_out;
    void *d_totals;           /* dlscan along the axis: NULL in the timed calls, set in the guard's */
    const size_t *d_offsets;  /* rows: the B + 1 offsets 0, L, ..., B x L */
    const int32_t *d_keys;    /* rows: each item's row */
    size_t length, stride, scans;
    void *cub_temp;
    size_t cub_temp_bytes;
} shape_calls;

static int run_variant(const void *context, int v, size_t n, cudaStream_t stream)
{
    const shape_calls *c = context;
    const options *o = c->o;
    if (v == FLOOR)
        return (int)cudaMemcpyAsync(c->d_out, c->d_in, n * test_type_size(c->type),
                                    cudaMemcpyDeviceToDevice, stream);
    if (v == CUB) {
        size_t bytes = c->cub_temp_bytes;
        return bench_cub_segmented_scan(c->type, o->op, o->exclusive, c->cub_temp, &bytes, c->d_in,
                                        c->d_out, c->d_offsets, c->d_offsets + 1, c->scans, stream);
    }
    if (v == CUB_KEYS) {
        size_t bytes = c->cub_temp_bytes;
        return bench_cub_scan_by_key(DLSCAN_INT32, c->type, o->op, c->cub_temp, &bytes, c->d_keys, c->d_in,
                                     c->d_out, n, stream);
    }
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = c->d_in, a.in_type = c->type;
    a.d_out = c->d_out, a.out_type = c->type;
    a.n = n, a.op = o->op, a.exclusive = o->exclusive;
    if (v == AXIS)
        a.axis_length = c->length, a.axis_stride = c->stride, a.d_totals = c->d_totals;
    else
        a.d_offsets = c->d_offsets, a.num_segments = c->scans;
    const dlscan_status status = dlscan_scan(c->h, &a, stream);
    if (status != DLSCAN_SUCCESS)
        fprintf(stderr, "bench_axis: %s: %s: %s\n", variant_names[v], dlscan_status_string(status),
                dlscan_last_error(c->h));
    return status == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}

/* ---------------------------------------------------------------- the guard */

/* The host's copies: the input, dlscan's output along the axis and its totals, another
 * variant's output (each output with its GUARD_BYTES), and the items of GATHER_WIDTH columns
 * gathered for the reference, input and output (at most all the items each). */
typedef struct host_data {
    const void *values;
    void *first, *totals, *other;
    void *in_columns, *out_columns;
} host_data;

/* The values the inputs are drawn as. */
static test_values values_kind(dlscan_type type)
{
    return test_type_is_float(type) ? TEST_VALUES_MIXED_MAGNITUDE : TEST_VALUES_UNIFORM;
}

static int poisoned(const void *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; ++i)
        if (((const unsigned char *)p)[i] != TEST_POISON_BYTE)
            return 0;
    return 1;
}

/* Columns j0 .. j0 + width - 1 of the [rows, stride] array `from` (items of `size` bytes), each
 * into `rows` consecutive items of `to`: column j0 + c from to + c x rows items. */
static void gather_columns(const void *from, size_t size, size_t rows, size_t stride, size_t j0,
                           size_t width, void *to)
{
    const unsigned char *src = from;
    unsigned char *dst = to;
    for (size_t k = 0; k < rows; ++k)
        for (size_t c = 0; c < width; ++c)
            memcpy(dst + (c * rows + k) * size, src + (k * stride + j0 + c) * size, size);
}

/* Checks out (and totals, unless NULL) against the reference, scan by scan: each row in place,
 * the columns gathered GATHER_WIDTH at a time. Returns 1 if every item is right, else 0 with the
 * first wrong scan described in message. */
static int check_reference(const options *o, const row *r, const host_data *d, const void *out,
                           const void *totals, char *message, size_t message_size)
{
    const size_t size = test_type_size(r->type);
    const pair_case scan = {.in_type = r->type, .out_type = r->type, .op = o->op,
                            .exclusive = o->exclusive, .init = TEST_INIT_NONE,
                            .with_total = totals != NULL, .in_place = 0, .n = r->length,
                            .values = values_kind(r->type)};
    const unsigned char *in = d->values, *got = out, *total = totals;
    char detail[256];
    if (!r->columns) {
        for (size_t b = 0; b < r->outer; ++b) {
            const size_t first = b * r->length;
            if (!scan_check_pair_output(&scan, r->length, 0, in + first * size, NULL, got + first * size,
                                        total ? total + b * size : NULL, detail, sizeof detail)) {
                snprintf(message, message_size, "row %zu (items %zu ..): %s", b, first, detail);
                return 0;
            }
        }
        return 1;
    }
    const unsigned char *in_columns = d->in_columns, *out_columns = d->out_columns;
    for (size_t j0 = 0; j0 < r->stride; j0 += GATHER_WIDTH) {
        const size_t width = r->stride - j0 < GATHER_WIDTH ? r->stride - j0 : GATHER_WIDTH;
        gather_columns(in, size, r->length, r->stride, j0, width, d->in_columns);
        gather_columns(got, size, r->length, r->stride, j0, width, d->out_columns);
        for (size_t c = 0; c < width; ++c) {
            const size_t first = c * r->length * size;
            if (!scan_check_pair_output(&scan, r->length, 0, in_columns + first, NULL, out_columns + first,
                                        total ? total + (j0 + c) * size : NULL, detail, sizeof detail)) {
                snprintf(message, message_size, "column %zu: %s", j0 + c, detail);
                return 0;
            }
        }
    }
    return 1;
}

/* The guard, after the shape's timing: dlscan along the axis with d_totals (d_totals_buffer),
 * then the offsets variant and CUB's two, each into a poisoned d_out (see the top of the file).
 * Returns how many outputs were wrong or failed to run. */
static int check_shape(const shape_calls *c, void *d_totals_buffer, row *r, const host_data *d,
                       cudaStream_t stream)
{
    const size_t size = test_type_size(r->type);
    const size_t out_bytes = r->n * size, total_bytes = r->scans * size;
    char shape[64];
    shape_label(r, shape, sizeof shape);
    int failed = 0, first_right = 0;
    for (int v = AXIS; v < VARIANTS; ++v) {
        if (!r->valid[v])
            continue;
        shape_calls k = *c;
        void *to = v == AXIS ? d->first : d->other;
        if (v == AXIS) {
            k.d_totals = d_totals_buffer;
            CUDA_CHECK(cudaMemsetAsync(d_totals_buffer, TEST_POISON_BYTE, total_bytes + GUARD_BYTES, stream));
        }
        if (!bench_run_poisoned(run_variant, &k, v, r->n, c->d_out, out_bytes + GUARD_BYTES,
                                TEST_POISON_BYTE, to, stream, "bench_axis", variant_names[v])) {
            r->valid[v] = 0, ++failed;
            continue;
        }
        if (v == AXIS)
            CUDA_CHECK(cudaMemcpy(d->totals, d_totals_buffer, total_bytes + GUARD_BYTES,
                                  cudaMemcpyDeviceToHost));
        char message[512] = "";
        int right;
        if (!poisoned((const char *)to + out_bytes, GUARD_BYTES)) {
            snprintf(message, sizeof message, "it wrote past the n items of d_out");
            right = 0;
        } else if (v == AXIS && !poisoned((const char *)d->totals + total_bytes, GUARD_BYTES)) {
            snprintf(message, sizeof message, "it wrote past the %zu totals of d_totals", r->scans);
            right = 0;
        } else if (v != AXIS && first_right && bench_first_difference(d->first, to, r->n, size) == r->n) {
            right = 1; /* dlscan's checked output, bit for bit */
        } else {
            right = check_reference(c->o, r, d, to, v == AXIS ? d->totals : NULL, message, sizeof message);
        }
        if (v == AXIS)
            first_right = right;
        if (!right) {
            fprintf(stderr, "bench_axis: WRONG: %s, %s %s %s: %s\n", variant_names[v],
                    test_type_name(r->type), layout_names[r->columns], shape, message);
            r->valid[v] = 0, r->wrong[v] = 1, ++failed;
        }
    }
    return failed;
}

/* ---------------------------------------------------------------- output */

static void print_us(FILE *f, const row *r, int v)
{
    bench_cell_us(f, r->valid[v], r->us[v], r->wrong[v] ? "WRONG" : "-");
}

/* "1.234" or "-" where either time is missing: over / under as times, under's speed over over's. */
static void print_ratio(FILE *f, const row *r, int over, int under)
{
    bench_cell_ratio(f, r->valid[over] && r->valid[under], r->us[over], r->us[under]);
}

static void print_console_header(const options *o, dlscan_type type)
{
    char operation[64];
    printf("\n%s, %s along an axis: us per call (fraction of the floor), median of %d\n",
           test_type_name(type), operation_name(o, operation, sizeof operation), o->repeats);
    printf("%-7s %-18s %10s %-3s %9s %16s %16s %16s %16s %10s %9s %9s\n", "layout", "shape", "n", "L2",
           "memcpy", "dlscan", "dlscan-offsets", "cub", "cub-by-key", "dl / offs", "dl / cub", "dl / key");
}

static void print_console_row(const row *r)
{
    char shape[64];
    printf("%-7s %-18s %10zu %-3s", layout_names[r->columns], shape_label(r, shape, sizeof shape), r->n,
           r->in_l2 ? "yes" : "");
    for (int v = 0; v < VARIANTS; ++v)
        if (!r->valid[v])
            printf(" %*s", v == FLOOR ? 9 : 16, r->wrong[v] ? "WRONG" : "-");
        else if (v == FLOOR)
            printf(" %9.2f", r->us[v]);
        else
            printf(" %8.2f (%5.3f)", r->us[v], r->valid[FLOOR] ? r->us[FLOOR] / r->us[v] : NAN);
    for (int v = OFFSETS; v <= CUB_KEYS; ++v)
        if (r->valid[AXIS] && r->valid[v])
            printf(" %*.3f", v == OFFSETS ? 10 : 9, r->us[v] / r->us[AXIS]);
        else
            printf(" %*s", v == OFFSETS ? 10 : 9, "-");
    printf("\n");
    fflush(stdout);
}

static void print_csv_header(FILE *csv, const options *o, const char *provenance, int have_cub)
{
    fputs(provenance, csv);
    fprintf(csv,
            "# variant memcpy: cudaMemcpyAsync device to device of the n items, d_in to d_out: the floor "
            "(a single-pass scan reads each item once and writes it once, n x (in + out size) bytes)\n"
            "# variant dlscan: dlscan_scan along the axis; rows [B, L]: axis_length = L, axis_stride = 1, "
            "rows up to a segmented tile (float32 and int32: 4096 items; a power of two, or from 4 to 4093 "
            "items on tiles of whole rows) the short rows' kernels, each tile on its own, longer rows of whole "
            "16-byte vectors the plain scan's persistent kernel, each row a chain of tiles of its own, other "
            "rows the segmented scan's kernels with "
            "the heads computed from the index; columns [N, M]: "
            "axis_length = N, axis_stride = M, the column kernel, a look-back descriptor per column "
            "of each tile, but rows of 8 or 16 bytes (M = 2 and 4 of 32-bit types, 2 of 64-bit types, into "
            "themselves, sm_90) the plain scan's persistent kernel over the N rows as values of M lanes\n"
            "# variant dlscan-offsets: rows only: dlscan_scan over offsets 0, L, ..., B x L "
            "(num_segments = B), the way before the axis\n"
            "# variant cub: rows only: cub::DeviceSegmentedScan::%s over the same offsets (begin "
            "d_offsets, end d_offsets + 1), one block per segment%s\n"
            "# outer, axis_length, axis_stride: the items as [outer][axis_length][axis_stride] "
            "(dlscan.h); scans = outer x axis_stride\n"
            "layout,type,op,kind,outer,axis_length,axis_stride,scans,n,variant,bytes_moved,fits_in_l2,"
            "per_call_us,items_per_second,gb_per_second,fraction_of_floor,calls_per_second,host_us\n",
            cub_call_name(o), have_cub ? "" : " (not in the CUB built: no rows)");
}

static void print_csv(FILE *csv, const options *o, const row *r)
{
    for (int v = 0; v < VARIANTS; ++v) {
        if (!r->valid[v])
            continue;
        const double seconds = r->us[v] * 1e-6;
        fprintf(csv, "%s,%s,%s,%s,%zu,%zu,%zu,%zu,%zu,%s,%zu,%d,%.4f,%.6g,%.6g,%.6g,%.6g,%.3f\n",
                layout_names[r->columns], test_type_name(r->type), op_names[o->op],
                o->exclusive ? "exclusive" : "inclusive", r->outer, r->length, r->stride, r->scans, r->n,
                variant_names[v], r->floor_bytes, r->in_l2, r->us[v], (double)r->n / seconds,
                (double)r->floor_bytes / seconds / 1e9, r->valid[FLOOR] ? r->us[FLOOR] / r->us[v] : NAN,
                1.0 / seconds, r->host_us[v]);
    }
}

static void markdown(FILE *f, const struct cudaDeviceProp *prop, const options *o, int log,
                     int have_cub, const row *rows, int count)
{
    char operation[64];
    fprintf(f, "\n## %s: %ss along an axis, rows and columns of 2^%d items, against their floor\n\n",
            prop->name, operation_name(o, operation, sizeof operation), log);
    fprintf(f, "Floor: a device-to-device memcpy of the n items, d_in to d_out: a single-pass scan "
               "reads each item once and writes it once, n x (in + out size) bytes, as the copy does. "
               "How each shape is served: rows [B, L] (axis_length = L, axis_stride = 1) up to a segmented "
               "tile (float32 and int32: 4096 items; a power of two, or from 4 to 4093 items on tiles of whole "
               "rows) by the short rows' kernels, each tile on its own (no look-back); longer rows of whole "
               "16-byte vectors by the plain scan's persistent kernel, each row a chain of tiles of its own; "
               "other rows by the segmented scan's kernels, each row's head computed from the index (no "
               "offsets read); "
               "columns [N, M] (axis_length = N, axis_stride = M) by the column kernel, a look-back "
               "descriptor per column of each tile, but rows of 8 or 16 bytes (M = 2 and 4 of 32-bit types, "
               "2 of 64-bit types, into themselves, sm_90) by the plain scan's persistent kernel over "
               "the N rows as values of M lanes. Offsets: the rows as dlscan's segmented scan over "
               "the offsets 0, L, ..., B x L (num_segments = B), the way before the axis. CUB: "
               "cub::DeviceSegmentedScan::%s over the same offsets, one block per segment (CUB %s%s). "
               "CUB by key: cub::DeviceScan's inclusive scan by key with each item's row as its int32 "
               "key (inclusive scans only). Rows of 1000 and 32000 items: B = 2^%d / L rounded down, n = B x L.\n"
               "us per call (back-to-back calls, median of %d batches); / floor: the floor's time over "
               "the variant's; GB/s: the floor's bytes over dlscan's time; dlscan / offsets, dlscan / CUB "
               "and dlscan / by key: their time over dlscan's along the axis (the ratio of calls per "
               "second). "
               "Checked once per shape: each variant's output against the sequential reference "
               "(integers exactly; float sums within a first-order bound that grows with the scan's "
               "length), and dlscan's d_totals.\n",
            cub_call_name(o), bench_cub_version(), have_cub ? "" : ", which lacks it: CUB 3.3 and newer",
            log, o->repeats);
    for (int t = 0; t < o->type_count; ++t) {
        fprintf(f, "\n### %s\n\n", test_type_name(o->types[t]));
        fprintf(f, "| layout | shape | n | memcpy us | dlscan us | dlscan / floor | dlscan GB/s | "
                   "offsets us | offsets / floor | CUB us | CUB / floor | CUB by key us | "
                   "by key / floor | dlscan / offsets | dlscan / CUB | dlscan / by key |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < count; ++i) {
            const row *r = &rows[i];
            if (r->type != o->types[t])
                continue;
            char shape[64];
            fprintf(f, "| %s | %s | %zu |", layout_names[r->columns], shape_label(r, shape, sizeof shape),
                    r->n);
            print_us(f, r, FLOOR);
            print_us(f, r, AXIS);
            print_ratio(f, r, FLOOR, AXIS);
            if (r->valid[AXIS])
                fprintf(f, " %.1f |", (double)r->floor_bytes / (r->us[AXIS] * 1e3));
            else
                fprintf(f, " - |");
            print_us(f, r, OFFSETS);
            print_ratio(f, r, FLOOR, OFFSETS);
            print_us(f, r, CUB);
            print_ratio(f, r, FLOOR, CUB);
            print_us(f, r, CUB_KEYS);
            print_ratio(f, r, FLOOR, CUB_KEYS);
            print_ratio(f, r, OFFSETS, AXIS);
            print_ratio(f, r, CUB, AXIS);
            print_ratio(f, r, CUB_KEYS, AXIS);
            fprintf(f, "\n");
        }
    }
}

/* ---------------------------------------------------------------- the sweep */

/* The most totals and offsets any shape over `total` items needs. */
static void largest_counts(const options *o, size_t total, size_t *scans, size_t *offsets)
{
    row shapes[MAX_SHAPES];
    const int count = all_shapes(o, total, shapes);
    *scans = 1, *offsets = 2;
    for (int i = 0; i < count; ++i) {
        *scans = shapes[i].scans > *scans ? shapes[i].scans : *scans;
        if (!shapes[i].columns)
            *offsets = shapes[i].scans + 1 > *offsets ? shapes[i].scans + 1 : *offsets;
    }
}

/* The device's bytes for a run over `total` items of `size` bytes: input, output and totals
 * (with their guards), the offsets, the keys, and a margin for dlscan's and CUB's own storage. */
static size_t device_bytes(const options *o, size_t total, size_t size)
{
    size_t scans, offsets;
    largest_counts(o, total, &scans, &offsets);
    return 2 * total * size + scans * size + 2 * GUARD_BYTES + offsets * sizeof(size_t) +
           total * sizeof(int32_t) + total / 8 + ((size_t)256 << 20);
}

static int run(const options *o, const struct cudaDeviceProp *prop, const bench_timer *t)
{
    size_t size = 0; /* the widest type's */
    for (int k = 0; k < o->type_count; ++k)
        size = test_type_size(o->types[k]) > size ? test_type_size(o->types[k]) : size;
    /* The largest total the GPU's free memory holds. */
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    int log = o->log;
    while (log > 10 && device_bytes(o, (size_t)1 << log, size) > free_bytes / 20 * 19)
        --log;
    const size_t total = (size_t)1 << log;
    size_t max_scans, max_offsets;
    largest_counts(o, total, &max_scans, &max_offsets);

    dlscan_handle_t h = NULL;
    if (dlscan_create(&h) != DLSCAN_SUCCESS) {
        fprintf(stderr, "bench_axis: dlscan_create failed: %s\n", dlscan_last_error(h));
        return 1;
    }
    size_t cub_temp_bytes = 0;
    const int have_cub = bench_cub_segmented_scan(o->types[0], o->op, o->exclusive, NULL, &cub_temp_bytes,
                                                  NULL, NULL, NULL, NULL, 1, 0) == 0;
    (void)cudaGetLastError();

    char operation[256], what[64], types[64] = "", header[1024];
    for (int k = 0; k < o->type_count; ++k)
        snprintf(types + strlen(types), sizeof types - strlen(types), "%s%s", k ? ", " : "",
                 test_type_name(o->types[k]));
    snprintf(operation, sizeof operation,
             "%s along an axis, rows [B, L] and columns [N, M] of 2^%d items (%s); rows also over "
             "offsets and with cub::DeviceSegmentedScan::%s%s",
             operation_name(o, what, sizeof what), log, types, cub_call_name(o),
             have_cub ? "" : " (not in this CUB)");
    bench_provenance(header, sizeof header, prop, operation);
    fputs(header, stdout);
    if (log < o->log)
        printf("# 2^%d items a shape: the GPU's free memory holds no more\n", log);
    FILE *csv = o->csv ? fopen(o->csv, "w") : NULL;
    if (o->csv && !csv) {
        fprintf(stderr, "bench_axis: cannot write %s\n", o->csv);
        return 1;
    }
    if (csv)
        print_csv_header(csv, o, header, have_cub);

    void *values = malloc(total * size);
    host_data d = {values, malloc(total * size + GUARD_BYTES), malloc(max_scans * size + GUARD_BYTES),
                   malloc(total * size + GUARD_BYTES), malloc(total * size), malloc(total * size)};
    size_t *offsets = malloc(max_offsets * sizeof *offsets);
    int32_t *keys = malloc(total * sizeof *keys);
    if (!values || !d.first || !d.totals || !d.other || !d.in_columns || !d.out_columns || !offsets || !keys) {
        fprintf(stderr, "bench_axis: host allocation failed\n");
        return 1;
    }
    void *d_in, *d_out, *d_totals, *d_offsets, *d_keys, *cub_temp = NULL;
    CUDA_CHECK(cudaMalloc(&d_in, total * size));
    CUDA_CHECK(cudaMalloc(&d_out, total * size + GUARD_BYTES));
    CUDA_CHECK(cudaMalloc(&d_totals, max_scans * size + GUARD_BYTES));
    CUDA_CHECK(cudaMalloc(&d_offsets, max_offsets * sizeof(size_t)));
    CUDA_CHECK(cudaMalloc(&d_keys, total * sizeof(int32_t)));
    uint64_t rng = 0xa7150000u + (uint64_t)time(NULL);

    row *rows = calloc((size_t)MAX_TYPES * MAX_SHAPES, sizeof *rows);
    int row_count = 0, failed = 0;
    for (int k = 0; k < o->type_count; ++k) {
        const dlscan_type type = o->types[k];
        const size_t type_size = test_type_size(type);
        test_fill_random(type, values_kind(type), values, total, &rng);
        CUDA_CHECK(cudaMemcpy(d_in, values, total * type_size, cudaMemcpyHostToDevice));
        /* dlscan_reserve sizes the plain scan's storage; a call along an axis that needs more
         * grows it in its warm-up. */
        if (dlscan_reserve(h, total, type) != DLSCAN_SUCCESS) {
            fprintf(stderr, "bench_axis: dlscan_reserve failed: %s\n", dlscan_last_error(h));
            return 1;
        }
        print_console_header(o, type);
        row shapes[MAX_SHAPES];
        const int shape_count = all_shapes(o, total, shapes);
        for (int s = 0; s < shape_count; ++s) {
            row *r = &rows[row_count++];
            *r = shapes[s];
            r->type = type;
            r->floor_bytes = r->n * 2 * type_size;
            r->in_l2 = r->floor_bytes <= (size_t)prop->l2CacheSize;
            r->valid[FLOOR] = r->valid[AXIS] = 1;
            r->valid[OFFSETS] = !r->columns;
            shape_calls c = {.o = o, .type = type, .h = h, .d_in = d_in, .d_out = d_out,
                             .d_offsets = d_offsets, .d_keys = d_keys, .length = r->length, .stride = r->stride,
                             .scans = r->scans, .cub_temp = cub_temp, .cub_temp_bytes = cub_temp_bytes};
            if (!r->columns) {
                /* The rows' offsets, and CUB's storage for them, before the timing. */
                for (size_t b = 0; b <= r->outer; ++b)
                    offsets[b] = b * r->length;
                CUDA_CHECK(cudaMemcpy(d_offsets, offsets, (r->outer + 1) * sizeof(size_t),
                                      cudaMemcpyHostToDevice));
                size_t bytes = 0;
                r->valid[CUB] = have_cub && bench_cub_segmented_scan(type, o->op, o->exclusive, NULL, &bytes,
                                                                     d_in, d_out, c.d_offsets, c.d_offsets + 1,
                                                                     r->scans, 0) == 0;
                /* The keys: each item's row. */
                for (size_t b = 0; b < r->outer; ++b)
                    for (size_t j = 0; j < r->length; ++j)
                        keys[b * r->length + j] = (int32_t)b;
                CUDA_CHECK(cudaMemcpy(d_keys, keys, r->n * sizeof(int32_t), cudaMemcpyHostToDevice));
                size_t key_bytes = 0;
                r->valid[CUB_KEYS] = !o->exclusive && r->outer <= INT32_MAX &&
                                     bench_cub_scan_by_key(DLSCAN_INT32, type, o->op, NULL, &key_bytes, d_keys,
                                                           d_in, d_out, r->n, 0) == 0;
                (void)cudaGetLastError();
                bytes = r->valid[CUB_KEYS] && key_bytes > bytes ? key_bytes : bytes;
                if ((r->valid[CUB] || r->valid[CUB_KEYS]) && (bytes > cub_temp_bytes || !cub_temp)) {
                    cudaFree(cub_temp);
                    cub_temp_bytes = bytes > cub_temp_bytes ? bytes : cub_temp_bytes;
                    CUDA_CHECK(cudaMalloc(&cub_temp, cub_temp_bytes ? cub_temp_bytes : 1));
                    c.cub_temp = cub_temp, c.cub_temp_bytes = cub_temp_bytes;
                }
            }
            failed += bench_time_variants(t, run_variant, &c, r->n, VARIANTS, o->repeats, "bench_axis",
                                          variant_names, r->valid, r->us, r->host_us);
            failed += check_shape(&c, d_totals, r, &d, t->stream);
            print_console_row(r);
            if (csv)
                print_csv(csv, o, r);
        }
    }
    markdown(stdout, prop, o, log, have_cub, rows, row_count);
    FILE *md = o->markdown ? fopen(o->markdown, "w") : NULL;
    if (o->markdown && !md) {
        fprintf(stderr, "bench_axis: cannot write %s\n", o->markdown);
        ++failed;
    }
    if (md) {
        markdown(md, prop, o, log, have_cub, rows, row_count);
        fclose(md);
    }
    if (csv)
        fclose(csv);
    dlscan_destroy(h);
    cudaFree(cub_temp);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_totals);
    cudaFree(d_offsets);
    cudaFree(d_keys);
    free(rows);
    free(values);
    free(d.first);
    free(d.totals);
    free(d.other);
    free(d.in_columns);
    free(d.out_columns);
    free(offsets);
    free(keys);
    if (failed)
        fprintf(stderr, "bench_axis: %d measurements or checks failed (see above)\n", failed);
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
