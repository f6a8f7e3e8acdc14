# Held-out round 11: a dtype called without a value is TIRx's unnamed variable (`v = T.int32()`),
# bound by an emitted `T.Bind` or by a `T.Let` (printed `T.dynamic("", ...)`).
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "float32")):
    v = T.int32()
    T.emit(T.Bind(v, A[0] + 3))
    A[1] = v
    w = T.int32()
    A[2] = T.Let(w * w + 1, where={w: A[3]})
    x = T.float32()
    B[0] = T.Let(x * T.float32(2.0), where={x: B[1]})
