# Integer folding keeps C semantics: no fold on overflow, floor vs trunc division, mod only on index types.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.int32), C: T.Tensor((8,), T.int64), D: T.Tensor((8,), T.uint8),
      E: T.Tensor((8,), T.int8)):  # fmt: skip
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    A[0] = T.int32(2147483647) + T.int32(1)
    A[1] = T.int32(-2147483648) - T.int32(1)
    A[2] = T.int32(65536) * T.int32(65536)
    A[3] = T.int32(7) // T.int32(-2)
    A[4] = T.int32(7) % T.int32(-2)
    A[5] = T.truncdiv(T.int32(-7), T.int32(2))
    A[6] = T.truncmod(T.int32(-7), T.int32(2))
    A[7] = T.floordiv(T.int32(-7), T.int32(2))
    A[8] = T.floormod(T.int32(-7), T.int32(2))
    A[9] = T.truncdiv(T.int32(-2147483648), T.int32(-1))
    A[10] = T.int32(-2147483648) // T.int32(-1)
    A[11] = T.int32(3) * T.int32(4) - T.int32(5)
    C[0] = T.int64(9223372036854775807) + T.int64(1)
    C[1] = T.int64(3000000000) * T.int64(3)
    D[0] = T.uint8(255) + T.uint8(1)
    D[1] = T.uint8(3) - T.uint8(4)
    D[2] = T.uint8(7) % T.uint8(3)
    D[3] = T.truncmod(T.uint8(7), T.uint8(3))
    D[4] = T.uint8(7) // T.uint8(3)
    E[0] = T.int8(100) + T.int8(100)
    E[1] = T.int8(100) + T.int8(20)
    E[2] = T.int8(-7) // T.int8(2)
    E[3] = T.int8(-7) % T.int8(2)
