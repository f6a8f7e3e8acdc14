# Serial-loop keywords: unroll=True / N / False (CUDA `#pragma unroll`, `#pragma unroll N`,
# `#pragma unroll 1`), unroll= with annotations= (one dict, keys in order), dtype= (the bounds
# converted: `range(T.uint32(0), T.uint32(4))`), and loops whose 0 start is not an int32
# (printed with the start, as TIRx prints them).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "int32"), n: T.int64):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    if tx == 0:
        for i in T.serial(4, unroll=True):
            if i == 2:
                break
            A[i] = A[i] + 1
        for i in T.serial(8, unroll=2):
            A[i] = A[i] + 2
        for i in T.serial(A[0], A[1], unroll=False):
            A[0] = A[0] + i
        for i in T.serial(0, 4, unroll=True, annotations={"note": 1}):
            A[i + 8] = i
        for k in T.serial(4, dtype="uint32"):
            A[tx + 16] = A[tx + 16] + T.int32(k)
        for j in T.serial(n, dtype="int32"):
            A[j % 64] = j
        for j in T.serial(T.int64(0), T.int64(4)):
            A[T.int32(j) + 20] = 7
