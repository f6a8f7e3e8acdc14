# Comparisons and min/max of constants fold; min(x, x) of one var is x; Select never folds.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), T.int32), B: T.Tensor((8,), T.float32), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    A[0] = T.Select(T.int32(3) < T.int32(4), 1, 2)
    A[1] = T.Select(T.float32(1.0) < T.float32(2.0), i, n)
    A[2] = T.min(T.int32(3), T.int32(4))
    A[3] = T.min(i, i) + T.max(i, 3) + T.max(4, 3)
    A[4] = T.min(5, i) + T.max(T.int32(2), T.int32(9))
    B[0] = T.min(B[1], B[1])
    B[2] = T.max(T.float32(1.0), T.float32(2.0))
