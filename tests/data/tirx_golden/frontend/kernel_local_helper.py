# A `def` inside a kernel body (TIRx runs the kernel's Python, so it is a closure): an
# @T.inline helper reading the kernel's `tx`, with a default argument and T.constexpr
# branches, and an undecorated helper returning a value; each call expands in place.
from tirx.script import tirx as T


@T.function
def f(D: T.Tensor((16, 8), "float32"), A: T.Tensor((16, 8), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    L = T.alloc_local((4,), "float32")

    @T.inline
    def load(buf, src, n, mode="row"):
        if T.constexpr(mode == "row"):
            for i in range(n):
                buf[i] = src[i % 2 * 8 + tx // 4, tx % 4 * 2]
        else:
            for i in range(n):
                buf[i] = src[tx % 16, i]

    def twice(x):
        return x * 2

    load(L, A, 2)
    load(L, A, 4, "col")
    D[tx % 16, tx // 16] = twice(L[0]) + L[3]
