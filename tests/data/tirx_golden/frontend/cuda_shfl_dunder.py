# TIRx's CUDA-named warp shuffles (mask, value, lane, width) and __activemask.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    t = T.cuda.thread_idx("x")
    v: T.float32 = A[t]
    for s in T.unroll(0, 5):
        v = v + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v, 16 >> s, 32)
    up = T.cuda.__shfl_up_sync(T.uint32(0xFFFFFFFF), t, 1, 8)
    dn = T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), t, 2, 16)
    src = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), t, 3, 32)
    B[t] = up + dn + src + T.Cast("int32", T.cuda.__activemask() & T.uint32(1))
    A[t] = v
