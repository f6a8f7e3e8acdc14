# A name re-assigned in a loop body or branch that no later read observes (each iteration
# assigns before it reads): a new binding each time (val_1, val_2), as TIRx builds it.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    val = A[0]
    B[7] = val
    for k in range(4):
        val = A[k] * 2
        B[k] = val
        if k > 1:
            val = A[k] + 1
            B[k] = val
