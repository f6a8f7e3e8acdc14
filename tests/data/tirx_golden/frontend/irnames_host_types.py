# TIRx's non-primitive types as parameter annotations (host-level signature types: T.Any,
# T.String/T.StringType, T.Missing/T.MissingType, T.Opaque, T.Tuple, T.Func/T.FuncType).
from tirx.script import tirx as T


@T.function
def f(
    A: T.Tensor((8,), T.int32),
    s: T.String(),
    a: T.Any(),
    o: T.Opaque(),
    m: T.Missing(),
    t: T.Tuple(T.int32, T.float32),
    g: T.Func([T.int32], T.int32),
    u: T.StringType(),
    v: T.MissingType(),
    w: T.FuncType([T.float32], T.int32),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[0] = 1
