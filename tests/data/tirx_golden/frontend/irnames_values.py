# TIRx's IR names in a kernel: T.Var / T.ptr annotations, T.Var + T.Bind, T.IntImm / T.FloatImm
# constants, a @T.meta_class helper object, T.Range bounds, T.PrimType return annotation.
from tirx.script import tirx as T


@T.meta_class
class Acc:
    def __init__(self, buf, k):
        self.buf = buf
        self.k = k

    @T.inline
    def add(self, v):
        self.buf[self.k] = self.buf[self.k] + v


@T.function
def f(
    A: T.Tensor((8,), T.int32),
    B: T.Tensor((8,), T.float32),
    n: T.Var("m", "int32"),
    p: T.ptr("float32", "shared"),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    x = T.Var("x", "int32")
    T.Bind(x, A[0] + n)
    A[1] = x
    A[2] = T.IntImm("int32", 3) + A[3]
    B[0] = T.FloatImm("float32", 1.5)
    c = T.IntImm("int32", 7)
    A[c] = T.IntImm("int32", 2)
    acc = Acc(A, 4)
    acc.add(5)
    r = T.Range(1, 5)
    for i in T.serial(r.begin, r.begin + r.extent):
        A[i] = A[i] + T.int32(0)
