# A plain re-assignment in an `if` branch is a new binding that ends with the branch: the read
# after the `if` sees the value from before it (TIRx's meaning), in both branches and nested.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), "int32"), B: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    x = A[tx]
    B[tx] = 0
    if tx < 8:
        x = A[tx] * 2
        B[tx] = x
    else:
        x = A[tx] + 1
        if tx > 20:
            x = A[tx] * 3
            B[tx] = x
    B[tx] = B[tx] + x
