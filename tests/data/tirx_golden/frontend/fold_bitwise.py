# Bitwise operators fold int32/int64 constants (a shift only when the result fits); x << 0 is x.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), T.int32), D: T.Tensor((8,), T.uint32), E: T.Tensor((8,), T.int8)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    A[0] = i << 0
    A[1] = 0 << i
    A[2] = i >> 0
    A[3] = T.int32(3) << T.int32(30)
    A[4] = T.int32(-8) >> T.int32(1)
    A[5] = T.int32(6) | T.int32(3)
    A[6] = T.int32(6) ^ T.int32(3)
    A[7] = T.int32(5) & T.int32(3)
    A[8] = (i | 0) + (i ^ 0) + (i & 0)
    A[9] = T.shift_left(i, 0) + T.bitwise_and(T.int32(12), T.int32(10))
    D[0] = T.uint32(5) & T.uint32(3)
    D[1] = T.uint32(1) << T.uint32(31)
    E[0] = T.int8(100) & T.int8(-3)
