/*
 * cpu_sweep.c: the CPU benchmark sweep (cpu_sweep.h): dlscan's CPU backend, a plain
 * sequential loop and memcpy, on the same machine and the same data.
 *
 * Variants:
 *   memcpy      memcpy(out, in, bytes): the ceiling, since a single-pass scan moves the
 *               same bytes (reads each item once, writes it once: 2 n sizeof(item));
 *   sequential  one thread, one loop: acc = acc op in[i], out[i] = acc;
 *   dlscan      dlscan_inclusive_scan / dlscan_exclusive_scan on a CPU handle: the GPU's
 *               single-pass look-back protocol on `threads` threads.
 *
 * Method (per type and size):
 *   1. validate: dlscan's output against the sequential loop's, exactly for integers and
 *      for min and max; float sums against a long double reference, within the bound that
 *      dlscan.h states for DLSCAN_OPTION_DETERMINISTIC. A wrong result stops the sweep;
 *   2. time each variant: one warm-up call, then `repeats` samples of enough back-to-back
 *      calls for about 20 ms each; the median per-call time gives items per second;
 *   3. report dlscan / sequential. Sizes whose input and output fit in the last-level
 *      cache together are marked: they measure the cache, not memory.
 */
#define _POSIX_C_SOURCE 200809L
#include "cpu_sweep.h"
#include "stats.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { VARIANT_MEMCPY, VARIANT_SEQUENTIAL, VARIANT_DLSCAN, VARIANT_COUNT };
static const char *const variant_names[VARIANT_COUNT] = {"memcpy", "sequential", "dlscan"};
static const char *const type_names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
static const char *const op_names[] = {"sum", "min", "max"};

#define SAMPLE_SECONDS 0.02 /* back-to-back calls per sample: about this long */

/* ---------------------------------------------------------------- options */

void cpu_sweep_default_options(cpu_sweep_options *o)
{
    const cpu_sweep_options defaults = {
        {DLSCAN_INT32, DLSCAN_FLOAT32, DLSCAN_INT64, DLSCAN_FLOAT64}, 4, DLSCAN_SUM, 0, 16, 26,
        5, 0, NULL};
    *o = defaults;
}

/* A whole decimal number in [low, high]. */
static int parse_int(const char *text, long low, long high, long *value)
{
    char *end;
    if (!text || !*text)
        return 0;
    const long v = strtol(text, &end, 10);
    if (*end || v < low || v > high)
        return 0;
    *value = v;
    return 1;
}

static int parse_types(const char *list, cpu_sweep_options *o)
{
    char copy[256];
    if (strlen(list) >= sizeof copy)
        return 0;
    strcpy(copy, list);
    o->type_count = 0;
    for (char *save, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int k = 0; k < 6 && !found; ++k)
            if (strcmp(t, type_names[k]) == 0 && o->type_count < 6)
                o->types[o->type_count++] = (dlscan_type)k, found = 1;
        if (!found)
            return 0;
    }
    return o->type_count > 0;
}

int cpu_sweep_parse_option(cpu_sweep_options *o, int argc, char **argv, int *i, char *error,
                           size_t error_size)
{
    const char *name = argv[*i];
    if (strcmp(name, "--quick") == 0) {
        o->min_log = 16, o->max_log = 22, o->repeats = 3;
        return 1;
    }
    if (strcmp(name, "--exclusive") == 0) {
        o->exclusive = 1;
        return 1;
    }
    static const char *const with_value[] = {"--types", "--op",      "--min-log", "--max-log",
                                             "--repeats", "--threads", "--csv"};
    int known = 0;
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; ++k)
        known |= strcmp(name, with_value[k]) == 0;
    if (!known)
        return 0;
    if (*i + 1 >= argc) {
        snprintf(error, error_size, "%s needs a value", name);
        return -1;
    }
    const char *value = argv[++*i];
    long number = 0;
    int good = 1;
    if (strcmp(name, "--types") == 0) {
        good = parse_types(value, o);
    } else if (strcmp(name, "--op") == 0) {
        good = 0;
        for (int k = 0; k < 3; ++k)
            if (strcmp(value, op_names[k]) == 0)
                o->op = (dlscan_op)k, good = 1;
    } else if (strcmp(name, "--min-log") == 0) {
        good = parse_int(value, 0, 34, &number), o->min_log = (int)number;
    } else if (strcmp(name, "--max-log") == 0) {
        good = parse_int(value, 0, 34, &number), o->max_log = (int)number;
    } else if (strcmp(name, "--repeats") == 0) {
        good = parse_int(value, 1, 101, &number), o->repeats = (int)number;
    } else if (strcmp(name, "--threads") == 0) {
        good = parse_int(value, 0, 4096, &number), o->threads = (int)number;
    } else {
        o->csv = value;
    }
    if (!good) {
        const char *expected = strcmp(name, "--types") == 0 ? "a comma-separated list of "
                                                             "int32, uint32, int64, uint64, "
                                                             "float32, float64"
                               : strcmp(name, "--op") == 0      ? "sum, min or max"
                               : strcmp(name, "--repeats") == 0 ? "a number from 1 to 101"
                               : strcmp(name, "--threads") == 0 ? "a number from 0 to 4096"
                                                                : "a number from 0 to 34";
        snprintf(error, error_size, "%s takes %s, not '%s'", name, expected, value);
        return -1;
    }
    return 1;
}

int cpu_sweep_check_options(const cpu_sweep_options *o, char *error, size_t error_size)
{
    if (o->min_log > o->max_log) {
        snprintf(error, error_size, "--min-log %d is larger than --max-log %d", o->min_log,
                 o->max_log);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the sequential loop */

static size_t type_size(dlscan_type type)
{
    return type == DLSCAN_INT32 || type == DLSCAN_UINT32 || type == DLSCAN_FLOAT32 ? 4 : 8;
}

#define ADD(a, b) ((a) + (b))
#define MIN(a, b) ((b) < (a) ? (b) : (a)) /* dlscan.h's min and max, a the earlier item */
#define MAX(a, b) ((a) < (b) ? (b) : (a))

/* Starts from the operator's identity (dlscan.h); integer sums wrap (unsigned T). */
#define SEQUENTIAL_LOOP(T, COMBINE, IDENTITY)                                                     \
    do {                                                                                          \
        const T *x = in;                                                                          \
        T *y = out, acc = (IDENTITY);                                                             \
        if (exclusive)                                                                            \
            for (size_t i = 0; i < n; ++i) {                                                      \
                const T v = x[i];                                                                 \
                y[i] = acc;                                                                       \
                acc = COMBINE(acc, v);                                                            \
            }                                                                                     \
        else                                                                                      \
            for (size_t i = 0; i < n; ++i) {                                                      \
                acc = COMBINE(acc, x[i]);                                                         \
                y[i] = acc;                                                                       \
            }                                                                                     \
    } while (0)

#define SEQUENTIAL_FOR_OP(T, SUM_T, LOWEST, HIGHEST)                                              \
    switch (op) {                                                                                 \
    case DLSCAN_SUM: SEQUENTIAL_LOOP(SUM_T, ADD, 0); break;                                       \
    case DLSCAN_MIN: SEQUENTIAL_LOOP(T, MIN, HIGHEST); break;                                     \
    case DLSCAN_MAX: SEQUENTIAL_LOOP(T, MAX, LOWEST); break;                                      \
    }

static void sequential_scan(dlscan_type type, dlscan_op op, int exclusive, const void *in,
                            void *out, size_t n)
{
    switch (type) {
    case DLSCAN_INT32: SEQUENTIAL_FOR_OP(int32_t, uint32_t, INT32_MIN, INT32_MAX); break;
    case DLSCAN_UINT32: SEQUENTIAL_FOR_OP(uint32_t, uint32_t, 0, UINT32_MAX); break;
    case DLSCAN_INT64: SEQUENTIAL_FOR_OP(int64_t, uint64_t, INT64_MIN, INT64_MAX); break;
    case DLSCAN_UINT64: SEQUENTIAL_FOR_OP(uint64_t, uint64_t, 0, UINT64_MAX); break;
    case DLSCAN_FLOAT32: SEQUENTIAL_FOR_OP(float, float, -INFINITY, INFINITY); break;
    case DLSCAN_FLOAT64: SEQUENTIAL_FOR_OP(double, double, -INFINITY, INFINITY); break;
    default: break; /* the sweep's types are the six above */
    }
}

/* ---------------------------------------------------------------- data and validation */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Integers: uniform over all bits. Floats: uniform in [-1, 1]. */
static void fill_random(dlscan_type type, void *values, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = splitmix64(&seed);
        const double real = (double)(r >> 11) / 4503599627370496.0 - 1.0; /* 2^52 */
        switch (type) {
        case DLSCAN_INT32:
        case DLSCAN_UINT32: ((uint32_t *)values)[i] = (uint32_t)r; break;
        case DLSCAN_INT64:
        case DLSCAN_UINT64: ((uint64_t *)values)[i] = r; break;
        case DLSCAN_FLOAT32: ((float *)values)[i] = (float)real; break;
        case DLSCAN_FLOAT64: ((double *)values)[i] = real; break;
        default: break; /* the sweep's types are the six above */
        }
    }
}

static double float_item(dlscan_type type, const void *values, size_t i)
{
    return type == DLSCAN_FLOAT32 ? (double)((const float *)values)[i] : ((const double *)values)[i];
}

/* Is dlscan's output `got` right? `sequential` is the loop's output for the same input.
 * Float sums are checked against a long double fold with the bound of dlscan.h:
 * (log2(tile) + tiles before the item + 2) * epsilon * (sum of |x| up to the item). */
static int validate(const cpu_sweep_options *o, dlscan_type type, size_t tile, const void *in,
                    const void *sequential, const void *got, size_t n, char *error,
                    size_t error_size)
{
    const size_t size = type_size(type);
    const int float_sum = o->op == DLSCAN_SUM && (type == DLSCAN_FLOAT32 || type == DLSCAN_FLOAT64);
    if (!float_sum) {
        for (size_t i = 0; i < n; ++i)
            if (memcmp((const char *)got + i * size, (const char *)sequential + i * size, size)) {
                snprintf(error, error_size,
                         "dlscan's %s %s differs from the sequential loop at item %zu of %zu",
                         type_names[type], op_names[o->op], i, n);
                return 0;
            }
        return 1;
    }
    const double epsilon = type == DLSCAN_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    double log2_tile = 0;
    while (((size_t)1 << (int)log2_tile) < tile)
        ++log2_tile;
    long double sum = 0, magnitude = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!o->exclusive)
            sum += float_item(type, in, i), magnitude += fabs(float_item(type, in, i));
        const double bound = (log2_tile + (double)(i / tile) + 2) * epsilon * (double)magnitude;
        const double value = float_item(type, got, i);
        if (!(fabs(value - (double)sum) <= bound)) {
            snprintf(error, error_size,
                     "dlscan's %s sum at item %zu of %zu is %.17g; the reference is %.17g "
                     "(bound %.3g)",
                     type_names[type], i, n, value, (double)sum, bound);
            return 0;
        }
        if (o->exclusive)
            sum += float_item(type, in, i), magnitude += fabs(float_item(type, in, i));
    }
    return 1;
}

/* ---------------------------------------------------------------- timing */

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct sweep_case {
    dlscan_handle_t h;
    dlscan_type type;
    dlscan_op op;
    int exclusive;
    const void *in;
    void *out;
    size_t n;
} sweep_case;

static dlscan_status run_variant(const sweep_case *c, int variant)
{
    switch (variant) {
    case VARIANT_MEMCPY: memcpy(c->out, c->in, c->n * type_size(c->type)); return DLSCAN_SUCCESS;
    case VARIANT_SEQUENTIAL:
        sequential_scan(c->type, c->op, c->exclusive, c->in, c->out, c->n);
        return DLSCAN_SUCCESS;
    default:
        return c->exclusive
                   ? dlscan_exclusive_scan(c->h, c->in, c->out, c->n, c->type, c->op, NULL, NULL)
                   : dlscan_inclusive_scan(c->h, c->in, c->out, c->n, c->type, c->op, NULL);
    }
}


/* The median seconds per call, or a negative number if a dlscan call failed. */
static double time_variant(const sweep_case *c, int variant, int repeats)
{
    double start = seconds_now();
    if (run_variant(c, variant) != DLSCAN_SUCCESS) /* warm-up */
        return -1;
    const double first = seconds_now() - start;
    long calls = first > 0 ? (long)(SAMPLE_SECONDS / first) : 1000;
    calls = calls < 1 ? 1 : calls > 100000 ? 100000 : calls;
    double samples[101];
    for (int r = 0; r < repeats; ++r) {
        start = seconds_now();
        for (long k = 0; k < calls; ++k)
            if (run_variant(c, variant) != DLSCAN_SUCCESS)
                return -1;
        samples[r] = (seconds_now() - start) / (double)calls;
    }
    qsort(samples, (size_t)repeats, sizeof samples[0], bench_compare_doubles);
    return repeats % 2 ? samples[repeats / 2] : 0.5 * (samples[repeats / 2 - 1] + samples[repeats / 2]);
}

/* ---------------------------------------------------------------- the machine */

static void cpu_model(char *name, size_t name_size)
{
    snprintf(name, name_size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            const char *value = strchr(line, ':') + 1;
            while (*value == ' ' || *value == '\t')
                ++value;
            snprintf(name, name_size, "%.*s", (int)strcspn(value, "\n"), value);
            break;
        }
    fclose(f);
}

/* The last-level cache in bytes, or 0 where the system does not say. */
static long last_level_cache_bytes(void)
{
    long bytes = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
    bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    if (bytes <= 0)
        bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return bytes > 0 ? bytes : 0;
}

/* ---------------------------------------------------------------- the sweep */

typedef struct type_summary {
    double worst_large_ratio; /* smallest dlscan / sequential at 2^24 and up; 0: none measured */
    double best_large_ratio;
} type_summary;

/* One type: every size, every variant. Returns 0 or 2. */
static int sweep_type(const cpu_sweep_options *o, dlscan_handle_t h, dlscan_type type,
                      long cache_bytes, FILE *table, FILE *csv, type_summary *summary,
                      char *error, size_t error_size)
{
    const size_t size = type_size(type), max_n = (size_t)1 << o->max_log;
    size_t tile = 0;
    dlscan_tile_items(h, type, &tile);
    void *in = malloc(max_n * size), *out = malloc(max_n * size), *sequential = malloc(max_n * size);
    int result = 0;
    if (!in || !out || !sequential) {
        snprintf(error, error_size, "out of memory: 3 buffers of %zu bytes", max_n * size);
        result = 2;
        goto done;
    }
    if (dlscan_reserve(h, max_n, type) != DLSCAN_SUCCESS) {
        snprintf(error, error_size, "dlscan_reserve: %s", dlscan_last_error(h));
        result = 2;
        goto done;
    }
    fill_random(type, in, max_n, 0x5eedull + (uint64_t)type);

    fprintf(table, "\n%s %s, %s: billions of items per second (median of %d)\n", type_names[type],
            op_names[o->op], o->exclusive ? "exclusive" : "inclusive", o->repeats);
    fprintf(table, "%-8s %-4s %11s %11s %11s %11s\n", "n", "LLC", "memcpy", "sequential", "dlscan",
            "dlscan/seq");
    for (int log = o->min_log; log <= o->max_log; ++log) {
        const size_t n = (size_t)1 << log;
        const int in_cache = 2 * n * size <= (size_t)cache_bytes;
        sweep_case c = {h, type, o->op, o->exclusive, in, out, n};
        sequential_scan(type, o->op, o->exclusive, in, sequential, n);
        if (run_variant(&c, VARIANT_DLSCAN) != DLSCAN_SUCCESS) {
            snprintf(error, error_size, "dlscan failed: %s", dlscan_last_error(h));
            result = 2;
            goto done;
        }
        if (!validate(o, type, tile, in, sequential, out, n, error, error_size)) {
            result = 2;
            goto done;
        }
        double per_call[VARIANT_COUNT];
        for (int v = 0; v < VARIANT_COUNT; ++v) {
            c.out = v == VARIANT_SEQUENTIAL ? sequential : out;
            per_call[v] = time_variant(&c, v, o->repeats);
            if (per_call[v] < 0) {
                snprintf(error, error_size, "dlscan failed: %s", dlscan_last_error(h));
                result = 2;
                goto done;
            }
            if (csv)
                fprintf(csv, "%s,%s,%s,%s,%zu,%zu,%d,%.4f,%.6g,%.4f\n", type_names[type],
                        op_names[o->op], o->exclusive ? "exclusive" : "inclusive",
                        variant_names[v], n, 2 * n * size, in_cache, per_call[v] * 1e6,
                        (double)n / per_call[v], per_call[v] * 1e6);
        }
        const double ratio = per_call[VARIANT_SEQUENTIAL] / per_call[VARIANT_DLSCAN];
        fprintf(table, "2^%-6d %-4s %11.3f %11.3f %11.3f %11.2f\n", log, in_cache ? "yes" : "",
                (double)n / per_call[VARIANT_MEMCPY] / 1e9,
                (double)n / per_call[VARIANT_SEQUENTIAL] / 1e9,
                (double)n / per_call[VARIANT_DLSCAN] / 1e9, ratio);
        fflush(table);
        if (log >= 24) {
            if (summary->worst_large_ratio == 0 || ratio < summary->worst_large_ratio)
                summary->worst_large_ratio = ratio;
            if (ratio > summary->best_large_ratio)
                summary->best_large_ratio = ratio;
        }
    }
done:
    free(in);
    free(out);
    free(sequential);
    return result;
}

int cpu_sweep_run(const cpu_sweep_options *o, FILE *table, char *error, size_t error_size)
{
    FILE *csv = NULL;
    if (o->csv && !(csv = fopen(o->csv, "w"))) {
        snprintf(error, error_size, "cannot write %s", o->csv);
        return 1;
    }
    dlscan_handle_t h = NULL;
    if (dlscan_create_cpu(&h, o->threads) != DLSCAN_SUCCESS) {
        snprintf(error, error_size, "dlscan_create_cpu failed");
        if (csv)
            fclose(csv);
        return 2;
    }
    char model[256], when[64];
    cpu_model(model, sizeof model);
    const time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const long cores = sysconf(_SC_NPROCESSORS_ONLN), cache_bytes = last_level_cache_bytes();
    const int version = dlscan_version();
    char header[1024];
    snprintf(header, sizeof header,
             "# cpu: %s (%ld online cores, %ld MB last-level cache)\n"
             "# dlscan: %d.%d.%d, CPU backend on %d threads; date: %s\n# operation: %s %s\n",
             model, cores, cache_bytes >> 20, version / 10000, version / 100 % 100,
             version % 100, o->threads ? o->threads : (int)cores, when,
             o->exclusive ? "exclusive" : "inclusive", op_names[o->op]);
    fputs(header, table);
    if (csv) {
        fputs(header, csv);
        fprintf(csv, "# variant memcpy: memcpy(out, in, bytes), the ceiling\n"
                     "# variant sequential: one thread, one loop\n"
                     "# variant dlscan: dlscan's CPU backend\n"
                     "# fits_in_l2: input and output fit in the last-level cache together; "
                     "latency_us: the same as per_call_us (CPU calls are synchronous)\n"
                     "type,op,kind,variant,n,bytes_moved,fits_in_l2,per_call_us,"
                     "items_per_second,latency_us\n");
    }
    int result = 0;
    type_summary summaries[6] = {{0, 0}};
    for (int t = 0; t < o->type_count && result == 0; ++t)
        result = sweep_type(o, h, o->types[t], cache_bytes, table, csv, &summaries[t], error,
                            error_size);
    if (result == 0 && o->max_log >= 24) {
        fprintf(table, "\ndlscan / sequential loop at 2^24 items and up:\n");
        for (int t = 0; t < o->type_count; ++t)
            fprintf(table, "  %-8s %.2f .. %.2f (%s)\n", type_names[o->types[t]],
                    summaries[t].worst_large_ratio, summaries[t].best_large_ratio,
                    summaries[t].worst_large_ratio >= 1 ? "never loses" : "loses at some size");
    }
    dlscan_destroy(h);
    if (csv && fclose(csv) != 0 && result == 0) {
        snprintf(error, error_size, "writing %s failed", o->csv);
        result = 1;
    }
    return result;
}
