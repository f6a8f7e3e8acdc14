# T.select and `a if c else b` on an IR condition build T.if_then_else; T.Select is the node.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), T.int32), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    A[0] = i if i < 3 else n
    A[1] = T.select(i < 3, i, n)
    A[2] = T.if_then_else(i < 3, i, n)
    A[3] = T.Select(i < 3, i, n)
    A[4] = 1 if T.bool(True) else 2
    A[5] = T.if_then_else(T.bool(True), i, n)
    A[6] = (i + 0) if (i < 2) else (n * 1)
    A[7] = T.if_then_else(i < 0, T.int32(1) + T.int32(2), n)
    A[8] = 7 if i > 0 else 8
