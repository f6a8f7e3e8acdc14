# T.Shuffle: lanes picked from the concatenation of vectors (a scalar counts as one lane).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    v = A[T.ramp(0, 1, 4)]
    w = A[T.ramp(4, 1, 4)]
    s = T.Shuffle([v, w], [7, 6, 1, 0])
    for k in range(4):
        B[k] = T.Shuffle([s], [k])
    B[4] = T.Shuffle([v], [2])
    t = T.Shuffle([v, B[7]], [4, 0])
    B[5] = T.Shuffle([t], [0]) + T.Shuffle([t], [1])
