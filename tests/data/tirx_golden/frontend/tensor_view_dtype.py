# view(dtype) of tensors with layouts: packing halves into words rescales the strides and
# offset of a memory layout, unpacking multiplies them; a swizzled layout packs its tile.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((16, 32), "float16"), B: T.Tensor((16, 16), "uint32"), C: T.Tensor((64,), "uint8")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    S = T.alloc_shared((16, 32), "float16", layout=T.TileLayout(T.S[(16, 32) : (32, 1)]))
    Z = T.alloc_shared((64, 64), "float16", layout=T.cuda.layout.mma_shared_layout("float16", 3, (64, 64)))
    R = T.alloc_shared((8, 8), "uint32", layout=T.TileLayout(T.S[(8, 8) : (8, 1)]))
    if tx < 16:
        for j in range(32):
            S[tx, j] = A[tx, j]
    for j in range(64):
        Z[tx, j] = A[tx % 16, j % 32]
    T.cuda.cta_sync()
    W = S.view("uint32")
    Zw = Z.view("uint32")
    if tx < 8:
        for j in range(8):
            R[tx, j] = W[tx, j] ^ Zw[tx, j + 8]
    if tx < 16:
        for j in range(16):
            B[tx, j] = W[tx, j] + Zw[1, tx + j]
    T.cuda.cta_sync()
    H = R.view("uint8")
    C[tx] = H[tx % 8, tx]
