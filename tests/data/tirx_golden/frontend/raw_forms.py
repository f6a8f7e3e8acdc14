# TIRx's explicit constructors build the node as written, never folded.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), T.int32), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    A[0] = T.Add(i, 0)
    A[1] = T.Mul(3, 4)
    A[2] = T.Sub(i, 0) + T.Mul(i, 1)
    A[3] = T.Div(T.int32(7), T.int32(2)) + T.FloorDiv(i, 1) + T.Mod(i, 1) + T.FloorMod(7, 2)
    A[4] = T.Min(3, 4) + T.Max(i, i)
    A[5] = T.Select(T.And(T.bool(True), i < 4), 1, 2)
    A[6] = T.Select(T.Or(i < 4, T.bool(False)), 1, 2)
    A[7] = T.Select(T.Not(T.bool(True)), 1, 2)
    A[8] = T.Select(T.LT(3, 4), 1, 2) + T.Select(T.EQ(i, n), 1, 2)
    A[9] = T.BitwiseNot(5) + T.BitwiseAnd(5, 3) + T.LShift(i, 0) + T.RShift(8, 1)
    A[10] = T.Select(T.bool(True) and (i < 4), 1, 2)
    A[11] = T.Select(not (i < 4), 1, 2)
