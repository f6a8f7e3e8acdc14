# Language-level names of T (loops, scalars, meta values, math helpers, warp/CTA reductions,
# extern calls) in one kernel: the tirx frontend builds what TIRx's printed text loads to.
from tirx.script import tirx as T


@T.macro
def bump(x, k):
    x[3, 0] = x[3, 0] + k


@T.function
def f(A: T.Tensor((64,), "float32"), B: T.Tensor((8, 8), "int32"), n: T.int32):
    T.func_attr({"tir.noalias": True})
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    tx = T.cuda.thread_idx("x")
    for i, j in T.grid(8, 8):
        B[i, j] = i * 3 + j
    for i in T.unroll(4):
        B[0, i] = T.shift_right(B[0, i], 1)
    for i in T.vectorized(4):
        B[1, i] = T.bitwise_not(B[1, i])
    for i in T.parallel(2):
        B[2, i] = T.bitwise_or(B[2, i], T.bitwise_xor(i, 3))
    s = T.local_scalar("float32")
    s = A[tx] * 2.0
    c = T.alloc_scalar("int32")
    T.assign(c, 5)
    sh = T.shared_scalar("float32")
    if tx == 0:
        sh = T.infinity(ty="float32")
    A[tx] = T.cuda.warp_sum(s) + T.cuda.warp_max(s) + T.cuda.warp_min(s)
    if T.logical_and(A[tx] > 1.0, T.logical_not(A[tx] < 2.0)):
        A[tx] = T.max_value(ty="float32")
    elif T.logical_or(n > 1, n < -1):
        A[tx] = T.min_value(ty="float32")
    bump(B, c)
    B[4, 0] = T.call_extern("abs", n, ty="int32")
    B[4, 1] = T.call_pure_extern("abs", n, ty="int32")
    T.static_assert(64 % 8 == 0, "64 rows of 8")
