/*
 * operator.c: scans with dlscan's built-in user operators (dlscan.h, "Your own operator"):
 * linear_recurrence (h[t] = a[t] h[t-1] + b[t], a an array or one number; real or complex),
 * cumprod and logcumsumexp, each one dlscan_scan call with the operator that
 * dlscan_operator_builtin makes (on a GPU, compiled at run time the first time, then cached). The
 * operators are made once per handle, kind and scalar a, and kept for the process, as the handles
 * are. Also dlscan.scan's call with a dlscan.Operator of the caller's (_scan_with), whose operator
 * is made once per handle and kept alike.
 */
#include "binding.h" /* Python.h first, as Python asks */

#include <string.h>

/* ---- Operators, per handle ---- */

enum { DLPY_OPERATORS = 64 };

/* A kept operator: a built-in's (owner NULL; which, kind, a) or a dlscan.Operator's (owner). */
typedef struct dlpy_operator {
    dlscan_handle_t h;
    PyObject *owner; /* the dlscan.Operator (a reference: its C functions live as long), or NULL */
    int which;       /* dlscan_builtin */
    int kind;
    int scalar;      /* a linear recurrence's a is one number: `a` (real, imaginary) */
    double a[2];
    dlscan_operator_t op;
} dlpy_operator;

static dlpy_operator dlpy_operators[DLPY_OPERATORS]; /* under the GIL */

/* The operator `key` names (its op unset), made at its first use (from d where the key has an
 * owner, else as the built-in it names) and kept; NULL with an exception set. */
static dlscan_operator_t dlpy_kept(dlpy_operator key, const dlscan_operator_desc *d, const char *func)
{
    int free_slot = -1;
    for (int i = 0; i < DLPY_OPERATORS; ++i) {
        const dlpy_operator *o = &dlpy_operators[i];
        if (!o->op)
            free_slot = free_slot < 0 ? i : free_slot;
        else if (o->h == key.h && o->owner == key.owner && o->which == key.which && o->kind == key.kind &&
                 o->scalar == key.scalar && memcmp(o->a, key.a, sizeof key.a) == 0)
            return o->op;
    }
    const float a32[2] = {(float)key.a[0], (float)key.a[1]};
    const void *parameter = !key.scalar ? NULL : key.kind == DLSCAN_FLOAT32 ? (const void *)a32 : (const void *)key.a;
    dlscan_status status;
    Py_BEGIN_ALLOW_THREADS
    status = key.owner ? dlscan_operator_create(key.h, d, &key.op)
                       : dlscan_operator_builtin(key.h, (dlscan_builtin)key.which, dlpy_type(key.kind), parameter,
                                                 &key.op);
    Py_END_ALLOW_THREADS
    if (status != DLSCAN_SUCCESS) {
        dlpy_raise(key.h, status, func);
        return NULL;
    }
    if (free_slot < 0) { /* full: the oldest goes (its scans were enqueued in order before) */
        dlscan_operator_destroy(dlpy_operators[0].op);
        Py_XDECREF(dlpy_operators[0].owner);
        memmove(dlpy_operators, dlpy_operators + 1, sizeof dlpy_operators - sizeof dlpy_operators[0]);
        free_slot = DLPY_OPERATORS - 1;
    }
    Py_XINCREF(key.owner);
    dlpy_operators[free_slot] = key;
    return key.op;
}

/* The built-in `which` on kind (the state's parts' for a complex recurrence) with a (NULL, or
 * two numbers, the second a complex a's imaginary part). */
static dlscan_operator_t dlpy_builtin(dlscan_handle_t h, int which, int kind, const double *a, const char *func)
{
    const dlpy_operator key = {.h = h, .which = which, .kind = kind, .scalar = a != NULL,
                               .a = {a ? a[0] : 0.0, a ? a[1] : 0.0}};
    return dlpy_kept(key, NULL, func);
}

/* One dlscan_scan with op of n items from in (and in2 where it holds an array) into out, along an
 * axis of axis_length items axis_stride apart (dlscan.h: rows where the stride is 1, columns where
 * more; axis_length 0: one scan) or the segments of `segments` (where it holds an array: offsets,
 * or where by_key, keys), from init (NULL: the identity): a new reference to `success`, or NULL
 * with the exception of its failure. */
static PyObject *dlpy_run(dlscan_handle_t h, dlscan_operator_t op, const dlpy_array *in, const dlpy_array *in2,
                          const dlpy_array *out, const dlpy_array *segments, int by_key, size_t n,
                          size_t axis_length, size_t axis_stride, int exclusive, const void *init,
                          const dlpy_place *place, PyObject *success, const char *func)
{
    dlscan_scan_args args = DLSCAN_SCAN_ARGS_INIT;
    args.custom = op;
    args.d_in = in->data;
    args.d_in2 = in2->object ? in2->data : NULL;
    args.d_out = out->data;
    args.n = n;
    args.axis_length = axis_length;
    args.axis_stride = axis_stride;
    if (segments->object && by_key) {
        args.d_keys = segments->data;
        args.key_type = dlpy_type(segments->kind);
    } else if (segments->object) {
        args.d_offsets = (const size_t *)segments->data;
        args.num_segments = segments->n - 1;
    }
    args.exclusive = exclusive;
    args.init = init;
    dlscan_status status;
    Py_BEGIN_ALLOW_THREADS
    status = dlscan_scan(h, &args, (cudaStream_t)place->handle);
    Py_END_ALLOW_THREADS
    return status != DLSCAN_SUCCESS ? dlpy_raise(h, status, func) : Py_NewRef(success);
}

/* ---- The calls ---- */

/* One scan of x (and x2, item for item; along an axis, each of its scans) with the built-in `which`
 * into a new array like x (or out=), starting from the state `initial` (two numbers: a recurrence's
 * (1, h0), logsumexp's (x0, 1)), or the identity where has_initial is 0. a: a recurrence's scalar
 * a (real, imaginary), or NULL. A recurrence of complex items runs the complex recurrence on
 * their parts' type, from (1, h0) with h0 complex. keys or offsets (or both None): a segmented
 * scan of x flattened, each segment from the initial state. */
static PyObject *dlpy_builtin_scan(int which, PyObject *x, PyObject *x2, const double *a, int has_initial,
                                   double initial_first, Py_complex initial_second, PyObject *axis, PyObject *keys,
                                   PyObject *offsets, PyObject *out, int exclusive, int deterministic,
                                   PyObject *stream, const char *func)
{
    dlpy_place place = {.device = DLPY_HOST,
                        .stream = stream == Py_None ? NULL : stream,
                        .takes_complex = which == DLSCAN_BUILTIN_LINEAR_RECURRENCE};
    dlpy_array in = DLPY_ARRAY_EMPTY, in2 = DLPY_ARRAY_EMPTY, result = DLPY_ARRAY_EMPTY, segments = DLPY_ARRAY_EMPTY;
    PyObject *returned = NULL;
    int previous_device = -1;
    if (axis != Py_None && (keys != Py_None || offsets != Py_None)) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: axis with %s: a segmented scan runs over the items flattened "
                     "(pass axis=None)", func, keys != Py_None ? "keys" : "offsets");
        return NULL;
    }
    if (dlpy_array_take_nd(&in, x, func, which == DLSCAN_BUILTIN_LINEAR_RECURRENCE ? "a" : "x", &place, 1, 0) < 0)
        return NULL;
    /* axis=: None (x flattened), or dimension d: dlscan.h's scans along an axis, rows where d is the
     * last (stride 1), columns where it is another. */
    int d = 0;
    if (axis != Py_None && dlpy_axis(axis, in.ndim, func, &d) < 0)
        goto done;
    size_t axis_length = 0, axis_stride = 0;
    if (axis != Py_None && in.ndim > 1 && in.n > 0)
        dlpy_axis_shape(&in, d, &axis_length, &axis_stride);
    const int along_rows = axis_length && axis_stride == 1;
    const int kind = in.kind, complex = kind == DLPY_COMPLEX64 || kind == DLPY_COMPLEX128;
    const int parts = kind == DLPY_COMPLEX64 ? DLSCAN_FLOAT32 : kind == DLPY_COMPLEX128 ? DLSCAN_FLOAT64 : kind;
    const int real = parts == DLSCAN_FLOAT32 || parts == DLSCAN_FLOAT64;
    if (!real && !(which == DLSCAN_BUILTIN_PRODUCT && (kind == DLSCAN_INT32 || kind == DLSCAN_UINT32 ||
                                                       kind == DLSCAN_INT64 || kind == DLSCAN_UINT64))) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: %s items are not taken (%s)", func, dlpy_kinds[kind].name,
                     which == DLSCAN_BUILTIN_PRODUCT          ? "int32, uint32, int64, uint64, float32 or float64"
                     : which == DLSCAN_BUILTIN_LINEAR_RECURRENCE ? "float32, float64, complex64 or complex128"
                                                              : "float32 or float64");
        goto done;
    }
    if (!complex && ((a && a[1] != 0) || initial_second.imag != 0)) {
        PyErr_Format(PyExc_TypeError,
                     "dlscan.%s: %s is complex and the items are %s: pass complex items (e.g. "
                     "b.astype(numpy.complex64)), or real numbers",
                     func, a && a[1] != 0 ? "a" : "initial", dlpy_kinds[kind].name);
        goto done;
    }
    if (kind == DLPY_COMPLEX128 && (along_rows || keys != Py_None || offsets != Py_None)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "dlscan.%s: complex128 items %s are not taken: their state (a, b) fills the 32 bytes a "
                     "state may have, and %s it takes 4 more (dlscan.h, \"Your own operator\"); scan complex64 "
                     "items, or each %s on its own",
                     func, along_rows ? "along the last axis" : "in segments",
                     along_rows ? "along rows" : "in segments", along_rows ? "row with axis=None" : "segment");
        goto done;
    }
    if (dlpy_take_segments(&segments, keys, offsets, in.n, which == DLSCAN_BUILTIN_LINEAR_RECURRENCE ? "a" : "x",
                           func, &place) < 0)
        goto done;
    if (x2) {
        if (dlpy_array_take_nd(&in2, x2, func, "b", &place, 0, 0) < 0)
            goto done;
        if (in2.n != in.n || in2.kind != kind) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: a and b must match: %zu items of %s and %zu of %s", func,
                         in.n, dlpy_kinds[kind].name, in2.n, dlpy_kinds[in2.kind].name);
            goto done;
        }
        if (axis_length && (in2.ndim != in.ndim || memcmp(in2.shape, in.shape, (size_t)in.ndim * sizeof in.shape[0]))) {
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
    const dlscan_operator_t op = dlpy_builtin(h, complex ? DLSCAN_BUILTIN_COMPLEX_LINEAR_RECURRENCE : which, parts,
                                             a, func);
    if (!op)
        goto done;
    /* (only float and complex kinds take an initial state: two values, or for complex items four) */
    const double state[4] = {initial_first, complex ? 0.0 : initial_second.real,
                             initial_second.real, initial_second.imag};
    const int values = complex ? 4 : 2;
    unsigned char init[32] = {0};
    for (int v = 0; real && v < values; ++v) {
        if (parts == DLSCAN_FLOAT32) {
            const float narrow = (float)state[v];
            memcpy(init + 4 * v, &narrow, 4);
        } else {
            memcpy(init + 8 * v, &state[v], 8);
        }
    }
    returned = dlpy_run(h, op, &in, &in2, &result, &segments, keys != Py_None, in.n, axis_length, axis_stride,
                        exclusive, has_initial ? init : NULL, &place, result.object, func);
done:
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    dlpy_array_release(&in2);
    dlpy_array_release(&result);
    dlpy_array_release(&segments);
    return returned;
}

PyObject *dlpy_linear_recurrence(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"a",   "b",         "initial",       "axis",   "keys", "offsets",
                               "out", "exclusive", "deterministic", "stream", NULL};
    PyObject *a, *b, *axis = Py_None, *keys = Py_None, *offsets = Py_None, *out = Py_None, *stream = Py_None;
    Py_complex initial = {0.0, 0.0};
    int exclusive = 0, deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$DOOOOppO:linear_recurrence", keywords, &a, &b, &initial,
                                     &axis, &keys, &offsets, &out, &exclusive, &deterministic, &stream))
        return NULL;
    if (PyFloat_Check(a) || PyLong_Check(a) || PyComplex_Check(a)) { /* one a for every item: the scan reads b */
        const Py_complex one = PyComplex_AsCComplex(a);
        if (one.real == -1.0 && PyErr_Occurred())
            return NULL;
        const double scalar[2] = {one.real, one.imag};
        return dlpy_builtin_scan(DLSCAN_BUILTIN_LINEAR_RECURRENCE, b, NULL, scalar, 1, 1.0, initial, axis, keys,
                                 offsets, out, exclusive, deterministic, stream, "linear_recurrence");
    }
    return dlpy_builtin_scan(DLSCAN_BUILTIN_LINEAR_RECURRENCE, a, b, NULL, 1, 1.0, initial, axis, keys, offsets,
                             out, exclusive, deterministic, stream, "linear_recurrence");
}

PyObject *dlpy_cumprod(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"x", "axis", "keys", "offsets", "out", "deterministic", "stream", NULL};
    PyObject *x, *axis = Py_None, *keys = Py_None, *offsets = Py_None, *out = Py_None, *stream = Py_None;
    int deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOOpO:cumprod", keywords, &x, &axis, &keys, &offsets, &out,
                                     &deterministic, &stream))
        return NULL;
    return dlpy_builtin_scan(DLSCAN_BUILTIN_PRODUCT, x, NULL, NULL, 0, 0, (Py_complex){0, 0}, axis, keys, offsets,
                             out, 0, deterministic, stream, "cumprod");
}

PyObject *dlpy_logcumsumexp(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"x", "axis", "keys", "offsets", "out", "deterministic", "stream", NULL};
    PyObject *x, *axis = Py_None, *keys = Py_None, *offsets = Py_None, *out = Py_None, *stream = Py_None;
    int deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOOpO:logcumsumexp", keywords, &x, &axis, &keys, &offsets,
                                     &out, &deterministic, &stream))
        return NULL;
    return dlpy_builtin_scan(DLSCAN_BUILTIN_LOGSUMEXP, x, NULL, NULL, 0, 0, (Py_complex){0, 0}, axis, keys, offsets,
                             out, 0, deterministic, stream, "logcumsumexp");
}

/* ---- Operators of the caller's (dlscan.Operator) ---- */

/* An Operator's description, from its _desc: (source or None, state_bytes, identity bytes,
 * flags, in_bytes, in2_bytes, out_bytes, and the C functions' addresses combine, load, store, 0
 * where none). The source and identity point into desc_object, which must outlive *d. */
static int dlpy_read_desc(PyObject *desc_object, dlscan_operator_desc *d, const char *func)
{
    const char *source = NULL, *identity = NULL;
    Py_ssize_t state_bytes, identity_bytes, in_bytes, in2_bytes, out_bytes;
    unsigned int flags;
    unsigned long long combine, load, store;
    if (!desc_object || !PyTuple_Check(desc_object) ||
        !PyArg_ParseTuple(desc_object, "zny#InnnKKK", &source, &state_bytes, &identity, &identity_bytes, &flags,
                          &in_bytes, &in2_bytes, &out_bytes, &combine, &load, &store)) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: op must be a dlscan.Operator", func);
        return -1;
    }
    if (identity_bytes != state_bytes) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: the identity is %zd bytes, the state %zd", func, identity_bytes,
                     state_bytes);
        return -1;
    }
    *d = (dlscan_operator_desc){.size = sizeof *d,
                                .state_bytes = (size_t)state_bytes,
                                .identity = identity,
                                .flags = flags,
                                .in_bytes = (size_t)in_bytes,
                                .in2_bytes = (size_t)in2_bytes,
                                .out_bytes = (size_t)out_bytes,
                                .source = source,
                                .combine = (void (*)(void *, const void *, const void *))(uintptr_t)combine,
                                .load = (void (*)(void *, const void *, const void *))(uintptr_t)load,
                                .store = (void (*)(void *, const void *))(uintptr_t)store};
    return 0;
}

/* _scan_with(op, x, x2, out, n, axis_length, axis_stride, offsets, keys, exclusive, initial,
 * deterministic, stream, func): dlscan.scan's call (dlscan/_operator.py has worked out the items):
 * n items, whose bytes are x's (and x2's, or None) and out's, any element kind, along an axis of
 * axis_length items axis_stride apart (0: one scan) or the segments of offsets or of keys (n of
 * them, of a real kind; or both None), from initial (the state's bytes, or None: the identity).
 * Returns None. */
PyObject *dlpy_scan_with(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *owner, *x, *x2, *out, *offsets, *keys, *initial, *stream;
    Py_ssize_t n, axis_length, axis_stride;
    int exclusive, deterministic;
    const char *func;
    if (!PyArg_ParseTuple(args, "OOOOnnnOOpOpOs:_scan_with", &owner, &x, &x2, &out, &n, &axis_length, &axis_stride,
                          &offsets, &keys, &exclusive, &initial, &deterministic, &stream, &func))
        return NULL;
    PyObject *desc_object = PyObject_GetAttrString(owner, "_desc");
    if (!desc_object)
        PyErr_Clear();
    dlscan_operator_desc d;
    if (dlpy_read_desc(desc_object, &d, func) < 0) {
        Py_XDECREF(desc_object);
        return NULL;
    }
    /* The items' bytes are the operator's: any element kind. */
    dlpy_place place = {.device = DLPY_HOST, .stream = stream == Py_None ? NULL : stream, .takes_complex = 1};
    dlpy_array in = DLPY_ARRAY_EMPTY, in2 = DLPY_ARRAY_EMPTY, result = DLPY_ARRAY_EMPTY, segments = DLPY_ARRAY_EMPTY;
    PyObject *returned = NULL;
    int previous_device = -1;
    if (dlpy_array_take_nd(&in, x, func, "x", &place, 1, 0) < 0 ||
        (x2 != Py_None && dlpy_array_take_nd(&in2, x2, func, "x[1]", &place, 0, 0) < 0) ||
        dlpy_array_take_nd(&result, out, func, "out", &place, 0, 1) < 0 ||
        dlpy_take_segments(&segments, keys, offsets, (size_t)n, "x", func, &place) < 0)
        goto done;
    const struct {
        const dlpy_array *a;
        size_t item_bytes;
        const char *name;
    } operands[3] = {{&in, d.in_bytes, "x"}, {&in2, d.in2_bytes, "x[1]"}, {&result, d.out_bytes, "out"}};
    for (int k = 0; k < 3; ++k) {
        const dlpy_array *a = operands[k].a;
        if (a->object && a->n * dlpy_kinds[a->kind].size != (size_t)n * operands[k].item_bytes) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: %s holds %zu bytes, not %zd items of %zu bytes", func,
                         operands[k].name, a->n * dlpy_kinds[a->kind].size, n, operands[k].item_bytes);
            goto done;
        }
    }
    char *init = NULL;
    if (initial != Py_None) {
        Py_ssize_t bytes = 0;
        if (PyBytes_AsStringAndSize(initial, &init, &bytes) < 0)
            goto done;
        if ((size_t)bytes != d.state_bytes) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: initial is %zd bytes, the state %zu", func, bytes,
                         d.state_bytes);
            goto done;
        }
    }
    dlscan_handle_t h = dlpy_handle(&place, func, &previous_device);
    if (!h || dlpy_set_deterministic(h, deterministic, func) < 0)
        goto done;
    const dlscan_operator_t op = dlpy_kept((dlpy_operator){.h = h, .owner = owner}, &d, func);
    if (!op)
        goto done;
    returned = dlpy_run(h, op, &in, &in2, &result, &segments, keys != Py_None, (size_t)n, (size_t)axis_length,
                        (size_t)axis_stride, exclusive, init, &place, Py_None, func);
done:
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    dlpy_array_release(&in2);
    dlpy_array_release(&result);
    dlpy_array_release(&segments);
    Py_XDECREF(desc_object);
    return returned;
}
