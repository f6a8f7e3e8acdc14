# T.cast of a constant folds where the value fits; a stored value is cast to the tensor's dtype.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), T.int32), B: T.Tensor((8,), T.float32), H: T.Tensor((8,), T.float16),
      D: T.Tensor((8,), T.uint32)):  # fmt: skip
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    B[0] = T.cast(T.int32(3), "float32")
    A[0] = T.cast(T.float32(3.7), "int32")
    A[1] = T.cast(T.float32(-3.7), "int32")
    A[2] = T.cast(T.float32(1e10), "int32")
    A[3] = T.cast(T.int32(300), "int8")
    A[4] = T.cast(T.bool(True), "int32")
    A[5] = T.Select(T.cast(T.int32(2), "bool"), 1, 2)
    B[1] = T.cast(T.int32(16777217), "float32")
    B[2] = T.cast(T.float64(0.1), "float32")
    H[0] = T.cast(T.float32(0.1), "float16")
    D[0] = T.cast(T.int32(-1), "uint32")
    A[6] = B[3]
    H[1] = B[4]
    B[5] = A[7]
    A[8] = i < 3
    H[2] = T.float32(1.5)
    A[9] = T.int8(3)
    A[10] = T.int64(5)
