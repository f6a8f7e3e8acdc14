# T.meta_var of Python containers: a list of ints and a tuple of tensors stay Python values in
# both TIRx and tirx (indexing them builds no IR). A scalar differs on purpose: TIRx binds
# `m = T.meta_var(3)` (its meta_var is the identity), tirx keeps 3 (docs/tirx_compat.md).
from tirx.script import tirx as T

COLS = [1, 2, 5]


@T.function
def f(A: T.Tensor((8,), T.int32), B: T.Tensor((8,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    ks = T.meta_var(COLS)
    A[ks[0]] = ks[1]
    bufs = T.meta_var((A, B))
    bufs[0][6] = bufs[0][ks[2]] + 1
    bufs[1][0] = bufs[1][ks[0]]
    A[len(ks)] = A[ks[-1]] * ks[-2]
