# `and` / `or` with host values beside IR: once an IR operand comes, every operand is a term of
# TIRx's T.And / T.Or (host values as T.bool), also where the host value comes first and does not
# decide; host values alone are decided while parsing (as Python decides them).
from __future__ import annotations

from tirx.script import tirx as T

flag = True
off = False


@T.function
def f(A: T.Tensor((64,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    tx = T.cuda.thread_idx("x")
    if tx < 5 and flag:
        A[tx] = 1.0
    if flag and tx < 7:
        A[tx] = 2.0
    if tx < 9 or off:
        A[tx] = 3.0
    if tx < 2 and off:
        A[tx] = 8.0
    c = (tx < 3) and (tx > 1) and flag
    A[tx] = T.Select(c, 4.0, 5.0)
    d = off or tx == 6 or tx == 7
    A[tx] = T.Select(d, A[tx], 6.0)
