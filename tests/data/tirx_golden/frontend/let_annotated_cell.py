# Held-out round 12: `part: T.let = T.local_scalar(...)` names the cell, as TIRx does: the
# accumulation `part = part + x` stores to it (tirx once bound the cell's first value and the
# loop never accumulated: a silent wrong result).
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), "float32"), B: T.Tensor((2,), "float32")):
    part: T.let = T.local_scalar("float32", T.float32(0))
    for k in range(8):
        part = part + A[k]
    B[0] = part
    q: T.let[T.float32] = T.local_scalar("float32", T.float32(1))
    q = q * T.float32(3.0)
    B[1] = q
