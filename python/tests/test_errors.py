"""test_errors.py: what dlscan says about bad input, before anything runs: arrays that are not
one-dimensional and contiguous (the scans take N-D arrays: test_scan.py's axis tests), types it
does not take, read-only and mismatched outputs, bad values and options; and a failed C call
as a Python exception with the C message."""

import numpy as np
import pytest

import dlscan
from reference import DLPackOnly

SCANS = [dlscan.cumsum, dlscan.cummin, dlscan.cummax]


@pytest.mark.parametrize("scan", SCANS)
def test_not_one_dimensional(scan):
    """The scans take N-D arrays (flattened with axis=None, as NumPy does), but their out= is
    then one-dimensional; compaction takes one-dimensional arrays alone."""
    with pytest.raises(ValueError, match=r"out has shape \(3, 4\); with axis=None the scan of x "
                                         r"flattened is one-dimensional, \(12,\)"):
        scan(np.zeros(12, np.int32), out=np.zeros((3, 4), np.int32))
    with pytest.raises(ValueError, match="x is 2-dimensional; dlscan takes one-dimensional"):
        dlscan.unique(np.zeros((3, 4), np.int32))
    with pytest.raises(ValueError, match="x is 0-dimensional"):
        dlscan.select(np.array(5, np.int32), predicate=">", value=3)
    with pytest.raises(ValueError, match="keys is 2-dimensional"):
        scan(np.zeros(12, np.int32), keys=np.zeros((3, 4), np.int32))


def test_not_contiguous():
    x = np.arange(10, dtype=np.int32)
    with pytest.raises(ValueError, match="x is not contiguous"):
        dlscan.cumsum(x[::2])
    with pytest.raises(ValueError, match="out is not contiguous"):
        dlscan.cumsum(x[:5], out=np.zeros(10, np.int64)[::2])
    with pytest.raises(ValueError, match="not contiguous"):
        dlscan.cumsum(DLPackOnly(x[::2]), out=DLPackOnly(np.zeros(5, np.int32)))
    with pytest.raises(ValueError, match="not contiguous"):
        dlscan.select(x[::2], predicate=">", value=3)
    # one item (or none) is contiguous whatever its stride
    np.testing.assert_array_equal(dlscan.cumsum(x[::20]), [0])


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "object", "datetime64[s]", "U3",
                                   ">i4", "longdouble"])
def test_unsupported_type(dtype):
    x = np.zeros(4, dtype)
    with pytest.raises(TypeError, match="which dlscan does not take"):
        dlscan.cumsum(x)


def test_not_an_array():
    with pytest.raises(TypeError, match="x must be an array.*not list"):
        dlscan.cumsum([1, 2, 3])
    with pytest.raises(TypeError, match="not int"):
        dlscan.unique(7)


def test_read_only_out():
    x = np.arange(5, dtype=np.int64)
    out = np.zeros(5, np.int64)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="out is read-only"):
        dlscan.cumsum(x, out=out)
    with pytest.raises(ValueError, match="read-only"):
        dlscan.cumsum(x, out=DLPackOnly(out))  # the DLPack 1.x read-only flag
    with pytest.raises(ValueError, match="out is read-only"):
        dlscan.unique(x, out=out)
    with pytest.raises(ValueError, match="out is read-only"):
        dlscan.cumsum(memoryview(b"\x01\x02"), out=memoryview(b"\x01\x02"))
    total = np.zeros(1, np.int64)
    total.setflags(write=False)
    with pytest.raises(ValueError, match="total is read-only"):
        dlscan.cumsum(x, total=total)


def test_mismatched_out():
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(ValueError, match="out has 4 items and x 5"):
        dlscan.cumsum(x, out=np.zeros(4, np.int64))
    with pytest.raises(TypeError, match="out has items of int64, and dtype=int32"):
        dlscan.cumsum(x, dtype="int32", out=np.zeros(5, np.int64))
    with pytest.raises(TypeError, match="out has items of float32; this call writes int32"):
        dlscan.unique(x, out=np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="out\\[1\\] has 4 items; 5 are written"):
        dlscan.run_length_encode(x, out=(None, np.zeros(4, np.int64)))
    with pytest.raises(TypeError, match="out= takes a tuple of two"):
        dlscan.run_length_encode(x, out=np.zeros(5, np.int32))
    with pytest.raises(TypeError, match="one item of int64"):
        dlscan.cumsum(x, total=np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="one item of int64"):
        dlscan.cumsum(x, initial=np.zeros(2, np.int64))


def test_type_pairs_dlscan_refuses():
    x = np.arange(5, dtype=np.int32)
    for dtype in ["float32", "int16", "uint8"]:
        with pytest.raises(dlscan.DtypeError, match="DLSCAN_ERROR_TYPE_PAIR") as error:
            dlscan.cumsum(x, dtype=dtype)
        assert isinstance(error.value, TypeError) and isinstance(error.value, dlscan.Error)
        assert error.value.status == 16
    with pytest.raises(dlscan.DtypeError):
        dlscan.cumsum(np.zeros(3, np.float64), dtype="float32")
    with pytest.raises(TypeError, match="written as bool"):
        dlscan.cumsum(np.zeros(3, np.bool_), dtype="bool")
    with pytest.raises(TypeError, match="is not a type dlscan takes"):
        dlscan.cumsum(x, dtype="complex64")
    with pytest.raises(TypeError, match="is not a type dlscan takes"):
        dlscan.cumsum(x, dtype="no such type")


def test_overlap_is_the_c_librarys_error():
    x = np.arange(10, dtype=np.int64)
    with pytest.raises(dlscan.ArgumentError, match="overlap.*DLSCAN_ERROR_OVERLAP") as error:
        dlscan.cumsum(x[:-1], out=x[1:])
    assert isinstance(error.value, ValueError) and error.value.status == 7


def test_compaction_types():
    with pytest.raises(TypeError, match="compaction takes int32"):
        dlscan.unique(np.zeros(3, np.int8))
    with pytest.raises(TypeError, match="compaction takes int32"):
        dlscan.reduce_by_key(np.zeros(3, np.int32), np.zeros(3, np.float16))
    with pytest.raises(TypeError, match="flags has items of float32"):
        dlscan.select(np.zeros(3, np.int32), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="flags has 2 items and x 3"):
        dlscan.select(np.zeros(3, np.int32), np.zeros(2, np.bool_))
    with pytest.raises(ValueError, match="values has 2 items and keys 3"):
        dlscan.reduce_by_key(np.zeros(3, np.int32), np.zeros(2, np.int32))


def test_bad_arguments():
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(TypeError, match="either flags or predicate"):
        dlscan.select(x)
    with pytest.raises(TypeError, match="either flags or predicate"):
        dlscan.select(x, np.ones(5, np.bool_), predicate="<", value=1)
    with pytest.raises(ValueError, match="predicate='~'"):
        dlscan.select(x, predicate="~", value=1)
    with pytest.raises(TypeError, match="takes a value="):
        dlscan.select(x, predicate="<")
    with pytest.raises(ValueError, match="op='prod'"):
        dlscan.reduce_by_key(x, x, op="prod")
    with pytest.raises(TypeError, match="must be an integer"):
        dlscan.cumsum(x, initial=1.5)
    with pytest.raises(TypeError, match="must be a number"):
        dlscan.cumsum(np.zeros(3, np.float32), initial="1")
    with pytest.raises(TypeError):
        dlscan.cumsum(x, exclusive=True, bogus=1)
    with pytest.raises(TypeError):
        dlscan.cumsum(x, True)  # keyword-only


@pytest.mark.parametrize("dtype, number, said", [
    ("int8", 128, r"initial=128 does not fit int8 \(-128 \.\. 127\)"),
    ("uint32", -1, r"initial=-1 does not fit uint32 \(0 \.\. 4294967295\)"),
    ("int64", 2**63, r"initial=9223372036854775808 does not fit int64 "
                     r"\(-9223372036854775808 \.\. 9223372036854775807\)"),
    ("uint64", 2**64, r"initial=18446744073709551616 does not fit uint64 \(0 \.\. 18446744073709551615\)"),
    ("int64", 2**1100, r"initial=2\*\*1100 does not fit int64"),
    ("int64", -3 * 2**99, r"initial between -2\*\*101 and -2\*\*100 does not fit int64"),
    ("float64", 2**1100, r"initial=2\*\*1100 does not fit float64 \(numbers beyond float64's "
                         r"\+-1\.79769313e\+308 fit no float\)"),
    ("float32", -3 * 2**1099, r"initial between -2\*\*1101 and -2\*\*1100 does not fit float32"),
    ("float16", 2**1024, r"initial=2\*\*1024 does not fit float16"),
])
def test_initial_does_not_fit(dtype, number, said):
    x = np.zeros(3, dtype)
    with pytest.raises(OverflowError, match="dlscan.cumsum: " + said):
        dlscan.cumsum(x, dtype=dtype, initial=number)
    with pytest.raises(OverflowError, match="dlscan.cummax: " + said):
        dlscan.cummax(x, initial=number, exclusive=True)


def test_value_does_not_fit():
    with pytest.raises(OverflowError, match=r"dlscan.select: value=2147483648 does not fit int32"):
        dlscan.select(np.arange(5, dtype=np.int32), predicate="<", value=2**31)
    with pytest.raises(OverflowError, match=r"dlscan.select: value=2\*\*1100 does not fit float64"):
        dlscan.select(np.arange(5, dtype=np.float64), predicate="<", value=2**1100)


def test_initial_at_the_edges():
    # The ends of the integer types fit; a float64 fits every float type, rounding as NumPy does
    # (to inf past the type's range), and so does an integer that rounds to a finite float64.
    largest = 2**1024 - 2**971
    for dtype, number, expected in [("int64", -(2**63), -(2**63)), ("uint64", 2**64 - 1, 2**64 - 1),
                                    ("float16", 65519.0, 65504.0), ("float32", 1e39, np.inf),
                                    ("float64", -np.inf, -np.inf), ("float64", largest, float(largest))]:
        got = dlscan.cumsum(np.zeros(2, dtype), dtype=dtype, initial=number, exclusive=True)
        assert got[0] == expected


def test_host_and_device_arrays_do_not_mix():
    class OnTheGpu:  # a CUDA array as __cuda_array_interface__ describes one
        __cuda_array_interface__ = {"shape": (5,), "typestr": "<i4", "data": (0x10000, False),
                                    "version": 3, "strides": None}

    # A build without the GPU backend says so; one with it finds no device here, or refuses
    # to mix host and device memory where a GPU is.
    with pytest.raises((dlscan.Error, RuntimeError, ValueError)):
        dlscan.cumsum(np.arange(5, dtype=np.int32), out=OnTheGpu())
    with pytest.raises((dlscan.Error, RuntimeError, ValueError)):
        dlscan.cumsum(OnTheGpu())


def test_no_allocation_for_unknown_arrays():
    with pytest.raises(TypeError, match="pass out="):
        dlscan.cumsum(DLPackOnly(np.arange(3)))
