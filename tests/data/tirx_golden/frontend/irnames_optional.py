# T.Optional(T.Tensor(...)) in a @T.jit signature, the parameter given (not None): the same
# parameter as a plain T.Tensor in both (specialized to None: jit_optional_none).
from __future__ import annotations

from tirx.script import tirx as T


@T.jit
def kern(A: T.Tensor((N,), "int32"), B: T.Optional(T.Tensor((N,), "int32")), *, N: T.constexpr):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[0] = B[0]
    A[1] = 2


f = kern.specialize(N=8)
