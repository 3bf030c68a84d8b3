"""test_scan.py: dlscan.cumsum, cummin and cummax on NumPy arrays (the CPU backend) against
NumPy: every type and operator, inclusive and exclusive, sizes around the CPU tile, every
type pair, initial values (numbers and one-item arrays), totals and chaining, in place, the
DLPack door (bfloat16 included), segmented scans by keys and by offsets, and scans along an
axis of N-D arrays (axis=) against numpy.cumsum and numpy.minimum / maximum.accumulate."""

import array
import concurrent.futures

import numpy as np
import pytest

import dlscan
from reference import (FLOATS, INTEGERS, OPS, SIZES, TYPES, DLPackOnly, axis_scan,
                       bfloat16_to_float32, float32_to_bfloat16, key_segments, random_array, scan,
                       segmented_scan)

FUNCTIONS = {"sum": dlscan.cumsum, "min": dlscan.cummin, "max": dlscan.cummax}


def numpy_result_type(dtype, op):
    """numpy.cumsum's type for dtype (the platform integer for narrower integers and bool);
    min and max keep the type."""
    if op != "sum":
        return np.dtype(dtype)
    return np.cumsum(np.zeros(1, dtype)).dtype


@pytest.fixture
def rng():
    return np.random.default_rng()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_every_type_and_operator(rng, op, dtype, n, exclusive):
    x = random_array(rng, dtype, n)
    result = FUNCTIONS[op](x, exclusive=exclusive)
    out_dtype = numpy_result_type(dtype, op)
    assert isinstance(result, np.ndarray) and result.dtype == out_dtype and result.shape == (n,)
    np.testing.assert_array_equal(result, scan(x, op, out_dtype, exclusive))


@pytest.mark.parametrize("dtype", INTEGERS + FLOATS)
@pytest.mark.parametrize("op", OPS)
def test_into_itself_as_numpy_does(rng, op, dtype):
    """With dtype= the input's type, 8- and 16-bit sums wrap as NumPy's do."""
    x = random_array(rng, dtype, 100_000)
    result = FUNCTIONS[op](x, dtype=dtype)
    assert result.dtype == np.dtype(dtype)
    if op == "sum" and dtype != "float16":  # NumPy adds float16 in float16
        with np.errstate(over="ignore"):
            expected = np.cumsum(x, dtype=dtype)
    elif op == "sum":
        expected = np.cumsum(x.astype(np.float32)).astype(np.float16)
    else:
        expected = (np.minimum if op == "min" else np.maximum).accumulate(x)
    np.testing.assert_array_equal(result, expected)


def type_pairs():
    """The pairs dlscan.h lists, besides every type into itself."""
    pairs = []
    for source in INTEGERS:
        size = np.dtype(source).itemsize
        for target in ["int32", "uint32", "int64", "uint64"]:
            if np.dtype(target).itemsize >= size and target != source:
                pairs.append((source, target))
    return pairs + [("float16", "float32"), ("float32", "float64"), ("int32", "float64")]


@pytest.mark.parametrize("source,target", type_pairs())
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_type_pairs(rng, source, target, op, exclusive):
    x = random_array(rng, source, 70_001)
    if target == "float64" and source == "int32":
        x = rng.integers(-(2**20), 2**20, 70_001).astype(np.int32)  # exact float64 sums
    result = FUNCTIONS[op](x, dtype=target, exclusive=exclusive)
    assert result.dtype == np.dtype(target)
    np.testing.assert_array_equal(result, scan(x, op, target, exclusive))


def test_dtype_spellings(rng):
    x = random_array(rng, "int16", 1000)
    expected = scan(x, "sum", "int32")
    for dtype in ["int32", "i4", np.int32, np.dtype("int32"), np.dtype("<i4")]:
        np.testing.assert_array_equal(dlscan.cumsum(x, dtype=dtype), expected)
    assert dlscan.cumsum(np.ones(3, np.float32), dtype=float).dtype == np.float64


def test_out_sets_the_type(rng):
    x = random_array(rng, "int8", 5000)
    out = np.empty(5000, np.int32)
    assert dlscan.cumsum(x, out=out) is out
    np.testing.assert_array_equal(out, scan(x, "sum", "int32"))


@pytest.mark.parametrize("dtype", INTEGERS + FLOATS)
@pytest.mark.parametrize("op", OPS)
def test_in_place(rng, op, dtype):
    x = random_array(rng, dtype, 150_000)
    expected = scan(x, op, dtype)
    assert FUNCTIONS[op](x, out=x) is x
    np.testing.assert_array_equal(x, expected)


@pytest.mark.parametrize("dtype", INTEGERS + FLOATS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_initial(rng, op, dtype, exclusive):
    x = random_array(rng, dtype, 70_000)
    initial = 7 if np.dtype(dtype).kind != "f" else -2.5
    result = FUNCTIONS[op](x, dtype=dtype, exclusive=exclusive, initial=initial)
    np.testing.assert_array_equal(result, scan(x, op, dtype, exclusive, initial))
    # the same value from a one-item array, read when the scan runs
    result = FUNCTIONS[op](x, dtype=dtype, exclusive=exclusive,
                           initial=np.array([initial], dtype))
    np.testing.assert_array_equal(result, scan(x, op, dtype, exclusive, initial))


def test_initial_extremes():
    x = np.zeros(3, np.uint64)
    np.testing.assert_array_equal(dlscan.cumsum(x, initial=2**64 - 1), [2**64 - 1] * 3)
    x = np.zeros(2, np.int8)
    np.testing.assert_array_equal(dlscan.cummin(x, initial=-128), [-128, -128])
    # float16: the initial value rounds to nearest even (2049 -> 2048, 2051 -> 2052)
    x = np.zeros(1, np.float16)
    assert dlscan.cumsum(x, exclusive=True, initial=2049.0)[0] == 2048
    assert dlscan.cumsum(x, exclusive=True, initial=2051.0)[0] == 2052
    assert dlscan.cumsum(x, exclusive=True, initial=1e6)[0] == np.inf
    assert dlscan.cumsum(x, exclusive=True, initial=np.float64(2.0**-24 * 1.5))[0] == \
        np.float16(2.0**-24 * 1.5)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("n", [0, 1, 100_000])
def test_total(rng, exclusive, n):
    x = random_array(rng, "int32", n)
    total = np.full(1, -1, np.int64)
    dlscan.cumsum(x, exclusive=exclusive, initial=5, total=total)
    assert total[0] == 5 + x.astype(np.int64).sum()


def test_chained_over_chunks(rng):
    """The running total carried from chunk to chunk in one array: initial and total alike."""
    x = random_array(rng, "float32", 300_000)
    carry = np.zeros(1, np.float64)
    out = np.empty(len(x), np.float64)
    for start in range(0, len(x), 70_000):
        chunk = slice(start, start + 70_000)
        dlscan.cumsum(x[chunk], out=out[chunk], initial=carry, total=carry)
    np.testing.assert_array_equal(out, np.cumsum(x, dtype=np.float64))
    assert carry[0] == out[-1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_float_sums(rng, dtype):
    """Float sums of real values: within rounding of a float64 sum (dlscan.h's bound)."""
    x = rng.standard_normal(300_001).astype(dtype)
    result = dlscan.cumsum(x, deterministic=True)
    exact = np.cumsum(x.astype(np.float64))
    eps = np.finfo(dtype).eps
    bound = (2 * 17 + 16 + len(x) / 65536 + 8) * eps * np.cumsum(np.abs(x.astype(np.float64)))
    assert np.all(np.abs(result - exact) <= bound)
    np.testing.assert_array_equal(dlscan.cumsum(x), result)  # CPU sums are deterministic


def test_bool():
    x = np.array([True, False, True, True])
    np.testing.assert_array_equal(dlscan.cumsum(x), [1, 1, 2, 3])
    assert dlscan.cumsum(x).dtype == np.int64
    np.testing.assert_array_equal(dlscan.cummin(x), [True, False, False, False])
    assert dlscan.cummax(x).dtype == np.bool_


def test_plain_buffers():
    """Objects with the buffer protocol other than NumPy's get memoryviews back."""
    result = dlscan.cumsum(array.array("i", [1, 2, 3]), dtype="int32")
    assert isinstance(result, memoryview) and list(result) == [1, 3, 6]
    assert list(dlscan.cummax(memoryview(b"\x01\x05\x02"))) == [1, 5, 5]


@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack(rng, versioned):
    """Arrays reached through __dlpack__ alone run on the CPU backend (PyTorch CPU tensors)."""
    x = random_array(rng, "int64", 100_000)
    out = np.empty_like(x)
    dlscan.cumsum(DLPackOnly(x, versioned), out=DLPackOnly(out, versioned))
    np.testing.assert_array_equal(out, np.cumsum(x))


def test_bfloat16(rng):
    values = rng.integers(-50, 51, 100_000).astype(np.float32)
    bits = float32_to_bfloat16(values)  # exact: small integers
    x = DLPackOnly(bits, bfloat16=True)
    out = np.empty(len(bits), np.float32)
    dlscan.cumsum(x, out=out)
    np.testing.assert_array_equal(out, np.cumsum(values))
    into_itself = np.empty(len(bits), np.uint16)
    dlscan.cumsum(x, out=DLPackOnly(into_itself, bfloat16=True), initial=1.5)
    np.testing.assert_array_equal(into_itself, float32_to_bfloat16(1.5 + np.cumsum(values)))
    dlscan.cummax(x, out=DLPackOnly(into_itself, bfloat16=True))
    np.testing.assert_array_equal(bfloat16_to_float32(into_itself), np.maximum.accumulate(values))


def test_threads(rng):
    """Calls from several threads at once, each on its own handle."""
    inputs = [random_array(rng, "int32", 200_000) for _ in range(8)]

    def run(x):
        return dlscan.cumsum(x, dtype="int32")

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, inputs * 3))
    for x, result in zip(inputs * 3, results):
        np.testing.assert_array_equal(result, np.cumsum(x, dtype=np.int32))


def test_reserve():
    assert dlscan.reserve(np.zeros(1 << 20, np.float32), dtype="float64") is None


def test_reserve_along_an_axis():
    """reserve(axis=) sizes the scans along that axis, as cumsum takes them, and refuses what
    cumsum would refuse."""
    x = np.zeros((1000, 7, 3), np.int32)
    for axis in (0, 1, 2, -1, -3):
        assert dlscan.reserve(x, axis=axis) is None
        assert dlscan.reserve(x, axis=axis, dtype="int64") is None
    assert dlscan.reserve(np.zeros((0, 5), np.float32), axis=0) is None
    assert dlscan.reserve(np.array(2.0), axis=0) is None
    with pytest.raises(np.exceptions.AxisError, match="out of bounds for array of dimension 3"):
        dlscan.reserve(x, axis=3)
    with pytest.raises(TypeError):
        dlscan.reserve(x, axis=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_min_and_max_propagate_nan(rng, dtype):
    """NaN propagates as in numpy.minimum.accumulate and torch.cummax: PyTorch's own case,
    cummax([nan, 1.0]), and NaNs at random places over many tiles."""
    cases = [np.array([4, np.inf, 1.5, -np.inf, 0, np.nan, 1], dtype), np.array([np.nan, 1.0], dtype)]
    x = rng.integers(-100, 100, 100003).astype(dtype)
    x[rng.integers(len(x) // 2, len(x), 3)] = np.nan
    cases.append(x)
    for x in cases:
        for function, ufunc in ((dlscan.cummin, np.minimum), (dlscan.cummax, np.maximum)):
            np.testing.assert_array_equal(function(x), ufunc.accumulate(x))


@pytest.mark.parametrize("n", [0, 1, 1000, 65537, 3 * 65536 + 7])
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint64", "float32", "float64"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_segmented_by_keys(rng, op, dtype, n, exclusive):
    """keys=: the scan starts over at every run of equal keys, initial starting each run."""
    x = random_array(rng, dtype, n)
    keys = np.repeat(rng.integers(0, 5, n), rng.integers(1, 40, n))[:n].astype(np.int16)
    out_dtype = numpy_result_type(dtype, op)
    initial = 3 if op == "sum" else None
    result = FUNCTIONS[op](x, keys=keys, exclusive=exclusive, initial=initial)
    assert result.dtype == out_dtype
    np.testing.assert_array_equal(
        result, segmented_scan(x, op, out_dtype, key_segments(keys), exclusive, initial))


def test_segmented_keys_compare_bits(rng):
    """Float keys are compared as bits: -0.0 and 0.0 start different segments."""
    x = np.ones(6, np.int32)
    keys = np.array([0.0, 0.0, -0.0, -0.0, 1.0, 1.0], np.float32)
    np.testing.assert_array_equal(dlscan.cumsum(x, keys=keys, dtype="int32"), [1, 2, 1, 2, 1, 2])


@pytest.mark.parametrize("dtype", ["int32", "float64"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("offset_dtype", ["int64", "uint64"])
def test_segmented_by_offsets(rng, op, dtype, offset_dtype):
    """offsets=: segment k is x[offsets[k]:offsets[k+1]], empty segments included; items before
    the first offset and from the last on keep what out held."""
    n = 200_003
    x = random_array(rng, dtype, n)
    inner = np.sort(rng.integers(10, n - 10, 500))
    offsets = np.concatenate([[7], inner, inner[:3], [n - 5]]).astype(offset_dtype)
    offsets.sort()
    out_dtype = numpy_result_type(dtype, op)
    out = np.full(n, 42, out_dtype)
    bounds = list(zip(offsets[:-1].tolist(), offsets[1:].tolist()))
    for exclusive in (False, True):
        result = FUNCTIONS[op](x, offsets=offsets, out=out.copy(), exclusive=exclusive)
        np.testing.assert_array_equal(result, segmented_scan(x, op, out_dtype, bounds, exclusive, out=out))
    # one segment over everything is the plain scan
    whole = np.array([0, n], offset_dtype)
    np.testing.assert_array_equal(FUNCTIONS[op](x, offsets=whole), scan(x, op, out_dtype))


def test_segmented_errors():
    x = np.arange(10, dtype=np.int32)
    with pytest.raises(ValueError, match="keys has 9 items and x 10"):
        dlscan.cumsum(x, keys=np.zeros(9, np.int32))
    with pytest.raises(ValueError, match="keys and offsets are both given"):
        dlscan.cumsum(x, keys=np.zeros(10, np.int32), offsets=np.array([0, 10]))
    with pytest.raises(TypeError, match="offsets must be int64 or uint64, not int32"):
        dlscan.cumsum(x, offsets=np.array([0, 10], np.int32))
    with pytest.raises(ValueError, match="offsets is empty"):
        dlscan.cumsum(x, offsets=np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="initial as an array with keys"):
        dlscan.cumsum(x, keys=np.zeros(10, np.int32), initial=np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="total with offsets"):
        dlscan.cumsum(x, offsets=np.array([0, 10]), total=np.zeros(1, np.int64))
    with pytest.raises(dlscan.ArgumentError, match="must rise"):
        dlscan.cumsum(x, offsets=np.array([0, 8, 4, 10]))


# ---------------------------------------------------------------- along an axis (axis=)

# Shapes with extents of 1 and 0, 0-d, and some past the CPU's tile (65536 items) along the
# axis and across it.
AXIS_SHAPES = [(), (7,), (0,), (1,), (3, 5), (1, 4), (4, 1), (0, 3), (3, 0), (2, 3, 4), (3, 1, 5),
               (2, 0, 3), (1, 1, 1), (3, 70_001), (70_001, 3), (2, 33_000, 3)]
# Every axis of each, negative ones too (a 0-d array has one, as numpy.cumsum counts).
SHAPE_AXES = [(shape, axis) for shape in AXIS_SHAPES
              for axis in range(-max(len(shape), 1), max(len(shape), 1))]
AXIS_TYPES = ["int8", "int32", "int64", "float32", "float64"]
NUMPY_SCANS = {"sum": np.cumsum, "min": np.minimum.accumulate, "max": np.maximum.accumulate}


def random_shaped(rng, dtype, shape):
    return random_array(rng, dtype, int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("shape,axis", SHAPE_AXES, ids=str)
@pytest.mark.parametrize("dtype", AXIS_TYPES)
@pytest.mark.parametrize("op", OPS)
def test_along_an_axis(rng, op, dtype, shape, axis):
    """Against NumPy's own scan along the axis: the same values, shape and type (cumsum widens
    int8 and int32 to int64 as numpy.cumsum does)."""
    x = random_shaped(rng, dtype, shape)
    result = FUNCTIONS[op](x, axis=axis)
    # (numpy.minimum.accumulate takes no 0-d array: it is one item, as numpy.cumsum says)
    expected = NUMPY_SCANS[op](x.reshape(shape or (1,)), axis=axis)
    assert isinstance(result, np.ndarray)
    assert result.shape == expected.shape and result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("shape,axis", SHAPE_AXES, ids=str)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_along_an_axis_exclusive_and_initial(rng, op, shape, axis, exclusive):
    """Every scan along the axis starts from initial (a number), inclusive and exclusive."""
    for dtype, out_dtype in [("int16", "int32"), ("float64", "float64")]:
        x = random_shaped(rng, dtype, shape)
        for initial in (None, 3):
            result = FUNCTIONS[op](x, axis=axis, dtype=out_dtype, exclusive=exclusive,
                                   initial=initial)
            assert result.dtype == np.dtype(out_dtype)
            np.testing.assert_array_equal(
                result, axis_scan(x, op, out_dtype, axis, exclusive, initial))


@pytest.mark.parametrize("shape", [(), (4, 5), (2, 3, 4), (0, 3)], ids=str)
def test_axis_none_flattens(rng, shape):
    """axis=None (the default) scans x flattened into a 1-D output, as numpy.cumsum does; a
    0-d array is one item."""
    x = random_shaped(rng, "int32", shape)
    for result in (dlscan.cumsum(x), dlscan.cumsum(x, axis=None)):
        assert result.shape == (x.size,) and result.dtype == np.int64
        np.testing.assert_array_equal(result, np.cumsum(x))
    np.testing.assert_array_equal(dlscan.cummax(x, exclusive=True, initial=0),
                                  scan(x.reshape(-1), "max", "int32", True, 0))
    out = np.empty(x.size, np.int64)
    assert dlscan.cumsum(x, out=out) is out
    np.testing.assert_array_equal(out, np.cumsum(x))


def test_axis_out_and_in_place(rng):
    x = random_shaped(rng, "int64", (30, 40, 50))
    for axis in (0, 1, 2, -1):
        out = np.empty_like(x)
        assert dlscan.cummin(x, axis=axis, out=out) is out
        np.testing.assert_array_equal(out, np.minimum.accumulate(x, axis=axis))
        wider = np.empty(x.shape, np.float64)
        dlscan.cumsum(x.astype(np.int32), axis=axis, out=wider)  # out= sets the type
        np.testing.assert_array_equal(wider, np.cumsum(x.astype(np.int32), axis=axis, dtype=np.float64))
    y = x.copy()
    assert dlscan.cumsum(y, axis=1, out=y) is y
    np.testing.assert_array_equal(y, np.cumsum(x, axis=1))
    # A 0-d x along axis 0: one item, as for NumPy.
    np.testing.assert_array_equal(dlscan.cumsum(np.array(5, np.int8), axis=0), [5])
    assert dlscan.cumsum(np.array(5, np.int8), axis=-1).shape == (1,)


def test_axis_through_other_doors(rng):
    """N-D arrays through DLPack (PyTorch's CPU tensors) and through memoryviews."""
    x = random_shaped(rng, "int32", (6, 7, 8))
    out = np.empty(x.shape, np.int64)
    dlscan.cumsum(DLPackOnly(x), axis=1, out=DLPackOnly(out))
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1))
    result = dlscan.cummax(memoryview(x), axis=0)
    assert isinstance(result, memoryview) and result.shape == (6, 7, 8)
    np.testing.assert_array_equal(np.asarray(result), np.maximum.accumulate(x, axis=0))
    assert dlscan.reserve(x) is None


def test_axis_errors():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    for axis in (3, -4, 2**70):
        with pytest.raises(np.exceptions.AxisError, match="out of bounds for array of dimension 3"):
            dlscan.cumsum(x, axis=axis)
    with pytest.raises(IndexError):  # as numpy.cumsum's AxisError is
        dlscan.cummax(np.array(5), axis=1)
    with pytest.raises(TypeError):
        dlscan.cumsum(x, axis=1.0)
    with pytest.raises(TypeError):
        dlscan.cumsum(x, axis=True)
    with pytest.raises(TypeError):
        dlscan.cumsum(x, axis=(0, 1))
    with pytest.raises(ValueError, match="axis with keys"):
        dlscan.cumsum(x, axis=0, keys=np.zeros(24, np.int32))
    with pytest.raises(ValueError, match="axis with offsets"):
        dlscan.cumsum(x, axis=0, offsets=np.array([0, 24]))
    with pytest.raises(ValueError, match="total with axis"):
        dlscan.cumsum(x, axis=0, total=np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="initial as an array with axis"):
        dlscan.cumsum(x, axis=0, initial=np.zeros(1, np.int64))
    with pytest.raises(ValueError, match=r"out has shape \(24,\); a scan along an axis writes "
                                         r"x's shape, \(2, 3, 4\)"):
        dlscan.cumsum(x, axis=0, out=np.zeros(24, np.int64))
    with pytest.raises(ValueError, match=r"out has shape \(2, 3, 4\); with axis=None"):
        dlscan.cumsum(x, out=np.zeros((2, 3, 4), np.int64))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_axis_not_c_contiguous(axis):
    """Arrays whose items are not in C order are refused, saying how to copy them; those that
    are, whatever the strides of their extents of 1, are taken."""
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    fix = r"numpy.ascontiguousarray\(x\) or x.contiguous\(\)"
    for bad in (x.transpose(), x[:, ::2], x[..., 1:], np.asfortranarray(x), x[::-1]):
        with pytest.raises(ValueError, match="x is not C-contiguous.*" + fix):
            dlscan.cumsum(bad, axis=axis)
        with pytest.raises(ValueError, match="not C-contiguous"):
            dlscan.cumsum(DLPackOnly(bad), axis=axis, out=DLPackOnly(np.empty(bad.shape, np.float32)))
    with pytest.raises(ValueError, match="out is not C-contiguous"):
        dlscan.cumsum(x, axis=axis if axis is not None else 0,
                      out=np.empty((5, 4, 3), np.float32).transpose())
    for good in (x[1:2], x[:1, 1:2, :], np.asfortranarray(x[:, :1, :1]), x[:0].transpose()):
        expected = np.cumsum(good, axis=axis)
        np.testing.assert_array_equal(dlscan.cumsum(good, axis=axis), expected)
