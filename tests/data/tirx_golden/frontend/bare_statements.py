# Expression statements as TIRx's emit_ treats them: a literal is evaluated (`7`, `1.5`, `True`),
# an integer zero is the no-op TIRx drops (`0`, `False`, `T.int64(0)`), a scalar variable alone is
# inert; a region frame written as a statement (`T.launch_thread(tag, n)`, `T.region(op, args,
# body_params=[v])`) opens a region around the rest of the block.
# ruff: noqa: B018
from tirx.script import tirx as T

tx = T.dynamic("tx", "int32")


@T.function
def f(A: T.Tensor((128,), "float32"), n: T.int32):
    T.launch_thread("blockIdx.x", 1)
    T.region("tirx.launch_thread", ["threadIdx.x", 128], body_params=[tx])
    7
    1.5
    True
    0
    False
    T.int64(0)
    n
    x = n + tx
    x
    A[0]
    A[tx] = A[tx] + T.float32(1)
