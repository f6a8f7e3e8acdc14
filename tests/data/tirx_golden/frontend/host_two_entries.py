# A function whose host code launches two kernels (two device entries one after another), with
# a host binding between them that the second kernel reads and a final host return. TIRx makes
# one kernel per entry (f_kernel, f_kernel_1) and launches them in order.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32), n: T.int32) -> T.int32:
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32)):
        i = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")
        B[i] = A[i] + T.float32(1)
    m = n * 3
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64)):
        j = T.cuda.thread_idx("x")
        A[j] = B[63 - j] * T.Cast("float32", m)
    return m + 1
