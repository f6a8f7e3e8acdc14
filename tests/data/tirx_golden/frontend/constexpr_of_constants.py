# `T.constexpr(...)` of an expression of constants (a tensor's static shape compared) is its
# value, as in TIRx; a dtype compares with its name.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8, 16), "float32"), B: T.Tensor((6,), "int32")):
    if T.constexpr(A.shape[0] == 8):
        B[0] = 1
    if T.constexpr(A.shape[1] != 16):
        B[1] = 2
    if T.constexpr(A.shape[0] * 2 == A.shape[1]):
        B[2] = 3
    if T.constexpr(A.dtype == "float32" and A.shape[0] < 10):
        B[3] = 4
    if T.constexpr(A.dtype == "float16"):
        B[4] = 5
    if A.shape[0] < 10:
        B[5] = 6
