# A plain-Python helper opening a loop frame, `with T.serial(0, n) as i:` (TIRx's builder frames):
# the loops land in the kernel, their variables named v.
from __future__ import annotations

from tirx.script import tirx as T


def emit_loop(out, n, fvalue):
    with T.serial(0, n) as i:
        T.tensor_store(out, [i], fvalue(i))


@T.function
def f(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    emit_loop(B, 32, lambda i: A[i] * 3.0)
    emit_loop(A, 16, lambda i: B[31 - i])
