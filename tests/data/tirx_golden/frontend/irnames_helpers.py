# TIRx's IR names as Python-side helpers in a kernel: T.LetAnnotation, T.TensorLoad,
# T.Range.from_min_extent, T.Lambda (applied), T.index_map (mapped indices).
from tirx.script import tirx as T

add = T.Lambda([T.float32, T.float32], lambda a, b: (a + b,))
shift = T.index_map(lambda i: (i + 1,), index_dtype="int32")


@T.function
def f(A: T.Tensor((8,), T.int32), B: T.Tensor((8,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    x: T.LetAnnotation(T.int32) = A[0]
    y = T.TensorLoad(A, [1])
    A[2] = x + y
    r = T.Range.from_min_extent(3, 2)
    for i in T.serial(r.begin, r.begin + r.extent):
        B[i] = add.apply([B[i], B[i + 1]])[0]
    A[shift.map_indices([x])[0]] = 0
