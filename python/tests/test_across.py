"""test_across.py: scans across ranks from Python (group=) on NumPy arrays, against numpy of the
whole array. Ranks are threads of this process joined by a communicator of this file's own that
gathers as mpi4py's does (Get_rank, Get_size, Allgather of buffers), every type and operator,
slices of uneven lengths, empty ones among them; then, where mpi4py and mpiexec are installed, the
same through real MPI processes (mpiexec -n 3). Selects across ranks (select with group=), by
flags and by predicate, against numpy's selection of the whole array. The refusals: group with
axis, keys or offsets, and a communicator whose all-gather fails."""

import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

import dlscan
from reference import OPS, TYPES, random_array, scan

FUNCTIONS = {"sum": dlscan.cumsum, "min": dlscan.cummin, "max": dlscan.cummax}


class ThreadComm:
    """One rank's view of a communicator of threads: Allgather as mpi4py's, of bytes."""

    def __init__(self, shared, rank):
        self.shared, self.rank = shared, rank

    def Get_rank(self):
        return self.rank

    def Get_size(self):
        return self.shared["ranks"]

    def Allgather(self, send, recv):
        shared = self.shared
        if shared.get("fail"):
            raise RuntimeError("this communicator fails on purpose")
        shared["values"][self.rank] = bytes(memoryview(send))
        shared["barrier"].wait()
        memoryview(recv).cast("B")[:] = b"".join(shared["values"])
        shared["barrier"].wait()


def across_threads(slices, run):
    """run(x, comm) on one thread per slice; returns their results in rank order."""
    shared = {"ranks": len(slices), "values": [b""] * len(slices),
              "barrier": threading.Barrier(len(slices))}
    results, errors = [None] * len(slices), []

    def rank_main(rank):
        try:
            results[rank] = run(slices[rank], ThreadComm(shared, rank))
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)
            shared["barrier"].abort()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(len(slices))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def split(x, rng, ranks):
    """x in `ranks` slices of random lengths, empty ones possible."""
    cuts = np.sort(rng.integers(0, len(x) + 1, ranks - 1))
    return np.split(x, cuts)


@pytest.mark.parametrize("ranks", [1, 2, 3, 5])
@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_across_threads_every_type_and_operator(ranks, dtype, op, exclusive):
    if op == "sum" and dtype == "float16":
        pytest.skip("a float16 sum's prefix crosses each rank rounded to float16 (dlscan.h)")
    rng = np.random.default_rng()
    x = random_array(rng, dtype, int(rng.integers(0, 3000)))
    out_dtype = np.cumsum(np.zeros(1, dtype)).dtype if op == "sum" else np.dtype(dtype)
    initial = 3 if op == "sum" and out_dtype.kind != "b" else None

    def run(part, comm):
        total = np.zeros(1, out_dtype)
        out = FUNCTIONS[op](part, exclusive=exclusive, initial=initial, total=total, group=comm)
        return out, total[0]

    results = across_threads(split(x, rng, ranks), run)
    want = scan(x, op, out_dtype, exclusive=exclusive, initial=initial)
    got = np.concatenate([r[0] for r in results])
    np.testing.assert_array_equal(got, want)
    whole = scan(x, op, out_dtype, initial=initial)
    for _, total in results:
        if len(x):
            assert total == whole[-1]


@pytest.mark.parametrize("ranks", [1, 2, 3, 5])
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
@pytest.mark.parametrize("by", ["flags", "predicate"])
def test_select_across_threads(ranks, dtype, by):
    rng = np.random.default_rng()
    x = random_array(rng, dtype, int(rng.integers(0, 3000)))
    flags = rng.integers(0, 2, len(x)).astype(np.uint8)
    value = np.sort(x)[len(x) // 2] if len(x) else 0
    keep = flags != 0 if by == "flags" else x >= value
    parts = split(np.arange(len(x)), rng, ranks)

    def run(index, comm):
        if by == "flags":
            return dlscan.select(x[index], flags[index], group=comm)
        return dlscan.select(x[index], predicate=">=", value=value, group=comm)

    results = across_threads(parts, run)
    np.testing.assert_array_equal(np.concatenate([r[0] for r in results]), x[keep])
    before = 0
    for index, (selected, count, offset, total) in zip(parts, results):
        assert count == len(selected) == int(keep[index].sum())
        assert offset == before and total == int(keep.sum())
        before += count


def test_select_across_refusals_and_a_failing_all_gather():
    comm = ThreadComm({"ranks": 1}, 0)
    with pytest.raises(TypeError, match="flags or predicate"):
        dlscan.select(np.arange(4, dtype=np.int32), group=comm)
    shared = {"ranks": 2, "values": [b"", b""], "barrier": threading.Barrier(1), "fail": True}
    out = np.full(4, -1, np.int64)
    with pytest.raises(dlscan.Error, match="on purpose"):
        dlscan.select(np.arange(4, dtype=np.int64), predicate=">", value=1, out=out,
                      group=ThreadComm(shared, 0))


def test_group_refuses_axis_keys_offsets():
    comm = ThreadComm({"ranks": 1}, 0)
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    for kwargs in ({"axis": 1}, {"keys": np.zeros(6, np.int32)}, {"offsets": np.array([0, 6])}):
        with pytest.raises(ValueError, match="group with"):
            dlscan.cumsum(x, group=comm, **kwargs)


def test_a_failing_all_gather_is_an_error_with_its_reason():
    shared = {"ranks": 2, "values": [b"", b""], "barrier": threading.Barrier(1), "fail": True}
    out = np.full(4, -1, np.int64)
    with pytest.raises(dlscan.Error, match="on purpose"):
        dlscan.cumsum(np.arange(4, dtype=np.int64), out=out, group=ThreadComm(shared, 0))
    assert (out == -1).all()


MPI_SCRIPT = """
import numpy as np, dlscan
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, ranks = comm.Get_rank(), comm.Get_size()
rng = np.random.default_rng(7)
x = rng.integers(-1000, 1000, 10000).astype(np.int64)
cuts = np.sort(rng.integers(0, len(x) + 1, ranks - 1))
part = np.split(x, cuts)[rank]
total = np.zeros(1, np.int64)
out = dlscan.cumsum(part, exclusive=True, initial=5, total=total, group=comm)
whole = np.concatenate([[5], 5 + np.cumsum(x)])
start = 0 if rank == 0 else cuts[rank - 1]
assert (out == whole[start:start + len(part)]).all(), rank
assert total[0] == whole[-1]
kept, count, offset, everyone = dlscan.select(part, predicate="<", value=0, group=comm)
assert (kept == part[part < 0]).all() and count == len(kept), rank
assert offset == (x[:start] < 0).sum() and everyone == (x < 0).sum(), rank
"""


@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec here")
def test_across_mpi_processes():
    pytest.importorskip("mpi4py")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    done = subprocess.run(["mpiexec", "-n", "3", sys.executable, "-c", MPI_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr  # every rank asserts its slice
