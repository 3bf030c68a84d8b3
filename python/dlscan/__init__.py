"""dlscan: single-pass prefix scans and stream compaction, on NumPy arrays (the CPU backend)
and on CUDA arrays of PyTorch, CuPy, JAX or Numba (the GPU backend), without copies.

    >>> import numpy as np, dlscan
    >>> dlscan.cumsum(np.array([3, 1, 4, 1, 5], dtype=np.int32))
    array([ 3,  4,  8,  9, 14])
    >>> dlscan.cummax(np.array([3, 1, 4, 1, 5], dtype=np.int32), exclusive=True, initial=0)
    array([0, 3, 3, 4, 4], dtype=int32)
    >>> dlscan.cumsum(np.arange(6, dtype=np.int32).reshape(2, 3), axis=1)
    array([[ 0,  1,  3],
           [ 3,  7, 12]])
    >>> dlscan.run_length_encode(np.array([7, 7, 2, 2, 2, 9]))
    (array([7, 2, 9]), array([2, 3, 1]), 3)
    >>> dlscan.linear_recurrence(np.full(4, 0.5), np.array([1.0, 2.0, 3.0, 4.0]))
    array([1.   , 2.5  , 4.25 , 6.125])
    >>> biggest = dlscan.Operator("typedef int dlscan_state;\\n"
    ...     "__device__ int dlscan_combine(int x, int y) { return x > y ? x : y; }\\n",
    ...     state="i4", identity=-2**31, combine=max)  # source: CUDA arrays; combine: NumPy's
    >>> dlscan.scan(np.array([3, 1, 4, 1, 5], dtype=np.int32), biggest)
    array([3, 3, 4, 4, 5], dtype=int32)

Arrays are one-dimensional and contiguous, except that the scans (cumsum, cummin, cummax) take
C-contiguous arrays of any shape: axis=None (the default) scans x flattened, as numpy.cumsum
does, and axis=d scans along dimension d into an output of x's shape. NumPy arrays (and other
objects with the buffer protocol) run on a CPU handle. Objects with __dlpack__ or __cuda_array_interface__ on a CUDA
device run there, on the stream= given, else the stream the array's
__cuda_array_interface__ names, else the current stream of its library (PyTorch, CuPy),
else the legacy default stream; the call only enqueues work. New outputs are made by the
input's own library (numpy.empty, torch.empty, cupy.empty, or the array API's empty); pass
out= to write into arrays of your own (a CUDA graph, a preallocated buffer).

linear_recurrence (h[t] = a[t] h[t-1] + b[t], real or complex), cumprod and logcumsumexp scan with operators
that dlscan compiles at run time on a GPU (dlscan.h, "Your own operator"), over x flattened
(axis=None) or along an axis (axis=-1: a batch of rows; axis=0: columns; each from initial). scan(x, op)
does the same with a dlscan.Operator of your own: CUDA C source for CUDA arrays, C functions or
Python callables for NumPy arrays, NumPy dtypes for its state and items.

group= scans one array spread over the ranks of an mpi4py communicator (NumPy arrays, or CUDA
arrays through the host) or of a torch.distributed process group (CUDA tensors over its NCCL):
each rank passes its slice and gets its slice of one scan of them all, in rank order. A group's
first call on a GPU maps its ranks' GPU memory through it (dlscan_peers_create, where they share
a host), and its later calls exchange through that memory, not through the group.

Handles are kept per thread and device, created on first use. A failed call raises
dlscan.Error with the library's message: dlscan.ArgumentError (also a ValueError),
dlscan.DtypeError (also a TypeError) and dlscan.OutOfMemoryError (also a MemoryError) for the
caller's mistakes; arrays that are not 1-D and contiguous (C-contiguous for the scans), of a
type dlscan does not take, or read-only outputs raise ValueError or TypeError before anything
runs, and an axis out of range numpy.exceptions.AxisError (also a ValueError and an IndexError).
"""

from ._dlscan import (
    ArgumentError,
    DtypeError,
    Error,
    OutOfMemoryError,
    __version__,
    cummax,
    cummin,
    cumprod,
    cumsum,
    has_gpu_backend,
    linear_recurrence,
    logcumsumexp,
    reduce_by_key,
    reserve,
    run_length_encode,
    select,
    unique,
)
from . import _dlscan
from ._operator import Operator, scan

__all__ = [
    "cumsum", "cummin", "cummax", "select", "unique", "run_length_encode", "reduce_by_key",
    "linear_recurrence", "cumprod", "logcumsumexp", "scan", "Operator", "reserve", "has_gpu_backend", "Error", "ArgumentError", "DtypeError", "OutOfMemoryError",
]

# The struct module's format of each type, for outputs like a plain buffer (array.array,
# memoryview): a memoryview of a bytearray. (memoryview cannot hold float16.)
_FORMATS = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
            "uint32": "I", "int64": "q", "uint64": "Q", "float32": "f", "float64": "d"}


def _library(array):
    return type(array).__module__.partition(".")[0]


def _empty(like, shape, dtype):
    """A new C-contiguous array of dtype (a name), of like's library and on its device: shape
    is the length of a one-dimensional array (an int) or a tuple. The extension module calls
    this for outputs not given with out=."""
    library = _library(like)
    if library == "numpy":
        import numpy
        return numpy.empty(shape, dtype)
    if library == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if library == "cupy":
        import cupy
        with like.device:
            return cupy.empty(shape, dtype)
    dims = shape if isinstance(shape, tuple) else (shape,)
    namespace = getattr(like, "__array_namespace__", None)
    if namespace is not None:
        xp = namespace()
        return xp.empty(dims, dtype=getattr(xp, dtype), device=like.device)
    # memoryview.cast takes no shape with an extent of 0: a 1-D one needs none.
    if dtype in _FORMATS and (len(dims) == 1 or all(dims)):
        try:
            memoryview(like)
        except TypeError:
            pass
        else:
            import math
            import struct
            items = memoryview(bytearray(math.prod(dims) * struct.calcsize(_FORMATS[dtype])))
            return items.cast(_FORMATS[dtype]) if len(dims) == 1 else items.cast(_FORMATS[dtype], dims)
    raise TypeError(f"dlscan cannot make a new array like {type(like).__name__}: pass out=")


def _dtype_name(dtype):
    """The name dlscan knows a dtype= argument by ('int32', 'bfloat16', ...)."""
    if isinstance(dtype, str) or not hasattr(dtype, "is_floating_point"):  # not a torch.dtype
        try:
            import numpy
        except ImportError:
            pass
        else:
            try:
                return numpy.dtype(dtype).name
            except TypeError:
                pass
    name = getattr(dtype, "__name__", None) or str(dtype).rpartition(".")[2]
    return {"float": "float64", "int": "int64", "bool_": "bool"}.get(name, name)


def _stream_handle(stream):
    """The CUDA stream handle (an int) of a stream= argument."""
    if hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol: (version, handle)
        return int(stream.__cuda_stream__()[1])
    for attribute in ("cuda_stream", "ptr"):  # PyTorch, CuPy
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    handle = getattr(stream, "handle", None)  # Numba: a ctypes pointer
    if handle is not None:
        return int(getattr(handle, "value", handle) or 0)
    raise TypeError(f"dlscan: stream={stream!r} is not a CUDA stream")


def _current_stream(like, device):
    """The current stream of like's library on device, or None where it has none. (PyTorch's
    tensors never come here: their door reads the stream itself, _torch_door below.)"""
    library = _library(like)
    if library == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return cupy.cuda.get_current_stream().ptr
    return None


def _torch_door():
    """What the extension module takes PyTorch's CUDA tensors with, once torch is imported
    (arrays.c says why): torch.Tensor, torch.utils.dlpack.to_dlpack, and the handle of the
    current stream of a device."""
    import torch
    import torch.utils.dlpack
    current = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if current is None:
        def current(device):
            return torch.cuda.current_stream(device).cuda_stream
    return torch.Tensor, torch.utils.dlpack.to_dlpack, current


class _AxisError(ValueError, IndexError):
    """An axis out of range where NumPy is not installed: numpy.exceptions.AxisError's bases,
    message and attributes."""

    def __init__(self, axis, ndim, msg_prefix=None):
        self.axis, self.ndim = axis, ndim
        message = f"axis {axis} is out of bounds for array of dimension {ndim}"
        super().__init__(f"{msg_prefix}: {message}" if msg_prefix else message)


def _axis_error(axis, ndim, prefix):
    """The exception for axis= out of range, as NumPy raises it: numpy.exceptions.AxisError
    where NumPy is installed (imported only now, on the error's path)."""
    try:
        from numpy.exceptions import AxisError
    except ImportError:
        try:
            from numpy import AxisError  # NumPy before 1.25
        except ImportError:
            AxisError = _AxisError
    return AxisError(axis, ndim, f"dlscan.{prefix}")


def _is_mpi(group):
    """An mpi4py communicator, or an object that gathers as one does (Get_rank, Get_size,
    Allgather of buffers)."""
    return hasattr(group, "Allgather") and hasattr(group, "Get_rank")


def _group_ranks(group):
    """group=: (its rank, its ranks, 1 where it gathers device memory as it is: a
    torch.distributed process group; an mpi4py communicator gathers host memory)."""
    if _is_mpi(group):
        return group.Get_rank(), group.Get_size(), 0
    import torch.distributed as dist
    return dist.get_rank(group), dist.get_world_size(group), 1


class _DeviceBytes:
    """nbytes of device memory at an address, for torch.as_tensor (no copy)."""

    def __init__(self, address, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                         "data": (address, False), "strides": None}


def _group_all_gather(group, send, recv, nbytes, on_device, stream):
    """A scan across ranks' exchange: every rank's nbytes at send into recv, in rank order. Host
    memory for an mpi4py communicator (the module stages device memory); for a torch.distributed
    group, device memory (CUDA tensors, on the call's stream) or host memory (CPU tensors)."""
    import ctypes
    if _is_mpi(group):
        ranks = group.Get_size()
        group.Allgather((ctypes.c_char * nbytes).from_address(send),
                        (ctypes.c_char * (nbytes * ranks)).from_address(recv))
        return
    import torch
    import torch.distributed as dist
    ranks = dist.get_world_size(group)
    if not on_device:
        mine = torch.frombuffer((ctypes.c_char * nbytes).from_address(send), dtype=torch.uint8)
        everyone = torch.frombuffer((ctypes.c_char * (nbytes * ranks)).from_address(recv),
                                    dtype=torch.uint8)
        dist.all_gather_into_tensor(everyone, mine, group=group)
        return
    mine = torch.as_tensor(_DeviceBytes(send, nbytes), device="cuda")
    everyone = torch.as_tensor(_DeviceBytes(recv, nbytes * ranks), device="cuda")
    with torch.cuda.stream(torch.cuda.ExternalStream(stream) if stream else torch.cuda.default_stream()):
        dist.all_gather_into_tensor(everyone, mine, group=group)


_dlscan._setup(_empty, _dtype_name, _stream_handle, _current_stream, _torch_door, _axis_error,
               _group_ranks, _group_all_gather)
