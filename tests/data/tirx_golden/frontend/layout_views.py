# Tensor views: view (reshape), permute and sub (narrow / drop) declare tensors over the same
# storage whose layouts address the same elements.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64, 64), "float16"), B: T.Tensor((8, 8, 64), "float16")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tx = T.cuda.thread_idx("x")
    S = T.alloc_shared((64, 64), "float16", layout=T.cuda.layout.mma_shared_layout("float16", 3, (64, 64)))
    V = S.view(8, 8, 64)
    P = A.permute(1, 0)
    Q = A.view(4096)
    U = S.sub[0:8, :]
    W = A.sub[3, 0:32]
    X = B.sub[1, 2:4, 16:48]
    Y = S.permute(1, 0)
    Z = P.view(-1)
    C = T.alloc_shared((16, 32), "float16", layout=T.TileLayout(T.S[(16, 32) : (1, 16)]))
    D = C.view(4, 4, 32)
    E = C.sub[4:8, 8:16]
    V[0, 1, tx % 64] = P[tx % 64, 2] + Q[tx] + U[1, 2] + W[4] + X[1, tx % 32] + Y[2, tx % 64] + Z[tx] + D[1, 2, 3] + E[1, 2]
