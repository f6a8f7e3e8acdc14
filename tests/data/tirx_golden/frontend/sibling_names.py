# Variables of one name in sibling scopes (if / else, two loops, a nested loop) are distinct
# variables; TIRx's printer names each once per function: t, t_1, t_2, i, i_1.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(1,), block=(8,)))
    tx = T.cuda.thread_idx("x")
    if tx < 4:
        t = A[tx] + 1
        A[tx] = t
    else:
        t = A[tx] * 2
        A[tx] = t
    for i in range(2):
        t = A[i] + 3
        A[i] = t
        for j in range(2):
            k = j + i
            A[k] = k
    for i in range(2):
        k = i * 2
        A[k] = i
