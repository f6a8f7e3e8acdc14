# Builder-time folding: an inline helper called with k = 0 folds `0 + k` etc. away.
from tirx.script import tirx as T


@T.inline
def addk(A, k, i):
    A[i] = A[i] + (0 + k) + (k + 0) + (k * 1) + (1 * k) + (k * 0) + (k - 0) + (k // 1) + (k % 1)


@T.function
def f(A: T.Tensor((128,), T.int32), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    i = T.cuda.thread_idx("x")
    addk(A, i, 0)
    addk(A, n, 1)
    addk(A, 0, 2)
    A[3] = i + 1 + 2
    A[4] = (i + 0) * (n * 1)
    A[5] = T.ceildiv(i, 1) + T.ceildiv(T.int32(7), T.int32(2)) + T.ceildiv(n, 4)
