/*
 * binding.h: what the files of the extension module dlscan._dlscan share: the element kinds
 * of Python arrays, an operand (an array taken from a Python object through the buffer
 * protocol, __dlpack__ or __cuda_array_interface__), the per-thread handles and the errors.
 *
 * The module's files: module.c (the module, its errors and the helpers it calls in
 * dlscan/__init__.py), handles.c (handles per thread and device, CUDA devices and streams),
 * arrays.c (operands, outputs, scalar values), scan.c (cumsum, cummin, cummax), compact.c
 * (select, unique, run_length_encode, reduce_by_key), operator.c (linear_recurrence, cumprod,
 * logcumsumexp: dlscan's built-in user operators; and dlscan.scan's call with an operator of the
 * caller's, which dlscan/_operator.py works out).
 */
#ifndef DLSCAN_PY_BINDING_H
#define DLSCAN_PY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "dlscan.h"

/* ---- Element kinds ----
 * The twelve dlscan_type values; bool: NumPy's and DLPack's one-byte booleans, scanned as uint8
 * (cummin and cummax keep them 0 and 1; cumsum counts them) and taken as select's flags; and the
 * complex numbers, which only the calls that set dlpy_place's takes_complex take (the complex
 * linear recurrence: float32 and float64 parts). */
enum { DLPY_BOOL = 12, DLPY_COMPLEX64 = 13, DLPY_COMPLEX128 = 14, DLPY_KINDS = 15 };

typedef struct dlpy_kind_info {
    const char *name;  /* NumPy's and PyTorch's name: "int32", "float16", "bool" */
    size_t size;       /* bytes per item */
    char format;       /* the buffer protocol's (struct module's) format character */
    int is_float;
    int is_signed;
} dlpy_kind_info;

extern const dlpy_kind_info dlpy_kinds[DLPY_KINDS];

/* The dlscan_type that runs a kind (bool runs as uint8). */
static inline dlscan_type dlpy_type(int kind)
{
    return kind == DLPY_BOOL ? DLSCAN_UINT8 : (dlscan_type)kind;
}

/* ---- Where an array lives ---- */
enum { DLPY_HOST = -1 }; /* device of host memory: a CPU handle scans it */

/* Where the arrays of one call live and which stream runs it. The first operand (the input)
 * sets the device; the stream is chosen then (dlpy_call_stream, handles.c) and every later
 * operand is taken on it. */
typedef struct dlpy_place {
    int device;          /* DLPY_HOST or a CUDA device number */
    PyObject *stream;    /* the stream= argument, or NULL */
    int stream_known;    /* handle below chosen */
    uintptr_t handle;    /* the cudaStream_t the call runs on (0: the legacy default stream) */
    int torch_known;     /* torch_stream read (arrays.c's door for PyTorch's tensors) */
    uintptr_t torch_stream; /* PyTorch's current stream on device, which the call follows */
    int takes_complex;   /* complex operands are taken (else refused as a type dlscan does not take) */
} dlpy_place;

/* ---- Operands ---- */
enum { DLPY_MAX_DIMS = 64 }; /* NumPy's limit, and the buffer protocol's */

typedef struct dlpy_array {
    PyObject *object;  /* the Python array (a new reference) */
    void *data;
    size_t n;          /* items: the product of the extents */
    int kind;
    int readonly;
    /* what holds the memory while the call runs: one of these is set */
    int has_view;
    Py_buffer view;
    PyObject *capsule; /* a DLPack capsule, released unconsumed: its producer frees it */
    int ndim;          /* 1, but for an operand taken by dlpy_array_take_nd */
    size_t shape[DLPY_MAX_DIMS]; /* the extents of the ndim dimensions */
    int torch;         /* a PyTorch tensor (taken through its door): cumsum follows PyTorch's rules */
} dlpy_array;

#define DLPY_ARRAY_EMPTY {NULL, NULL, 0, 0, 0, 0, {0}, NULL, 0, {0}, 0}

/* Takes the 1-D contiguous array `object` (argument `name` of the Python call `func`) into
 * *a. For the first operand of a call, place->device is set from it; for later ones the array
 * must live on place->device. writable: an output, which may not be read-only. Returns 0, or
 * -1 with a Python exception set (TypeError for an object that is no array or of an element
 * type dlscan does not take, ValueError for an array that is not 1-D and contiguous, a
 * read-only output or one on another device). */
int dlpy_array_take(dlpy_array *a, PyObject *object, const char *func, const char *name,
                    dlpy_place *place, int first, int writable);

/* dlpy_array_take for an array of any number of dimensions (0 to DLPY_MAX_DIMS), C-contiguous
 * (row-major, as numpy.ascontiguousarray and x.contiguous() make them): the scans' x and out.
 * a->ndim and a->shape say its shape; a->n is its size. ValueError for one that is not
 * C-contiguous, saying how to copy it. */
int dlpy_array_take_nd(dlpy_array *a, PyObject *object, const char *func, const char *name,
                       dlpy_place *place, int first, int writable);

/* A new array of n items of `kind`, of the same library and device as `like` (through
 * dlscan/__init__.py's _empty), taken into *a. */
int dlpy_array_new(dlpy_array *a, PyObject *like, size_t n, int kind, const char *func,
                   const char *name, dlpy_place *place);

/* The same, of `ndim` dimensions (1 or more) of the extents `shape`, C-contiguous. */
int dlpy_array_new_shaped(dlpy_array *a, PyObject *like, int ndim, const size_t *shape, int kind,
                          const char *func, const char *name, dlpy_place *place);

/* "(2, 3)": a shape as Python writes a tuple, for messages (a new reference, or NULL with an
 * exception set). */
PyObject *dlpy_shape_text(int ndim, const size_t *shape);

void dlpy_array_release(dlpy_array *a);

/* out (an operand given with out=, or NULL) checked against the length and kind wanted, or
 * a new array like `like` when out is NULL. */
int dlpy_output(dlpy_array *a, PyObject *out, PyObject *like, size_t n, int kind,
                const char *func, const char *name, dlpy_place *place);

/* The kind a dtype= argument names (a name, a NumPy dtype or scalar type, a PyTorch dtype),
 * or -1 with TypeError set. */
int dlpy_kind_from_dtype(PyObject *dtype, const char *func);

/* One value of `kind`, converted from a Python number into value (8 bytes). OverflowError,
 * saying the number does not fit the kind, for an integer out of an integer kind's range or
 * past float64's (a float kind rounds every float64, to inf past its range); TypeError for a
 * non-number. */
int dlpy_value(PyObject *number, int kind, const char *func, const char *name, void *value);

/* ---- Handles, devices and streams (handles.c) ---- */

/* The calling thread's handle for place->device, created on first use. On a CUDA device it
 * also makes that device current (dlpy_restore_device puts the caller's back). NULL with a
 * Python exception set where the handle cannot be created. */
dlscan_handle_t dlpy_handle(const dlpy_place *place, const char *func, int *previous_device);
void dlpy_restore_device(int previous_device);

/* The CUDA device of device memory p (through cudaPointerGetAttributes), or -1 with an
 * exception set. */
int dlpy_pointer_device(const void *p, const char *func, const char *name);

/* Sets place->handle where it is not chosen yet: the stream= argument, else `producer` (the
 * stream a __cuda_array_interface__ names, or 0 where it names none), else the current stream
 * of the library that made `like` (PyTorch, CuPy), else the legacy default stream. */
int dlpy_call_stream(dlpy_place *place, PyObject *like, uintptr_t producer, int has_producer);

/* Makes the call's stream wait for work enqueued on `producer` (a __cuda_array_interface__
 * stream other than the call's), without blocking the host. */
int dlpy_wait_for(const dlpy_place *place, uintptr_t producer, const char *func);

/* offsets= (scan.c): a 1-D int64 or uint64 array of at least one item (the segments' starts and
 * the last one's end) taken into *segments on place's device; 0, or -1 with an exception set. */
int dlpy_take_offsets(dlpy_array *segments, PyObject *offsets, const char *func, dlpy_place *place);

/* keys= or offsets= (scan.c; either may be None, not both): keys, n of a real kind, or offsets
 * (dlpy_take_offsets) taken into *segments on place's device (left empty where both are None);
 * `items` names the array the keys go with. 0, or -1 with an exception set. */
int dlpy_take_segments(dlpy_array *segments, PyObject *keys, PyObject *offsets, size_t n, const char *items,
                       const char *func, dlpy_place *place);

/* The dimension that axis= names among ndim (a 0-d array counts as one), in *d (scan.c). TypeError
 * for no integer; numpy.exceptions.AxisError for one out of range. */
int dlpy_axis(PyObject *axis, int ndim, const char *func, int *d);

/* The scans of `in` along dimension d (scan.c): their length, and the items between two of a
 * scan's items (the product of the extents after d). */
void dlpy_axis_shape(const dlpy_array *in, int d, size_t *length, size_t *stride);

/* group= (scan.c): an mpi4py communicator or a torch.distributed process group as a
 * dlscan_exchange whose context is *g (which must outlive the call); a torch.distributed group's
 * on a GPU handle h is the peer exchange (dlscan_peers_create), made on the group's first call
 * on the device (on `stream`) and kept. Returns 0, or -1 with a Python error set. */
typedef struct dlpy_group {
    PyObject *group;
    int ranks;
    int device_memory; /* 1: the group gathers device memory (torch.distributed) */
} dlpy_group;
int dlpy_group_exchange(PyObject *group, dlscan_handle_t h, cudaStream_t stream, dlpy_group *g,
                        dlscan_exchange *exchange);

/* Sets DLSCAN_OPTION_DETERMINISTIC where it differs from the handle's value. */
int dlpy_set_deterministic(dlscan_handle_t h, int deterministic, const char *func);

/* ---- Errors and helpers (module.c) ---- */

/* Raises the exception for a failed dlscan call on h: dlscan.ArgumentError (a ValueError),
 * dlscan.DtypeError (a TypeError), dlscan.OutOfMemoryError (a MemoryError) or dlscan.Error,
 * carrying dlscan_last_error(h) and the status. Returns NULL. */
PyObject *dlpy_raise(dlscan_handle_t h, dlscan_status status, const char *func);
PyObject *dlpy_raise_status(dlscan_status status, const char *message, const char *func);

/* dlscan/__init__.py's helpers, set by its call of _dlscan._setup(): _empty(like, shape,
 * dtype), _dtype_name(dtype), _stream_handle(stream), _current_stream(like, device),
 * _torch_door(), _axis_error(axis, ndim, prefix), _group_ranks(group) and
 * _group_all_gather(group, send, recv, nbytes, on_device, stream) (scans across ranks). */
extern PyObject *dlpy_empty_helper, *dlpy_dtype_helper, *dlpy_stream_helper,
    *dlpy_current_stream_helper, *dlpy_torch_door_helper, *dlpy_axis_error_helper,
    *dlpy_group_ranks_helper, *dlpy_group_all_gather_helper;

/* An operand or Python return value that is a tuple of two (out=(a, b)) split into a and b,
 * each NULL where None or where out is NULL. */
int dlpy_split_out(PyObject *out, PyObject **a, PyObject **b, const char *func);

/* A slice out[:count] of an output (the CPU calls return arrays as long as their count). */
PyObject *dlpy_head(PyObject *array, size_t count);

/* The functions (scan.c, compact.c, operator.c). */
PyObject *dlpy_cumsum(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_cummin(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_cummax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_reserve(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_select(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_unique(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_run_length_encode(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_reduce_by_key(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_linear_recurrence(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_cumprod(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *dlpy_scan_with(PyObject *self, PyObject *args); /* dlscan.scan's (dlscan/__init__.py) */
PyObject *dlpy_logcumsumexp(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
