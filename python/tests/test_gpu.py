"""test_gpu.py: dlscan on CUDA arrays (the GPU backend), through PyTorch and CuPy: every type
and operator against a host reference and against torch.cumsum / cupy.cumsum, sizes at the
GPU's tile edges and past the persistent kernel's start, initial values and chained totals on
the device, non-default streams (the producer's current stream and stream=), a captured CUDA
graph replayed on fresh data, the compaction calls, deterministic float sums, both doors
(__dlpack__ and __cuda_array_interface__), segmented scans by keys and by offsets, scans along
the last axis (rows) of N-D tensors and arrays against torch.cumsum / cupy.cumsum, and bad
input. Skipped where dlscan has no GPU backend or no CUDA device and library is there."""

import numpy as np
import pytest

import dlscan
from reference import (COMPACT_TYPES, INTEGERS, OPS, TYPES, axis_scan, key_segments,
                       random_array, reduce_by_key, runs, scan, segmented_scan)

if not dlscan.has_gpu_backend():
    pytest.skip("dlscan was built without the GPU backend", allow_module_level=True)

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
try:
    import cupy
except ImportError:
    cupy = None
needs_cupy = pytest.mark.skipif(cupy is None, reason="CuPy is not installed")

FUNCTIONS = {"sum": dlscan.cumsum, "min": dlscan.cummin, "max": dlscan.cummax}

# Around the GPU's tiles (4096 and 8192 items for 32- and 64-bit items, fewer for narrow ones)
# and large enough for the persistent kernel.
GPU_SIZES = [0, 1, 2, 4095, 4096, 4097, 8193, 65537, 1_000_003, 6_000_011]


@pytest.fixture
def rng():
    return np.random.default_rng()


def on_gpu(array):
    """A NumPy array copied into a new CUDA tensor (bool and every integer and float type)."""
    return torch.from_numpy(np.ascontiguousarray(array)).cuda()


def host(tensor):
    return tensor.cpu().numpy()


def numpy_result_type(dtype, op):
    return np.dtype(dtype) if op != "sum" else np.cumsum(np.zeros(1, dtype)).dtype


# ---------------------------------------------------------------- scans, through PyTorch

@pytest.mark.parametrize("n", GPU_SIZES)
@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_every_type_and_operator(rng, op, dtype, n, exclusive):
    x_host = random_array(rng, dtype, n)
    x = on_gpu(x_host)
    result = FUNCTIONS[op](x, exclusive=exclusive)
    out_dtype = numpy_result_type(dtype, op)
    torch.cuda.synchronize()
    assert isinstance(result, torch.Tensor) and result.is_cuda and result.shape == (n,)
    assert result.device == x.device
    np.testing.assert_array_equal(host(result), scan(x_host, op, out_dtype, exclusive))


TORCH_TYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16,
               torch.bfloat16, torch.float32, torch.float64]


def torch_random(dtype, n):
    if dtype.is_floating_point:  # integer-valued: every sum is exact in float32
        return torch.randint(-50, 51, (n,), device="cuda").to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (n,), dtype=dtype, device="cuda")


@pytest.mark.parametrize("n", [1, 4097, 1_000_003, 6_000_011])
@pytest.mark.parametrize("dtype", TORCH_TYPES)
def test_against_torch(n, dtype):
    """cumsum into the input's type, and cummin / cummax, against torch.cumsum / cummin /
    cummax. 16-bit floats: dlscan adds in float32 and rounds each output, as torch does;
    against an exact sum rounded once, since the data's sums are integers below 2^24."""
    x = torch_random(dtype, n)
    got = dlscan.cumsum(x, dtype=dtype)
    if dtype in (torch.float16, torch.bfloat16):
        expected = torch.cumsum(x.double(), 0).to(dtype)
    else:
        expected = torch.cumsum(x, 0, dtype=dtype)
    assert got.dtype == dtype
    assert torch.equal(got, expected)
    if dtype not in (torch.float16, torch.bfloat16) or n > 1:
        assert torch.equal(dlscan.cummin(x), torch.cummin(x, 0).values)
        assert torch.equal(dlscan.cummax(x), torch.cummax(x, 0).values)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                                   torch.float16, torch.float32])
def test_torch_rules(dtype):
    """A tensor's cumsum follows PyTorch: dim= names the axis, and the default output type is
    torch.cumsum's (int64 for every integer type and bool; NumPy's gives uint64 for uint8)."""
    # (0 or 1 for bool and float16: float16's sums of up to 1000 stay exact integers)
    x = torch.randint(0, 2 if dtype in (torch.bool, torch.float16) else 100, (37, 1000), device="cuda").to(dtype)
    expected = torch.cumsum(x if dtype != torch.float16 else x.double(), dim=1)
    got = dlscan.cumsum(x, dim=1)
    assert got.dtype == torch.cumsum(x, dim=1).dtype
    assert torch.equal(got.double(), expected.double())
    assert torch.equal(dlscan.cumsum(x, dim=-1), got)
    if dtype != torch.bool:
        assert torch.equal(dlscan.cummax(x, dim=1), torch.cummax(x, dim=1).values)
    if dtype == torch.uint8:
        assert dlscan.cumsum(x.cpu().numpy(), axis=1).dtype == np.uint64
    with pytest.raises(TypeError, match="axis and dim"):
        dlscan.cumsum(x, axis=1, dim=1)


@pytest.mark.parametrize("source,target", [(torch.uint8, torch.int32), (torch.int8, torch.int64),
                                           (torch.int16, torch.int32), (torch.int32, torch.int64),
                                           (torch.float16, torch.float32),
                                           (torch.bfloat16, torch.float32),
                                           (torch.float32, torch.float64),
                                           (torch.int32, torch.float64)])
def test_wider_accumulator(source, target):
    x = torch_random(source, 3_000_017)
    got = dlscan.cumsum(x, dtype=target)
    assert got.dtype == target
    expected = torch.cumsum(x.to(torch.float64 if target.is_floating_point else torch.int64), 0)
    assert torch.equal(got, expected.to(target))


@pytest.mark.parametrize("n", [1, 4096, 4097, 2_000_003])
def test_initial_total_and_chaining(rng, n):
    """A host initial, a device initial, a device total, and chunks chained through one
    device value (initial is total), all without a trip to the host."""
    x_host = random_array(rng, "int64", n)
    x = on_gpu(x_host)
    got = dlscan.cumsum(x, initial=5, exclusive=True)
    np.testing.assert_array_equal(host(got), scan(x_host, "sum", "int64", True, 5))
    init = torch.tensor([7], dtype=torch.int64, device="cuda")
    total = torch.empty(1, dtype=torch.int64, device="cuda")
    got = dlscan.cummax(x, initial=init, total=total)
    expected = scan(x_host, "max", "int64", False, 7)
    np.testing.assert_array_equal(host(got), expected)
    assert host(total)[0] == expected[-1]

    carry = torch.zeros(1, dtype=torch.int64, device="cuda")
    out = torch.empty_like(x)
    step = max(1, n // 3)
    for start in range(0, n, step):
        dlscan.cumsum(x[start:start + step], out=out[start:start + step], initial=carry,
                      total=carry)
    np.testing.assert_array_equal(host(out), scan(x_host, "sum", "int64"))
    assert host(carry)[0] == scan(x_host, "sum", "int64")[-1]


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bfloat16"])
def test_in_place(rng, dtype):
    if dtype == "bfloat16":
        x = torch.randint(-50, 51, (1_000_003,), device="cuda").to(torch.bfloat16)
        expected = torch.cumsum(x.double(), 0).to(torch.bfloat16)
    else:
        x_host = random_array(rng, dtype, 1_000_003)
        x = on_gpu(x_host)
        expected = on_gpu(scan(x_host, "sum", dtype))
    pointer = x.data_ptr()
    result = dlscan.cumsum(x, out=x)
    assert result.data_ptr() == pointer and torch.equal(x, expected)


def test_real_float_sums_and_determinism():
    """Float sums of real data within the documented bound of a float64 reference; the
    deterministic option gives the same bits every run."""
    x = torch.randn(5_000_011, device="cuda", dtype=torch.float32)
    reference = torch.cumsum(x.double(), 0)
    scale = torch.cumsum(x.double().abs(), 0)
    got = dlscan.cumsum(x)
    # float32: relative error of a sum of n terms grows with the tree's depth; 1e-5 of the
    # running sum of magnitudes is far above it and far below a wrong item.
    assert torch.all((got.double() - reference).abs() <= 1e-5 * scale + 1e-6)
    first = dlscan.cumsum(x, deterministic=True)
    for _ in range(3):
        assert torch.equal(dlscan.cumsum(x, deterministic=True), first)
    assert torch.all((first.double() - reference).abs() <= 1e-5 * scale + 1e-6)


# ---------------------------------------------------------------- streams and graphs

def test_current_stream_of_the_producer():
    """With no stream=, the scan runs on PyTorch's current stream: a slow producer's work on a
    side stream comes first, without the host waiting."""
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.ones(8_000_000, dtype=torch.int32, device="cuda")
        torch.cuda._sleep(20_000_000)  # about 10 ms of GPU time before the fill below
        x.fill_(2)
        out = dlscan.cumsum(x, dtype=torch.int32)
    side.synchronize()
    assert int(out[-1]) == 16_000_000


def test_stream_argument():
    side = torch.cuda.Stream()
    x = torch.arange(1_000_000, dtype=torch.int64, device="cuda")
    torch.cuda.synchronize()
    out = torch.empty_like(x)
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)
        x.add_(1)
    dlscan.cumsum(x, out=out, stream=side)  # ordered after the add on side
    side.synchronize()
    n = 1_000_000
    assert int(out[-1]) == n * (n + 1) // 2


def test_cuda_graph(rng):
    """A scan and a chained total captured in a CUDA graph, replayed on fresh data."""
    n = 3_000_017
    x = torch.empty(n, dtype=torch.float32, device="cuda")
    out = torch.empty(n, dtype=torch.float64, device="cuda")
    total = torch.empty(1, dtype=torch.float64, device="cuda")
    dlscan.reserve(x, dtype=torch.float64)
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        dlscan.cumsum(x, out=out, total=total)
    for _ in range(3):
        values = rng.integers(-1000, 1000, n).astype(np.float32)
        x.copy_(torch.from_numpy(values))
        graph.replay()
        torch.cuda.synchronize()
        expected = np.cumsum(values.astype(np.float64))
        np.testing.assert_array_equal(host(out), expected)
        assert host(total)[0] == expected[-1]


# ---------------------------------------------------------------- CuPy

@needs_cupy
@pytest.mark.parametrize("n", [0, 1, 4097, 1_000_003])
@pytest.mark.parametrize("dtype", TYPES)
def test_cupy_every_type(rng, dtype, n):
    x_host = random_array(rng, dtype, n)
    x = cupy.asarray(x_host)
    for op in OPS:
        result = FUNCTIONS[op](x, exclusive=op == "max")
        assert isinstance(result, cupy.ndarray)
        np.testing.assert_array_equal(
            result.get(), scan(x_host, op, numpy_result_type(dtype, op), op == "max"))


@needs_cupy
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_against_cupy_cumsum(rng, dtype):
    x = cupy.asarray(random_array(rng, dtype, 2_000_003))
    assert bool(cupy.all(dlscan.cumsum(x) == cupy.cumsum(x)))


@needs_cupy
def test_cupy_stream(rng):
    x_host = random_array(rng, "uint32", 2_000_003)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(x_host)
        out = dlscan.cumsum(x, dtype="uint32")  # on CuPy's current stream: stream
    stream.synchronize()
    np.testing.assert_array_equal(out.get(), scan(x_host, "sum", "uint32"))
    other = cupy.cuda.Stream()
    out2 = cupy.empty_like(out)
    dlscan.cummin(x, out=out2, stream=other)
    other.synchronize()
    np.testing.assert_array_equal(out2.get(), scan(x_host, "min", "uint32"))


class CudaArrayOnly:
    """A tensor reachable only through __cuda_array_interface__ (as a Numba array is)."""

    def __init__(self, tensor):
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__
        self.tensor = tensor


class DLPackOnlyCuda:
    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self.tensor.__dlpack__(**kwargs)


def test_torch_tensors_of_every_kind(rng):
    """PyTorch's door (to_dlpack): subclasses, views with an offset, and a refusal of tensors
    that require grad (dlscan records no gradient), as __dlpack__ refuses them."""
    x_host = random_array(rng, "float32", 100_003)
    x = on_gpu(x_host)
    parameter = torch.nn.Parameter(x.clone(), requires_grad=False)
    np.testing.assert_array_equal(host(dlscan.cumsum(parameter)), scan(x_host, "sum", "float32"))
    np.testing.assert_array_equal(host(dlscan.cummax(x[17:])), scan(x_host[17:], "max", "float32"))
    with pytest.raises(ValueError, match="detach"):
        dlscan.cumsum(torch.nn.Parameter(x.clone()))


@pytest.mark.parametrize("door", [CudaArrayOnly, DLPackOnlyCuda])
def test_both_doors(rng, door):
    x_host = random_array(rng, "int32", 100_003)
    x = on_gpu(x_host)
    out = torch.empty(100_003, dtype=torch.int64, device="cuda")
    dlscan.cumsum(door(x), out=door(out))
    torch.cuda.synchronize()
    np.testing.assert_array_equal(host(out), scan(x_host, "sum", "int64"))


# ---------------------------------------------------------------- compaction

def with_runs(rng, dtype, n, longest=8):
    lengths = rng.integers(1, longest + 1, n + 1)
    values = rng.integers(-3, 4, n + 1)
    return np.repeat(values, lengths)[:n].astype(dtype)


def head(array, count):
    """The first count items of a CUDA output whose count is a one-item device array."""
    assert count.shape == (1,) and count.dtype in (torch.int64,) + ((cupy.int64,) if cupy else ())
    k = int(count[0])
    return (array[:k].cpu().numpy() if isinstance(array, torch.Tensor) else array[:k].get()), k


@pytest.mark.parametrize("n", [0, 1, 4097, 1_000_003])
@pytest.mark.parametrize("dtype", COMPACT_TYPES)
def test_select(rng, dtype, n):
    if dtype in ("uint32", "uint64"):
        pytest.skip("PyTorch's unsigned 32/64-bit tensors: CuPy's test covers them")
    x_host = random_array(rng, dtype, n)
    flags_host = rng.integers(0, 2, n).astype(np.bool_)
    selected, count = dlscan.select(on_gpu(x_host), on_gpu(flags_host))
    got, k = head(selected, count)
    np.testing.assert_array_equal(got, x_host[flags_host])
    small = with_runs(rng, dtype, n)
    selected, count = dlscan.select(on_gpu(small), predicate=">=", value=1)
    got, k = head(selected, count)
    np.testing.assert_array_equal(got, small[small >= 1])


@pytest.mark.parametrize("n", [0, 1, 4097, 1_000_003])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_unique_and_run_length_encode(rng, dtype, n):
    x_host = with_runs(rng, dtype, n)
    starts = runs(x_host)
    values, count = dlscan.unique(on_gpu(x_host))
    got, k = head(values, count)
    np.testing.assert_array_equal(got, x_host[starts])
    values, lengths, count = dlscan.run_length_encode(on_gpu(x_host))
    got, k = head(values, count)
    np.testing.assert_array_equal(got, x_host[starts])
    assert lengths.dtype == torch.int64
    np.testing.assert_array_equal(host(lengths[:k]), np.diff(np.append(starts, n)))


@pytest.mark.parametrize("n", [1, 4097, 1_000_003])
@pytest.mark.parametrize("op", OPS)
def test_reduce_by_key(rng, op, n):
    keys = with_runs(rng, "int32", n, longest=64)
    values = random_array(rng, "int64", n)
    k_out, v_out, count = dlscan.reduce_by_key(on_gpu(keys), on_gpu(values), op=op)
    expected_keys, expected_values = reduce_by_key(keys, values, op)
    got, k = head(k_out, count)
    np.testing.assert_array_equal(got, expected_keys)
    np.testing.assert_array_equal(host(v_out[:k]), expected_values)


@needs_cupy
@pytest.mark.parametrize("dtype", COMPACT_TYPES)
def test_cupy_compaction(rng, dtype):
    x_host = with_runs(rng, dtype, 500_009)
    x = cupy.asarray(x_host)
    selected, count = dlscan.select(x, predicate="!=", value=0)
    got, _ = head(selected, count)
    np.testing.assert_array_equal(got, x_host[x_host != 0])
    values, lengths, count = dlscan.run_length_encode(x)
    got, k = head(values, count)
    np.testing.assert_array_equal(got, x_host[runs(x_host)])
    assert isinstance(values, cupy.ndarray) and isinstance(lengths, cupy.ndarray)


def test_compaction_in_place(rng):
    x_host = with_runs(rng, "int64", 1_000_003)
    x = on_gpu(x_host)
    values, count = dlscan.unique(x, out=x)
    got, _ = head(values, count)
    np.testing.assert_array_equal(got, x_host[runs(x_host)])


# ---------------------------------------------------------------- bad input

def test_bad_input_writes_nothing():
    """Each refusal raises before anything runs: the outputs keep their poison."""
    x = torch.arange(1000, dtype=torch.int32, device="cuda")
    out = torch.full((1000,), -7, dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match="a scan along an axis writes x's shape"):
        dlscan.cumsum(x.reshape(10, 100), axis=0, out=out)
    with pytest.raises(ValueError, match="contiguous"):
        dlscan.cumsum(x[::2])
    with pytest.raises(ValueError):
        dlscan.cumsum(x, out=out[:999])  # too short
    with pytest.raises(ValueError):
        dlscan.cumsum(x, out=np.empty(1000, np.int32))  # host memory for a device input
    with pytest.raises(TypeError):
        dlscan.cumsum(x.to(torch.complex64))
    out16 = torch.full((1000,), -7, dtype=torch.int16, device="cuda")
    with pytest.raises(TypeError):  # int32 into int16: no such pair
        dlscan.cumsum(x, out=out16)
    with pytest.raises(dlscan.ArgumentError):  # overlapping, not the same array
        dlscan.cumsum(out[1:], out=out[:999])
    with pytest.raises(TypeError):
        dlscan.select(x, torch.ones(1000, dtype=torch.float32, device="cuda"))
    torch.cuda.synchronize()
    assert torch.equal(out, torch.full((1000,), -7, dtype=torch.int32, device="cuda"))
    assert torch.equal(out16, torch.full((1000,), -7, dtype=torch.int16, device="cuda"))
    assert torch.equal(x, torch.arange(1000, dtype=torch.int32, device="cuda"))


@pytest.mark.parametrize("dtype", [d for d in INTEGERS if d not in ("uint16", "uint32", "uint64")])
def test_wrong_initial(dtype):
    x = on_gpu(np.zeros(10, dtype))
    with pytest.raises(OverflowError):
        dlscan.cumsum(x, dtype=dtype, initial=2**70)


# ---------------------------------------------------------------- segmented scans

@pytest.mark.parametrize("n", [1, 4097, 1_000_003])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("op", OPS)
def test_segmented_by_keys_and_offsets(rng, op, dtype, n):
    """keys= and offsets= on CUDA tensors (PyTorch) and arrays (CuPy), against the host
    reference; the offsets cover every item, so a new output is wholly written."""
    x_host = random_array(rng, dtype, n)
    keys_host = np.repeat(rng.integers(0, 5, n), rng.integers(1, 40, n))[:n].astype(np.int32)
    out_dtype = numpy_result_type(dtype, op)
    expected = segmented_scan(x_host, op, out_dtype, key_segments(keys_host))
    starts = [s for s, _ in key_segments(keys_host)]
    offsets_host = np.array(starts + [n], np.int64)
    np.testing.assert_array_equal(host(FUNCTIONS[op](on_gpu(x_host), keys=on_gpu(keys_host))), expected)
    np.testing.assert_array_equal(host(FUNCTIONS[op](on_gpu(x_host), offsets=on_gpu(offsets_host))),
                                  expected)
    if cupy is not None:
        result = FUNCTIONS[op](cupy.asarray(x_host), offsets=cupy.asarray(offsets_host), exclusive=True)
        np.testing.assert_array_equal(
            cupy.asnumpy(result), segmented_scan(x_host, op, out_dtype, key_segments(keys_host), True))


def test_segments_on_another_device_than_x_are_refused(rng):
    """keys or offsets in host memory with x on the GPU: a clear error, nothing run."""
    x = on_gpu(np.arange(10, dtype=np.int32))
    with pytest.raises(ValueError):
        dlscan.cumsum(x, keys=np.zeros(10, np.int32))


# ---------------------------------------------------------------- along an axis

# Rows (axis=-1) of lengths around the GPU's tiles, few rows and many.
ROW_SHAPES = [(1, 1), (3, 1), (5, 4095), (7, 4097), (1000, 33), (2, 3, 1000), (3, 1_000_003),
              (0, 5), (4, 0)]


@pytest.mark.parametrize("shape", ROW_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32, torch.float64])
def test_rows_against_torch(shape, dtype):
    """cumsum, cummin and cummax along the last axis, against torch.cumsum / cummin / cummax
    along it (the data's float sums are exact)."""
    x = torch_random(dtype, int(np.prod(shape))).reshape(shape)
    got = dlscan.cumsum(x, axis=-1, dtype=dtype)
    assert got.shape == x.shape and got.dtype == dtype and got.device == x.device
    assert torch.equal(got, torch.cumsum(x, -1, dtype=dtype))
    # numpy.cumsum's type without dtype=: int32 sums widen to int64, as torch.cumsum's do
    assert torch.equal(dlscan.cumsum(x, axis=len(shape) - 1), torch.cumsum(x, -1))
    if x.numel():
        assert torch.equal(dlscan.cummin(x, axis=-1), torch.cummin(x, -1).values)
        assert torch.equal(dlscan.cummax(x, axis=-1), torch.cummax(x, -1).values)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_rows_exclusive_and_initial(rng, op, exclusive):
    """Every row starts from initial, inclusive and exclusive, into out= and in place."""
    x_host = random_array(rng, "int64", 300 * 5001).reshape(300, 5001)
    expected = axis_scan(x_host, op, "int64", -1, exclusive, 9)
    out = torch.empty(x_host.shape, dtype=torch.int64, device="cuda")
    got = FUNCTIONS[op](on_gpu(x_host), axis=1, out=out, exclusive=exclusive, initial=9)
    assert got is out
    np.testing.assert_array_equal(host(got), expected)
    x = on_gpu(x_host)
    FUNCTIONS[op](x, axis=-1, out=x, exclusive=exclusive, initial=9)
    np.testing.assert_array_equal(host(x), expected)


def test_one_dimensional_along_its_axis(rng):
    x_host = random_array(rng, "float32", 1_000_003)
    for axis in (0, -1):
        np.testing.assert_array_equal(host(dlscan.cumsum(on_gpu(x_host), axis=axis)),
                                      scan(x_host, "sum", "float32"))


def test_every_axis_against_torch(rng):
    """Every axis of 2-D and 3-D tensors (strides over 1: the column kernel) against
    torch.cumsum, cummin and cummax, with and without out=."""
    for shape in ((1000, 37), (3, 700, 2), (5, 9, 300), (2, 4099, 17)):
        x_host = random_array(rng, "int32", int(np.prod(shape))).reshape(shape)
        x = on_gpu(x_host)
        for axis in range(-len(shape), len(shape)):
            out = torch.full(x.shape, -7, dtype=torch.int64, device="cuda")
            dlscan.cumsum(x, axis=axis, out=out)
            assert torch.equal(out, torch.cumsum(x, axis))
            assert torch.equal(dlscan.cummin(x, axis=axis), torch.cummin(x, axis).values)
            assert torch.equal(dlscan.cummax(x, axis=axis), torch.cummax(x, axis).values)


def test_rows_of_tensors_that_are_not_c_contiguous():
    x = torch.arange(1000, dtype=torch.int32, device="cuda").reshape(10, 100)
    with pytest.raises(ValueError, match="x is not C-contiguous.*x.contiguous"):
        dlscan.cumsum(x.t(), axis=-1)
    with pytest.raises(ValueError, match="x is not C-contiguous"):
        dlscan.cumsum(x[:, ::2], axis=-1)
    assert torch.equal(dlscan.cumsum(x.t().contiguous(), axis=-1), torch.cumsum(x.t(), -1))
    with pytest.raises(np.exceptions.AxisError):
        dlscan.cumsum(x, axis=2)


@needs_cupy
@pytest.mark.parametrize("shape", ROW_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_rows_against_cupy(rng, shape, dtype):
    x = cupy.asarray(random_array(rng, dtype, int(np.prod(shape))).reshape(shape))
    got = dlscan.cumsum(x, axis=-1)
    assert isinstance(got, cupy.ndarray) and got.shape == x.shape
    expected = cupy.cumsum(x, axis=-1)
    assert got.dtype == expected.dtype and bool(cupy.all(got == expected))
    assert bool(cupy.all(dlscan.cummax(x, axis=-1, exclusive=True, initial=0) ==
                         cupy.asarray(axis_scan(x.get(), "max", dtype, -1, True, 0))))
