# Where elements land: int32 tensors stored through a column-major parameter layout, a
# 128-byte-swizzled MMA shared layout and a strided outer swizzle, read back raw through flat
# views of the same storage (tests/test_layout_gpu.py runs TIRx's CUDA of it against tirx's).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64, 64), "int32", layout=T.TileLayout(T.S[(64, 64) : (1, 64)])), B: T.Tensor((4224,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tx = T.cuda.thread_idx("x")
    S = T.alloc_shared((64, 64), "int32", layout=T.cuda.layout.mma_shared_layout("float32", 3, (64, 64)))
    W = T.alloc_shared((8, 16), "int32", layout=T.ComposeLayout(1, 2, 3, T.TileLayout(T.S[(8, 16) : (1, 8)]), swizzle_inner=False))
    for k in range(32):
        S[tx // 2, tx % 2 * 32 + k] = A[tx // 2, tx % 2 * 32 + k] * 3 + k
    W[tx // 16, tx % 16] = tx
    T.cuda.cta_sync()
    Sf = T.decl_tensor(S.data, ty_args=[T.Tensor((4096,), "int32")])
    Wf = T.decl_tensor(W.data, ty_args=[T.Tensor((128,), "int32")])
    for k in range(32):
        B[tx * 32 + k] = Sf[tx * 32 + k]
    B[4096 + tx] = Wf[tx]
