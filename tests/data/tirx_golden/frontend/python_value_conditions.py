# A Python value as an `if` / `elif` / `while` condition is the IR's constant and every branch
# is built (`if flag:` -> `if T.bool(True):`, `if n:` -> `if 3:`, `while False:` kept); only
# `if T.constexpr(c):` itself decides while parsing (`if not T.constexpr(c):` does not). Names
# bound in a built branch end with it; a decided branch is straight-line code.
from __future__ import annotations

from tirx.script import tirx as T

flag = True
off = False
n = 3


@T.function
def f(A: T.Tensor((16,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
    tx = T.cuda.thread_idx("x")
    if flag:
        A[tx] = 1.0
    else:
        A[tx] = 2.0
    if off:
        A[tx] = 3.0
    elif n:
        A[tx] = 4.0
    if not T.constexpr(flag):
        A[tx] = 5.0
    if n == 3:
        v = A[tx] + 1.0
        A[tx] = v
    if T.constexpr(n == 4):
        A[tx] = T.max(A[tx], 0.0)
    else:
        w = A[tx] * 2.0
    A[tx] = w
    while off:
        A[tx] = 6.0
    A[tx] = 7.0 if flag else 8.0
