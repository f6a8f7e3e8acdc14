# TIRx's packed conversions (pointer operands, TIRx's operand orders) and paired float32 math.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float16), C: T.Tensor((4,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    T.cuda.float22half2(T.address_of(B[0]), T.address_of(A[0]))
    T.cuda.float8tohalf8(T.address_of(A[0]), T.address_of(B[0]))
    T.cuda.half8tofloat8(T.address_of(B[0]), T.address_of(A[0]))
    x = T.cuda.fadd2_rn(T.cuda.make_float2(A[0], A[1]), T.cuda.make_float2(A[2], A[3]))
    y = T.cuda.fmul2_rn(x, x)
    C[0] = T.cuda.float2_x(y)
    C[1] = T.cuda.float2_y(y)
