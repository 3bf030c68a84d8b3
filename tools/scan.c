/*
 * scan.c: `dlscan scan`: the prefix scan of a file of raw values or of text, on the GPU or
 * the CPU backend, into a file that is complete or not there at all, or into a pipe as the
 * result is computed (output.c). The output's type (--out-type) may differ from the
 * input's: the library accumulates in it and says which pairs it scans.
 *
 * Files larger than a chunk (by default 256 MiB of the wider type on a GPU, 64 MiB on the
 * CPU; --chunk-items sets it) stream through chunk by chunk, and the library carries the
 * prefix on the device: one value of the output type (--op prod and logsumexp: the user
 * operator's state, dlscan.h), `carry` (device memory for a GPU handle, host memory for a CPU
 * handle), is each chunk's d_total, and every chunk but the first reads its init from it
 * (d_init = d_total = carry):
 *
 *     out[0..n-1] = scan(in[0..n-1]; init = carry)
 *     carry       = carry op in[0] op ... op in[n-1]
 *
 * so no value goes back to the host between chunks. The first chunk's init is --init, else
 * the operator's identity (NULL: the library's, -0.0 for float sums, so that a first item
 * of -0.0 comes out as it is).
 *
 * A float16 or bfloat16 scan into itself runs into float32, where the library accumulates
 * it anyway, and this command rounds each output to the 16-bit type, as the library would:
 * the carry then holds the float32 total, where one of the 16-bit type would be rounded at
 * every chunk edge and the result would depend on the chunk size.
 *
 * Segmented scans (--keys KEYFILE, --offsets OFFSETFILE; segments.c reads them): every
 * segment starts from the seed (--init, or the identity). The library takes no d_init or
 * d_total with segments, so each chunk is split around its segment heads (segments.h) into
 * at most three calls: the end of the segment that the chunk before ended in, a scan
 * without segments from the carry into the carry; the whole segments, one segmented scan;
 * the start of the last segment, a scan without segments from the seed into the carry. A
 * scan without segments is the same with one segment over everything. Chunks keep their
 * size, however long the segments. Items in no segment (before the first offset, from the
 * last one on) are the input converted to the output type (convert_value), as an in-place
 * scan would leave them.
 *
 * Scans along an axis (--axis-length L, --axis-stride S): IN is arrays [outer][L][S], each
 * of its S columns scanned down its L items from the seed, as dlscan_scan's third version
 * scans them; --totals FILE gets each scan's total, in the order (array, column). Every chunk
 * is a whole number of arrays, so one call scans it, with no carry: the chunk size is
 * rounded down to whole arrays, and grown to one array where the default holds less (an
 * explicit --chunk-items that holds less is refused). The input must end on an array's end.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef DLSCAN_CLI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "chunks.h"
#include "cli.h"
#include "files.h"
#include "segments.h"
#include "values.h"

/* The most items of one array along an axis (L x S), as --chunk-items' most. */
#define MAX_ARRAY_ITEMS (1ull << 40)

typedef struct scan_options {
    const type_info *type, *out_type; /* --type, --out-type (default: --type) */
    const type_info *scan_type;       /* what the library writes: out_type, or float32 */
    dlscan_op op;               /* --op (default: sum) */
    int builtin;                /* --op prod or logsumexp: a dlscan_builtin; -1: op */
    dlscan_operator_t custom;   /* that operator, made on the handle */
    int exclusive;
    const char *init_text;
    segment_kind segments;      /* --keys or --offsets */
    const char *segments_path;  /* KEYFILE or OFFSETFILE */
    const type_info *key_type;  /* --key-type (default: --type) */
    unsigned long long axis_length; /* --axis-length L; 0: one scan of the whole input */
    unsigned long long axis_stride; /* --axis-stride S (0: not given, 1) */
    unsigned long long array_items; /* L x S: the items of one array [L][S] */
    const char *totals_path;        /* --totals FILE; "-": standard output */
    stream_options stream;      /* --format, --backend, --threads, --chunk-items */
    int quiet;
    const char *in_path, *out_path; /* NULL or "-": standard input or output */
} scan_options;

/* Returns STATUS_OK, -1 after --help, or an exit status after printing why. */
static int parse_scan_options(int argc, char **argv, scan_options *o)
{
    memset(o, 0, sizeof *o);
    o->op = DLSCAN_SUM;
    o->builtin = -1;
    common_arguments common = {0};
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        int taken;
        const int status = take_common_argument("scan", a, &common, &taken);
        if (status != STATUS_OK)
            return status;
        if (taken)
            continue;
        if (strcmp(a, "--exclusive") == 0) {
            o->exclusive = 1;
            continue;
        }
        static const char *const with_value[] = {
            "--type",    "--out-type",    "--op",   "--init",     "--format",  "--backend",
            "--threads", "--chunk-items", "--keys", "--key-type", "--offsets", "--axis-length",
            "--axis-stride", "--totals"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; ++k)
            known |= strcmp(a, with_value[k]) == 0;
        if (!known)
            return fail(STATUS_BAD_INPUT, "scan: unknown option '%s'; see 'dlscan scan --help'", a);
        if (i + 1 >= argc)
            return fail(STATUS_BAD_INPUT, "scan: %s needs a value", a);
        const char *value = argv[++i];
        const int stream_status = take_stream_option("scan", a, value, &o->stream, &taken);
        if (stream_status != STATUS_OK)
            return stream_status;
        if (taken)
            continue;
        if (strcmp(a, "--type") == 0 || strcmp(a, "--out-type") == 0 ||
            strcmp(a, "--key-type") == 0) {
            const type_info *type = find_type(value);
            if (!type)
                return fail(STATUS_BAD_INPUT, "scan: unknown type '%s' for %s (" TYPE_NAMES ")",
                            value, a);
            *(strcmp(a, "--type") == 0       ? &o->type
              : strcmp(a, "--out-type") == 0 ? &o->out_type
                                             : &o->key_type) = type;
        } else if (strcmp(a, "--keys") == 0 || strcmp(a, "--offsets") == 0) {
            const segment_kind kind = strcmp(a, "--keys") == 0 ? SEGMENTS_KEYS : SEGMENTS_OFFSETS;
            if (o->segments && o->segments != kind)
                return fail(STATUS_BAD_INPUT, "scan: --keys and --offsets exclude each other");
            o->segments = kind;
            o->segments_path = value;
        } else if (strcmp(a, "--axis-length") == 0 || strcmp(a, "--axis-stride") == 0) {
            unsigned long long *count =
                strcmp(a, "--axis-length") == 0 ? &o->axis_length : &o->axis_stride;
            if (!parse_count(value, 1, MAX_ARRAY_ITEMS, count))
                return fail(STATUS_BAD_INPUT, "scan: %s takes 1 .. %llu, not '%s'", a,
                            MAX_ARRAY_ITEMS, value);
        } else if (strcmp(a, "--totals") == 0) {
            o->totals_path = value;
        } else if (strcmp(a, "--op") == 0) {
            int known_op = 0;
            for (int k = 0; k < 3; ++k)
                if (strcmp(value, op_names[k]) == 0)
                    o->op = (dlscan_op)k, o->builtin = -1, known_op = 1;
            if (strcmp(value, "prod") == 0 || strcmp(value, "logsumexp") == 0) {
                o->builtin = value[0] == 'p' ? DLSCAN_BUILTIN_PRODUCT : DLSCAN_BUILTIN_LOGSUMEXP;
                known_op = 1;
            }
            if (!known_op)
                return fail(STATUS_BAD_INPUT, "scan: unknown operator '%s' (sum, min, max, prod or logsumexp)",
                            value);
        } else { /* --init */
            o->init_text = value;
        }
    }
    o->in_path = common.in_path, o->out_path = common.out_path, o->quiet = common.quiet;
    if (!o->type)
        return fail(STATUS_BAD_INPUT, "scan: missing --type (" TYPE_NAMES ")");
    if (!o->out_type)
        o->out_type = o->type;
    const int half = o->out_type->type == DLSCAN_FLOAT16 || o->out_type->type == DLSCAN_BFLOAT16;
    o->scan_type = half && o->type == o->out_type ? find_type("float32") : o->out_type;
    if (!o->in_path || strcmp(o->in_path, "-") == 0)
        o->in_path = "-";
    if (o->key_type && o->segments != SEGMENTS_KEYS)
        return fail(STATUS_BAD_INPUT, "scan: --key-type is the type of --keys' file; there is "
                                      "no --keys");
    if (!o->key_type)
        o->key_type = o->type;
    if (o->segments && strcmp(o->segments_path, "-") == 0 && strcmp(o->in_path, "-") == 0)
        return fail(STATUS_BAD_INPUT, "scan: IN and %s cannot both be standard input",
                    o->segments == SEGMENTS_KEYS ? "--keys" : "--offsets");
    if (o->out_path && strcmp(o->out_path, "-") == 0)
        o->out_path = NULL;
    if (!o->axis_length && (o->axis_stride || o->totals_path))
        return fail(STATUS_BAD_INPUT, "scan: %s needs --axis-length L (the items of each scan "
                                      "along the axis)",
                    o->axis_stride ? "--axis-stride" : "--totals");
    if (o->axis_length && o->segments)
        return fail(STATUS_BAD_INPUT, "scan: --axis-length and %s exclude each other: scans "
                                      "along an axis have no segments",
                    o->segments == SEGMENTS_KEYS ? "--keys" : "--offsets");
    if (o->axis_length) {
        const unsigned long long stride = o->axis_stride ? o->axis_stride : 1;
        if (o->axis_length > MAX_ARRAY_ITEMS / stride)
            return fail(STATUS_BAD_INPUT, "scan: an array of --axis-length x --axis-stride = "
                                          "%llu x %llu items is more than %llu",
                        o->axis_length, stride, MAX_ARRAY_ITEMS);
        o->array_items = o->axis_length * stride;
    }
    if (o->totals_path && strcmp(o->totals_path, "-") == 0 && !o->out_path)
        return fail(STATUS_BAD_INPUT, "scan: OUT and --totals cannot both be standard output");
    if (o->builtin >= 0) { /* a user operator: a scan of a type into itself, plain, segmented or along an axis */
        const char *name = o->builtin == DLSCAN_BUILTIN_PRODUCT ? "prod" : "logsumexp";
        const dlscan_type t = o->type->type;
        const int real = t == DLSCAN_FLOAT32 || t == DLSCAN_FLOAT64;
        if (o->totals_path && o->builtin == DLSCAN_BUILTIN_LOGSUMEXP)
            return fail(STATUS_BAD_INPUT, "scan: --op logsumexp writes no --totals: a row's total is its "
                                          "running state, two values");
        if (o->out_type != o->type)
            return fail(STATUS_BAD_INPUT, "scan: --op %s writes --type: no --out-type", name);
        if (!real && (o->builtin == DLSCAN_BUILTIN_LOGSUMEXP ||
                      (t != DLSCAN_INT32 && t != DLSCAN_UINT32 && t != DLSCAN_INT64 && t != DLSCAN_UINT64)))
            return fail(STATUS_BAD_INPUT, "scan: --op %s takes %s, not %s", name,
                        o->builtin == DLSCAN_BUILTIN_LOGSUMEXP ? "float32 and float64"
                                                               : "int32, uint32, int64, uint64, float32 and float64",
                        o->type->name);
    }
    return STATUS_OK;
}

/* The first chunk's seed in *value: --init, a value of the output type. Returns STATUS_OK
 * with *seed = value, or with *seed = NULL for the operator's identity. */
static int first_seed(const scan_options *o, scan_value *value, const void **seed)
{
    const type_info *type = o->out_type;
    memset(value, 0, sizeof *value);
    *seed = NULL;
    if (o->init_text) {
        const parse_result parsed =
            parse_value(type->type, o->init_text, strlen(o->init_text), value);
        if (parsed != PARSE_OK)
            return bad_value(parsed, "scan: --init: ", o->init_text, strlen(o->init_text), type);
        if (o->scan_type != type)
            value->f32 = float_from_16_bits(type->type, value->u16);
        *seed = value;
    }
    return STATUS_OK;
}

/* The library's arguments for the chunk's items [from, to): a scan without segments from
 * the identity, which the caller adds to. */
static dlscan_scan_args range_args(const chunk_memory *m, const scan_options *o, size_t from,
                                   size_t to)
{
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = (const char *)chunk_working(m, CHUNK_IN) + from * o->type->size;
    a.d_out = (char *)chunk_working(m, CHUNK_OUT) + from * o->scan_type->size;
    a.n = to - from;
    a.in_type = o->type->type;
    a.out_type = o->scan_type->type;
    a.op = o->op;
    a.custom = o->custom;
    a.exclusive = o->exclusive;
    return a;
}

/* One call of the library, unless it has no items. */
static int run_scan(dlscan_handle_t h, const dlscan_scan_args *a)
{
    if (a->n > 0 && dlscan_scan(h, a, NULL) != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_scan failed: %s", dlscan_last_error(h));
    return STATUS_OK;
}

/* host_out[c->begin .. c->end - 1] = the scan of the same items of host_in, in the three
 * calls of segments.h; the carry = the running total of the segment the chunk ends in.
 * Segments start from *seed (NULL: the identity). The chunk's keys or offsets are in
 * host_extra. */
static int scan_chunk(dlscan_handle_t h, chunk_memory *m, size_t count, const scan_options *o,
                      const chunk_segments *c, const void *seed)
{
    const int segmented = c->last_head > c->first_head;
    const size_t segments_bytes = o->segments == SEGMENTS_KEYS ? count * o->key_type->size
                                  : segmented ? (c->num_segments + 1) * sizeof(size_t)
                                              : 0;
    /* The scans and the copies run on the legacy default stream, in order. */
    int status = chunk_copy(m, CHUNK_IN, 1, count * o->type->size);
    if (status == STATUS_OK)
        status = chunk_copy(m, CHUNK_EXTRA, 1, segments_bytes);
    if (status != STATUS_OK)
        return status;
    const char *segments = chunk_working(m, CHUNK_EXTRA);

    /* The end of the segment that the chunk before ended in. */
    dlscan_scan_args a = range_args(m, o, c->begin, c->first_head);
    a.d_init = a.d_total = m->carry;
    status = run_scan(h, &a);
    /* Whole segments. */
    if (status == STATUS_OK && segmented) {
        a = range_args(m, o, c->first_head, c->last_head);
        a.init = seed;
        if (o->segments == SEGMENTS_KEYS) {
            a.d_keys = segments + c->first_head * o->key_type->size;
            a.key_type = o->key_type->type;
        } else {
            a.d_offsets = (const size_t *)segments;
            a.num_segments = c->num_segments;
        }
        status = run_scan(h, &a);
    }
    /* The last segment's start. */
    if (status == STATUS_OK) {
        a = range_args(m, o, c->last_head, c->end);
        a.init = seed;
        a.d_total = m->carry;
        status = run_scan(h, &a);
    }
    return status == STATUS_OK ? chunk_copy(m, CHUNK_OUT, 0, count * o->scan_type->size)
                               : status;
}

/* host_out[0 .. count - 1] = the scans along the axis of the chunk's count / (L x S) arrays,
 * each from *seed (NULL: the identity), in one call; with --totals, host_extra gets their
 * count / L totals. */
static int scan_axis_chunk(dlscan_handle_t h, chunk_memory *m, size_t count,
                           const scan_options *o, const void *seed)
{
    int status = chunk_copy(m, CHUNK_IN, 1, count * o->type->size);
    if (status != STATUS_OK)
        return status;
    dlscan_scan_args a = range_args(m, o, 0, count);
    a.init = seed;
    a.axis_length = (size_t)o->axis_length;
    a.axis_stride = (size_t)o->array_items / (size_t)o->axis_length;
    a.d_totals = o->totals_path ? chunk_working(m, CHUNK_EXTRA) : NULL;
    const dlscan_status called = dlscan_scan(h, &a, NULL);
    if (called != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_scan failed: %s", dlscan_last_error(h));
    status = chunk_copy(m, CHUNK_OUT, 0, count * o->scan_type->size);
    if (status == STATUS_OK && o->totals_path)
        status = chunk_copy(m, CHUNK_EXTRA, 0, count / (size_t)o->axis_length * o->scan_type->size);
    return status;
}

/* The float32 values [from, to) of a float16 or bfloat16 scan into itself, rounded to that
 * type in place: value i moves from values + 4 i to values + 2 i. */
static void round_to_16_bits(const type_info *out_type, char *values, size_t from, size_t to)
{
    for (size_t i = from; i < to; ++i) {
        float x;
        memcpy(&x, values + 4 * i, 4);
        const uint16_t bits = float_to_16_bits(out_type->type, x);
        memcpy(values + 2 * i, &bits, 2);
    }
}

/* Items [from, to) of a chunk, in no segment: the input, converted to the output type. */
static void copy_unscanned(const scan_options *o, const char *in, char *out, size_t from,
                           size_t to)
{
    for (size_t i = from; i < to; ++i)
        convert_value(o->type->type, o->out_type->type, in + i * o->type->size,
                      out + i * o->out_type->size);
}

/* The message for an input of `values` values that ends inside an array along the axis. */
static int not_whole_arrays(const scan_options *o, const char *name, unsigned long long values)
{
    return fail(STATUS_BAD_INPUT, "%s: %llu values are not a whole number of arrays of "
                                  "--axis-length x --axis-stride = %llu x %llu values",
                name, values, o->axis_length, o->array_items / o->axis_length);
}

/* Whether the library scans --type into --out-type: a scan of no items says, before any
 * input is read or memory taken. */
static int check_pair(dlscan_handle_t h, const scan_options *o)
{
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.in_type = o->type->type;
    a.out_type = o->scan_type->type;
    a.op = o->op;
    const dlscan_status status = dlscan_scan(h, &a, NULL);
    if (status == DLSCAN_ERROR_TYPE_PAIR)
        return fail(STATUS_BAD_INPUT, "scan: %s into %s: %s; so does 'dlscan scan --help'",
                    o->type->name, o->out_type->name, dlscan_status_string(status));
    if (status != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_scan failed: %s", dlscan_last_error(h));
    return STATUS_OK;
}

/* --op prod or logsumexp: the built-in operator on the handle (compiled on a GPU). */
static int make_operator(dlscan_handle_t h, scan_options *o)
{
    if (o->builtin < 0)
        return STATUS_OK;
    const dlscan_status status =
        dlscan_operator_builtin(h, (dlscan_builtin)o->builtin, o->type->type, NULL, &o->custom);
    if (status != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "scan: --op %s: %s", o->builtin == DLSCAN_BUILTIN_PRODUCT ? "prod" : "logsumexp",
                    dlscan_last_error(h));
    return STATUS_OK;
}

/* The bytes of keys or offsets for each item of a chunk (0: none). */
static size_t segment_item_size(const scan_options *o)
{
    return o->segments == SEGMENTS_KEYS      ? o->key_type->size
           : o->segments == SEGMENTS_OFFSETS ? sizeof(size_t)
                                             : 0;
}

/* Reads (or writes) bytes at `offset` of a file until all are done; 0, or -1 with errno. */
static int whole_io(int fd, void *bytes, size_t count, off_t offset, int write)
{
    char *at = bytes;
    while (count > 0) {
        const ssize_t done = write ? pwrite(fd, at, count, offset) : pread(fd, at, count, offset);
        if (done <= 0) {
            if (done == 0)
                errno = EIO;
            return -1;
        }
        at += done, count -= (size_t)done, offset += done;
    }
    return 0;
}

/* `mpiexec -n P dlscan scan ...` (ranks.c): rank r scans items [n r / P, n (r + 1) / P) of IN,
 * all of them one scan across the ranks (dlscan_mpi_scan), into one OUT: rank 0 opens OUT's
 * temporary file (output.c), every rank writes its slice there at its place, and rank 0 puts
 * the file in place once every rank has written, so OUT is complete or not there. Binary files
 * (IN and OUT named, OUT a file) and plain scans only; a rank's slice is one piece of memory.
 * Every rank returns the worst rank's status. */
static int scan_ranks(const scan_options *o, const void *seed)
{
    const int rank = ranks_rank(), ranks = ranks_count();
    const type_info *type = o->type;
    int status = STATUS_OK, fd = -1, on_gpu = 0;
    if (o->stream.text || o->segments || o->axis_length || o->builtin >= 0 || !o->in_path || !strcmp(o->in_path, "-") ||
        !o->out_path || !strcmp(o->out_path, "-"))
        status = rank > 0 ? STATUS_BAD_INPUT
                          : fail(STATUS_BAD_INPUT, "scan: under mpiexec, IN and OUT are binary files and "
                                                   "the scan a plain one: no standard input or output, "
                                                   "--format text, --keys, --offsets, --axis-length, or "
                                                   "--op prod or logsumexp");
    struct stat about;
    unsigned long long n = 0;
    if (status == STATUS_OK) {
        fd = open(o->in_path, O_RDONLY);
        /* (every rank meets the same file: rank 0 says what is wrong with it) */
        if (fd < 0 || fstat(fd, &about) != 0 || !S_ISREG(about.st_mode))
            status = rank > 0 ? STATUS_BAD_INPUT
                              : fail(STATUS_BAD_INPUT, "scan: %s: %s", o->in_path,
                                     fd < 0 ? strerror(errno) : "under mpiexec, IN is a regular file");
        else if ((unsigned long long)about.st_size % type->size)
            status = rank > 0 ? STATUS_BAD_INPUT
                              : fail(STATUS_BAD_INPUT, "scan: %s: %llu bytes is no whole number of %s items",
                                     o->in_path, (unsigned long long)about.st_size, type->name);
        else
            n = (unsigned long long)about.st_size / type->size;
    }
    const size_t first = (size_t)(n * (unsigned long long)rank / (unsigned long long)ranks);
    const size_t count = (size_t)(n * (unsigned long long)(rank + 1) / (unsigned long long)ranks) - first;
    const size_t out_size = o->scan_type->size;
    char *in = malloc(count * type->size + 1), *result = malloc(count * out_size + 1);
    if (status == STATUS_OK && (!in || !result))
        status = fail(STATUS_FAILED, "scan: out of memory for a slice of %zu items", count);
    if (status == STATUS_OK && whole_io(fd, in, count * type->size, (off_t)(first * type->size), 0) != 0)
        status = fail(STATUS_FAILED, "scan: reading %s: %s", o->in_path, strerror(errno));
    if (fd >= 0)
        close(fd);

    /* The scan, on this rank's GPU (rank % GPUs) or its CPU. */
    dlscan_handle_t h = NULL;
    if ((status = ranks_worst(status)) == STATUS_OK) {
#ifdef DLSCAN_CLI_HAVE_CUDA
        int devices = 0;
        if (o->stream.backend != BACKEND_CPU && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
            cudaSetDevice(rank % devices);
        (void)cudaGetLastError();
#endif
        status = open_handle(o->stream.backend, o->stream.threads, o->quiet || rank > 0,
                             "scanning on the CPU backend", &h, &on_gpu);
        if (status == STATUS_OK)
            status = check_pair(h, o);
    }
    if ((status = ranks_worst(status)) == STATUS_OK) {
        dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
        a.d_in = in;
        a.d_out = result;
        a.n = count;
        a.in_type = type->type;
        a.out_type = o->scan_type->type;
        a.op = o->op;
        a.exclusive = o->exclusive;
        a.init = seed;
#ifdef DLSCAN_CLI_HAVE_CUDA
        void *d_in = NULL, *d_out = NULL;
        if (on_gpu && (cudaMalloc(&d_in, count * type->size + 1) != cudaSuccess ||
                       cudaMalloc(&d_out, count * out_size + 1) != cudaSuccess ||
                       cudaMemcpy(d_in, in, count * type->size, cudaMemcpyHostToDevice) != cudaSuccess))
            status = fail(STATUS_FAILED, "scan: device memory for a slice of %zu items", count);
        if (on_gpu)
            a.d_in = d_in, a.d_out = d_out;
        /* every rank joins the exchange, with no items where this one failed */
        if (status != STATUS_OK)
            a.n = 0;
#endif
        const dlscan_status scanned = ranks_scan(h, &a);
        if (status == STATUS_OK && scanned != DLSCAN_SUCCESS)
            status = fail(STATUS_FAILED, "dlscan_mpi_scan failed: %s", dlscan_last_error(h));
#ifdef DLSCAN_CLI_HAVE_CUDA
        if (status == STATUS_OK && on_gpu &&
            cudaMemcpy(result, d_out, count * out_size, cudaMemcpyDeviceToHost) != cudaSuccess)
            status = fail(STATUS_FAILED, "scan: copying the slice from the device");
        cudaFree(d_in);
        cudaFree(d_out);
#endif
        if (status == STATUS_OK && o->scan_type != o->out_type) /* float32 to float16 or bfloat16 */
            round_to_16_bits(o->out_type, result, 0, count);
    }

    /* One output file: rank 0's temporary one, every slice at its place. */
    output_file out = {0};
    char temp[sizeof out.temp_path] = "";
    if ((status = ranks_worst(status)) == STATUS_OK && rank == 0) {
        status = output_open(&out, o->out_path);
        if (status == STATUS_OK && !out.temp_path[0])
            status = fail(STATUS_BAD_INPUT, "scan: %s: under mpiexec, OUT is a regular file", o->out_path);
        memcpy(temp, out.temp_path, sizeof temp);
    }
    if ((status = ranks_worst(status)) == STATUS_OK) {
        ranks_share(temp, sizeof temp);
        const size_t bytes = count * o->out_type->size;
        const int wfd = open(temp, O_WRONLY);
        if (wfd < 0 || whole_io(wfd, result, bytes, (off_t)(first * o->out_type->size), 1) != 0)
            status = fail(STATUS_FAILED, "scan: writing %s: %s", o->out_path, strerror(errno));
        if (wfd >= 0 && close(wfd) != 0 && status == STATUS_OK)
            status = fail(STATUS_FAILED, "scan: writing %s: %s", o->out_path, strerror(errno));
    }
    status = ranks_worst(status);
    if (rank == 0 && out.f)
        status = status == STATUS_OK ? output_commit(&out) : (output_discard(&out), status);
    status = ranks_worst(status);
    dlscan_destroy(h);
    free(in);
    free(result);
    return status;
}

int cmd_scan(int argc, char **argv)
{
    scan_options o;
    int status = parse_scan_options(argc, argv, &o);
    if (status != STATUS_OK)
        return status < 0 ? STATUS_OK : status;
    const type_info *type = o.type, *out_type = o.out_type;
    scan_value init;
    const void *seed;
    if ((status = first_seed(&o, &init, &seed)) != STATUS_OK)
        return ranks_worst(status);
    if (ranks_count() > 1)
        return scan_ranks(&o, seed);
    /* logsumexp's init V is the state (V, 1): one item V in front */
    double lse_seed64[2] = {init.f64, 1.0};
    float lse_seed32[2] = {init.f32, 1.0f};
    if (seed && o.builtin == DLSCAN_BUILTIN_LOGSUMEXP)
        seed = o.type->type == DLSCAN_FLOAT32 ? (const void *)lse_seed32 : (const void *)lse_seed64;

    input_file in;
    output_file out = {0}, totals = {0};
    dlscan_handle_t h = NULL;
    chunk_memory memory = {0};
    segment_input segments = {0};
    int on_gpu = 0;
    if ((status = input_open(&in, o.in_path)) != STATUS_OK)
        goto done;
    in.refuse_text = !o.stream.format_given;
    if (!o.stream.text && in.size >= 0 && in.size % (long long)type->size) {
        status = input_truncated(&in, (unsigned long long)in.size, type);
        goto done;
    }
    if (o.axis_length && !o.stream.text && in.size >= 0 &&
        ((unsigned long long)in.size / type->size) % o.array_items) {
        status = not_whole_arrays(&o, in.name, (unsigned long long)in.size / type->size);
        goto done;
    }
    if ((status = segments_open(&segments, o.segments, o.segments_path, o.key_type,
                                o.stream.text, &in, type)) != STATUS_OK ||
        (status = output_open(&out, o.out_path)) != STATUS_OK ||
        (!o.stream.text && (status = output_refuse_terminal(&out)) != STATUS_OK) ||
        (o.totals_path && (status = output_open(&totals, strcmp(o.totals_path, "-") != 0
                                                             ? o.totals_path
                                                             : NULL)) != STATUS_OK) ||
        (o.totals_path && !o.stream.text &&
         (status = output_refuse_terminal(&totals)) != STATUS_OK) ||
        (status = open_handle(o.stream.backend, o.stream.threads, o.quiet,
                              "scanning on the CPU backend", &h, &on_gpu)) != STATUS_OK ||
        (status = make_operator(h, &o)) != STATUS_OK || (status = check_pair(h, &o)) != STATUS_OK)
        goto done;
    /* the widest of the types (values in and out, keys or offsets); each device buffer
     * twice over: 4, with keys or offsets 6 */
    size_t wider = type->size > o.scan_type->size ? type->size : o.scan_type->size;
    if (segment_item_size(&o) > wider)
        wider = segment_item_size(&o);
    size_t chunk = chunk_items_for(&o.stream, &in, type->size, wider,
                                   o.segments || o.totals_path ? 6 : 4, on_gpu);
    if (o.axis_length) { /* whole arrays */
        if (o.stream.chunk_items && o.stream.chunk_items < o.array_items) {
            status = fail(STATUS_BAD_INPUT, "scan: --chunk-items %llu holds less than one array "
                                            "of --axis-length x --axis-stride = %llu items",
                          o.stream.chunk_items, o.array_items);
            goto done;
        }
        chunk = chunk < o.array_items ? (size_t)o.array_items
                                      : chunk / (size_t)o.array_items * (size_t)o.array_items;
    }
    /* keys: one per item; offsets: those within a chunk, as size_t, at most one per item
     * and one more; totals: one per scan along the axis */
    const size_t extra_bytes = o.segments == SEGMENTS_OFFSETS ? (chunk + 1) * sizeof(size_t)
                               : o.totals_path ? chunk / (size_t)o.axis_length * o.scan_type->size
                                               : chunk * segment_item_size(&o);
    if ((status = chunk_memory_alloc(&memory, on_gpu, chunk, type->size, o.scan_type->size,
                                     extra_bytes)) != STATUS_OK)
        goto done;

    progress bar;
    progress_start(&bar, o.quiet);
    unsigned long long total = 0; /* items so far */
    for (;;) {
        size_t n = 0;
        status = read_chunk(&in, type, o.stream.text, memory.host_in, chunk, &n);
        if (status != STATUS_OK || n == 0)
            break;
        total += n;
        if (o.axis_length) {
            if (n % o.array_items) { /* the end of a text or a pipe, in an array */
                status = not_whole_arrays(&o, in.name, total);
                break;
            }
            if ((status = scan_axis_chunk(h, &memory, n, &o, seed)) != STATUS_OK)
                break;
            const size_t scans = n / (size_t)o.axis_length;
            if (o.scan_type != out_type) {
                round_to_16_bits(out_type, memory.host_out, 0, n);
                round_to_16_bits(out_type, memory.host_extra, 0, o.totals_path ? scans : 0);
            }
            output_values(&out, out_type, o.stream.text, memory.host_out, n);
            if (o.totals_path)
                output_values(&totals, out_type, o.stream.text, memory.host_extra, scans);
            if ((status = output_chunk_done(&out)) != STATUS_OK ||
                (o.totals_path && (status = output_chunk_done(&totals)) != STATUS_OK))
                break;
            progress_update(&bar, in.consumed, in.size, 0);
            if (n < chunk && !o.stream.text)
                break;
            continue;
        }
        chunk_segments c;
        if ((status = segments_next_chunk(&segments, n, memory.host_extra, &c)) != STATUS_OK ||
            (status = scan_chunk(h, &memory, n, &o, &c, seed)) != STATUS_OK)
            break;
        char *result = memory.host_out;
        if (o.scan_type != out_type) /* float32 rounded to float16 or bfloat16, in place */
            round_to_16_bits(out_type, result, c.begin, c.end);
        /* Items in no segment (after the rounding, which writes only the scanned ones). */
        copy_unscanned(&o, memory.host_in, result, 0, c.begin);
        copy_unscanned(&o, memory.host_in, result, c.end, n);
        output_values(&out, out_type, o.stream.text, result, n);
        if ((status = output_chunk_done(&out)) != STATUS_OK)
            break;
        progress_update(&bar, in.consumed, in.size, 0);
        if (n < chunk && !o.stream.text)
            break; /* a short read is the end of a binary input */
    }
    progress_update(&bar, in.consumed, in.size, 1);
    if (status == STATUS_OK)
        status = segments_finish(&segments, total);
    if (status == STATUS_OK && o.totals_path)
        status = output_commit(&totals);
    if (status == STATUS_OK)
        status = output_commit(&out);
done:
    if (status != STATUS_OK) {
        output_discard(&totals);
        output_discard(&out);
    }
    chunk_memory_free(&memory);
    dlscan_operator_destroy(o.custom);
    dlscan_destroy(h);
    segments_close(&segments);
    input_close(&in);
    return status;
}
