# Held-out round 12: an operator of two int32 literals that does not fold (it overflows, or a
# shift past the width) prints as TIRx's constructor, `T.Add(2147483647, 1)`, `~5` as
# `T.BitwiseNot(5)`; `T.cast` of exactly 0 or 1 to bool folds, other values stay a Cast.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), "int32"), L: T.Tensor((2,), "int64"), B: T.Tensor((8,), "bool")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[0] = T.Add(2147483647, 1)
    A[1] = T.Sub(-2147483648, 1)
    A[2] = T.Mul(65536, 65536)
    A[3] = T.FloorDiv(-2147483648, -1)
    A[4] = T.LShift(1, 31)
    A[5] = T.BitwiseNot(5)
    A[6] = T.RShift(1, 40)
    L[0] = T.Add(T.int64(9223372036854775807), T.int64(1))
    B[0] = T.cast(T.int32(0), "bool")
    B[1] = T.cast(T.int32(1), "bool")
    B[2] = T.cast(T.int32(5), "bool")
    B[3] = T.cast(T.float32(1.0), "bool")
    B[4] = T.cast(T.float32(0.5), "bool")
    B[5] = T.cast(T.uint8(0), "bool")
    B[6] = T.Cast("bool", 0)
