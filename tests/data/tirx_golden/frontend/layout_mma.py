# The CUDA layout factories: MMA shared-memory layouts (swizzled atoms tiled to the tensor) and
# a tensor-memory datapath layout, built while the kernel is parsed.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64, 64), "float16")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tx = T.cuda.thread_idx("x")
    S = T.alloc_shared((64, 64), "float16", layout=T.cuda.layout.mma_shared_layout("float16", 3, (64, 64)))
    K = T.alloc_shared((2, 64, 32), "float32", layout=T.cuda.layout.mma_shared_layout("float32", 1, (2, 64, 32)))
    N = T.alloc_shared((64, 64), "float16", layout=T.cuda.layout.mma_shared_layout("float16", 0, (64, 64)))
    P = T.alloc_shared((16, 128), "float16", layout=T.TileLayout(T.S[8, 64]).tile_to([16, 128], [8, 64]))
    Q = T.alloc_shared((8, 8), "float16", layout=T.TileLayout(T.S[(2, 4, 8) : (4, 1, 8)] + 0).canonicalize())
    S[tx // 2, tx % 64] = A[tx // 2, tx % 64]
    N[tx // 2, tx % 64] = S[tx // 2, tx % 64]
    P[tx // 8, tx % 128] = N[tx // 2, tx % 64]
    Q[tx // 16, tx % 8] = P[tx // 8, tx % 128]
    K[0, tx // 2, tx % 32] = T.float32(0)
    T.cuda.cta_sync()
    A[tx // 2, tx % 64] = Q[tx // 16, tx % 8]
