# Row-major strides of a tensor with an int64 extent are int64 from that dimension outward
# (TIRx's T.Iter(T.int64(4), T.int64(1), "m")), also through a permuted view.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((T.int64(4), 8), "float32"), B: T.Tensor((8, T.int64(4)), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=8))
    r = T.cuda.block_idx("x")
    c = T.cuda.thread_idx("x")
    Bt = B.permute(1, 0)
    Bt[r, c] = A[r, c]
