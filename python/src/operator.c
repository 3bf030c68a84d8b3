/*
 * operator.c: scans with dlscan's built-in user operators (dlscan.h, "Your own operator"):
 * linear_recurrence (h[t] = a[t] h[t-1] + b[t], a an array or one number), cumprod and
 * logcumsumexp, each one dlscan_scan call with the operator that dlscan_operator_builtin makes
 * (on a GPU, compiled at run time the first time, then cached). The operators are made once per
 * handle, kind and scalar a, and kept for the process, as the handles are.
 */
#include "binding.h" /* Python.h first, as Python asks */

#include <string.h>

/* ---- Operators, per handle ---- */

enum { DLPY_OPERATORS = 64 };

typedef struct dlpy_operator {
    dlscan_handle_t h;
    int which;       /* dlscan_builtin */
    int kind;
    int scalar;      /* a linear recurrence's a is one number: `a` */
    double a;
    dlscan_operator_t op;
} dlpy_operator;

static dlpy_operator dlpy_operators[DLPY_OPERATORS]; /* under the GIL */

/* The operator for (h, which, kind, a), made at its first use; NULL with an exception set. */
static dlscan_operator_t dlpy_builtin(dlscan_handle_t h, int which, int kind, const double *a, const char *func)
{
    int free_slot = -1;
    for (int i = 0; i < DLPY_OPERATORS; ++i) {
        const dlpy_operator *o = &dlpy_operators[i];
        if (!o->op) {
            free_slot = free_slot < 0 ? i : free_slot;
            continue;
        }
        if (o->h == h && o->which == which && o->kind == kind && o->scalar == (a != NULL) &&
            (!a || memcmp(&o->a, a, sizeof *a) == 0))
            return o->op;
    }
    const float a32 = a ? (float)*a : 0.0f;
    const void *parameter = !a ? NULL : kind == DLSCAN_FLOAT32 ? (const void *)&a32 : (const void *)a;
    dlscan_operator_t op = NULL;
    dlscan_status status;
    Py_BEGIN_ALLOW_THREADS
    status = dlscan_operator_builtin(h, (dlscan_builtin)which, dlpy_type(kind), parameter, &op);
    Py_END_ALLOW_THREADS
    if (status != DLSCAN_SUCCESS) {
        dlpy_raise(h, status, func);
        return NULL;
    }
    if (free_slot < 0) { /* full: the oldest goes (its scans were enqueued in order before) */
        dlscan_operator_destroy(dlpy_operators[0].op);
        memmove(dlpy_operators, dlpy_operators + 1, sizeof dlpy_operators - sizeof dlpy_operators[0]);
        free_slot = DLPY_OPERATORS - 1;
    }
    dlpy_operators[free_slot] = (dlpy_operator){h, which, kind, a != NULL, a ? *a : 0.0, op};
    return op;
}

/* ---- The calls ---- */

/* One scan of x (and x2, item for item; along the last axis, each row) with the built-in `which`
 * into a new array like x (or out=), starting from the state `initial` (two numbers: a recurrence's (1, h0), logsumexp's
 * (x0, 1)), or the identity where has_initial is 0. a: a recurrence's scalar a, or NULL. */
static PyObject *dlpy_builtin_scan(int which, PyObject *x, PyObject *x2, const double *a, int has_initial,
                                   double initial_first, double initial_second, PyObject *axis, PyObject *out,
                                   int exclusive, int deterministic, PyObject *stream, const char *func)
{
    dlpy_place place = {.device = DLPY_HOST, .stream = stream == Py_None ? NULL : stream};
    dlpy_array in = DLPY_ARRAY_EMPTY, in2 = DLPY_ARRAY_EMPTY, result = DLPY_ARRAY_EMPTY;
    PyObject *returned = NULL;
    int previous_device = -1;
    if (dlpy_array_take_nd(&in, x, func, which == DLSCAN_BUILTIN_LINEAR_RECURRENCE ? "a" : "x", &place, 1, 0) < 0)
        return NULL;
    /* axis=: None (x flattened), or the last dimension: rows (dlscan.h's scans along an axis of
     * stride 1). User operators scan along no other axis yet. */
    int d = 0;
    if (axis != Py_None && dlpy_axis(axis, in.ndim, func, &d) < 0)
        goto done;
    if (axis != Py_None && d != in.ndim - 1) {
        PyErr_Format(PyExc_NotImplementedError,
                     "dlscan.%s: axis=%R on an array of %d dimensions: user operators scan along the last "
                     "axis only, not yet along another; pass axis=-1, or axis=None (x flattened)",
                     func, axis, in.ndim);
        goto done;
    }
    const size_t row_length = axis != Py_None && in.ndim > 1 && in.n > 0 ? in.shape[in.ndim - 1] : 0;
    const int kind = in.kind;
    const int real = kind == DLSCAN_FLOAT32 || kind == DLSCAN_FLOAT64;
    if (!real && !(which == DLSCAN_BUILTIN_PRODUCT && (kind == DLSCAN_INT32 || kind == DLSCAN_UINT32 ||
                                                       kind == DLSCAN_INT64 || kind == DLSCAN_UINT64))) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: %s items are not taken (%s)", func, dlpy_kinds[kind].name,
                     which == DLSCAN_BUILTIN_PRODUCT ? "int32, uint32, int64, uint64, float32 or float64"
                                                     : "float32 or float64");
        goto done;
    }
    if (x2) {
        if (dlpy_array_take_nd(&in2, x2, func, "b", &place, 0, 0) < 0)
            goto done;
        if (in2.n != in.n || in2.kind != kind) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: a and b must match: %zu items of %s and %zu of %s", func,
                         in.n, dlpy_kinds[kind].name, in2.n, dlpy_kinds[in2.kind].name);
            goto done;
        }
        if (row_length && (in2.ndim != in.ndim || memcmp(in2.shape, in.shape, (size_t)in.ndim * sizeof in.shape[0]))) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: along an axis a and b must have one shape", func);
            goto done;
        }
    }
    if (out != Py_None) {
        if (dlpy_array_take_nd(&result, out, func, "out", &place, 0, 1) < 0)
            goto done;
        if (result.n != in.n || result.kind != kind) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: out must be %zu items of %s, not %zu of %s", func, in.n,
                         dlpy_kinds[kind].name, result.n, dlpy_kinds[result.kind].name);
            goto done;
        }
    } else if ((in.ndim > 1 ? dlpy_array_new_shaped(&result, x, in.ndim, in.shape, kind, func, "out", &place)
                            : dlpy_array_new(&result, x, in.n, kind, func, "out", &place)) < 0) {
        goto done;
    }
    dlscan_handle_t h = dlpy_handle(&place, func, &previous_device);
    if (!h || dlpy_set_deterministic(h, deterministic, func) < 0)
        goto done;
    const dlscan_operator_t op = dlpy_builtin(h, which, kind, a, func);
    if (!op)
        goto done;
    unsigned char init[16] = {0}; /* (only float kinds take an initial state) */
    if (kind == DLSCAN_FLOAT32) {
        const float pair[2] = {(float)initial_first, (float)initial_second};
        memcpy(init, pair, sizeof pair);
    } else if (kind == DLSCAN_FLOAT64) {
        const double pair[2] = {initial_first, initial_second};
        memcpy(init, pair, sizeof pair);
    }
    dlscan_scan_args args = DLSCAN_SCAN_ARGS_INIT;
    args.custom = op;
    args.d_in = in.data;
    args.d_in2 = x2 ? in2.data : NULL;
    args.d_out = result.data;
    args.n = in.n;
    args.axis_length = row_length;
    args.exclusive = exclusive;
    args.init = has_initial ? init : NULL;
    dlscan_status status;
    Py_BEGIN_ALLOW_THREADS
    status = dlscan_scan(h, &args, (cudaStream_t)place.handle);
    Py_END_ALLOW_THREADS
    if (status != DLSCAN_SUCCESS)
        dlpy_raise(h, status, func);
    else
        returned = Py_NewRef(result.object);
done:
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    dlpy_array_release(&in2);
    dlpy_array_release(&result);
    return returned;
}

PyObject *dlpy_linear_recurrence(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"a", "b", "initial", "axis", "out", "exclusive", "deterministic", "stream", NULL};
    PyObject *a, *b, *axis = Py_None, *out = Py_None, *stream = Py_None;
    double initial = 0.0;
    int exclusive = 0, deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$dOOppO:linear_recurrence", keywords, &a, &b, &initial,
                                     &axis, &out, &exclusive, &deterministic, &stream))
        return NULL;
    if (PyFloat_Check(a) || PyLong_Check(a)) { /* one a for every item: the scan reads b alone */
        const double scalar = PyFloat_AsDouble(a);
        if (scalar == -1.0 && PyErr_Occurred())
            return NULL;
        return dlpy_builtin_scan(DLSCAN_BUILTIN_LINEAR_RECURRENCE, b, NULL, &scalar, 1, 1.0, initial, axis, out,
                                 exclusive, deterministic, stream, "linear_recurrence");
    }
    return dlpy_builtin_scan(DLSCAN_BUILTIN_LINEAR_RECURRENCE, a, b, NULL, 1, 1.0, initial, axis, out,
                             exclusive, deterministic, stream, "linear_recurrence");
}

PyObject *dlpy_cumprod(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"x", "axis", "out", "deterministic", "stream", NULL};
    PyObject *x, *axis = Py_None, *out = Py_None, *stream = Py_None;
    int deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOpO:cumprod", keywords, &x, &axis, &out, &deterministic,
                                     &stream))
        return NULL;
    return dlpy_builtin_scan(DLSCAN_BUILTIN_PRODUCT, x, NULL, NULL, 0, 0, 0, axis, out, 0, deterministic, stream,
                             "cumprod");
}

PyObject *dlpy_logcumsumexp(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"x", "axis", "out", "deterministic", "stream", NULL};
    PyObject *x, *axis = Py_None, *out = Py_None, *stream = Py_None;
    int deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOpO:logcumsumexp", keywords, &x, &axis, &out,
                                     &deterministic, &stream))
        return NULL;
    return dlpy_builtin_scan(DLSCAN_BUILTIN_LOGSUMEXP, x, NULL, NULL, 0, 0, 0, axis, out, 0, deterministic, stream,
                             "logcumsumexp");
}
