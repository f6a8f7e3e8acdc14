# TIRx's host/device splitting boundary: a region whose body runs inline in a kernel.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    i = T.cuda.thread_idx("x")
    with T.device_scope():
        j = i * 2
        A[i] = j + 1
