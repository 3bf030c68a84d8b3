/*
 * compact.c: select, unique, run_length_encode and reduce_by_key, each one dlscan compaction
 * call (select with group=: dlscan_select_across over the group's ranks). Outputs are as long
 * as the input; the count goes where the backend writes it: for host arrays a size_t here, and
 * the call returns the outputs cut to it; for CUDA arrays a one-item int64 array on the
 * device, returned with the full-length outputs, so that nothing waits for the GPU. A select
 * across ranks returns its offset and the whole count the same way.
 */
#include "binding.h" /* Python.h first, as Python asks */

#include <string.h>

/* The 32- and 64-bit types: the ones compaction takes. */
static int dlpy_compact_kind(const dlpy_array *a, const char *func, const char *name)
{
    if (a->kind <= DLSCAN_FLOAT64)
        return 0;
    PyErr_Format(PyExc_TypeError,
                 "dlscan.%s: %s has items of %s; compaction takes int32, uint32, int64, uint64, "
                 "float32 and float64",
                 func, name, dlpy_kinds[a->kind].name);
    return -1;
}

/* Where a call's count goes: a host size_t, or a new one-item int64 array like x. */
typedef struct dlpy_count {
    size_t host;
    dlpy_array device;
    size_t *p;
} dlpy_count;

static int dlpy_count_init(dlpy_count *c, PyObject *like, const char *func, dlpy_place *place)
{
    c->host = 0;
    c->device = (dlpy_array)DLPY_ARRAY_EMPTY;
    if (place->device == DLPY_HOST) {
        c->p = &c->host;
        return 0;
    }
    if (dlpy_array_new(&c->device, like, 1, DLSCAN_INT64, func, "count", place) < 0)
        return -1;
    c->p = c->device.data;
    return 0;
}

/* A count as the call returns it: an int for host arrays, else its device array. */
static PyObject *dlpy_count_value(const dlpy_place *place, const dlpy_count *c)
{
    return place->device == DLPY_HOST ? PyLong_FromSize_t(c->host) : Py_NewRef(c->device.object);
}

/* The call's result: (outputs..., count), the outputs cut to the count for host arrays. */
static PyObject *dlpy_compact_result(const dlpy_place *place, dlpy_count *c, dlpy_array *first,
                                     dlpy_array *second)
{
    const int host = place->device == DLPY_HOST;
    PyObject *a = host ? dlpy_head(first->object, c->host) : Py_NewRef(first->object);
    PyObject *b = !second ? NULL
                  : host  ? dlpy_head(second->object, c->host)
                          : Py_NewRef(second->object);
    PyObject *count = dlpy_count_value(place, c);
    PyObject *result = NULL;
    if (a && count && (b || !second))
        result = second ? PyTuple_Pack(3, a, b, count) : PyTuple_Pack(2, a, count);
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(count);
    return result;
}

/* A select across ranks' result: (selected, count, offset, total), selected cut to the count
 * for host arrays. */
static PyObject *dlpy_across_result(const dlpy_place *place, dlpy_count *c, dlpy_count *offset,
                                    dlpy_count *total, dlpy_array *selected)
{
    PyObject *pair = dlpy_compact_result(place, c, selected, NULL);
    PyObject *at = dlpy_count_value(place, offset), *all = dlpy_count_value(place, total);
    PyObject *result = pair && at && all ? PyTuple_Pack(4, PyTuple_GET_ITEM(pair, 0),
                                                        PyTuple_GET_ITEM(pair, 1), at, all)
                                         : NULL;
    Py_XDECREF(pair);
    Py_XDECREF(at);
    Py_XDECREF(all);
    return result;
}

static const struct {
    const char *name;
    dlscan_predicate predicate;
} dlpy_predicates[] = {
    {"<", DLSCAN_LESS},  {"<=", DLSCAN_LESS_EQUAL}, {">", DLSCAN_GREATER},
    {">=", DLSCAN_GREATER_EQUAL}, {"==", DLSCAN_EQUAL}, {"!=", DLSCAN_NOT_EQUAL},
    {"nonzero", DLSCAN_NONZERO},
};

static int dlpy_predicate(PyObject *name, dlscan_predicate *predicate)
{
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    for (size_t i = 0; text && i < sizeof dlpy_predicates / sizeof dlpy_predicates[0]; ++i)
        if (strcmp(text, dlpy_predicates[i].name) == 0) {
            *predicate = dlpy_predicates[i].predicate;
            return 0;
        }
    PyErr_Format(PyExc_ValueError,
                 "dlscan.select: predicate=%R is not one of '<', '<=', '>', '>=', '==', '!=', "
                 "'nonzero'",
                 name);
    return -1;
}

PyObject *dlpy_select(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"x", "flags", "predicate", "value", "out", "stream", "group", NULL};
    PyObject *x, *flags_object = Py_None, *predicate_name = Py_None, *value = Py_None,
                 *out = Py_None, *stream = Py_None, *group = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$OOOOO:select", keywords, &x, &flags_object,
                                     &predicate_name, &value, &out, &stream, &group))
        return NULL;
    const char *func = "select";
    if ((flags_object == Py_None) == (predicate_name == Py_None)) {
        PyErr_SetString(PyExc_TypeError,
                        "dlscan.select: pass either flags or predicate= (with value=)");
        return NULL;
    }
    dlscan_predicate predicate = DLSCAN_NONZERO;
    if (predicate_name != Py_None) {
        if (dlpy_predicate(predicate_name, &predicate) < 0)
            return NULL;
        if ((predicate == DLSCAN_NONZERO) != (value == Py_None)) {
            PyErr_SetString(PyExc_TypeError, "dlscan.select: predicate= takes a value=, except "
                                             "'nonzero', which takes none");
            return NULL;
        }
    } else if (value != Py_None) {
        PyErr_SetString(PyExc_TypeError, "dlscan.select: value= goes with predicate=");
        return NULL;
    }

    dlpy_place place = {.device = DLPY_HOST, .stream = stream == Py_None ? NULL : stream};
    dlpy_array in = DLPY_ARRAY_EMPTY, flags = DLPY_ARRAY_EMPTY, selected = DLPY_ARRAY_EMPTY;
    dlpy_count count = {0, DLPY_ARRAY_EMPTY, NULL}, offset = count, total = count;
    PyObject *returned = NULL;
    unsigned char operand[8];
    int previous_device = -1;
    if (dlpy_array_take(&in, x, func, "x", &place, 1, 0) < 0)
        return NULL;
    if (dlpy_compact_kind(&in, func, "x") < 0)
        goto done;
    if (flags_object != Py_None) {
        if (dlpy_array_take(&flags, flags_object, func, "flags", &place, 0, 0) < 0)
            goto done;
        if (dlpy_kinds[flags.kind].size != 1 || dlpy_kinds[flags.kind].is_float) {
            PyErr_Format(PyExc_TypeError,
                         "dlscan.select: flags has items of %s; it takes bool, int8 or uint8",
                         dlpy_kinds[flags.kind].name);
            goto done;
        }
        if (flags.n != in.n) {
            PyErr_Format(PyExc_ValueError, "dlscan.select: flags has %zu items and x %zu",
                         flags.n, in.n);
            goto done;
        }
    } else if (value != Py_None && dlpy_value(value, in.kind, func, "value", operand) < 0) {
        goto done;
    }
    if (dlpy_output(&selected, out == Py_None ? NULL : out, x, in.n, in.kind, func, "out",
                    &place) < 0 ||
        dlpy_count_init(&count, x, func, &place) < 0 ||
        (group != Py_None &&
         (dlpy_count_init(&offset, x, func, &place) < 0 || dlpy_count_init(&total, x, func, &place) < 0)))
        goto done;

    dlscan_handle_t h = dlpy_handle(&place, func, &previous_device);
    if (!h)
        goto done;
    dlscan_status status;
    dlpy_group g;
    dlscan_exchange exchange;
    if (group != Py_None && dlpy_group_exchange(group, h, (cudaStream_t)place.handle, &g, &exchange) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    if (group != Py_None)
        status = dlscan_select_across(h, in.data, flags_object != Py_None ? flags.data : NULL, selected.data,
                                      count.p, offset.p, total.p, in.n, dlpy_type(in.kind), predicate,
                                      value == Py_None ? NULL : operand, &exchange,
                                      (cudaStream_t)place.handle);
    else if (flags_object != Py_None)
        status = dlscan_select_flagged(h, in.data, flags.data, selected.data, count.p, in.n,
                                       dlpy_type(in.kind), (cudaStream_t)place.handle);
    else
        status = dlscan_select_if(h, in.data, selected.data, count.p, in.n, dlpy_type(in.kind),
                                  predicate, value == Py_None ? NULL : operand,
                                  (cudaStream_t)place.handle);
    Py_END_ALLOW_THREADS
    if (status != DLSCAN_SUCCESS)
        dlpy_raise(h, status, func);
    else if (group != Py_None)
        returned = dlpy_across_result(&place, &count, &offset, &total, &selected);
    else
        returned = dlpy_compact_result(&place, &count, &selected, NULL);
done:
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    dlpy_array_release(&flags);
    dlpy_array_release(&selected);
    dlpy_array_release(&count.device);
    dlpy_array_release(&offset.device);
    dlpy_array_release(&total.device);
    return returned;
}

/* unique and run_length_encode: one input, one or two outputs. */
static PyObject *dlpy_runs(PyObject *args, PyObject *kwargs, int encode, const char *func,
                           const char *format)
{
    static char *keywords[] = {"x", "out", "stream", NULL};
    PyObject *x, *out = Py_None, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &x, &out, &stream))
        return NULL;
    PyObject *values_out = out == Py_None ? NULL : out, *lengths_out = NULL;
    if (encode && dlpy_split_out(values_out, &values_out, &lengths_out, func) < 0)
        return NULL;

    dlpy_place place = {.device = DLPY_HOST, .stream = stream == Py_None ? NULL : stream};
    dlpy_array in = DLPY_ARRAY_EMPTY, values = DLPY_ARRAY_EMPTY, lengths = DLPY_ARRAY_EMPTY;
    dlpy_count count = {0, DLPY_ARRAY_EMPTY, NULL};
    PyObject *returned = NULL;
    int previous_device = -1;
    if (dlpy_array_take(&in, x, func, "x", &place, 1, 0) < 0)
        return NULL;
    if (dlpy_compact_kind(&in, func, "x") < 0 ||
        dlpy_output(&values, values_out, x, in.n, in.kind, func, encode ? "out[0]" : "out",
                    &place) < 0 ||
        (encode && dlpy_output(&lengths, lengths_out, x, in.n, DLSCAN_INT64, func, "out[1]",
                               &place) < 0) ||
        dlpy_count_init(&count, x, func, &place) < 0)
        goto done;

    dlscan_handle_t h = dlpy_handle(&place, func, &previous_device);
    if (!h)
        goto done;
    dlscan_status status;
    Py_BEGIN_ALLOW_THREADS
    if (encode)
        status = dlscan_run_length_encode(h, in.data, values.data, lengths.data, count.p, in.n,
                                          dlpy_type(in.kind), (cudaStream_t)place.handle);
    else
        status = dlscan_unique(h, in.data, values.data, count.p, in.n, dlpy_type(in.kind),
                               (cudaStream_t)place.handle);
    Py_END_ALLOW_THREADS
    if (status != DLSCAN_SUCCESS)
        dlpy_raise(h, status, func);
    else
        returned = dlpy_compact_result(&place, &count, &values, encode ? &lengths : NULL);
done:
    dlpy_restore_device(previous_device);
    dlpy_array_release(&in);
    dlpy_array_release(&values);
    dlpy_array_release(&lengths);
    dlpy_array_release(&count.device);
    return returned;
}

PyObject *dlpy_unique(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return dlpy_runs(args, kwargs, 0, "unique", "O|$OO:unique");
}

PyObject *dlpy_run_length_encode(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return dlpy_runs(args, kwargs, 1, "run_length_encode", "O|$OO:run_length_encode");
}

PyObject *dlpy_reduce_by_key(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *keywords[] = {"keys", "values", "op", "out", "deterministic", "stream", NULL};
    PyObject *keys_object, *values_object, *out = Py_None, *stream = Py_None;
    const char *op_name = "sum";
    int deterministic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$sOpO:reduce_by_key", keywords,
                                     &keys_object, &values_object, &op_name, &out, &deterministic,
                                     &stream))
        return NULL;
    const char *func = "reduce_by_key";
    dlscan_op op;
    if (strcmp(op_name, "sum") == 0) {
        op = DLSCAN_SUM;
    } else if (strcmp(op_name, "min") == 0) {
        op = DLSCAN_MIN;
    } else if (strcmp(op_name, "max") == 0) {
        op = DLSCAN_MAX;
    } else {
        PyErr_Format(PyExc_ValueError, "dlscan.reduce_by_key: op='%s' is not 'sum', 'min' or 'max'",
                     op_name);
        return NULL;
    }
    PyObject *keys_out, *values_out;
    if (dlpy_split_out(out == Py_None ? NULL : out, &keys_out, &values_out, func) < 0)
        return NULL;

    dlpy_place place = {.device = DLPY_HOST, .stream = stream == Py_None ? NULL : stream};
    dlpy_array keys = DLPY_ARRAY_EMPTY, values = DLPY_ARRAY_EMPTY, unique_keys = DLPY_ARRAY_EMPTY,
               reduced = DLPY_ARRAY_EMPTY;
    dlpy_count count = {0, DLPY_ARRAY_EMPTY, NULL};
    PyObject *returned = NULL;
    int previous_device = -1;
    if (dlpy_array_take(&keys, keys_object, func, "keys", &place, 1, 0) < 0)
        return NULL;
    if (dlpy_compact_kind(&keys, func, "keys") < 0 ||
        dlpy_array_take(&values, values_object, func, "values", &place, 0, 0) < 0 ||
        dlpy_compact_kind(&values, func, "values") < 0)
        goto done;
    if (values.n != keys.n) {
        PyErr_Format(PyExc_ValueError, "dlscan.reduce_by_key: values has %zu items and keys %zu",
                     values.n, keys.n);
        goto done;
    }
    if (dlpy_output(&unique_keys, keys_out, keys_object, keys.n, keys.kind, func, "out[0]",
                    &place) < 0 ||
        dlpy_output(&reduced, values_out, values_object, keys.n, values.kind, func, "out[1]",
                    &place) < 0 ||
        dlpy_count_init(&count, keys_object, func, &place) < 0)
        goto done;

    dlscan_handle_t h = dlpy_handle(&place, func, &previous_device);
    if (!h || dlpy_set_deterministic(h, deterministic, func) < 0)
        goto done;
    dlscan_status status;
    Py_BEGIN_ALLOW_THREADS
    status = dlscan_reduce_by_key(h, keys.data, values.data, unique_keys.data, reduced.data,
                                  count.p, keys.n, dlpy_type(keys.kind), dlpy_type(values.kind),
                                  op, (cudaStream_t)place.handle);
    Py_END_ALLOW_THREADS
    if (status != DLSCAN_SUCCESS)
        dlpy_raise(h, status, func);
    else
        returned = dlpy_compact_result(&place, &count, &unique_keys, &reduced);
done:
    dlpy_restore_device(previous_device);
    dlpy_array_release(&keys);
    dlpy_array_release(&values);
    dlpy_array_release(&unique_keys);
    dlpy_array_release(&reduced);
    dlpy_array_release(&count.device);
    return returned;
}
