# TIRx's Python API constructors with TIRx's argument order: IntImm(dtype, value),
# FloatImm(dtype, value), the expression Let(var, value, body) and const(value, dtype).
from __future__ import annotations

from tirx import ir
from tirx import tirx as tx
from tirx.script import tirx as T

K = ir.IntImm("int32", 6)
HALF = ir.FloatImm("float32", 0.5)
C64 = tx.const(1 << 40, "int64")


def cube(v):
    t = tx.Var("t", "float32")
    return tx.Let(t, v, t * t * t)


@T.function
def f(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "int64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    A[i] = cube(A[i]) * HALF + T.Cast("float32", K)
    B[i] = B[i] + C64
