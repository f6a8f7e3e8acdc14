# `and` / `or` with host values beside IR: every operand is evaluated and each is a term of
# TIRx's T.And / T.Or (host values as T.bool), a deciding host value first included; a
# T.constexpr(...) operand short-circuits as Python's `and` does; host values alone are Python's.
# A host-true assert stays as `assert T.bool(True)`.
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
    e = off and tx < 3
    g = T.constexpr(off) and tx < 3
    h = T.constexpr(flag) and (tx < 50 or tx < 8)
    k = tx > 60 and T.constexpr(flag)
    A[tx] = T.Select(e or g or h or k, A[tx], 9.0)
    assert 64 % 32 == 0, "whole warps"
