/*
 * test_cli.c: the `dlscan` command (tools/), run as a program, in the `host`
 * suite: round trips through files (every type, binary and text, inclusive and exclusive,
 * every operator, in small chunks so that the carry crosses chunk edges, --init, standard
 * input and output, in place); --out-type (pairs into wider types, chunked and not, 8- and
 * 16-bit types into themselves, the pairs the library refuses); float16 and bfloat16 in text;
 * segmented scans (--keys, --key-type and --offsets against a sequential reference, chunked
 * output byte for byte the unchunked one, items in no segment, empty segments, bad keys and
 * offsets); and every error case: the exit status, the one line on stderr, and no output file (nor
 * temporary file) left behind. Then what a hostile test
 * found (issue 25): signals that leave temporary files, FIFOs, devices and symbolic links
 * as OUT, read-only files, negative unsigned numbers after white space, long numbers; and
 * Unix habits: IN and OUT left out, pipes written as the result is computed, --quiet, -V,
 * one command's help, the man page. And what issue 40 found: closed standard descriptors,
 * --op's default, the quiet build without a GPU, binary to a terminal, text taken for
 * binary, numbers separated by any white space and whole numbers as 1e3, float16 and
 * bfloat16 rounded once from decimal text, the fewest digits of floats, a replaced OUT's
 * owner; the compaction commands (select, unique, run-length-encode) against references,
 * in chunks; the manual's examples, run.
 *
 * Scans run with --backend cpu, so no GPU is needed. DLSCAN_CLI names the program
 * (tests/meson.build sets it). Float inputs are small integers, so every float32 and float64
 * sum is exact, and outputs are compared bit for bit with the reference below, which rounds
 * float16 and bfloat16 with this file's own conversions.
 */
#define _XOPEN_SOURCE 700 /* mknod, posix_openpt */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dlscan.h"

/* ---------------------------------------------------------------- the work directory */

static char work_dir[256];

static void make_work_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(work_dir, sizeof work_dir, "%s/dlscan-cli-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert(mkdtemp(work_dir), "mkdtemp: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN); /* writes to a command that stopped reading return EPIPE */
}

static void remove_work_dir(void)
{
    DIR *dir = opendir(work_dir);
    if (!dir)
        return;
    char path[512];
    for (struct dirent *e; (e = readdir(dir));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", work_dir, e->d_name);
        if (rmdir(path) != 0)
            unlink(path);
    }
    closedir(dir);
    rmdir(work_dir);
}

TestSuite(cli, .init = make_work_dir, .fini = remove_work_dir, .timeout = 120);

/* A path in the work directory. Eight rotating buffers, so a call can take several (up to
 * six: running the command takes two). */
static const char *in_work(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", work_dir, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "cannot write %s", path);
    cr_assert_eq(fwrite(data, 1, size, f), size);
    fclose(f);
}

/* The whole file, NUL-terminated; *size without the NUL. NULL if it cannot be read. */
static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t capacity = 4096, used = 0, got;
    char *data = malloc(capacity + 1);
    while ((got = fread(data + used, 1, capacity - used, f)) > 0) {
        used += got;
        if (used == capacity)
            data = realloc(data, (capacity *= 2) + 1);
    }
    fclose(f);
    data[used] = '\0';
    if (size)
        *size = used;
    return data;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Temporary files of the command that are still in `dir`. */
static int leftover_in(const char *dir)
{
    DIR *d = opendir(dir);
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        count += strstr(e->d_name, ".dlscan-") != NULL;
    if (d)
        closedir(d);
    return count;
}

/* ... in the work directory. */
static int leftover_temporary_files(void) { return leftover_in(work_dir); }

/* ---------------------------------------------------------------- running the command */

typedef struct cli_run {
    int status;      /* exit status; -1 if it did not exit */
    char *out;       /* standard output */
    size_t out_size;
    char *err;       /* standard error */
} cli_run;

static void cli_run_free(cli_run *r)
{
    free(r->out);
    free(r->err);
}

/* A pipe whose ends the command does not inherit but as its standard streams. */
static void make_pipe(int fds[2])
{
    cr_assert(pipe(fds) == 0);
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
}

/* Starts `dlscan args...` (args ends with NULL) with a pipe as stdin (*to_stdin: its write
 * end; to_stdin NULL: stdin closed) and the descriptors `out` and `err` as stdout and stderr
 * (-1: closed). `sigpipe` is SIGPIPE's action in it (this test ignores SIGPIPE, and so would
 * the command); it dumps no core. */
static pid_t start_cli(const char *const *args, int *to_stdin, int out, int err,
                       void (*sigpipe)(int))
{
    const char *cli = getenv("DLSCAN_CLI");
    cr_assert(cli, "DLSCAN_CLI is not set (tests/meson.build sets it to the dlscan program)");
    const char *argv[64] = {cli};
    int argc = 1;
    while (args[argc - 1] && argc < 63)
        argv[argc] = args[argc - 1], ++argc;
    argv[argc] = NULL;
    int to_child[2];
    make_pipe(to_child);
    const pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        const int from[3] = {to_stdin ? to_child[0] : -1, out, err};
        for (int fd = 0; fd < 3; ++fd)
            if (from[fd] >= 0)
                dup2(from[fd], fd);
            else
                close(fd);
        /* The command starts with every signal at its default and none blocked, whatever
         * this test inherited (under nohup, SIGHUP is ignored, and the command keeps an
         * ignored signal ignored); then SIGPIPE as asked. */
        for (int s = 1; s <= SIGRTMAX; ++s)
            if (s != SIGKILL && s != SIGSTOP)
                signal(s, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, sigpipe);
        const struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        execv(cli, (char *const *)argv);
        _exit(127);
    }
    close(to_child[0]);
    if (to_stdin)
        *to_stdin = to_child[1];
    else
        close(to_child[1]);
    return pid;
}

/* Runs `dlscan args...` (args ends with NULL) with `input` (or nothing) on stdin, through
 * a pipe, so that its size is unknown to the command; stdout and stderr are files. The
 * descriptor `closed` (0-2; -1: none) is closed in the command. */
static cli_run run_cli_closing(int closed, const void *input, size_t input_size,
                               const char *const *args)
{
    const char *out_path = in_work("stdout"), *err_path = in_work("stderr");
    const int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert(out >= 0 && err >= 0);
    int to_child = -1;
    const pid_t pid = start_cli(args, closed == 0 ? NULL : &to_child, closed == 1 ? -1 : out,
                                closed == 2 ? -1 : err, SIG_IGN);
    close(out);
    close(err);
    for (size_t done = 0; input && to_child >= 0 && done < input_size;) {
        const ssize_t wrote = write(to_child, (const char *)input + done, input_size - done);
        if (wrote <= 0)
            break; /* the command stopped reading */
        done += (size_t)wrote;
    }
    if (to_child >= 0)
        close(to_child);
    int wait_status;
    cr_assert(waitpid(pid, &wait_status, 0) == pid);
    cli_run r = {WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1, NULL, 0, NULL};
    r.out = read_file(out_path, &r.out_size);
    r.err = read_file(err_path, NULL);
    unlink(out_path);
    unlink(err_path);
    cr_assert(r.out && r.err);
    return r;
}

static cli_run run_cli_with_input(const void *input, size_t input_size, const char *const *args)
{
    return run_cli_closing(-1, input, input_size, args);
}

#define RUN_CLI(...) run_cli_with_input(NULL, 0, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_CLI_WITH_INPUT(data, size, ...)                                                       \
    run_cli_with_input(data, size, (const char *const[]){__VA_ARGS__, NULL})

static void expect_success(const cli_run *r)
{
    cr_assert_eq(r->status, 0, "exit status %d; stderr: %s", r->status, r->err);
}

/* Exit status `status`, and stderr is one line "dlscan: ..." that contains `needle`. */
static void expect_error(const cli_run *r, int status, const char *needle)
{
    cr_assert_eq(r->status, status, "exit status %d, expected %d; stderr: %s", r->status, status,
                 r->err);
    cr_assert(strncmp(r->err, "dlscan: ", 8) == 0, "stderr does not start with 'dlscan: ': %s",
              r->err);
    const char *newline = strchr(r->err, '\n');
    cr_assert(newline && newline[1] == '\0', "stderr is not one line: %s", r->err);
    cr_assert(strstr(r->err, needle), "stderr does not say '%s': %s", needle, r->err);
    cr_assert_eq(leftover_temporary_files(), 0, "a temporary file was left behind");
}

/* ---------------------------------------------------------------- values and the reference */

typedef struct type_case {
    const char *name;
    dlscan_type type;
    size_t size;
} type_case;

/* In dlscan_type's order. */
static const type_case every_type[] = {
    {"int32", DLSCAN_INT32, 4},     {"uint32", DLSCAN_UINT32, 4},   {"int64", DLSCAN_INT64, 8},
    {"uint64", DLSCAN_UINT64, 8},   {"float32", DLSCAN_FLOAT32, 4}, {"float64", DLSCAN_FLOAT64, 8},
    {"int8", DLSCAN_INT8, 1},       {"uint8", DLSCAN_UINT8, 1},     {"int16", DLSCAN_INT16, 2},
    {"uint16", DLSCAN_UINT16, 2},   {"float16", DLSCAN_FLOAT16, 2}, {"bfloat16", DLSCAN_BFLOAT16, 2},
};
#define TYPE(name) (&every_type[DLSCAN_##name])
static const char *const op_names[] = {"sum", "min", "max"};

typedef union value {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16; /* also the bits of float16 and bfloat16 */
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
} value;

/* float16 and bfloat16, this test's own conversions (bit by bit, unlike the command's):
 * to float exactly, from float rounded to the nearest, ties to even. */
static float half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f,
                   fraction = h & 0x3ffu;
    if (exponent == 0) { /* a subnormal: steps of 2^-24 */
        const float f = (float)fraction / 16777216.0f;
        return sign ? -f : f;
    }
    const uint32_t x = sign | (exponent == 31 ? 0x7f800000 : (exponent + 112) << 23) | fraction << 13;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* The integer part of m / 2^shift, rounded to the nearest, ties to even. */
static uint32_t shift_rounding(uint32_t m, int shift)
{
    const uint32_t half = 1u << (shift - 1), rest = m & ((1u << shift) - 1);
    const uint32_t q = m >> shift;
    return q + (rest > half || (rest == half && (q & 1)));
}

static uint16_t half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    const uint32_t magnitude = x & 0x7fffffff;
    if (magnitude > 0x7f800000)
        return sign | 0x7e00;
    if (magnitude >= 0x477ff000) /* 65520 and up round to infinity */
        return sign | 0x7c00;
    if (magnitude < 0x38800000) { /* below 2^-14: a subnormal, in steps of 2^-24 */
        const int shift = 126 - (int)(magnitude >> 23);
        return shift > 24 ? sign : sign | (uint16_t)shift_rounding((magnitude & 0x7fffff) | 0x800000, shift);
    }
    return sign | (uint16_t)shift_rounding(magnitude - (112u << 23), 13); /* bias 127 to 15 */
}

static float bfloat16_to_float(uint16_t b)
{
    const uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t bfloat16_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)(((x >> 31) << 15) | shift_rounding(x & 0x7fffffff, 16));
}

static int is_float(dlscan_type type)
{
    return type == DLSCAN_FLOAT32 || type == DLSCAN_FLOAT64 || type == DLSCAN_FLOAT16 ||
           type == DLSCAN_BFLOAT16;
}

static int is_signed(dlscan_type type)
{
    return type == DLSCAN_INT8 || type == DLSCAN_INT16 || type == DLSCAN_INT32 ||
           type == DLSCAN_INT64;
}

static double float_value(value v, dlscan_type type)
{
    switch (type) {
    case DLSCAN_FLOAT16: return half_to_float(v.u16);
    case DLSCAN_BFLOAT16: return bfloat16_to_float(v.u16);
    case DLSCAN_FLOAT32: return v.f32;
    default: return v.f64;
    }
}

/* An integer's bits, sign-extended to 64. */
static uint64_t integer_value(value v, dlscan_type type)
{
    switch (type) {
    case DLSCAN_INT8: return (uint64_t)(int64_t)v.i8;
    case DLSCAN_UINT8: return v.u8;
    case DLSCAN_INT16: return (uint64_t)(int64_t)v.i16;
    case DLSCAN_UINT16: return v.u16;
    case DLSCAN_INT32: return (uint64_t)(int64_t)v.i32;
    case DLSCAN_UINT32: return v.u32;
    default: return v.u64;
    }
}

/* v as C converts it from `from` to `to`: integers widen (sign-extended) or keep their low
 * bits, floats round to the nearest. */
static value convert(value v, dlscan_type from, dlscan_type to)
{
    value r;
    memset(&r, 0, sizeof r);
    if (is_float(to)) {
        const double x = !is_float(from) && is_signed(from) ? (double)(int64_t)integer_value(v, from)
                         : !is_float(from)                  ? (double)integer_value(v, from)
                                                            : float_value(v, from);
        switch (to) {
        case DLSCAN_FLOAT16: r.u16 = half_from_float((float)x); break;
        case DLSCAN_BFLOAT16: r.u16 = bfloat16_from_float((float)x); break;
        case DLSCAN_FLOAT32: r.f32 = (float)x; break;
        default: r.f64 = x; break;
        }
        return r;
    }
    const uint64_t bits = integer_value(v, from); /* little-endian: the low bytes first */
    memcpy(&r, &bits, sizeof bits);
    memset((char *)&r + every_type[to].size, 0, sizeof r - every_type[to].size);
    return r;
}

/* Where dlscan.h says a scan of `in` into `out` accumulates: 8- and 16-bit types into
 * themselves in 32 bits, every other pair in the output type. */
static dlscan_type accumulator(dlscan_type in, dlscan_type out)
{
    if (in != out || every_type[out].size >= 4)
        return out;
    return is_float(out) ? DLSCAN_FLOAT32 : is_signed(out) ? DLSCAN_INT32 : DLSCAN_UINT32;
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Integers: all bits random (sums wrap around); floats: integers in [-100, 100]. */
static value random_value(dlscan_type type, uint64_t *rng)
{
    const uint64_t r = next_random(rng);
    value v;
    memset(&v, 0, sizeof v);
    if (!is_float(type)) {
        memcpy(&v, &r, every_type[type].size);
        return v;
    }
    value small = {.f64 = (double)((int)(r % 201) - 100)};
    return convert(small, DLSCAN_FLOAT64, type);
}

static value identity(dlscan_type type, dlscan_op op)
{
    value v;
    memset(&v, 0, sizeof v);
    if (op == DLSCAN_SUM) { /* -0.0 for floats (dlscan.h: so that a sum of -0.0 items is -0.0) */
        const value minus_zero = {.f64 = -0.0};
        return is_float(type) ? convert(minus_zero, DLSCAN_FLOAT64, type) : v;
    }
    const int max = op == DLSCAN_MAX;
    if (is_float(type)) {
        const value infinity = {.f64 = max ? -HUGE_VAL : HUGE_VAL};
        return convert(infinity, DLSCAN_FLOAT64, type);
    }
    const int bits = 8 * (int)every_type[type].size;
    const uint64_t all = UINT64_MAX >> (64 - bits);
    /* min: the largest value (all ones; signed: but the sign bit); max: the smallest */
    const uint64_t extreme = is_signed(type) ? (max ? ~(all >> 1) : all >> 1) : (max ? 0 : all);
    memcpy(&v, &extreme, every_type[type].size);
    return v;
}

#define PICK(a, b) (op == DLSCAN_MIN ? ((b) < (a) ? (b) : (a)) : ((a) < (b) ? (b) : (a)))

/* a op b in one of the six accumulator types. */
static value apply(dlscan_type type, dlscan_op op, value a, value b)
{
    value r;
    memset(&r, 0, sizeof r);
    switch (type) {
    case DLSCAN_INT32: r.i32 = op == DLSCAN_SUM ? (int32_t)(a.u32 + b.u32) : PICK(a.i32, b.i32); break;
    case DLSCAN_UINT32: r.u32 = op == DLSCAN_SUM ? a.u32 + b.u32 : PICK(a.u32, b.u32); break;
    case DLSCAN_INT64: r.i64 = op == DLSCAN_SUM ? (int64_t)(a.u64 + b.u64) : PICK(a.i64, b.i64); break;
    case DLSCAN_UINT64: r.u64 = op == DLSCAN_SUM ? a.u64 + b.u64 : PICK(a.u64, b.u64); break;
    case DLSCAN_FLOAT32: r.f32 = op == DLSCAN_SUM ? a.f32 + b.f32 : PICK(a.f32, b.f32); break;
    case DLSCAN_FLOAT64: r.f64 = op == DLSCAN_SUM ? a.f64 + b.f64 : PICK(a.f64, b.f64); break;
    default: cr_assert_fail("%s is no accumulator type", every_type[type].name);
    }
    return r;
}

/* The sequential scan of `in` items into `out` items, as the command documents it: each item
 * converted, folded in the accumulator, each output rounded to `out`; init (of `out`) NULL:
 * the identity. */
static void reference_scan(const type_case *in_t, const type_case *out_t, dlscan_op op,
                           int exclusive, const value *init, const value *in, value *out, size_t n)
{
    const dlscan_type acc_type = accumulator(in_t->type, out_t->type);
    value acc = convert(init ? *init : identity(out_t->type, op), out_t->type, acc_type);
    for (size_t i = 0; i < n; ++i) {
        if (exclusive)
            out[i] = convert(acc, acc_type, out_t->type);
        acc = apply(acc_type, op, acc, convert(in[i], in_t->type, acc_type));
        if (!exclusive)
            out[i] = convert(acc, acc_type, out_t->type);
    }
}

/* Values as a binary file's bytes. */
static char *to_binary(const type_case *t, const value *values, size_t n)
{
    char *bytes = malloc(n * t->size + 1);
    for (size_t i = 0; i < n; ++i)
        memcpy(bytes + i * t->size, &values[i], t->size);
    return bytes;
}

static void format_value(const type_case *t, value v, char *text, size_t size)
{
    if (is_float(t->type))
        snprintf(text, size, "%.17g", float_value(v, t->type));
    else if (is_signed(t->type))
        snprintf(text, size, "%" PRId64, (int64_t)integer_value(v, t->type));
    else
        snprintf(text, size, "%" PRIu64, integer_value(v, t->type));
}

/* Values as a text file: one number per line. */
static char *to_text(const type_case *t, const value *values, size_t n, size_t *size)
{
    char *text = malloc(n * 32 + 1);
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
        format_value(t, values[i], text + used, 32);
        used += strlen(text + used);
        text[used++] = '\n';
    }
    text[used] = '\0';
    *size = used;
    return text;
}

/* Checks that `got` (a binary or text output) holds exactly the n values `expected`. */
static void expect_values(const type_case *t, int text, const char *got, size_t got_size,
                          const value *expected, size_t n, const char *what)
{
    if (!text) {
        cr_assert_eq(got_size, n * t->size, "%s: %zu bytes, expected %zu", what, got_size,
                     n * t->size);
        for (size_t i = 0; i < n; ++i)
            cr_assert(memcmp(got + i * t->size, &expected[i], t->size) == 0,
                      "%s: item %zu of %zu differs", what, i, n);
        return;
    }
    const char *line = got;
    for (size_t i = 0; i < n; ++i) {
        cr_assert(line < got + got_size, "%s: %zu lines, expected %zu", what, i, n);
        char *end;
        value read, v;
        memset(&read, 0, sizeof read);
        if (t->type == DLSCAN_FLOAT64) {
            read.f64 = strtod(line, &end);
            v = read;
        } else if (is_float(t->type)) { /* 16-bit floats: the float strtof reads, rounded */
            read.f32 = strtof(line, &end);
            v = convert(read, DLSCAN_FLOAT32, t->type);
        } else {
            if (is_signed(t->type))
                read.i64 = strtoll(line, &end, 10);
            else
                read.u64 = strtoull(line, &end, 10);
            v = convert(read, is_signed(t->type) ? DLSCAN_INT64 : DLSCAN_UINT64, t->type);
        }
        char want[32];
        format_value(t, expected[i], want, sizeof want);
        cr_assert(*end == '\n' && memcmp(&v, &expected[i], t->size) == 0,
                  "%s: line %zu is '%.*s', expected %s", what, i + 1, (int)strcspn(line, "\n"),
                  line, want);
        line = end + 1;
    }
    cr_assert_eq(line, got + got_size, "%s: more than %zu lines", what, n);
}

/* ---------------------------------------------------------------- round trips */

/* Parameters are indices into every_type: Criterion copies them into its worker process,
 * where pointers would not hold. */
ParameterizedTestParameters(cli, round_trip_every_operator_format_and_chunking)
{
    static int type_indices[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    return cr_make_param_array(int, type_indices, sizeof type_indices / sizeof type_indices[0]);
}

/* 1000 items; chunks of 7 items leave a short last chunk, chunks of 1000 make one. */
ParameterizedTest(int *type_index, cli, round_trip_every_operator_format_and_chunking)
{
    const type_case *t = &every_type[*type_index];
    const size_t n = 1000;
    uint64_t rng = 0x5eed + (uint64_t)t->type;
    value in[1000], expected[1000];
    for (size_t i = 0; i < n; ++i)
        in[i] = random_value(t->type, &rng);
    size_t text_size;
    char *binary = to_binary(t, in, n), *text = to_text(t, in, n, &text_size);
    write_file(in_work("in.bin"), binary, n * t->size);
    write_file(in_work("in.txt"), text, text_size);
    for (int text_format = 0; text_format < 2; ++text_format)
        for (int exclusive = 0; exclusive < 2; ++exclusive)
            for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
                for (int chunked = 0; chunked < 2; ++chunked) {
                    const char *out = in_work("out");
                    cli_run r = RUN_CLI("scan", "--type", t->name, "--op", op_names[op],
                                        exclusive ? "--exclusive" : "--threads=2", "--backend",
                                        "cpu", "--format", text_format ? "text" : "binary",
                                        "--chunk-items", chunked ? "7" : "1000",
                                        in_work(text_format ? "in.txt" : "in.bin"), out);
                    char what[128];
                    snprintf(what, sizeof what, "%s %s %s, %s, %s", t->name,
                             exclusive ? "exclusive" : "inclusive", op_names[op],
                             text_format ? "text" : "binary", chunked ? "chunks of 7" : "one chunk");
                    cr_assert_eq(r.status, 0, "%s: exit status %d: %s", what, r.status, r.err);
                    cr_assert_str_eq(r.err, "", "%s: stderr: %s", what, r.err);
                    reference_scan(t, t, (dlscan_op)op, exclusive, NULL, in, expected, n);
                    size_t size;
                    char *got = read_file(out, &size);
                    cr_assert(got, "%s: no output file", what);
                    expect_values(t, text_format, got, size, expected, n, what);
                    free(got);
                    cli_run_free(&r);
                    unlink(out);
                }
    free(binary);
    free(text);
}

/* --init is folded in front of the first item, in every chunk's carry. */
Test(cli, init_is_folded_in_front_of_every_chunk)
{
    static const type_case *const types[] = {TYPE(INT64), TYPE(FLOAT64), TYPE(UINT32),
                                             TYPE(INT8), TYPE(FLOAT16)};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; ++k) {
        const type_case *t = types[k];
        const size_t n = 100;
        uint64_t rng = 77 + k;
        value in[100], expected[100], init;
        for (size_t i = 0; i < n; ++i)
            in[i] = random_value(t->type, &rng);
        char *binary = to_binary(t, in, n), init_text[32];
        write_file(in_work("in.bin"), binary, n * t->size);
        for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
            for (int exclusive = 0; exclusive < 2; ++exclusive) {
                init = random_value(t->type, &rng);
                format_value(t, init, init_text, sizeof init_text);
                cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", t->name, "--op",
                                    op_names[op], "--init", init_text, "--chunk-items", "9",
                                    exclusive ? "--exclusive" : "--threads=1",
                                    in_work("in.bin"), in_work("out.bin"));
                expect_success(&r);
                reference_scan(t, t, (dlscan_op)op, exclusive, &init, in, expected, n);
                size_t size;
                char *got = read_file(in_work("out.bin"), &size);
                expect_values(t, 0, got, size, expected, n, "--init");
                free(got);
                cli_run_free(&r);
            }
        free(binary);
    }
}

/* ---------------------------------------------------------------- under mpiexec */

/* Under mpiexec (where the command has the MPI binding: tests/meson.build names mpiexec in
 * DLSCAN_MPIEXEC), 1, 2, 3 and 5 ranks split one file and write one output, byte for byte the
 * one process's: an exclusive int64 sum with --init, a float16 max, int32 into int64. Text
 * and standard output are refused, and leave nothing. */
Test(cli, mpiexec_ranks_split_one_file, .timeout = 120)
{
    const char *mpiexec = getenv("DLSCAN_MPIEXEC");
    if (!mpiexec || !*mpiexec)
        cr_skip_test("this dlscan command has no MPI binding");
    static const char *const scans[] = {"--type int64 --exclusive --init 5", "--type float16 --op max",
                                        "--type int32 --out-type int64"};
    static const int rank_counts[] = {1, 2, 3, 5};
    uint64_t rng = 4242;
    const size_t n = 20011;
    uint64_t *bits = malloc(n * sizeof *bits);
    cr_assert(bits);
    for (size_t i = 0; i < n; ++i) /* float16 items: finite ones; int32 and int64: any */
        bits[i] = next_random(&rng) & 0x3bff3bff3bff3bffull;
    write_file(in_work("in.bin"), bits, n * sizeof *bits);
    char command[4096];
    for (size_t k = 0; k < sizeof scans / sizeof scans[0]; ++k) {
        snprintf(command, sizeof command, "%s scan --backend cpu %s %s %s", getenv("DLSCAN_CLI"), scans[k],
                 in_work("in.bin"), in_work("one.bin"));
        cr_assert_eq(system(command), 0, "%s", command);
        size_t want_size = 0, got_size = 0;
        char *want = read_file(in_work("one.bin"), &want_size);
        for (size_t r = 0; r < sizeof rank_counts / sizeof rank_counts[0]; ++r) {
            snprintf(command, sizeof command, "%s -n %d %s scan --backend cpu %s %s %s", mpiexec, rank_counts[r],
                     getenv("DLSCAN_CLI"), scans[k], in_work("in.bin"), in_work("ranks.bin"));
            cr_assert_eq(system(command), 0, "%s", command);
            char *got = read_file(in_work("ranks.bin"), &got_size);
            cr_expect(got_size == want_size && memcmp(got, want, want_size) == 0, "%d ranks: %s", rank_counts[r],
                      scans[k]);
            free(got);
            remove(in_work("ranks.bin"));
        }
        free(want);
    }
    snprintf(command, sizeof command, "%s -n 2 %s scan --backend cpu --type int64 --format text %s %s 2>/dev/null",
             mpiexec, getenv("DLSCAN_CLI"), in_work("in.bin"), in_work("text.txt"));
    cr_expect_neq(system(command), 0, "text under mpiexec");
    cr_expect(!file_exists(in_work("text.txt")), "a refused scan under mpiexec left its output");
    cr_expect(!leftover_temporary_files(), "a scan under mpiexec left a temporary file");
    free(bits);
}

/* ---------------------------------------------------------------- output types */

/* --out-type: each item converted as C converts it, the scan in the output type, --init a
 * value of the output type. Values overflow the input type, not the output type. Chunks of
 * 7 items give what one chunk gives, byte for byte. */
Test(cli, out_type_scans_into_a_wider_type)
{
    static const struct {
        dlscan_type in, out;
    } pairs[] = {
        {DLSCAN_UINT8, DLSCAN_INT64},    {DLSCAN_INT8, DLSCAN_UINT32},
        {DLSCAN_INT16, DLSCAN_INT64},    {DLSCAN_UINT16, DLSCAN_UINT32},
        {DLSCAN_INT32, DLSCAN_INT64},    {DLSCAN_FLOAT16, DLSCAN_FLOAT32},
        {DLSCAN_BFLOAT16, DLSCAN_FLOAT32}, {DLSCAN_FLOAT32, DLSCAN_FLOAT64},
        {DLSCAN_INT32, DLSCAN_FLOAT64},
    };
    const size_t n = 300;
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; ++p) {
        const type_case *in_t = &every_type[pairs[p].in], *out_t = &every_type[pairs[p].out];
        uint64_t rng = 1000 + p;
        value in[300], expected[300];
        for (size_t i = 0; i < n; ++i)
            in[i] = random_value(in_t->type, &rng);
        char *binary = to_binary(in_t, in, n);
        write_file(in_work("in.bin"), binary, n * in_t->size);
        for (int exclusive = 0; exclusive < 2; ++exclusive) {
            /* inclusive from the identity, exclusive from an --init */
            const value init = random_value(out_t->type, &rng);
            char init_option[48] = "--init=";
            format_value(out_t, init, init_option + 7, sizeof init_option - 7);
            char *outputs[2];
            size_t sizes[2];
            for (int chunked = 0; chunked < 2; ++chunked) {
                char what[128];
                snprintf(what, sizeof what, "%s into %s, %s, %s", in_t->name, out_t->name,
                         exclusive ? "exclusive from --init" : "inclusive",
                         chunked ? "chunks of 7" : "one chunk");
                cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", in_t->name, "--out-type",
                                    out_t->name, "--op", "sum", "--chunk-items", chunked ? "7" : "300",
                                    exclusive ? "--exclusive" : "-q",
                                    exclusive ? init_option : "-q", in_work("in.bin"),
                                    in_work("out.bin"));
                cr_assert_eq(r.status, 0, "%s: exit status %d: %s", what, r.status, r.err);
                reference_scan(in_t, out_t, DLSCAN_SUM, exclusive, exclusive ? &init : NULL, in,
                               expected, n);
                outputs[chunked] = read_file(in_work("out.bin"), &sizes[chunked]);
                cr_assert(outputs[chunked], "%s: no output file", what);
                expect_values(out_t, 0, outputs[chunked], sizes[chunked], expected, n, what);
                cli_run_free(&r);
            }
            cr_assert(sizes[0] == sizes[1] && memcmp(outputs[0], outputs[1], sizes[0]) == 0);
            free(outputs[0]);
            free(outputs[1]);
        }
        free(binary);
    }
}

/* An 8- or 16-bit type into itself: integer sums wrap around in the type, a float16 sum is
 * a float32 sum rounded at each output (2048 + 1 is 2048 in float16, + 1 more 2050). */
Test(cli, narrow_types_into_themselves)
{
    static const struct {
        const char *type, *in, *out;
    } cases[] = {
        {"int16", "30000\n30000\n-1\n", "30000\n-5536\n-5537\n"},
        {"uint8", "200\n100\n255\n", "200\n44\n43\n"},
        {"int8", "-128\n-1\n127\n", "-128\n127\n-2\n"},
        {"uint16", "65535\n1\n", "65535\n0\n"},
        {"float16", "2048\n1\n1\n", "2048\n2048\n2050\n"},
        {"bfloat16", "256\n1\n1\n", "256\n256\n258\n"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (int chunked = 0; chunked < 2; ++chunked) {
            write_file(in_work("in.txt"), cases[c].in, strlen(cases[c].in));
            cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", cases[c].type, "--op", "sum",
                                "--format", "text", "--chunk-items", chunked ? "1" : "100",
                                in_work("in.txt"), "-");
            expect_success(&r);
            cr_assert_str_eq(r.out, cases[c].out, "%s%s", cases[c].type,
                             chunked ? ", chunks of 1" : "");
            cli_run_free(&r);
        }
}

/* float16 and bfloat16 in text: rounded to the nearest, ties to even (2049 to 2048, 2051 to
 * 2052), subnormals, infinities; written as the shortest text that reads back. */
Test(cli, sixteen_bit_floats_in_text)
{
    static const struct {
        const char *type, *op, *in, *out;
    } cases[] = {
        {"float16", "sum", "2049\n2051\n6e-8\n-inf\n", "2048\n4100\n4100\n-inf\n"},
        {"float16", "max", "0.1\n-65504\n65504\n", "0.1\n0.1\n65504\n"},
        {"float16", "min", "6e-8\n2e-8\n-65519\n", "6e-08\n0\n-65504\n"},
        {"bfloat16", "sum", "257\n259\n", "256\n516\n"},
        {"bfloat16", "max", "1e-40\n-3e38\n3e38\n", "9e-41\n9e-41\n3e+38\n"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        write_file(in_work("in.txt"), cases[c].in, strlen(cases[c].in));
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", cases[c].type, "--op",
                            cases[c].op, "--format", "text", in_work("in.txt"), "-");
        expect_success(&r);
        cr_assert_str_eq(r.out, cases[c].out, "%s %s", cases[c].type, cases[c].op);
        cli_run_free(&r);
    }
    /* Binary files hold the patterns. */
    write_file(in_work("in.bin"), (const uint16_t[]){0x3c00, 0xc000}, 4); /* float16 1, -2 */
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "float16", "--out-type", "float32", "--op",
                "sum", in_work("in.bin"), "-");
    expect_success(&r);
    const float sums[] = {1, -1};
    cr_assert(r.out_size == sizeof sums && memcmp(r.out, sums, sizeof sums) == 0);
    cli_run_free(&r);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "bfloat16", "--op", "min", "--exclusive",
                in_work("in.bin"), "-");
    expect_success(&r);
    const uint16_t mins[] = {0x7f80, 0x3c00}; /* +inf, then the pattern read as bfloat16 */
    cr_assert(r.out_size == sizeof mins && memcmp(r.out, mins, sizeof mins) == 0);
    cli_run_free(&r);
}

/* A float type's value of `bits`, exactly, as a double. */
static double bits_value(dlscan_type type, uint64_t bits)
{
    if (type == DLSCAN_FLOAT16)
        return half_to_float((uint16_t)bits);
    if (type == DLSCAN_BFLOAT16)
        return bfloat16_to_float((uint16_t)bits);
    if (type == DLSCAN_FLOAT64) {
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
    const uint32_t low = (uint32_t)bits;
    float f;
    memcpy(&f, &low, 4);
    return f;
}

/* The bits of a float type that `text` reads as, by this test's conversions: 16-bit types
 * from strtof's float (short texts, which are never that near a tie). */
static uint64_t text_bits(dlscan_type type, const char *text)
{
    const double d = strtod(text, NULL);
    const float f = strtof(text, NULL);
    uint64_t bits = 0;
    if (type == DLSCAN_FLOAT64)
        memcpy(&bits, &d, 8);
    else if (type == DLSCAN_FLOAT32)
        memcpy(&bits, &f, 4);
    else
        bits = type == DLSCAN_FLOAT16 ? half_from_float(f) : bfloat16_from_float(f);
    return bits;
}

/* Three texts of the midpoint m between the values of `bits` and `bits + 1` (a double,
 * exactly), or of -m: a hair nearer 0, m in every digit, a hair farther, each of 126
 * digits, all of which strtod reads as m; one a line, appended at `text`. Returns the length written. */
static size_t midpoint_texts(dlscan_type type, uint32_t bits, int negative, char *text)
{
    const double m = (bits_value(type, bits) + bits_value(type, bits + 1)) / 2;
    char exact[160], below[160], above[160];
    snprintf(exact, sizeof exact, "%s%.125e", negative ? "-" : "", m); /* glibc: exact */
    memcpy(below, exact, sizeof exact);
    memcpy(above, exact, sizeof exact);
    char *e = strchr(above, 'e');
    e[-1] = '1'; /* the 125th digit after the point, past m's last one */
    char *digit = strchr(below, 'e') - 1;
    for (; *digit == '0' || *digit == '.'; --digit)
        *digit = *digit == '.' ? '.' : '9';
    --*digit;
    return (size_t)sprintf(text, "%s\n%s\n%s\n", below, exact, above);
}

/* Issue 40: decimal text is rounded once, to the nearest 16-bit value (ties to even), not
 * to a double first: texts a hair off each midpoint (which strtod reads as the midpoint)
 * go to the near side, the midpoint's exact digits to the even one. Magnitudes rise (max
 * scans of positive values, min scans of negative ones, leave them as they are); the output
 * is float32, exact. float32 from text (strtof) is checked the same way. */
Test(cli, text_rounds_once_to_sixteen_bit_floats)
{
    static const struct {
        const char *name;
        dlscan_type type;
        uint32_t first, last, low, stride; /* every pattern below `low`, then every stride'th */
    } cases[] = {
        {"float16", DLSCAN_FLOAT16, 0, 0x7bfe, 0x400, 7},
        {"bfloat16", DLSCAN_BFLOAT16, 0, 0x7f7e, 0x80, 7},
        {"float32", DLSCAN_FLOAT32, 0, 0x7f7ffffe, 0x10, 0x7f7ffffe / 3000},
    };
    char *text = malloc(15000 * 3 * 140);
    uint32_t *expected = malloc(15000 * 3 * sizeof *expected);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (int negative = 0; negative < 2; ++negative) {
            size_t size = 0, n = 0;
            for (uint32_t b = cases[c].first; b <= cases[c].last;
                 b += b < cases[c].low ? 1 : cases[c].stride) {
                size += midpoint_texts(cases[c].type, b, negative, text + size);
                const uint32_t down = b, up = b + 1, even = b & 1 ? up : down;
                const uint32_t in_order[3] = {down, even, up};
                for (int k = 0; k < 3; ++k)
                    expected[n++] = in_order[k];
            }
            write_file(in_work("in.txt"), text, size);
            cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", cases[c].name, "--out-type",
                                "float32", "--op",
                                negative ? "min" : "max", "--format", "text", in_work("in.txt"),
                                "-");
            expect_success(&r);
            const char *line = r.out;
            for (size_t i = 0; i < n; ++i) {
                char *end;
                const float got = strtof(line, &end);
                const double want = (negative ? -1 : 1) * bits_value(cases[c].type, expected[i]);
                cr_assert(end > line && (double)got == want,
                          "%s: text %zu near midpoint %zu read as %.9g, not %.9g (the %s "
                          "neighbour)",
                          cases[c].name, i % 3, i / 3, (double)got, want,
                          i % 3 == 1 ? "even" : "near");
                line = end + 1;
            }
            cli_run_free(&r);
        }
    free(text);
    free(expected);

    /* The issue's two texts. */
    const char issue[] = "1.000488281250000001\n65519.99999999999999\n";
    write_file(in_work("in.txt"), issue, sizeof issue - 1);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "float16", "--out-type", "float32",
                        "--op", "min", "--format", "text", in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "1.0009766\n1.0009766\n");
    cli_run_free(&r);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "float16", "--op", "max", "--format",
                "text", in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "1.001\n65504\n");
    cli_run_free(&r);
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Issue 40: floats are written in the fewest digits that read back as the same value, also
 * subnormals (float32 1e-45, float64 5e-324): the smallest and largest values, subnormals
 * and random values of every float type, in rising order (a max scan leaves them), read
 * from exact hexadecimal text. Each line reads back as its value, and one digit fewer
 * (%.Ng, correctly rounded: the nearest text of fewer digits) does not, or is longer. */
Test(cli, floats_are_written_in_the_fewest_digits)
{
    static const struct {
        const char *name;
        dlscan_type type;
        uint64_t exponent_mask; /* random patterns below it are finite */
        uint64_t specials[6];   /* smallest subnormals, largest subnormal, smallest normal, largest */
    } cases[] = {
        {"float16", DLSCAN_FLOAT16, 0x7c00, {1, 2, 3, 0x3ff, 0x400, 0x7bff}},
        {"bfloat16", DLSCAN_BFLOAT16, 0x7f80, {1, 2, 3, 0x7f, 0x80, 0x7f7f}},
        {"float32", DLSCAN_FLOAT32, 0x7f800000, {1, 2, 3, 0x7fffff, 0x800000, 0x7f7fffff}},
        {"float64", DLSCAN_FLOAT64, 0x7ff0000000000000ull,
         {1, 2, 3, 0xfffffffffffffull, 0x10000000000000ull, 0x7fefffffffffffffull}},
    };
    uint64_t rng = 40;
    enum { RANDOM = 600, COUNT = 2 * (6 + RANDOM) };
    double values[COUNT];
    char *text = malloc(COUNT * 40);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const dlscan_type type = cases[c].type;
        size_t n = 0;
        for (int k = 0; k < 6 + RANDOM; ++k) {
            uint64_t bits = k < 6 ? cases[c].specials[k] : next_random(&rng);
            if (k >= 6) { /* random finite patterns, every 8th a subnormal */
                const uint64_t mask = cases[c].exponent_mask, sign_bit = mask << 1 & ~mask;
                bits &= sign_bit - 1;
                if ((k & 7) == 0)
                    bits &= ~mask;
                else if ((bits & mask) == mask)
                    bits ^= mask & (0 - mask);
            }
            if (bits == 0)
                continue;
            values[n++] = bits_value(type, bits);
            values[n++] = -bits_value(type, bits);
        }
        qsort(values, n, sizeof *values, compare_doubles);
        size_t size = 0;
        for (size_t i = 0; i < n; ++i)
            size += (size_t)sprintf(text + size, "%a\n", values[i]);
        write_file(in_work("in.txt"), text, size);
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", cases[c].name, "--op", "max",
                            "--format", "text", in_work("in.txt"), "-");
        expect_success(&r);
        char *line = r.out;
        for (size_t i = 0; i < n; ++i) {
            char *end = strchr(line, '\n');
            cr_assert(end, "%s: %zu lines, expected %zu", cases[c].name, i, n);
            *end = '\0';
            const uint64_t got = text_bits(type, line);
            char exact[40];
            snprintf(exact, sizeof exact, "%a", values[i]);
            cr_assert_eq(got, text_bits(type, exact), "%s: '%s' does not read back as %s",
                         cases[c].name, line, exact);
            /* significant digits: from the first nonzero one to the last */
            int digits = 0, zeros = 0;
            for (const char *d = line; *d && *d != 'e'; ++d)
                if (*d >= '1' && *d <= '9')
                    digits += zeros + 1, zeros = 0;
                else if (*d == '0' && digits > 0)
                    ++zeros;
            char fewer[400]; /* a shorter text of fewer digits (2050, not 2.05e+03) */
            snprintf(fewer, sizeof fewer, "%.*g", digits - 1, values[i]);
            cr_assert(digits == 1 || text_bits(type, fewer) != text_bits(type, exact) ||
                          strlen(fewer) > strlen(line),
                      "%s: '%s' is not the shortest: '%s' reads back as %s too", cases[c].name,
                      line, fewer, exact);
            line = end + 1;
        }
        cli_run_free(&r);
    }
    free(text);
}

/* A pair the library does not scan: exit status 1, the library's message, no output (an
 * existing OUT kept), also for an empty input. */
Test(cli, pairs_the_library_refuses_write_nothing)
{
    static const char *const pairs[][2] = {
        {"int64", "int32"},   {"int8", "int16"},      {"uint8", "float32"}, {"float32", "int32"},
        {"float64", "float32"}, {"float16", "float64"}, {"bfloat16", "float16"},
    };
    write_file(in_work("in.bin"), "\1\0\0\0\0\0\0\0", 8);
    write_file(in_work("empty"), "", 0);
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; ++p)
        for (int empty = 0; empty < 2; ++empty) {
            cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", pairs[p][0], "--out-type",
                                pairs[p][1], "--op", "sum",
                                in_work(empty ? "empty" : "in.bin"), in_work("out.bin"));
            char message[64];
            snprintf(message, sizeof message, "scan: %s into %s: ", pairs[p][0], pairs[p][1]);
            expect_error(&r, 1, message);
            cr_assert(strstr(r.err, dlscan_status_string(DLSCAN_ERROR_TYPE_PAIR)), "%s", r.err);
            cr_assert(!file_exists(in_work("out.bin")), "%s into %s wrote the output",
                      pairs[p][0], pairs[p][1]);
            cli_run_free(&r);
        }
    write_file(in_work("out.bin"), "old", 3);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int64", "--out-type", "int32",
                        "--op", "max", in_work("in.bin"), in_work("out.bin"));
    expect_error(&r, 1, "int64 into int32");
    char *kept = read_file(in_work("out.bin"), NULL);
    cr_assert_str_eq(kept, "old", "the existing output was changed");
    free(kept);
    cli_run_free(&r);
}

Test(cli, standard_input_and_output)
{
    const type_case *t = &every_type[0];
    const size_t n = 5000; /* more than a pipe holds at once */
    uint64_t rng = 5;
    value in[5000], expected[5000];
    for (size_t i = 0; i < n; ++i)
        in[i] = random_value(t->type, &rng);
    reference_scan(t, t, DLSCAN_SUM, 0, NULL, in, expected, n);
    size_t text_size;
    char *binary = to_binary(t, in, n), *text = to_text(t, in, n, &text_size);

    cli_run r = RUN_CLI_WITH_INPUT(binary, n * t->size, "scan", "--backend", "cpu", "--type",
                                   "int32", "--op", "sum", "--chunk-items", "1000", "-", "-");
    expect_success(&r);
    expect_values(t, 0, r.out, r.out_size, expected, n, "binary through stdin and stdout");
    cli_run_free(&r);

    r = RUN_CLI_WITH_INPUT(text, text_size, "scan", "--backend=cpu", "--type=int32", "--op=sum",
                           "--format=text", "--chunk-items=333", "-", "-");
    expect_success(&r);
    expect_values(t, 1, r.out, r.out_size, expected, n, "text through stdin and stdout");
    cli_run_free(&r);

    /* stdin to a file, and a file to stdout */
    r = RUN_CLI_WITH_INPUT(text, text_size, "scan", "--backend", "cpu", "--type", "int32", "--op",
                           "sum", "--format", "text", "-", in_work("out.txt"));
    expect_success(&r);
    cr_assert_eq(r.out_size, 0);
    cli_run_free(&r);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum", "--format", "text",
                in_work("out.txt"), "-");
    expect_success(&r);
    reference_scan(t, t, DLSCAN_SUM, 0, NULL, expected, in, n); /* the scan of the scan */
    expect_values(t, 1, r.out, r.out_size, in, n, "file to stdout");
    cli_run_free(&r);
    free(binary);
    free(text);
}

/* --op prod and logsumexp (user operators), chained over chunks through the carry, on the CPU
 * backend, prod along rows with their totals and over offsets (segments across chunks, an empty
 * one, items outside them copied), by key (runs across chunks) and down columns with their totals;
 * refused with another output type, or logsumexp's totals. */
Test(cli, prod_and_logsumexp)
{
    static const char items[] = "3 -2 5 7 -1 4 2 9 -3 6 1 8";
    cli_run r = RUN_CLI_WITH_INPUT(items, sizeof items - 1, "scan", "--backend", "cpu", "--type", "int64", "--op",
                                   "prod", "--format", "text", "--chunk-items", "5", "-", "-");
    expect_success(&r);
    cr_expect_str_eq(r.out, "3\n-6\n-30\n-210\n210\n840\n1680\n15120\n-45360\n-272160\n-272160\n-2177280\n");
    cli_run_free(&r);
    static const char logs[] = "0 0 0 0";
    r = RUN_CLI_WITH_INPUT(logs, sizeof logs - 1, "scan", "--backend", "cpu", "--type", "float64", "--op",
                           "logsumexp", "--exclusive", "--init", "0", "--format", "text", "--chunk-items", "3", "-",
                           "-");
    expect_success(&r);
    double got[4] = {0};
    cr_assert_eq(sscanf(r.out, "%lf %lf %lf %lf", &got[0], &got[1], &got[2], &got[3]), 4, "%s", r.out);
    for (int k = 0; k < 4; ++k) /* exclusive from an item 0 in front: log(k + 1) */
        cr_expect(fabs(got[k] - log(k + 1.0)) < 1e-12, "item %d: %.17g", k, got[k]);
    cli_run_free(&r);
    r = RUN_CLI_WITH_INPUT(logs, sizeof logs - 1, "scan", "--backend", "cpu", "--type", "int32", "--op",
                           "logsumexp", "--format", "text", "-", "-");
    cr_expect_neq(r.status, 0, "logsumexp of int32");
    cr_expect_eq(r.out_size, 0);
    cli_run_free(&r);
    r = RUN_CLI_WITH_INPUT(logs, sizeof logs - 1, "scan", "--backend", "cpu", "--type", "float32", "--op",
                           "prod", "--out-type", "float64", "--format", "text", "-", "-");
    cr_expect_neq(r.status, 0, "prod into another type");
    cli_run_free(&r);
    /* rows of 4 from --init 2, two rows a chunk */
    r = RUN_CLI_WITH_INPUT(items, sizeof items - 1, "scan", "--backend", "cpu", "--type", "int64", "--op", "prod",
                           "--init", "2", "--axis-length", "4", "--totals", in_work("totals.txt"), "--format",
                           "text", "--chunk-items", "8", "-", "-");
    expect_success(&r);
    cr_expect_str_eq(r.out, "6\n-12\n-60\n-420\n-2\n-8\n-16\n-144\n-6\n-36\n-36\n-288\n");
    size_t totals_size;
    char *totals = read_file(in_work("totals.txt"), &totals_size);
    cr_expect(totals_size == 15 && memcmp(totals, "-420\n-144\n-288\n", 15) == 0, "totals %.*s", (int)totals_size,
              totals);
    free(totals);
    unlink(in_work("totals.txt"));
    cli_run_free(&r);
    /* over offsets: [1, 4), [4, 4), [4, 9), [9, 11); items 0 and 11 copied */
    write_file(in_work("offsets.txt"), "1 4 4 9 11", 10);
    r = RUN_CLI_WITH_INPUT(items, sizeof items - 1, "scan", "--backend", "cpu", "--type", "int64", "--op", "prod",
                           "--offsets", in_work("offsets.txt"), "--format", "text", "--chunk-items", "5", "-", "-");
    expect_success(&r);
    cr_expect_str_eq(r.out, "3\n-2\n-10\n-70\n-1\n-4\n-8\n-72\n216\n6\n6\n8\n");
    cli_run_free(&r);
    unlink(in_work("offsets.txt"));
    /* by key: runs [0, 3), [3, 4), [4, 9), [9, 12), across chunks of 5, from --init 2 */
    write_file(in_work("keys.txt"), "7 7 7 -0 0 0 0 0 0 5 5 5", 24);
    r = RUN_CLI_WITH_INPUT(items, sizeof items - 1, "scan", "--backend", "cpu", "--type", "int64", "--op", "prod",
                           "--init", "2", "--keys", in_work("keys.txt"), "--key-type", "float32", "--format", "text",
                           "--chunk-items", "5", "-", "-");
    expect_success(&r);
    cr_expect_str_eq(r.out, "6\n-12\n-60\n14\n-2\n-8\n-16\n-144\n432\n12\n12\n96\n");
    cli_run_free(&r);
    unlink(in_work("keys.txt"));
    /* down columns: arrays [2][2][3], one a chunk, from --init 2 */
    r = RUN_CLI_WITH_INPUT(items, sizeof items - 1, "scan", "--backend", "cpu", "--type", "int64", "--op", "prod",
                           "--init", "2", "--axis-length", "2", "--axis-stride", "3", "--totals", in_work("totals.txt"),
                           "--format", "text", "--chunk-items", "6", "-", "-");
    expect_success(&r);
    cr_expect_str_eq(r.out, "6\n-4\n10\n42\n4\n40\n4\n18\n-6\n24\n18\n-48\n");
    totals = read_file(in_work("totals.txt"), &totals_size);
    cr_expect(totals_size == 18 && memcmp(totals, "42\n4\n40\n24\n18\n-48\n", 18) == 0, "totals %.*s",
              (int)totals_size, totals);
    free(totals);
    unlink(in_work("totals.txt"));
    cli_run_free(&r);
    static const char *const refused[][4] = {
        {"logsumexp", "--totals", "t", "writes no --totals"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; ++k) {
        r = RUN_CLI_WITH_INPUT(logs, sizeof logs - 1, "scan", "--backend", "cpu", "--type", "float64", "--op",
                               refused[k][0], "--axis-length", "2", refused[k][1], refused[k][2], "--format",
                               "text", "-", "-");
        expect_error(&r, 1, refused[k][3]);
        cli_run_free(&r);
    }
}

Test(cli, empty_input_gives_empty_output)
{
    write_file(in_work("empty"), "", 0);
    for (int text = 0; text < 2; ++text) {
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "float64", "--op", "max",
                            "--format", text ? "text" : "binary", in_work("empty"), in_work("out"));
        expect_success(&r);
        size_t size;
        char *got = read_file(in_work("out"), &size);
        cr_assert(got && size == 0, "the output of an empty input is not an empty file");
        free(got);
        cli_run_free(&r);
    }
}

Test(cli, in_place_and_replacing_a_file_keeps_its_permissions)
{
    const int32_t values[] = {1, 2, 3, 4, 5};
    write_file(in_work("data"), values, sizeof values);
    chmod(in_work("data"), 0640);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                        "--chunk-items", "2", in_work("data"), in_work("data"));
    expect_success(&r);
    size_t size;
    int32_t *got = (int32_t *)read_file(in_work("data"), &size);
    cr_assert_eq(size, sizeof values);
    cr_assert(got[0] == 1 && got[1] == 3 && got[2] == 6 && got[3] == 10 && got[4] == 15);
    struct stat st;
    cr_assert(stat(in_work("data"), &st) == 0);
    cr_assert_eq(st.st_mode & 0777, 0640, "mode %o", (unsigned)(st.st_mode & 0777));
    cr_assert_eq(leftover_temporary_files(), 0);
    free(got);
    cli_run_free(&r);
}

/* Issue 40: a replaced OUT keeps its owner and group (where the system allows: as root
 * here, or a group of this user's), besides its permissions; it is a new file, so a hard
 * link to the old one keeps the old contents, as the manual says. */
Test(cli, replacing_a_file_keeps_its_owner_and_group)
{
    const int32_t values[] = {1, 2}, sums[] = {1, 3};
    write_file(in_work("in.bin"), values, sizeof values);
    write_file(in_work("out.bin"), "old!", 4);
    cr_assert(link(in_work("out.bin"), in_work("link.bin")) == 0);
    gid_t groups[64];
    const int group_count = getgroups(64, groups);
    const uid_t owner = geteuid() == 0 ? 4321 : geteuid();
    const gid_t group = geteuid() == 0 ? 8765 : group_count > 1 ? groups[1] : getegid();
    cr_assert(chown(in_work("out.bin"), owner, group) == 0, "chown: %s", strerror(errno));
    chmod(in_work("out.bin"), 0604);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", in_work("in.bin"),
                        in_work("out.bin"));
    expect_success(&r);
    cli_run_free(&r);
    struct stat st;
    cr_assert(stat(in_work("out.bin"), &st) == 0);
    cr_assert(st.st_uid == owner && st.st_gid == group, "owner %d:%d, expected %d:%d",
              (int)st.st_uid, (int)st.st_gid, (int)owner, (int)group);
    cr_assert_eq(st.st_mode & 07777, 0604, "mode %o", (unsigned)(st.st_mode & 07777));
    size_t size;
    char *got = read_file(in_work("out.bin"), &size);
    cr_assert(size == sizeof sums && memcmp(got, sums, size) == 0);
    free(got);
    got = read_file(in_work("link.bin"), &size);
    cr_assert(size == 4 && memcmp(got, "old!", 4) == 0, "the hard link changed");
    free(got);
}

Test(cli, text_accepts_blanks_signs_carriage_returns_and_float_forms)
{
    const char input[] = "  +5\t\r\n-3\n1e1 \n0x1p2\n  7";
    write_file(in_work("in.txt"), input, sizeof input - 1);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "float64", "--op", "sum", "--format",
                        "text", in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "5\n2\n12\n16\n23\n");
    cli_run_free(&r);

    const char integers[] = "+5\n-0\n 7 \r\n";
    write_file(in_work("in.txt"), integers, sizeof integers - 1);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "uint64", "--op", "max", "--format", "text",
                in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "5\n5\n7\n");
    cli_run_free(&r);
}

Test(cli, floats_in_text_read_back_exactly)
{
    const char input[] = "0.1\n1e-45\n3.4028235e38\n-inf\n";
    write_file(in_work("in.txt"), input, sizeof input - 1);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "float32", "--op", "max",
                        "--exclusive", "--init", "-1e30", "--format", "text", in_work("in.txt"),
                        "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "-1e+30\n0.1\n0.1\n3.4028235e+38\n");
    cli_run_free(&r);

    /* The fewest digits that read back the same value (not 0.10000000000000001). */
    const char doubles[] = "0.1\n0.2\n1e-300\n";
    write_file(in_work("in.txt"), doubles, sizeof doubles - 1);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "float64", "--op", "sum", "--format",
                "text", in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "0.1\n0.30000000000000004\n0.30000000000000004\n");
    cli_run_free(&r);
}

Test(cli, default_backend_runs_on_the_gpu_or_says_it_uses_the_cpu)
{
    const int64_t values[] = {4, -1, 9};
    write_file(in_work("in.bin"), values, sizeof values);
    cli_run r = RUN_CLI("scan", "--type", "int64", "--op", "min", in_work("in.bin"), "-");
    expect_success(&r);
    const int64_t expected[] = {4, -1, -1};
    cr_assert(r.out_size == sizeof expected && memcmp(r.out, expected, sizeof expected) == 0);
    cr_assert(r.err[0] == '\0' || strstr(r.err, "CPU backend"), "stderr: %s", r.err);
    /* A build without the GPU backend has nothing to say (issue 40). */
    cli_run info = RUN_CLI("info");
    if (strstr(info.out, "GPU backend:  not built"))
        cr_assert_str_empty(r.err, "a build without the GPU backend printed a note");
    cli_run_free(&info);
    /* With no NVIDIA driver at all, not that the driver is too old. */
    if (access("/proc/driver/nvidia/version", F_OK) != 0)
        cr_assert(!strstr(r.err, "insufficient"), "stderr: %s", r.err);
    cli_run_free(&r);
}

Test(cli, info_help_and_version)
{
    char version[32];
    snprintf(version, sizeof version, "dlscan %d.%d.%d", DLSCAN_VERSION_MAJOR,
             DLSCAN_VERSION_MINOR, DLSCAN_VERSION_PATCH);
    cli_run r = RUN_CLI("info");
    expect_success(&r);
    cr_assert(strstr(r.out, version) && strstr(r.out, "Items per tile") && strstr(r.out, "float64") &&
                  strstr(r.out, "Backend:"),
              "info: %s", r.out);
    cli_run_free(&r);
    r = RUN_CLI("--help");
    expect_success(&r);
    cr_assert(strstr(r.out, "dlscan scan") && strstr(r.out, "Exit status") &&
              strstr(r.out, "--backend"));
    cli_run_free(&r);
    r = RUN_CLI("scan", "--help");
    expect_success(&r);
    cr_assert(strstr(r.out, "usage: dlscan"));
    cli_run_free(&r);
    r = RUN_CLI("--version");
    expect_success(&r);
    cr_assert(strstr(r.out, version));
    cli_run_free(&r);
}

Test(cli, bench_on_the_cpu_prints_the_table_and_writes_csv)
{
    cli_run r = RUN_CLI("bench", "--backend", "cpu", "--types", "int32,float64", "--min-log", "10",
                        "--max-log", "11", "--repeats", "1", "--csv", in_work("bench.csv"));
    expect_success(&r);
    cr_assert(strstr(r.out, "dlscan/seq") && strstr(r.out, "float64 sum"), "%s", r.out);
    size_t size;
    char *csv = read_file(in_work("bench.csv"), &size);
    cr_assert(csv && strncmp(csv, "# cpu:", 6) == 0);
    cr_assert(strstr(csv, "\ntype,op,kind,variant,n,bytes_moved,fits_in_l2,per_call_us,"
                          "items_per_second,latency_us\n"));
    int rows = 0;
    for (const char *p = csv; (p = strstr(p, "\nint32,sum,inclusive,")); ++p)
        ++rows;
    cr_assert_eq(rows, 6, "2 sizes x 3 variants of int32 in the CSV, not %d", rows);
    free(csv);
    cli_run_free(&r);
}

/* ---------------------------------------------------------------- segmented scans */

/* The segmented scan as the command documents it: segment k is the items offsets[k] ..
 * offsets[k+1] - 1, each scanned as reference_scan scans (from init, or the identity); the
 * items in no segment are the input, converted to the output type. */
static void reference_segmented_scan(const type_case *in_t, const type_case *out_t, dlscan_op op,
                                     int exclusive, const value *init, const value *in,
                                     value *out, size_t n, const size_t *offsets,
                                     size_t num_segments)
{
    for (size_t i = 0; i < n; ++i)
        out[i] = convert(in[i], in_t->type, out_t->type);
    for (size_t k = 0; k < num_segments; ++k)
        reference_scan(in_t, out_t, op, exclusive, init, in + offsets[k], out + offsets[k],
                       offsets[k + 1] - offsets[k]);
}

/* The runs of equal keys (bit for bit) as offsets: returns the number of runs. */
static size_t runs_of(const type_case *key_t, const value *keys, size_t n, size_t *offsets)
{
    size_t runs = 0;
    for (size_t i = 0; i < n; ++i)
        if (i == 0 || memcmp(&keys[i], &keys[i - 1], key_t->size) != 0)
            offsets[runs++] = i;
    offsets[runs] = n;
    return runs;
}

#define SEGMENT_ITEMS 500

/* n keys in runs of 1 to 40 items, the sixth run 150 items (longer than a chunk of 7 or
 * 64): one random key each, which may equal the one before (the runs then merge, as
 * runs_of finds). */
static void make_keys(const type_case *key_t, value *keys, size_t n, uint64_t *rng)
{
    for (size_t i = 0, run = 0; i < n; ++run) {
        const value key = random_value(key_t->type, rng);
        const size_t length = run == 5 ? 150 : 1 + next_random(rng) % 40;
        for (size_t k = 0; k < length && i < n; ++k)
            keys[i++] = key;
    }
}

/* Offsets from `start` to `end` (<= n): an empty segment at the start, the middle (the
 * tenth) and the end, the sixth segment 150 items long, the others 0 to 40. Returns
 * num_segments. */
static size_t make_offsets(size_t start, size_t end, size_t *offsets, uint64_t *rng)
{
    size_t k = 0, at = start;
    offsets[k++] = start;
    offsets[k++] = start;
    while (at < end) {
        size_t length = k == 6 ? 150 : k == 10 ? 0 : next_random(rng) % 41;
        if (length > end - at)
            length = end - at;
        at += length;
        offsets[k++] = at;
    }
    offsets[k++] = end;
    return k - 1;
}

/* Offsets as a file: raw uint64 values or one number per line. */
static void write_offsets(const char *path, const size_t *offsets, size_t count, int text)
{
    char *data = malloc(count * 24 + 1);
    size_t size = 0;
    for (size_t k = 0; k < count; ++k) {
        if (text) {
            size += (size_t)sprintf(data + size, "%zu\n", offsets[k]);
        } else {
            const uint64_t v = offsets[k];
            memcpy(data + size, &v, 8);
            size += 8;
        }
    }
    write_file(path, data, size);
    free(data);
}

/* IN, the keys and the offsets in both formats, in the work directory. */
static void write_segment_files(const type_case *t, const value *in, const type_case *key_t,
                                const value *keys, size_t n, const size_t *offsets,
                                size_t num_segments)
{
    size_t size;
    char *binary = to_binary(t, in, n), *text = to_text(t, in, n, &size);
    write_file(in_work("in.bin"), binary, n * t->size);
    write_file(in_work("in.txt"), text, size);
    free(binary);
    free(text);
    if (keys) {
        binary = to_binary(key_t, keys, n);
        text = to_text(key_t, keys, n, &size);
        write_file(in_work("keys.bin"), binary, n * key_t->size);
        write_file(in_work("keys.txt"), text, size);
        free(binary);
        free(text);
    }
    if (offsets) {
        write_offsets(in_work("offsets.bin"), offsets, num_segments + 1, 0);
        write_offsets(in_work("offsets.txt"), offsets, num_segments + 1, 1);
    }
}

ParameterizedTestParameters(cli, segmented_round_trips)
{
    static int type_indices[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    return cr_make_param_array(int, type_indices, sizeof type_indices / sizeof type_indices[0]);
}

/* --keys (of --type, or of another --key-type) and --offsets (items in no segment before
 * and after them, empty segments), binary and text, inclusive and exclusive, every
 * operator, in chunks of 7 (a segment of 150 items crosses many) and in one chunk. */
ParameterizedTest(int *type_index, cli, segmented_round_trips)
{
    const type_case *t = &every_type[*type_index];
    const type_case *key_t = *type_index % 3 == 0 ? t : &every_type[(*type_index + 5) % 12];
    const size_t n = SEGMENT_ITEMS;
    uint64_t rng = 0x5e9 + (uint64_t)t->type;
    value in[SEGMENT_ITEMS], keys[SEGMENT_ITEMS], expected[SEGMENT_ITEMS];
    size_t offsets[SEGMENT_ITEMS + 8], runs[SEGMENT_ITEMS + 1];
    for (size_t i = 0; i < n; ++i)
        in[i] = random_value(t->type, &rng);
    make_keys(key_t, keys, n, &rng);
    const size_t num_segments = make_offsets(3, n - 5, offsets, &rng);
    const size_t num_runs = runs_of(key_t, keys, n, runs);
    write_segment_files(t, in, key_t, keys, n, offsets, num_segments);
    for (int by_keys = 0; by_keys < 2; ++by_keys)
        for (int text = 0; text < 2; ++text)
            for (int exclusive = 0; exclusive < 2; ++exclusive)
                for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
                    for (int chunked = 0; chunked < 2; ++chunked) {
                        char segments[32];
                        snprintf(segments, sizeof segments, "%s.%s", by_keys ? "keys" : "offsets",
                                 text ? "txt" : "bin");
                        const int key_type = by_keys && key_t != t;
                        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", t->name, "--op",
                                            op_names[op], by_keys ? "--keys" : "--offsets",
                                            in_work(segments), key_type ? "--key-type" : "-q",
                                            key_type ? key_t->name : "-q",
                                            exclusive ? "--exclusive" : "-q", "--format",
                                            text ? "text" : "binary", "--chunk-items",
                                            chunked ? "7" : "500",
                                            in_work(text ? "in.txt" : "in.bin"), in_work("out"));
                        char what[160];
                        snprintf(what, sizeof what, "%s %s %s by %s (%s), %s, %s", t->name,
                                 exclusive ? "exclusive" : "inclusive", op_names[op],
                                 by_keys ? "keys" : "offsets", by_keys ? key_t->name : "uint64",
                                 text ? "text" : "binary", chunked ? "chunks of 7" : "one chunk");
                        cr_assert_eq(r.status, 0, "%s: exit status %d: %s", what, r.status, r.err);
                        cr_assert_str_eq(r.err, "", "%s: stderr: %s", what, r.err);
                        reference_segmented_scan(t, t, (dlscan_op)op, exclusive, NULL, in,
                                                 expected, n, by_keys ? runs : offsets,
                                                 by_keys ? num_runs : num_segments);
                        size_t size;
                        char *got = read_file(in_work("out"), &size);
                        cr_assert(got, "%s: no output file", what);
                        expect_values(t, text, got, size, expected, n, what);
                        free(got);
                        cli_run_free(&r);
                        unlink(in_work("out"));
                    }
}

/* --init starts every segment: an exclusive scan writes it at each segment's first item. */
Test(cli, segments_start_from_init)
{
    static const type_case *const types[] = {TYPE(INT64), TYPE(FLOAT64), TYPE(INT8),
                                             TYPE(FLOAT16)};
    const size_t n = 200;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; ++k) {
        const type_case *t = types[k];
        uint64_t rng = 99 + k;
        value in[200], keys[200], expected[200], init;
        size_t offsets[208], runs[201];
        for (size_t i = 0; i < n; ++i)
            in[i] = random_value(t->type, &rng);
        make_keys(TYPE(UINT16), keys, n, &rng);
        const size_t num_segments = make_offsets(0, n, offsets, &rng);
        const size_t num_runs = runs_of(TYPE(UINT16), keys, n, runs);
        write_segment_files(t, in, TYPE(UINT16), keys, n, offsets, num_segments);
        for (int by_keys = 0; by_keys < 2; ++by_keys)
            for (int op = DLSCAN_SUM; op <= DLSCAN_MAX; ++op)
                for (int exclusive = 0; exclusive < 2; ++exclusive)
                    for (int chunked = 0; chunked < 2; ++chunked) {
                        init = random_value(t->type, &rng);
                        char init_text[32];
                        format_value(t, init, init_text, sizeof init_text);
                        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", t->name, "--op",
                                            op_names[op], "--init", init_text,
                                            by_keys ? "--keys" : "--offsets",
                                            in_work(by_keys ? "keys.bin" : "offsets.bin"),
                                            by_keys ? "--key-type" : "-q",
                                            by_keys ? "uint16" : "-q",
                                            exclusive ? "--exclusive" : "-q", "--chunk-items",
                                            chunked ? "5" : "200", in_work("in.bin"),
                                            in_work("out.bin"));
                        expect_success(&r);
                        reference_segmented_scan(t, t, (dlscan_op)op, exclusive, &init, in,
                                                 expected, n, by_keys ? runs : offsets,
                                                 by_keys ? num_runs : num_segments);
                        size_t size;
                        char *got = read_file(in_work("out.bin"), &size);
                        char what[96];
                        snprintf(what, sizeof what, "%s %s %s by %s from --init %s", t->name,
                                 exclusive ? "exclusive" : "inclusive", op_names[op],
                                 by_keys ? "keys" : "offsets", init_text);
                        expect_values(t, 0, got, size, expected, n, what);
                        free(got);
                        cli_run_free(&r);
                    }
    }
}

/* Chunks of any size, from 1 item to more than the input, give what one chunk gives, byte
 * for byte: segments that end at a chunk's edge, one before and one after it, and segments
 * longer than a chunk. */
Test(cli, chunked_segmented_output_equals_unchunked)
{
    static const char *const chunks[] = {"1", "2", "3", "5", "7", "8", "64", "149", "150", "151",
                                         "499", "500", "1000"};
    const type_case *t = TYPE(INT32);
    const size_t n = SEGMENT_ITEMS;
    uint64_t rng = 4242;
    value in[SEGMENT_ITEMS], keys[SEGMENT_ITEMS];
    size_t offsets[SEGMENT_ITEMS + 8];
    for (size_t i = 0; i < n; ++i)
        in[i] = random_value(t->type, &rng);
    make_keys(TYPE(INT64), keys, n, &rng);
    const size_t num_segments = make_offsets(1, n - 1, offsets, &rng);
    write_segment_files(t, in, TYPE(INT64), keys, n, offsets, num_segments);
    for (int by_keys = 0; by_keys < 2; ++by_keys)
        for (int exclusive = 0; exclusive < 2; ++exclusive) {
            char *whole = NULL;
            size_t whole_size = 0;
            for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; ++c) {
                cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                                    by_keys ? "--keys" : "--offsets",
                                    in_work(by_keys ? "keys.bin" : "offsets.bin"),
                                    by_keys ? "--key-type" : "-q", by_keys ? "int64" : "-q",
                                    exclusive ? "--exclusive" : "-q", "--chunk-items", chunks[c],
                                    in_work("in.bin"), "-");
                expect_success(&r);
                if (!whole) {
                    whole = r.out, whole_size = r.out_size;
                    r.out = NULL;
                } else {
                    cr_assert(r.out_size == whole_size && memcmp(r.out, whole, whole_size) == 0,
                              "by %s, %s: chunks of %s differ from one chunk",
                              by_keys ? "keys" : "offsets", exclusive ? "exclusive" : "inclusive",
                              chunks[c]);
                }
                cli_run_free(&r);
            }
            free(whole);
        }
}

/* Offsets that leave items in no segment (they are the input, converted to the output
 * type), empty segments anywhere, no segments at all; the text of each result. */
Test(cli, offsets_at_the_edges)
{
    static const struct {
        const char *offsets, *options, *out;
    } cases[] = {
        {"0\n6\n", "-q", "1\n3\n6\n10\n15\n21\n"},
        {"6\n", "-q", "1\n2\n3\n4\n5\n6\n"},
        {"0\n", "--exclusive", "1\n2\n3\n4\n5\n6\n"},
        {"2\n2\n4\n4\n", "-q", "1\n2\n3\n7\n5\n6\n"},
        {"0\n0\n1\n1\n6\n6\n", "-q", "1\n2\n5\n9\n14\n20\n"},
        {"1\n3\n6\n", "--exclusive", "1\n10\n12\n10\n14\n19\n"}, /* --init 10 */
        {"0\n1\n2\n3\n4\n5\n6\n", "--exclusive", "10\n10\n10\n10\n10\n10\n"},
        {"3\n6\n", "-q", "1\n2\n3\n4\n9\n15\n"},
    };
    write_file(in_work("in.txt"), "1\n2\n3\n4\n5\n6\n", 12);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (int chunk = 1; chunk <= 7; chunk += 2) {
            write_file(in_work("offsets.txt"), cases[c].offsets, strlen(cases[c].offsets));
            char chunk_text[8];
            snprintf(chunk_text, sizeof chunk_text, "%d", chunk);
            const int exclusive = strcmp(cases[c].options, "--exclusive") == 0;
            cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                                "--format", "text", "--offsets", in_work("offsets.txt"),
                                cases[c].options, exclusive ? "--init" : "-q",
                                exclusive ? "10" : "-q",
                                "--chunk-items", chunk_text, in_work("in.txt"), "-");
            expect_success(&r);
            cr_assert_str_eq(r.out, cases[c].out, "offsets %s, chunks of %d", cases[c].offsets,
                             chunk);
            cli_run_free(&r);
        }

    /* No values: the offsets are all 0, or there are no keys; the output is empty. */
    write_file(in_work("empty"), "", 0);
    write_file(in_work("zeros.txt"), "0\n0\n", 4);
    for (int by_keys = 0; by_keys < 2; ++by_keys) {
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                            "--format", "text", by_keys ? "--keys" : "--offsets",
                            in_work(by_keys ? "empty" : "zeros.txt"), in_work("empty"),
                            in_work("out.txt"));
        expect_success(&r);
        size_t size;
        char *got = read_file(in_work("out.txt"), &size);
        cr_assert(got && size == 0, "by %s: not an empty output", by_keys ? "keys" : "offsets");
        free(got);
        cli_run_free(&r);
    }
}

/* Items in no segment are IN's, converted as the scan converts items: int8 -1 into uint32 is
 * 4294967295; a float16 scan into itself keeps their bits, NaN payloads included. */
Test(cli, items_in_no_segment_are_the_input_converted)
{
    const int8_t small[] = {-1, -2, 3, 4, 5, -6, -7, 8};
    write_file(in_work("in.bin"), small, sizeof small);
    write_offsets(in_work("offsets.bin"), (const size_t[]){2, 5}, 2, 0);
    for (int chunk = 1; chunk <= 9; chunk += 4) {
        char chunk_text[8];
        snprintf(chunk_text, sizeof chunk_text, "%d", chunk);
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int8", "--out-type", "uint32",
                            "--op", "max", "--offsets", in_work("offsets.bin"), "--chunk-items",
                            chunk_text, in_work("in.bin"), "-");
        expect_success(&r);
        const uint32_t expected[] = {4294967295u, 4294967294u, 3, 4, 5, 4294967290u,
                                     4294967289u, 8};
        cr_assert(r.out_size == sizeof expected && memcmp(r.out, expected, sizeof expected) == 0,
                  "int8 into uint32, chunks of %d", chunk);
        cli_run_free(&r);
    }

    /* float16: a signalling NaN and -0 outside, 2048 + 1 + 1 inside (rounded at each output) */
    const uint16_t halves[] = {0x7c01, 0x6800, 0x3c00, 0x3c00, 0x8000, 0xfe01};
    write_file(in_work("in.bin"), halves, sizeof halves);
    write_offsets(in_work("offsets.bin"), (const size_t[]){1, 4}, 2, 0);
    for (int chunk = 1; chunk <= 9; chunk += 4) {
        char chunk_text[8];
        snprintf(chunk_text, sizeof chunk_text, "%d", chunk);
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "float16", "--op", "sum",
                            "--offsets", in_work("offsets.bin"), "--chunk-items", chunk_text,
                            in_work("in.bin"), "-");
        expect_success(&r);
        const uint16_t expected[] = {0x7c01, 0x6800, 0x6800, 0x6801, 0x8000, 0xfe01}; /* 2050 */
        cr_assert(r.out_size == sizeof expected && memcmp(r.out, expected, sizeof expected) == 0,
                  "float16, chunks of %d", chunk);
        cli_run_free(&r);
    }
}

/* Keys compare bit for bit: float -0 is not 0, a NaN equals a NaN of the same bits. Keys can
 * come from standard input while IN is a file. */
Test(cli, keys_compare_bit_for_bit)
{
    write_file(in_work("in.txt"), "1\n1\n1\n1\n1\n1\n", 12);
    const char keys[] = "0\n-0\n-0\n0\nnan\nnan\n";
    write_file(in_work("keys.txt"), keys, sizeof keys - 1);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--key-type", "float32",
                        "--op", "sum", "--format", "text", "--keys", in_work("keys.txt"),
                        in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "1\n1\n2\n1\n1\n2\n");
    cli_run_free(&r);
    r = RUN_CLI_WITH_INPUT("7\n7\n8\n7\n7\n7\n", 12, "scan", "--backend", "cpu", "--type",
                           "int32", "--op", "sum", "--format", "text", "--chunk-items", "2",
                           "--keys", "-", in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "1\n2\n1\n1\n2\n3\n");
    cli_run_free(&r);
}

/* Bad keys or offsets, or options that do not go together: exit status 1, the message, and
 * no output (an existing OUT kept as it was). Binary files of known size are checked before
 * any work; text, and IN through a pipe, where the end shows it. */
Test(cli, segment_errors_write_nothing)
{
    const int32_t four[] = {1, 2, 3, 4}, three[] = {1, 1, 2}, five[] = {1, 1, 2, 2, 3};
    write_file(in_work("in.bin"), four, sizeof four);
    write_file(in_work("in.txt"), "1\n2\n3\n4\n", 8);
    write_file(in_work("keys3.bin"), three, sizeof three);
    write_file(in_work("keys5.bin"), five, sizeof five);
    write_file(in_work("keys6b.bin"), five, 6);
    write_file(in_work("keys3.txt"), "1\n1\n2\n", 6);
    write_file(in_work("keys5.txt"), "1\n1\n2\n2\n3\n", 10);
    write_file(in_work("keysbad.txt"), "1\nx\n", 4);
    write_file(in_work("keys300.txt"), "1\n300\n1\n1\n", 11);
    write_file(in_work("fall.txt"), "0\n3\n2\n4\n", 8);
    write_file(in_work("past.txt"), "0\n2\n5\n", 6);
    write_file(in_work("empty"), "", 0);
    write_file(in_work("negative.txt"), "-1\n", 3);
    write_file(in_work("offsets12.bin"), "\0\0\0\0\0\0\0\0\4\0\0\0", 12);
    write_offsets(in_work("past.bin"), (const size_t[]){0, 5}, 2, 0);
    write_offsets(in_work("fall.bin"), (const size_t[]){1, 0}, 2, 0);
    static const struct {
        const char *args[10];
        int text;
        const char *message;
    } cases[] = {
        {{"--keys", "keys3.bin", "--offsets", "past.bin"}, 0,
         "--keys and --offsets exclude each other"},
        {{"--offsets", "past.bin", "--keys", "keys3.bin"}, 0,
         "--keys and --offsets exclude each other"},
        {{"--key-type", "int32"}, 0, "--key-type is the type of --keys' file; there is no --keys"},
        {{"--offsets", "past.bin", "--key-type", "int32"}, 0, "--key-type is the type of --keys'"},
        {{"--keys", "keys3.bin", "--key-type", "int128"}, 0,
         "unknown type 'int128' for --key-type"},
        {{"--keys", "no-such-file"}, 0, "cannot open"},
        {{"--offsets", "no-such-file"}, 0, "cannot open"},
        {{"--keys", "keys3.bin"}, 0, "keys3.bin has 3 keys, fewer than the 4 values in"},
        {{"--keys", "keys5.bin"}, 0, "keys5.bin has 5 keys, more than the 4 values in"},
        {{"--keys", "keys6b.bin"}, 0,
         "truncated binary input: 6 bytes is not a whole number of int32"},
        {{"--keys", "keys5.bin", "--key-type", "int64"}, 0, "truncated binary input: 20 bytes"},
        {{"--keys", "keys3.txt", "--chunk-items", "1"}, 1,
         "keys3.txt has 3 keys, fewer than the values in"},
        {{"--keys", "keys3.txt"}, 1, "keys3.txt has 3 keys, fewer than the values in"},
        {{"--keys", "keys5.txt", "--chunk-items", "3"}, 1,
         "keys5.txt has more keys than the 4 values in"},
        {{"--keys", "keysbad.txt"}, 1, "keysbad.txt: line 2: 'x' is not a number of type int32"},
        {{"--keys", "keys300.txt", "--key-type", "int8"}, 1,
         "line 2: 300 is out of range for int8"},
        {{"--offsets", "fall.txt"}, 1,
         "offsets[2] = 2 is less than offsets[1] = 3; offsets may not fall"},
        {{"--offsets", "fall.bin"}, 0, "offsets[1] = 0 is less than offsets[0] = 1"},
        {{"--offsets", "past.txt", "--chunk-items", "1"}, 1, "offsets[2] = 5 is past the end of"},
        {{"--offsets", "past.txt"}, 1, "offsets[2] = 5 is past the end of"},
        {{"--offsets", "past.bin"}, 0, "offsets[1] = 5 is past the end of"},
        {{"--offsets", "empty"}, 0, "has no offsets"},
        {{"--offsets", "empty"}, 1, "has no offsets"},
        {{"--offsets", "offsets12.bin"}, 0,
         "truncated binary input: 12 bytes is not a whole number of uint64"},
        {{"--offsets", "negative.txt"}, 1, "line 1: -1 is out of range for uint64"},
    };
    write_file(in_work("out"), "old", 3);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const char *args[24] = {"scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                                "--format", cases[c].text ? "text" : "binary"};
        int k = 9;
        for (int a = 0; cases[c].args[a]; ++a) /* file names are in the work directory */
            args[k++] = strchr(cases[c].args[a], '.') || strcmp(cases[c].args[a], "empty") == 0 ||
                                strcmp(cases[c].args[a], "no-such-file") == 0
                            ? in_work(cases[c].args[a])
                            : cases[c].args[a];
        args[k++] = in_work(cases[c].text ? "in.txt" : "in.bin");
        args[k++] = in_work("out");
        args[k] = NULL;
        cli_run r = run_cli_with_input(NULL, 0, args);
        expect_error(&r, 1, cases[c].message);
        char *kept = read_file(in_work("out"), NULL);
        cr_assert_str_eq(kept, "old", "case %zu (%s) changed the output", c, cases[c].message);
        free(kept);
        cli_run_free(&r);
    }

    /* IN through a pipe: the number of values shows at the end, after chunks were scanned;
     * standard output (a file here) gets nothing. */
    cli_run r = RUN_CLI_WITH_INPUT(four, sizeof four, "scan", "--backend", "cpu", "--type",
                                   "int32", "--op", "sum", "--chunk-items", "1", "--keys",
                                   in_work("keys3.bin"), "-", "-");
    expect_error(&r, 1, "keys3.bin has 3 keys, fewer than the values in standard input");
    cr_assert_eq(r.out_size, 0, "%zu bytes went to stdout", r.out_size);
    cli_run_free(&r);
    r = RUN_CLI_WITH_INPUT(four, sizeof four, "scan", "--backend", "cpu", "--type", "int32",
                           "--op", "sum", "--chunk-items", "1", "--keys", in_work("keys5.bin"),
                           "-", "-");
    expect_error(&r, 1, "keys5.bin has more keys than the 4 values in standard input");
    cr_assert_eq(r.out_size, 0, "%zu bytes went to stdout", r.out_size);
    cli_run_free(&r);
    write_offsets(in_work("past.bin"), (const size_t[]){0, 1, 5}, 3, 0);
    r = RUN_CLI_WITH_INPUT(four, sizeof four, "scan", "--backend", "cpu", "--type", "int32",
                           "--op", "sum", "--chunk-items", "2", "--offsets", in_work("past.bin"),
                           "-", "-");
    expect_error(&r, 1, "offsets[2] = 5 is past the end of standard input (4 values)");
    cr_assert_eq(r.out_size, 0, "%zu bytes went to stdout", r.out_size);
    cli_run_free(&r);

    /* IN and the keys cannot both be standard input. */
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum", "--keys", "-",
                "-", in_work("out2"));
    expect_error(&r, 1, "IN and --keys cannot both be standard input");
    cr_assert(!file_exists(in_work("out2")));
    cli_run_free(&r);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum", "--offsets", "-",
                "-", in_work("out2"));
    expect_error(&r, 1, "IN and --offsets cannot both be standard input");
    cr_assert(!file_exists(in_work("out2")));
    cli_run_free(&r);
}

/* The help names the segmented options. */
/* ---------------------------------------------------------------- compaction commands */

/* a < b for values of `type`, as C compares them. */
static int value_less(dlscan_type type, value a, value b)
{
    if (is_float(type))
        return float_value(a, type) < float_value(b, type);
    if (is_signed(type))
        return (int64_t)integer_value(a, type) < (int64_t)integer_value(b, type);
    return integer_value(a, type) < integer_value(b, type);
}

/* Issue 40: select (--flags, --if), unique and run-length-encode, for every 32- and 64-bit
 * type (those the library compacts; the others are refused), against
 * sequential references, in chunks of 1, 7 and 1000 items and the default (runs and their
 * carry cross chunk edges), binary and text. Values come in runs of 1-6 from a pool of
 * four, so runs are many and long ones cross chunks. */
ParameterizedTestParameters(cli, compaction_commands_match_a_reference)
{
    static int type_indices[] = {0, 1, 2, 3, 4, 5}; /* the types compaction takes */
    return cr_make_param_array(int, type_indices, 6);
}

ParameterizedTest(int *type_index, cli, compaction_commands_match_a_reference)
{
    const type_case *t = &every_type[*type_index];
    enum { N = 1000 };
    static value in[N], kept[N], uniques[N], runs[N], pool[4];
    static uint64_t lengths[N];
    static unsigned char flags[N];
    uint64_t rng = 4000 + (uint64_t)*type_index;
    for (int k = 0; k < 4; ++k)
        pool[k] = random_value(t->type, &rng);
    for (size_t i = 0; i < N;) {
        const value v = pool[next_random(&rng) % 4];
        for (size_t run = 1 + next_random(&rng) % 6; run > 0 && i < N; --run)
            in[i++] = v;
    }
    const value bound = pool[0];
    size_t n_kept = 0, n_flagged = 0, n_unique = 0, n_runs = 0;
    value flagged[N];
    for (size_t i = 0; i < N; ++i) {
        flags[i] = (unsigned char)(next_random(&rng) % 3 == 0 ? 0 : 1 + i % 200);
        if (flags[i])
            flagged[n_flagged++] = in[i];
        if (!value_less(t->type, in[i], bound)) /* ge bound */
            kept[n_kept++] = in[i];
        if (i == 0 || memcmp(&in[i], &in[i - 1], t->size) != 0) {
            uniques[n_unique++] = in[i];
            runs[n_runs] = in[i];
            lengths[n_runs++] = 0;
        }
        ++lengths[n_runs - 1];
    }
    value lengths_as_values[N];
    for (size_t k = 0; k < n_runs; ++k)
        lengths_as_values[k].u64 = lengths[k];
    char bound_text[32];
    format_value(t, bound, bound_text, sizeof bound_text);
    char test[48];
    snprintf(test, sizeof test, "ge %s", bound_text);

    static const char *const chunks[] = {"1", "7", "1000", NULL};
    for (int text = 0; text < 2; ++text) {
        size_t in_size, flags_size;
        char *in_data = text ? to_text(t, in, N, &in_size) : to_binary(t, in, N);
        value flag_values[N];
        for (size_t i = 0; i < N; ++i)
            flag_values[i].u8 = flags[i];
        char *flag_data = text ? to_text(TYPE(UINT8), flag_values, N, &flags_size)
                               : to_binary(TYPE(UINT8), flag_values, N);
        write_file(in_work("in"), in_data, text ? in_size : N * t->size);
        write_file(in_work("flags"), flag_data, text ? flags_size : N);
        for (int c = 0; c < 4; ++c) {
            const char *format = text ? "text" : "binary";
            const char *chunk_option = chunks[c] ? "--chunk-items" : "--threads";
            const char *chunk_value = chunks[c] ? chunks[c] : "0";
            char what[96];
            snprintf(what, sizeof what, "%s, %s, chunks of %s", t->name, format,
                     chunks[c] ? chunks[c] : "the default");

            cli_run r = RUN_CLI("select", "--backend", "cpu", "--type", t->name, "--format",
                                format, chunk_option, chunk_value, "--if", test, in_work("in"),
                                "-");
            expect_success(&r);
            expect_values(t, text, r.out, r.out_size, kept, n_kept, what);
            cli_run_free(&r);

            r = RUN_CLI("select", "--backend", "cpu", "--type", t->name, "--format", format,
                        chunk_option, chunk_value, "--flags", in_work("flags"), in_work("in"),
                        "-");
            expect_success(&r);
            expect_values(t, text, r.out, r.out_size, flagged, n_flagged, what);
            cli_run_free(&r);

            r = RUN_CLI("unique", "--backend", "cpu", "--type", t->name, "--format", format,
                        chunk_option, chunk_value, in_work("in"), "-");
            expect_success(&r);
            expect_values(t, text, r.out, r.out_size, uniques, n_unique, what);
            cli_run_free(&r);

            r = RUN_CLI("run-length-encode", "--backend", "cpu", "--type", t->name, "--format",
                        format, chunk_option, chunk_value, "--lengths", in_work("lengths"),
                        in_work("in"), "-");
            expect_success(&r);
            expect_values(t, text, r.out, r.out_size, runs, n_runs, what);
            size_t size = 0;
            char *got = read_file(in_work("lengths"), &size);
            expect_values(TYPE(UINT64), text, got, size, lengths_as_values, n_runs, what);
            free(got);
            cli_run_free(&r);
        }
        free(in_data);
        free(flag_data);
    }
}

/* The compaction commands' errors: the exit status, one line, and no output. */
Test(cli, compaction_errors_write_nothing)
{
    const int32_t values[] = {5, 5, 6};
    write_file(in_work("in.bin"), values, sizeof values);
    write_file(in_work("two-flags"), "\1\0", 2);
    write_file(in_work("four-flags"), "\1\0\1\1", 4);
    char in[512], out[512], few[512], many[512]; /* in_work's buffers rotate */
    snprintf(in, sizeof in, "%s", in_work("in.bin"));
    snprintf(out, sizeof out, "%s", in_work("out.bin"));
    snprintf(few, sizeof few, "%s", in_work("two-flags"));
    snprintf(many, sizeof many, "%s", in_work("four-flags"));
    static const struct {
        const char *args[12];
        const char *message;
    } cases[] = {
        {{"select", "--type", "int32", "IN", "OUT"}, "give one of --flags FLAGFILE and --if"},
        {{"select", "--type", "int32", "--if", "ge 1", "--flags", "FEW", "IN", "OUT"},
         "give one of"},
        {{"select", "--type", "int32", "--if", "about 3", "IN", "OUT"}, "--if takes"},
        {{"select", "--type", "int32", "--if", "ge", "IN", "OUT"}, "--if takes"},
        {{"select", "--type", "int32", "--if", "nonzero 3", "IN", "OUT"}, "--if takes"},
        {{"select", "--type", "int32", "--if", "ge x", "IN", "OUT"},
         "--if: 'x' is not a number of type int32"},
        {{"select", "--type", "int8", "--if", "< 300", "IN", "OUT"},
         "--if: 300 is out of range for int8"},
        {{"select", "--type", "int32", "--flags", "FEW", "IN", "OUT"}, "fewer flags than"},
        {{"select", "--type", "int32", "--flags", "MANY", "IN", "OUT"}, "more flags than"},
        {{"select", "--type", "int32", "--flags", "-", "-", "OUT"}, "cannot both be standard input"},
        {{"unique", "IN", "OUT"}, "unique: missing --type"},
        {{"unique", "--type", "int32", "--frob", "IN", "OUT"}, "unique: unknown option '--frob'"},
        {{"unique", "--type", "int32", "--chunk-items", "0", "IN", "OUT"}, "--chunk-items takes"},
        {{"unique", "--type", "int32", "IN", "OUT", "third"}, "unexpected argument 'third'"},
        {{"run-length-encode", "--type", "int32", "IN", "OUT"}, "missing --lengths LENFILE"},
        {{"unique", "--type", "int16", "IN", "OUT"}, "32- and 64-bit types"},
        {{"select", "--type", "uint8", "--if", "nonzero", "IN", "OUT"}, "32- and 64-bit types"},
        {{"run-length-encode", "--type", "int32", "--lengths", "-", "IN"},
         "cannot both be standard output"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const char *args[16];
        int k = 0;
        for (int a = 0; cases[c].args[a]; ++a) {
            const char *arg = cases[c].args[a];
            args[k++] = strcmp(arg, "IN") == 0     ? in
                        : strcmp(arg, "OUT") == 0  ? out
                        : strcmp(arg, "FEW") == 0  ? few
                        : strcmp(arg, "MANY") == 0 ? many
                                                   : arg;
            if (a == 0)
                args[k++] = "--backend", args[k++] = "cpu";
        }
        args[k] = NULL;
        cli_run r = run_cli_with_input(NULL, 0, args);
        expect_error(&r, 1, cases[c].message);
        cr_assert(!file_exists(out), "case %zu (%s) wrote the output", c, cases[c].message);
        cli_run_free(&r);
    }
}

Test(cli, help_tells_of_keys_and_offsets)
{
    cli_run r = RUN_CLI("scan", "--help");
    expect_success(&r);
    cr_assert(strstr(r.out, "--keys KEYFILE") && strstr(r.out, "--key-type K") &&
                  strstr(r.out, "--offsets OFFSETFILE") && strstr(r.out, "copied from IN"),
              "%s", r.out);
    cli_run_free(&r);
}

/* ---------------------------------------------------------------- usage errors */

Test(cli, usage_errors)
{
    cli_run r = RUN_CLI("info", "extra");
    expect_error(&r, 1, "unexpected argument 'extra'");
    cli_run_free(&r);
    r = run_cli_with_input(NULL, 0, (const char *const[]){NULL});
    expect_error(&r, 1, "missing command");
    cli_run_free(&r);
    r = RUN_CLI("frobnicate");
    expect_error(&r, 1, "unknown command 'frobnicate'");
    cli_run_free(&r);
    r = RUN_CLI("--frobnicate");
    expect_error(&r, 1, "unknown option '--frobnicate'");
    cli_run_free(&r);
    r = RUN_CLI("bench", "--frobnicate");
    expect_error(&r, 1, "unknown option '--frobnicate'");
    cli_run_free(&r);
    r = RUN_CLI("bench", "--backend", "cpu", "--min-log", "20", "--max-log", "10");
    expect_error(&r, 1, "--min-log 20 is larger than --max-log 10");
    cli_run_free(&r);
    r = RUN_CLI("bench", "--backend", "cpu", "--types", "int32,int128");
    expect_error(&r, 1, "--types takes");
    cli_run_free(&r);
    r = RUN_CLI("bench", "--backend", "cpu", "--markdown", in_work("table.md"));
    expect_error(&r, 1, "--markdown is an option of the GPU bench");
    cli_run_free(&r);
    r = RUN_CLI("bench", "--repeats");
    expect_error(&r, 1, "--repeats needs a value");
    cli_run_free(&r);
}

/* Each bad scan command line: exit status 1, its message, and no output file. */
Test(cli, scan_usage_errors_write_nothing)
{
    write_file(in_work("in.bin"), "\1\0\0\0", 4);
    const char *in = in_work("in.bin"), *out = in_work("out.bin");
    static const struct {
        const char *args[14];
        const char *message;
    } cases[] = {
        {{"--backend", "cpu", "--op", "sum", "IN", "OUT"}, "missing --type"},
        {{"--backend", "cpu", "--type", "int128", "--op", "sum", "IN", "OUT"}, "unknown type 'int128'"},
        {{"--backend", "cpu", "--type", "int32", "--op", "avg", "IN", "OUT"}, "unknown operator 'avg'"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "--format", "csv", "IN", "OUT"},
         "unknown format 'csv'"},
        {{"--backend", "tpu", "--type", "int32", "--op", "sum", "IN", "OUT"}, "unknown backend 'tpu'"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "--frob", "IN", "OUT"},
         "unknown option '--frob'"},
        {{"--backend", "cpu", "--op", "sum", "IN", "OUT", "--type"}, "--type needs a value"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "IN", "OUT", "third"},
         "unexpected argument 'third'"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "--chunk-items", "0", "IN", "OUT"},
         "--chunk-items takes"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "--chunk-items", "1k", "IN", "OUT"},
         "--chunk-items takes"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "--threads", "-1", "IN", "OUT"},
         "--threads takes"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "--init", "abc", "IN", "OUT"},
         "--init: 'abc' is not a number of type int32"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "--init", "3000000000", "IN", "OUT"},
         "--init: 3000000000 is out of range for int32"},
        {{"--backend", "cpu", "--type", "uint32", "--op", "sum", "--init", "-1", "IN", "OUT"},
         "--init: -1 is out of range for uint32"},
        {{"--backend", "cpu", "--type", "uint64", "--op", "sum", "--init", " -5", "IN", "OUT"},
         "--init:  -5 is out of range for uint64"},
        {{"--backend", "cpu", "--type", "int32", "--op", "sum", "IN", ""},
         "the output path is empty"},
        {{"--backend", "cpu", "--type", "int8", "--out-type", "int128", "--op", "sum", "IN", "OUT"},
         "unknown type 'int128' for --out-type"},
        {{"--backend", "cpu", "--type", "int8", "--op", "sum", "--out-type", "IN", "OUT"},
         "unknown type"},
        {{"--backend", "cpu", "--type", "uint8", "--out-type", "uint32", "--op", "sum", "--init",
          "-1", "IN", "OUT"},
         "--init: -1 is out of range for uint32"},
        {{"--backend", "cpu", "--type", "int8", "--op", "sum", "--init", "128", "IN", "OUT"},
         "--init: 128 is out of range for int8"},
        {{"--backend", "cpu", "--type", "float16", "--op", "sum", "--init", "1e5", "IN", "OUT"},
         "--init: 1e5 is out of range for float16"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const char *args[16] = {"scan"};
        int k = 1;
        for (int a = 0; cases[c].args[a]; ++a)
            args[k++] = strcmp(cases[c].args[a], "IN") == 0    ? in
                        : strcmp(cases[c].args[a], "OUT") == 0 ? out
                                                               : cases[c].args[a];
        args[k] = NULL;
        cli_run r = run_cli_with_input(NULL, 0, args);
        expect_error(&r, 1, cases[c].message);
        cr_assert(!file_exists(out), "case %zu (%s) wrote the output", c, cases[c].message);
        cli_run_free(&r);
    }
}

/* ---------------------------------------------------------------- bad files */

Test(cli, unreadable_and_unwritable_files)
{
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                        in_work("no-such-file"), in_work("out"));
    expect_error(&r, 1, "cannot open");
    cr_assert(strstr(r.err, "No such file"), "%s", r.err);
    cr_assert(!file_exists(in_work("out")));
    cli_run_free(&r);

    mkdir(in_work("a-directory"), 0755);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                in_work("a-directory"), in_work("out"));
    expect_error(&r, 1, "it is a directory");
    cr_assert(!file_exists(in_work("out")));
    cli_run_free(&r);

    write_file(in_work("in.bin"), "\1\0\0\0", 4);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum", in_work("in.bin"),
                in_work("no-such-directory/out"));
    expect_error(&r, 1, "cannot create a file");
    cli_run_free(&r);

    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum", in_work("in.bin"),
                in_work("a-directory"));
    expect_error(&r, 1, "is a directory");
    cli_run_free(&r);
}

Test(cli, truncated_binary_input)
{
    char ten_bytes[10] = {1};
    write_file(in_work("in.bin"), ten_bytes, sizeof ten_bytes);
    write_file(in_work("out.bin"), "old", 3);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                        in_work("in.bin"), in_work("out.bin"));
    expect_error(&r, 1, "truncated binary input: 10 bytes is not a whole number of int32 items");
    char *kept = read_file(in_work("out.bin"), NULL);
    cr_assert_str_eq(kept, "old", "the existing output was changed");
    free(kept);
    cli_run_free(&r);

    /* Through a pipe the size shows only at the end, after whole chunks went out. */
    char bytes[8 * 1000 + 3];
    memset(bytes, 1, sizeof bytes);
    r = RUN_CLI_WITH_INPUT(bytes, sizeof bytes, "scan", "--backend", "cpu", "--type", "uint64",
                           "--op", "max", "--chunk-items", "10", "-", "-");
    expect_error(&r, 1, "truncated binary input: 8003 bytes");
    cr_assert_eq(r.out_size, 0, "%zu bytes went to stdout", r.out_size);
    cli_run_free(&r);
    r = RUN_CLI_WITH_INPUT(bytes, sizeof bytes, "scan", "--backend", "cpu", "--type", "uint64",
                           "--op", "max", "--chunk-items", "10", "-", in_work("out2.bin"));
    expect_error(&r, 1, "truncated binary input: 8003 bytes");
    cr_assert(!file_exists(in_work("out2.bin")));
    cli_run_free(&r);
}

/* Text that is not a number, or out of range for the type: the line number, exit status 1,
 * nothing written (also when earlier chunks were already scanned). */
Test(cli, bad_text_names_the_line)
{
    static const struct {
        const char *type;
        const char *text;
        const char *message;
    } cases[] = {
        {"int32", "1\n2\nabc\n4\n", "line 3: 'abc' is not a number of type int32"},
        {"int32", "1\n\n3 x 4\n", "line 3: 'x' is not a number of type int32"},
        {"int32", "1.5\n", "line 1: 1.5 is not a whole number, as int32 needs"},
        {"int32", "1\n 1e-1\n", "line 2: 1e-1 is not a whole number, as int32 needs"},
        {"int32", "1e\n", "line 1: '1e' is not a number of type int32"},
        {"int32", "3e9\n", "line 1: 3e9 is out of range for int32"},
        {"uint8", "2.56e2\n", "line 1: 2.56e2 is out of range for uint8"},
        {"uint8", "-1e0\n", "line 1: -1e0 is out of range for uint8"},
        {"int64", "0x10\n", "line 1: '0x10' is not a number of type int64"},
        {"float64", "1\n2\n3\nnope\n", "line 4: 'nope' is not a number of type float64"},
        {"int32", "2147483647\n2147483648\n", "line 2: 2147483648 is out of range for int32"},
        {"int32", "-2147483649\n", "line 1: -2147483649 is out of range for int32"},
        {"uint32", "5\n-1\n", "line 2: -1 is out of range for uint32"},
        {"uint32", "4294967296\n", "line 1: 4294967296 is out of range for uint32"},
        {"int64", "9223372036854775808\n", "line 1: 9223372036854775808 is out of range for int64"},
        {"uint64", "18446744073709551616\n", "line 1: 18446744073709551616 is out of range for uint64"},
        {"uint64", "-5\n", "line 1: -5 is out of range for uint64"},
        {"uint64", "\v-5\n1\n", "line 1: -5 is out of range for uint64"},
        {"uint32", "1\n\f-1\n", "line 2: -1 is out of range for uint32"},
        {"float32", "1\n1e39\n", "line 2: 1e39 is out of range for float32"},
        {"float64", "-1e309\n", "line 1: -1e309 is out of range for float64"},
        {"int8", "127\n128\n", "line 2: 128 is out of range for int8"},
        {"int8", "-129\n", "line 1: -129 is out of range for int8"},
        {"uint8", "255\n256\n", "line 2: 256 is out of range for uint8"},
        {"uint8", "-1\n", "line 1: -1 is out of range for uint8"},
        {"int16", "-32768\n32768\n", "line 2: 32768 is out of range for int16"},
        {"uint16", "65536\n", "line 1: 65536 is out of range for uint16"},
        {"int16", "1.5\n", "line 1: 1.5 is not a whole number, as int16 needs"},
        {"float16", "65519\n65520\n", "line 2: 65520 is out of range for float16"},
        {"float16", "-1e39\n", "line 1: -1e39 is out of range for float16"},
        {"bfloat16", "3.3e38\n3.4e38\n", "line 2: 3.4e38 is out of range for bfloat16"},
        {"bfloat16", "one\n", "line 1: 'one' is not a number of type bfloat16"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        write_file(in_work("in.txt"), cases[c].text, strlen(cases[c].text));
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", cases[c].type, "--op", "sum",
                            "--format", "text", "--chunk-items", "1", in_work("in.txt"),
                            in_work("out.txt"));
        expect_error(&r, 1, cases[c].message);
        cr_assert(!file_exists(in_work("out.txt")), "case %zu wrote the output", c);
        cli_run_free(&r);
    }

    /* A long line, and an error far into a chunked input on stdin: stdout stays empty. */
    char long_line[400];
    memset(long_line, '1', sizeof long_line - 1);
    long_line[sizeof long_line - 1] = '\0';
    write_file(in_work("in.txt"), long_line, strlen(long_line));
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int64", "--op", "sum", "--format",
                        "text", in_work("in.txt"), in_work("out.txt"));
    expect_error(&r, 1, "is longer than 256 characters");
    cli_run_free(&r);

    size_t size = 0;
    char *text = malloc(3000 * 4 + 16);
    for (int i = 0; i < 3000; ++i)
        size += (size_t)sprintf(text + size, "%d\n", i % 100);
    size += (size_t)sprintf(text + size, "x\n");
    r = RUN_CLI_WITH_INPUT(text, size, "scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                           "--format", "text", "--chunk-items", "100", "-", "-");
    expect_error(&r, 1, "standard input: line 3001: 'x' is not a number");
    cr_assert_eq(r.out_size, 0, "%zu bytes went to stdout", r.out_size);
    cli_run_free(&r);
    free(text);
}

Test(cli, gpu_backend_without_a_gpu_fails_with_status_2)
{
    dlscan_handle_t h = NULL;
    const dlscan_status status = dlscan_create(&h);
    dlscan_destroy(h);
    write_file(in_work("in.bin"), "\1\0\0\0", 4);
    cli_run r = RUN_CLI("scan", "--backend", "gpu", "--type", "int32", "--op", "sum",
                        in_work("in.bin"), in_work("out.bin"));
    if (status == DLSCAN_SUCCESS) {
        expect_success(&r); /* this machine has a GPU */
    } else {
        expect_error(&r, 2, "--backend gpu: no usable GPU");
        cr_assert(!file_exists(in_work("out.bin")));
    }
    cli_run_free(&r);
}

/* ---------------------------------------------------------------- numbers of any length */

Test(cli, long_numbers_are_numbers)
{
    char text[512], init[512];
    snprintf(text, sizeof text, "0.1%0100d1\n%0100d42\n", 0, 0); /* 104 and 102 characters */
    snprintf(init, sizeof init, "%0400d", 0);
    write_file(in_work("in.txt"), text, strlen(text));
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "float64", "--op", "sum", "--init",
                        init, "--format", "text", in_work("in.txt"), "-");
    expect_success(&r);
    cr_assert_str_eq(r.out, "0.1\n42.1\n");
    cli_run_free(&r);
}

/* ---------------------------------------------------------------- where the output goes */

Test(cli, in_and_out_default_to_standard_input_and_output)
{
    const int32_t values[] = {1, 2, 3}, sums[] = {1, 3, 6};
    cli_run r = RUN_CLI_WITH_INPUT(values, sizeof values, "scan", "--backend", "cpu", "--type",
                                   "int32", "--op", "sum");
    expect_success(&r);
    cr_assert(r.out_size == sizeof sums && memcmp(r.out, sums, sizeof sums) == 0);
    cli_run_free(&r);
    write_file(in_work("in.bin"), values, sizeof values);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum", in_work("in.bin"));
    expect_success(&r);
    cr_assert(r.out_size == sizeof sums && memcmp(r.out, sums, sizeof sums) == 0);
    cli_run_free(&r);
}

/* Standard output that is a file gets the result whole, from a temporary file in $TMPDIR. */
/* Issue 40: numbers separated by any white space, blank lines skipped, and integers
 * written with a point or an exponent where they are whole (as jq and awk take them). */
Test(cli, text_takes_any_white_space_and_whole_exponents)
{
    static const char words[] = "1 2\t3\n\n  4\r\n\n5e0 6.0 7e1\n-0.0 2.5e1\n";
    static const struct {
        const char *type, *op, *init, *in, *out;
    } cases[] = {
        {"int32", "sum", "0", words, "1\n3\n6\n10\n15\n21\n91\n91\n116\n"},
        {"int64", "max", "-9.223372036854775808e18", words, "1\n2\n3\n4\n5\n6\n70\n70\n70\n"},
        {"uint64", "max", "0e5", "1.8446744073709551615e19 0.00e99 255e0\n",
         "18446744073709551615\n18446744073709551615\n18446744073709551615\n"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        write_file(in_work("in.txt"), cases[c].in, strlen(cases[c].in));
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", cases[c].type, "--op",
                            cases[c].op, "--init", cases[c].init, "--format", "text",
                            "--chunk-items", "2", in_work("in.txt"), "-");
        expect_success(&r);
        cr_assert_str_eq(r.out, cases[c].out, "case %zu", c);
        cli_run_free(&r);
    }
}

/* Issue 40: text is never taken silently for binary: `seq 4 | dlscan scan --type int32`
 * is refused; --format binary takes the same bytes as binary. */
Test(cli, text_is_not_taken_for_binary)
{
    const char seq[] = "1\n2\n3\n4\n";
    cli_run r = RUN_CLI_WITH_INPUT(seq, sizeof seq - 1, "scan", "--backend", "cpu", "--type",
                                   "int32");
    expect_error(&r, 1, "looks like text");
    cr_assert(strstr(r.err, "--format text"), "%s", r.err);
    cr_assert_eq(r.out_size, 0);
    cli_run_free(&r);
    /* chunks smaller than the bytes that show it */
    r = RUN_CLI_WITH_INPUT(seq, sizeof seq - 1, "scan", "--backend", "cpu", "--type", "int8",
                           "--chunk-items", "1");
    expect_error(&r, 1, "looks like text");
    cli_run_free(&r);
    write_file(in_work("in.bin"), seq, sizeof seq - 1);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", in_work("in.bin"), in_work("out"));
    expect_error(&r, 1, "looks like text");
    cr_assert(!file_exists(in_work("out")));
    cli_run_free(&r);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--format", "binary",
                in_work("in.bin"), "-");
    expect_success(&r);
    int32_t first, expected[2];
    memcpy(&first, seq, 4);
    memcpy(&expected[1], seq + 4, 4);
    expected[0] = first;
    expected[1] = (int32_t)((uint32_t)expected[1] + (uint32_t)first);
    cr_assert(r.out_size == 8 && memcmp(r.out, expected, 8) == 0);
    cli_run_free(&r);
}

/* Issue 40: no file of the command takes descriptor 0, 1 or 2 when one is closed: the
 * temporary OUT is not read as standard input, the GPU note not written into OUT; '-' for
 * a closed stream is refused. */
/* Issue 40: --op defaults to sum. */
Test(cli, op_defaults_to_sum)
{
    const int32_t values[] = {4, -1, 9}, sums[] = {4, 3, 12};
    write_file(in_work("in.bin"), values, sizeof values);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", in_work("in.bin"), "-");
    expect_success(&r);
    cr_assert(r.out_size == sizeof sums && memcmp(r.out, sums, sizeof sums) == 0);
    cli_run_free(&r);
}

Test(cli, closed_standard_descriptors)
{
    const int32_t values[] = {1, 2, 3}, sums[] = {1, 3, 6}, kept[] = {7, 7};
    write_file(in_work("in.bin"), values, sizeof values);
    write_file(in_work("keep.bin"), kept, sizeof kept);
    const char *const from_stdin[] = {"scan", "--backend", "cpu", "--type", "int32", "--op",
                                      "sum", "-", in_work("keep.bin"), NULL};
    cli_run r = run_cli_closing(0, NULL, 0, from_stdin);
    expect_error(&r, 1, "standard input is closed");
    size_t size;
    char *got = read_file(in_work("keep.bin"), &size);
    cr_assert(size == sizeof kept && memcmp(got, kept, size) == 0, "keep.bin was replaced");
    free(got);
    cli_run_free(&r);

    /* Files still work with any of the three closed; the default backend's note goes nowhere. */
    for (int closed = 0; closed < 3; ++closed) {
        const char *const files[] = {"scan", "--type", "int32", "--op", "sum", in_work("in.bin"),
                                     in_work("out.bin"), NULL};
        r = run_cli_closing(closed, NULL, 0, files);
        expect_success(&r);
        got = read_file(in_work("out.bin"), &size);
        cr_assert(size == sizeof sums && memcmp(got, sums, size) == 0,
                  "descriptor %d closed: OUT holds %zu bytes, not the sums", closed, size);
        free(got);
        cli_run_free(&r);
    }

    const char *const to_stdout[] = {"scan", "--backend", "cpu", "--type", "int32", "--op",
                                     "sum", in_work("in.bin"), "-", NULL};
    r = run_cli_closing(1, NULL, 0, to_stdout);
    expect_error(&r, 1, "standard output is closed");
    cli_run_free(&r);
}

Test(cli, standard_output_spools_in_tmpdir)
{
    setenv("TMPDIR", in_work("no-such-directory"), 1);
    cli_run r = RUN_CLI_WITH_INPUT("\1\0\0\0", 4, "scan", "--backend", "cpu", "--type", "int32",
                                   "--op", "sum", "-", "-");
    expect_error(&r, 2, "cannot create a temporary file for standard output");
    cli_run_free(&r);
}

static void sleep_10_ms(void)
{
    const struct timespec t = {0, 10 * 1000 * 1000};
    nanosleep(&t, NULL);
}

/* Reads what `fd` has within 10 seconds, up to size - 1 bytes, NUL-terminated. */
static void read_within_10_seconds(int fd, char *text, size_t size)
{
    size_t used = 0;
    for (int waited = 0; used == 0 && waited < 1000; ++waited) {
        const ssize_t got = read(fd, text, size - 1);
        if (got > 0)
            used = (size_t)got;
        else
            sleep_10_ms();
    }
    text[used] = '\0';
}

/* Issue 40: binary output to a terminal is refused, as zstd refuses it; text goes. */
Test(cli, binary_output_to_a_terminal_is_refused)
{
    const int32_t values[] = {1, 2};
    write_file(in_work("in.bin"), values, sizeof values);
    write_file(in_work("in.txt"), "1\n2\n", 4);
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0, "no pseudo-terminal");
    const int terminal = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    fcntl(master, F_SETFD, FD_CLOEXEC);
    cr_assert(terminal >= 0);
    for (int text = 0; text < 2; ++text) {
        const int err = open(in_work("stderr"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        const char *const args[] = {"scan", "--backend", "cpu", "--type", "int32", "--format",
                                    text ? "text" : "binary",
                                    in_work(text ? "in.txt" : "in.bin"), NULL};
        int to_stdin;
        const pid_t pid = start_cli(args, &to_stdin, terminal, err, SIG_IGN);
        close(to_stdin);
        int wait_status;
        cr_assert(waitpid(pid, &wait_status, 0) == pid);
        cr_assert(WIFEXITED(wait_status));
        close(err);
        char *message = read_file(in_work("stderr"), NULL);
        if (text) {
            cr_assert_eq(WEXITSTATUS(wait_status), 0, "%s", message);
            char got[64] = "";
            read_within_10_seconds(master, got, sizeof got);
            cr_assert(strstr(got, "1") && strstr(got, "3"), "the terminal got '%s'", got);
        } else {
            cr_assert_eq(WEXITSTATUS(wait_status), 1);
            cr_assert(strstr(message, "is a terminal") && strstr(message, "--format text"),
                      "%s", message);
        }
        free(message);
    }
    close(terminal);
    close(master);
}

/* A pipe gets each chunk as it is computed; a pipe that closes is a failed write, 2. */
Test(cli, a_pipe_receives_the_output_as_it_is_computed)
{
    int from_cli[2], to_cli;
    make_pipe(from_cli);
    fcntl(from_cli[0], F_SETFL, O_NONBLOCK);
    const int err = open("/dev/null", O_WRONLY | O_CLOEXEC);
    const pid_t pid = start_cli((const char *const[]){"scan", "--backend", "cpu", "--type", "int64",
                                                      "--op", "sum", "--format", "text",
                                                      "--chunk-items", "1", "-", "-", NULL},
                                &to_cli, from_cli[1], err, SIG_IGN);
    close(from_cli[1]);
    char got[64];
    cr_assert_eq(write(to_cli, "5\n", 2), 2);
    read_within_10_seconds(from_cli[0], got, sizeof got);
    cr_assert_str_eq(got, "5\n", "the first line did not come before the input ended");
    cr_assert_eq(write(to_cli, "7\n", 2), 2);
    read_within_10_seconds(from_cli[0], got, sizeof got);
    cr_assert_str_eq(got, "12\n");
    close(to_cli);
    int wait_status;
    cr_assert(waitpid(pid, &wait_status, 0) == pid);
    cr_assert(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    close(from_cli[0]);
    close(err);

    /* Nobody reads: the write fails (SIGPIPE is ignored here, so it is EPIPE). */
    make_pipe(from_cli);
    close(from_cli[0]);
    static int32_t values[100000];
    cli_run r;
    const int err_file = open(in_work("stderr"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const pid_t writer = start_cli((const char *const[]){"scan", "--backend", "cpu", "--type",
                                                         "int32", "--op", "sum", NULL},
                                   &to_cli, from_cli[1], err_file, SIG_IGN);
    close(from_cli[1]);
    close(err_file);
    for (size_t done = 0; done < sizeof values;) {
        const ssize_t wrote = write(to_cli, (char *)values + done, sizeof values - done);
        if (wrote <= 0)
            break;
        done += (size_t)wrote;
    }
    close(to_cli);
    cr_assert(waitpid(writer, &wait_status, 0) == writer);
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    r.out = NULL;
    r.err = read_file(in_work("stderr"), NULL);
    expect_error(&r, 2, "writing standard output failed");
    cli_run_free(&r);
}

/* A FIFO and a device node are written straight, not replaced by a file. */
Test(cli, fifos_and_devices_are_written_not_replaced)
{
    const int32_t values[] = {1, 2, 3}, sums[] = {1, 3, 6};
    write_file(in_work("in.bin"), values, sizeof values);
    cr_assert(mkfifo(in_work("fifo"), 0644) == 0);
    const int reader = open(in_work("fifo"), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    cr_assert(reader >= 0);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                        in_work("in.bin"), in_work("fifo"));
    expect_success(&r);
    cli_run_free(&r);
    int32_t got[4] = {0};
    cr_assert_eq(read(reader, got, sizeof got), (ssize_t)sizeof sums,
                 "nothing came through the FIFO");
    cr_assert(memcmp(got, sums, sizeof sums) == 0);
    close(reader);
    struct stat st;
    cr_assert(lstat(in_work("fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    cr_assert_eq(leftover_temporary_files(), 0);

    /* Nodes like /dev/null and /dev/full, where this test may make them (root). */
    static const struct {
        const char *name;
        unsigned minor;
        int status;
    } nodes[] = {{"null", 3, 0}, {"full", 7, 2}};
    for (size_t k = 0; k < 2; ++k) {
        const char *node = in_work(nodes[k].name);
        if (mknod(node, S_IFCHR | 0666, makedev(1, nodes[k].minor)) != 0)
            continue;
        const int fd = open(node, O_WRONLY | O_CLOEXEC);
        if (fd < 0) { /* a container that does not let this test open devices */
            unlink(node);
            continue;
        }
        close(fd);
        r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                    in_work("in.bin"), node);
        if (nodes[k].status)
            expect_error(&r, nodes[k].status, "writing");
        else
            expect_success(&r);
        cli_run_free(&r);
        cr_assert(lstat(node, &st) == 0 && S_ISCHR(st.st_mode), "%s was replaced", node);
        unlink(node);
    }
}

/* As cp: through a symbolic link, its target is replaced (its temporary file next to it). */
Test(cli, symbolic_links_are_followed)
{
    const int32_t values[] = {1, 2, 3}, sums[] = {1, 3, 6};
    write_file(in_work("in.bin"), values, sizeof values);
    cr_assert(mkdir(in_work("sub"), 0755) == 0);
    write_file(in_work("sub/target"), "old", 3);
    chmod(in_work("sub/target"), 0640);
    cr_assert(symlink("sub/target", in_work("link")) == 0);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                        in_work("in.bin"), in_work("link"));
    expect_success(&r);
    cli_run_free(&r);
    struct stat st;
    cr_assert(lstat(in_work("link"), &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
    size_t size;
    char *got = read_file(in_work("sub/target"), &size);
    cr_assert(got && size == sizeof sums && memcmp(got, sums, sizeof sums) == 0);
    free(got);
    cr_assert(stat(in_work("sub/target"), &st) == 0 && (st.st_mode & 0777) == 0640);
    cr_assert_eq(leftover_in(in_work("sub")), 0);

    cr_assert(symlink("nowhere", in_work("dangling")) == 0);
    r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum", in_work("in.bin"),
                in_work("dangling"));
    expect_error(&r, 1, "cannot follow the symbolic link");
    cli_run_free(&r);
    unlink(in_work("sub/target"));
    rmdir(in_work("sub"));
}

/* A file that `>` could not write is not replaced. Root may write any file, so the command
 * also refuses one without any write permission bit: this test passes as root or not. */
Test(cli, a_read_only_output_is_refused)
{
    write_file(in_work("in.bin"), "\1\0\0\0", 4);
    write_file(in_work("ro.bin"), "old", 3);
    chmod(in_work("ro.bin"), 0444);
    cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--op", "sum",
                        in_work("in.bin"), in_work("ro.bin"));
    expect_error(&r, 1, "cannot write");
    cr_assert(strstr(r.err, "Permission denied"), "%s", r.err);
    char *kept = read_file(in_work("ro.bin"), NULL);
    cr_assert_str_eq(kept, "old", "the read-only file was replaced");
    free(kept);
    cli_run_free(&r);
}

/* ---------------------------------------------------------------- signals */

/* Waits up to 10 seconds for the command's temporary file to appear. */
static int temporary_file_appears(void)
{
    for (int waited = 0; waited < 1000; ++waited) {
        if (leftover_temporary_files() > 0)
            return 1;
        sleep_10_ms();
    }
    return 0;
}

/* Each signal that ends the command, sent again and again until it ends, removes its
 * temporary file first and ends it as that signal does. */
Test(cli, signals_remove_the_temporary_file)
{
    const int signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE,   SIGALRM, SIGTERM,  SIGUSR1,
                           SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGRTMIN, SIGRTMAX};
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    for (size_t k = 0; k < sizeof signals / sizeof signals[0]; ++k) {
        const int s = signals[k];
        for (int round = 0; round < (s == SIGINT || s == SIGTERM ? 20 : 1); ++round) {
            int to_cli;
            const pid_t pid = start_cli((const char *const[]){"scan", "--backend", "cpu", "--type",
                                                              "int32", "--op", "sum", "-",
                                                              in_work("out.bin"), NULL},
                                        &to_cli, null, null, SIG_DFL);
            cr_assert(temporary_file_appears(), "signal %d: no temporary file", s);
            int wait_status;
            pid_t ended;
            do /* again and again, also while its handler runs */
                kill(pid, s);
            while ((ended = waitpid(pid, &wait_status, WNOHANG)) == 0);
            cr_assert_eq(ended, pid);
            close(to_cli);
            cr_assert(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == s,
                      "signal %d: the command did not end by it", s);
            cr_assert_eq(leftover_temporary_files(), 0, "signal %d left the temporary file", s);
            cr_assert(!file_exists(in_work("out.bin")));
        }
    }
    close(null);
}

/* ---------------------------------------------------------------- Unix habits */

Test(cli, quiet_version_and_help_for_one_command)
{
    const int32_t values[] = {4, 5};
    cli_run r = RUN_CLI_WITH_INPUT(values, sizeof values, "scan", "-q", "--type", "int32", "--op",
                                   "max", "-", "-");
    expect_success(&r);
    cr_assert_str_eq(r.err, "", "--quiet printed: %s", r.err);
    cli_run_free(&r);
    r = RUN_CLI("bench", "--quiet", "--types", "int32", "--min-log", "10", "--max-log", "10",
                "--repeats", "1");
    expect_success(&r);
    cr_assert(strstr(r.err, "no usable GPU") == NULL, "--quiet printed: %s", r.err);
    cli_run_free(&r);

    r = RUN_CLI("-V");
    expect_success(&r);
    cr_assert(strncmp(r.out, "dlscan ", 7) == 0, "%s", r.out);
    cli_run_free(&r);

    static const struct {
        const char *args[3];
        const char *has, *has_not;
    } helps[] = {
        {{"scan", "--help"}, "usage: dlscan scan", "dlscan bench ["},
        {{"scan", "-h"}, "--chunk-items", "--plot"},
        {{"help", "scan"}, "--quiet", "dlscan info\n"},
        {{"bench", "--help"}, "--plot", "--chunk-items"},
        {{"info", "--help"}, "usage: dlscan info", "--type"},
    };
    for (size_t k = 0; k < sizeof helps / sizeof helps[0]; ++k) {
        r = run_cli_with_input(NULL, 0, helps[k].args);
        expect_success(&r);
        cr_assert(strstr(r.out, helps[k].has) && !strstr(r.out, helps[k].has_not) &&
                      strstr(r.out, "Exit status"),
                  "%s %s: %s", helps[k].args[0], helps[k].args[1], r.out);
        cli_run_free(&r);
    }
    r = RUN_CLI("help", "frobnicate");
    expect_error(&r, 1, "unknown command 'frobnicate'");
    cli_run_free(&r);
}

/* The man page (`dlscan --man`, which the build installs as dlscan.1) has every option that
 * the help lists. */
Test(cli, the_man_page_has_every_option_of_the_help)
{
    cli_run help = RUN_CLI("--help"), man = RUN_CLI("--man");
    expect_success(&help);
    expect_success(&man);
    cr_assert(strncmp(man.out, ".TH DLSCAN 1 ", 13) == 0, "%.40s", man.out);
    /* The page as text: "\-" is "-", "\fB" and "\fR" switch fonts, "\&" is nothing. */
    char *text = malloc(man.out_size + 1), *t = text;
    for (const char *m = man.out; *m; ++m) {
        if (m[0] != '\\' || !m[1]) {
            *t++ = *m;
        } else if (m[1] == '-') {
            *t++ = '-';
            ++m;
        } else if (m[1] == '&') {
            ++m;
        } else if (m[1] == 'f' && m[2]) {
            m += 2;
        }
    }
    *t = '\0';
    int options = 0;
    for (const char *h = help.out; (h = strchr(h, '-')); ++h) {
        const size_t dashes = strspn(h, "-");
        const size_t length = dashes + strspn(h + dashes, "abcdefghijklmnopqrstuvwxyzV-");
        if (h > help.out && strchr(" [(|", h[-1]) && length > 1 && length < 40 &&
            (h[1] == '-' || h[2] == ' ' || h[2] == ',' || h[2] == ']')) {
            char option[48];
            memcpy(option, h, length);
            option[length] = '\0';
            int found = 0;
            for (const char *at = text; !found && (at = strstr(at, option)); ++at)
                found = !strchr("abcdefghijklmnopqrstuvwxyz-", at[length]);
            cr_assert(found, "the man page lacks %s", option);
            ++options;
        }
        h += length - 1;
    }
    cr_assert_gt(options, 20, "only %d options in the help", options);

    /* The installed page is this text: dlscan.1 next to the command in the build tree. */
    char page[4096];
    snprintf(page, sizeof page, "%s", getenv("DLSCAN_CLI"));
    char *slash = strrchr(page, '/');
    if (slash && (strcpy(slash + 1, "dlscan.1"), file_exists(page))) {
        char *built = read_file(page, NULL);
        cr_assert_str_eq(built, man.out, "%s is not what dlscan --man prints", page);
        free(built);
    }
    free(text);
    cli_run_free(&help);
    cli_run_free(&man);
}

/* bench --csv: checked before the sweep (1), a failed write is 2. */
/* Issue 40: the manual's examples (the man page's EXAMPLES) run as they are, in the work
 * directory with the command on PATH, and where an example's text is only numbers ("3, 3,
 * 4"), those are its output, one a line. */
Test(cli, the_examples_of_the_manual_run)
{
    cli_run help = RUN_CLI("--help");
    expect_success(&help);
    const char *examples = strstr(help.out, "\nExamples");
    cr_assert(examples, "the manual has no examples");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", getenv("DLSCAN_CLI"));
    *strrchr(dir, '/') = '\0';
    int count = 0;
    for (const char *line = strchr(examples + 1, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        const size_t length = strcspn(line, "\n");
        if (strncmp(line, "  ", 2) != 0 || line[2] == ' ')
            continue;
        char example[256], shell[1400];
        snprintf(example, sizeof example, "%.*s", (int)length - 2, line + 2);
        char *gap = strstr(example, "   ");
        cr_assert(gap, "an example without its text: %s", example);
        *gap = '\0';
        const char *text = gap + strspn(gap + 1, " ") + 1;
        snprintf(shell, sizeof shell, "cd '%s' && PATH='%s':\"$PATH\" && { %s ; } > example.out",
                 work_dir, dir, example);
        const int status = system(shell);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "'%s' failed (%d)", example,
                  status);
        if (text[strspn(text, "0123456789, ")] == '\0') {
            char *out = read_file(in_work("example.out"), NULL), want[128];
            size_t used = 0;
            for (const char *t = text; *t; t += strspn(t, ", "))
                used += (size_t)snprintf(want + used, sizeof want - used, "%.*s\n",
                                         (int)strcspn(t, ", "), t), t += strcspn(t, ", ");
            cr_assert_str_eq(out, want, "'%s' wrote other than its text says", example);
            free(out);
        }
        ++count;
    }
    cr_assert(count >= 5, "%d examples", count);
    cli_run_free(&help);
    const char *made[] = {"example.out", "in", "out", "f", "n"};
    for (size_t k = 0; k < sizeof made / sizeof made[0]; ++k)
        unlink(in_work(made[k]));
}

Test(cli, bench_csv_failures)
{
    cli_run r = RUN_CLI("bench", "--backend", "cpu", "--types", "int32", "--min-log", "10",
                        "--max-log", "10", "--repeats", "1", "--csv", in_work("no-such-dir/x.csv"));
    expect_error(&r, 1, "cannot create a file");
    cli_run_free(&r);
    if (!file_exists("/dev/full"))
        return;
    r = RUN_CLI("bench", "--backend", "cpu", "--types", "int32", "--min-log", "10", "--max-log",
                "10", "--repeats", "1", "--csv", "/dev/full");
    expect_error(&r, 2, "writing /dev/full failed");
    cli_run_free(&r);
}

/* --axis-length, --axis-stride and --totals: two [2][3] int32 arrays scanned down their
 * columns from --init, in one chunk and in chunks of one array; what they refuse (status 1,
 * no OUT). */
Test(cli, axis_scans_totals_and_errors)
{
    const int32_t in[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    const int32_t want[12] = {6, 7, 8, 10, 12, 14, 12, 13, 14, 22, 24, 26};
    const int32_t sums[6] = {10, 12, 14, 22, 24, 26};
    write_file(in_work("in.bin"), in, sizeof in);
    for (int chunked = 0; chunked < 2; ++chunked) {
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", "--init", "5",
                            "--axis-length", "2", "--axis-stride", "3", "--totals",
                            in_work("totals.bin"), "--chunk-items", chunked ? "7" : "12",
                            in_work("in.bin"), in_work("out.bin"));
        expect_success(&r);
        size_t size, totals_size;
        char *got = read_file(in_work("out.bin"), &size);
        char *totals = read_file(in_work("totals.bin"), &totals_size);
        cr_assert(size == sizeof want && memcmp(got, want, size) == 0, "chunked %d", chunked);
        cr_assert(totals_size == sizeof sums && memcmp(totals, sums, totals_size) == 0);
        free(got);
        free(totals);
        cli_run_free(&r);
    }
    static const char *const refused[][5] = {
        {"--axis-stride", "3", "-q", "-q", "--axis-stride needs --axis-length"},
        {"--totals", "t", "-q", "-q", "--totals needs --axis-length"},
        {"--axis-length", "2", "--keys", "k", "--axis-length and --keys exclude each other"},
        {"--axis-length", "5", "-q", "-q", "12 values are not a whole number of arrays"},
        {"--axis-length", "6", "--chunk-items", "5", "--chunk-items 5 holds less than one array"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; ++k) {
        unlink(in_work("out.bin"));
        cli_run r = RUN_CLI("scan", "--backend", "cpu", "--type", "int32", refused[k][0],
                            refused[k][1], refused[k][2], refused[k][3], in_work("in.bin"),
                            in_work("out.bin"));
        expect_error(&r, 1, refused[k][4]);
        cr_assert(!file_exists(in_work("out.bin")), "%s left OUT", refused[k][0]);
        cli_run_free(&r);
    }
    unlink(in_work("in.bin"));
    unlink(in_work("totals.bin"));
}
