# Layouts with thread and tensor-memory axes, replicas and offsets; the CUDA factories.
from tirx.script import tirx as T

SWZ: T.Layout = T.ComposeLayout(0, 2, 3, T.TileLayout(T.S[8, 8]), swizzle_inner=True)  # a closure value

@T.function
def f(
    A: T.Tensor(
        (4, 8),
        "float32",
        layout=T.TileLayout(
            T.S[(4, 8) : (1 @ T.cuda.Axis.laneid, 1)]
            + T.R[2 : 4 @ T.cuda.Axis.laneid]
            + 2 @ T.cuda.Axis.warpid
            + 5
        ),
    ),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    S = T.alloc_shared((8, 64), "float16", layout=T.cuda.layout.mma_atom_layout("float16", 3))
    U = T.alloc_shared((16, 32), "float16", layout=T.TileLayout(T.S[(16, 32) : ("m", (16, "m"))]))
    V = T.alloc_local(
        (2, 4),
        "float32",
        layout=T.TileLayout.from_iters([T.Iter(2, 4, "m"), T.Iter(4, 1, "m")], [], {"m": 0}),
    )
    D = T.alloc_shared((8, 8), "int32", layout=SWZ)
    E = T.alloc_shared((64,), "int32", layout=T.TileLayout(T.S[64:1] + 2 @ T.Axis.get("m")))
    S[0, tx] = T.float16(0)
    U[tx % 16, tx] = T.float16(1)
    V[1, 2] = T.float32(2)
    D[tx // 8, tx % 8] = tx
    E[tx] = tx
