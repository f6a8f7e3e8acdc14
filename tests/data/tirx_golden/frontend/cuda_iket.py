# TIRx's IKET annotations through the T.cuda.iket namespace (printed as T.cuda.iket_*).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    T.cuda.iket.mark("m0")
    T.cuda.iket.mark("m1", A[0])
    t = T.cuda.iket.range_start("r")
    T.cuda.iket.range_end(t)
    T.cuda.iket.range_push("p", A[1])
    T.cuda.iket.range_pop()
    t2 = T.cuda.iket.sentinel_token("s")
    T.cuda.iket.range_end(t2, A[2])
    A[3] = T.cuda.iket.official_event(7)
    T.cuda.iket_mark("m2")
