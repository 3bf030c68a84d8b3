/*
 * scan.c: cumsum, cummin and cummax, each one dlscan_scan call, and reserve. The output type
 * is dtype=, else out='s, else NumPy's choice (cumsum widens bool and integers narrower than
 * 64 bits to int64 or uint64; otherwise the input's type). keys= or offsets= make the call a
 * segmented scan (dlscan.h, dlscan_scan_args' second version); group= a scan across the ranks
 * of an mpi4py communicator or a torch.distributed group (dlscan_scan_across).
 *
 * x may have any number of dimensions, C-contiguous. axis=None (the default) scans it
 * flattened into a 1-D output, as numpy.cumsum does; axis=d scans along dimension d into an
 * output of x's shape: dlscan_scan_args' third version, with axis_length = shape[d] and
 * axis_stride = the product of the extents after d. A 0-d x is one item, as for NumPy.
 */
#include "binding.h" /* Python.h first, as Python asks */

#include <stdio.h>
#include <stdlib.h>
#ifdef DLPY_GPU
#include <cuda_runtime_api.h>
#endif

#include <string.h>

/* The result type of a running sum or extreme of a's kind, without dtype= or out=: NumPy's
 * (bool and integers narrower than 64 bits sum into int64, unsigned ones into uint64), or for a
 * PyTorch tensor PyTorch's (every integer type and bool into int64). */
static int dlpy_default_kind(const dlpy_array *a, dlscan_op op)
{
    if (op != DLSCAN_SUM)
        return a->kind;
    switch (a->kind) {
    case DLPY_BOOL: case DLSCAN_INT8: case DLSCAN_INT16: case DLSCAN_INT32: return DLSCAN_INT64;
    case DLSCAN_UINT8: case DLSCAN_UINT16: case DLSCAN_UINT32: case DLSCAN_UINT64:
        return a->torch ? DLSCAN_INT64 : DLSCAN_UINT64;
    }
    return a->kind;
}

int dlpy_take_offsets(dlpy_array *segments, PyObject *offsets, const char *func, dlpy_place *place)
{
    if (dlpy_array_take(segments, offsets, func, "offsets", place, 0, 0) < 0)
        return -1;
    if (segments->kind != DLSCAN_INT64 && segments->kind != DLSCAN_UINT64) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: offsets must be int64 or uint64, not %s", func,
                     dlpy_kinds[segments->kind].name);
        return -1;
    }
    if (segments->n == 0) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: offsets is empty; it holds the start of "
                     "every segment and the end of the last (at least one item)", func);
        return -1;
    }
    return 0;
}

int dlpy_take_segments(dlpy_array *segments, PyObject *keys, PyObject *offsets, size_t n, const char *items,
                       const char *func, dlpy_place *place)
{
    if (keys != Py_None && offsets != Py_None) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: keys and offsets are both given: segments come "
                     "from one or the other", func);
        return -1;
    }
    if (offsets != Py_None)
        return dlpy_take_offsets(segments, offsets, func, place);
    if (keys == Py_None)
        return 0;
    if (dlpy_array_take(segments, keys, func, "keys", place, 0, 0) < 0)
        return -1;
    if (segments->kind == DLPY_COMPLEX64 || segments->kind == DLPY_COMPLEX128) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: keys must be of a real kind, not complex", func);
        return -1;
    }
    if (segments->n != n) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: keys has %zu items and %s %zu", func, segments->n, items, n);
        return -1;
    }
    return 0;
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

/* The dimension that axis= names among ndim (a 0-d array counts as one dimension, as NumPy
 * counts it), in *d. TypeError for no integer; numpy.exceptions.AxisError (a ValueError and an
 * IndexError; dlscan/__init__.py's _axis_error) for one out of range. */
int dlpy_axis(PyObject *axis, int ndim, const char *func, int *d)
{
    if (PyBool_Check(axis)) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: axis must be an integer or None, not bool",
                     func);
        return -1;
    }
    PyObject *index = PyNumber_Index(axis);
    if (!index)
        return -1;
    int overflow;
    const long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        Py_DECREF(index);
        return -1;
    }
    const int dims = ndim > 0 ? ndim : 1;
    if (!overflow && value >= -dims && value < dims) {
        Py_DECREF(index);
        *d = (int)(value < 0 ? value + dims : value);
        return 0;
    }
    PyObject *error = PyObject_CallFunction(dlpy_axis_error_helper, "Ois", index, dims, func);
    Py_DECREF(index);
    if (error) {
        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_DECREF(error);
    }
    return -1;
}

/* (binding.h) */
void dlpy_axis_shape(const dlpy_array *in, int d, size_t *length, size_t *stride)
{
    *length = in->ndim > 0 ? in->shape[d] : 1;
    *stride = 1;
    for (int k = d + 1; k < in->ndim; ++k)
        *stride *= in->shape[k];
}

/* An out= for a scan along an axis: x's shape (a 0-d x: one item, 1-D); with axis=None, 1-D
 * of x's size. */
static int dlpy_check_out_shape(const dlpy_array *in, const dlpy_array *out, int along,
                                const char *func)
{
    const size_t one = 1;
    const int ndim = along && in->ndim > 0 ? in->ndim : 1;
    const size_t *shape = !along ? &in->n : in->ndim > 0 ? in->shape : &one;
    int same = out->ndim == ndim;
    for (int d = 0; same && d < ndim; ++d)
        same = out->shape[d] == shape[d];
    if (same)
        return 0;
    PyObject *has = dlpy_shape_text(out->ndim, out->shape);
    PyObject *wants = has ? dlpy_shape_text(ndim, shape) : NULL;
    if (wants && along)
        PyErr_Format(PyExc_ValueError, "dlscan.%s: out has shape %U; a scan along an axis "
                     "writes x's shape, %U", func, has, wants);
    else if (wants && out->ndim == 1)
        PyErr_Format(PyExc_ValueError, "dlscan.%s: out has %zu items and x %zu", func, out->n,
                     in->n);
    else if (wants)
        PyErr_Format(PyExc_ValueError, "dlscan.%s: out has shape %U; with axis=None the scan of "
                     "x flattened is one-dimensional, %U (pass axis= to keep x's shape)", func,
                     has, wants);
    Py_XDECREF(has);
    Py_XDECREF(wants);
    return -1;
}

/* A call across ranks (group=; a scan here, a select in compact.c): its exchange's all-gather
 * calls dlscan/__init__.py's _group_all_gather with the GIL held. An mpi4py communicator
 * gathers host memory, so on a GPU handle the values go through the host here (after the
 * slice's reduction on `stream`); a torch.distributed group gathers them where they are, on the
 * call's stream. */
static int dlpy_group_all_gather(void *context, const void *send, void *recv, size_t bytes, int on_device,
                                 cudaStream_t stream, char *why, size_t why_size)
{
    const dlpy_group *g = context;
    unsigned char staged[16], *gathered = NULL;
    const void *from = send;
    void *to = recv;
    int device = on_device;
#ifdef DLPY_GPU
    if (on_device && !g->device_memory) {
        gathered = bytes <= sizeof staged ? malloc((size_t)g->ranks * bytes) : NULL;
        cudaError_t error = gathered ? cudaMemcpyAsync(staged, send, bytes, cudaMemcpyDeviceToHost, stream)
                                     : cudaErrorMemoryAllocation;
        if (error == cudaSuccess)
            error = cudaStreamSynchronize(stream);
        if (error != cudaSuccess) {
            snprintf(why, why_size, "the rank's total to the host: %s", cudaGetErrorString(error));
            free(gathered);
            return 1;
        }
        from = staged, to = gathered, device = 0;
    }
#endif
    const PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *result = PyObject_CallFunction(dlpy_group_all_gather_helper, "OKKnin", g->group,
                                             (unsigned long long)(uintptr_t)from,
                                             (unsigned long long)(uintptr_t)to, (Py_ssize_t)bytes,
                                             device, (Py_ssize_t)(intptr_t)stream);
    const int failed = !result;
    if (failed) {
        PyObject *type, *value, *trace;
        PyErr_Fetch(&type, &value, &trace);
        PyObject *text = value ? PyObject_Str(value) : NULL;
        snprintf(why, why_size, "%s: %s", type ? ((PyTypeObject *)type)->tp_name : "an exception",
                 text ? PyUnicode_AsUTF8(text) : "?");
        PyErr_Clear();
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(trace);
    }
    Py_XDECREF(result);
    PyGILState_Release(gil);
#ifdef DLPY_GPU
    if (gathered && !failed) {
        cudaError_t error = cudaMemcpyAsync(recv, gathered, (size_t)g->ranks * bytes, cudaMemcpyHostToDevice,
                                            stream);
        if (error == cudaSuccess)
            error = cudaStreamSynchronize(stream); /* before `gathered` goes */
        if (error != cudaSuccess) {
            snprintf(why, why_size, "the ranks' totals to the device: %s", cudaGetErrorString(error));
            free(gathered);
            return 1;
        }
    }
#endif
    free(gathered);
    return failed;
}

#ifdef DLPY_GPU
/* A torch.distributed group's calls on a GPU handle go through the peer exchange
 * (dlscan_peers_create): made on the group's first call on a device, with the group's own
 * all-gather as its bootstrap (every rank makes that call), and kept for the process in
 * dlpy_peers, {(group, device): capsule}. Where the ranks cannot map each other's memory (other
 * hosts) the entry is None and every call gathers through the group. */
static PyObject *dlpy_peers;

static int dlpy_group_peers(dlscan_handle_t h, cudaStream_t stream, const dlpy_group *g, dlscan_exchange *exchange)
{
    int device = 0;
    if (!g->device_memory || g->ranks < 2 || strcmp(dlscan_backend_name(h), "gpu") != 0 ||
        cudaGetDevice(&device) != cudaSuccess)
        return 0;
    if (!dlpy_peers && !(dlpy_peers = PyDict_New()))
        return -1;
    PyObject *key = Py_BuildValue("(Oi)", g->group, device);
    if (!key)
        return -1;
    PyObject *found = PyDict_GetItemWithError(dlpy_peers, key); /* borrowed */
    if (!found && !PyErr_Occurred()) {
        dlscan_peers_t peers = NULL;
        PyObject *made = dlscan_peers_create(h, exchange, stream, &peers) == DLSCAN_SUCCESS
                             ? PyCapsule_New(peers, "dlscan.peers", NULL)
                             : Py_NewRef(Py_None);
        if (made && PyDict_SetItem(dlpy_peers, key, made) == 0)
            found = made;
        Py_XDECREF(made); /* the dict holds it */
    }
    Py_DECREF(key);
    if (!found)
        return -1;
    if (found != Py_None)
        *exchange = dlscan_peers_exchange(PyCapsule_GetPointer(found, "dlscan.peers"));
    return 0;
}
#endif

int dlpy_group_exchange(PyObject *group, dlscan_handle_t h, cudaStream_t stream, dlpy_group *g,
                        dlscan_exchange *exchange)
{
    PyObject *ranks = PyObject_CallFunction(dlpy_group_ranks_helper, "O", group);
    int rank = 0;
    *g = (dlpy_group){.group = group};
    const int parsed = ranks && PyArg_ParseTuple(ranks, "iii", &rank, &g->ranks, &g->device_memory);
    Py_XDECREF(ranks);
    if (!parsed)
        return -1;
    *exchange = (dlscan_exchange){rank, g->ranks, dlpy_group_all_gather, g, NULL};
#ifdef DLPY_GPU
    return dlpy_group_peers(h, stream, g, exchange);
#else
    (void)h, (void)stream;
    return 0;
#endif
}

static PyObject *dlpy_scan(PyObject *args, PyObject *kwargs, dlscan_op op, const char *func,
                           const char *format)
{
    static char *keywords[] = {"x", "axis", "dtype", "out", "exclusive", "initial", "total",
                               "deterministic", "stream", "keys", "offsets", "group", "dim", NULL};
    PyObject *x, *axis = Py_None, *dtype = Py_None, *out = Py_None, *initial = Py_None,
                 *total = Py_None, *stream = Py_None, *keys = Py_None, *offsets = Py_None,
                 *group = Py_None, *dim = Py_None;
    int exclusive = 0, deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &x, &axis, &dtype, &out,
                                     &exclusive, &initial, &total, &deterministic, &stream, &keys,
                                     &offsets, &group, &dim))
        return NULL;
    if (dim != Py_None) { /* PyTorch's name of axis */
        if (axis != Py_None) {
            PyErr_Format(PyExc_TypeError, "dlscan.%s: axis and dim name one argument: pass one of them", func);
            return NULL;
        }
        axis = dim;
    }
    if (group != Py_None && (axis != Py_None || keys != Py_None || offsets != Py_None)) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: group with %s: a scan across ranks runs over x "
                     "flattened, without segments", func,
                     axis != Py_None ? "axis" : keys != Py_None ? "keys" : "offsets");
        return NULL;
    }

    dlpy_place place = {.device = DLPY_HOST, .stream = stream == Py_None ? NULL : stream};
    dlpy_array in = DLPY_ARRAY_EMPTY, result = DLPY_ARRAY_EMPTY, init = DLPY_ARRAY_EMPTY,
               sum = DLPY_ARRAY_EMPTY, segments = DLPY_ARRAY_EMPTY;
    PyObject *returned = NULL;
    unsigned char init_value[8];
    int previous_device = -1;
    if (dlpy_array_take_nd(&in, x, func, "x", &place, 1, 0) < 0)
        return NULL;

    /* Along an axis: the scans' length and the items between two of a scan's items. */
    const int along = axis != Py_None;
    size_t axis_length = 0, axis_stride = 0;
    if (along) {
        int d;
        if (dlpy_axis(axis, in.ndim, func, &d) < 0)
            goto done;
        dlpy_axis_shape(&in, d, &axis_length, &axis_stride);
        if (keys != Py_None || offsets != Py_None) {
            PyErr_Format(PyExc_ValueError, "dlscan.%s: axis with %s: a segmented scan runs over x "
                         "flattened (pass axis=None)", func, keys != Py_None ? "keys" : "offsets");
            goto done;
        }
    }

    int kind = dtype == Py_None ? -1 : dlpy_kind_from_dtype(dtype, func);
    if (dtype != Py_None && kind < 0)
        goto done;
    if (out != Py_None) {
        if (dlpy_array_take_nd(&result, out, func, "out", &place, 0, 1) < 0 ||
            dlpy_check_out_shape(&in, &result, along, func) < 0)
            goto done;
        if (kind >= 0 && result.kind != kind) {
            PyErr_Format(PyExc_TypeError, "dlscan.%s: out has items of %s, and dtype=%s", func,
                         dlpy_kinds[result.kind].name, dlpy_kinds[kind].name);
            goto done;
        }
        kind = result.kind;
    }
    if (kind < 0)
        kind = dlpy_default_kind(&in, op);
    /* bool items stay 0 and 1 only under min and max of bools. */
    if (kind == DLPY_BOOL && (op == DLSCAN_SUM || in.kind != DLPY_BOOL)) {
        PyErr_Format(PyExc_TypeError, "dlscan.%s: a %s of %s items cannot be written as bool",
                     func, op == DLSCAN_SUM ? "sum" : "scan", dlpy_kinds[in.kind].name);
        goto done;
    }
    if (out == Py_None && (along && in.ndim > 1
                               ? dlpy_array_new_shaped(&result, x, in.ndim, in.shape, kind, func,
                                                       "out", &place)
                               : dlpy_array_new(&result, x, in.n, kind, func, "out", &place)) < 0)
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

    if (along && (a.d_init || total != Py_None)) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: %s with axis: scans along an axis take initial "
                     "as a number, which starts every scan, and leave no total", func,
                     a.d_init ? "initial as an array" : "total");
        goto done;
    }
    if ((keys != Py_None || offsets != Py_None) && (a.d_init || total != Py_None)) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: %s with %s: a segmented scan takes initial as "
                     "a number, which starts every segment, and leaves no total", func,
                     a.d_init ? "initial as an array" : "total", keys != Py_None ? "keys" : "offsets");
        goto done;
    }
    if (dlpy_take_segments(&segments, keys, offsets, in.n, "x", func, &place) < 0)
        goto done;
    if (keys != Py_None) {
        a.d_keys = segments.data;
        a.key_type = dlpy_type(segments.kind);
    } else if (offsets != Py_None) {
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
    if (along && in.n > 0) { /* (no items: nothing to scan along) */
        a.axis_length = axis_length;
        a.axis_stride = axis_stride;
    }
    dlscan_status status;
    if (group != Py_None) { /* across the group's ranks */
        dlpy_group g;
        dlscan_exchange exchange;
        if (dlpy_group_exchange(group, h, (cudaStream_t)place.handle, &g, &exchange) < 0)
            goto done;
        Py_BEGIN_ALLOW_THREADS
        status = dlscan_scan_across(h, &a, &exchange, (cudaStream_t)place.handle);
        Py_END_ALLOW_THREADS
    } else {
        Py_BEGIN_ALLOW_THREADS
        status = dlscan_scan(h, &a, (cudaStream_t)place.handle);
        Py_END_ALLOW_THREADS
    }
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
    return dlpy_scan(args, kwargs, DLSCAN_SUM, "cumsum", "O|$OOOpOOpOOOOO:cumsum");
}

PyObject *dlpy_cummin(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return dlpy_scan(args, kwargs, DLSCAN_MIN, "cummin", "O|$OOOpOOpOOOOO:cummin");
}

PyObject *dlpy_cummax(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return dlpy_scan(args, kwargs, DLSCAN_MAX, "cummax", "O|$OOOpOOpOOOOO:cummax");
}

PyObject *dlpy_reserve(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"x", "dtype", "axis", NULL};
    PyObject *x, *dtype = Py_None, *axis = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:reserve", keywords, &x, &dtype, &axis))
        return NULL;
    dlpy_place place = {.device = DLPY_HOST};
    dlpy_array in = DLPY_ARRAY_EMPTY;
    if (dlpy_array_take_nd(&in, x, "reserve", "x", &place, 1, 0) < 0)
        return NULL;
    PyObject *returned = NULL;
    int previous_device = -1, d = 0;
    /* Without dtype=: the output types of cumsum, cummin and cummax of x by default. */
    const int kinds[2] = {dtype == Py_None ? in.kind : dlpy_kind_from_dtype(dtype, "reserve"),
                          dlpy_default_kind(&in, DLSCAN_SUM)};
    dlscan_handle_t h = kinds[0] < 0 || (axis != Py_None && dlpy_axis(axis, in.ndim, "reserve", &d) < 0)
                            ? NULL
                            : dlpy_handle(&place, "reserve", &previous_device);
    dlscan_status status = DLSCAN_SUCCESS;
    for (int i = 0; h && i < (dtype == Py_None ? 2 : 1) && status == DLSCAN_SUCCESS; ++i) {
        if (axis == Py_None) {
            status = dlscan_reserve(h, in.n, dlpy_type(kinds[i]));
        } else { /* the scan along the axis, as cumsum makes it, without its buffers */
            dlscan_scan_args a = DLSCAN_SCAN_ARGS_INIT;
            a.n = in.n;
            a.in_type = dlpy_type(in.kind);
            a.out_type = dlpy_type(kinds[i]);
            dlpy_axis_shape(&in, d, &a.axis_length, &a.axis_stride);
            status = a.n == 0 ? DLSCAN_SUCCESS : dlscan_reserve_scan(h, &a);
        }
    }
    if (h)
        returned = status == DLSCAN_SUCCESS ? Py_NewRef(Py_None) : dlpy_raise(h, status, "reserve");
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    return returned;
}
