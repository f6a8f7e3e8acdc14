# T.isinf / T.isfinite as TIRx builds them: |x| == inf and not isnan(x), folded as TIRx's C++
# folds constants (an integer is never infinite); T.isnan stays the op.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.int32), B: T.Tensor((8,), T.float32), C: T.Tensor((16,), T.bool), H: T.Tensor((8,), T.float16), D: T.Tensor((8,), T.float64), U: T.Tensor((8,), T.uint8)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    C[0] = T.isinf(B[2])
    C[1] = T.isfinite(B[3])
    C[2] = T.isinf(H[0])
    C[3] = T.isfinite(H[1])
    C[4] = T.isinf(A[0])
    C[5] = T.isfinite(U[1])
    C[6] = T.isinf(D[0]) or T.isfinite(D[1])
    C[7] = T.isinf(T.float32(1.0))
    C[8] = T.isfinite(T.float32("inf"))
    C[9] = T.isinf(T.float16("inf"))
    C[10] = T.isinf(T.float64("-inf"))
    C[11] = T.isfinite(T.float32(2.0))
    C[12] = T.isinf(B[0] + 1.0)
    C[13] = T.isinf(2.5)
    C[14] = T.isfinite(A[2] + 1)
    C[15] = T.isnan(B[4])
