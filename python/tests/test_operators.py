"""test_operators.py: the scans with dlscan's built-in user operators (linear_recurrence,
cumprod, logcumsumexp) on NumPy arrays (the CPU backend) and, where there is a GPU, on PyTorch
tensors (the GPU backend, which compiles the operators at run time), against float64 (long
double) sequential references and NumPy; and their bad input.

Tolerances: a recurrence's h[t] within 1e-4 (float32) or 1e-12 (float64) times the recurrence of
magnitudes (|a| and |b|: what h is made of); a product within (16 sqrt(n) + 64) eps relative (the
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
    h = np.longdouble(initial)
    out = np.empty(len(b), np.longdouble)
    magnitude = np.empty(len(b), np.longdouble)
    m = np.longdouble(abs(initial))
    a = np.broadcast_to(np.asarray(a, np.longdouble), b.shape)
    for t in range(len(b)):
        before, before_m = h, m
        h = a[t] * h + np.longdouble(b[t])
        m = abs(a[t]) * m + abs(np.longdouble(b[t]))
        out[t], magnitude[t] = (before, before_m) if exclusive else (h, m)
    return out, magnitude


def recurrence_inputs(rng, n, dtype):
    a = (rng.uniform(0.5, 1.0, n) * rng.choice([-1, 1], n)).astype(dtype)
    b = rng.uniform(-1, 1, n).astype(dtype)
    return a, b


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
    with pytest.raises(NotImplementedError):
        dlscan.cumprod(np.ones((2, 3), np.float32), axis=0)
    with pytest.raises(ValueError):
        dlscan.linear_recurrence(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), axis=-1)
    with pytest.raises(ValueError):
        dlscan.cumprod(np.ones(4, np.float32), out=np.empty(3, np.float32))


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
        x = rng.uniform(-8, 8, 300_007).astype(dtype)
        got = dlscan.logcumsumexp(torch.from_numpy(x).cuda())
        want = torch.logcumsumexp(torch.from_numpy(x).double(), 0)
        assert torch.allclose(got.cpu().double(), want, rtol=0,
                              atol=(16 * np.sqrt(len(x)) + 64) * float(np.finfo(dtype).eps))
