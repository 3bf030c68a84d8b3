/*
 * module.c: the extension module dlscan._dlscan: its functions and their documentation, its
 * exceptions (each failed dlscan call raises one, with dlscan_last_error's message), and the
 * helpers in dlscan/__init__.py that it calls back (_empty and friends, which know the array
 * libraries: what is library-specific stays in Python, where it is short).
 */
#include "binding.h"

PyObject *dlpy_empty_helper, *dlpy_dtype_helper, *dlpy_stream_helper, *dlpy_current_stream_helper,
    *dlpy_torch_door_helper, *dlpy_axis_error_helper, *dlpy_group_ranks_helper,
    *dlpy_group_all_gather_helper;

static PyObject *dlpy_error, *dlpy_argument_error, *dlpy_dtype_error, *dlpy_memory_error;

static const char *dlpy_status_name(dlscan_status status)
{
    switch (status) {
#define DLPY_STATUS_NAME(name, number, message)                                                   \
    case name: return #name;
        DLSCAN_STATUS_LIST(DLPY_STATUS_NAME)
#undef DLPY_STATUS_NAME
    }
    return "unknown dlscan_status";
}

/* The Python exception of a status: the caller's mistakes as ValueError and TypeError, as
 * Python users expect them, and all of them as dlscan.Error. */
static PyObject *dlpy_exception(dlscan_status status)
{
    switch (status) {
    case DLSCAN_ERROR_INVALID_ARGUMENT:
    case DLSCAN_ERROR_NOT_DEVICE_MEMORY:
    case DLSCAN_ERROR_MISALIGNED:
    case DLSCAN_ERROR_OVERLAP:
    case DLSCAN_ERROR_OUT_OF_BOUNDS:
        return dlpy_argument_error;
    case DLSCAN_ERROR_INVALID_TYPE:
    case DLSCAN_ERROR_INVALID_OP:
    case DLSCAN_ERROR_TYPE_PAIR:
        return dlpy_dtype_error;
    case DLSCAN_ERROR_OUT_OF_MEMORY:
        return dlpy_memory_error;
    default:
        return dlpy_error;
    }
}

PyObject *dlpy_raise_status(dlscan_status status, const char *message, const char *func)
{
    PyObject *text =
        message && *message
            ? PyUnicode_FromFormat("dlscan.%s: %s (%s)", func, message, dlpy_status_name(status))
            : PyUnicode_FromFormat("dlscan.%s: %s", func, dlscan_status_string(status));
    if (!text)
        return NULL;
    PyObject *type = dlpy_exception(status);
    PyObject *error = PyObject_CallOneArg(type, text);
    Py_DECREF(text);
    if (!error)
        return NULL;
    PyObject *number = PyLong_FromLong((long)status);
    if (number && PyObject_SetAttrString(error, "status", number) == 0)
        PyErr_SetObject(type, error);
    Py_XDECREF(number);
    Py_DECREF(error);
    return NULL;
}

PyObject *dlpy_raise(dlscan_handle_t h, dlscan_status status, const char *func)
{
    return dlpy_raise_status(status, dlscan_last_error(h), func);
}

int dlpy_split_out(PyObject *out, PyObject **a, PyObject **b, const char *func)
{
    *a = *b = NULL;
    if (!out)
        return 0;
    if (!PyTuple_Check(out) || PyTuple_GET_SIZE(out) != 2) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: out= takes a tuple of two arrays (or None)",
                     func);
        return -1;
    }
    *a = PyTuple_GET_ITEM(out, 0) == Py_None ? NULL : PyTuple_GET_ITEM(out, 0);
    *b = PyTuple_GET_ITEM(out, 1) == Py_None ? NULL : PyTuple_GET_ITEM(out, 1);
    return 0;
}

PyObject *dlpy_head(PyObject *array, size_t count)
{
    PyObject *end = PyLong_FromSize_t(count);
    PyObject *slice = end ? PySlice_New(NULL, end, NULL) : NULL;
    PyObject *head = slice ? PyObject_GetItem(array, slice) : NULL;
    Py_XDECREF(slice);
    Py_XDECREF(end);
    return head;
}

static PyObject *dlpy_setup(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *empty, *dtype, *stream, *current_stream, *torch_door, *axis_error, *group_ranks,
        *group_all_gather;
    if (!PyArg_ParseTuple(args, "OOOOOOOO:_setup", &empty, &dtype, &stream, &current_stream,
                          &torch_door, &axis_error, &group_ranks, &group_all_gather))
        return NULL;
    Py_XSETREF(dlpy_group_ranks_helper, Py_NewRef(group_ranks));
    Py_XSETREF(dlpy_group_all_gather_helper, Py_NewRef(group_all_gather));
    Py_XSETREF(dlpy_empty_helper, Py_NewRef(empty));
    Py_XSETREF(dlpy_dtype_helper, Py_NewRef(dtype));
    Py_XSETREF(dlpy_stream_helper, Py_NewRef(stream));
    Py_XSETREF(dlpy_current_stream_helper, Py_NewRef(current_stream));
    Py_XSETREF(dlpy_torch_door_helper, Py_NewRef(torch_door));
    Py_XSETREF(dlpy_axis_error_helper, Py_NewRef(axis_error));
    Py_RETURN_NONE;
}

static PyObject *dlpy_has_gpu_backend(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
#ifdef DLPY_GPU
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

#define DLPY_SCAN_DOC(name, what, numpy)                                                          \
    name "(x, *, axis=None, dtype=None, out=None, exclusive=False, initial=None, total=None, "  \
         "deterministic=False, stream=None, keys=None, offsets=None, group=None, dim=None)\n--\n\n" \
         "The running " what " of the array x, in one pass (" numpy ").\n\n"                     \
         "x: a NumPy array (scanned on the CPU), or an array with __dlpack__ or\n"               \
         "   __cuda_array_interface__ on a CUDA device (PyTorch, CuPy, ...), scanned there;\n"   \
         "   C-contiguous, of any number of dimensions.\n"                                        \
         "axis: None (default): x flattened, into a one-dimensional output; an int (negative\n" \
         "   counts from the end): each scan runs along that dimension, into an output of\n"    \
         "   x's shape (as numpy.cumsum(x, axis=...)). A GPU may refuse a dimension other than\n" \
         "   the last (dlscan.Error, DLSCAN_ERROR_NOT_SUPPORTED). dim: axis's PyTorch name.\n"  \
         "dtype: the type of the output, and of the accumulator. Default: out's, else x's\n"   \
         "   (cumsum of bool and of integers narrower than 64 bits: int64, or uint64 for\n"     \
         "   unsigned ones, as NumPy does; of a PyTorch tensor of any integer type or bool:\n" \
         "   int64, as torch.cumsum does). Pairs dlscan takes: every type into itself;\n"    \
         "   integers into 32- and 64-bit integers at least as wide; float16 and bfloat16\n"   \
         "   into float32; float32 and int32 into float64. 8- and 16-bit types scanned into\n" \
         "   themselves accumulate in 32 bits and round each output.\n"                       \
         "out: the output array (x itself scans in place); a new one of x's kind if None.\n"  \
         "exclusive: out[j] covers x[0 .. j-1] and out[0] is the initial value.\n"            \
         "initial: a number folded in first, or a one-item array of the output type (read\n"  \
         "   when the scan runs: on a GPU, without a trip to the host). Default: the\n"       \
         "   operator's identity.\n"                                                          \
         "total: a one-item array of the output type that receives the whole " what ",\n"    \
         "   initial included (chaining over chunks: pass the same array as initial).\n"      \
         "deterministic: float sums on a GPU are the same bits from run to run (CPU: always).\n" \
         "stream: the CUDA stream to run on (an int handle or a PyTorch, CuPy or Numba stream);\n" \
         "   default: the producer's, i.e. the current stream of x's library.\n"             \
         "keys: a segmented scan: an array as long as x (any type, where x lives); the scan\n" \
         "   starts over at every run of equal keys (compared bit for bit).\n"               \
         "offsets: a segmented scan: int64 or uint64, the start of each segment and the end\n" \
         "   of the last (segment k: x[offsets[k]:offsets[k+1]]), rising, at most len(x);\n"  \
         "   items outside the segments are not written. With keys or offsets, initial is a\n" \
         "   number that starts every segment, and total is not taken. With axis: no keys\n" \
         "   or offsets, initial is a number that starts every scan, and no total.\n"         \
         "group: a scan across ranks: an mpi4py communicator (NumPy arrays, or CUDA arrays\n"   \
         "   whose ranks' totals go through the host) or a torch.distributed process group\n" \
         "   (CUDA tensors, over its NCCL); every rank of it calls with its slice x of one\n"   \
         "   array, flattened, and gets its slice of one scan of the ranks' slices in rank\n"   \
         "   order (total: the whole array's). No axis, keys or offsets with it.\n\n"           \
         "Returns out. On a GPU the call only enqueues the scan."

static PyMethodDef dlpy_methods[] = {
    {"cumsum", (PyCFunction)(void (*)(void))dlpy_cumsum, METH_VARARGS | METH_KEYWORDS,
     DLPY_SCAN_DOC("cumsum", "sum", "numpy.cumsum")},
    {"cummin", (PyCFunction)(void (*)(void))dlpy_cummin, METH_VARARGS | METH_KEYWORDS,
     DLPY_SCAN_DOC("cummin", "minimum", "numpy.minimum.accumulate")},
    {"cummax", (PyCFunction)(void (*)(void))dlpy_cummax, METH_VARARGS | METH_KEYWORDS,
     DLPY_SCAN_DOC("cummax", "maximum", "numpy.maximum.accumulate")},
    {"select", (PyCFunction)(void (*)(void))dlpy_select, METH_VARARGS | METH_KEYWORDS,
     "select(x, flags=None, *, predicate=None, value=None, out=None, stream=None, group=None)\n--\n\n"
     "The items of x where flags (bool, int8 or uint8) is not 0, or where `x predicate value`\n"
     "holds (predicate: '<', '<=', '>', '>=', '==', '!=', or 'nonzero' without a value), in\n"
     "their order.\n\n"
     "group: a select across ranks, as for cumsum: an mpi4py communicator or a torch.distributed\n"
     "   process group; every rank calls with its slice x of one array and keeps its own items.\n\n"
     "Returns (selected, count). Host arrays: selected holds the count items, and count is an\n"
     "int. CUDA arrays: nothing waits for the GPU: selected has len(x) items of which the first\n"
     "count are written, and count is a one-item int64 array on the device. With group:\n"
     "(selected, count, offset, total), offset the count the ranks before this one kept (where\n"
     "its items go in the whole selection) and total every rank's, as count is given."},
    {"unique", (PyCFunction)(void (*)(void))dlpy_unique, METH_VARARGS | METH_KEYWORDS,
     "unique(x, *, out=None, stream=None)\n--\n\n"
     "The first item of each run of equal items of x (consecutive duplicates removed; on\n"
     "a sorted x, numpy.unique). Floats compare as bits: -0.0 differs from 0.0.\n\n"
     "Returns (values, count), as select does."},
    {"run_length_encode", (PyCFunction)(void (*)(void))dlpy_run_length_encode,
     METH_VARARGS | METH_KEYWORDS,
     "run_length_encode(x, *, out=None, stream=None)\n--\n\n"
     "The runs of equal items of x: values[k] is the item of run k and lengths[k] (int64) its\n"
     "length. out: (values, lengths), either None.\n\n"
     "Returns (values, lengths, count), as select does."},
    {"reduce_by_key", (PyCFunction)(void (*)(void))dlpy_reduce_by_key,
     METH_VARARGS | METH_KEYWORDS,
     "reduce_by_key(keys, values, *, op='sum', out=None, deterministic=False, stream=None)\n--\n\n"
     "For each run of equal keys, its key and the sum, min or max (op) of its values, in\n"
     "order. out: (keys, values), either None.\n\n"
     "Returns (keys, values, count), as select does."},
    {"linear_recurrence", (PyCFunction)(void (*)(void))dlpy_linear_recurrence, METH_VARARGS | METH_KEYWORDS,
     "linear_recurrence(a, b, *, initial=0.0, axis=None, keys=None, offsets=None, out=None,\n"
     "                  exclusive=False, deterministic=False, stream=None)\n--\n\n"
     "h[t] = a[t] * h[t-1] + b[t] with h[-1] = initial, for float32, float64, complex64 or\n"
     "complex128 arrays a and b of one length and type (a may be one number for every item), as\n"
     "one scan (dlscan.h, \"Your own operator\"): the state-space (complex for S4D and S5) and\n"
     "linear-RNN recurrences, moving averages, IIR filters.\n"
     "exclusive: out[t] = h[t-1]. The scan runs over the arrays flattened (axis=None), or along\n"
     "an axis (axis=-1: each row from initial, as a batch of [B, L]; axis=0 of [L, B]: each\n"
     "column). keys or offsets\n"
     "(as cumsum's: packed sequences of other lengths, e.g. offsets = cu_seqlens): each segment\n"
     "from initial, over the arrays flattened; over offsets the items outside the segments are\n"
     "not written (complex128 takes no segments, nor the last axis of an array of more than one\n"
     "dimension). On a GPU the first call of a type compiles the\n"
     "operator (NVRTC), which is then cached.\n\n"
     "Returns out, of b's type and shape."},
    {"cumprod", (PyCFunction)(void (*)(void))dlpy_cumprod, METH_VARARGS | METH_KEYWORDS,
     "cumprod(x, *, axis=None, keys=None, offsets=None, out=None, deterministic=False,\n"
     "        stream=None)\n--\n\n"
     "The running product of x (int32, uint32, int64, uint64 wrapping around; float32,\n"
     "float64), as numpy.cumprod of x flattened (axis=None) or along an axis (axis=d),\n"
     "or of each segment (keys or offsets, as cumsum's), through a user operator.\n\n"
     "Returns out."},
    {"logcumsumexp", (PyCFunction)(void (*)(void))dlpy_logcumsumexp, METH_VARARGS | METH_KEYWORDS,
     "logcumsumexp(x, *, axis=None, keys=None, offsets=None, out=None, deterministic=False,\n"
     "             stream=None)\n--\n\n"
     "log(exp(x[0]) + ... + exp(x[t])) without overflow (torch.logcumsumexp; float32,\n"
     "float64), over x flattened (axis=None), along an axis (axis=d) or in each segment\n"
     "(keys or offsets, as cumsum's), through a user operator.\n\n"
     "Returns out."},
    {"reserve", (PyCFunction)(void (*)(void))dlpy_reserve, METH_VARARGS | METH_KEYWORDS,
     "reserve(x, *, dtype=None, axis=None)\n--\n\n"
     "Grows the calling thread's handle for x's device so that scans of up to x's size items into\n"
     "dtype (default: the types cumsum, cummin and cummax of x write) allocate nothing: call it\n"
     "before capturing a CUDA graph. With axis=, for the scans of x along that axis (a scan down\n"
     "columns takes more than one of x's size flattened). (Compaction grows the handle on its\n"
     "first call of a size: run it once before capturing.)"},
    {"_setup", dlpy_setup, METH_VARARGS, "dlscan/__init__.py's helpers for the module."},
    {"_scan_with", dlpy_scan_with, METH_VARARGS, "dlscan.scan's call, the items worked out (dlscan/__init__.py)."},
    {"has_gpu_backend", dlpy_has_gpu_backend, METH_NOARGS,
     "has_gpu_backend()\n--\n\nWhether this dlscan was built with the GPU backend."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef dlpy_module = {
    PyModuleDef_HEAD_INIT, "_dlscan",
    "dlscan's functions, written in C over libdlscan (see the package dlscan).", -1,
    dlpy_methods, NULL, NULL, NULL, NULL,
};

static int dlpy_add_exception(PyObject *module, PyObject **slot, const char *name,
                              PyObject *bases, const char *doc)
{
    char qualified[64];
    snprintf(qualified, sizeof qualified, "dlscan.%s", name);
    *slot = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
    return *slot ? PyModule_AddObjectRef(module, name, *slot) : -1;
}

PyMODINIT_FUNC PyInit__dlscan(void)
{
    PyObject *module = PyModule_Create(&dlpy_module);
    if (!module)
        return NULL;
    PyObject *value_bases = NULL, *type_bases = NULL, *memory_bases = NULL;
    int failed =
        dlpy_add_exception(module, &dlpy_error, "Error", PyExc_RuntimeError,
                           "A dlscan call failed; .status is its dlscan_status number.") < 0;
    if (!failed) {
        value_bases = PyTuple_Pack(2, dlpy_error, PyExc_ValueError);
        type_bases = PyTuple_Pack(2, dlpy_error, PyExc_TypeError);
        memory_bases = PyTuple_Pack(2, dlpy_error, PyExc_MemoryError);
        failed = !value_bases || !type_bases || !memory_bases ||
                 dlpy_add_exception(module, &dlpy_argument_error, "ArgumentError", value_bases,
                                    "dlscan refused an argument (NULL, misaligned, overlapping, "
                                    "memory of the wrong kind).") < 0 ||
                 dlpy_add_exception(module, &dlpy_dtype_error, "DtypeError", type_bases,
                                    "dlscan does not take this type or pair of types.") < 0 ||
                 dlpy_add_exception(module, &dlpy_memory_error, "OutOfMemoryError",
                                    memory_bases, "dlscan ran out of memory.") < 0;
    }
    Py_XDECREF(value_bases);
    Py_XDECREF(type_bases);
    Py_XDECREF(memory_bases);
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", dlscan_version() / 10000,
             dlscan_version() / 100 % 100, dlscan_version() % 100);
    if (failed || PyModule_AddStringConstant(module, "__version__", version) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
