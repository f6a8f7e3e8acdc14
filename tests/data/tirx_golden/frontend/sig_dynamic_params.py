# Parameters named by shapes (TIRx's rules): a scalar parameter that later tensor shapes use
# (printed `n = T.dynamic(...)` before the code and `n: n`), a shape symbol bound by a LATER
# parameter (`A: T.Tensor((m,)), m: T.int32`: the annotations are strings, evaluated in order,
# and a name that is a later scalar parameter becomes that parameter), and an external
# T.dynamic symbol adopted by a parameter annotated with it (`k: k`).
from __future__ import annotations

from tirx.script import tirx as T

k = T.dynamic("k", "int64")


@T.function
def f(
    n: T.int32,
    A: T.Tensor((n,), "float32"),  # noqa: F821
    B: T.Tensor((m, n + 1), "float32"),  # noqa: F821
    m: T.int32,
    C: T.Tensor((k,), "float32"),
    k: k,
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    if i < n:
        A[i] = B[0, i] + T.float32(m)
    if T.int64(i) < k:
        C[i] = T.float32(1)
