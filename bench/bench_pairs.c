/*
 * bench_pairs.c: scans into a wider output type (issue 22), inclusive sums of uint8 into
 * int32 and int64, int32 into int64, float16 and bfloat16 into float32 and int16 into int32,
 * against their floor and CUB; and the cost of chaining calls through a device-side total.
 *
 *   bench_pairs [--quick] [--pairs uint8:int32,...] [--min-log 16] [--max-log 28] [--repeats 5]
 *               [--csv FILE] [--markdown FILE]
 *   bench_pairs --chain [--pairs ...] [--chunks 16] [--chunk-log 24] [--rounds 15]
 *               [--csv FILE] [--markdown FILE]
 *
 * The sweep, per pair and size (--quick: every other size, 3 repeats), four variants:
 *   floor   copy_convert.cu: each item read in the input type and written converted to the
 *           output type, the least a single-pass scan moves: n * (in + out size) bytes;
 *   memcpy  cudaMemcpyAsync device to device of as many bytes, half read and half written.
 * The floor reported is the faster of the two: on the H100 the memcpy, 4-7% ahead of the
 * converting copy from 2^24 on (which would flatter every fraction of the floor);
 *   dlscan  dlscan_scan, in_type into out_type;
 *   cub     cub::DeviceScan::InclusiveScan accumulating in the output type (cub.cu).
 * Method as in bench.c: each variant is first validated (poisoned output, compared item by item
 * with the sequential reference below), then (timing.c) warmed up (3 calls) and timed back to
 * back between CUDA events in batches of about 4 ms, the variants' batches alternating round by
 * round; the median batch gives the time per call. Reported: us per call, GB/s (the floor's
 * bytes over the time), the fraction of the floor (floor time / time), dlscan's speedup over CUB
 * (CUB time / dlscan time, which is also the ratio of calls per second) and calls per second.
 *
 * --chain: per pair, one array of `chunks` x 2^chunk-log items, scanned by one call per chunk;
 * the calls of one pass are timed as one region between two CUDA events:
 *   unchained        each call scans its chunk alone (no d_init, no d_total);
 *   chained          each call starts from one device value and leaves its total there
 *                    (d_init = d_total): the whole array's scan with no trip to the host;
 *   unchained again  the first, timed again last in each round: the control, whose ratio to
 *                    the first is what the method resolves.
 * Rounds alternate the three (after one warm-up pass each); medians of --rounds. Issue 22's
 * target: chained / unchained <= 1.02.
 *
 * Data: integers uniform over all their bits (the sums wrap in the output type); float16 and
 * bfloat16 multiples of 1/256 in [-1/16, 1/16]: every partial sum, in any order, is a float32
 * far inside 2^16 and exact, so float outputs are compared exactly too.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "dlscan.h"
#include "pairs.h"
#include "stats.h"
#include "timing.h"
#include "variants.h"

typedef struct pair {
    dlscan_type in, out;
} pair;

/* The pairs of issue 22's table, in its order. */
static const pair all_pairs[] = {
    {DLSCAN_UINT8, DLSCAN_INT32},      {DLSCAN_UINT8, DLSCAN_INT64},
    {DLSCAN_INT32, DLSCAN_INT64},      {DLSCAN_FLOAT16, DLSCAN_FLOAT32},
    {DLSCAN_BFLOAT16, DLSCAN_FLOAT32}, {DLSCAN_INT16, DLSCAN_INT32}};
#define PAIR_COUNT (int)(sizeof all_pairs / sizeof all_pairs[0])

static const char *const type_names[] = {"int32", "uint32", "int64",   "uint64", "float32", "float64",
                                         "int8",  "uint8",  "int16",   "uint16", "float16", "bfloat16"};
static const size_t type_sizes[] = {4, 4, 8, 8, 4, 8, 1, 1, 2, 2, 2, 2};

static size_t size_of(dlscan_type type) { return type_sizes[type]; }

/* ---------------------------------------------------------------- data and reference */

static uint64_t next_random(uint64_t *state) /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* k / 256 for |k| <= 16 as float16 and bfloat16 bits: sign, exponent, the (at most 5)
 * significant bits; 0 for k == 0. */
static uint16_t half_bits(int k, int bfloat)
{
    if (k == 0)
        return 0;
    const uint16_t sign = k < 0 ? 0x8000 : 0;
    int exponent = 0;
    const double fraction = frexp(fabs(k / 256.0), &exponent); /* in [0.5, 1) */
    const int bias = bfloat ? 127 : 15, mantissa_bits = bfloat ? 7 : 10;
    const uint16_t mantissa = (uint16_t)((fraction * 2 - 1) * (1 << mantissa_bits));
    return (uint16_t)(sign | (exponent - 1 + bias) << mantissa_bits | mantissa);
}

static void fill_random(dlscan_type type, void *values, size_t n, uint64_t *rng)
{
    if (type == DLSCAN_FLOAT16 || type == DLSCAN_BFLOAT16) {
        uint16_t bits[33];
        for (int k = -16; k <= 16; ++k)
            bits[k + 16] = half_bits(k, type == DLSCAN_BFLOAT16);
        uint16_t *v = values;
        for (size_t i = 0; i < n; ++i)
            v[i] = bits[next_random(rng) % 33];
        return;
    }
    unsigned char *bytes = values;
    const size_t total = n * size_of(type);
    for (size_t i = 0; i < total; i += 8) {
        const uint64_t r = next_random(rng);
        memcpy(bytes + i, &r, total - i < 8 ? total - i : 8);
    }
}

/* The value of float16 and bfloat16 bits, decoded here apart from the library's own code. */
static double half_value(uint16_t h)
{
    const double sign = h & 0x8000 ? -1.0 : 1.0;
    const int exponent = h >> 10 & 31, mantissa = h & 1023;
    if (exponent == 31)
        return mantissa ? NAN : sign * INFINITY;
    return sign * (exponent ? ldexp(1024 + mantissa, exponent - 25) : ldexp(mantissa, -24));
}

static double bfloat16_value(uint16_t h)
{
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Item i of an integer array, sign- or zero-extended as C converts it. */
static int64_t integer_item(dlscan_type type, const void *in, size_t i)
{
    switch (type) {
    case DLSCAN_INT8: return ((const int8_t *)in)[i];
    case DLSCAN_UINT8: return ((const uint8_t *)in)[i];
    case DLSCAN_INT16: return ((const int16_t *)in)[i];
    case DLSCAN_UINT16: return ((const uint16_t *)in)[i];
    case DLSCAN_INT32: return ((const int32_t *)in)[i];
    case DLSCAN_UINT32: return ((const uint32_t *)in)[i];
    default: return ((const int64_t *)in)[i];
    }
}

static double float_item(dlscan_type type, const void *in, size_t i)
{
    switch (type) {
    case DLSCAN_FLOAT16: return half_value(((const uint16_t *)in)[i]);
    case DLSCAN_BFLOAT16: return bfloat16_value(((const uint16_t *)in)[i]);
    case DLSCAN_FLOAT32: return ((const float *)in)[i];
    case DLSCAN_FLOAT64: return ((const double *)in)[i];
    default: return (double)integer_item(type, in, i);
    }
}

/* The sequential reference: the index of the first item of out that is not the inclusive sum
 * of in converted to the output type, the sum starting again every `restart` items (1: a
 * converting copy; a chunk: unchained calls; 0: never), or n when all are right. Integer sums
 * wrap in the output type; float sums are exact (double) and rounded once. */
static size_t first_wrong(const pair *p, const void *in, const void *out, size_t n, size_t restart)
{
    const int float_out = p->out == DLSCAN_FLOAT32 || p->out == DLSCAN_FLOAT64;
    const int narrow_out = size_of(p->out) == 4;
    uint64_t integer_sum = 0;
    double float_sum = 0;
    for (size_t i = 0; i < n; ++i) {
        if (restart && i % restart == 0)
            integer_sum = 0, float_sum = 0;
        if (float_out) {
            float_sum += float_item(p->in, in, i);
            const double got = narrow_out ? ((const float *)out)[i] : ((const double *)out)[i];
            if (got != (narrow_out ? (double)(float)float_sum : float_sum))
                return i;
        } else {
            integer_sum += (uint64_t)integer_item(p->in, in, i);
            const uint64_t got = narrow_out ? ((const uint32_t *)out)[i] : ((const uint64_t *)out)[i];
            if (got != (narrow_out ? (uint32_t)integer_sum : integer_sum))
                return i;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- the calls */

/* One dlscan_scan of n items; d_value: NULL, or the device value a chained call starts from
 * and leaves its total in. Returns 0 or a cudaError_t. */
static int dlscan_pair(dlscan_handle_t h, const pair *p, const void *in, void *out, size_t n,
                       void *d_value, cudaStream_t stream)
{
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = in, a.in_type = p->in;
    a.d_out = out, a.out_type = p->out;
    a.n = n;
    a.d_init = d_value, a.d_total = d_value;
    const dlscan_status status = dlscan_scan(h, &a, stream);
    if (status != DLSCAN_SUCCESS)
        fprintf(stderr, "bench_pairs: dlscan: %s: %s\n", dlscan_status_string(status), dlscan_last_error(h));
    return status == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}

enum variant { FLOOR, MEMCPY, DLSCAN, CUB, VARIANTS };
static const char *const variant_names[VARIANTS] = {"floor", "memcpy", "dlscan", "cub"};

/* What the sweep's calls of one pair use. */
typedef struct sweep {
    pair p;
    dlscan_handle_t h;
    void *cub_temp;
    size_t cub_temp_bytes;
    void *d_in, *d_out, *d_copy; /* d_copy: memcpy's destination */
} sweep;

/* A bench_run_fn (timing.h): context is the sweep. */
static int run_variant(const void *context, int v, size_t n, cudaStream_t stream)
{
    const sweep *s = context;
    size_t cub_bytes = s->cub_temp_bytes;
    switch (v) {
    case FLOOR: return bench_copy_convert(s->p.in, s->p.out, s->d_in, s->d_out, n, stream);
    case MEMCPY:
        return (int)cudaMemcpyAsync(s->d_copy, s->d_out, n * (size_of(s->p.in) + size_of(s->p.out)) / 2,
                                    cudaMemcpyDeviceToDevice, stream);
    case DLSCAN: return dlscan_pair(s->h, &s->p, s->d_in, s->d_out, n, NULL, stream);
    default:
        return bench_cub_pair_scan(s->p.in, s->p.out, s->cub_temp, &cub_bytes, s->d_in, s->d_out, n, stream);
    }
}

/* ---------------------------------------------------------------- validation */

/* Runs once into a poisoned output and checks it. Returns 1 if right. */
static int validate(const sweep *s, int v, size_t n, cudaStream_t stream, const void *host_in,
                    void *host_out)
{
    const size_t out_bytes = n * size_of(s->p.out);
    CUDA_CHECK(cudaMemsetAsync(s->d_out, 0xa5, out_bytes, stream));
    const int error = run_variant(s, v, n, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (error) {
        fprintf(stderr, "bench_pairs: %s, %s into %s, n = %zu: the call failed: %s\n", variant_names[v],
                type_names[s->p.in], type_names[s->p.out], n, cudaGetErrorString((cudaError_t)error));
        (void)cudaGetLastError();
        return 0;
    }
    if (v == MEMCPY)
        return 1; /* it copies whatever d_out holds */
    CUDA_CHECK(cudaMemcpy(host_out, s->d_out, out_bytes, cudaMemcpyDeviceToHost));
    const size_t wrong = first_wrong(&s->p, host_in, host_out, n, v == FLOOR ? 1 : 0);
    if (wrong < n)
        fprintf(stderr, "bench_pairs: %s, %s into %s, n = %zu: item %zu is wrong\n", variant_names[v],
                type_names[s->p.in], type_names[s->p.out], n, wrong);
    return wrong == n;
}

/* ---------------------------------------------------------------- options */

typedef struct options {
    int chain, quick;
    pair pairs[PAIR_COUNT];
    int pair_count;
    int min_log, max_log, repeats;
    int chunks, chunk_log, rounds;
    const char *csv, *markdown;
} options;

static void usage(void)
{
    fprintf(stderr, "usage: bench_pairs [--quick] [--pairs uint8:int32,...] [--min-log N] [--max-log N]\n"
                    "                   [--repeats N] [--csv FILE] [--markdown FILE]\n"
                    "       bench_pairs --chain [--pairs ...] [--chunks N] [--chunk-log N] [--rounds N]\n"
                    "                   [--csv FILE] [--markdown FILE]\n"
                    "pairs: uint8:int32 uint8:int64 int32:int64 float16:float32 bfloat16:float32 int16:int32\n");
    exit(2);
}

static int parse_pair(const char *name, pair *p)
{
    for (int k = 0; k < PAIR_COUNT; ++k) {
        char known[32];
        snprintf(known, sizeof known, "%s:%s", type_names[all_pairs[k].in], type_names[all_pairs[k].out]);
        if (strcmp(name, known) == 0) {
            *p = all_pairs[k];
            return 1;
        }
    }
    return 0;
}

static options parse_options(int argc, char **argv)
{
    options o = {0};
    memcpy(o.pairs, all_pairs, sizeof all_pairs);
    o.pair_count = PAIR_COUNT;
    o.min_log = 16, o.max_log = 28, o.repeats = 5;
    o.chunks = 16, o.chunk_log = 24, o.rounds = 15;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--chain") == 0) {
            o.chain = 1;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (value && strcmp(a, "--pairs") == 0) {
            char copy[256];
            snprintf(copy, sizeof copy, "%s", value);
            o.pair_count = 0;
            for (char *t = strtok(copy, ","); t; t = strtok(NULL, ","))
                if (o.pair_count == PAIR_COUNT || !parse_pair(t, &o.pairs[o.pair_count++]))
                    usage();
            ++i;
        } else if (value && strcmp(a, "--min-log") == 0) {
            o.min_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--max-log") == 0) {
            o.max_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--repeats") == 0) {
            o.repeats = atoi(value), ++i;
        } else if (value && strcmp(a, "--chunks") == 0) {
            o.chunks = atoi(value), ++i;
        } else if (value && strcmp(a, "--chunk-log") == 0) {
            o.chunk_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--rounds") == 0) {
            o.rounds = atoi(value), ++i;
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
    /* CUB takes int counts: below 2^31 items */
    if (o.pair_count < 1 || o.min_log < 1 || o.max_log > 30 || o.min_log > o.max_log ||
        o.repeats < 1 || o.repeats > 64 || o.chunks < 1 || o.chunk_log < 1 || o.chunk_log > 30 ||
        o.rounds < 1 || o.rounds > 64)
        usage();
    return o;
}

/* ---------------------------------------------------------------- the sweep */

typedef struct row {
    pair p;
    int log;
    size_t n;
    int valid[VARIANTS];
    double us[VARIANTS];      /* per call, median */
    double host_us[VARIANTS]; /* the host's time to enqueue a call, median */
} row;

/* Times every variant of one pair at one size into r. Returns how many could not be timed. */
static int sweep_size(const sweep *s, int log, const bench_timer *t, int repeats, const void *host_in,
                      void *host_out, int have_cub, row *r)
{
    const size_t n = (size_t)1 << log;
    int failed = 0;
    r->p = s->p, r->log = log, r->n = n;
    for (int v = 0; v < VARIANTS; ++v) {
        if (v == CUB && !have_cub)
            continue;
        r->valid[v] = validate(s, v, n, t->stream, host_in, host_out);
        failed += !r->valid[v];
    }
    return failed + bench_time_variants(t, run_variant, s, n, VARIANTS, repeats, "bench_pairs",
                                        variant_names, r->valid, r->us, r->host_us);
}

static size_t floor_bytes(const row *r) { return r->n * (size_of(r->p.in) + size_of(r->p.out)); }

static void print_header(FILE *f, const struct cudaDeviceProp *prop, const char *operation)
{
    char header[1024];
    bench_provenance(header, sizeof header, prop, operation);
    fputs(header, f);
}

/* "1.234" or "-" where either time is missing: a / b as times, so b's speed over a's. */
static void print_ratio(FILE *f, const row *r, int over, int under)
{
    if (r->valid[over] && r->valid[under])
        fprintf(f, " %.3f |", r->us[over] / r->us[under]);
    else
        fprintf(f, " - |");
}

static void print_us(FILE *f, const row *r, int v)
{
    if (r->valid[v])
        fprintf(f, " %.2f |", r->us[v]);
    else
        fprintf(f, " - |");
}

static void sweep_markdown(FILE *f, const struct cudaDeviceProp *prop, const row *rows, int count,
                           const options *o)
{
    fprintf(f, "\n## %s: inclusive sums into a wider type against their floor and CUB\n\n", prop->name);
    fprintf(f, "Floor: the faster of a copy reading each item in the input type and writing it in the "
               "output type, and a memcpy of as many bytes.\n"
               "us per call (back-to-back calls, median of %d batches); GB/s: the floor's bytes over "
               "dlscan's time; / floor: floor time over the variant's; dlscan / CUB: CUB's time over "
               "dlscan's (the ratio of calls per second). Every other size; the CSV has them all.\n\n",
            o->repeats);
    fprintf(f, "| pair | n | floor us | memcpy / floor | dlscan us | CUB us | dlscan GB/s | dlscan / floor | "
               "CUB / floor | dlscan / CUB | dlscan calls/s | CUB calls/s |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < count; ++i) {
        const row *r = &rows[i];
        if (r->log % 2)
            continue;
        fprintf(f, "| %s -> %s | 2^%d |", type_names[r->p.in], type_names[r->p.out], r->log);
        print_us(f, r, FLOOR);
        print_ratio(f, r, FLOOR, MEMCPY);
        print_us(f, r, DLSCAN);
        print_us(f, r, CUB);
        if (r->valid[DLSCAN])
            fprintf(f, " %.1f |", (double)floor_bytes(r) / (r->us[DLSCAN] * 1e3));
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

    /* Issue 22's table and targets, per pair. */
    fprintf(f, "\n| scan | floor (2^28) | CUB | CUB / floor | dlscan | dlscan / floor | "
               "dlscan / floor, min from 2^26 | dlscan / CUB, min from 2^16 | dlscan / CUB, min up to 2^18 |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < o->pair_count; ++k) {
        const pair *p = &o->pairs[k];
        const row *top = NULL;
        double floor_from_26 = INFINITY, cub_from_16 = INFINITY, cub_to_18 = INFINITY;
        for (int i = 0; i < count; ++i) {
            const row *r = &rows[i];
            if (r->p.in != p->in || r->p.out != p->out)
                continue;
            if (r->n == (size_t)1 << 28)
                top = r;
            if (r->valid[DLSCAN] && r->valid[FLOOR] && r->n >= (size_t)1 << 26)
                floor_from_26 = fmin(floor_from_26, r->us[FLOOR] / r->us[DLSCAN]);
            if (r->valid[DLSCAN] && r->valid[CUB] && r->n >= (size_t)1 << 16)
                cub_from_16 = fmin(cub_from_16, r->us[CUB] / r->us[DLSCAN]);
            if (r->valid[DLSCAN] && r->valid[CUB] && r->n <= (size_t)1 << 18)
                cub_to_18 = fmin(cub_to_18, r->us[CUB] / r->us[DLSCAN]);
        }
        fprintf(f, "| %s -> %s |", type_names[p->in], type_names[p->out]);
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
        for (int m = 0; m < 3; ++m)
            if (isinf(mins[m]))
                fprintf(f, " - |");
            else
                fprintf(f, " %.3f |", mins[m]);
        fprintf(f, "\n");
    }
}

static int run_sweep(const options *o, const struct cudaDeviceProp *prop, const bench_timer *t)
{
    FILE *csv = o->csv ? fopen(o->csv, "w") : NULL;
    if (o->csv && !csv) {
        fprintf(stderr, "bench_pairs: cannot write %s\n", o->csv);
        return 1;
    }
    print_header(stdout, prop, "inclusive sum, input type into a wider output type");
    if (csv) {
        print_header(csv, prop, "inclusive sum, input type into a wider output type");
        fprintf(csv, "# variant floor: the faster of a copy reading n items of in_type, writing n of "
                     "out_type, and the memcpy below: n * (in + out size) bytes\n"
                     "# variant memcpy: cudaMemcpyAsync device to device of as many bytes\n"
                     "# variant dlscan: dlscan_scan\n"
                     "# variant cub: cub::DeviceScan::InclusiveScan, cuda::std::plus<out_type>\n"
                     "in_type,out_type,op,kind,variant,n,bytes_moved,fits_in_l2,per_call_us,"
                     "items_per_second,gb_per_second,fraction_of_floor,calls_per_second,host_us\n");
    }
    const int have_cub = bench_cub_variant() != NULL;
    row *rows = calloc((size_t)PAIR_COUNT * 32, sizeof *rows);
    int row_count = 0, failed = 0;
    for (int k = 0; k < o->pair_count; ++k) {
        sweep s = {o->pairs[k], NULL, NULL, 0, NULL, NULL, NULL};
        const size_t in_size = size_of(s.p.in), out_size = size_of(s.p.out);
        size_t free_bytes, total_bytes;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        int max_log = o->max_log;
        while (max_log > o->min_log && ((size_t)1 << max_log) * 2 * (in_size + out_size) > free_bytes)
            --max_log; /* input, output, memcpy's destination, dlscan's and CUB's storage */
        const size_t max_n = (size_t)1 << max_log;
        void *host_in = malloc(max_n * in_size), *host_out = malloc(max_n * out_size);
        if (!host_in || !host_out) {
            fprintf(stderr, "bench_pairs: host allocation failed\n");
            return 1;
        }
        uint64_t rng = 0x5eed0000u + (uint64_t)time(NULL) + (uint64_t)k;
        fill_random(s.p.in, host_in, max_n, &rng);
        CUDA_CHECK(cudaMalloc(&s.d_in, max_n * in_size));
        CUDA_CHECK(cudaMalloc(&s.d_out, max_n * out_size));
        CUDA_CHECK(cudaMalloc(&s.d_copy, max_n * (in_size + out_size) / 2));
        CUDA_CHECK(cudaMemcpy(s.d_in, host_in, max_n * in_size, cudaMemcpyHostToDevice));
        if (dlscan_create(&s.h) != DLSCAN_SUCCESS || dlscan_reserve(s.h, max_n, s.p.out) != DLSCAN_SUCCESS) {
            fprintf(stderr, "bench_pairs: dlscan_create or dlscan_reserve failed: %s\n", dlscan_last_error(s.h));
            return 1;
        }
        if (have_cub) {
            CUDA_CHECK((cudaError_t)bench_cub_pair_scan(s.p.in, s.p.out, NULL, &s.cub_temp_bytes, NULL,
                                                        NULL, max_n, 0));
            CUDA_CHECK(cudaMalloc(&s.cub_temp, s.cub_temp_bytes ? s.cub_temp_bytes : 1));
        }

        printf("\n%s into %s, inclusive sum: us per call (fraction of the floor), median of %d\n",
               type_names[s.p.in], type_names[s.p.out], o->repeats);
        printf("%-8s %-4s %10s %16s %16s %16s %9s\n", "n", "L2", "floor", "memcpy", "dlscan", "cub",
               "dl / cub");
        for (int log = o->min_log; log <= max_log; log += o->quick ? 2 : 1) {
            const size_t n = (size_t)1 << log;
            row *r = &rows[row_count++];
            failed += sweep_size(&s, log, t, o->repeats, host_in, host_out, have_cub, r);
            /* The floor is the faster of the two copies of the floor's bytes. */
            if (r->valid[MEMCPY] && (!r->valid[FLOOR] || r->us[MEMCPY] < r->us[FLOOR])) {
                r->us[FLOOR] = r->us[MEMCPY];
                r->valid[FLOOR] = 1;
            }
            const int in_l2 = floor_bytes(r) <= (size_t)prop->l2CacheSize;
            printf("2^%-6d %-4s", log, in_l2 ? "yes" : "");
            for (int v = 0; v < VARIANTS; ++v) {
                if (!r->valid[v])
                    printf(" %*s", v == FLOOR ? 10 : 16, "-");
                else if (v == FLOOR)
                    printf(" %10.2f", r->us[v]);
                else if (r->valid[FLOOR])
                    printf(" %8.2f (%5.3f)", r->us[v], r->us[FLOOR] / r->us[v]);
                else
                    printf(" %16.2f", r->us[v]);
                if (!csv || !r->valid[v])
                    continue;
                const double seconds = r->us[v] * 1e-6;
                fprintf(csv, "%s,%s,sum,inclusive,%s,%zu,%zu,%d,%.4f,%.6g,%.6g,%.6g,%.6g,%.3f\n",
                        type_names[s.p.in], type_names[s.p.out], variant_names[v], n, floor_bytes(r),
                        in_l2, r->us[v], (double)n / seconds, (double)floor_bytes(r) / seconds / 1e9,
                        r->valid[FLOOR] ? r->us[FLOOR] / r->us[v] : NAN, 1.0 / seconds, r->host_us[v]);
            }
            if (r->valid[DLSCAN] && r->valid[CUB])
                printf(" %9.3f", r->us[CUB] / r->us[DLSCAN]);
            printf("\n");
            fflush(stdout);
        }
        dlscan_destroy(s.h);
        cudaFree(s.cub_temp);
        cudaFree(s.d_in);
        cudaFree(s.d_out);
        cudaFree(s.d_copy);
        free(host_in);
        free(host_out);
    }
    sweep_markdown(stdout, prop, rows, row_count, o);
    FILE *md = o->markdown ? fopen(o->markdown, "w") : NULL;
    if (md) {
        sweep_markdown(md, prop, rows, row_count, o);
        fclose(md);
    }
    if (csv)
        fclose(csv);
    free(rows);
    if (failed)
        fprintf(stderr, "bench_pairs: %d measurements were not taken (see above)\n", failed);
    return failed ? 1 : 0;
}

/* ---------------------------------------------------------------- chaining */

enum chain_kind { UNCHAINED, CHAINED, UNCHAINED_AGAIN, CHAIN_KINDS };
static const char *const chain_names[CHAIN_KINDS] = {"unchained", "chained", "unchained-again"};

/* One pass: a call per chunk, chained through d_value or not. Returns 0 or a cudaError_t. */
static int chain_pass(dlscan_handle_t h, const pair *p, const char *in, char *out, int chunks,
                      size_t chunk_n, int kind, void *d_value, cudaStream_t stream)
{
    int error = 0;
    for (int c = 0; c < chunks && !error; ++c)
        error = dlscan_pair(h, p, in + c * chunk_n * size_of(p->in), out + c * chunk_n * size_of(p->out),
                            chunk_n, kind == CHAINED ? d_value : NULL, stream);
    return error;
}

/* One timed pass (ms); the running total starts from zero, outside the timed region. */
static int time_pass(dlscan_handle_t h, const pair *p, const void *in, void *out, int chunks,
                     size_t chunk_n, int kind, void *d_value, const bench_timer *t, double *ms)
{
    float elapsed = 0;
    CUDA_CHECK(cudaMemsetAsync(d_value, 0, size_of(p->out), t->stream));
    CUDA_CHECK(cudaEventRecord(t->start, t->stream));
    const int error = chain_pass(h, p, in, out, chunks, chunk_n, kind, d_value, t->stream);
    CUDA_CHECK(cudaEventRecord(t->stop, t->stream));
    CUDA_CHECK(cudaEventSynchronize(t->stop));
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, t->start, t->stop));
    *ms = elapsed;
    return error;
}

/* Checks one pass of each kind into a poisoned output, and the chained total. */
static int validate_chain(dlscan_handle_t h, const pair *p, const void *d_in, void *d_out, int chunks,
                          size_t chunk_n, void *d_value, const bench_timer *t, const void *host_in,
                          void *host_out)
{
    const size_t n = (size_t)chunks * chunk_n, out_size = size_of(p->out);
    for (int kind = UNCHAINED; kind <= CHAINED; ++kind) {
        double ms;
        CUDA_CHECK(cudaMemsetAsync(d_out, 0xa5, n * out_size, t->stream));
        if (time_pass(h, p, d_in, d_out, chunks, chunk_n, kind, d_value, t, &ms) != 0)
            return 0;
        CUDA_CHECK(cudaMemcpy(host_out, d_out, n * out_size, cudaMemcpyDeviceToHost));
        const size_t wrong = first_wrong(p, host_in, host_out, n, kind == CHAINED ? 0 : chunk_n);
        if (wrong < n) {
            fprintf(stderr, "bench_pairs: %s, %s into %s: item %zu is wrong\n", chain_names[kind],
                    type_names[p->in], type_names[p->out], wrong);
            return 0;
        }
        unsigned char total[8];
        CUDA_CHECK(cudaMemcpy(total, d_value, out_size, cudaMemcpyDeviceToHost));
        if (kind == CHAINED && memcmp(total, (const char *)host_out + (n - 1) * out_size, out_size) != 0) {
            fprintf(stderr, "bench_pairs: chained, %s into %s: the total is not the last item\n",
                    type_names[p->in], type_names[p->out]);
            return 0;
        }
    }
    return 1;
}

static int run_chain(const options *o, const struct cudaDeviceProp *prop, const bench_timer *t)
{
    const size_t chunk_n = (size_t)1 << o->chunk_log, n = (size_t)o->chunks * chunk_n;
    FILE *csv = o->csv ? fopen(o->csv, "w") : NULL;
    FILE *md = o->markdown ? fopen(o->markdown, "w") : NULL;
    if ((o->csv && !csv) || (o->markdown && !md)) {
        fprintf(stderr, "bench_pairs: cannot write %s\n", o->csv && !csv ? o->csv : o->markdown);
        return 1;
    }
    char operation[128];
    snprintf(operation, sizeof operation, "inclusive sum, %d calls over chunks of 2^%d items", o->chunks,
             o->chunk_log);
    print_header(stdout, prop, operation);
    if (csv) {
        print_header(csv, prop, operation);
        fprintf(csv, "# unchained: each call scans its chunk alone; chained: d_init = d_total = one "
                     "device value; unchained-again: the control\n"
                     "in_type,out_type,chunks,chunk_items,variant,pass_us,per_call_us,ratio_to_unchained\n");
    }
    FILE *outs[2] = {stdout, md};
    for (int k = 0; k < 2; ++k)
        if (outs[k])
            fprintf(outs[k],
                    "\n## %s: %d chained calls over chunks of 2^%d items against %d unchained ones\n\n"
                    "Each pass (%d calls) is one region between two CUDA events; median of %d rounds, "
                    "the kinds alternating. Chained: every call reads the running total from one "
                    "device value and leaves the next there (d_init = d_total). The control is the "
                    "unchained pass timed again, last in each round.\n\n"
                    "| pair | unchained us | chained us | chained / unchained | control / unchained |\n"
                    "|---|---|---|---|---|\n",
                    prop->name, o->chunks, o->chunk_log, o->chunks, o->chunks, o->rounds);
    int failed = 0;
    for (int k = 0; k < o->pair_count; ++k) {
        const pair *p = &o->pairs[k];
        const size_t in_size = size_of(p->in), out_size = size_of(p->out);
        void *host_in = malloc(n * in_size), *host_out = malloc(n * out_size);
        void *d_in, *d_out, *d_value;
        dlscan_handle_t h = NULL;
        if (!host_in || !host_out) {
            fprintf(stderr, "bench_pairs: host allocation failed\n");
            return 1;
        }
        uint64_t rng = 0xc4a10000u + (uint64_t)time(NULL) + (uint64_t)k;
        fill_random(p->in, host_in, n, &rng);
        CUDA_CHECK(cudaMalloc(&d_in, n * in_size));
        CUDA_CHECK(cudaMalloc(&d_out, n * out_size));
        CUDA_CHECK(cudaMalloc(&d_value, out_size));
        CUDA_CHECK(cudaMemcpy(d_in, host_in, n * in_size, cudaMemcpyHostToDevice));
        if (dlscan_create(&h) != DLSCAN_SUCCESS || dlscan_reserve(h, chunk_n, p->out) != DLSCAN_SUCCESS) {
            fprintf(stderr, "bench_pairs: dlscan_create or dlscan_reserve failed: %s\n", dlscan_last_error(h));
            return 1;
        }
        double samples[CHAIN_KINDS][64], us[CHAIN_KINDS];
        int ok = validate_chain(h, p, d_in, d_out, o->chunks, chunk_n, d_value, t, host_in, host_out);
        for (int kind = 0; kind < CHAIN_KINDS && ok; ++kind) /* warm-up */
            ok = time_pass(h, p, d_in, d_out, o->chunks, chunk_n, kind, d_value, t, &samples[kind][0]) == 0;
        for (int round = 0; round < o->rounds && ok; ++round)
            for (int kind = 0; kind < CHAIN_KINDS && ok; ++kind)
                ok = time_pass(h, p, d_in, d_out, o->chunks, chunk_n, kind, d_value, t,
                               &samples[kind][round]) == 0;
        if (ok)
            for (int kind = 0; kind < CHAIN_KINDS; ++kind)
                us[kind] = 1000.0 * bench_median(samples[kind], o->rounds);
        for (int m = 0; m < 2; ++m) {
            if (!outs[m])
                continue;
            fprintf(outs[m], "| %s -> %s |", type_names[p->in], type_names[p->out]);
            if (ok)
                fprintf(outs[m], " %.1f | %.1f | %.4f | %.4f |\n", us[UNCHAINED], us[CHAINED],
                        us[CHAINED] / us[UNCHAINED], us[UNCHAINED_AGAIN] / us[UNCHAINED]);
            else
                fprintf(outs[m], " - | - | - | - |\n");
            fflush(outs[m]);
        }
        for (int kind = 0; kind < CHAIN_KINDS && ok && csv; ++kind)
            fprintf(csv, "%s,%s,%d,%zu,%s,%.3f,%.4f,%.5f\n", type_names[p->in], type_names[p->out],
                    o->chunks, chunk_n, chain_names[kind], us[kind], us[kind] / o->chunks,
                    us[kind] / us[UNCHAINED]);
        failed += !ok;
        dlscan_destroy(h);
        cudaFree(d_in);
        cudaFree(d_out);
        cudaFree(d_value);
        free(host_in);
        free(host_out);
    }
    if (csv)
        fclose(csv);
    if (md)
        fclose(md);
    if (failed)
        fprintf(stderr, "bench_pairs: %d pairs were not timed (see above)\n", failed);
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
    const int status = o.chain ? run_chain(&o, &prop, &t) : run_sweep(&o, &prop, &t);
    bench_timer_destroy(&t);
    return status;
}
