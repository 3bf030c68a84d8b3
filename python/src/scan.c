/*
 * scan.c: cumsum, cummin and cummax, each one dlscan_scan call, and reserve. The output type
 * is dtype=, else out='s, else NumPy's choice (cumsum widens bool and integers narrower than
 * 64 bits to int64 or uint64; otherwise the input's type). keys= or offsets= make the call a
 * segmented scan (dlscan.h, dlscan_scan_args' second version).
 */
#include "binding.h" /* Python.h first, as Python asks */

#include <string.h>

/* NumPy's result type for a running sum or extreme of `kind`, without dtype= or out=. */
static int dlpy_default_kind(int kind, dlscan_op op)
{
    if (op != DLSCAN_SUM)
        return kind;
    switch (kind) {
    case DLPY_BOOL: case DLSCAN_INT8: case DLSCAN_INT16: case DLSCAN_INT32: return DLSCAN_INT64;
    case DLSCAN_UINT8: case DLSCAN_UINT16: case DLSCAN_UINT32: return DLSCAN_UINT64;
    }
    return kind;
}

/* An initial= or total= array: one item of the output type, on the input's device. */
static int dlpy_one_item(dlpy_array *a, PyObject *object, int kind, const char *func,
                         const char *name, dlpy_place *place, int writable)
{
    if (dlpy_array_take(a, object, func, name, place, 0, writable) < 0)
        return -1;
    if (a->n == 1 && a->kind == kind)
        return 0;
    PyErr_Format(a->n == 1 ? PyExc_TypeError : PyExc_ValueError,
                 "dlscan.%s: %s must be one item of %s (the output type), not %zu of %s", func,
                 name, dlpy_kinds[kind].name, a->n, dlpy_kinds[a->kind].name);
    dlpy_array_release(a);
    return -1;
}

static PyObject *dlpy_scan(PyObject *args, PyObject *kwargs, dlscan_op op, const char *func,
                           const char *format)
{
    static char *keywords[] = {"x", "dtype", "out", "exclusive", "initial", "total",
                               "deterministic", "stream", "keys", "offsets", NULL};
    PyObject *x, *dtype = Py_None, *out = Py_None, *initial = Py_None, *total = Py_None,
                 *stream = Py_None, *keys = Py_None, *offsets = Py_None;
    int exclusive = 0, deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &x, &dtype, &out, &exclusive,
                                     &initial, &total, &deterministic, &stream, &keys, &offsets))
        return NULL;

    dlpy_place place = {.device = DLPY_HOST, .stream = stream == Py_None ? NULL : stream};
    dlpy_array in = DLPY_ARRAY_EMPTY, result = DLPY_ARRAY_EMPTY, init = DLPY_ARRAY_EMPTY,
               sum = DLPY_ARRAY_EMPTY, segments = DLPY_ARRAY_EMPTY;
    PyObject *returned = NULL;
    unsigned char init_value[8];
    int previous_device = -1;
    if (dlpy_array_take(&in, x, func, "x", &place, 1, 0) < 0)
        return NULL;

    int kind = dtype == Py_None ? -1 : dlpy_kind_from_dtype(dtype, func);
    if (dtype != Py_None && kind < 0)
        goto done;
    if (out != Py_None) {
        if (dlpy_array_take(&result, out, func, "out", &place, 0, 1) < 0)
            goto done;
        if (result.n != in.n) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: out has %zu items and x %zu", func,
                         result.n, in.n);
            goto done;
        }
        if (kind >= 0 && result.kind != kind) {
            PyErr_Format(PyExc_TypeError, "dlscan.%s: out has items of %s, and dtype=%s", func,
                         dlpy_kinds[result.kind].name, dlpy_kinds[kind].name);
            goto done;
        }
        kind = result.kind;
    }
    if (kind < 0)
        kind = dlpy_default_kind(in.kind, op);
    /* bool items stay 0 and 1 only under min and max of bools. */
    if (kind == DLPY_BOOL && (op == DLSCAN_SUM || in.kind != DLPY_BOOL)) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: a %s of %s items cannot be written as bool",
                     func, op == DLSCAN_SUM ? "sum" : "scan", dlpy_kinds[in.kind].name);
        goto done;
    }
    if (out == Py_None && dlpy_array_new(&result, x, in.n, kind, func, "out", &place) < 0)
        goto done;

    dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
    if (initial != Py_None) {
        /* An array (it has a length) is read where it lives; a number is passed by value. */
        const Py_ssize_t length = PyUnicode_Check(initial) ? -1 : PyObject_Length(initial);
        if (length >= 0) {
            if (dlpy_one_item(&init, initial, kind, func, "initial", &place, 0) < 0)
                goto done;
            a.d_init = init.data;
        } else {
            PyErr_Clear();
            if (dlpy_value(initial, kind, func, "initial", init_value) < 0)
                goto done;
            a.init = init_value;
        }
    }
    if (total != Py_None) {
        if (dlpy_one_item(&sum, total, kind, func, "total", &place, 1) < 0)
            goto done;
        a.d_total = sum.data;
    }

    if ((keys != Py_None || offsets != Py_None) && (a.d_init || total != Py_None)) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: %s with %s: a segmented scan takes initial as "
                     "a number, which starts every segment, and leaves no total", func,
                     a.d_init ? "initial as an array" : "total", keys != Py_None ? "keys" : "offsets");
        goto done;
    }
    if (keys != Py_None && offsets != Py_None) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: keys and offsets are both given: segments come "
                     "from one or the other", func);
        goto done;
    }
    if (keys != Py_None) {
        if (dlpy_array_take(&segments, keys, func, "keys", &place, 0, 0) < 0)
            goto done;
        if (segments.n != in.n) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: keys has %zu items and x %zu", func,
                         segments.n, in.n);
            goto done;
        }
        a.d_keys = segments.data;
        a.key_type = dlpy_type(segments.kind);
    }
    if (offsets != Py_None) {
        if (dlpy_array_take(&segments, offsets, func, "offsets", &place, 0, 0) < 0)
            goto done;
        if (segments.kind != DLSCAN_INT64 && segments.kind != DLSCAN_UINT64) {
            PyErr_Format(PyExc_TypeError, "dlscan.%s: offsets must be int64 or uint64, not %s",
                         func, dlpy_kinds[segments.kind].name);
            goto done;
        }
        if (segments.n == 0) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: offsets is empty; it holds the start of "
                         "every segment and the end of the last (at least one item)", func);
            goto done;
        }
        a.d_offsets = (const size_t *)segments.data;
        a.num_segments = segments.n - 1;
    }

    dlscan_handle_t h = dlpy_handle(&place, func, &previous_device);
    if (!h || dlpy_set_deterministic(h, deterministic, func) < 0)
        goto done;
    a.d_in = in.data;
    a.d_out = result.data;
    a.n = in.n;
    a.in_type = dlpy_type(in.kind);
    a.out_type = dlpy_type(kind);
    a.op = op;
    a.exclusive = exclusive;
    dlscan_status status;
    Py_BEGIN_ALLOW_THREADS
    status = dlscan_scan(h, &a, (cudaStream_t)place.handle);
    Py_END_ALLOW_THREADS
    if (status != DLSCAN_SUCCESS)
        dlpy_raise(h, status, func);
    else
        returned = Py_NewRef(result.object);
done:
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    dlpy_array_release(&result);
    dlpy_array_release(&init);
    dlpy_array_release(&sum);
    dlpy_array_release(&segments);
    return returned;
}

PyObject *dlpy_cumsum(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return dlpy_scan(args, kwargs, DLSCAN_SUM, "cumsum", "O|$OOpOOpOOO:cumsum");
}

PyObject *dlpy_cummin(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return dlpy_scan(args, kwargs, DLSCAN_MIN, "cummin", "O|$OOpOOpOOO:cummin");
}

PyObject *dlpy_cummax(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return dlpy_scan(args, kwargs, DLSCAN_MAX, "cummax", "O|$OOpOOpOOO:cummax");
}

PyObject *dlpy_reserve(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"x", "dtype", NULL};
    PyObject *x, *dtype = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O:reserve", keywords, &x, &dtype))
        return NULL;
    dlpy_place place = {.device = DLPY_HOST};
    dlpy_array in = DLPY_ARRAY_EMPTY;
    if (dlpy_array_take(&in, x, "reserve", "x", &place, 1, 0) < 0)
        return NULL;
    PyObject *returned = NULL;
    int previous_device = -1;
    /* Without dtype=: the output types of cumsum, cummin and cummax of x by default. */
    const int kinds[2] = {dtype == Py_None ? in.kind : dlpy_kind_from_dtype(dtype, "reserve"),
                          dlpy_default_kind(in.kind, DLSCAN_SUM)};
    dlscan_handle_t h = kinds[0] < 0 ? NULL : dlpy_handle(&place, "reserve", &previous_device);
    dlscan_status status = DLSCAN_SUCCESS;
    for (int i = 0; h && i < (dtype == Py_None ? 2 : 1) && status == DLSCAN_SUCCESS; ++i)
        status = dlscan_reserve(h, in.n, dlpy_type(kinds[i]));
    if (h)
        returned = status == DLSCAN_SUCCESS ? Py_NewRef(Py_None) : dlpy_raise(h, status, "reserve");
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    return returned;
}
