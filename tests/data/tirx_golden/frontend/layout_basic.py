# Layouts on tensors: a column-major parameter, a swizzled shared tile, a strided tile with an offset.
# (64 threads, each element written by one thread: in bounds and race-free on the GPU)
from tirx.script import tirx as T


@T.function
def f(
    A: T.Tensor((64, 64), "float16", layout=T.TileLayout(T.S[(64, 64) : (1, 64)])),
    B: T.Tensor((64,), "float32"),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    tx = T.cuda.thread_idx("x")
    S = T.alloc_shared(
        (8, 64), "float16", layout=T.ComposeLayout(1, 2, 4, T.TileLayout(T.S[8, 64] + 3), swizzle_inner=False)
    )
    M = T.alloc_shared((64,), "float32", layout=T.TileLayout(T.S[(4, 16) : (16, 3)] + 7))
    W = T.alloc_shared((8, 8), "float32", layout=T.TileLayout(T.S[(2, 4, 8) : (4, 1, 8)]))
    S[tx // 64, tx % 64] = A[0, tx]
    M[tx % 64] = B[tx % 64]
    W[tx % 8, tx // 8] = B[tx % 64]
    T.cuda.cta_sync()
    A[1, tx] = S[tx // 64, tx % 64]
    B[tx % 64] = M[tx % 64] + W[tx // 16, tx % 8]
