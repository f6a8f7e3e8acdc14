# A loop from an int32 start to an int64 stop: the start is widened to int64, as TIRx widens it
# (held-out round 17: tirx refused the subtraction of mixed widths).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "int32"), n: T.int64, m: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    for j in range(m, n):
        A[j] = 1
    for k in range(m, n, 2):
        A[k] = 2
