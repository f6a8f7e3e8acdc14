# TIRx's LLVM vector ops: results typed from the vectors (masked_load's ty= is its result).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
    base = T.cuda.thread_idx("x") * 4
    v = T.masked_load(A, base, T.Ramp(base, 1, 4) < T.Broadcast(n, 4), ty="float32x4")
    w = T.vector_combine(T.vector_high(v), T.vector_low(v))
    T.masked_store(B, w, base, T.Ramp(base, 1, 4) < T.Broadcast(n, 4))
    s = T.vector_combine(A[0], A[1])
    k = T.vscale()
