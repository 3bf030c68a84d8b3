/*
 * bench_compact.c: dlscan's stream compaction (issue 24) against its floor and CUB, call by
 * call over data shapes, side by side in one run.
 *
 *   bench_compact [--quick] [--calls LIST] [--min-log 16] [--max-log 28] [--repeats 5]
 *                 [--csv FILE] [--markdown FILE]
 *   bench_compact --from-csv FILE[,FILE...] [--csv FILE] [--markdown FILE]
 *
 * Sizes 2^min-log, 2^(min-log + 2), ... up to 2^max-log; --max-log 30 adds 2^30 where the GPU's
 * free memory holds the buffers (a size whose buffers do not fit is skipped, and said so).
 * --calls: a comma-separated list of select_flagged, select_if, unique, run_length_encode and
 * reduce_by_key (default all), so that a sweep can be split over several runs. --quick: sizes
 * 2^16, 2^20, 2^24 and 2^26 only, the shape "half" only (50% kept, runs of mean 2), 3 repeats
 * unless --repeats says. --from-csv measures nothing: it reads the rows of earlier runs' CSVs
 * (a sweep split by --calls) and writes them as one CSV and one markdown.
 *
 * The cases, per call, items (keys) and shape:
 *   select_flagged, select_if   int32 and int64 items; 1%, 50% and 99% of them kept (flags
 *                               set, or items in [0, 1000) below 10, 500 or 990);
 *   unique, run_length_encode   int32 and int64 items; runs of mean length L = 1, 2, 8, 64 and
 *                               1024 (each item repeats the one before with probability
 *                               1 - 1/L; L = 1: every item differs from the one before);
 *   reduce_by_key (sums)        (keys, values) (int32, int32), (int64, int64), (int32, float64);
 *                               the same runs.
 * Inputs (tests/compact_check.c) are drawn once per case at its largest size; a smaller size
 * takes their first n items. Integers are uniform over all their bits, the float64 values
 * multiples of 1/256 in [-1, 1], whose sums are exact in any order.
 *
 * Per case and size, three variants:
 *   floor   cudaMemcpyAsync device to device of half the bytes the call must move (the copy
 *           reads them and writes them): the bytes read plus the bytes written, counted from
 *           the reference's count k (items kept, or runs), for items (keys) of s bytes and
 *           values of v: select_flagged n (s + 1) + k s; select_if and unique n s + k s;
 *           run_length_encode n s + k (s + 8) (the lengths are size_t); reduce_by_key
 *           (n + k) (s + v). The count itself (8 bytes) is left out;
 *   dlscan  the call, on a handle with default options;
 *   cub     cub::DeviceSelect::Flagged, If and Unique, DeviceRunLengthEncode::Encode (which
 *           counts in an int: from 2^31 items it is skipped) and DeviceReduce::ReduceByKey
 *           (cub.cu).
 * Method: dlscan's and CUB's calls are first checked once against the sequential reference
 * (tests/compact_check.c) into poisoned outputs: the count and every output, bit for bit,
 * and the item after the last one still poisoned. A variant that fails reads WRONG and the
 * program exits 1. Then timing.c times the three (as bench.c: warmed up, back-to-back calls
 * between CUDA events in batches of about 4 ms, the variants' batches alternating round by
 * round, the median of --repeats batches), and each alone: the latency, the median of 15
 * single calls, each enqueued once the stream has drained.
 * Reported per row: us per call, fractions of the floor (floor time / time), dlscan / CUB
 * (CUB's time over dlscan's: the ratio of calls per second) and the latencies: on stdout as
 * each row is measured (and each case's seconds, host work included), in the CSV (one line per
 * call, types, shape, n and variant, written as measured: a run cut short keeps its rows) and in
 * the markdown. The markdown opens with a summary, one row per call, types and shape:
 * dlscan / floor at 2^28 (or the largest size below) and its least from 2^26, and dlscan /
 * CUB's least over 2^16 .. 2^28 and from 2^24.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (stats.h), strtok_r */

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compact_check.h"
#include "cuda_check.h"
#include "dlscan.h"
#include "host.h"
#include "stats.h"
#include "timing.h"
#include "variants.h"

int test_expect_failures; /* scan_check.c's plain-build counter (unused here) */

#define CALLS 5
#define MAX_CASES 64
#define MAX_SIZES 16
#define LATENCY_SAMPLES 15

static const char *const call_names[CALLS] = {"select_flagged", "select_if", "unique",
                                              "run_length_encode", "reduce_by_key"};

enum variant { FLOOR, DLSCAN, CUB, VARIANTS };
static const char *const variant_names[VARIANTS] = {"floor", "dlscan", "cub"};

/* ---------------------------------------------------------------- cases */

/* A data shape: a kept fraction (the selects) or a mean run length (the other calls). */
typedef struct shape {
    const char *name;  /* the CSV's */
    const char *label; /* the tables' */
    compact_pattern pattern;
} shape;

/* The selects take the first KEPT_SHAPES, the other calls the rest; the second of each is the
 * shape "half" (--quick, and the plot's first panel). */
#define KEPT_SHAPES 3
#define RUN_SHAPES 5
static const shape shapes[KEPT_SHAPES + RUN_SHAPES] = {
    {"kept1", "1% kept", PATTERN_KEEP_1},
    {"kept50", "50% kept", PATTERN_KEEP_HALF},
    {"kept99", "99% kept", PATTERN_KEEP_99},
    {"run1", "runs of 1", PATTERN_RUNS_OF_1},
    {"run2", "runs of mean 2", PATTERN_RUNS_HALF},
    {"run8", "runs of mean 8", PATTERN_RUNS_MEAN_8},
    {"run64", "runs of mean 64", PATTERN_RUNS_MEAN_64},
    {"run1024", "runs of mean 1024", PATTERN_RUNS_MEAN_1024},
};

typedef struct bench_case {
    compact_call call;
    dlscan_type key_type, value_type; /* items (keys); values of reduce_by_key, else key_type */
    int shape;                        /* in shapes[] */
    int half;                         /* the shape "half" */
} bench_case;

/* Every case, in the tables' order: call, types, shape. Returns the count. */
static int all_cases(bench_case *cases)
{
    static const dlscan_type pairs[3][2] = {
        {DLSCAN_INT32, DLSCAN_INT32}, {DLSCAN_INT64, DLSCAN_INT64}, {DLSCAN_INT32, DLSCAN_FLOAT64}};
    int count = 0;
    for (int call = 0; call < CALLS; ++call) {
        const int runs = call >= COMPACT_UNIQUE, by_key = call == COMPACT_REDUCE_BY_KEY;
        const int first = runs ? KEPT_SHAPES : 0, shape_count = runs ? RUN_SHAPES : KEPT_SHAPES;
        for (int t = 0; t < (by_key ? 3 : 2); ++t)
            for (int s = 0; s < shape_count; ++s) {
                bench_case *c = &cases[count++];
                c->call = (compact_call)call;
                c->key_type = pairs[t][0];
                c->value_type = by_key ? pairs[t][1] : pairs[t][0];
                c->shape = first + s;
                c->half = s == 1;
            }
    }
    return count;
}

/* "int32", or "int32 / float64" for reduce_by_key's keys and values. */
static const char *types_label(const bench_case *c, char *buffer, size_t size)
{
    if (c->call == COMPACT_REDUCE_BY_KEY)
        snprintf(buffer, size, "%s / %s", test_type_name(c->key_type),
                 test_type_name(c->value_type));
    else
        snprintf(buffer, size, "%s", test_type_name(c->key_type));
    return buffer;
}

/* The CSV's value_type: reduce_by_key's values, "none" for the other calls. */
static const char *values_name(const bench_case *c)
{
    return c->call == COMPACT_REDUCE_BY_KEY ? test_type_name(c->value_type) : "none";
}

/* Bytes per item of the second output: run lengths (size_t) or run sums; 0 for the others. */
static size_t second_size(const bench_case *c)
{
    return c->call == COMPACT_RUN_LENGTH      ? sizeof(size_t)
           : c->call == COMPACT_REDUCE_BY_KEY ? test_type_size(c->value_type)
                                              : 0;
}

/* The floor: the bytes a call on n items that keeps k (or finds k runs) reads plus those it
 * writes. */
static size_t floor_bytes(const bench_case *c, size_t n, size_t k)
{
    const size_t s = test_type_size(c->key_type), v = test_type_size(c->value_type);
    switch (c->call) {
    case COMPACT_SELECT_FLAGGED: return n * (s + 1) + k * s;
    case COMPACT_RUN_LENGTH: return n * s + k * (s + sizeof(size_t));
    case COMPACT_REDUCE_BY_KEY: return (n + k) * (s + v);
    default: return n * s + k * s; /* select_if, unique */
    }
}

/* ---------------------------------------------------------------- options */

typedef struct options {
    int quick;
    int calls[CALLS]; /* 1: run this call */
    int min_log, max_log, repeats;
    const char *csv, *markdown;
    char *from_csv; /* --from-csv's list, or NULL */
} options;

static void usage(void)
{
    fprintf(
        stderr,
        "usage: bench_compact [--quick] [--calls LIST] [--min-log N] [--max-log N] [--repeats N]\n"
        "                     [--csv FILE] [--markdown FILE]\n"
        "       bench_compact --from-csv FILE[,FILE...] [--csv FILE] [--markdown FILE]\n"
        "calls: select_flagged,select_if,unique,run_length_encode,reduce_by_key (default all);\n"
        "sizes: 2^min-log, 2^(min-log + 2), ... 2^max-log (16 .. 28; at most 30)\n");
    exit(2);
}

static options parse_options(int argc, char **argv)
{
    options o = {0};
    for (int k = 0; k < CALLS; ++k)
        o.calls[k] = 1;
    o.min_log = 16, o.max_log = 28;
    int repeats = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (value && strcmp(a, "--calls") == 0) {
            char copy[256], *rest = NULL;
            snprintf(copy, sizeof copy, "%s", value);
            memset(o.calls, 0, sizeof o.calls);
            for (char *t = strtok_r(copy, ",", &rest); t; t = strtok_r(NULL, ",", &rest)) {
                const int call = bench_find_name(t, call_names, CALLS);
                if (call < 0)
                    usage();
                o.calls[call] = 1;
            }
            ++i;
        } else if (value && strcmp(a, "--min-log") == 0) {
            o.min_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--max-log") == 0) {
            o.max_log = atoi(value), ++i;
        } else if (value && strcmp(a, "--repeats") == 0) {
            repeats = atoi(value), ++i;
            if (repeats < 1 || repeats > 64)
                usage();
        } else if (value && strcmp(a, "--csv") == 0) {
            o.csv = value, ++i;
        } else if (value && strcmp(a, "--markdown") == 0) {
            o.markdown = value, ++i;
        } else if (value && strcmp(a, "--from-csv") == 0) {
            o.from_csv = argv[++i];
        } else {
            usage();
        }
    }
    o.repeats = repeats ? repeats : o.quick ? 3 : 5;
    int any = 0;
    for (int k = 0; k < CALLS; ++k)
        any |= o.calls[k];
    if (!any || o.min_log < 1 || o.max_log > 30 || o.min_log > o.max_log)
        usage();
    return o;
}

/* The sizes to run, as powers of two. Returns their count. */
static int make_sizes(const options *o, int *logs)
{
    static const int quick[] = {16, 20, 24, 26};
    int count = 0;
    if (o->quick) {
        for (int k = 0; k < 4; ++k)
            if (quick[k] >= o->min_log && quick[k] <= o->max_log)
                logs[count++] = quick[k];
    } else {
        for (int log = o->min_log; log <= o->max_log && count < MAX_SIZES; log += 2)
            logs[count++] = log;
    }
    return count;
}

/* ---------------------------------------------------------------- rows */

/* One case at one size. */
typedef struct row {
    int case_index, log; /* case_index: in all_cases() */
    size_t n, count, floor_bytes;
    int valid[VARIANTS]; /* checked and timed */
    int wrong[VARIANTS]; /* outputs not the reference's (then not timed) */
    double us[VARIANTS]; /* per call, back to back, median */
    double host_us[VARIANTS];
    double latency_us[VARIANTS];
} row;

/* The row of (case, log) in rows, added if missing. */
static row *find_row(row *rows, int *count, int case_index, int log)
{
    for (int i = 0; i < *count; ++i)
        if (rows[i].case_index == case_index && rows[i].log == log)
            return &rows[i];
    row *r = &rows[(*count)++];
    memset(r, 0, sizeof *r);
    r->case_index = case_index, r->log = log, r->n = (size_t)1 << log;
    for (int v = 0; v < VARIANTS; ++v)
        r->us[v] = r->host_us[v] = r->latency_us[v] = NAN;
    return r;
}

/* ---------------------------------------------------------------- output */

static void print_csv_header(FILE *f, const char *provenance)
{
    fputs(provenance, f);
    fprintf(f,
            "# variant floor: cudaMemcpyAsync device to device of half the bytes read plus "
            "written (bytes): select_flagged n (s + 1) + k s; select_if, unique n s + k s; "
            "run_length_encode n s + k (s + 8); reduce_by_key (n + k) (s + v), for k items kept "
            "or runs (count), items (keys) of s bytes and values of v\n"
            "# variant dlscan: the call, default handle options\n"
            "# variant cub: cub::DeviceSelect::Flagged, If, Unique, "
            "DeviceRunLengthEncode::Encode, DeviceReduce::ReduceByKey (sum)\n"
            "# shape: keptP, about P%% of the items kept; runL, runs of mean length L (each item "
            "repeats the one before with probability 1 - 1/L)\n"
            "# check: the outputs against the sequential reference (ok, wrong: then no times)\n"
            "call,key_type,value_type,shape,n,count,implementation,check,bytes,per_call_us,"
            "items_per_second,gb_per_second,fraction_of_floor,latency_us,host_us\n");
}

static void print_csv_rows(FILE *f, const bench_case *c, const row *r)
{
    for (int v = 0; v < VARIANTS; ++v) {
        if (!r->valid[v] && !r->wrong[v])
            continue;
        const double seconds = r->us[v] * 1e-6;
        fprintf(f, "%s,%s,%s,%s,%zu,%zu,%s,%s,%zu,%.4f,%.6g,%.6g,%.6g,%.3f,%.3f\n",
                call_names[c->call], test_type_name(c->key_type), values_name(c),
                shapes[c->shape].name, r->n, r->count, variant_names[v],
                r->wrong[v] ? "wrong" : "ok", r->floor_bytes, r->us[v], (double)r->n / seconds,
                (double)r->floor_bytes / seconds / 1e9, r->us[FLOOR] / r->us[v], r->latency_us[v],
                r->host_us[v]);
    }
}

static void print_us(FILE *f, const row *r, int v)
{
    if (r->valid[v])
        fprintf(f, " %.2f |", r->us[v]);
    else
        fprintf(f, " %s |", r->wrong[v] ? "WRONG" : "-");
}

/* over's time over under's ("-" where either is missing): under's speed against over's. */
static void print_ratio(FILE *f, const row *r, int over, int under)
{
    if (r->valid[over] && r->valid[under])
        fprintf(f, " %.3f |", r->us[over] / r->us[under]);
    else
        fprintf(f, " - |");
}

/* The least of over / under over the rows of case k with first <= log <= last: "WRONG" if
 * either variant was found wrong there, "-" if no row has both. */
static void print_least(FILE *f, const row *rows, int count, int k, int over, int under, int first,
                        int last)
{
    double least = INFINITY;
    int wrong = 0;
    for (int i = 0; i < count; ++i) {
        const row *r = &rows[i];
        if (r->case_index != k || r->log < first || r->log > last)
            continue;
        wrong |= r->wrong[over] || r->wrong[under];
        if (r->valid[over] && r->valid[under])
            least = fmin(least, r->us[over] / r->us[under]);
    }
    if (wrong)
        fprintf(f, " WRONG |");
    else if (isinf(least))
        fprintf(f, " - |");
    else
        fprintf(f, " %.3f |", least);
}

/* The markdown: the summary, then (full) every row, one table per call. */
static void markdown(FILE *f, const char *gpu, const bench_case *cases, int case_count,
                     const row *rows, int count, int repeats, int full)
{
    int top = 0; /* the summary's size: 2^28, or the largest below */
    for (int i = 0; i < count; ++i)
        top = rows[i].log <= 28 && rows[i].log > top ? rows[i].log : top;
    fprintf(f, "\n## %s: dlscan's compaction against its floor and CUB\n\n", gpu);
    fprintf(f,
            "Floor: a device-to-device memcpy of the bytes the call must move, read plus written, "
            "from the reference's count k (kept items or runs), for items (keys) of s bytes and "
            "values of v: select_flagged n (s + 1) + k s, select_if and unique n s + k s, "
            "run_length_encode n s + k (s + 8), reduce_by_key (n + k) (s + v). CUB: "
            "DeviceSelect::Flagged, If, Unique, DeviceRunLengthEncode::Encode, "
            "DeviceReduce::ReduceByKey (sums). Shapes: about 1%%, 50%% or 99%% of the items kept; "
            "runs of mean length L (each item repeats the one before with probability 1 - 1/L).\n"
            "us per call (back-to-back calls, median of %d batches); / floor: floor time over the "
            "variant's; dlscan / CUB: CUB's time over dlscan's (the ratio of calls per second); "
            "out / in: bytes written over bytes read at 2^%d; latency: one call after the stream "
            "drained, median of %d. Checked once per row: count and outputs against the "
            "sequential reference, bit for bit.\n",
            repeats, top, LATENCY_SAMPLES);
    fprintf(f,
            "\n### Summary\n\n"
            "| call | items | shape | out / in | floor us, 2^%d | CUB / floor, 2^%d | "
            "dlscan / floor, 2^%d | dlscan / floor, least from 2^26 | "
            "dlscan / CUB, least 2^16 .. 2^28 | dlscan / CUB, least from 2^24 |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n",
            top, top, top);
    for (int k = 0; k < case_count; ++k) {
        const row *t = NULL;
        int any = 0;
        for (int i = 0; i < count; ++i)
            if (rows[i].case_index == k) {
                any = 1;
                t = rows[i].log == top ? &rows[i] : t;
            }
        if (!any)
            continue;
        const bench_case *c = &cases[k];
        char types[64];
        fprintf(f, "| %s | %s | %s |", call_names[c->call], types_label(c, types, sizeof types),
                shapes[c->shape].label);
        if (t) {
            const size_t read = floor_bytes(c, t->n, 0);
            fprintf(f, " %.2f |", (double)(t->floor_bytes - read) / (double)read);
            print_us(f, t, FLOOR);
            print_ratio(f, t, FLOOR, CUB);
            print_ratio(f, t, FLOOR, DLSCAN);
        } else {
            fprintf(f, " - | - | - | - |");
        }
        print_least(f, rows, count, k, FLOOR, DLSCAN, 26, 64);
        print_least(f, rows, count, k, CUB, DLSCAN, 16, 28);
        print_least(f, rows, count, k, CUB, DLSCAN, 24, 64);
        fprintf(f, "\n");
    }
    int table = -1; /* the call whose table is open (cases come call by call) */
    for (int k = 0; full && k < case_count; ++k) {
        const bench_case *c = &cases[k];
        for (int i = 0; i < count; ++i) {
            const row *r = &rows[i];
            if (r->case_index != k)
                continue;
            if (table != (int)c->call)
                fprintf(f,
                        "\n### %s\n\n"
                        "| items | shape | n | %s | floor us | CUB us | CUB / floor | dlscan us | "
                        "dlscan / floor | dlscan / CUB | dlscan latency us | CUB latency us |\n"
                        "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                        call_names[c->call], c->call <= COMPACT_SELECT_IF ? "kept" : "runs");
            table = (int)c->call;
            char types[64];
            fprintf(f, "| %s | %s | 2^%d | %zu |", types_label(c, types, sizeof types),
                    shapes[c->shape].label, r->log, r->count);
            print_us(f, r, FLOOR);
            print_us(f, r, CUB);
            print_ratio(f, r, FLOOR, CUB);
            print_us(f, r, DLSCAN);
            print_ratio(f, r, FLOOR, DLSCAN);
            print_ratio(f, r, CUB, DLSCAN);
            for (int v = DLSCAN; v <= CUB; ++v)
                if (r->valid[v] && !isnan(r->latency_us[v]))
                    fprintf(f, " %.2f |", r->latency_us[v]);
                else
                    fprintf(f, " - |");
            fprintf(f, "\n");
        }
    }
}

/* Writes the summary to stdout and the markdown to o->markdown, if given. Returns 0, or 1 if
 * the file could not be written. */
static int write_markdown(const options *o, const char *gpu, const bench_case *cases,
                          int case_count, const row *rows, int count, int repeats)
{
    markdown(stdout, gpu, cases, case_count, rows, count, repeats, 0);
    if (!o->markdown)
        return 0;
    FILE *f = fopen(o->markdown, "w");
    if (f)
        markdown(f, gpu, cases, case_count, rows, count, repeats, 1);
    if (!f || fclose(f) != 0) {
        fprintf(stderr, "bench_compact: could not write %s\n", o->markdown);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- --from-csv */

/* The case that a CSV row names (call, key_type, value_type, shape: its first four fields), or
 * -1. */
static int find_case(const bench_case *cases, int case_count, char *const *field)
{
    for (int k = 0; k < case_count; ++k) {
        const bench_case *c = &cases[k];
        if (strcmp(field[0], call_names[c->call]) == 0 &&
            strcmp(field[1], test_type_name(c->key_type)) == 0 &&
            strcmp(field[2], values_name(c)) == 0 &&
            strcmp(field[3], shapes[c->shape].name) == 0)
            return k;
    }
    return -1;
}

/* Reads the rows of bench_compact CSVs (files: a comma-separated list) into rows. The first
 * file gives the provenance (its '#' lines, to which the others' "# dlscan:" lines are
 * added), the GPU's name and the repeats. Returns the row count, or -1. */
static int read_csvs(char *files, row *rows, const bench_case *cases, int case_count,
                     char *provenance, size_t provenance_size, char *gpu, size_t gpu_size,
                     int *repeats)
{
    int count = 0, file_count = 0;
    char *rest = NULL;
    provenance[0] = '\0';
    snprintf(gpu, gpu_size, "unknown GPU");
    for (char *path = strtok_r(files, ",", &rest); path; path = strtok_r(NULL, ",", &rest)) {
        FILE *f = fopen(path, "r");
        if (!f) {
            fprintf(stderr, "bench_compact: cannot read %s\n", path);
            return -1;
        }
        char line[1024];
        for (int number = 1; fgets(line, sizeof line, f); ++number) {
            if (line[0] == '#') {
                const size_t used = strlen(provenance);
                /* The first file's lines but those print_csv_header writes again; the others'
                 * "# dlscan:" lines (commit, date) where they differ. */
                const int described = strncmp(line, "# variant", 9) == 0 ||
                                      strncmp(line, "# shape", 7) == 0 ||
                                      strncmp(line, "# check", 7) == 0;
                const int kept = file_count == 0 ? !described
                                                 : strncmp(line, "# dlscan:", 9) == 0 &&
                                                       !strstr(provenance, line);
                if (kept && used + strlen(line) < provenance_size)
                    strcat(provenance, line);
                if (file_count == 0 && strncmp(line, "# gpu: ", 7) == 0) {
                    size_t end = strcspn(line + 7, "(\n"); /* the name, before " (132 SMs..." */
                    while (end > 0 && line[7 + end - 1] == ' ')
                        --end;
                    snprintf(gpu, gpu_size, "%.*s", (int)end, line + 7);
                }
                if (file_count == 0 && strncmp(line, "# repeats: ", 11) == 0)
                    *repeats = atoi(line + 11);
                continue;
            }
            if (strncmp(line, "call,", 5) == 0)
                continue;
            char *field[15], *cursor = NULL;
            int fields = 0;
            for (char *t = strtok_r(line, ",\n", &cursor); t && fields < 15;
                 t = strtok_r(NULL, ",\n", &cursor))
                field[fields++] = t;
            const int k = fields == 15 ? find_case(cases, case_count, field) : -1;
            const int v = fields == 15 ? bench_find_name(field[6], variant_names, VARIANTS) : -1;
            const size_t n = fields == 15 ? strtoull(field[4], NULL, 10) : 0;
            int log = 0;
            while (log < 63 && ((size_t)1 << log) < n)
                ++log;
            if (k < 0 || v < 0 || n != (size_t)1 << log || count == MAX_CASES * MAX_SIZES) {
                fprintf(stderr, "bench_compact: %s:%d: not a bench_compact row\n", path, number);
                fclose(f);
                return -1;
            }
            row *r = find_row(rows, &count, k, log);
            r->count = strtoull(field[5], NULL, 10);
            r->floor_bytes = strtoull(field[8], NULL, 10);
            r->wrong[v] = strcmp(field[7], "wrong") == 0;
            r->valid[v] = !r->wrong[v];
            r->us[v] = strtod(field[9], NULL);
            r->latency_us[v] = strtod(field[13], NULL);
            r->host_us[v] = strtod(field[14], NULL);
        }
        fclose(f);
        ++file_count;
    }
    return count;
}

/* ---------------------------------------------------------------- the calls */

/* The device's buffers, allocated once at the largest size. */
typedef struct device_buffers {
    void *in, *values, *out, *out2, *cub_temp;
    unsigned char *flags;
    size_t *count;
    char *copy; /* the floor's source and destination */
    size_t cub_temp_bytes;
} device_buffers;

/* What one case's calls use: a bench_run_fn's context (timing.h). */
typedef struct case_calls {
    const bench_case *c;
    dlscan_handle_t h;
    const device_buffers *d;
    uint64_t operand_bits; /* select_if's operand, as the items' type */
    long long threshold;   /* the same, for CUB */
    size_t copy_bytes;     /* the floor: copy_bytes from d->copy to the next 256-byte boundary on */
} case_calls;

static int run_variant(const void *context, int v, size_t n, cudaStream_t stream)
{
    const case_calls *k = context;
    const bench_case *c = k->c;
    const device_buffers *d = k->d;
    if (v == FLOOR) /* to a 256-byte aligned destination, as memcpy's fastest path wants */
        return (int)cudaMemcpyAsync(d->copy + (k->copy_bytes + 255) / 256 * 256, d->copy, k->copy_bytes,
                                    cudaMemcpyDeviceToDevice, stream);
    if (v == CUB) {
        size_t bytes = d->cub_temp_bytes;
        return bench_cub_compact((int)c->call, c->key_type, c->value_type, d->cub_temp, &bytes,
                                 d->in, d->flags, d->values, d->out, d->out2, d->count, n,
                                 k->threshold, stream);
    }
    dlscan_status status = DLSCAN_SUCCESS;
    switch (c->call) {
    case COMPACT_SELECT_FLAGGED:
        status =
            dlscan_select_flagged(k->h, d->in, d->flags, d->out, d->count, n, c->key_type, stream);
        break;
    case COMPACT_SELECT_IF:
        status = dlscan_select_if(k->h, d->in, d->out, d->count, n, c->key_type, DLSCAN_LESS,
                                  &k->operand_bits, stream);
        break;
    case COMPACT_UNIQUE:
        status = dlscan_unique(k->h, d->in, d->out, d->count, n, c->key_type, stream);
        break;
    case COMPACT_RUN_LENGTH:
        status = dlscan_run_length_encode(k->h, d->in, d->out, d->out2, d->count, n, c->key_type,
                                          stream);
        break;
    case COMPACT_REDUCE_BY_KEY:
        status = dlscan_reduce_by_key(k->h, d->in, d->values, d->out, d->out2, d->count, n,
                                      c->key_type, c->value_type, DLSCAN_SUM, stream);
        break;
    }
    if (status != DLSCAN_SUCCESS)
        fprintf(stderr, "bench_compact: dlscan: %s: %s\n", dlscan_status_string(status),
                dlscan_last_error(k->h));
    return status == DLSCAN_SUCCESS ? 0 : (int)cudaErrorUnknown;
}

/* ---------------------------------------------------------------- the check */

/* The host's copies: inputs, the reference's outputs and a variant's. */
typedef struct host_buffers {
    char *in, *values, *want, *want2, *got, *got2;
    unsigned char *flags;
} host_buffers;

/* Whether the item after the first `count` of `size` bytes at device address d is still
 * poisoned (or there is none: count == n). */
static int poisoned_after(const void *d, size_t count, size_t n, size_t size)
{
    unsigned char after[8];
    if (count >= n)
        return 1;
    CUDA_CHECK(cudaMemcpy(after, (const char *)d + count * size, size, cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < size; ++b)
        if (after[b] != TEST_POISON_BYTE)
            return 0;
    return 1;
}

enum check { CHECK_RIGHT, CHECK_WRONG, CHECK_REFUSED };

/* Runs variant v once into poisoned outputs and compares the count and the outputs with the
 * reference's (want_count items in h->want, h->want2). Says on stderr what differs. */
static enum check check_variant(const case_calls *k, int v, size_t n, const host_buffers *h,
                                size_t want_count, const char *what, cudaStream_t stream)
{
    const device_buffers *d = k->d;
    const size_t size = test_type_size(k->c->key_type), size2 = second_size(k->c);
    CUDA_CHECK(cudaMemsetAsync(d->out, TEST_POISON_BYTE, n * size, stream));
    if (size2)
        CUDA_CHECK(cudaMemsetAsync(d->out2, TEST_POISON_BYTE, n * size2, stream));
    CUDA_CHECK(cudaMemsetAsync(d->count, TEST_POISON_BYTE, sizeof(size_t), stream));
    const int error = run_variant(k, v, n, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (error) {
        fprintf(stderr, "bench_compact: %s, %s: the call failed: %s\n", variant_names[v], what,
                cudaGetErrorString((cudaError_t)error));
        (void)cudaGetLastError();
        return CHECK_REFUSED;
    }
    size_t count = 0;
    CUDA_CHECK(cudaMemcpy(&count, d->count, sizeof count, cudaMemcpyDeviceToHost));
    if (count != want_count) {
        fprintf(stderr, "bench_compact: WRONG: %s, %s: count %zu, want %zu\n", variant_names[v],
                what, count, want_count);
        return CHECK_WRONG;
    }
    CUDA_CHECK(cudaMemcpy(h->got, d->out, count * size, cudaMemcpyDeviceToHost));
    size_t wrong = bench_first_difference(h->got, h->want, count, size);
    const char *which = "item";
    if (wrong == count && size2) {
        CUDA_CHECK(cudaMemcpy(h->got2, d->out2, count * size2, cudaMemcpyDeviceToHost));
        wrong = bench_first_difference(h->got2, h->want2, count, size2);
        which = k->c->call == COMPACT_RUN_LENGTH ? "run length" : "run sum";
    }
    if (wrong < count) {
        fprintf(stderr, "bench_compact: WRONG: %s, %s: %s %zu of %zu is not the reference's\n",
                variant_names[v], what, which, wrong, count);
        return CHECK_WRONG;
    }
    if (!poisoned_after(d->out, count, n, size) ||
        (size2 && !poisoned_after(d->out2, count, n, size2))) {
        fprintf(stderr, "bench_compact: WRONG: %s, %s: wrote past its %zu outputs\n",
                variant_names[v], what, count);
        return CHECK_WRONG;
    }
    return CHECK_RIGHT;
}

/* The median of LATENCY_SAMPLES single calls of variant v, each enqueued once the stream has
 * drained, between two events (us); NaN if a call fails. */
static double latency_us(const bench_timer *t, const case_calls *k, int v, size_t n)
{
    double samples[LATENCY_SAMPLES];
    for (int s = 0; s < LATENCY_SAMPLES; ++s) {
        float ms = 0;
        CUDA_CHECK(cudaStreamSynchronize(t->stream));
        CUDA_CHECK(cudaEventRecord(t->start, t->stream));
        if (run_variant(k, v, n, t->stream) != 0)
            return NAN;
        CUDA_CHECK(cudaEventRecord(t->stop, t->stream));
        CUDA_CHECK(cudaEventSynchronize(t->stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms, t->start, t->stop));
        samples[s] = 1000.0 * ms;
    }
    return bench_median(samples, LATENCY_SAMPLES);
}

/* ---------------------------------------------------------------- memory */

/* What the selected cases need at n items: each buffer at its largest over them (bytes). */
typedef struct footprint {
    size_t in, values, flags, out, out2, copy, cub_temp;
} footprint;

static footprint footprint_at(const bench_case *cases, const int *selected, int case_count,
                              size_t n, int have_cub)
{
    footprint f = {0};
#define GROW(field, bytes) f.field = (bytes) > f.field ? (bytes) : f.field
    for (int k = 0; k < case_count; ++k) {
        if (!selected[k])
            continue;
        const bench_case *c = &cases[k];
        const size_t s = test_type_size(c->key_type);
        GROW(in, n * s);
        GROW(out, n * s);
        GROW(out2, n * second_size(c));
        GROW(copy, floor_bytes(c, n, n) + 256); /* every item kept: the most */
        if (c->call == COMPACT_SELECT_FLAGGED)
            GROW(flags, n);
        if (c->call == COMPACT_REDUCE_BY_KEY)
            GROW(values, n * test_type_size(c->value_type));
        size_t temp = 0;
        if (have_cub && bench_cub_compact((int)c->call, c->key_type, c->value_type, NULL, &temp,
                                          NULL, NULL, NULL, NULL, NULL, NULL, n, 0, 0) == 0)
            GROW(cub_temp, temp);
    }
#undef GROW
    return f;
}

/* The device's bytes at footprint f for n items, with a margin for dlscan's own storage. */
static size_t device_total(const footprint *f, size_t n)
{
    return f->in + f->values + f->flags + f->out + f->out2 + f->copy + f->cub_temp + n / 16 +
           ((size_t)64 << 20);
}

/* ---------------------------------------------------------------- the sweep */

/* What every case of a run shares. */
typedef struct sweep {
    const options *o;
    const bench_timer *t;
    const int *logs; /* the sizes, as powers of two */
    int size_count, have_cub;
    size_t max_n;
    dlscan_handle_t handle;
    host_buffers h;
    device_buffers d;
    FILE *csv; /* or NULL */
    row *rows; /* MAX_CASES * MAX_SIZES */
    int row_count;
    uint64_t rng;
} sweep;

/* The progress line of row r. */
static void print_progress(const row *r)
{
    printf("2^%-4d %10zu", r->log, r->count);
    for (int v = 0; v < VARIANTS; ++v)
        if (!r->valid[v])
            printf(" %*s", v == FLOOR ? 10 : 16, r->wrong[v] ? "WRONG" : "-");
        else if (v == FLOOR)
            printf(" %10.2f", r->us[v]);
        else
            printf(" %8.2f (%5.3f)", r->us[v], r->us[FLOOR] / r->us[v]);
    if (r->valid[DLSCAN] && r->valid[CUB])
        printf(" %8.3f", r->us[CUB] / r->us[DLSCAN]);
    else
        printf(" %8s", "-");
    for (int v = DLSCAN; v <= CUB; ++v)
        if (r->valid[v])
            printf(" %10.2f", r->latency_us[v]);
        else
            printf(" %10s", "-");
    printf("\n");
    fflush(stdout);
}

/* Case k (of cases) at every size: inputs drawn and uploaded once, then per size the reference,
 * the check and the timing. Returns how many checks or timings failed. */
static int run_case(sweep *s, const bench_case *cases, int k)
{
    const bench_case *c = &cases[k];
    const host_buffers *h = &s->h;
    const device_buffers *d = &s->d;
    const double started = bench_host_seconds();
    const size_t size = test_type_size(c->key_type), vsize = test_type_size(c->value_type);
    const compact_pattern pattern = shapes[c->shape].pattern;
    compact_case cc = {c->call, c->key_type, c->value_type, DLSCAN_SUM, DLSCAN_LESS, pattern,
                       4096, s->max_n, 0};
    case_calls calls = {.c = c, .h = s->handle, .d = d};
    compact_make_inputs(&cc, h->in, h->flags, h->values, &calls.operand_bits, &s->rng);
    /* select_if's operand: a whole number in [0, 1000] in the items' type (little-endian) */
    calls.threshold = (long long)(size == 4 ? (uint32_t)calls.operand_bits : calls.operand_bits);
    CUDA_CHECK(cudaMemcpy(d->in, h->in, s->max_n * size, cudaMemcpyHostToDevice));
    if (c->call == COMPACT_SELECT_FLAGGED)
        CUDA_CHECK(cudaMemcpy(d->flags, h->flags, s->max_n, cudaMemcpyHostToDevice));
    if (c->call == COMPACT_REDUCE_BY_KEY)
        CUDA_CHECK(cudaMemcpy(d->values, h->values, s->max_n * vsize, cudaMemcpyHostToDevice));
    char types[64], what[160];
    snprintf(what, sizeof what, "%s, %s %s, %s", call_names[c->call],
             types_label(c, types, sizeof types),
             c->call == COMPACT_REDUCE_BY_KEY ? "keys / values" : "items", shapes[c->shape].label);
    printf("\n%s: us per call (fraction of the floor), median of %d; latency: one call\n", what,
           s->o->repeats);
    printf("%-6s %10s %10s %16s %16s %8s %10s %10s\n", "n",
           c->call <= COMPACT_SELECT_IF ? "kept" : "runs", "floor", "dlscan", "cub", "dl / cub",
           "dl lat", "cub lat");
    int failed = 0;
    for (int j = 0; j < s->size_count; ++j) {
        const size_t n = (size_t)1 << s->logs[j];
        cc.n = n;
        row *r = find_row(s->rows, &s->row_count, k, s->logs[j]);
        r->count = compact_reference(&cc, h->in, h->flags, h->values, &calls.operand_bits, h->want,
                                     h->want2);
        r->floor_bytes = floor_bytes(c, n, r->count);
        calls.copy_bytes = r->floor_bytes / 2;
        char where[200];
        snprintf(where, sizeof where, "%s, n = 2^%d", what, s->logs[j]);
        r->valid[FLOOR] = 1;
        for (int v = DLSCAN; v <= CUB; ++v) {
            if (v == CUB && !s->have_cub)
                continue;
            const enum check outcome =
                check_variant(&calls, v, n, h, r->count, where, s->t->stream);
            r->valid[v] = outcome == CHECK_RIGHT;
            r->wrong[v] = outcome == CHECK_WRONG;
            /* CUB's Encode refuses 2^31 items and more (it counts in an int) */
            failed += outcome == CHECK_WRONG ||
                      (outcome == CHECK_REFUSED && !(v == CUB && n >= ((size_t)1 << 31)));
        }
        failed += bench_time_variants(s->t, run_variant, &calls, n, VARIANTS, s->o->repeats,
                                      "bench_compact", variant_names, r->valid, r->us, r->host_us);
        for (int v = 0; v < VARIANTS; ++v)
            if (r->valid[v])
                r->latency_us[v] = latency_us(s->t, &calls, v, n);
        print_progress(r);
        if (s->csv) {
            print_csv_rows(s->csv, c, r);
            fflush(s->csv);
        }
    }
    printf("# %.1f s\n", bench_host_seconds() - started);
    return failed;
}

static int measure(const options *o, const struct cudaDeviceProp *prop, const bench_timer *t)
{
    static row rows[MAX_CASES * MAX_SIZES];
    bench_case cases[MAX_CASES];
    const int case_count = all_cases(cases);
    int selected[MAX_CASES] = {0}, logs[MAX_SIZES];
    for (int k = 0; k < case_count; ++k)
        selected[k] = o->calls[cases[k].call] && (!o->quick || cases[k].half);
    sweep s = {.o = o, .t = t, .logs = logs, .rows = rows};
    s.size_count = make_sizes(o, logs);
    if (s.size_count == 0)
        usage();
    char provenance[1024], operation[160];
    snprintf(operation, sizeof operation, "stream compaction against its floor and CUB%s",
             o->quick ? " (--quick)" : "");
    bench_provenance(provenance, sizeof provenance - 32, prop, operation);
    snprintf(provenance + strlen(provenance), 32, "# repeats: %d\n", o->repeats);
    fputs(provenance, stdout);
    /* The CSV is written row by row: a run cut short keeps the rows it measured. */
    s.csv = o->csv ? fopen(o->csv, "w") : NULL;
    if (o->csv && !s.csv) {
        fprintf(stderr, "bench_compact: cannot write %s\n", o->csv);
        return 1;
    }
    if (s.csv)
        print_csv_header(s.csv, provenance);

    /* The largest size whose buffers the GPU's free memory holds. */
    s.have_cub = bench_cub_variant() != NULL;
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    while (s.size_count > 0) {
        const size_t n = (size_t)1 << logs[s.size_count - 1];
        const footprint f = footprint_at(cases, selected, case_count, n, s.have_cub);
        if (device_total(&f, n) <= free_bytes / 20 * 19)
            break;
        printf("# 2^%d skipped: its buffers take %.1f GB, the GPU has %.1f GB free\n",
               logs[s.size_count - 1], device_total(&f, n) / 1e9, free_bytes / 1e9);
        --s.size_count;
    }
    if (s.size_count == 0) {
        fprintf(stderr, "bench_compact: no size fits in the GPU's free memory\n");
        return 1;
    }
    s.max_n = (size_t)1 << logs[s.size_count - 1];
    const footprint f = footprint_at(cases, selected, case_count, s.max_n, s.have_cub);
    host_buffers *h = &s.h;
    device_buffers *d = &s.d;
    h->in = malloc(f.in), h->values = malloc(f.values + 1), h->flags = malloc(f.flags + 1);
    h->want = malloc(f.out), h->got = malloc(f.out);
    h->want2 = malloc(f.out2 + 1), h->got2 = malloc(f.out2 + 1);
    if (!h->in || !h->values || !h->flags || !h->want || !h->got || !h->want2 || !h->got2) {
        fprintf(stderr, "bench_compact: host allocation failed at 2^%d items\n",
                logs[s.size_count - 1]);
        return 1;
    }
    CUDA_CHECK(cudaMalloc(&d->in, f.in));
    CUDA_CHECK(cudaMalloc(&d->out, f.out));
    CUDA_CHECK(cudaMalloc(&d->values, f.values + 1));
    CUDA_CHECK(cudaMalloc((void **)&d->flags, f.flags + 1));
    CUDA_CHECK(cudaMalloc(&d->out2, f.out2 + 1));
    CUDA_CHECK(cudaMalloc((void **)&d->count, sizeof(size_t)));
    CUDA_CHECK(cudaMalloc((void **)&d->copy, f.copy));
    CUDA_CHECK(cudaMalloc(&d->cub_temp, f.cub_temp + 1));
    d->cub_temp_bytes = f.cub_temp;
    if (dlscan_create(&s.handle) != DLSCAN_SUCCESS) {
        fprintf(stderr, "bench_compact: dlscan_create failed: %s\n", dlscan_last_error(s.handle));
        return 1;
    }
    s.rng = 0xc0ffee00u + (uint64_t)time(NULL);

    int failed = 0;
    for (int k = 0; k < case_count; ++k)
        if (selected[k])
            failed += run_case(&s, cases, k);
    if (s.csv && fclose(s.csv) != 0) {
        fprintf(stderr, "bench_compact: could not write %s\n", o->csv);
        ++failed;
    }
    failed += write_markdown(o, prop->name, cases, case_count, rows, s.row_count, o->repeats);
    dlscan_destroy(s.handle);
    cudaFree(d->in), cudaFree(d->out), cudaFree(d->values), cudaFree(d->flags);
    cudaFree(d->out2), cudaFree(d->count), cudaFree(d->copy), cudaFree(d->cub_temp);
    free(h->in), free(h->values), free(h->flags);
    free(h->want), free(h->got), free(h->want2), free(h->got2);
    if (failed)
        fprintf(stderr, "bench_compact: %d checks or timings failed (see above)\n", failed);
    return failed ? 1 : 0;
}

/* --from-csv: the rows of earlier runs, written again as one CSV and one markdown. */
static int merge(const options *o)
{
    bench_case cases[MAX_CASES];
    const int case_count = all_cases(cases);
    static row rows[MAX_CASES * MAX_SIZES];
    char provenance[4096], gpu[256];
    int repeats = 0;
    const int count = read_csvs(o->from_csv, rows, cases, case_count, provenance, sizeof provenance,
                                gpu, sizeof gpu, &repeats);
    if (count < 0)
        return 1;
    if (o->csv) {
        FILE *csv = fopen(o->csv, "w");
        if (csv) {
            print_csv_header(csv, provenance);
            for (int k = 0; k < case_count; ++k)
                for (int i = 0; i < count; ++i)
                    if (rows[i].case_index == k)
                        print_csv_rows(csv, &cases[k], &rows[i]);
        }
        if (!csv || fclose(csv) != 0) {
            fprintf(stderr, "bench_compact: could not write %s\n", o->csv);
            return 1;
        }
    }
    return write_markdown(o, gpu, cases, case_count, rows, count, repeats);
}

int main(int argc, char **argv)
{
    const options o = parse_options(argc, argv);
    if (o.from_csv)
        return merge(&o);
    int device = 0;
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    bench_timer t;
    bench_timer_create(&t);
    const int status = measure(&o, &prop, &t);
    bench_timer_destroy(&t);
    return status;
}
