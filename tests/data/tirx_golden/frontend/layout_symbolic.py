# Layouts with symbolic extents, strides and offsets (a kernel parameter in the layout).
from tirx.script import tirx as T


@T.function
def f(n: T.int32, A: T.Tensor((4, 16), "float32", layout=T.TileLayout(T.S[(4, 16) : (1, 4)]))):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    tx = T.cuda.thread_idx("x")
    B = T.decl_tensor(A.data, ty_args=[T.Tensor((4, 16), "float32", layout=T.TileLayout(T.S[(4, 16) : (n, 1)] + n))])
    L = T.alloc_local((8,), "float32", layout=T.TileLayout(T.S[(2, 4) : (n @ T.cuda.Axis.laneid, 1)] + T.R[2 : 16 @ T.cuda.Axis.laneid]))  # noqa: F841
    B[tx // 16, tx % 16] = A[tx // 16, tx % 16]
