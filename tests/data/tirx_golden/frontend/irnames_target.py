# T.target as TIRx's users attach one: a function attribute (T.func_attr({"target": T.target(...)})),
# printed with TIRx's CUDA defaults filled in; tirx keeps it as the attribute (it still picks the
# target when compiling).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.int32)):
    T.func_attr({"target": T.target({"kind": "cuda", "arch": "sm_90a"})})
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[0] = 1
