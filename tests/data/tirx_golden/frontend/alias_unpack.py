# `alias = var` names the same var (no Bind); tuple unpacking is element-wise with the same rule.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), T.int32), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    bx = T.cuda.block_idx("x")
    alias = bx
    A[0] = alias + 1
    a, b = i, n
    A[1] = a + b
    c, d = i + 1, 5
    A[2] = c + d
    u2, v2 = b, a
    A[3] = u2 - v2
    t = i
    t = t + 1
    A[4] = t
    x = 3
    A[5] = x
    y = A[0]
    A[6] = y
    z = i + 0
    A[7] = z
    k = 2
    k = k + 1
    A[8] = k
