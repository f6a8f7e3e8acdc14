# A T.meta_class holding registers and a scalar cell, written as TIRx's builder receipts
# (`T.alloc_local(...).value`, `T.local_scalar(...).value`): assigning the cell field in an
# @T.inline method (`self.count = 0`, `self.count = self.count + 1`) stores into the cell.
from __future__ import annotations

from tirx.script import tirx as T


@T.meta_class
class Ring:
    def __init__(self, n, dtype="float32"):
        self.n = n
        self.dtype = dtype
        self.regs = T.alloc_local((n,), dtype).value
        self.count = T.local_scalar("int32").value

    @T.inline
    def reset(self):
        self.count = 0
        for k in T.unroll(self.n):
            self.regs[k] = T.cast(0, self.dtype)

    @T.inline
    def push(self, v):
        self.regs[self.count % self.n] = self.regs[self.count % self.n] + v
        self.count = self.count + 1

    @T.inline
    def total(self):
        s = T.local_scalar(self.dtype, T.cast(0, self.dtype))
        for k in range(self.n):
            s += self.regs[k]
        return s


@T.function
def f(A: T.Tensor((32, 8), "float32"), B: T.Tensor((32,), "float32"), C: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    acc = Ring(4)
    acc.reset()
    for j in range(8):
        acc.push(A[tx, j] * T.float32(j + 1))
    B[tx] = acc.total()
    C[tx] = acc.count
