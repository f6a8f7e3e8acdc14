# An `if` decided while parsing (`if T.constexpr(...)`) stands for its branch in the
# enclosing block: a bare `T.device_entry(...)` in the branch takes the statements after the `if`
# too (held-out round 17: the store ran in host code, after an empty device entry).
from tirx.script import tirx as T

GRID = "param"
WIDE = False


@T.function
def f(A: T.Tensor((64,), "int32"), n: T.int32):
    if T.constexpr(GRID == "param"):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=n, block=32))
    else:
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    if T.constexpr(WIDE):
        A[tx] = 2
    elif T.constexpr(GRID != "param"):
        A[tx] = 3
    else:
        A[tx + 32] = 1
    A[tx] = A[tx] + 1
