# A module of two functions (T.ir_module with module attrs, a call between functions), typed
# parameters (T.Prim, T.PrimType, T.TensorMap handle), a NoneType return, T.decl_scalar,
# a call between the module's functions and TIRx's T.Let(body, where={v: value}) (printed with
# v = T.dynamic(...) in the body): the tirx frontend builds what TIRx's text loads to.
from tirx.script import tirx as T


@T.ir_module
class Mod:
    T.module_attrs({"note": "golden"})

    @T.function
    def helper(x: T.Prim("int32"), y: T.PrimType("int32")) -> T.int32:
        return x * y + 1

    @T.function
    def main(A: T.Tensor((8,), "int32"), D: T.Ptr(T.int32)) -> T.NoneType():
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
        tx = T.cuda.thread_idx("x")
        s = T.decl_scalar("int32", D, "global")
        A[tx] = Mod.helper(A[tx], 2) + s
        v = T.Var("v", "int32")
        A[0] = T.Let(v + 1, where={v: A[1]})


f = Mod
