/*
 * dlscan.c: the `dlscan` command: what this machine's dlscan can do (info), prefix scans
 * of files (scan) and the throughput sweep (bench). The usage text below is its manual.
 *
 * It talks to the library only through dlscan.h, plus the CUDA runtime for device memory
 * and device properties in builds with the GPU backend (DLSCAN_CLI_HAVE_CUDA, which
 * tools/meson.build defines).
 *
 * Files larger than a chunk (by default 256 MiB on a GPU, 64 MiB on the CPU; --chunk-items
 * sets it) stream through chunk by chunk. The carry is the inclusive result of everything
 * before the chunk (the --init value folded in front), and each chunk is one exclusive
 * scan seeded with it: that is exactly the exclusive result for sum, min and max. The
 * inclusive result is the same scan shifted by one item, with the chunk's last item folded
 * in on the host, which is also the next carry:
 *
 *     out[0..n-1] = exclusive_scan(in[0..n-1], init = carry)
 *     out[n]      = out[n-1] op in[n-1]            (the next carry)
 *     exclusive: write out[0..n-1]        inclusive: write out[1..n]
 *
 * Nothing is half-written: OUT is written to a temporary file in its directory and renamed
 * into place after the last item; with OUT = '-' the result goes to an unnamed temporary
 * file and is copied to standard output only after the scan succeeded.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef DLSCAN_CLI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "cpu_sweep.h"
#include "dlscan.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dlscan's binary files are little-endian; this host is not"
#endif

/* Where the installed command finds the GPU bench harness and plot.py, relative to its own
 * directory (or absolute); tools/meson.build sets it. */
#ifndef DLSCAN_CLI_LIBEXEC
#define DLSCAN_CLI_LIBEXEC "../libexec/dlscan"
#endif

static const char usage_text[] =
    "usage: dlscan <command> [options]\n"
    "\n"
    "  dlscan info\n"
    "      Library version, the GPU and its SM count, items per tile for each type on the\n"
    "      GPU and CPU backends, and which backend scan and bench would use.\n"
    "\n"
    "  dlscan scan --type T --op OP [--exclusive] [--init V] [--format binary|text]\n"
    "              [--backend auto|gpu|cpu] [--threads N] IN OUT\n"
    "      Prefix scan of the values in IN, written to OUT ('-': standard input/output).\n"
    "      --type     int32, uint32, int64, uint64, float32 or float64\n"
    "      --op       sum, min or max (integer sums wrap around)\n"
    "      --exclusive  out[i] = init op in[0] op ... op in[i-1]; the default is inclusive:\n"
    "                 out[i] = init op in[0] op ... op in[i]\n"
    "      --init V   the value folded in front of the first item (default: the operator's\n"
    "                 identity: 0, the type's largest value or +inf for min, its smallest\n"
    "                 value or -inf for max)\n"
    "      --format   binary (default): raw little-endian values; text: one number per\n"
    "                 line (floats are written with 9 or 17 significant digits, so they\n"
    "                 read back exactly)\n"
    "      --backend  auto (default): the GPU where dlscan_create finds one, else the CPU\n"
    "                 backend, saying so on stderr; gpu: the GPU or fail; cpu: the CPU\n"
    "                 backend (host memory, no GPU needed)\n"
    "      --threads N  threads of the CPU backend (default 0: one per online core)\n"
    "      --chunk-items N  items per chunk (advanced; default: 256 MiB on a GPU, 64 MiB\n"
    "                 on the CPU). Larger inputs stream through chunk by chunk, carrying\n"
    "                 the prefix.\n"
    "      OUT is written to a temporary file in its directory and renamed into place at\n"
    "      the end; with '-', the result goes to standard output only once it is complete.\n"
    "      A progress bar shows on a terminal when the input takes more than a second.\n"
    "\n"
    "  dlscan bench [--quick] [--types LIST] [--op OP] [--exclusive] [--min-log N]\n"
    "               [--max-log N] [--repeats N] [--csv FILE] [--plot FILE]\n"
    "               [--backend auto|gpu|cpu] [--threads N]\n"
    "               [--variants LIST] [--markdown FILE] [--stats]   (GPU only)\n"
    "      With a GPU: the bench harness's sweep (dlscan against memcpy, CUB and the\n"
    "      baselines). Without one: dlscan's CPU backend against a sequential loop and\n"
    "      memcpy on this machine, 2^16 .. 2^26 items, with the ratio to the loop.\n"
    "      --csv writes the results; --plot draws them with bench/plot.py (python3 with\n"
    "      matplotlib). The harness is found through DLSCAN_BENCH, then next to this\n"
    "      command (installed: " DLSCAN_CLI_LIBEXEC "/bench; build tree: ../bench/bench);\n"
    "      plot.py through DLSCAN_PLOT, then the same places.\n"
    "\n"
    "  dlscan help | --help     this text\n"
    "  dlscan --version         the version\n"
    "\n"
    "Exit status: 0 success; 1 bad usage or bad input (unknown options, missing arguments,\n"
    "unreadable or unwritable files, a truncated binary file, text that is not a number,\n"
    "values out of range for the type); 2 the library, CUDA or the system failed (no GPU\n"
    "with --backend gpu, out of memory, a failed write, a missing helper program).\n";

enum { STATUS_OK = 0, STATUS_BAD_INPUT = 1, STATUS_FAILED = 2 };

/* Prints "dlscan: <message>" on stderr and returns `status`. */
static int fail(int status, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int fail(int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("dlscan: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    return status;
}

/* ================================================================ types and values */

typedef struct type_info {
    const char *name;
    dlscan_type type;
    size_t size;
    const char *range; /* for messages */
} type_info;

static const type_info all_types[] = {
    {"int32", DLSCAN_INT32, 4, "-2147483648 .. 2147483647"},
    {"uint32", DLSCAN_UINT32, 4, "0 .. 4294967295"},
    {"int64", DLSCAN_INT64, 8, "-9223372036854775808 .. 9223372036854775807"},
    {"uint64", DLSCAN_UINT64, 8, "0 .. 18446744073709551615"},
    {"float32", DLSCAN_FLOAT32, 4, "about -3.4e38 .. 3.4e38"},
    {"float64", DLSCAN_FLOAT64, 8, "about -1.8e308 .. 1.8e308"},
};
#define TYPE_COUNT (sizeof all_types / sizeof all_types[0])
static const char *const op_names[] = {"sum", "min", "max"};

static const type_info *find_type(const char *name)
{
    for (size_t t = 0; t < TYPE_COUNT; ++t)
        if (strcmp(name, all_types[t].name) == 0)
            return &all_types[t];
    return NULL;
}

/* One value of any type; the member of the type lies at offset 0. */
typedef union scan_value {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
} scan_value;

typedef enum parse_result { PARSE_OK, PARSE_NOT_A_NUMBER, PARSE_OUT_OF_RANGE } parse_result;

/* Parses `length` bytes at `text` (no surrounding blanks) as one value of `type`: decimal
 * integers; floats as strtod reads them (also inf and nan). Float underflow rounds to 0
 * or a subnormal; overflow is out of range. */
static parse_result parse_value(dlscan_type type, const char *text, size_t length, scan_value *v)
{
    char token[64];
    if (length == 0 || length >= sizeof token || memchr(text, '\0', length))
        return PARSE_NOT_A_NUMBER;
    memcpy(token, text, length);
    token[length] = '\0';
    char *end;
    errno = 0;
    switch (type) {
    case DLSCAN_INT32:
    case DLSCAN_INT64: {
        const long long x = strtoll(token, &end, 10);
        if (end == token || *end)
            return PARSE_NOT_A_NUMBER;
        if (errno == ERANGE || (type == DLSCAN_INT32 && (x < INT32_MIN || x > INT32_MAX)))
            return PARSE_OUT_OF_RANGE;
        if (type == DLSCAN_INT32)
            v->i32 = (int32_t)x;
        else
            v->i64 = (int64_t)x;
        return PARSE_OK;
    }
    case DLSCAN_UINT32:
    case DLSCAN_UINT64: {
        if (token[0] == '-') { /* strtoull would wrap negative numbers around */
            const long long x = strtoll(token, &end, 10);
            if (end == token || *end)
                return PARSE_NOT_A_NUMBER;
            if (errno == ERANGE || x != 0)
                return PARSE_OUT_OF_RANGE;
            memset(v, 0, sizeof *v);
            return PARSE_OK;
        }
        const unsigned long long x = strtoull(token, &end, 10);
        if (end == token || *end)
            return PARSE_NOT_A_NUMBER;
        if (errno == ERANGE || (type == DLSCAN_UINT32 && x > UINT32_MAX))
            return PARSE_OUT_OF_RANGE;
        if (type == DLSCAN_UINT32)
            v->u32 = (uint32_t)x;
        else
            v->u64 = (uint64_t)x;
        return PARSE_OK;
    }
    case DLSCAN_FLOAT32: {
        const float x = strtof(token, &end);
        if (end == token || *end)
            return PARSE_NOT_A_NUMBER;
        if (errno == ERANGE && isinf(x))
            return PARSE_OUT_OF_RANGE;
        v->f32 = x;
        return PARSE_OK;
    }
    case DLSCAN_FLOAT64: {
        const double x = strtod(token, &end);
        if (end == token || *end)
            return PARSE_NOT_A_NUMBER;
        if (errno == ERANGE && isinf(x))
            return PARSE_OUT_OF_RANGE;
        v->f64 = x;
        return PARSE_OK;
    }
    }
    return PARSE_NOT_A_NUMBER;
}

/* Writes one value as text (and a newline) to `out`. Floats: enough digits to read back
 * the same bits. */
static void write_text_value(FILE *out, dlscan_type type, const void *p)
{
    scan_value v;
    memcpy(&v, p, type == DLSCAN_INT32 || type == DLSCAN_UINT32 || type == DLSCAN_FLOAT32 ? 4 : 8);
    switch (type) {
    case DLSCAN_INT32: fprintf(out, "%" PRId32 "\n", v.i32); break;
    case DLSCAN_UINT32: fprintf(out, "%" PRIu32 "\n", v.u32); break;
    case DLSCAN_INT64: fprintf(out, "%" PRId64 "\n", v.i64); break;
    case DLSCAN_UINT64: fprintf(out, "%" PRIu64 "\n", v.u64); break;
    case DLSCAN_FLOAT32: fprintf(out, "%.9g\n", (double)v.f32); break;
    case DLSCAN_FLOAT64: fprintf(out, "%.17g\n", v.f64); break;
    }
}

/* The operator's identity. dlscan.h's, except that `exact` asks for -0.0 as the identity
 * of float sums: -0.0 + x is x for every x, -0.0 included, so a seed of -0.0 leaves an
 * inclusive scan's first item as it is. */
static scan_value identity_of(dlscan_type type, dlscan_op op, int exact)
{
    scan_value v;
    memset(&v, 0, sizeof v);
    const int lowest = op == DLSCAN_MAX;
    switch (type) {
    case DLSCAN_INT32: v.i32 = op == DLSCAN_SUM ? 0 : lowest ? INT32_MIN : INT32_MAX; break;
    case DLSCAN_UINT32: v.u32 = op == DLSCAN_SUM ? 0 : lowest ? 0 : UINT32_MAX; break;
    case DLSCAN_INT64: v.i64 = op == DLSCAN_SUM ? 0 : lowest ? INT64_MIN : INT64_MAX; break;
    case DLSCAN_UINT64: v.u64 = op == DLSCAN_SUM ? 0 : lowest ? 0 : UINT64_MAX; break;
    case DLSCAN_FLOAT32:
        v.f32 = op == DLSCAN_SUM ? (exact ? -0.0f : 0.0f) : lowest ? -INFINITY : INFINITY;
        break;
    case DLSCAN_FLOAT64:
        v.f64 = op == DLSCAN_SUM ? (exact ? -0.0 : 0.0) : lowest ? -(double)INFINITY
                                                                  : (double)INFINITY;
        break;
    }
    return v;
}

#define MIN_OF(a, b) ((b) < (a) ? (b) : (a)) /* dlscan.h's min and max, a the earlier item */
#define MAX_OF(a, b) ((a) < (b) ? (b) : (a))
#define COMBINE(T, a, b)                                                                          \
    (op == DLSCAN_MIN ? MIN_OF((T)(a), (T)(b)) : op == DLSCAN_MAX ? MAX_OF((T)(a), (T)(b)) : 0)

/* *result = a op b, as dlscan computes it; integer sums wrap around. */
static void combine(dlscan_type type, dlscan_op op, const void *a_bytes, const void *b_bytes,
                    void *result_bytes)
{
    const size_t size = type == DLSCAN_INT32 || type == DLSCAN_UINT32 || type == DLSCAN_FLOAT32 ? 4 : 8;
    scan_value a, b, r;
    memcpy(&a, a_bytes, size);
    memcpy(&b, b_bytes, size);
    switch (type) {
    case DLSCAN_INT32: r.i32 = op == DLSCAN_SUM ? (int32_t)(a.u32 + b.u32) : COMBINE(int32_t, a.i32, b.i32); break;
    case DLSCAN_UINT32: r.u32 = op == DLSCAN_SUM ? a.u32 + b.u32 : COMBINE(uint32_t, a.u32, b.u32); break;
    case DLSCAN_INT64: r.u64 = op == DLSCAN_SUM ? a.u64 + b.u64 : (uint64_t)COMBINE(int64_t, a.i64, b.i64); break;
    case DLSCAN_UINT64: r.u64 = op == DLSCAN_SUM ? a.u64 + b.u64 : COMBINE(uint64_t, a.u64, b.u64); break;
    case DLSCAN_FLOAT32: r.f32 = op == DLSCAN_SUM ? a.f32 + b.f32 : COMBINE(float, a.f32, b.f32); break;
    case DLSCAN_FLOAT64: r.f64 = op == DLSCAN_SUM ? a.f64 + b.f64 : COMBINE(double, a.f64, b.f64); break;
    }
    memcpy(result_bytes, &r, size);
}

/* A whole decimal number in [low, high] (for option values). */
static int parse_count(const char *text, unsigned long long low, unsigned long long high,
                       unsigned long long *value)
{
    char *end;
    if (!text || !*text || *text == '-' || *text == '+' || *text == ' ')
        return 0;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    if (*end || errno == ERANGE || v < low || v > high)
        return 0;
    *value = v;
    return 1;
}

/* A bounded, printable copy of a token for messages. */
static const char *printable(const char *text, size_t length, char buffer[48])
{
    size_t k = 0;
    for (; k < length && k < 40; ++k)
        buffer[k] = text[k] >= 0x20 && text[k] < 0x7f ? text[k] : '?';
    if (length > 40)
        memcpy(buffer + k, "...", 3), k += 3;
    buffer[k] = '\0';
    return buffer;
}

/* ================================================================ backends and memory */

typedef enum backend_choice { BACKEND_AUTO, BACKEND_GPU, BACKEND_CPU } backend_choice;

static int parse_backend(const char *text, backend_choice *choice)
{
    static const char *const names[] = {"auto", "gpu", "cpu"};
    for (int k = 0; k < 3; ++k)
        if (strcmp(text, names[k]) == 0) {
            *choice = (backend_choice)k;
            return 1;
        }
    return 0;
}

/* Why dlscan_create found no GPU, in the CUDA runtime's words where it has any. */
static void no_gpu_reason(char *reason, size_t size)
{
#ifdef DLSCAN_CLI_HAVE_CUDA
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess)
        snprintf(reason, size, "%s", cudaGetErrorString(error));
    else
        snprintf(reason, size, "%d CUDA devices, none usable", count);
    (void)cudaGetLastError();
#else
    snprintf(reason, size, "dlscan was built without the GPU backend (-Dgpu=disabled)");
#endif
}

/* Creates the handle that `choice` asks for. `activity` ("scanning on the CPU backend")
 * ends the note that auto mode prints when it falls back to the CPU backend. */
static int open_handle(backend_choice choice, int threads, const char *activity,
                       dlscan_handle_t *h, int *on_gpu)
{
    *h = NULL;
    *on_gpu = 0;
    if (choice != BACKEND_CPU) {
        const dlscan_status status = dlscan_create(h);
        if (status == DLSCAN_SUCCESS) {
            *on_gpu = 1;
            return STATUS_OK;
        }
        char reason[256];
        no_gpu_reason(reason, sizeof reason);
        if (status != DLSCAN_ERROR_NO_DEVICE)
            return fail(STATUS_FAILED, "dlscan_create failed: %s (%s)",
                        dlscan_status_string(status), reason);
        if (choice == BACKEND_GPU)
            return fail(STATUS_FAILED, "--backend gpu: no usable GPU (%s)", reason);
        fprintf(stderr, "dlscan: no usable GPU (%s); %s\n", reason, activity);
    }
    const dlscan_status status = dlscan_create_cpu(h, threads);
    if (status != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_create_cpu failed: %s", dlscan_status_string(status));
    return STATUS_OK;
}

/* A chunk's memory: host buffers for reading and writing files, and device buffers for a
 * GPU handle (a CPU handle scans the host buffers). host_out has one item more than a
 * chunk: the carry after the chunk. */
typedef struct chunk_memory {
    int on_gpu;
    int pinned;
    void *host_in, *host_out;
    void *device_in, *device_out;
} chunk_memory;

static void chunk_memory_free(chunk_memory *m)
{
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (m->on_gpu) {
        cudaFree(m->device_in);
        cudaFree(m->device_out);
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

static int chunk_memory_alloc(chunk_memory *m, int on_gpu, size_t items, size_t size)
{
    memset(m, 0, sizeof *m);
    m->on_gpu = on_gpu;
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (on_gpu) {
        cudaError_t error = cudaMalloc(&m->device_in, items * size);
        if (error == cudaSuccess)
            error = cudaMalloc(&m->device_out, items * size);
        if (error != cudaSuccess) {
            (void)cudaGetLastError();
            chunk_memory_free(m);
            return fail(STATUS_FAILED, "cudaMalloc of 2 x %zu bytes failed: %s", items * size,
                        cudaGetErrorString(error));
        }
        /* Pinned host memory copies faster; plain memory will do where it runs out. */
        if (cudaMallocHost(&m->host_in, items * size) == cudaSuccess &&
            cudaMallocHost(&m->host_out, (items + 1) * size) == cudaSuccess) {
            m->pinned = 1;
        } else {
            (void)cudaGetLastError();
            cudaFreeHost(m->host_in);
            m->host_in = NULL;
        }
    }
#endif
    if (!m->pinned) {
        m->host_in = malloc(items * size);
        m->host_out = malloc((items + 1) * size);
        if (!m->host_in || !m->host_out) {
            chunk_memory_free(m);
            return fail(STATUS_FAILED, "out of memory: 2 x %zu bytes of host memory", items * size);
        }
    }
    return STATUS_OK;
}

/* out[0..n-1] = exclusive scan of the chunk in host_in, seeded with *seed, in host_out. */
static int scan_chunk(dlscan_handle_t h, chunk_memory *m, size_t n, const type_info *type,
                      dlscan_op op, const scan_value *seed)
{
    dlscan_status status;
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (m->on_gpu) {
        /* The scan and the copies run on the legacy default stream, in order. */
        cudaError_t error = cudaMemcpy(m->device_in, m->host_in, n * type->size, cudaMemcpyHostToDevice);
        if (error != cudaSuccess)
            return fail(STATUS_FAILED, "cudaMemcpy to the GPU failed: %s", cudaGetErrorString(error));
        status = dlscan_exclusive_scan(h, m->device_in, m->device_out, n, type->type, op, seed, NULL);
        if (status != DLSCAN_SUCCESS)
            return fail(STATUS_FAILED, "dlscan_exclusive_scan failed: %s", dlscan_last_error(h));
        error = cudaMemcpy(m->host_out, m->device_out, n * type->size, cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            return fail(STATUS_FAILED, "the scan or the copy back failed: %s",
                        cudaGetErrorString(error));
        return STATUS_OK;
    }
#endif
    status = dlscan_exclusive_scan(h, m->host_in, m->host_out, n, type->type, op, seed, NULL);
    if (status != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_exclusive_scan failed: %s", dlscan_last_error(h));
    return STATUS_OK;
}

/* ================================================================ output files */

/* The temporary file of the output being written, removed if a signal ends the program. */
static char pending_temp_path[4096];
static volatile sig_atomic_t have_pending_temp;

static void remove_pending_temp_and_die(int signal_number)
{
    if (have_pending_temp)
        unlink(pending_temp_path);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

typedef struct output_file {
    FILE *f;
    const char *path; /* NULL: standard output */
    char temp_path[4096];
    mode_t mode;
} output_file;

static int output_open(output_file *out, const char *path)
{
    memset(out, 0, sizeof *out);
    if (strcmp(path, "-") == 0) {
        if (!(out->f = tmpfile()))
            return fail(STATUS_FAILED, "cannot create a temporary file for standard output: %s",
                        strerror(errno));
        return STATUS_OK;
    }
    out->path = path;
    struct stat existing;
    const mode_t mask = umask(0);
    umask(mask);
    out->mode = 0666 & ~mask;
    if (stat(path, &existing) == 0) {
        if (S_ISDIR(existing.st_mode))
            return fail(STATUS_BAD_INPUT, "%s: is a directory", path);
        out->mode = existing.st_mode & 07777; /* keep the replaced file's permissions */
    }
    const char *slash = strrchr(path, '/');
    const int dir_length = slash ? (int)(slash - path) + 1 : 0;
    if (snprintf(out->temp_path, sizeof out->temp_path, "%.*s.%s.dlscan-XXXXXX", dir_length,
                 path, slash ? slash + 1 : path) >= (int)sizeof out->temp_path)
        return fail(STATUS_BAD_INPUT, "%s: the path is too long", path);
    const int fd = mkstemp(out->temp_path);
    if (fd < 0)
        return fail(STATUS_BAD_INPUT, "%s: cannot create a file in %s: %s", path,
                    dir_length ? "its directory" : "the current directory", strerror(errno));
    memcpy(pending_temp_path, out->temp_path, sizeof pending_temp_path);
    have_pending_temp = 1;
    if (!(out->f = fdopen(fd, "wb"))) {
        close(fd);
        unlink(out->temp_path);
        have_pending_temp = 0;
        return fail(STATUS_FAILED, "fdopen failed: %s", strerror(errno));
    }
    return STATUS_OK;
}

static void output_discard(output_file *out)
{
    if (out->f)
        fclose(out->f);
    if (out->path) {
        unlink(out->temp_path);
        have_pending_temp = 0;
    }
    out->f = NULL;
}

/* Completes the output: renames the temporary file into place, or copies it to stdout. */
static int output_commit(output_file *out)
{
    const char *name = out->path ? out->path : "standard output";
    if (fflush(out->f) != 0 || ferror(out->f)) {
        const int saved = errno;
        output_discard(out);
        return fail(STATUS_FAILED, "writing %s failed: %s", name, strerror(saved));
    }
    if (!out->path) {
        rewind(out->f);
        char block[1 << 16];
        size_t got;
        while ((got = fread(block, 1, sizeof block, out->f)) > 0)
            if (fwrite(block, 1, got, stdout) != got)
                break;
        const int failed = ferror(out->f) || ferror(stdout) || fflush(stdout) != 0;
        const int saved = errno;
        output_discard(out);
        return failed ? fail(STATUS_FAILED, "writing standard output failed: %s", strerror(saved))
                      : STATUS_OK;
    }
    if (fchmod(fileno(out->f), out->mode) != 0 || fsync(fileno(out->f)) != 0) {
        const int saved = errno;
        output_discard(out);
        return fail(STATUS_FAILED, "writing %s failed: %s", name, strerror(saved));
    }
    const int closed = fclose(out->f);
    out->f = NULL;
    if (closed != 0 || rename(out->temp_path, out->path) != 0) {
        const int saved = errno;
        output_discard(out);
        return fail(STATUS_FAILED, "writing %s failed: %s", name, strerror(saved));
    }
    have_pending_temp = 0;
    return STATUS_OK;
}

/* ================================================================ input files */

#define MAX_LINE 256 /* text: longer lines cannot hold one number */

typedef struct input_file {
    FILE *f;
    const char *name;          /* the path, or "standard input" */
    long long size;            /* bytes, or -1 where unknown (a pipe) */
    unsigned long long consumed; /* bytes read so far */
    unsigned long long line;   /* text: lines read so far */
} input_file;

static int input_open(input_file *in, const char *path)
{
    memset(in, 0, sizeof *in);
    in->size = -1;
    if (strcmp(path, "-") == 0) {
        in->f = stdin;
        in->name = "standard input";
    } else {
        in->name = path;
        if (!(in->f = fopen(path, "rb")))
            return fail(STATUS_BAD_INPUT, "cannot open %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(in->f), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fail(STATUS_BAD_INPUT, "cannot read %s: it is a directory", in->name);
        if (S_ISREG(st.st_mode))
            in->size = (long long)st.st_size;
    }
    return STATUS_OK;
}

static void input_close(input_file *in)
{
    if (in->f && in->f != stdin)
        fclose(in->f);
    in->f = NULL;
}

static int truncated(const input_file *in, unsigned long long bytes, const type_info *type)
{
    return fail(STATUS_BAD_INPUT,
                "%s: truncated binary input: %llu bytes is not a whole number of %s items "
                "(%zu bytes each)",
                in->name, bytes, type->name, type->size);
}

/* Reads up to `max_items` raw items; *n is how many. */
static int read_binary_chunk(input_file *in, const type_info *type, void *items,
                             size_t max_items, size_t *n)
{
    const size_t got = fread(items, 1, max_items * type->size, in->f);
    if (ferror(in->f))
        return fail(STATUS_BAD_INPUT, "cannot read %s: %s", in->name, strerror(errno));
    in->consumed += got;
    if (got % type->size)
        return truncated(in, in->consumed, type);
    *n = got / type->size;
    return STATUS_OK;
}

/* Reads one line into `line` (without its newline); returns its length, or -1 at the end
 * of the input, or -2 for a line longer than MAX_LINE. */
static long read_line(input_file *in, char line[MAX_LINE + 1])
{
    long length = 0;
    int c;
    while ((c = getc_unlocked(in->f)) != EOF && c != '\n') {
        if (length < MAX_LINE)
            line[length] = (char)c;
        ++length;
    }
    if (c == EOF && length == 0)
        return -1;
    in->consumed += (unsigned long long)length + (c == '\n');
    return length > MAX_LINE ? -2 : length;
}

/* Reads up to `max_items` lines of text, one number each; *n is how many. */
static int read_text_chunk(input_file *in, const type_info *type, void *items, size_t max_items,
                           size_t *n)
{
    char line[MAX_LINE + 1], shown[48];
    size_t count = 0;
    while (count < max_items) {
        const long length = read_line(in, line);
        if (length == -1)
            break;
        ++in->line;
        if (length == -2)
            return fail(STATUS_BAD_INPUT, "%s: line %llu: longer than %d characters; expected one number",
                        in->name, in->line, MAX_LINE);
        const char *start = line, *end = line + length;
        while (start < end && (*start == ' ' || *start == '\t'))
            ++start;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            --end;
        if (start == end)
            return fail(STATUS_BAD_INPUT, "%s: line %llu: empty line; expected a number",
                        in->name, in->line);
        scan_value v;
        switch (parse_value(type->type, start, (size_t)(end - start), &v)) {
        case PARSE_OK: break;
        case PARSE_NOT_A_NUMBER:
            return fail(STATUS_BAD_INPUT, "%s: line %llu: '%s' is not a number of type %s",
                        in->name, in->line, printable(start, (size_t)(end - start), shown),
                        type->name);
        case PARSE_OUT_OF_RANGE:
            return fail(STATUS_BAD_INPUT, "%s: line %llu: %s is out of range for %s (%s)",
                        in->name, in->line, printable(start, (size_t)(end - start), shown),
                        type->name, type->range);
        }
        memcpy((char *)items + count * type->size, &v, type->size);
        ++count;
    }
    if (ferror(in->f))
        return fail(STATUS_BAD_INPUT, "cannot read %s: %s", in->name, strerror(errno));
    *n = count;
    return STATUS_OK;
}

/* ================================================================ progress bar */

typedef struct progress {
    int enabled; /* stderr is a terminal */
    int drawn;
    double start, last_draw;
} progress;

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress_start(progress *p)
{
    p->enabled = isatty(STDERR_FILENO);
    p->drawn = 0;
    p->start = p->last_draw = seconds_now();
}

/* Draws the bar when the input has taken more than a second, at most ten times a second. */
static void progress_update(progress *p, const input_file *in, int final)
{
    if (!p->enabled)
        return;
    const double now = seconds_now();
    if (!final && (now - p->start < 1.0 || now - p->last_draw < 0.1))
        return;
    if (final && !p->drawn)
        return;
    p->last_draw = now;
    p->drawn = 1;
    const double done = (double)in->consumed, rate = done / (now - p->start + 1e-9);
    if (in->size > 0) {
        const double fraction = done / (double)in->size > 1 ? 1 : done / (double)in->size;
        char bar[31];
        for (int k = 0; k < 30; ++k)
            bar[k] = k < (int)(fraction * 30) ? '#' : '-';
        bar[30] = '\0';
        fprintf(stderr, "\rdlscan: [%s] %3d%%  %.2f of %.2f GB  %.0f MB/s ", bar,
                (int)(fraction * 100), done / 1e9, (double)in->size / 1e9, rate / 1e6);
    } else {
        fprintf(stderr, "\rdlscan: %.2f GB read  %.0f MB/s ", done / 1e9, rate / 1e6);
    }
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* ================================================================ dlscan scan */

typedef struct scan_options {
    const type_info *type;
    int have_op;
    dlscan_op op;
    int exclusive;
    const char *init_text;
    int text;
    unsigned long long chunk_items; /* 0: the backend's default */
    backend_choice backend;
    int threads;
    const char *in_path, *out_path;
} scan_options;

#define MAX_CHUNK_ITEMS (1ull << 40)

/* Returns STATUS_OK, or an exit status after printing why. `value` is argv[*i + 1]. */
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
            fputs(usage_text, stdout);
            return -1;
        }
        if (strcmp(a, "--exclusive") == 0) {
            o->exclusive = 1;
            continue;
        }
        static const char *const with_value[] = {"--type",        "--op",      "--init",
                                                 "--format",      "--backend", "--threads",
                                                 "--chunk-items"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; ++k)
            known |= strcmp(a, with_value[k]) == 0;
        if (!known)
            return fail(STATUS_BAD_INPUT, "scan: unknown option '%s'; see 'dlscan --help'", a);
        if (i + 1 >= argc)
            return fail(STATUS_BAD_INPUT, "scan: %s needs a value", a);
        const char *value = argv[++i];
        unsigned long long number;
        if (strcmp(a, "--type") == 0) {
            if (!(o->type = find_type(value)))
                return fail(STATUS_BAD_INPUT, "scan: unknown type '%s' (int32, uint32, int64, "
                                              "uint64, float32 or float64)",
                            value);
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
        return fail(STATUS_BAD_INPUT, "scan: missing --type (int32, uint32, int64, uint64, "
                                      "float32 or float64)");
    if (!o->have_op)
        return fail(STATUS_BAD_INPUT, "scan: missing --op (sum, min or max)");
    if (!o->out_path)
        return fail(STATUS_BAD_INPUT, "scan: missing %s; usage: dlscan scan --type T --op OP "
                                      "[options] IN OUT ('-' for standard input/output)",
                    o->in_path ? "OUT" : "IN and OUT");
    return STATUS_OK;
}

/* Items per chunk: the option, else the backend's default, never more than the input can
 * hold where its size is known. */
static size_t chunk_items_for(const scan_options *o, const input_file *in, int on_gpu)
{
    size_t bytes = on_gpu ? (size_t)256 << 20 : (size_t)64 << 20;
#ifdef DLSCAN_CLI_HAVE_CUDA
    size_t free_bytes = 0, total_bytes = 0;
    if (on_gpu && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && free_bytes / 4 < bytes)
        bytes = free_bytes / 4; /* two device buffers, and room to spare */
#endif
    size_t items = o->chunk_items ? (size_t)o->chunk_items : bytes / o->type->size;
    if (in->size >= 0) {
        /* binary: the file's items; text: a number and a newline take two bytes at least */
        const size_t most = o->text ? (size_t)in->size / 2 + 1 : (size_t)in->size / o->type->size;
        if (most < items)
            items = most;
    }
    return items > 0 ? items : 1;
}

static int cmd_scan(int argc, char **argv)
{
    scan_options o;
    int status = parse_scan_options(argc, argv, &o);
    if (status != STATUS_OK)
        return status < 0 ? STATUS_OK : status;
    const type_info *type = o.type;

    /* The seed of the first chunk: --init, else the identity (exact for inclusive float sums). */
    scan_value carry = identity_of(type->type, o.op, !o.exclusive);
    if (o.init_text) {
        char shown[48];
        switch (parse_value(type->type, o.init_text, strlen(o.init_text), &carry)) {
        case PARSE_OK: break;
        case PARSE_NOT_A_NUMBER:
            return fail(STATUS_BAD_INPUT, "scan: --init: '%s' is not a number of type %s",
                        printable(o.init_text, strlen(o.init_text), shown), type->name);
        case PARSE_OUT_OF_RANGE:
            return fail(STATUS_BAD_INPUT, "scan: --init: %s is out of range for %s (%s)",
                        printable(o.init_text, strlen(o.init_text), shown), type->name, type->range);
        }
    }

    input_file in;
    output_file out = {0};
    dlscan_handle_t h = NULL;
    chunk_memory memory = {0};
    int on_gpu = 0;
    if ((status = input_open(&in, o.in_path)) != STATUS_OK)
        goto done;
    if (!o.text && in.size >= 0 && in.size % (long long)type->size) {
        status = truncated(&in, (unsigned long long)in.size, type);
        goto done;
    }
    if ((status = output_open(&out, o.out_path)) != STATUS_OK ||
        (status = open_handle(o.backend, o.threads, "scanning on the CPU backend", &h, &on_gpu)) != STATUS_OK)
        goto done;
    const size_t chunk = chunk_items_for(&o, &in, on_gpu);
    if ((status = chunk_memory_alloc(&memory, on_gpu, chunk, type->size)) != STATUS_OK)
        goto done;

    progress bar;
    progress_start(&bar);
    for (;;) {
        size_t n = 0;
        status = o.text ? read_text_chunk(&in, type, memory.host_in, chunk, &n)
                        : read_binary_chunk(&in, type, memory.host_in, chunk, &n);
        if (status != STATUS_OK || n == 0)
            break;
        if ((status = scan_chunk(h, &memory, n, type, o.op, &carry)) != STATUS_OK)
            break;
        char *out_items = memory.host_out;
        combine(type->type, o.op, out_items + (n - 1) * type->size,
                (char *)memory.host_in + (n - 1) * type->size, out_items + n * type->size);
        memcpy(&carry, out_items + n * type->size, type->size);
        const char *result = o.exclusive ? out_items : out_items + type->size;
        if (o.text)
            for (size_t i = 0; i < n; ++i)
                write_text_value(out.f, type->type, result + i * type->size);
        else
            fwrite(result, type->size, n, out.f);
        if (ferror(out.f)) {
            status = fail(STATUS_FAILED, "writing %s failed: %s",
                          out.path ? out.path : "standard output", strerror(errno));
            break;
        }
        progress_update(&bar, &in, 0);
        if (n < chunk && !o.text)
            break; /* a short read is the end of a binary input */
    }
    progress_update(&bar, &in, 1);
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

/* ================================================================ dlscan info */

static void print_version_line(void)
{
    const int v = dlscan_version();
    printf("dlscan %d.%d.%d (library %d.%d.%d)\n", DLSCAN_VERSION_MAJOR, DLSCAN_VERSION_MINOR,
           DLSCAN_VERSION_PATCH, v / 10000, v / 100 % 100, v % 100);
}

static int cmd_info(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return STATUS_OK;
        }
        return fail(STATUS_BAD_INPUT, "info: unexpected argument '%s'", argv[i]);
    }
    print_version_line();
    dlscan_handle_t gpu = NULL, cpu = NULL;
    const dlscan_status gpu_status = dlscan_create(&gpu);
#ifdef DLSCAN_CLI_HAVE_CUDA
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    char driver_text[64] = "no CUDA driver";
    if (driver > 0)
        snprintf(driver_text, sizeof driver_text, "driver for CUDA %d.%d", driver / 1000,
                 driver % 1000 / 10);
    printf("GPU backend:  built (CUDA runtime %d.%d, %s)\n", runtime / 1000, runtime % 1000 / 10,
           driver_text);
    int device = 0;
    struct cudaDeviceProp prop;
    if (gpu_status == DLSCAN_SUCCESS && cudaGetDevice(&device) == cudaSuccess &&
        cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        printf("GPU:          device %d: %s, %d SMs, compute capability %d.%d, %.1f GiB\n", device,
               prop.name, prop.multiProcessorCount, prop.major, prop.minor,
               (double)prop.totalGlobalMem / (1 << 30));
#else
    printf("GPU backend:  not built (-Dgpu=disabled or no CUDA toolkit): CPU handles only\n");
#endif
    char reason[256] = "";
    if (gpu_status != DLSCAN_SUCCESS) {
        no_gpu_reason(reason, sizeof reason);
        printf("GPU:          none usable (dlscan_create: %s; %s)\n",
               dlscan_status_string(gpu_status), reason);
    }
    printf("CPU:          %ld online cores\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("Backend:      %s\n", gpu ? "gpu (scan and bench run on the GPU)"
                                     : "cpu (no usable GPU: scan and bench run on the CPU backend)");

    const dlscan_status cpu_status = dlscan_create_cpu(&cpu, 0);
    printf("\nItems per tile:\n%-9s %9s %9s\n", "type", "gpu", "cpu");
    for (size_t t = 0; t < TYPE_COUNT; ++t) {
        size_t gpu_items = 0, cpu_items = 0;
        char gpu_text[32] = "-", cpu_text[32] = "-";
        if (gpu && dlscan_tile_items(gpu, all_types[t].type, &gpu_items) == DLSCAN_SUCCESS)
            snprintf(gpu_text, sizeof gpu_text, "%zu", gpu_items);
        if (cpu && dlscan_tile_items(cpu, all_types[t].type, &cpu_items) == DLSCAN_SUCCESS)
            snprintf(cpu_text, sizeof cpu_text, "%zu", cpu_items);
        printf("%-9s %9s %9s\n", all_types[t].name, gpu_text, cpu_text);
    }
    dlscan_destroy(gpu);
    dlscan_destroy(cpu);
    if (cpu_status != DLSCAN_SUCCESS)
        return fail(STATUS_FAILED, "dlscan_create_cpu failed: %s", dlscan_status_string(cpu_status));
    return STATUS_OK;
}

/* ================================================================ dlscan bench */

/* This program's directory, for finding its helpers. */
static int own_directory(char *dir, size_t size, const char *argv0)
{
    const ssize_t length = readlink("/proc/self/exe", dir, size - 1);
    if (length > 0) {
        dir[length] = '\0';
    } else if (strchr(argv0, '/') && strlen(argv0) < size) {
        strcpy(dir, argv0);
    } else {
        return 0;
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return 1;
}

/* A helper: the environment variable's path, else the first of `places` (relative to this
 * program's directory, or absolute) that exists. */
static int find_helper(const char *variable, const char *const places[], int place_count,
                       const char *argv0, char *path, size_t size)
{
    const char *forced = getenv(variable);
    if (forced && *forced) {
        snprintf(path, size, "%s", forced);
        return access(path, F_OK) == 0;
    }
    char dir[4096];
    const int have_dir = own_directory(dir, sizeof dir, argv0);
    for (int k = 0; k < place_count; ++k) {
        if (places[k][0] == '/')
            snprintf(path, size, "%s", places[k]);
        else if (have_dir)
            snprintf(path, size, "%s/%s", dir, places[k]);
        else
            continue;
        if (access(path, F_OK) == 0)
            return 1;
    }
    return 0;
}

/* Runs a program and waits for it. Returns its exit status, or -1 if it could not run. */
static int run_program(char *const argv[], int quiet)
{
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (quiet) {
            FILE *null = fopen("/dev/null", "w");
            if (null) {
                dup2(fileno(null), STDOUT_FILENO);
                dup2(fileno(null), STDERR_FILENO);
            }
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int wait_status;
    while (waitpid(pid, &wait_status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

static int cmd_bench(int argc, char **argv, const char *argv0)
{
    cpu_sweep_options sweep;
    cpu_sweep_default_options(&sweep);
    backend_choice backend = BACKEND_AUTO;
    const char *plot = NULL, *gpu_only = NULL;
    char error[512];
    /* The GPU harness gets the options as given, less those of this command. */
    char **forwarded = calloc((size_t)argc + 4, sizeof *forwarded);
    int forwarded_count = 0, status = STATUS_OK;
    if (!forwarded)
        return fail(STATUS_FAILED, "out of memory");
    for (int i = 0; i < argc && status == STATUS_OK; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            free(forwarded);
            return STATUS_OK;
        }
        const int is_backend = strcmp(a, "--backend") == 0, is_plot = strcmp(a, "--plot") == 0;
        const int gpu_flag = strcmp(a, "--stats") == 0;
        const int gpu_value = strcmp(a, "--variants") == 0 || strcmp(a, "--markdown") == 0;
        if ((is_backend || is_plot || gpu_value) && i + 1 >= argc) {
            status = fail(STATUS_BAD_INPUT, "bench: %s needs a value", a);
        } else if (is_backend) {
            if (!parse_backend(argv[++i], &backend))
                status = fail(STATUS_BAD_INPUT, "bench: unknown backend '%s' (auto, gpu or cpu)",
                              argv[i]);
        } else if (is_plot) {
            plot = argv[++i];
        } else if (gpu_flag || gpu_value) {
            gpu_only = a;
            forwarded[forwarded_count++] = argv[i];
            if (gpu_value)
                forwarded[forwarded_count++] = argv[++i];
        } else {
            const int first = i;
            const int parsed = cpu_sweep_parse_option(&sweep, argc, argv, &i, error, sizeof error);
            if (parsed == 0)
                status = fail(STATUS_BAD_INPUT, "bench: unknown option '%s'; see 'dlscan --help'", a);
            else if (parsed < 0)
                status = fail(STATUS_BAD_INPUT, "bench: %s", error);
            else if (strcmp(a, "--threads") != 0)
                for (int k = first; k <= i; ++k)
                    forwarded[forwarded_count++] = argv[k];
        }
    }
    if (status == STATUS_OK && cpu_sweep_check_options(&sweep, error, sizeof error) != 0)
        status = fail(STATUS_BAD_INPUT, "bench: %s", error);

    char plot_script[4096] = "";
    if (status == STATUS_OK && plot) {
        static const char *const plot_places[] = {DLSCAN_CLI_LIBEXEC "/plot.py", "plot.py"};
        char *check[] = {"python3", "-c", "import matplotlib", NULL};
        if (!find_helper("DLSCAN_PLOT", plot_places, 2, argv0, plot_script, sizeof plot_script))
            status = fail(STATUS_FAILED, "bench: --plot: cannot find plot.py (set DLSCAN_PLOT to "
                                         "bench/plot.py)");
        else if (run_program(check, 1) != 0)
            status = fail(STATUS_FAILED, "bench: --plot needs python3 with matplotlib");
    }

    int on_gpu = 0;
    if (status == STATUS_OK && backend != BACKEND_CPU) {
        dlscan_handle_t h = NULL;
        status = open_handle(backend, 0, "running the CPU sweep instead (dlscan's CPU "
                                         "backend, a sequential loop and memcpy)",
                             &h, &on_gpu);
        dlscan_destroy(h);
    }
    if (status == STATUS_OK && !on_gpu && gpu_only)
        status = fail(STATUS_BAD_INPUT, "bench: %s is an option of the GPU bench; this sweep runs "
                                        "on the CPU",
                      gpu_only);

    /* --plot without --csv: the CSV goes to a temporary file. */
    char temp_csv[4096] = "";
    if (status == STATUS_OK && plot && !sweep.csv) {
        const char *tmp = getenv("TMPDIR");
        snprintf(temp_csv, sizeof temp_csv, "%s/dlscan-bench-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        const int fd = mkstemp(temp_csv);
        if (fd < 0) {
            status = fail(STATUS_FAILED, "cannot create a temporary file for the CSV: %s",
                          strerror(errno));
            temp_csv[0] = '\0';
        } else {
            close(fd);
            sweep.csv = temp_csv;
            forwarded[forwarded_count++] = "--csv";
            forwarded[forwarded_count++] = temp_csv;
        }
    }

    if (status == STATUS_OK && on_gpu) {
        static const char *const bench_places[] = {DLSCAN_CLI_LIBEXEC "/bench", "../bench/bench"};
        char harness[4096];
        if (!find_helper("DLSCAN_BENCH", bench_places, 2, argv0, harness, sizeof harness)) {
            status = fail(STATUS_FAILED, "bench: cannot find the GPU bench harness (set "
                                         "DLSCAN_BENCH to bench/bench in a build tree)");
        } else {
            char **bench_argv = calloc((size_t)forwarded_count + 2, sizeof *bench_argv);
            if (!bench_argv) {
                status = fail(STATUS_FAILED, "out of memory");
            } else {
                bench_argv[0] = harness;
                memcpy(bench_argv + 1, forwarded, (size_t)forwarded_count * sizeof *forwarded);
                const int code = run_program(bench_argv, 0);
                if (code != 0)
                    status = fail(STATUS_FAILED, "bench: the GPU bench harness %s %s", harness,
                                  code < 0 ? "could not run" : "failed");
                free(bench_argv);
            }
        }
    } else if (status == STATUS_OK) {
        status = cpu_sweep_run(&sweep, stdout, error, sizeof error);
        if (status != STATUS_OK)
            fail(status, "bench: %s", error);
    }

    if (status == STATUS_OK && plot) {
        char *plot_argv[] = {"python3", plot_script, (char *)sweep.csv, (char *)plot, NULL};
        if (run_program(plot_argv, 0) != 0)
            status = fail(STATUS_FAILED, "bench: plot.py could not draw %s", plot);
    }
    if (temp_csv[0])
        unlink(temp_csv);
    free(forwarded);
    return status;
}

/* ================================================================ main */

int main(int argc, char **argv)
{
    /* --name=value is --name value. */
    char **args = calloc(2 * (size_t)argc + 1, sizeof *args);
    if (!args)
        return fail(STATUS_FAILED, "out of memory");
    int count = 0, options_end = 0;
    for (int i = 0; i < argc; ++i) {
        char *equals = argv[i][0] == '-' && argv[i][1] == '-' ? strchr(argv[i], '=') : NULL;
        options_end |= strcmp(argv[i], "--") == 0;
        if (equals && !options_end) {
            *equals = '\0';
            args[count++] = argv[i];
            args[count++] = equals + 1;
        } else {
            args[count++] = argv[i];
        }
    }

    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof signals / sizeof signals[0]; ++k)
        signal(signals[k], remove_pending_temp_and_die);

    int status;
    const char *command = count > 1 ? args[1] : NULL;
    if (!command) {
        status = fail(STATUS_BAD_INPUT, "missing command; the commands are info, scan and bench "
                                        "(see 'dlscan --help')");
    } else if (strcmp(command, "scan") == 0) {
        status = cmd_scan(count - 2, args + 2);
    } else if (strcmp(command, "info") == 0) {
        status = cmd_info(count - 2, args + 2);
    } else if (strcmp(command, "bench") == 0) {
        status = cmd_bench(count - 2, args + 2, args[0]);
    } else if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0 ||
               strcmp(command, "-h") == 0) {
        fputs(usage_text, stdout);
        status = STATUS_OK;
    } else if (strcmp(command, "--version") == 0) {
        print_version_line();
        status = STATUS_OK;
    } else {
        status = fail(STATUS_BAD_INPUT, "%s '%s'; the commands are info, scan and bench (see "
                                        "'dlscan --help')",
                      command[0] == '-' ? "unknown option" : "unknown command", command);
    }
    if (fflush(stdout) != 0 && status == STATUS_OK)
        status = fail(STATUS_FAILED, "writing standard output failed: %s", strerror(errno));
    free(args);
    return status;
}
