# A conditional expression on an IR condition whose arms have different dtypes: the arms meet as a
# binary operator's operands do (int32 and float32: both float32; int32 and int64: both int64;
# float16 and float32: both float32) and the store converts the result (held-out round 17: tirx
# built an if_then_else typed int32 with a float32 arm).
from tirx.script import tirx as T


@T.function
def f(
    A: T.Tensor((64,), "int32"),
    B: T.Tensor((64,), "float32"),
    C: T.Tensor((64,), "int64"),
    H: T.Tensor((64,), "float16"),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    A[tx] = A[tx] if tx < 3 else B[tx]
    A[tx + 32] = C[tx] if tx < 5 else A[tx]
    H[tx] = H[tx] if tx < 7 else B[tx]
    B[tx] = A[tx] if tx < 9 else 0.5
    H[tx + 32] = H[tx] if tx < 11 else 1.5
    C[tx + 32] = C[tx] if tx < 13 else 1
    A[tx] = 2 if tx < 15 else A[tx]
