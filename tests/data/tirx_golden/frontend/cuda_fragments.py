# Accumulator-fragment helpers, Apache-TVM spellings (T.ptx_legacy) and s_tir's raw cp.async.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((256,), T.float16), C: T.Tensor((16, 16), T.float32), D: T.Tensor((64,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    S = T.alloc_shared((256,), "float16")
    a = T.alloc_local((8,), "float16")
    b = T.alloc_local((4,), "float16")
    c = T.alloc_local((8,), "float32")
    T.s_tir.cp_async_raw(S.data, 0, A.data, 0, 16)
    T.s_tir.cp_async_raw(S.data, 16, A.data, 32, 8)
    T.s_tir.cp_async_raw.legacy(S.data, 8, A.data, 8, 16, elem_dtype="float16")
    T.cuda.mma_fill(8, c.data, 0, ty="float32")
    T.cuda.mma_store(16, 16, C.data, c.data, 0, 16, ty="float32")
    T.ptx_legacy.ldmatrix(False, 4, ".b16", a.data, 0, S.data, 8)
    T.ptx_legacy.mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", a.data, 0, b.data, 0, c.data, 0, False)
    T.cuda.bmma_sync(D.data, 0, D.data, 1, D.data, 2, D.data, 0)
