# TIRx's host-side tiled TMA descriptor encoder; its options are keywords, printed sorted, defaults left out.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64, 64), T.float16), D: T.Tensor((128,), T.uint8), n: T.int32):
    r = T.cuda.tensormap_encode_tiled(D.data, A.data, 64, n, 128, 64, 64, 1, 1, descriptor_dtype="float16", rank=2,
                                      interleave=0, oob_fill=1, force_cu_dtype=5, l2_promotion=2)  # fmt: skip
    r2 = T.cuda.tensormap_encode_tiled(
        D.data, A.data, 64, 64, 1, descriptor_dtype="float32", rank=1, swizzle=3
    )
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    D[0] = T.Cast("uint8", r + r2)
