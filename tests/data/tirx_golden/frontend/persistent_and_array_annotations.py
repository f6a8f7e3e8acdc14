# @T.function(persistent=True), local tensors declared by annotation (acc: T.float32[4]), an
# allocation's attributes (printed attrs=, an int a typed constant) and alignment 64 (TIRx's
# default, printed as none).
from __future__ import annotations

from tirx.script import tirx as T


@T.function(persistent=True)
def f(A: T.Tensor((32,), "int32", align=64), B: T.Tensor((32,), "float32", align=16)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    frag: T.int32[2, 4]
    acc: T.float32[4]
    s = T.alloc_shared((32,), "float32", annotations={"p.tag": 3, "p.on": True, "p.f": 0.5, "p.s": "x"})
    tx = T.cuda.thread_idx("x")
    for i, j in T.grid(2, 4):
        frag[i, j] = i * 4 + j
    for k in range(4):
        acc[k] = T.float32(k)
    s[tx] = B[tx] + acc[1]
    A[tx] = frag[1, 3] + T.Cast("int32", s[tx])
