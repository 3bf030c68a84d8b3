/*
 * scan.c: `dlscan scan`: the prefix scan of a file of raw values or of text, on the GPU or
 * the CPU backend, into a file that is complete or not there at all, or into a pipe as the
 * result is computed (output.c). The output's type (--out-type) may differ from the
 * input's: the library accumulates in it and says which pairs it scans.
 *
 * Files larger than a chunk (by default 256 MiB of the wider type on a GPU, 64 MiB on the
 * CPU; --chunk-items sets it) stream through chunk by chunk, and the library carries the
 * prefix on the device: one value of the output type, `carry` (device memory for a GPU
 * handle, host memory for a CPU handle), is each chunk's d_total, and every chunk but the
 * first reads its init from it (d_init = d_total = carry):
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
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#ifdef DLSCAN_CLI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "cli.h"
#include "files.h"
#include "values.h"

typedef struct scan_options {
    const type_info *type, *out_type; /* --type, --out-type (default: --type) */
    const type_info *scan_type;       /* what the library writes: out_type, or float32 */
    int have_op;
    dlscan_op op;
    int exclusive;
    const char *init_text;
    int text;
    unsigned long long chunk_items; /* 0: the backend's default */
    backend_choice backend;
    int threads;
    int quiet;
    const char *in_path, *out_path; /* NULL or "-": standard input or output */
} scan_options;

#define MAX_CHUNK_ITEMS (1ull << 40)

/* Returns STATUS_OK, -1 after --help, or an exit status after printing why. */
static int parse_scan_options(int argc, char **argv, scan_options *o)
{
    memset(o, 0, sizeof *o);
    int positional_only = 0;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        if (positional_only || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!o->in_path)
                o->in_path = a;
            else if (!o->out_path)
                o->out_path = a;
            else
                return fail(STATUS_BAD_INPUT, "scan: unexpected argument '%s' (IN and OUT are "
                                              "already %s and %s)",
                            a, o->in_path, o->out_path);
            continue;
        }
        if (strcmp(a, "--") == 0) {
            positional_only = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_usage("scan");
            return -1;
        }
        if (strcmp(a, "--exclusive") == 0) {
            o->exclusive = 1;
            continue;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
            continue;
        }
        static const char *const with_value[] = {"--type",    "--out-type", "--op",
                                                 "--init",    "--format",   "--backend",
                                                 "--threads", "--chunk-items"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; ++k)
            known |= strcmp(a, with_value[k]) == 0;
        if (!known)
            return fail(STATUS_BAD_INPUT, "scan: unknown option '%s'; see 'dlscan scan --help'", a);
        if (i + 1 >= argc)
            return fail(STATUS_BAD_INPUT, "scan: %s needs a value", a);
        const char *value = argv[++i];
        unsigned long long number;
        if (strcmp(a, "--type") == 0 || strcmp(a, "--out-type") == 0) {
            const type_info *type = find_type(value);
            if (!type)
                return fail(STATUS_BAD_INPUT, "scan: unknown type '%s' for %s (" TYPE_NAMES ")",
                            value, a);
            *(strcmp(a, "--type") == 0 ? &o->type : &o->out_type) = type;
        } else if (strcmp(a, "--op") == 0) {
            o->have_op = 0;
            for (int k = 0; k < 3; ++k)
                if (strcmp(value, op_names[k]) == 0)
                    o->op = (dlscan_op)k, o->have_op = 1;
            if (!o->have_op)
                return fail(STATUS_BAD_INPUT, "scan: unknown operator '%s' (sum, min or max)", value);
        } else if (strcmp(a, "--init") == 0) {
            o->init_text = value;
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(value, "binary") != 0 && strcmp(value, "text") != 0)
                return fail(STATUS_BAD_INPUT, "scan: unknown format '%s' (binary or text)", value);
            o->text = strcmp(value, "text") == 0;
        } else if (strcmp(a, "--backend") == 0) {
            if (!parse_backend(value, &o->backend))
                return fail(STATUS_BAD_INPUT, "scan: unknown backend '%s' (auto, gpu or cpu)", value);
        } else if (strcmp(a, "--threads") == 0) {
            if (!parse_count(value, 0, 4096, &number))
                return fail(STATUS_BAD_INPUT, "scan: --threads takes 0 .. 4096, not '%s'", value);
            o->threads = (int)number;
        } else {
            if (!parse_count(value, 1, MAX_CHUNK_ITEMS, &o->chunk_items))
                return fail(STATUS_BAD_INPUT, "scan: --chunk-items takes 1 .. %llu, not '%s'",
                            MAX_CHUNK_ITEMS, value);
        }
    }
    if (!o->type)
        return fail(STATUS_BAD_INPUT, "scan: missing --type (" TYPE_NAMES ")");
    if (!o->out_type)
        o->out_type = o->type;
    const int half = o->out_type->type == DLSCAN_FLOAT16 || o->out_type->type == DLSCAN_BFLOAT16;
    o->scan_type = half && o->type == o->out_type ? find_type("float32") : o->out_type;
    if (!o->have_op)
        return fail(STATUS_BAD_INPUT, "scan: missing --op (sum, min or max)");
    if (!o->in_path || strcmp(o->in_path, "-") == 0)
        o->in_path = "-";
    if (o->out_path && strcmp(o->out_path, "-") == 0)
        o->out_path = NULL;
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
        char shown[48];
        switch (parse_value(type->type, o->init_text, strlen(o->init_text), value)) {
        case PARSE_OK: break;
        case PARSE_NOT_A_NUMBER:
            return fail(STATUS_BAD_INPUT, "scan: --init: '%s' is not a number of type %s",
                        printable(o->init_text, strlen(o->init_text), shown), type->name);
        case PARSE_OUT_OF_RANGE:
            return fail(STATUS_BAD_INPUT, "scan: --init: %s is out of range for %s (%s)",
                        printable(o->init_text, strlen(o->init_text), shown), type->name,
                        type->range);
        }
        if (o->scan_type != type)
            value->f32 = float_from_16_bits(type->type, value->u16);
        *seed = value;
    }
    return STATUS_OK;
}

/* A chunk's memory: host buffers for reading and writing files, and device buffers for a
 * GPU handle (a CPU handle scans the host buffers); and the carry, where the scan of each
 * chunk leaves the total so far. */
typedef struct chunk_memory {
    int on_gpu;
    int pinned;
    void *host_in, *host_out;
    void *device_in, *device_out;
    void *carry;           /* device memory for a GPU handle, else &host_carry */
    scan_value host_carry;
} chunk_memory;

static void chunk_memory_free(chunk_memory *m)
{
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (m->on_gpu) {
        cudaFree(m->device_in);
        cudaFree(m->device_out);
        cudaFree(m->carry);
        if (m->pinned) {
            cudaFreeHost(m->host_in);
            cudaFreeHost(m->host_out);
            m->host_in = m->host_out = NULL;
        }
    }
#endif
    free(m->host_in);
    free(m->host_out);
    memset(m, 0, sizeof *m);
}

/* Buffers for `items` items of `in_size` and of `out_size` bytes, and the carry. */
static int chunk_memory_alloc(chunk_memory *m, int on_gpu, size_t items, size_t in_size,
                              size_t out_size)
{
    memset(m, 0, sizeof *m);
    m->on_gpu = on_gpu;
    m->carry = &m->host_carry;
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (on_gpu) {
        m->carry = NULL;
        cudaError_t error = cudaMalloc(&m->device_in, items * in_size);
        if (error == cudaSuccess)
            error = cudaMalloc(&m->device_out, items * out_size);
        if (error == cudaSuccess)
            error = cudaMalloc(&m->carry, out_size);
        if (error != cudaSuccess) {
            (void)cudaGetLastError();
            chunk_memory_free(m);
            return fail(STATUS_FAILED, "cudaMalloc of %zu + %zu bytes failed: %s",
                        items * in_size, items * out_size, cudaGetErrorString(error));
        }
        /* Pinned host memory copies faster; plain memory will do where it runs out. */
        if (cudaMallocHost(&m->host_in, items * in_size) == cudaSuccess &&
            cudaMallocHost(&m->host_out, items * out_size) == cudaSuccess) {
            m->pinned = 1;
        } else {
            (void)cudaGetLastError();
            cudaFreeHost(m->host_in);
            m->host_in = NULL;
        }
    }
#endif
    if (!m->pinned) {
        m->host_in = malloc(items * in_size);
        m->host_out = malloc(items * out_size);
        if (!m->host_in || !m->host_out) {
            chunk_memory_free(m);
            return fail(STATUS_FAILED, "out of memory: %zu + %zu bytes of host memory",
                        items * in_size, items * out_size);
        }
    }
    return STATUS_OK;
}

/* host_out[0..count-1] = the scan of host_in[0..count-1], and the carry = its total. The
 * first chunk starts from *seed (NULL: the identity), the others from the carry. */
static int scan_chunk(dlscan_handle_t h, chunk_memory *m, size_t count, const scan_options *o,
                      int first, const void *seed)
{
    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    a.d_in = m->on_gpu ? m->device_in : m->host_in;
    a.d_out = m->on_gpu ? m->device_out : m->host_out;
    a.n = count;
    a.in_type = o->type->type;
    a.out_type = o->scan_type->type;
    a.op = o->op;
    a.exclusive = o->exclusive;
    if (first)
        a.init = seed;
    else
        a.d_init = m->carry;
    a.d_total = m->carry;
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (m->on_gpu) {
        /* The scan and the copies run on the legacy default stream, in order. */
        cudaError_t error = cudaMemcpy(m->device_in, m->host_in, count * o->type->size,
                                       cudaMemcpyHostToDevice);
        if (error != cudaSuccess)
            return fail(STATUS_FAILED, "cudaMemcpy to the GPU failed: %s", cudaGetErrorString(error));
        if (dlscan_scan(h, &a, NULL) != DLSCAN_SUCCESS)
            return fail(STATUS_FAILED, "dlscan_scan failed: %s", dlscan_last_error(h));
        error = cudaMemcpy(m->host_out, m->device_out, count * o->scan_type->size,
                           cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            return fail(STATUS_FAILED, "the scan or the copy back failed: %s",
                        cudaGetErrorString(error));
        return STATUS_OK;
    }
#endif
    if (dlscan_scan(h, &a, NULL) != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_scan failed: %s", dlscan_last_error(h));
    return STATUS_OK;
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

/* Items per chunk: the option, else the backend's default in bytes of the wider of the two
 * types, never more than the input can hold where its size is known. */
static size_t chunk_items_for(const scan_options *o, const input_file *in, int on_gpu)
{
    size_t bytes = on_gpu ? (size_t)256 << 20 : (size_t)64 << 20;
#ifdef DLSCAN_CLI_HAVE_CUDA
    size_t free_bytes = 0, total_bytes = 0;
    if (on_gpu && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && free_bytes / 4 < bytes)
        bytes = free_bytes / 4; /* two device buffers, and room to spare */
#endif
    const size_t wider = o->type->size > o->scan_type->size ? o->type->size : o->scan_type->size;
    size_t items = o->chunk_items ? (size_t)o->chunk_items : bytes / wider;
    if (in->size >= 0) {
        /* binary: the file's items; text: a number and a newline take two bytes at least */
        const size_t most = o->text ? (size_t)in->size / 2 + 1 : (size_t)in->size / o->type->size;
        if (most < items)
            items = most;
    }
    return items > 0 ? items : 1;
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
        return status;

    input_file in;
    output_file out = {0};
    dlscan_handle_t h = NULL;
    chunk_memory memory = {0};
    int on_gpu = 0;
    if ((status = input_open(&in, o.in_path)) != STATUS_OK)
        goto done;
    if (!o.text && in.size >= 0 && in.size % (long long)type->size) {
        status = input_truncated(&in, (unsigned long long)in.size, type);
        goto done;
    }
    if ((status = output_open(&out, o.out_path)) != STATUS_OK ||
        (status = open_handle(o.backend, o.threads, o.quiet, "scanning on the CPU backend", &h,
                              &on_gpu)) != STATUS_OK ||
        (status = check_pair(h, &o)) != STATUS_OK)
        goto done;
    const size_t chunk = chunk_items_for(&o, &in, on_gpu);
    if ((status = chunk_memory_alloc(&memory, on_gpu, chunk, type->size, o.scan_type->size)) !=
        STATUS_OK)
        goto done;

    progress bar;
    progress_start(&bar, o.quiet);
    for (int first = 1;; first = 0) {
        size_t n = 0;
        status = o.text ? read_text_chunk(&in, type, memory.host_in, chunk, &n)
                        : read_binary_chunk(&in, type, memory.host_in, chunk, &n);
        if (status != STATUS_OK || n == 0)
            break;
        if ((status = scan_chunk(h, &memory, n, &o, first, seed)) != STATUS_OK)
            break;
        char *result = memory.host_out;
        if (o.scan_type != out_type) /* float32 rounded to float16 or bfloat16, in place */
            for (size_t i = 0; i < n; ++i) {
                float x;
                memcpy(&x, result + 4 * i, 4);
                const uint16_t bits = float_to_16_bits(out_type->type, x);
                memcpy(result + 2 * i, &bits, 2);
            }
        if (o.text)
            for (size_t i = 0; i < n; ++i)
                write_text_value(out.f, out_type->type, result + i * out_type->size);
        else
            fwrite(result, out_type->size, n, out.f);
        if ((status = output_chunk_done(&out)) != STATUS_OK)
            break;
        progress_update(&bar, in.consumed, in.size, 0);
        if (n < chunk && !o.text)
            break; /* a short read is the end of a binary input */
    }
    progress_update(&bar, in.consumed, in.size, 1);
    if (status == STATUS_OK)
        status = output_commit(&out);
done:
    if (status != STATUS_OK)
        output_discard(&out);
    chunk_memory_free(&memory);
    dlscan_destroy(h);
    input_close(&in);
    return status;
}
