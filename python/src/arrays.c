/*
 * arrays.c: Python objects as dlscan operands. An array comes in through one of four doors,
 * tried in this order:
 *   - the buffer protocol (NumPy arrays, array.array, memoryview): host memory, a CPU handle;
 *   - PyTorch's tensors: DLPack, through torch.utils.dlpack.to_dlpack (why: at that door);
 *   - __dlpack__ (PyTorch, CuPy, JAX; NumPy too, but the buffer protocol comes first): a
 *     CUDA device's memory (kDLCUDA, kDLCUDAManaged) or host memory (kDLCPU, kDLCUDAHost).
 *     The capsule is borrowed for the call and released unconsumed, so its producer frees it;
 *   - __cuda_array_interface__ (CuPy, Numba): a CUDA device's memory.
 * Each must be one-dimensional and contiguous, but for the scans' x and out, which may have any
 * number of dimensions and must be C-contiguous (dlpy_array_take_nd). No data is copied.
 * Also here: new outputs (through dlscan/__init__.py's _empty), dtype= names and scalar values
 * (init, select's operand) converted to an element kind.
 */
#include "binding.h" /* Python.h first, as Python asks */

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const dlpy_kind_info dlpy_kinds[DLPY_KINDS] = {
    [DLSCAN_INT32] = {"int32", 4, 'i', 0, 1},      [DLSCAN_UINT32] = {"uint32", 4, 'I', 0, 0},
    [DLSCAN_INT64] = {"int64", 8, 'q', 0, 1},      [DLSCAN_UINT64] = {"uint64", 8, 'Q', 0, 0},
    [DLSCAN_FLOAT32] = {"float32", 4, 'f', 1, 1},  [DLSCAN_FLOAT64] = {"float64", 8, 'd', 1, 1},
    [DLSCAN_INT8] = {"int8", 1, 'b', 0, 1},        [DLSCAN_UINT8] = {"uint8", 1, 'B', 0, 0},
    [DLSCAN_INT16] = {"int16", 2, 'h', 0, 1},      [DLSCAN_UINT16] = {"uint16", 2, 'H', 0, 0},
    [DLSCAN_FLOAT16] = {"float16", 2, 'e', 1, 1},  [DLSCAN_BFLOAT16] = {"bfloat16", 2, 0, 1, 1},
    [DLPY_BOOL] = {"bool", 1, '?', 0, 0},
    [DLPY_COMPLEX64] = {"complex64", 8, 0, 1, 1}, [DLPY_COMPLEX128] = {"complex128", 16, 0, 1, 1},
};

/* The integer kinds by size, signed and unsigned. */
static int dlpy_integer_kind(size_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? DLSCAN_INT8 : DLSCAN_UINT8;
    case 2: return is_signed ? DLSCAN_INT16 : DLSCAN_UINT16;
    case 4: return is_signed ? DLSCAN_INT32 : DLSCAN_UINT32;
    case 8: return is_signed ? DLSCAN_INT64 : DLSCAN_UINT64;
    }
    return -1;
}

static int dlpy_float_kind(size_t size)
{
    return size == 2 ? DLSCAN_FLOAT16 : size == 4 ? DLSCAN_FLOAT32 : size == 8 ? DLSCAN_FLOAT64 : -1;
}

static int dlpy_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* The kind of a buffer's items from its struct-module format, or -1. */
static int dlpy_kind_from_format(const char *format, Py_ssize_t itemsize)
{
    if (!format)
        return DLSCAN_UINT8; /* the buffer protocol's plain bytes */
    if (*format == '>' || *format == '!') {
        if (dlpy_little_endian())
            return -1;
        ++format;
    } else if (*format == '<') {
        if (!dlpy_little_endian())
            return -1;
        ++format;
    } else if (*format == '@' || *format == '=') {
        ++format;
    }
    const size_t size = (size_t)itemsize;
    if (format[0] == 'Z' && format[1] != '\0' && format[2] == '\0') /* NumPy's complex: "Zf", "Zd" */
        return format[1] == 'f' && size == 8    ? DLPY_COMPLEX64
               : format[1] == 'd' && size == 16 ? DLPY_COMPLEX128
                                                : -1;
    if (format[0] == '\0' || format[1] != '\0')
        return -1;
    switch (format[0]) {
    case '?': return size == 1 ? DLPY_BOOL : -1;
    case 'e': return size == 2 ? DLSCAN_FLOAT16 : -1;
    case 'f': return size == 4 ? DLSCAN_FLOAT32 : -1;
    case 'd': return size == 8 ? DLSCAN_FLOAT64 : -1;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': return dlpy_integer_kind(size, 1);
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': return dlpy_integer_kind(size, 0);
    }
    return -1;
}

/* "dtype complex128" where the object has a dtype, else what its format or type says. */
static PyObject *dlpy_describe_type(PyObject *object, const char *fallback)
{
    PyObject *dtype = PyObject_GetAttrString(object, "dtype");
    if (dtype) {
        PyObject *text = PyUnicode_FromFormat("dtype %S", dtype);
        Py_DECREF(dtype);
        return text;
    }
    PyErr_Clear();
    return PyUnicode_FromString(fallback);
}

static int dlpy_unsupported_type(PyObject *object, const char *func, const char *name,
                                 const char *fallback)
{
    PyObject *what = dlpy_describe_type(object, fallback);
    if (what) {
        PyErr_Format(PyExc_TypeError,
                     "dlscan.%s: %s has %U, which dlscan does not take; it takes bool, int8 .. "
                     "int64, uint8 .. uint64, float16, bfloat16, float32 and float64 (and complex64 and "
                     "complex128 in linear_recurrence)",
                     func, name, what);
        Py_DECREF(what);
    }
    return -1;
}

static int dlpy_not_1d(const char *func, const char *name, int ndim)
{
    PyErr_Format(PyExc_ValueError,
                 "dlscan.%s: %s is %d-dimensional; dlscan takes one-dimensional arrays "
                 "(flatten it first, e.g. x.ravel() or x.reshape(-1))",
                 func, name, ndim);
    return -1;
}

static int dlpy_not_contiguous(const char *func, const char *name, long long stride,
                               size_t itemsize)
{
    PyErr_Format(PyExc_ValueError,
                 "dlscan.%s: %s is not contiguous (a stride of %lld bytes between items of %zu "
                 "bytes); dlscan takes contiguous arrays (copy it first, e.g. "
                 "numpy.ascontiguousarray(x) or x.contiguous())",
                 func, name, stride, itemsize);
    return -1;
}

PyObject *dlpy_shape_text(int ndim, const size_t *shape)
{
    PyObject *tuple = PyTuple_New(ndim);
    for (int d = 0; tuple && d < ndim; ++d) {
        PyObject *extent = PyLong_FromSize_t(shape[d]);
        if (!extent)
            Py_CLEAR(tuple);
        else
            PyTuple_SET_ITEM(tuple, d, extent);
    }
    PyObject *text = tuple ? PyObject_Repr(tuple) : NULL;
    Py_XDECREF(tuple);
    return text;
}

/* ValueError: an N-D array whose items are not in C order, one after the other. */
static int dlpy_not_c_contiguous(const dlpy_array *a, const int64_t *strides, const char *func,
                                 const char *name)
{
    PyObject *steps = PyTuple_New(a->ndim);
    for (int d = 0; steps && d < a->ndim; ++d) {
        PyObject *step = PyLong_FromLongLong((long long)strides[d]);
        if (!step)
            Py_CLEAR(steps);
        else
            PyTuple_SET_ITEM(steps, d, step);
    }
    PyObject *shape = steps ? dlpy_shape_text(a->ndim, a->shape) : NULL;
    if (shape)
        PyErr_Format(PyExc_ValueError,
                     "dlscan.%s: %s is not C-contiguous (shape %U, strides %R in bytes, items of "
                     "%zu bytes); dlscan takes C-contiguous arrays (copy it first, e.g. "
                     "numpy.ascontiguousarray(x) or x.contiguous())",
                     func, name, shape, steps, dlpy_kinds[a->kind].size);
    Py_XDECREF(shape);
    Py_XDECREF(steps);
    return -1;
}

static int dlpy_too_many_dimensions(const char *func, const char *name, long long ndim)
{
    PyErr_Format(PyExc_ValueError, "dlscan.%s: %s has %lld dimensions; dlscan takes at most %d",
                 func, name, ndim, (int)DLPY_MAX_DIMS);
    return -1;
}

/* The shape of an operand whose kind is known: ndim extents `shape` and, unless `strides` is
 * NULL (C-contiguous), their strides in bytes, into a->ndim, a->shape and a->n. Refuses an
 * operand that is not 1-D unless nd, more than DLPY_MAX_DIMS dimensions, and items that are
 * not contiguous in C order (an array of at most one item is, whatever its strides; so is an
 * axis of extent 1). */
static int dlpy_take_shape(dlpy_array *a, int ndim, const int64_t *shape, const int64_t *strides,
                           int nd, const char *func, const char *name)
{
    if (!nd && ndim != 1)
        return dlpy_not_1d(func, name, ndim);
    if (ndim < 0 || ndim > DLPY_MAX_DIMS)
        return dlpy_too_many_dimensions(func, name, ndim);
    size_t n = 1;
    int overflow = 0;
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] < 0) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: %s has the extent %lld", func, name,
                         (long long)shape[d]);
            return -1;
        }
        a->shape[d] = (size_t)shape[d];
        overflow |= a->shape[d] && n > SIZE_MAX / a->shape[d];
        n *= a->shape[d];
    }
    a->ndim = ndim;
    a->n = n;
    if (overflow && n) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: %s has more items than memory holds", func,
                     name);
        return -1;
    }
    if (!strides || n <= 1)
        return 0;
    const int64_t itemsize = (int64_t)dlpy_kinds[a->kind].size;
    if (ndim == 1)
        return strides[0] == itemsize ? 0 : dlpy_not_contiguous(func, name, strides[0],
                                                                  (size_t)itemsize);
    int64_t expected = itemsize;
    for (int d = ndim - 1; d >= 0; --d) {
        if (shape[d] != 1 && strides[d] != expected)
            return dlpy_not_c_contiguous(a, strides, func, name);
        expected *= shape[d];
    }
    return 0;
}

/* Every operand of a call lives where the first does. */
static int dlpy_place_device(dlpy_place *place, int device, int first, const char *func,
                             const char *name)
{
    if (first) {
        place->device = device;
        return 0;
    }
    if (device == place->device)
        return 0;
    char here[32], there[32];
    snprintf(here, sizeof here, device == DLPY_HOST ? "host memory" : "cuda:%d", device);
    snprintf(there, sizeof there, place->device == DLPY_HOST ? "host memory" : "cuda:%d",
             place->device);
    PyErr_Format(PyExc_ValueError, "dlscan.%s: %s is in %s, and the input in %s", func, name,
                 here, there);
    return -1;
}

static int dlpy_take_buffer(dlpy_array *a, PyObject *object, const char *func, const char *name,
                            dlpy_place *place, int first, int nd)
{
    if (PyObject_GetBuffer(object, &a->view, PyBUF_RECORDS_RO) < 0) {
        /* NumPy exports no buffer of some types (datetime64): say which types dlscan takes. */
        if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_BufferError))
            return -1;
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject *dtype = PyObject_GetAttrString(object, "dtype");
        if (!dtype) {
            PyErr_Clear();
            PyErr_Restore(type, value, traceback);
            return -1;
        }
        Py_DECREF(dtype);
        Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(traceback);
        return dlpy_unsupported_type(object, func, name, "");
    }
    a->has_view = 1;
    if (!nd && a->view.ndim != 1)
        return dlpy_not_1d(func, name, a->view.ndim);
    a->kind = dlpy_kind_from_format(a->view.format, a->view.itemsize);
    if (a->kind < 0) {
        char fallback[64];
        snprintf(fallback, sizeof fallback, "items of buffer format '%.20s'",
                 a->view.format ? a->view.format : "B");
        return dlpy_unsupported_type(object, func, name, fallback);
    }
    const int ndim = a->view.ndim;
    int64_t shape[DLPY_MAX_DIMS], strides[DLPY_MAX_DIMS];
    for (int d = 0; d < ndim && d < DLPY_MAX_DIMS; ++d) {
        shape[d] = (int64_t)a->view.shape[d];
        strides[d] = a->view.strides ? (int64_t)a->view.strides[d] : 0;
    }
    if (dlpy_take_shape(a, ndim, shape, a->view.strides ? strides : NULL, nd, func, name) < 0)
        return -1;
    a->data = a->view.buf;
    a->readonly = a->view.readonly;
    return dlpy_place_device(place, DLPY_HOST, first, func, name);
}

/* ---- DLPack: the ABI of dlpack.h (versions 0.x and 1.x), as its producers pass it ---- */
typedef struct dlpy_dl_device {
    int32_t device_type;
    int32_t device_id;
} dlpy_dl_device;
typedef struct dlpy_dl_datatype {
    uint8_t code; /* 0 int, 1 uint, 2 float, 4 bfloat, 6 bool */
    uint8_t bits;
    uint16_t lanes;
} dlpy_dl_datatype;
typedef struct dlpy_dl_tensor {
    void *data;
    dlpy_dl_device device;
    int32_t ndim;
    dlpy_dl_datatype dtype;
    int64_t *shape;
    int64_t *strides; /* in items; NULL: compact */
    uint64_t byte_offset;
} dlpy_dl_tensor;
typedef struct dlpy_dl_managed { /* DLManagedTensor, capsule "dltensor" */
    dlpy_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(void *self);
} dlpy_dl_managed;
typedef struct dlpy_dl_managed_versioned { /* DLManagedTensorVersioned, "dltensor_versioned" */
    uint32_t major, minor;
    void *manager_ctx;
    void (*deleter)(void *self);
    uint64_t flags; /* bit 0: read-only */
    dlpy_dl_tensor dl_tensor;
} dlpy_dl_managed_versioned;

enum { DLPY_KDLCPU = 1, DLPY_KDLCUDA = 2, DLPY_KDLCUDAHOST = 3, DLPY_KDLCUDAMANAGED = 13 };

static int dlpy_kind_from_dlpack(dlpy_dl_datatype t)
{
    if (t.lanes != 1)
        return -1;
    switch (t.code) {
    case 0:
    case 1: return t.bits % 8 ? -1 : dlpy_integer_kind(t.bits / 8, t.code == 0);
    case 2: return t.bits % 8 ? -1 : dlpy_float_kind(t.bits / 8);
    case 4: return t.bits == 16 ? DLSCAN_BFLOAT16 : -1;
    case 5: return t.bits == 64 ? DLPY_COMPLEX64 : t.bits == 128 ? DLPY_COMPLEX128 : -1;
    case 6: return t.bits == 8 ? DLPY_BOOL : -1;
    }
    return -1;
}

/* The capsule a->capsule (from __dlpack__ or to_dlpack) read into *a: one-dimensional (any
 * number of dimensions where nd), contiguous, of a kind dlscan takes. device: where to put the
 * CUDA device it names (NULL: the caller knows it from __dlpack_device__). */
static int dlpy_read_capsule(dlpy_array *a, PyObject *object, const char *func, const char *name,
                             int *device, int nd)
{
    dlpy_dl_tensor *t;
    if (PyCapsule_IsValid(a->capsule, "dltensor_versioned")) {
        dlpy_dl_managed_versioned *m = PyCapsule_GetPointer(a->capsule, "dltensor_versioned");
        if (m->major != 1) {
            PyErr_Format(PyExc_TypeError, "dlscan.%s: %s comes as DLPack %u.%u; dlscan reads 1.x",
                         func, name, m->major, m->minor);
            return -1;
        }
        t = &m->dl_tensor;
        a->readonly = (int)(m->flags & 1);
    } else if (PyCapsule_IsValid(a->capsule, "dltensor")) {
        t = &((dlpy_dl_managed *)PyCapsule_GetPointer(a->capsule, "dltensor"))->dl_tensor;
    } else {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: %s.__dlpack__() returned no DLPack capsule",
                     func, name);
        return -1;
    }
    if (device) {
        const int type = t->device.device_type;
        if (type != DLPY_KDLCPU && type != DLPY_KDLCUDA) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: %s lives on DLPack device type %d", func,
                         name, type);
            return -1;
        }
        *device = type == DLPY_KDLCPU ? DLPY_HOST : t->device.device_id;
    }
    if (!nd && t->ndim != 1)
        return dlpy_not_1d(func, name, t->ndim);
    a->kind = dlpy_kind_from_dlpack(t->dtype);
    if (a->kind < 0) {
        char fallback[64];
        snprintf(fallback, sizeof fallback, "DLPack type code %u of %u bits (%u lanes)",
                 t->dtype.code, t->dtype.bits, t->dtype.lanes);
        return dlpy_unsupported_type(object, func, name, fallback);
    }
    /* DLPack's strides count items; NULL is C-contiguous. */
    int64_t strides[DLPY_MAX_DIMS];
    for (int d = 0; t->strides && d < t->ndim && d < DLPY_MAX_DIMS; ++d)
        strides[d] = t->strides[d] * (int64_t)dlpy_kinds[a->kind].size;
    if (dlpy_take_shape(a, t->ndim, t->shape, t->strides ? strides : NULL, nd, func, name) < 0)
        return -1;
    a->data = (char *)t->data + t->byte_offset;
    return 0;
}

/* object.__dlpack__(stream=..., max_version=(1, 0)), or without max_version for a producer of
 * the older protocol. */
static PyObject *dlpy_call_dlpack(PyObject *method, PyObject *stream)
{
    PyObject *kwargs = Py_BuildValue("{s:O,s:(ii)}", "stream", stream, "max_version", 1, 0);
    if (!kwargs)
        return NULL;
    PyObject *empty = PyTuple_New(0);
    PyObject *capsule = empty ? PyObject_Call(method, empty, kwargs) : NULL;
    if (!capsule && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyDict_DelItemString(kwargs, "max_version");
        capsule = PyObject_Call(method, empty, kwargs);
    }
    Py_XDECREF(empty);
    Py_DECREF(kwargs);
    return capsule;
}

static int dlpy_take_dlpack(dlpy_array *a, PyObject *object, PyObject *method, const char *func,
                            const char *name, dlpy_place *place, int first, int nd)
{
    PyObject *where = PyObject_CallMethod(object, "__dlpack_device__", NULL);
    if (!where)
        return -1;
    int device_type, device_id;
    const int parsed = PyArg_ParseTuple(where, "ii", &device_type, &device_id);
    Py_DECREF(where);
    if (!parsed)
        return -1;
    int device;
    if (device_type == DLPY_KDLCPU || device_type == DLPY_KDLCUDAHOST) {
        device = DLPY_HOST;
    } else if (device_type == DLPY_KDLCUDA || device_type == DLPY_KDLCUDAMANAGED) {
#ifdef DLPY_GPU
        device = device_id;
#else
        return dlpy_pointer_device(NULL, func, name); /* says: no GPU backend */
#endif
    } else {
        PyErr_Format(PyExc_ValueError,
                     "dlscan.%s: %s lives on DLPack device type %d; dlscan runs on CUDA devices "
                     "and host memory",
                     func, name, device_type);
        return -1;
    }
    if (dlpy_place_device(place, device, first, func, name) < 0)
        return -1;

    /* The producer orders its pending work on the array before the call's stream. */
    PyObject *stream;
    if (device == DLPY_HOST) {
        stream = Py_NewRef(Py_None);
    } else {
        if (first && dlpy_call_stream(place, object, 0, 0) < 0)
            return -1;
        /* 0 means no stream in the protocol: the legacy default stream is 1 there. */
        stream = PyLong_FromUnsignedLongLong(place->handle ? place->handle : 1);
        if (!stream)
            return -1;
    }
    a->capsule = dlpy_call_dlpack(method, stream);
    Py_DECREF(stream);
    return a->capsule ? dlpy_read_capsule(a, object, func, name, NULL, nd) : -1;
}

/* ---- PyTorch's tensors ----
 * torch.Tensor.__dlpack__(stream=...) compares streams in Python: about 17 us a call on the lent
 * H100's host, where dlscan's C call takes 3.5 us and torch.cumsum 19. The C function
 * torch.utils.dlpack.to_dlpack makes the same capsule in 0.4 us, without the streams. So a
 * tensor comes in through it (a CPU tensor runs on a CPU handle), and a call on CUDA tensors
 * orders itself after PyTorch's current stream as __dlpack__ would have: it runs on that
 * stream, or makes the stream= given wait for it.
 * dlscan/__init__.py's _torch_door() gives torch.Tensor, to_dlpack and the current stream's
 * handle (torch._C._cuda_getCurrentRawStream, 0.1 us), once torch is imported. */
static struct {
    PyObject *tensor, *to_dlpack, *current_stream; /* NULL until torch is imported */
} dlpy_torch;

/* 1 where object is a tensor of PyTorch, 0 where not, -1 with an exception set. */
static int dlpy_is_torch(PyObject *object)
{
    if (!dlpy_torch.tensor) {
        static PyObject *torch_name;
        if (!torch_name && !(torch_name = PyUnicode_InternFromString("torch")))
            return -1;
        PyObject *torch = PyImport_GetModule(torch_name);
        if (!torch)
            return PyErr_Occurred() ? -1 : 0;
        Py_DECREF(torch);
        PyObject *door = PyObject_CallNoArgs(dlpy_torch_door_helper);
        if (!door)
            return -1;
        PyObject *tensor, *to_dlpack, *current_stream;
        if (!PyArg_ParseTuple(door, "OOO", &tensor, &to_dlpack, &current_stream) ||
            !PyType_Check(tensor)) {
            Py_DECREF(door);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "dlscan: _torch_door() gave no tensor type");
            return -1;
        }
        dlpy_torch.tensor = Py_NewRef(tensor);
        dlpy_torch.to_dlpack = Py_NewRef(to_dlpack);
        dlpy_torch.current_stream = Py_NewRef(current_stream);
        Py_DECREF(door);
    }
    return PyObject_TypeCheck(object, (PyTypeObject *)dlpy_torch.tensor);
}

static int dlpy_take_torch(dlpy_array *a, PyObject *object, const char *func, const char *name,
                           dlpy_place *place, int first, int nd)
{
    /* __dlpack__ refuses these too: dlscan records no gradient. */
    static PyObject *grad_name;
    if (!grad_name && !(grad_name = PyUnicode_InternFromString("requires_grad")))
        return -1;
    PyObject *grad = PyObject_GetAttr(object, grad_name);
    const int requires_grad = grad ? PyObject_IsTrue(grad) : -1;
    Py_XDECREF(grad);
    if (requires_grad) {
        if (requires_grad > 0)
            PyErr_Format(PyExc_ValueError,
                         "dlscan.%s: %s requires grad, and dlscan records no gradient: pass "
                         "%s.detach()",
                         func, name, name);
        return -1;
    }
    if (!(a->capsule = PyObject_CallOneArg(dlpy_torch.to_dlpack, object)))
        return -1;
    int device;
    if (dlpy_read_capsule(a, object, func, name, &device, nd) < 0 ||
        dlpy_place_device(place, device, first, func, name) < 0)
        return -1;
#ifndef DLPY_GPU
    if (device != DLPY_HOST)
        return dlpy_pointer_device(NULL, func, name); /* says: no GPU backend */
#endif
    /* PyTorch's current stream, once a call: every operand is on one device. */
    if (device != DLPY_HOST && !place->torch_known) {
        PyObject *handle = PyObject_CallFunction(dlpy_torch.current_stream, "i", device);
        place->torch_stream = handle ? (uintptr_t)PyLong_AsUnsignedLongLong(handle) : 0;
        Py_XDECREF(handle);
        if (!handle || PyErr_Occurred())
            return -1;
        place->torch_known = 1;
        if (dlpy_call_stream(place, object, place->torch_stream, 1) < 0 ||
            dlpy_wait_for(place, place->torch_stream, func) < 0)
            return -1;
    }
    return 0;
}

/* A typestr of __cuda_array_interface__ ("<f4", "|u1", "|b1") as a kind, or -1. */
static int dlpy_kind_from_typestr(const char *typestr)
{
    if (strlen(typestr) < 3 || typestr[0] == (dlpy_little_endian() ? '>' : '<'))
        return -1;
    char *end;
    const long size = strtol(typestr + 2, &end, 10);
    if (*end != '\0' || size <= 0)
        return -1;
    switch (typestr[1]) {
    case 'i': return dlpy_integer_kind((size_t)size, 1);
    case 'u': return dlpy_integer_kind((size_t)size, 0);
    case 'f': return dlpy_float_kind((size_t)size);
    case 'b': return size == 1 ? DLPY_BOOL : -1;
    case 'c': return size == 8 ? DLPY_COMPLEX64 : size == 16 ? DLPY_COMPLEX128 : -1;
    }
    return -1;
}

static int dlpy_take_cai(dlpy_array *a, PyObject *object, PyObject *cai, const char *func,
                         const char *name, dlpy_place *place, int first, int nd)
{
    if (!PyDict_Check(cai)) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: %s.__cuda_array_interface__ is not a dict",
                     func, name);
        return -1;
    }
    PyObject *shape = PyDict_GetItemString(cai, "shape");
    PyObject *typestr = PyDict_GetItemString(cai, "typestr");
    PyObject *data = PyDict_GetItemString(cai, "data");
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    PyObject *mask = PyDict_GetItemString(cai, "mask");
    PyObject *stream = PyDict_GetItemString(cai, "stream");
    if (!shape || !PyTuple_Check(shape) || !typestr || !PyUnicode_Check(typestr) || !data ||
        !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "dlscan.%s: %s.__cuda_array_interface__ lacks shape, typestr or data", func,
                     name);
        return -1;
    }
    const Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    if (!nd && ndim != 1)
        return dlpy_not_1d(func, name, (int)ndim);
    if (ndim > DLPY_MAX_DIMS)
        return dlpy_too_many_dimensions(func, name, (long long)ndim);
    if (mask && mask != Py_None) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: %s is a masked array", func, name);
        return -1;
    }
    a->kind = dlpy_kind_from_typestr(PyUnicode_AsUTF8(typestr));
    if (a->kind < 0) {
        char fallback[64];
        snprintf(fallback, sizeof fallback, "typestr '%.20s'", PyUnicode_AsUTF8(typestr));
        return dlpy_unsupported_type(object, func, name, fallback);
    }
    /* strides: bytes, one for each dimension; None or absent: C-contiguous */
    const int has_strides = strides && strides != Py_None;
    if (has_strides && (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != ndim)) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: %s.__cuda_array_interface__ has strides that "
                     "are no tuple of one stride for each dimension", func, name);
        return -1;
    }
    int64_t extents[DLPY_MAX_DIMS], steps[DLPY_MAX_DIMS];
    for (Py_ssize_t d = 0; d < ndim; ++d) {
        extents[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
        steps[d] = has_strides ? PyLong_AsLongLong(PyTuple_GET_ITEM(strides, d)) : 0;
    }
    a->data = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    a->readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (PyErr_Occurred() ||
        dlpy_take_shape(a, (int)ndim, extents, has_strides ? steps : NULL, nd, func, name) < 0)
        return -1;
    const int device = a->data ? dlpy_pointer_device(a->data, func, name)
                               : first ? dlpy_pointer_device(NULL, func, name) : place->device;
    if (device < 0 || dlpy_place_device(place, device, first, func, name) < 0)
        return -1;
    /* Version 3's stream: work on it that the array waits for (absent or None: none). */
    const int has_stream = stream && stream != Py_None;
    const uintptr_t producer = has_stream ? (uintptr_t)PyLong_AsUnsignedLongLong(stream) : 0;
    if (PyErr_Occurred())
        return -1;
    if (first && dlpy_call_stream(place, object, producer, has_stream) < 0)
        return -1;
    return has_stream ? dlpy_wait_for(place, producer, func) : 0;
}

/* The attribute `name` of object, or NULL without an exception where it has none. */
static PyObject *dlpy_optional_attr(PyObject *object, const char *name)
{
    PyObject *value = PyObject_GetAttrString(object, name);
    if (!value && PyErr_ExceptionMatches(PyExc_AttributeError))
        PyErr_Clear();
    return value;
}

/* CuPy's arrays offer the buffer protocol too, and refuse it unless their memory is the host's:
 * an object whose type has __cuda_array_interface__ takes one of the CUDA doors. */
static int dlpy_on_a_device(PyObject *object)
{
    static PyObject *cai_name;
    if (!cai_name && !(cai_name = PyUnicode_InternFromString("__cuda_array_interface__"))) {
        PyErr_Clear();
        return 0;
    }
    return PyObject_HasAttr((PyObject *)Py_TYPE(object), cai_name);
}

static int dlpy_take(dlpy_array *a, PyObject *object, const char *func, const char *name,
                     dlpy_place *place, int first, int writable, int nd)
{
    a->object = Py_NewRef(object);
    int result;
    PyObject *door;
    int torch = 0;
    if (PyObject_CheckBuffer(object) && !dlpy_on_a_device(object)) {
        result = dlpy_take_buffer(a, object, func, name, place, first, nd);
    } else if ((torch = dlpy_is_torch(object)) != 0) {
        result = torch < 0 ? -1 : dlpy_take_torch(a, object, func, name, place, first, nd);
        a->torch = 1;
    } else if ((door = dlpy_optional_attr(object, "__dlpack__"))) {
        result = dlpy_take_dlpack(a, object, door, func, name, place, first, nd);
        Py_DECREF(door);
    } else if (!PyErr_Occurred() &&
               (door = dlpy_optional_attr(object, "__cuda_array_interface__"))) {
        result = dlpy_take_cai(a, object, door, func, name, place, first, nd);
        Py_DECREF(door);
    } else {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "dlscan.%s: %s must be an array: a NumPy array (or another object with "
                         "the buffer protocol), or an object with __dlpack__ or "
                         "__cuda_array_interface__ (PyTorch, CuPy, JAX, Numba), not %.100s",
                         func, name, Py_TYPE(object)->tp_name);
        result = -1;
    }
    if (result == 0 && (a->kind == DLPY_COMPLEX64 || a->kind == DLPY_COMPLEX128) && !place->takes_complex)
        result = dlpy_unsupported_type(object, func, name, "");
    if (result == 0 && writable && a->readonly) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: %s is read-only", func, name);
        result = -1;
    }
    if (result < 0)
        dlpy_array_release(a);
    return result;
}

int dlpy_array_take(dlpy_array *a, PyObject *object, const char *func, const char *name,
                    dlpy_place *place, int first, int writable)
{
    return dlpy_take(a, object, func, name, place, first, writable, 0);
}

int dlpy_array_take_nd(dlpy_array *a, PyObject *object, const char *func, const char *name,
                       dlpy_place *place, int first, int writable)
{
    return dlpy_take(a, object, func, name, place, first, writable, 1);
}

void dlpy_array_release(dlpy_array *a)
{
    if (a->has_view)
        PyBuffer_Release(&a->view);
    a->has_view = 0;
    Py_CLEAR(a->capsule);
    Py_CLEAR(a->object);
}

int dlpy_array_new_shaped(dlpy_array *a, PyObject *like, int ndim, const size_t *shape, int kind,
                          const char *func, const char *name, dlpy_place *place)
{
    /* _empty takes the length of a 1-D array as an int, a shape as a tuple. */
    PyObject *size = NULL;
    if (ndim == 1) {
        size = PyLong_FromSize_t(shape[0]);
    } else if ((size = PyTuple_New(ndim))) {
        for (int d = 0; d < ndim; ++d) {
            PyObject *extent = PyLong_FromSize_t(shape[d]);
            if (!extent) {
                Py_CLEAR(size);
                break;
            }
            PyTuple_SET_ITEM(size, d, extent);
        }
    }
    PyObject *array = size ? PyObject_CallFunction(dlpy_empty_helper, "OOs", like, size,
                                                   dlpy_kinds[kind].name)
                           : NULL;
    Py_XDECREF(size);
    if (!array)
        return -1;
    const int result = dlpy_take(a, array, func, name, place, 0, 1, ndim != 1);
    Py_DECREF(array);
    int same = result == 0 && a->kind == kind && a->ndim == ndim;
    for (int d = 0; same && d < ndim; ++d)
        same = a->shape[d] == shape[d];
    if (result == 0 && !same) { /* _empty's own mistake */
        PyObject *text = dlpy_shape_text(ndim, shape);
        if (text)
            PyErr_Format(PyExc_RuntimeError, "dlscan.%s: the new %s is not an array of shape %U "
                         "of %s", func, name, text, dlpy_kinds[kind].name);
        Py_XDECREF(text);
        dlpy_array_release(a);
        return -1;
    }
    return result;
}

int dlpy_array_new(dlpy_array *a, PyObject *like, size_t n, int kind, const char *func,
                   const char *name, dlpy_place *place)
{
    return dlpy_array_new_shaped(a, like, 1, &n, kind, func, name, place);
}

int dlpy_output(dlpy_array *a, PyObject *out, PyObject *like, size_t n, int kind,
                const char *func, const char *name, dlpy_place *place)
{
    if (!out)
        return dlpy_array_new(a, like, n, kind, func, name, place);
    if (dlpy_array_take(a, out, func, name, place, 0, 1) < 0)
        return -1;
    if (a->n != n) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: %s has %zu items; %zu are written", func,
                     name, a->n, n);
    } else if (a->kind != kind) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: %s has items of %s; this call writes %s", func,
                     name, dlpy_kinds[a->kind].name, dlpy_kinds[kind].name);
    } else {
        return 0;
    }
    dlpy_array_release(a);
    return -1;
}

int dlpy_kind_from_dtype(PyObject *dtype, const char *func)
{
    PyObject *name = PyUnicode_Check(dtype) ? Py_NewRef(dtype)
                                            : PyObject_CallOneArg(dlpy_dtype_helper, dtype);
    if (!name)
        return -1;
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    for (int kind = 0; text && kind < DLPY_COMPLEX64; ++kind) /* (dtype= names no complex kind) */
        if (strcmp(text, dlpy_kinds[kind].name) == 0) {
            Py_DECREF(name);
            return kind;
        }
    if (text && PyUnicode_Check(dtype)) { /* another spelling ("i4", "<f8", "double") */
        Py_DECREF(name);
        if (!(name = PyObject_CallOneArg(dlpy_dtype_helper, dtype)))
            return -1;
        text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        for (int kind = 0; text && kind < DLPY_COMPLEX64; ++kind)
            if (strcmp(text, dlpy_kinds[kind].name) == 0) {
                Py_DECREF(name);
                return kind;
            }
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError,
                     "dlscan.%s: dtype=%R is not a type dlscan takes (bool, int8 .. int64, "
                     "uint8 .. uint64, float16, bfloat16, float32, float64)",
                     func, dtype);
    Py_DECREF(name);
    return -1;
}

/* x rounded to nearest even into a binary float of `mantissa` stored bits and exponents
 * emin .. emax (float16: 10, -14, 15; bfloat16: 7, -126, 127), as its bits. */
static uint16_t dlpy_round_to_bits(double x, int mantissa, int emin, int emax)
{
    const uint16_t sign = signbit(x) ? (uint16_t)(1u << 15) : 0;
    const uint16_t exponent_mask = (uint16_t)(((1u << (15 - mantissa)) - 1) << mantissa);
    if (isnan(x))
        return sign | exponent_mask | (uint16_t)(1u << (mantissa - 1));
    const double a = fabs(x);
    /* From the largest finite value plus half its last place on, the rounding gives inf. */
    if (a >= ldexp(2.0 - ldexp(1.0, -mantissa - 1), emax))
        return sign | exponent_mask;
    if (a < ldexp(1.0, emin)) /* subnormal: multiples of 2^(emin - mantissa); may round up to
                                 the smallest normal, whose bits follow on */
        return sign | (uint16_t)nearbyint(ldexp(a, mantissa - emin));
    int e;
    frexp(a, &e); /* a = f 2^e, 0.5 <= f < 1: the exponent is e - 1 */
    const long m = lrint(ldexp(a, mantissa + 1 - e)); /* 2^mantissa .. 2^(mantissa+1) */
    return sign | (uint16_t)(((long)(e - 1 - emin + 1) << mantissa) + m - (1l << mantissa));
}

/* name=number as a message shows it: "initial=128", or for an integer too long to read, the
 * power of two it is or the two it lies between ("initial=2**1100", "value between -2**71 and
 * -2**70"). */
static PyObject *dlpy_named_number(const char *name, PyObject *number)
{
    PyObject *text = PyObject_Repr(number);
    if (!text || !PyLong_Check(number) || PyUnicode_GET_LENGTH(text) <= 24) {
        PyObject *named = text ? PyUnicode_FromFormat("%s=%U", name, text) : NULL;
        Py_XDECREF(text);
        return named;
    }
    const char *sign = PyUnicode_READ_CHAR(text, 0) == '-' ? "-" : "";
    Py_DECREF(text);
    PyObject *magnitude = PyNumber_Absolute(number);
    PyObject *bits = magnitude ? PyObject_CallMethod(magnitude, "bit_length", NULL) : NULL;
    PyObject *ones = magnitude ? PyObject_CallMethod(magnitude, "bit_count", NULL) : NULL;
    const long k = bits ? PyLong_AsLong(bits) - 1 : -1, single = ones ? PyLong_AsLong(ones) : 0;
    Py_XDECREF(magnitude);
    Py_XDECREF(bits);
    Py_XDECREF(ones);
    if (PyErr_Occurred())
        return NULL;
    if (single == 1)
        return PyUnicode_FromFormat("%s=%s2**%ld", name, sign, k);
    return PyUnicode_FromFormat("%s between %s2**%ld and %s2**%ld", name, sign, *sign ? k + 1 : k,
                                sign, *sign ? k : k + 1);
}

/* OverflowError: number does not fit items of kind, and what does. */
static int dlpy_does_not_fit(PyObject *number, int kind, const char *func, const char *name)
{
    PyErr_Clear();
    PyObject *text = dlpy_named_number(name, number);
    if (!text)
        return -1;
    const dlpy_kind_info *info = &dlpy_kinds[kind];
    char range[96];
    if (info->is_float) { /* through a float64; narrower floats then round, to inf past their range */
        snprintf(range, sizeof range, "numbers beyond float64's +-%.9g fit no float", DBL_MAX);
    } else if (info->is_signed) {
        const long long top = (long long)(~0ull >> (65 - info->size * 8));
        snprintf(range, sizeof range, "%lld .. %lld", -top - 1, top);
    } else {
        snprintf(range, sizeof range, "0 .. %llu", ~0ull >> (64 - info->size * 8));
    }
    PyErr_Format(PyExc_OverflowError, "dlscan.%s: %U does not fit %s (%s)", func, text,
                 info->name, range);
    Py_DECREF(text);
    return -1;
}

int dlpy_value(PyObject *number, int kind, const char *func, const char *name, void *value)
{
    const dlpy_kind_info *info = &dlpy_kinds[kind];
    if (kind == DLPY_BOOL) {
        const int truth = PyObject_IsTrue(number);
        if (truth < 0)
            return -1;
        *(uint8_t *)value = (uint8_t)truth;
        return 0;
    }
    if (info->is_float) {
        const double d = PyFloat_AsDouble(number);
        if (d == -1.0 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) /* an int past float64 */
                return dlpy_does_not_fit(number, kind, func, name);
            PyErr_Format(PyExc_TypeError, "dlscan.%s: %s must be a number, not %.100s", func,
                         name, Py_TYPE(number)->tp_name);
            return -1;
        }
        if (kind == DLSCAN_FLOAT64) {
            memcpy(value, &d, 8);
        } else if (kind == DLSCAN_FLOAT32) {
            const float f = (float)d;
            memcpy(value, &f, 4);
        } else {
            const uint16_t bits = kind == DLSCAN_FLOAT16 ? dlpy_round_to_bits(d, 10, -14, 15)
                                                         : dlpy_round_to_bits(d, 7, -126, 127);
            memcpy(value, &bits, 2);
        }
        return 0;
    }
    PyObject *index = PyNumber_Index(number);
    if (!index) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: %s must be an integer for %s items, not %.100s",
                     func, name, info->name, Py_TYPE(number)->tp_name);
        return -1;
    }
    const int bits = (int)info->size * 8;
    int out_of_range;
    unsigned long long u = 0;
    if (info->is_signed) {
        const long long v = PyLong_AsLongLong(index);
        out_of_range = (v == -1 && PyErr_Occurred()) ||
                       (bits < 64 && (v < -(1ll << (bits - 1)) || v >= (1ll << (bits - 1))));
        u = (unsigned long long)v;
    } else {
        u = PyLong_AsUnsignedLongLong(index); /* OverflowError below 0 and above 2^64 - 1 */
        out_of_range =
            (u == (unsigned long long)-1 && PyErr_Occurred()) || (bits < 64 && u >> bits);
    }
    if (out_of_range) {
        dlpy_does_not_fit(index, kind, func, name);
        Py_DECREF(index);
        return -1;
    }
    Py_DECREF(index);
    /* The low bytes of u, as a little- or big-endian machine stores them. */
    switch (info->size) {
    case 1: *(uint8_t *)value = (uint8_t)u; break;
    case 2: *(uint16_t *)value = (uint16_t)u; break;
    case 4: *(uint32_t *)value = (uint32_t)u; break;
    default: *(uint64_t *)value = (uint64_t)u; break;
    }
    return 0;
}
