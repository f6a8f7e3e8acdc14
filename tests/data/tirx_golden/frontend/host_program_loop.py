# Host control flow around device entries: a host loop and condition launch an entry per
# iteration, a host scalar changes between two entries, an alignment fact on the host.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((4, 128), "float32"), B: T.Tensor((128,), "int32"), skip: T.int32):
    T.assume_aligned(A, 128)
    m: T.int32 = skip * 2
    for it in range(4):
        if skip != it:
            with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128)):
                t = T.cuda.thread_idx("x")
                A[it, t] = A[it, t] * T.float32(2) + T.Cast("float32", it)
    m = m + 1
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128)):
        B[T.cuda.thread_idx("x")] = m
