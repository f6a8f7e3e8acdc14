# A comparison chain with a pair Python decides (40 <= 64) beside IR pairs: TIRx's conjunction of
# every pair, the constant one as T.bool, printed T.And(..., T.bool(True)).
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    tx = T.cuda.thread_idx("x")
    lo = 4
    if 0 < tx < 5:
        A[tx] = 1
    if lo <= tx < 40 <= 64:
        A[tx] = 2
    if -1 < tx != 17:
        A[tx] = A[tx] + 3
