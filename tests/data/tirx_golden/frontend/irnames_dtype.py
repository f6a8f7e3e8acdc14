# T.dtype / T.DataTypeImm as TIRx's users pass a dtype to extern and packed calls: a dtype-valued
# argument (a DataTypeImm node, printed T.dtype("...")).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.int32), H: T.Tensor((8,), T.float16), U: T.Tensor((8,), T.uint16)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[0] = T.call_extern("foo", T.dtype("float16"), A[1], ty=T.int32)
    A[1] = T.call_pure_extern("bar", T.DataTypeImm("int8x4"), ty=T.int32)
    T.evaluate(T.call_packed("f", T.dtype("float32"), A[2]))
    H[0] = T.reinterpret(U[0], ty=T.float16)
