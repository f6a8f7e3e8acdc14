# A @T.jit optional tensor specialized to None: the parameter stays, typed T.NoneType(), and the
# branch that reads it is gone (the compiled function takes None there).
from __future__ import annotations

from tirx.script import tirx as T


@T.jit
def kern(A: T.Tensor((N,), "float32"), Bias: T.Optional(T.Tensor((N,), "float32")), B: T.Tensor((N,), "float32"), *,
         N: T.constexpr):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=N))
    t = T.cuda.thread_idx("x")
    if T.constexpr(Bias is not None):
        B[t] = A[t] + Bias[t]
    else:
        B[t] = A[t]


f = kern.specialize(N=32, Bias=None)
