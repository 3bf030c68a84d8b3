"""reference.py: what the tests check dlscan against, written with NumPy alone (no dlscan
code): scans with an initial value and exclusive scans, scans along an axis, segmented scans, the
compaction calls, and bfloat16 rounding; plus random data and DLPack wrappers for the tests."""

import ctypes

import numpy as np

# The element types NumPy has, in dlscan's order, and bool.
INTEGERS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
TYPES = ["bool"] + INTEGERS + FLOATS
COMPACT_TYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
OPS = ["sum", "min", "max"]

# Sizes around the CPU backend's tile (65536 items) and several tiles.
SIZES = [0, 1, 2, 1000, 65535, 65536, 65537, 3 * 65536 + 7]


def random_array(rng, dtype, n):
    """n items of dtype: integers over their whole range (sums wrap); floats integer-valued and
    small, so that every sum of them is exact in the accumulator (float32 for float16); bools
    both ways."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return rng.integers(-50, 51, n).astype(dtype)


def identity(op, dtype):
    dtype = np.dtype(dtype)
    if op == "sum":
        return dtype.type(0)
    if dtype == np.bool_:
        return np.bool_(op == "min")
    if dtype.kind == "f":
        return dtype.type(np.inf if op == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if op == "min" else info.min)


def accumulator(dtype):
    """The type the reference accumulates a scan into dtype in: float16 sums add in float32 and
    round each output, as dlscan documents; integers wrap the same in any width."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def scan(x, op, out_dtype, exclusive=False, initial=None):
    """The running sum, min or max of x in out_dtype, with initial folded in first."""
    acc = accumulator(out_dtype)
    y = x.astype(out_dtype).astype(acc)
    start = identity(op, out_dtype) if initial is None else np.array(initial, out_dtype)
    seq = np.concatenate([np.array([start], out_dtype).astype(acc), y])
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
    with np.errstate(over="ignore"):
        running = ufunc.accumulate(seq, dtype=acc) if op == "sum" else ufunc.accumulate(seq)
    result = running[:-1] if exclusive else running[1:]
    return result.astype(out_dtype)


def axis_scan(x, op, out_dtype, axis, exclusive=False, initial=None):
    """scan() along dimension axis of x, every scan starting from initial: an array of x's shape
    (of shape (1,) for a 0-d x, as numpy.cumsum gives)."""
    x = np.asarray(x).reshape(np.shape(x) or (1,))
    acc = accumulator(out_dtype)
    y = np.moveaxis(x.astype(out_dtype).astype(acc), axis, -1)
    start = identity(op, out_dtype) if initial is None else np.array(initial, out_dtype)
    first = np.full(y.shape[:-1] + (1,), start, out_dtype).astype(acc)
    seq = np.concatenate([first, y], axis=-1)
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
    with np.errstate(over="ignore"):
        running = (ufunc.accumulate(seq, axis=-1, dtype=acc) if op == "sum"
                   else ufunc.accumulate(seq, axis=-1))
    result = running[..., :-1] if exclusive else running[..., 1:]
    return np.moveaxis(result.astype(out_dtype), -1, axis)


def runs(x):
    """The index where each run of equal items (compared as bits) starts."""
    bits = x.view(f"u{x.dtype.itemsize}")
    if len(x) == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.concatenate([[True], bits[1:] != bits[:-1]]))


def segmented_scan(x, op, out_dtype, bounds, exclusive=False, initial=None, out=None):
    """scan() over each segment [s, e) of bounds, written into out (a copy of out, or zeros);
    items outside every segment keep out's values."""
    result = np.zeros(len(x), out_dtype) if out is None else out.copy()
    for s, e in bounds:
        result[s:e] = scan(x[s:e], op, out_dtype, exclusive, initial)
    return result


def key_segments(keys):
    """The segments of runs of equal keys (compared as bits), as (start, end) pairs."""
    starts = list(runs(keys)) + [len(keys)]
    return list(zip(starts[:-1], starts[1:]))


def reduce_by_key(keys, values, op):
    starts = runs(keys)
    if len(starts) == 0:
        return keys[:0], values[:0]
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
    return keys[starts], ufunc.reduceat(values, starts, dtype=values.dtype)


def bfloat16_to_float32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def float32_to_bfloat16(x):
    """Round to nearest even, as bits (no NaNs here)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


class DLPackOnly:
    """An array reachable through __dlpack__ alone (no buffer protocol), as a PyTorch CPU tensor
    is: it exercises dlscan's DLPack door on the CPU. versioned=False offers only the older
    capsule; bfloat16=True relabels uint16 items as bfloat16 in the capsule."""

    def __init__(self, array, versioned=True, bfloat16=False):
        self.array = array
        self.versioned = versioned
        self.bfloat16 = bfloat16

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if not self.versioned and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        capsule = self.array.__dlpack__(stream=stream, max_version=max_version)
        if self.bfloat16:
            _relabel_bfloat16(capsule)
        return capsule


def _relabel_bfloat16(capsule):
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = get_name(capsule)
    managed = get_pointer(capsule, name)
    # DLTensor: data (8 bytes), device (8), ndim (4), then dtype {code, bits, lanes}. The
    # versioned struct puts version, manager_ctx, deleter and flags (32 bytes) before it.
    dtype = managed + (32 if name == b"dltensor_versioned" else 0) + 20
    assert ctypes.c_uint8.from_address(dtype).value == 1  # uint
    ctypes.c_uint8.from_address(dtype).value = 4  # kDLBfloat
