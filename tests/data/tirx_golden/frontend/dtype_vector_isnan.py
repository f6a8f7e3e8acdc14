# Dtypes TIRx's T has no name for print as T.PrimType("boolx2"); T.isnan of a vector is the
# per-lane predicate, a bool vector.
from tirx.script import tirx as T


@T.function
def f(
    A: T.Tensor((4,), "float16x2"),
    B: T.Tensor((4,), T.PrimType("boolx2")),
    C: T.Tensor((4,), "float32x4"),
    D: T.Tensor((4,), "boolx4"),
    E: T.Tensor((4,), "int32x2"),
    F: T.Tensor((4,), "bfloat16x2"),
    G: T.Tensor((4,), "float64x2"),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=(4,)))
    tx = T.cuda.thread_idx("x")
    B[tx] = T.isnan(A[tx])
    D[tx] = T.isnan(C[tx])
    B[tx] = T.isnan(E[tx])
    B[tx] = T.isnan(F[tx])
    B[tx] = T.isnan(G[tx])
