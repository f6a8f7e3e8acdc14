# T.StringImm as the name or a string operand of extern/packed calls, and T.make_node by TIRx's
# type key (builds the node itself: here an IntImm stored into A).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.int32), B: T.Tensor((8,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[0] = T.call_extern("foo", T.StringImm("x"), A[1], ty=T.int32)
    A[1] = T.call_pure_extern(T.StringImm("bar"), A[2], ty=T.int32)
    T.evaluate(T.call_packed(T.StringImm("f"), A[0]))
    A[2] = T.make_node("ir.IntImm", ty=T.PrimType("int32"), value=3)
    B[0] = T.make_node("ir.FloatImm", ty=T.PrimType("float32"), value=1.5) + B[1]
