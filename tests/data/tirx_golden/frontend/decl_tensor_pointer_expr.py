# T.decl_tensor over a pointer expression (an element's address, a byte offset), in host code
# and inside the device entry; the view's pointer is used later as row.data.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8, 32), "int32"), B: T.Tensor((64,), "float32")):
    row3 = T.decl_tensor(T.address_of(A[3, 0]), ty_args=[T.Tensor((32,), "int32")])
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    row3[tx] = tx
    tail = T.decl_tensor(T.address_of(B[32]), ty_args=[T.Tensor((32,), "float32")])
    tail[tx] = T.Cast("float32", row3[tx])
    T.evaluate(T.address_of(tail[1]))
