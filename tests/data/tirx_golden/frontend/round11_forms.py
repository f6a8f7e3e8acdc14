# Held-out round 11's forms: a tensor type over a pointer takes the pointer's scope
# (`T.Tensor(..., data=p)`), `T.select` with a constant condition picks its arm, a captured
# numpy number is the Python number, and a dtype equals its name (`A.dtype == "float32"`).
from __future__ import annotations

import numpy as np

from tirx.script import tirx as T

NP_I = np.int64(4)
NP_F = np.float32(0.5)
NP_D = np.float64(0.25)
NP_BIG = np.int64(2**40)
TABLE = np.arange(4, dtype=np.int32)
USE_FIRST = False


@T.function
def f(A: T.Tensor((64,), "float32"), B: T.Tensor((8,), "int32"), L: T.Tensor((2,), "int64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    S = T.alloc_shared((64,), "float32")
    p = T.reinterpret(S.data, ty=T.Ptr(T.uint32, "shared"))
    U = T.decl_tensor(p, ty_args=[T.Tensor((64,), "uint32", data=p)])
    V = T.decl_tensor(p, ty_args=[T.Tensor((64,), "uint32", data=p, scope="global")])
    U[tx] = T.uint32(7)
    V[tx + 32] = T.uint32(8)
    T.cuda.cta_sync()
    A[tx] = S[tx] * NP_F + NP_D
    if tx == 0:
        B[0] = B[0] * 3 + NP_I
        B[1] = T.select(USE_FIRST, B[2], B[3])
        B[2] = T.select(T.bool(True), B[4], 5)
        B[3] = T.select(tx < 1, B[4], 5)
        B[4] = B[4] + TABLE[2]
        L[0] = L[0] + NP_BIG
        if T.constexpr(A.dtype == "float32"):
            B[5] = 6
        if T.constexpr(A.dtype != "float32"):
            B[6] = 7
