/*
 * jit.c: user operators on GPU handles (dlscan.h, "Your own operator"). An operator's kernel is
 * device/user_kernel.cuh after the operator's source: NVRTC compiles it to a cubin for the
 * handle's GPU, the CUDA runtime loads it as a library, and each scan launches it like a built-in
 * kernel. NVRTC (libnvrtc) is loaded with dlopen when first needed, so that dlscan runs where it is
 * absent; $DLSCAN_NVRTC names its file, or is "off".
 *
 * An operator has six programs (user_kernel.cuh, DL_USER_THIS_PROGRAM): one scan of n items,
 * compiled when the operator is made; scans along rows, segmented scans over offsets and by key,
 * scans down columns and reduce-by-key, each compiled when a call first needs it (or
 * dlscan_reserve_scan names one).
 *
 * The cubins are cached, keyed by a 128-bit hash of everything that makes them: the library's
 * version, the GPU's architecture, NVRTC's version, the generated source (the operator's text,
 * its sizes and identity) and the embedded device headers. In memory for the process, and on
 * disk as <key>.cubin in $DLSCAN_CACHE_DIR (off: none), $XDG_CACHE_HOME/dlscan or
 * ~/.cache/dlscan, written to a temporary file and renamed, so that a reader never sees half a
 * file.
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "enqueue.h"
#include "internal.h"
#include "jit.h"

/* ---------------------------------------------------------------- NVRTC, loaded at run time */

typedef int dl_nvrtc_result; /* nvrtcResult: 0 is success */
typedef struct dl_nvrtc_program *dl_nvrtc_program;

typedef struct dl_nvrtc {
    void *library;
    const char *(*error_string)(dl_nvrtc_result);
    dl_nvrtc_result (*version)(int *major, int *minor);
    dl_nvrtc_result (*create)(dl_nvrtc_program *, const char *src, const char *name, int headers,
                              const char *const *header_texts, const char *const *header_names);
    dl_nvrtc_result (*compile)(dl_nvrtc_program, int options, const char *const *option_texts);
    dl_nvrtc_result (*log_size)(dl_nvrtc_program, size_t *);
    dl_nvrtc_result (*log)(dl_nvrtc_program, char *);
    dl_nvrtc_result (*cubin_size)(dl_nvrtc_program, size_t *);
    dl_nvrtc_result (*cubin)(dl_nvrtc_program, char *);
    dl_nvrtc_result (*destroy)(dl_nvrtc_program *);
    int major, minor;
    char why[256]; /* where it could not be loaded, why */
} dl_nvrtc;

static dl_nvrtc dl_nvrtc_api;
static pthread_once_t dl_nvrtc_once = PTHREAD_ONCE_INIT;

static void dl_nvrtc_open(void)
{
    dl_nvrtc *api = &dl_nvrtc_api;
    const char *chosen = getenv("DLSCAN_NVRTC");
    if (chosen && strcmp(chosen, "off") == 0) {
        snprintf(api->why, sizeof api->why, "DLSCAN_NVRTC=off");
        return;
    }
    const char *names[] = {chosen, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !api->library; ++i)
        if (names[i] && *names[i])
            api->library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!api->library) {
        snprintf(api->why, sizeof api->why,
                 "no libnvrtc.so.13, .so.12 or .so on the library path (%s); set DLSCAN_NVRTC to its path",
                 chosen && *chosen ? "nor DLSCAN_NVRTC's" : "DLSCAN_NVRTC unset");
        return;
    }
    struct {
        void **slot;
        const char *name;
    } symbols[] = {
        {(void **)&api->error_string, "nvrtcGetErrorString"}, {(void **)&api->version, "nvrtcVersion"},
        {(void **)&api->create, "nvrtcCreateProgram"},        {(void **)&api->compile, "nvrtcCompileProgram"},
        {(void **)&api->log_size, "nvrtcGetProgramLogSize"},  {(void **)&api->log, "nvrtcGetProgramLog"},
        {(void **)&api->cubin_size, "nvrtcGetCUBINSize"},     {(void **)&api->cubin, "nvrtcGetCUBIN"},
        {(void **)&api->destroy, "nvrtcDestroyProgram"},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; ++i) {
        *symbols[i].slot = dlsym(api->library, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(api->why, sizeof api->why, "the libnvrtc found has no %s", symbols[i].name);
            dlclose(api->library);
            api->library = NULL;
            return;
        }
    }
    if (api->version(&api->major, &api->minor) != 0)
        api->major = api->minor = 0;
}

/* ---------------------------------------------------------------- the source */

/* The system headers the device headers include, as NVRTC gets them: it has no C library. */
static const char dl_stub_stdint[] =
    "#pragma once\n"
    "typedef signed char int8_t; typedef unsigned char uint8_t;\n"
    "typedef short int16_t; typedef unsigned short uint16_t;\n"
    "typedef int int32_t; typedef unsigned int uint32_t;\n"
    "typedef long long int64_t; typedef unsigned long long uint64_t;\n"
    "typedef unsigned long long uintptr_t;\n"
    "#define INT32_MIN (-2147483647 - 1)\n#define INT32_MAX 2147483647\n#define UINT32_MAX 0xffffffffu\n"
    "#define INT64_MIN (-9223372036854775807ll - 1)\n#define INT64_MAX 9223372036854775807ll\n"
    "#define UINT64_MAX 0xffffffffffffffffull\n";
static const char dl_stub_stddef[] = "#pragma once\n"
                                     "typedef unsigned long size_t;\n"
                                     "#ifndef NULL\n#define NULL 0\n#endif\n"
                                     "#define offsetof(t, m) __builtin_offsetof(t, m)\n";
static const char dl_stub_empty[] = "#pragma once\n";

/* The kernel's source: the operator's sizes, flags and identity and the program (DL_USER_PROGRAM_*)
 * as macros, its text (op->text), then user_kernel.cuh. Returns a malloc'd string, or NULL. */
static char *dl_jit_source(const struct dlscan_operator *op, int program)
{
    char head[1024];
    int at = snprintf(head, sizeof head,
                      "#define DL_USER_STATE_BYTES %zu\n#define DL_USER_IN_BYTES %zu\n"
                      "#define DL_USER_IN2_BYTES %zu\n#define DL_USER_OUT_BYTES %zu\n"
                      "#define DL_USER_LOAD %d\n#define DL_USER_STORE %d\n#define DL_USER_THIS_PROGRAM %d\n"
                      "#define DL_USER_IDENTITY_WORDS ",
                      op->state_bytes, op->in_bytes, op->in2_bytes, op->out_bytes,
                      (op->flags & DLSCAN_OPERATOR_LOAD) != 0, (op->flags & DLSCAN_OPERATOR_STORE) != 0, program);
    for (size_t k = 0; k < op->state_bytes / 4; ++k)
        at += snprintf(head + at, sizeof head - (size_t)at, "%s0x%08xu", k ? ", " : "", op->identity[k]);
    at += snprintf(head + at, sizeof head - (size_t)at, "\n#line 1 \"operator\"\n");
    static const char tail[] = "\n#include \"user_kernel.cuh\"\n";
    const size_t bytes = (size_t)at + strlen(op->text) + sizeof tail;
    char *source = malloc(bytes);
    if (source)
        snprintf(source, bytes, "%s%s%s", head, op->text, tail);
    return source;
}

/* ---------------------------------------------------------------- the caches */

typedef struct dl_hash {
    uint64_t a, b;
} dl_hash;

static void dl_hash_add(dl_hash *h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; ++i) { /* two FNV-1a streams, offset apart */
        h->a = (h->a ^ p[i]) * 0x100000001b3ull;
        h->b = (h->b ^ (p[i] + 0x5bu)) * 0x100000001b3ull;
    }
    h->a ^= bytes, h->b += bytes; /* the length too: "ab" + "c" is not "a" + "bc" */
}

typedef struct dl_cached {
    char key[33];
    void *cubin;
    size_t bytes;
    struct dl_cached *next;
} dl_cached;

static dl_cached *dl_memory_cache;
static pthread_mutex_t dl_memory_lock = PTHREAD_MUTEX_INITIALIZER;

/* A copy of the process's cubin for key, or NULL. */
static void *dl_memory_find(const char *key, size_t *bytes)
{
    void *copy = NULL;
    pthread_mutex_lock(&dl_memory_lock);
    for (dl_cached *c = dl_memory_cache; c; c = c->next)
        if (strcmp(c->key, key) == 0 && (copy = malloc(c->bytes))) {
            memcpy(copy, c->cubin, c->bytes);
            *bytes = c->bytes;
            break;
        }
    pthread_mutex_unlock(&dl_memory_lock);
    return copy;
}

static void dl_memory_keep(const char *key, const void *cubin, size_t bytes)
{
    dl_cached *c = calloc(1, sizeof *c);
    if (!c || !(c->cubin = malloc(bytes))) {
        free(c);
        return; /* only a cache */
    }
    memcpy(c->cubin, cubin, bytes);
    c->bytes = bytes;
    snprintf(c->key, sizeof c->key, "%s", key);
    pthread_mutex_lock(&dl_memory_lock);
    c->next = dl_memory_cache;
    dl_memory_cache = c;
    pthread_mutex_unlock(&dl_memory_lock);
}

/* The disk cache's directory, made where it is missing; 0 where there is none. */
static int dl_disk_dir(char *dir, size_t size)
{
    const char *chosen = getenv("DLSCAN_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (chosen && strcmp(chosen, "off") == 0)
        return 0;
    int made;
    if (chosen && *chosen)
        made = snprintf(dir, size, "%s", chosen);
    else if (xdg && *xdg)
        made = snprintf(dir, size, "%s/dlscan", xdg);
    else if (home && *home)
        made = snprintf(dir, size, "%s/.cache/dlscan", home);
    else
        return 0;
    if (made <= 0 || (size_t)made >= size)
        return 0;
    for (char *p = dir + 1; *p; ++p) /* mkdir -p */
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    return mkdir(dir, 0755) == 0 || errno == EEXIST;
}

static void *dl_disk_find(const char *key, size_t *bytes)
{
    char dir[4096], path[4200];
    if (!dl_disk_dir(dir, sizeof dir))
        return NULL;
    snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    void *cubin = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (cubin = malloc((size_t)size)) && fread(cubin, 1, (size_t)size, f) != (size_t)size) {
        free(cubin);
        cubin = NULL;
    }
    fclose(f);
    if (cubin)
        *bytes = (size_t)size;
    return cubin;
}

static void dl_disk_keep(const char *key, const void *cubin, size_t bytes)
{
    char dir[4096], path[4200], temporary[4300];
    if (!dl_disk_dir(dir, sizeof dir))
        return;
    snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
    snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(temporary, "wb");
    if (!f)
        return; /* only a cache */
    const int written = fwrite(cubin, 1, bytes, f) == bytes;
    if (fclose(f) == 0 && written && rename(temporary, path) == 0)
        return;
    remove(temporary);
}

/* The persistent kernel's ring of stages (policy.h; device/user_kernel.cuh), in bytes, for
 * `program`. */
static size_t dl_user_ring_bytes(const struct dlscan_operator *op, int program)
{
    const size_t stage = DL_USER_STAGE(DL_USER_VALUE(op->state_bytes, DL_USER_LIFTED(program)), op->in_bytes, op->in2_bytes,
                                       program == DL_USER_PROGRAM_KEYS || program == DL_USER_PROGRAM_RUNS);
    return (size_t)DL_USER_STAGES(stage) * stage;
}

/* ---------------------------------------------------------------- compiling */

/* Compiles source for sm_<arch>: a malloc'd cubin, or a status with h's last error set. */
static dlscan_status dl_jit_compile(dlscan_handle_t h, const dl_nvrtc *api, const char *source, int arch,
                                    void **cubin, size_t *bytes)
{
    enum { stubs = 5 };
    const char *names[64], *texts[64];
    const int count = dl_jit_file_count + stubs;
    if (count > 64)
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED, "too many device headers");
    for (int i = 0; i < dl_jit_file_count; ++i) {
        names[i] = dl_jit_files[i].name;
        texts[i] = dl_jit_files[i].text;
    }
    const char *stub_names[stubs] = {"stdint.h", "stddef.h", "string.h", "assert.h", "cuda_runtime.h"};
    const char *stub_texts[stubs] = {dl_stub_stdint, dl_stub_stddef, dl_stub_empty, dl_stub_empty, dl_stub_empty};
    for (int i = 0; i < stubs; ++i) {
        names[dl_jit_file_count + i] = stub_names[i];
        texts[dl_jit_file_count + i] = stub_texts[i];
    }
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=sm_%d", arch);
    const char *options[] = {arch_option, "-std=c++17", "-default-device"};
    dl_nvrtc_program program = NULL;
    dl_nvrtc_result result = api->create(&program, source, "dlscan_operator.cu", count, texts, names);
    if (result != 0)
        return dl_fail(h, DLSCAN_ERROR_COMPILE, "nvrtcCreateProgram: %s", api->error_string(result));
    result = api->compile(program, (int)(sizeof options / sizeof options[0]), options);
    dlscan_status status = DLSCAN_SUCCESS;
    if (result != 0) {
        size_t log_bytes = 0;
        char *log = NULL;
        if (api->log_size(program, &log_bytes) == 0 && log_bytes > 0 && (log = malloc(log_bytes)) &&
            api->log(program, log) != 0)
            log[0] = '\0';
        status = dl_fail(h, DLSCAN_ERROR_COMPILE, "the operator did not compile for sm_%d (NVRTC %d.%d: %s): %s",
                         arch, api->major, api->minor, api->error_string(result), log ? log : "no log");
        free(log);
    } else if (api->cubin_size(program, bytes) != 0 || !(*cubin = malloc(*bytes)) ||
               api->cubin(program, *cubin) != 0) {
        free(*cubin);
        *cubin = NULL;
        status = dl_fail(h, DLSCAN_ERROR_COMPILE, "NVRTC compiled the operator but gave no cubin");
    }
    api->destroy(&program);
    return status;
}

static double dl_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Loads a cubin into op's `program`: its kernels (four: one block per tile and persistent, each
 * with a tree and a left fold, the persistent ones let use their ring of stages; the columns' two,
 * wide and narrow), and a built-in's constant (operator.c) into the
 * module's dlscan_constant. */
static cudaError_t dl_jit_load(struct dlscan_operator *op, int program, const void *cubin, int device)
{
    static const char *const scans[4] = {"dl_user_scan", "dl_user_scan_left_fold", "dl_user_scan_persistent",
                                         "dl_user_scan_persistent_left_fold"};
    static const char *const columns[4] = {"dl_user_columns", "dl_user_columns_narrow", NULL, NULL};
    const char *const *names = program == DL_USER_PROGRAM_COLUMNS ? columns : scans;
    cudaLibrary_t library = NULL;
    cudaKernel_t kernels[4] = {NULL, NULL, NULL, NULL};
    cudaError_t error = cudaLibraryLoadData(&library, cubin, NULL, NULL, 0, NULL, NULL, 0);
    for (int k = 0; k < 4 && names[k] && error == cudaSuccess; ++k)
        error = cudaLibraryGetKernel(&kernels[k], library, names[k]);
    for (int k = 2; k < 4 && names[k] && error == cudaSuccess; ++k)
        error = cudaKernelSetAttributeForDevice(kernels[k], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                (int)dl_user_ring_bytes(op, program), device);
    if (error == cudaSuccess && op->has_item2) {
        void *constant = NULL;
        size_t bytes = 0;
        error = cudaLibraryGetGlobal(&constant, &bytes, library, "dlscan_constant");
        if (error == cudaSuccess)
            error = bytes == op->in_bytes ? cudaMemcpy(constant, op->item2, bytes, cudaMemcpyHostToDevice)
                                          : cudaErrorInvalidSymbol;
    }
    if (error != cudaSuccess) {
        if (library)
            cudaLibraryUnload(library);
        return error;
    }
    op->library[program] = library;
    for (int k = 0; k < 4; ++k)
        op->kernels[program][k] = (const void *)kernels[k];
    return cudaSuccess;
}

static pthread_mutex_t dl_programs_lock = PTHREAD_MUTEX_INITIALIZER;
static dlscan_status dl_jit_make(dlscan_handle_t h, struct dlscan_operator *op, int program);

dlscan_status dl_jit_build(dlscan_handle_t h, struct dlscan_operator *op, int program)
{
    if (program == DL_USER_PROGRAM_ONE)
        return dl_jit_make(h, op, program);
    /* (each later program once, however many threads scan with the operator) */
    pthread_mutex_lock(&dl_programs_lock);
    const dlscan_status status = op->library[program] ? DLSCAN_SUCCESS : dl_jit_make(h, op, program);
    pthread_mutex_unlock(&dl_programs_lock);
    return status;
}

static dlscan_status dl_jit_make(dlscan_handle_t h, struct dlscan_operator *op, int program)
{
    const double start = dl_now_ms();
    int device = 0, major = 0, minor = 0;
    cudaError_t error;
    if ((error = cudaGetDevice(&device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) != cudaSuccess ||
        (error = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device)) != cudaSuccess)
        return dl_fail(h, DLSCAN_ERROR_CUDA, "reading the device's compute capability: %s", cudaGetErrorString(error));
    if (program != DL_USER_PROGRAM_ONE && device != op->device) /* (its constant would be written on another device) */
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "args->custom was made for device %d, and this call runs on device %d", op->device, device);
    const int arch = major * 10 + minor;
    pthread_once(&dl_nvrtc_once, dl_nvrtc_open);
    const dl_nvrtc *api = &dl_nvrtc_api;
    char *source = dl_jit_source(op, program);
    if (!source)
        return dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY, "the operator's source");

    /* The key. (Without NVRTC only the process's cache can serve: a key names the NVRTC version
     * that made its cubin, unknown here.) */
    dl_hash hash = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
    char facts[128];
    const int facts_bytes = snprintf(facts, sizeof facts, "dlscan %d sm_%d nvrtc %d.%d", dlscan_version(), arch,
                                     api->major, api->minor);
    dl_hash_add(&hash, facts, (size_t)facts_bytes);
    dl_hash_add(&hash, source, strlen(source));
    for (int i = 0; i < dl_jit_file_count; ++i) {
        dl_hash_add(&hash, dl_jit_files[i].name, strlen(dl_jit_files[i].name));
        dl_hash_add(&hash, dl_jit_files[i].text, strlen(dl_jit_files[i].text));
    }
    char key[33];
    snprintf(key, sizeof key, "%016llx%016llx", (unsigned long long)hash.a, (unsigned long long)hash.b);

    /* The cubin from the process's cache, the disk's (compiled anew where that one does not
     * load: a file from another build, or damaged) or NVRTC; kept in the caches once it loads. */
    size_t bytes = 0;
    void *cubin = dl_memory_find(key, &bytes);
    int from = cubin ? 1 : 2;
    if (!cubin && api->library)
        cubin = dl_disk_find(key, &bytes);
    error = cubin ? dl_jit_load(op, program, cubin, device) : cudaErrorInvalidKernelImage;
    if (error != cudaSuccess && from != 1) {
        free(cubin);
        cubin = NULL;
        dlscan_status status = api->library ? dl_jit_compile(h, api, source, arch, &cubin, &bytes)
                                            : dl_fail(h, DLSCAN_ERROR_NO_COMPILER, "NVRTC could not be loaded: %s",
                                                      api->why);
        if (status != DLSCAN_SUCCESS) {
            free(source);
            return status;
        }
        from = 0;
        if ((error = dl_jit_load(op, program, cubin, device)) == cudaSuccess)
            dl_disk_keep(key, cubin, bytes);
    }
    free(source);
    if (error == cudaSuccess && from != 1)
        dl_memory_keep(key, cubin, bytes);
    free(cubin);
    if (error != cudaSuccess)
        return dl_fail(h, DLSCAN_ERROR_CUDA, "loading the operator's compiled code: %s", cudaGetErrorString(error));
    if (program == DL_USER_PROGRAM_ONE) { /* (dlscan_operator_info tells of the operator's making) */
        op->device = device;
        op->source = from;
        op->milliseconds = dl_now_ms() - start;
    }
    return DLSCAN_SUCCESS;
}

void dl_jit_free(struct dlscan_operator *op)
{
    for (int program = 0; program < DL_USER_PROGRAMS; ++program) {
        if (op->library[program])
            cudaLibraryUnload((cudaLibrary_t)op->library[program]);
        op->library[program] = NULL;
    }
}

/* ---------------------------------------------------------------- launching */

/* The persistent kernel where the policy row runs them (sm_90), for more tiles than its
 * threshold and 16-byte aligned inputs (bulk copies); else one block per tile. Along rows
 * (row_length set), over offsets, by key or reduce-by-key, that program, which dl_jit_build has
 * loaded (along rows of whole tiles or warps' runs, the one scan's: DL_USER_ROW_CHAINS). */
int dl_jit_launch(const struct dlscan_operator *op, const dl_user_params *params, int left_fold,
                  int dependent_launch, cudaStream_t stream)
{
    const dl_scan_params *p = &params->scan;
    const int program =
        DL_USER_PROGRAM(p->row_length, 1, params->offsets, params->keys, params->num_runs, op->state_bytes);
    const int aligned = (uintptr_t)p->in % 16 == 0 && (uintptr_t)params->in2 % 16 == 0 &&
                        (uintptr_t)params->keys % 16 == 0;
    const int persistent = aligned && p->persistent_blocks > 0 && p->tiles > p->persistent_from;
    const uint32_t grid = p->persistent_blocks / DL_SCAN_BLOCKS_PER_SM * DL_USER_BLOCKS_PER_SM;
    return dl_enqueue(op->kernels[program][2 * persistent + (left_fold ? 1 : 0)], params,
                      persistent && grid < p->tiles ? grid : p->tiles,
                      persistent ? DL_USER_RING_THREADS(program) : DL_USER_THREADS,
                      persistent ? dl_user_ring_bytes(op, program) : 0, dependent_launch, stream);
}

/* A column scan (DL_USER_PROGRAM_COLUMNS, which dl_jit_build has loaded): one block per tile, as
 * the built-in column kernel (device/axis_kernel.cu). */
int dl_jit_launch_columns(const struct dlscan_operator *op, const dl_user_column_params *params,
                          int dependent_launch, cudaStream_t stream)
{
    return dl_enqueue(op->kernels[DL_USER_PROGRAM_COLUMNS][params->axis.shape.narrow ? 1 : 0], params,
                      params->axis.scan.tiles, DL_AXIS_THREADS, 0, dependent_launch, stream);
}
