# A comparison compared with a bool: TIRx prints `(a > b) == up` as `a > b == up` (the
# parentheses dropped); its text loads as TIRx meant it, and tirx prints the parentheses.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    tx = T.cuda.thread_idx("x")
    up = (tx & 4) == 0
    a = A[tx]
    b = A[63 - tx]
    if (a > b) == up:
        B[tx] = b
    else:
        B[tx] = a
    if (a <= 3) != (tx < 8):
        B[tx] = B[tx] + 100
