"""test_compact.py: dlscan.select, unique, run_length_encode and reduce_by_key on NumPy arrays
(the CPU backend) against NumPy: the six types they take, sizes around the CPU tile, every
predicate, flags of each one-byte type, in place and out=."""

import numpy as np
import pytest

import dlscan
from reference import COMPACT_TYPES, OPS, SIZES, random_array, reduce_by_key, runs


@pytest.fixture
def rng():
    return np.random.default_rng()


def with_runs(rng, dtype, n):
    """n items in runs of random lengths (1 to 8) of a few values."""
    lengths = rng.integers(1, 9, n + 1)
    values = rng.integers(-3, 4, n + 1)
    return np.repeat(values, lengths)[:n].astype(dtype)


def check_head(result, count, expected):
    assert count == len(expected) and len(result) == count
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", COMPACT_TYPES)
@pytest.mark.parametrize("flag_type", ["bool", "uint8", "int8"])
def test_select_flagged(rng, dtype, n, flag_type):
    x = random_array(rng, dtype, n)
    flags = (rng.integers(0, 4, n) * (rng.integers(0, 2, n))).astype(flag_type)
    selected, count = dlscan.select(x, flags)
    assert isinstance(count, int) and selected.dtype == x.dtype
    check_head(selected, count, x[flags != 0])


PREDICATES = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
              "==": np.equal, "!=": np.not_equal}


@pytest.mark.parametrize("n", [0, 1, 65537, 200_003])
@pytest.mark.parametrize("dtype", COMPACT_TYPES)
@pytest.mark.parametrize("predicate", list(PREDICATES) + ["nonzero"])
def test_select_predicate(rng, dtype, n, predicate):
    x = with_runs(rng, dtype, n)
    if predicate == "nonzero":
        selected, count = dlscan.select(x, predicate="nonzero")
        check_head(selected, count, x[x != 0])
    else:
        selected, count = dlscan.select(x, predicate=predicate, value=1)
        check_head(selected, count, x[PREDICATES[predicate](x, x.dtype.type(1))])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", COMPACT_TYPES)
def test_unique(rng, dtype, n):
    x = with_runs(rng, dtype, n)
    values, count = dlscan.unique(x)
    check_head(values, count, x[runs(x)])


def test_unique_compares_bits():
    values, count = dlscan.unique(np.array([0.0, -0.0, -0.0, np.nan, np.nan], np.float64))
    assert count == 3 and np.signbit(values[1]) and np.isnan(values[2])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", COMPACT_TYPES)
def test_run_length_encode(rng, dtype, n):
    x = with_runs(rng, dtype, n)
    values, lengths, count = dlscan.run_length_encode(x)
    starts = runs(x)
    check_head(values, count, x[starts])
    assert lengths.dtype == np.int64
    np.testing.assert_array_equal(lengths, np.diff(np.append(starts, n)))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("key_type", ["int32", "uint64", "float32"])
@pytest.mark.parametrize("value_type", COMPACT_TYPES)
@pytest.mark.parametrize("op", OPS)
def test_reduce_by_key(rng, key_type, value_type, op, n):
    keys = with_runs(rng, key_type, n)
    values = random_array(rng, value_type, n)
    unique_keys, reduced, count = dlscan.reduce_by_key(keys, values, op=op, deterministic=True)
    expected_keys, expected_values = reduce_by_key(keys, values, op)
    check_head(unique_keys, count, expected_keys)
    check_head(reduced, count, expected_values)


def test_in_place_and_out(rng):
    x = with_runs(rng, "int64", 100_000)
    expected = x[runs(x)]
    out = np.full(len(x), -1, np.int64)
    values, count = dlscan.unique(x, out=out)
    assert values.base is out and count == len(expected)
    values, count = dlscan.unique(x, out=x)
    check_head(values, count, expected)

    keys = with_runs(rng, "int32", 100_000)
    vals = random_array(rng, "float64", 100_000)
    expected_keys, expected_values = reduce_by_key(keys, vals, "sum")
    k, v, count = dlscan.reduce_by_key(keys, vals, out=(keys, vals))
    check_head(k, count, expected_keys)
    check_head(v, count, expected_values)

    x = with_runs(rng, "uint32", 1000)
    lengths = np.empty(1000, np.int64)
    values, lens, count = dlscan.run_length_encode(x, out=(None, lengths))
    assert lens.base is lengths
    np.testing.assert_array_equal(lens, np.diff(np.append(runs(x), 1000)))
