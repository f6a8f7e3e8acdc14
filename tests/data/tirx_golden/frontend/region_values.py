# A tensor sliced in an expression is TIRx's region value: indexed with one index per
# dimension it reads the element at the region's offset (`z[i, j]` is `A[2 + i, 4 + j]`).
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8, 16), "float32"), B: T.Tensor((64,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    z = A[2:6, 4:]
    row = A[3, 0:8]
    whole = A[:, :]
    B[tx] = z[0, 1] + z[tx % 4, 2] + row[0, tx % 8] + whole[tx % 8, 15]
