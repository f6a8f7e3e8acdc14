# T.func_attr's "global_symbol" names a standalone public function (TIRx prints `def renamed` and
# drops the attribute); the other attributes stay.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "float32")):
    T.func_attr({"global_symbol": "renamed", "tir.noalias": True})
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    i = T.cuda.thread_idx("x")
    A[i] = A[i] * T.float32(2.0)
