"""_operator.py: scans with an associative operator of your own (dlscan.h, "Your own operator"):
dlscan.Operator describes one (CUDA C source for CUDA arrays, C functions or Python callables
for NumPy arrays, and NumPy dtypes for its state and items), and dlscan.scan runs it over an
array, or over a tuple of two arrays whose items the operator's load takes together. The items'
bytes are the operator's: the extension module's _scan_with gets them worked out here."""

import ctypes
import math

from . import _dlscan

_LOAD, _STORE = 1, 2  # DLSCAN_OPERATOR_LOAD, DLSCAN_OPERATOR_STORE
_FUNCTION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_STORE_FUNCTION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class Operator:
    """An associative operator on a state of 4 to 32 bytes (a multiple of 4), for dlscan.scan.

    source: CUDA C, as dlscan.h's "Your own operator" has it (dlscan_state, dlscan_combine, and
    dlscan_load and dlscan_store where item= and out= are given): what scans of CUDA arrays
    run, compiled at run time for each GPU it meets (NVRTC) and cached. state: a NumPy dtype of
    the state's bytes (structured, numpy.dtype([("a", "f4"), ("b", "f4")]), or plain);
    identity: its value (a tuple for a structured state). item, item2: the dtypes of the items
    of x and of a second array, where the operator loads items into states (else an item is a
    state); out: the outputs' dtype, where it stores states as outputs (else an output is a
    state).

    combine, load, store: what scans of NumPy arrays run (a CPU handle), each a C function
    (a ctypes function, or its address as an int) of dlscan.h's description, or a Python
    callable: combine(earlier, later) -> state, load(item) or load(item, item2) -> state,
    store(state) -> output, each value a NumPy scalar of its dtype (a tuple or numpy.void for
    a structured one). A Python callable costs microseconds a call: fine for tests and small
    arrays; C functions run at a loop's pace. An exception in one is raised by the scan.
    """

    def __init__(self, source=None, *, state, identity, item=None, item2=None, out=None, combine=None,
                 load=None, store=None):
        import numpy
        self.state = numpy.dtype(state)
        self.item = None if item is None else numpy.dtype(item)
        self.item2 = None if item2 is None else numpy.dtype(item2)
        self.out = None if out is None else numpy.dtype(out)
        if self.item2 is not None and self.item is None:
            raise ValueError("dlscan.Operator: item2= needs item= (the load that takes both)")
        if source is not None and not isinstance(source, str):
            raise TypeError("dlscan.Operator: source must be a str of CUDA C")
        self.source = source
        self._error = None
        self._functions = []  # the ctypes functions made here, alive as long as the operator
        flags = (_LOAD if self.item is not None else 0) | (_STORE if self.out is not None else 0)
        addresses = [self._address("combine", combine), self._address("load", load),
                     self._address("store", store)]
        identity = numpy.asarray(identity if not isinstance(identity, list) else tuple(identity), self.state)
        self._desc = (source, self.state.itemsize, identity.tobytes(), flags,
                      (self.item or self.state).itemsize, 0 if self.item2 is None else self.item2.itemsize,
                      (self.out or self.state).itemsize, *addresses)

    def __repr__(self):
        return (f"dlscan.Operator(state={self.state}, item={self.item}, item2={self.item2}, out={self.out}, "
                f"source={'given' if self.source else None})")

    def _address(self, role, function):
        """The address of a C function for role, wrapping a Python callable; 0 for None."""
        if function is None:
            return 0
        if isinstance(function, int):
            return function
        if isinstance(function, ctypes._CFuncPtr):
            return ctypes.cast(function, ctypes.c_void_p).value or 0
        if not callable(function):
            raise TypeError(f"dlscan.Operator: {role} must be a C function (ctypes, or its address) or a callable")
        import numpy
        state, item, item2, out = self.state, self.item or self.state, self.item2, self.out or self.state

        def read(address, dtype):
            return numpy.frombuffer((ctypes.c_char * dtype.itemsize).from_address(address), dtype).copy()[0]

        def write(address, value, dtype):
            data = numpy.asarray(value, dtype).tobytes()
            ctypes.memmove(address, data, len(data))

        def guarded(body):
            def call(*pointers):
                if self._error is not None:
                    return
                try:
                    body(*pointers)
                except BaseException as error:  # raised by dlscan.scan once the call returns
                    self._error = error
            return call

        if role == "combine":
            wrapped = _FUNCTION(guarded(lambda r, a, b: write(r, function(read(a, state), read(b, state)), state)))
        elif role == "load":
            wrapped = _FUNCTION(guarded(lambda s, x, y: write(
                s, function(read(x, item)) if item2 is None else function(read(x, item), read(y, item2)), state)))
        else:
            wrapped = _STORE_FUNCTION(guarded(lambda o, s: write(o, function(read(s, state)), out)))
        self._functions.append(wrapped)
        return ctypes.cast(wrapped, ctypes.c_void_p).value


def _item_shape(array, item_bytes, name):
    """The shape of array's items of item_bytes: its own shape where its elements are items, or
    all but its last axis where that axis holds one item (a structured item's fields)."""
    itemsize = _itemsize(array)
    shape = tuple(array.shape)
    if itemsize == item_bytes:
        return shape
    if itemsize < item_bytes and shape and shape[-1] * itemsize == item_bytes:
        return shape[:-1]
    raise ValueError(f"dlscan.scan: {name}'s elements are {itemsize} bytes and its shape {shape}: the "
                     f"operator's items are {item_bytes} bytes (an element each, or a last axis of "
                     f"{item_bytes // itemsize if itemsize and item_bytes % itemsize == 0 else 'whole'} elements)")


def _itemsize(array):
    dtype = getattr(array, "dtype", None)
    size = getattr(dtype, "itemsize", None)
    if size is None and hasattr(array, "element_size"):  # torch
        size = array.element_size()
    if size is None:
        raise TypeError(f"dlscan.scan: {type(array).__name__} is not an array")
    return size


def _as_bytes(array, name):
    """A NumPy array of a structured dtype as its bytes (the buffer protocol does not carry
    one); anything else as it is."""
    dtype = getattr(array, "dtype", None)
    if getattr(dtype, "fields", None) is not None and type(array).__module__.partition(".")[0] == "numpy":
        import numpy
        if not array.flags.c_contiguous:
            raise ValueError(f"dlscan.scan: {name} is not C-contiguous; dlscan takes C-contiguous arrays (copy "
                             "it first, e.g. numpy.ascontiguousarray(x))")
        return array.reshape(-1).view(numpy.uint8)
    return array


def scan(x, op, *, initial=None, axis=None, offsets=None, keys=None, out=None, exclusive=False,
         deterministic=False, stream=None):
    """The inclusive (or exclusive) scan of x with the Operator op: out[t] is the store of
    initial combined with the load of every item up to t (before t where exclusive).

    x: an array of op's items (a structured NumPy dtype, or elements whose last axis holds an
    item), or a tuple (x, x2) of two arrays of one shape, item for item, where op loads two.
    NumPy arrays run on a CPU handle (op's C functions or callables), CUDA arrays (PyTorch,
    CuPy) on their GPU (op's source). initial: a state (default: the identity); axis: None (x
    flattened) or an axis of the items (each of its scans from initial); offsets: a segmented scan
    of x flattened, as cumsum's offsets= (int64 or uint64, each segment from initial, the items
    outside them not written); keys: a segmented scan of x flattened by runs of equal keys (an
    array of n keys of a real kind, where x lives, compared bit for bit; each run from initial);
    out: where to write (new otherwise: op's out dtype, or its
    state's, of x's items' shape; for CUDA arrays an output of a structured dtype needs out=,
    e.g. a tensor whose last axis holds an output).

    Returns out.
    """
    if not isinstance(op, Operator):
        raise TypeError(f"dlscan.scan: op must be a dlscan.Operator, not {type(op).__name__}")
    x2 = None
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError(f"dlscan.scan: x is a tuple of {len(x)} arrays; it takes one array or two")
        x, x2 = x
    if (x2 is None) != (op.item2 is None):
        raise ValueError("dlscan.scan: op loads two items (item2=): pass x=(x, x2)" if x2 is None else
                         "dlscan.scan: op loads one item: pass one array, not a tuple")
    in_bytes, out_dtype = op._desc[4], op.out or op.state
    shape = _item_shape(x, in_bytes, "x")
    if x2 is not None and _item_shape(x2, op._desc[5], "x[1]") != shape:
        raise ValueError(f"dlscan.scan: x[0] and x[1] must hold items of one shape, not {shape} and "
                         f"{_item_shape(x2, op._desc[5], 'x[1]')}")
    n = math.prod(shape)
    axis_length = axis_stride = 0
    if offsets is not None and keys is not None:
        raise ValueError("dlscan.scan: keys and offsets are both given: segments come from one or the other")
    if axis is not None and (offsets is not None or keys is not None):
        raise ValueError(f"dlscan.scan: axis with {'offsets' if keys is None else 'keys'}: a segmented scan runs "
                         "over x flattened (pass axis=None)")
    if axis is not None:
        ndim = max(len(shape), 1)
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"dlscan.scan: axis must be an int or None, not {type(axis).__name__}")
        if not -ndim <= axis < ndim:
            from . import _axis_error
            raise _axis_error(axis, ndim, "scan")
        if len(shape) > 1 and n:  # (one dimension: one scan)
            axis_length, axis_stride = shape[axis], math.prod(shape[axis % ndim + 1:])
    library = type(x).__module__.partition(".")[0]
    if library == "numpy" and not op._desc[7]:
        raise TypeError("dlscan.scan: NumPy arrays run on a CPU handle, which runs op's combine= (a C function or "
                        "a callable), and op has none: pass combine= (and load=, store=) to dlscan.Operator")
    if out is None:
        if library == "numpy":
            import numpy
            out = numpy.empty(shape, out_dtype)
        elif out_dtype.fields is None:
            from . import _empty
            out = _empty(x, shape, out_dtype.name)
        else:
            raise TypeError(f"dlscan.scan: the outputs are of the structured {out_dtype}, which "
                            f"{type(x).__name__} cannot hold: pass out=, an array whose last axis holds an output")
    elif _item_shape(out, out_dtype.itemsize, "out") != shape:
        raise ValueError(f"dlscan.scan: out must hold outputs of the items' shape {shape}")
    if initial is not None:
        import numpy
        initial = numpy.asarray(initial if not isinstance(initial, list) else tuple(initial), op.state).tobytes()
    op._error = None
    _dlscan._scan_with(op, _as_bytes(x, "x"), None if x2 is None else _as_bytes(x2, "x[1]"), _as_bytes(out, "out"),
                       n, axis_length, axis_stride, offsets, keys, exclusive, initial, deterministic, stream, "scan")
    if op._error is not None:
        error, op._error = op._error, None
        raise error
    return out
