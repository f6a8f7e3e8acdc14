# Unary minus: a constant is negated, an expression is `x * -1`.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.int32), B: T.Tensor((8,), T.float32), H: T.Tensor((8,), T.float16)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
    i = T.cuda.thread_idx("x")
    A[0] = -i
    A[1] = -T.int32(3)
    A[2] = 0 - i
    B[0] = -B[1]
    B[2] = -T.float32(2.5)
    H[0] = -H[1]
