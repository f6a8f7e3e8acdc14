# A module's dynamic shape variables print at the file's top (n = T.dynamic(...)), shared by
# its functions, as TIRx prints them (a function alone prints def f[n](...)).
from __future__ import annotations

from tirx.script import tirx as T

n = T.dynamic("n", "int32")
m = T.dynamic("m", "int64")


@T.ir_module
class f:
    @T.function
    def scale(A: T.Tensor((n,), "float32"), factor: T.float32):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, 32), block=32))
        i = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")
        if i < n:
            A[i] = A[i] * factor

    @T.function
    def fill(B: T.Tensor((m, n), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        B[0, T.cuda.thread_idx("x")] = T.float32(1)
