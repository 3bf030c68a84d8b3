"""test_operators.py: the scans with dlscan's built-in user operators (linear_recurrence, real
and complex, cumprod, logcumsumexp) on NumPy arrays (the CPU backend) and, where there is a GPU, on PyTorch
tensors (the GPU backend, which compiles the operators at run time), against float64 (long
double) sequential references and NumPy; and their bad input.

Tolerances: a recurrence's h[t] within 1e-4 (float32) or 1e-12 (float64) times the recurrence of
magnitudes (|a| and |b|: what h is made of), four times that for complex items (each part of a
complex product rounds twice); a product within (16 sqrt(n) + 64) eps relative (the
roundings of n multiplications add up as a random walk); logcumsumexp within (16 sqrt(n) + 64)
eps absolute: the relative error of its sum of n terms, whose log it is."""

import numpy as np
import pytest

import dlscan

SIZES = [0, 1, 2, 31, 4095, 4096, 4097, 65537, 300_007]
FLOATS = ["float32", "float64"]


@pytest.fixture
def rng():
    return np.random.default_rng()


def recurrence(a, b, initial, exclusive=False):
    wide = np.clongdouble if np.iscomplexobj(b) else np.longdouble
    h = wide(initial)
    out = np.empty(b.shape, wide)  # (b 2-D: each column a recurrence)
    magnitude = np.empty(b.shape, np.longdouble)
    m = np.longdouble(abs(initial))
    a = np.broadcast_to(np.asarray(a, wide), b.shape)
    for t in range(len(b)):
        before, before_m = h, m
        h = a[t] * h + wide(b[t])
        m = abs(a[t]) * m + abs(wide(b[t]))
        out[t], magnitude[t] = (before, before_m) if exclusive else (h, m)
    return out, magnitude


def recurrence_inputs(rng, n, dtype):
    """Decays: |a| in [0.5, 1), negative half the time (complex: at any angle); b in [-1, 1] (each part)."""
    if np.dtype(dtype).kind == "c":
        a = rng.uniform(0.5, 1.0, n) * np.exp(2j * np.pi * rng.uniform(size=n))
        return a.astype(dtype), (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(dtype)
    a = (rng.uniform(0.5, 1.0, n) * rng.choice([-1, 1], n)).astype(dtype)
    b = rng.uniform(-1, 1, n).astype(dtype)
    return a, b


def tolerance(dtype):
    return {"float32": 1e-4, "float64": 1e-12, "complex64": 4e-4, "complex128": 4e-12}[np.dtype(dtype).name]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("exclusive", [False, True])
def test_linear_recurrence(rng, dtype, n, exclusive):
    a, b = recurrence_inputs(rng, n, dtype)
    initial = float(rng.uniform(-1, 1))
    h = dlscan.linear_recurrence(a, b, initial=initial, exclusive=exclusive)
    assert h.dtype == np.dtype(dtype) and h.shape == (n,)
    want, magnitude = recurrence(a, b, initial, exclusive)
    bound = (1e-4 if dtype == "float32" else 1e-12) * (magnitude + 1e-30)
    assert np.all(np.abs(h.astype(np.longdouble) - want) <= bound)


@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_recurrence_with_one_a(rng, dtype):
    b = rng.uniform(-1, 1, 70_001).astype(dtype)
    h = dlscan.linear_recurrence(0.99, b, initial=3.0)
    want, magnitude = recurrence(np.asarray(0.99, dtype), b, 3.0)
    assert np.all(np.abs(h.astype(np.longdouble) - want) <= (1e-4 if dtype == "float32" else 1e-12) * magnitude)
    out = np.empty_like(b)
    assert dlscan.linear_recurrence(0.99, b, initial=3.0, out=out) is out
    assert np.array_equal(out, h)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("exclusive", [False, True])
def test_complex_linear_recurrence(rng, dtype, n, exclusive):
    a, b = recurrence_inputs(rng, n, dtype)
    initial = complex(rng.uniform(-1, 1), rng.uniform(-1, 1))
    h = dlscan.linear_recurrence(a, b, initial=initial, exclusive=exclusive)
    assert h.dtype == np.dtype(dtype) and h.shape == (n,)
    want, magnitude = recurrence(a, b, initial, exclusive)
    assert np.all(np.abs(h.astype(np.clongdouble) - want) <= tolerance(dtype) * (magnitude + 1e-30))
    one_a = complex(0.6, -0.7)  # |a| = 0.92
    h = dlscan.linear_recurrence(one_a, b, initial=initial, exclusive=exclusive)
    want, magnitude = recurrence(np.asarray(one_a, dtype), b, initial, exclusive)
    assert np.all(np.abs(h.astype(np.clongdouble) - want) <= tolerance(dtype) * (magnitude + 1e-30))


def test_complex_along_the_last_axis(rng):
    """complex64 rows, each from initial; complex128 rows are refused (a 32-byte state has no room
    for a row's start flag), and complex items everywhere but linear_recurrence."""
    shape = (40, 1031)
    a, b = recurrence_inputs(rng, shape[0] * shape[1], "complex64")
    a, b = a.reshape(shape), b.reshape(shape)
    h = dlscan.linear_recurrence(a, b, initial=0.5j, axis=-1)
    assert h.shape == shape and h.dtype == np.complex64
    for r in range(shape[0]):
        want, magnitude = recurrence(a[r], b[r], 0.5j)
        assert np.all(np.abs(h[r].astype(np.clongdouble) - want) <= tolerance("complex64") * magnitude)
    with pytest.raises(NotImplementedError, match="complex128"):
        dlscan.linear_recurrence(a.astype(np.complex128), b.astype(np.complex128), axis=-1)
    with pytest.raises(TypeError, match="a is complex"):
        dlscan.linear_recurrence(0.5j, b.real.copy())
    with pytest.raises(TypeError, match="initial is complex"):
        dlscan.linear_recurrence(a.real.copy(), b.real.copy(), initial=1j)
    with pytest.raises(ValueError, match="must match"):
        dlscan.linear_recurrence(a, b.real.copy())
    for call in (dlscan.cumsum, dlscan.cumprod, dlscan.logcumsumexp):
        with pytest.raises(TypeError, match="complex64"):
            call(b)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_cumprod(rng, dtype):
    n = 100_003
    if dtype.startswith("float"):
        x = (1 + rng.uniform(-1, 1, n) / 256).astype(dtype)
        want = np.cumprod(x.astype(np.longdouble))
        eps = np.finfo(dtype).eps
        assert np.all(np.abs(dlscan.cumprod(x) - want) <= (16 * np.sqrt(n) + 64) * eps * np.abs(want))
    else:
        x = (rng.integers(0, 1 << 31, n) | 1).astype(dtype)  # odd: the product never turns 0
        with np.errstate(over="ignore"):
            assert np.array_equal(dlscan.cumprod(x), np.cumprod(x, dtype=dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp(rng, dtype):
    x = rng.uniform(-8, 8, 200_003).astype(dtype)
    x[::97] = -np.inf
    want = np.logaddexp.accumulate(x.astype(np.float64))
    got = dlscan.logcumsumexp(x)
    assert np.allclose(got, want, rtol=0, atol=(16 * np.sqrt(len(x)) + 64) * np.finfo(dtype).eps)
    assert np.isneginf(dlscan.logcumsumexp(np.array([-np.inf, -np.inf], dtype)))[0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 1), (5, 7), (40, 4097), (2, 3, 300), (0, 5)])
@pytest.mark.parametrize("exclusive", [False, True])
def test_along_the_last_axis(rng, dtype, shape, exclusive):
    """Each row from initial (axis=-1), against the 1-D call on each row."""
    n = int(np.prod(shape))
    a, b = recurrence_inputs(rng, n, dtype)
    a, b = a.reshape(shape), b.reshape(shape)
    h = dlscan.linear_recurrence(a, b, initial=0.25, axis=-1, exclusive=exclusive)
    assert h.shape == shape and h.dtype == np.dtype(dtype)
    rows_a, rows_b, rows_h = a.reshape(-1, shape[-1]), b.reshape(-1, shape[-1]), h.reshape(-1, shape[-1])
    for r in range(rows_a.shape[0]):
        want, magnitude = recurrence(rows_a[r], rows_b[r], 0.25, exclusive)
        bound = (1e-4 if dtype == "float32" else 1e-12) * (magnitude + 1e-30)
        assert np.all(np.abs(rows_h[r].astype(np.longdouble) - want) <= bound)
    x = (1 + rng.uniform(-1, 1, n) / 256).astype(dtype).reshape(shape)
    eps = np.finfo(dtype).eps
    want = np.cumprod(x.astype(np.longdouble), axis=-1)
    assert np.all(np.abs(dlscan.cumprod(x, axis=-1) - want) <= (16 * np.sqrt(shape[-1]) + 64) * eps * np.abs(want))
    got = dlscan.logcumsumexp(x, axis=len(shape) - 1)
    assert np.allclose(got, np.logaddexp.accumulate(x.astype(np.float64), axis=-1), rtol=0,
                       atol=(16 * np.sqrt(shape[-1]) + 64) * eps)


def packed(rng, n):
    """Packed sequences of other lengths (0 to 300, an empty one among them) as cu_seqlens, from
    item 3 to n - 2 (the items outside them unwritten over offsets), and the same runs as keys."""
    cuts = np.unique(np.concatenate([[3, 3, n - 2], rng.integers(3, n - 2, n // 150)]))
    offsets = np.sort(np.concatenate([cuts, [cuts[len(cuts) // 2]]])).astype(np.int64)  # (an empty segment)
    keys = np.zeros(n, np.int32)
    for k in range(len(offsets) - 1):
        keys[offsets[k]:offsets[k + 1]] = k + 1
    keys[n - 2:] = len(offsets)
    return offsets, keys


@pytest.mark.parametrize("dtype", FLOATS + ["complex64"])
def test_segments_of_the_built_ins(rng, dtype):
    """linear_recurrence, cumprod and logcumsumexp over offsets and by key: each segment from
    initial, over offsets the items outside them unwritten."""
    n = 20_011
    offsets, keys = packed(rng, n)
    a, b = recurrence_inputs(rng, n, dtype)
    starts = np.flatnonzero(np.diff(keys, prepend=-1))
    for segments in ({"offsets": offsets}, {"keys": keys}):
        out = np.full(n, np.nan, dtype)
        dlscan.linear_recurrence(a, b, initial=0.5, out=out, **segments)
        bounds = zip(offsets[:-1], offsets[1:]) if "offsets" in segments else zip(starts, list(starts[1:]) + [n])
        for first, end in bounds:
            want, magnitude = recurrence(a[first:end], b[first:end], 0.5)
            assert np.all(np.abs(out[first:end].astype(np.clongdouble) - want) <= tolerance(dtype) * magnitude)
        if "offsets" in segments:
            assert np.all(np.isnan(out[:3])) and np.all(np.isnan(out[n - 2:]))
    if dtype == "complex64":
        return
    x = (1 + rng.uniform(-1, 1, n) / 256).astype(dtype)
    got = dlscan.cumprod(x, keys=keys)
    lse = dlscan.logcumsumexp(x, offsets=offsets)
    eps = np.finfo(dtype).eps
    for first, end in zip(starts, list(starts[1:]) + [n]):
        want = np.cumprod(x[first:end].astype(np.longdouble))
        assert np.all(np.abs(got[first:end] - want) <= (16 * np.sqrt(end - first) + 64) * eps * np.abs(want))
    for first, end in zip(offsets[:-1], offsets[1:]):
        want = np.logaddexp.accumulate(x[first:end].astype(np.float64))
        assert np.allclose(lse[first:end], want, rtol=0, atol=(16 * np.sqrt(max(end - first, 1)) + 64) * eps)


def test_bad_input(rng):
    a, b = recurrence_inputs(rng, 10, "float32")
    with pytest.raises(ValueError):
        dlscan.linear_recurrence(a, b[:5])
    with pytest.raises(ValueError):
        dlscan.linear_recurrence(a, b.astype(np.float64))
    with pytest.raises(TypeError):
        dlscan.linear_recurrence(a.astype(np.int32), b.astype(np.int32))
    with pytest.raises(TypeError):
        dlscan.logcumsumexp(np.arange(5, dtype=np.int32))
    with pytest.raises(TypeError):
        dlscan.cumprod(np.arange(5, dtype=np.int8))
    with pytest.raises(ValueError):
        dlscan.linear_recurrence(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), axis=-1)
    with pytest.raises(ValueError):
        dlscan.cumprod(np.ones(4, np.float32), out=np.empty(3, np.float32))
    with pytest.raises(ValueError, match="both"):
        dlscan.cumprod(a, keys=np.zeros(10, np.int32), offsets=np.array([0, 10], np.int64))
    with pytest.raises(ValueError, match="axis with keys"):
        dlscan.logcumsumexp(a, keys=np.zeros(10, np.int32), axis=-1)
    with pytest.raises(ValueError, match="keys has 9 items"):
        dlscan.linear_recurrence(a, b, keys=np.zeros(9, np.int32))
    with pytest.raises(TypeError, match="int64 or uint64"):
        dlscan.linear_recurrence(a, b, offsets=np.array([0, 10], np.int32))
    with pytest.raises(NotImplementedError, match="in segments"):
        dlscan.linear_recurrence(a.astype(np.complex128), b.astype(np.complex128), offsets=np.array([0, 10], np.int64))


def test_on_the_gpu(rng):
    """The same against the host references, on PyTorch tensors (skipped without a GPU)."""
    if not dlscan.has_gpu_backend():
        pytest.skip("dlscan was built without the GPU backend")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    for dtype in FLOATS:
        for n in [1, 4097, 65537, 1_000_003]:
            a, b = recurrence_inputs(rng, n, dtype)
            h = dlscan.linear_recurrence(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), initial=0.5)
            assert h.is_cuda and h.dtype == torch.from_numpy(a).dtype
            want, magnitude = recurrence(a, b, 0.5)
            bound = (1e-4 if dtype == "float32" else 1e-12) * magnitude
            assert np.all(np.abs(h.cpu().numpy().astype(np.longdouble) - want) <= bound)
        # [B, L] along the last axis: each row from initial
        for shape in [(3, 1), (64, 1000), (5, 70_001)]:
            a, b = recurrence_inputs(rng, int(np.prod(shape)), dtype)
            a, b = a.reshape(shape), b.reshape(shape)
            h = dlscan.linear_recurrence(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), initial=0.5,
                                         axis=-1).cpu().numpy()
            for r in range(shape[0]):
                want, magnitude = recurrence(a[r], b[r], 0.5)
                bound = (1e-4 if dtype == "float32" else 1e-12) * magnitude
                assert np.all(np.abs(h[r].astype(np.longdouble) - want) <= bound)
        # complex items: 1-D, one a, and complex64 rows
        cdtype = {"float32": "complex64", "float64": "complex128"}[dtype]
        a, b = recurrence_inputs(rng, 300_007, cdtype)
        for one_a in (None, complex(0.6, -0.7)):
            h = dlscan.linear_recurrence(torch.from_numpy(a).cuda() if one_a is None else one_a,
                                         torch.from_numpy(b).cuda(), initial=0.5 - 0.25j)
            assert h.is_cuda and h.dtype == torch.from_numpy(b).dtype
            want, magnitude = recurrence(a if one_a is None else np.asarray(one_a, cdtype), b, 0.5 - 0.25j)
            assert np.all(np.abs(h.cpu().numpy().astype(np.clongdouble) - want) <= tolerance(cdtype) * magnitude)
        if cdtype == "complex64":
            a, b = a[:300_000].reshape(100, 3000), b[:300_000].reshape(100, 3000)
            h = dlscan.linear_recurrence(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), axis=-1).cpu().numpy()
            for r in range(a.shape[0]):
                want, magnitude = recurrence(a[r], b[r], 0)
                assert np.all(np.abs(h[r].astype(np.clongdouble) - want) <= tolerance(cdtype) * (magnitude + 1e-30))
        # columns: [L, B] along axis 0 and [2, L, B] along axis 1, each column from initial; complex128 too
        for shape, axis in (((3000, 7), 0), ((2, 1500, 300), 1), ((70_001, 3), 0)):
            a, b = recurrence_inputs(rng, int(np.prod(shape)), dtype)
            a, b = a.reshape(shape), b.reshape(shape)
            h = dlscan.linear_recurrence(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), initial=0.5,
                                         axis=axis).cpu().numpy()
            want, magnitude = recurrence(np.moveaxis(a, axis, -1).reshape(-1, shape[axis]).T,
                                         np.moveaxis(b, axis, -1).reshape(-1, shape[axis]).T, 0.5)
            got = np.moveaxis(h, axis, -1).reshape(-1, shape[axis]).T
            assert np.all(np.abs(got.astype(np.longdouble) - want) <= tolerance(dtype) * magnitude)
        a, b = recurrence_inputs(rng, 3000 * 5, cdtype)
        a, b = a.reshape(3000, 5), b.reshape(3000, 5)
        h = dlscan.linear_recurrence(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), axis=0).cpu().numpy()
        want, magnitude = recurrence(a, b, 0)
        assert np.all(np.abs(h.astype(np.clongdouble) - want) <= tolerance(cdtype) * (magnitude + 1e-30))
        # packed sequences (cu_seqlens as offsets, and the same runs as keys)
        n = 1_000_003
        offsets, keys = packed(rng, n)
        a, b = recurrence_inputs(rng, n, dtype)
        for segments in ({"offsets": torch.from_numpy(offsets).cuda()}, {"keys": torch.from_numpy(keys).cuda()}):
            h = dlscan.linear_recurrence(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), initial=0.5,
                                         **segments).cpu().numpy()
            for first, end in zip(offsets[:-1], offsets[1:]):
                want, magnitude = recurrence(a[first:end], b[first:end], 0.5)
                assert np.all(np.abs(h[first:end].astype(np.longdouble) - want) <= tolerance(dtype) * magnitude)
        x = rng.uniform(-8, 8, 300_007).astype(dtype)
        got = dlscan.logcumsumexp(torch.from_numpy(x).cuda())
        want = torch.logcumsumexp(torch.from_numpy(x).double(), 0)
        assert torch.allclose(got.cpu().double(), want, rtol=0,
                              atol=(16 * np.sqrt(len(x)) + 64) * float(np.finfo(dtype).eps))


# ---- dlscan.scan with an Operator of your own ----

RECURRENCE_SOURCE = """
struct dlscan_state { float a, b; };
typedef float dlscan_in; typedef float dlscan_in2; typedef float dlscan_out;
__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y) { return dlscan_state{x.a * y.a, fmaf(y.a, x.b, y.b)}; }
__device__ dlscan_state dlscan_load(float a, float b) { return dlscan_state{a, b}; }
__device__ float dlscan_store(dlscan_state s) { return s.b; }
"""
PAIR = np.dtype([("a", "f4"), ("b", "f4")])


def recurrence_operator():
    """The float32 recurrence as an Operator: CUDA C for CUDA arrays, Python for NumPy's."""
    return dlscan.Operator(RECURRENCE_SOURCE, state=PAIR, identity=(1.0, 0.0), item="f4", item2="f4", out="f4",
                           combine=lambda x, y: (x["a"] * y["a"], y["a"] * x["b"] + y["b"]),
                           load=lambda a, b: (a, b), store=lambda s: s["b"])


@pytest.mark.parametrize("n", [0, 1, 2, 1000])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_with_an_operator(rng, n, exclusive):
    """A recurrence from two arrays (load, store), against the reference; a structured state
    scanned as it is; an int32 sum exactly; rows along the last axis."""
    a, b = recurrence_inputs(rng, n, "float32")
    h = dlscan.scan((a, b), recurrence_operator(), initial=(1.0, 0.5), exclusive=exclusive)
    assert h.dtype == np.float32 and h.shape == (n,)
    want, magnitude = recurrence(a, b, 0.5, exclusive)
    assert np.all(np.abs(h.astype(np.longdouble) - want) <= tolerance("float32") * (magnitude + 1e-30))

    pairs = np.empty(n, PAIR)
    pairs["a"], pairs["b"] = a, b
    states = dlscan.scan(pairs, dlscan.Operator(state=PAIR, identity=(1, 0), combine=lambda x, y: (
        x["a"] * y["a"], y["a"] * x["b"] + y["b"])), exclusive=exclusive)
    assert states.dtype == PAIR and np.array_equal(states["b"][:n], dlscan.scan((a, b), recurrence_operator(),
                                                                               exclusive=exclusive))
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    total = dlscan.Operator(state="i4", identity=0, combine=lambda p, q: p + q)
    want = np.cumsum(x, dtype=np.int32)
    got = dlscan.scan(x, total, exclusive=exclusive)
    assert np.array_equal(got, np.concatenate([[0], want[:-1]]) if exclusive and n else want)


def test_scan_with_an_operator_along_rows(rng):
    shape = (7, 130)
    a, b = recurrence_inputs(rng, shape[0] * shape[1], "float32")
    a, b = a.reshape(shape), b.reshape(shape)
    out = np.full(shape, np.nan, np.float32)
    assert dlscan.scan((a, b), recurrence_operator(), axis=-1, initial=(1, -0.25), out=out) is out
    for r in range(shape[0]):
        want, magnitude = recurrence(a[r], b[r], -0.25)
        assert np.all(np.abs(out[r].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    # axis 0 of [7, 130]: each column from initial; of [7, 10, 13], axis 1: each [k, :, j]
    out = dlscan.scan((a, b), recurrence_operator(), axis=0, initial=(1, -0.25))
    for c in range(shape[1]):
        want, magnitude = recurrence(a[:, c], b[:, c], -0.25)
        assert np.all(np.abs(out[:, c].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    a3, b3 = a.reshape(7, 10, 13), b.reshape(7, 10, 13)
    out = dlscan.scan((a3, b3), recurrence_operator(), axis=1)
    for k in range(7):
        for j in range(13):
            want, magnitude = recurrence(a3[k, :, j], b3[k, :, j], 0.0)
            assert np.all(np.abs(out[k, :, j].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)


def test_built_ins_down_columns(rng):
    """linear_recurrence, cumprod and logcumsumexp along axis 0 and a middle axis (columns), each
    column from initial; complex128 too (no flag to carry down columns)."""
    a, b = recurrence_inputs(rng, 6 * 300 * 5, "float32")
    a, b = a.reshape(6, 300, 5), b.reshape(6, 300, 5)
    h = dlscan.linear_recurrence(a, b, initial=0.5, axis=1)
    for k in range(6):
        for j in range(5):
            want, magnitude = recurrence(a[k, :, j], b[k, :, j], 0.5)
            assert np.all(np.abs(h[k, :, j].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    ca, cb = recurrence_inputs(rng, 400 * 3, "complex128")
    ca, cb = ca.reshape(400, 3), cb.reshape(400, 3)
    h = dlscan.linear_recurrence(ca, cb, initial=0.5j, axis=0)
    for j in range(3):
        want, magnitude = recurrence(ca[:, j], cb[:, j], 0.5j)
        assert np.all(np.abs(h[:, j].astype(np.clongdouble) - want) <= tolerance("complex128") * magnitude)
    x = rng.integers(-3, 4, (50, 7)).astype(np.int64)
    np.testing.assert_array_equal(dlscan.cumprod(x, axis=0), np.cumprod(x, axis=0))
    y = rng.standard_normal((2, 40, 3))
    assert np.allclose(dlscan.logcumsumexp(y, axis=1), np.logaddexp.accumulate(y, axis=1), rtol=0, atol=1e-12)


def test_scan_with_an_operator_over_offsets(rng):
    """Segments from offsets, each from initial; the items outside them unwritten."""
    n = 5000
    a, b = recurrence_inputs(rng, n, "float32")
    offsets = np.unique(np.concatenate([[7, n - 3], rng.integers(7, n - 3, 60)])).astype(np.int64)
    out = np.full(n, np.nan, np.float32)
    assert dlscan.scan((a, b), recurrence_operator(), offsets=offsets, initial=(1, 0.5), out=out) is out
    for k in range(len(offsets) - 1):
        segment = slice(offsets[k], offsets[k + 1])
        want, magnitude = recurrence(a[segment], b[segment], 0.5)
        assert np.all(np.abs(out[segment].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    assert np.all(np.isnan(out[:7])) and np.all(np.isnan(out[n - 3:]))
    with pytest.raises(ValueError, match="axis with offsets"):
        dlscan.scan((a, b), recurrence_operator(), offsets=offsets, axis=-1)
    with pytest.raises(TypeError, match="int64 or uint64"):
        dlscan.scan((a, b), recurrence_operator(), offsets=offsets.astype(np.int32))


def test_scan_with_an_operator_by_key(rng):
    """Segments by runs of equal keys (int16 and float32 keys: -0.0 and 0.0 differ), each from
    initial; refusals."""
    n = 5000
    a, b = recurrence_inputs(rng, n, "float32")
    for keys in (np.repeat(np.arange(80, dtype=np.int16) % 3, 63)[:n],
                 np.where(np.arange(n) // 50 % 2 == 0, 0.0, -0.0).astype(np.float32)):
        keys = np.concatenate([keys, np.full(n - len(keys), 7, keys.dtype)])
        out = dlscan.scan((a, b), recurrence_operator(), keys=keys, initial=(1, 0.5))
        starts = np.flatnonzero(np.concatenate([[True], keys.view(f"u{keys.itemsize}")[1:] !=
                                                keys.view(f"u{keys.itemsize}")[:-1]]))
        assert len(starts) > 10
        for first, end in zip(starts, list(starts[1:]) + [n]):
            want, magnitude = recurrence(a[first:end], b[first:end], 0.5)
            assert np.all(np.abs(out[first:end].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    with pytest.raises(ValueError, match="both"):
        dlscan.scan((a, b), recurrence_operator(), keys=keys, offsets=np.array([0, n], np.int64))
    with pytest.raises(ValueError, match="axis with keys"):
        dlscan.scan((a, b), recurrence_operator(), keys=keys, axis=-1)
    with pytest.raises(ValueError, match="keys has 4999 items"):
        dlscan.scan((a, b), recurrence_operator(), keys=keys[1:])
    with pytest.raises(TypeError, match="complex"):
        dlscan.scan((a, b), recurrence_operator(), keys=keys.astype(np.complex64))


def test_scan_with_c_functions():
    """combine as a ctypes function, and as its address."""
    import ctypes

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    def product(result, earlier, later):
        x, y = ctypes.c_int64.from_address(earlier).value, ctypes.c_int64.from_address(later).value
        ctypes.c_int64.from_address(result).value = x * y

    x = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int64)
    for combine in (product, ctypes.cast(product, ctypes.c_void_p).value):
        assert np.array_equal(dlscan.scan(x, dlscan.Operator(state="i8", identity=1, combine=combine)), np.cumprod(x))


def test_scan_with_an_operator_bad_input():
    x = np.arange(10, dtype=np.int32)
    total = dlscan.Operator(state="i4", identity=0, combine=lambda p, q: p + q)

    def fails(p, q):
        raise RuntimeError("from the operator")

    with pytest.raises(RuntimeError, match="from the operator"):
        dlscan.scan(x, dlscan.Operator(state="i4", identity=0, combine=fails))
    with pytest.raises(TypeError, match="Operator"):
        dlscan.scan(x, "sum")
    with pytest.raises(ValueError, match="items are 4 bytes"):
        dlscan.scan(x.astype(np.int64), total)
    with pytest.raises(ValueError, match="x=\\(x, x2\\)"):
        dlscan.scan(x.astype(np.float32), recurrence_operator())
    with pytest.raises(ValueError, match="one array"):
        dlscan.scan((x, x), total)
    with pytest.raises(ValueError, match="one shape"):
        dlscan.scan((x[:5].astype(np.float32), x.astype(np.float32)), recurrence_operator())
    with pytest.raises(TypeError, match="combine="):
        dlscan.scan(np.zeros(3, PAIR), dlscan.Operator(RECURRENCE_SOURCE, state=PAIR, identity=(1, 0)))
    with pytest.raises(ValueError):
        dlscan.scan(x, total, out=np.empty(9, np.int32))
    with pytest.raises(ValueError, match="item2= needs item="):
        dlscan.Operator(state="i4", identity=0, item2="i4")
    with pytest.raises(dlscan.ArgumentError):  # a state of 6 bytes
        dlscan.scan(np.zeros(3, [("a", "i2"), ("b", "i4")]), dlscan.Operator(
            state=[("a", "i2"), ("b", "i4")], identity=(0, 0), combine=lambda p, q: p))


def test_scan_with_an_operator_on_the_gpu(rng):
    """The recurrence's source on PyTorch tensors, 1-D and along rows; a state of two floats whose
    items are tensors' last axis, with out= of the same layout; a source that does not compile."""
    if not dlscan.has_gpu_backend():
        pytest.skip("dlscan was built without the GPU backend")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    op = recurrence_operator()
    n = 1_000_003
    a, b = recurrence_inputs(rng, n, "float32")
    offsets = np.unique(np.concatenate([[5, n - 2], rng.integers(5, n - 2, 2000)])).astype(np.int64)
    out = torch.full((n,), float("nan"), device="cuda")
    dlscan.scan((torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()), op, offsets=torch.from_numpy(offsets).cuda(),
                out=out)
    h = out.cpu().numpy()
    for k in range(len(offsets) - 1):
        segment = slice(offsets[k], offsets[k + 1])
        want, magnitude = recurrence(a[segment], b[segment], 0)
        assert np.all(np.abs(h[segment].astype(np.longdouble) - want) <= tolerance("float32") * (magnitude + 1e-30))
    assert np.all(np.isnan(h[:5])) and np.all(np.isnan(h[n - 2:]))
    keys = np.repeat(np.arange(n // 700 + 1, dtype=np.int64) * 0x100000001, 700)[:n]  # (runs differ in high bits)
    h = dlscan.scan((torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()), op, keys=torch.from_numpy(keys).cuda(),
                    initial=(1, 0.5)).cpu().numpy()
    for first in range(0, n, 700):
        want, magnitude = recurrence(a[first:first + 700], b[first:first + 700], 0.5)
        assert np.all(np.abs(h[first:first + 700].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    for shape, axis in (((1_000_003,), None), ((64, 3000), -1)):
        a, b = recurrence_inputs(rng, int(np.prod(shape)), "float32")
        a, b = a.reshape(shape), b.reshape(shape)
        h = dlscan.scan((torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()), op, axis=axis, initial=(1, 0.5))
        assert h.is_cuda and h.dtype == torch.float32 and tuple(h.shape) == shape
        h = h.cpu().numpy().reshape(-1, shape[-1])
        for r in range(h.shape[0]):
            want, magnitude = recurrence(a.reshape(h.shape)[r], b.reshape(h.shape)[r], 0.5)
            assert np.all(np.abs(h[r].astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    pairs = dlscan.Operator("struct dlscan_state { float a, b; };\n"
                            "__device__ dlscan_state dlscan_combine(dlscan_state x, dlscan_state y)"
                            " { return dlscan_state{x.a * y.a, fmaf(y.a, x.b, y.b)}; }\n",
                            state=PAIR, identity=(1, 0))
    a, b = recurrence_inputs(rng, 100_000, "float32")
    x = torch.from_numpy(np.stack([a, b], axis=-1)).cuda()
    with pytest.raises(TypeError, match="out="):
        dlscan.scan(x, pairs)
    out = torch.empty_like(x)
    assert dlscan.scan(x, pairs, out=out) is out
    want, magnitude = recurrence(a, b, 0)
    assert np.all(np.abs(out[:, 1].cpu().numpy().astype(np.longdouble) - want) <= tolerance("float32") * magnitude)
    broken = dlscan.Operator("struct dlscan_state { float a, b; };\n", state=PAIR, identity=(1, 0))
    with pytest.raises(dlscan.Error, match="dlscan_combine"):
        dlscan.scan(x, broken, out=out)
