# `return 0` in a kernel is TIRx's early exit (CUDA `return;`).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((128,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    i = T.cuda.thread_idx("x")
    if i >= 100:
        return 0
    A[i] = 1
