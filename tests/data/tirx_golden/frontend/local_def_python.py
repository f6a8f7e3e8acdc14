# A kernel-local undecorated `def` runs as Python while the kernel is built (TIRx's meaning):
# its `range` loops unroll, its names bind the expressions themselves (no `let`), `+=` rebinds,
# a condition on its Python arguments is decided; `@T.inline` helpers it calls emit statements.
from tirx.script import tirx as T


@T.inline
def put(Y, i, v):
    Y[i] = v


@T.function
def f(X: T.Tensor((8,), "float32"), Y: T.Tensor((8,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))

    def total(m):
        s = X[0]
        for k in range(1, m):
            s = s + X[k]
        s += 1.0
        x = s * 2.0
        if m > 2:
            put(Y, 1, x)
        return x

    def copy(a, b):
        for i, j in zip(range(a), range(b, b + a)):
            put(Y, j, X[i])

    def scale(count):
        for k in range(count - 1, -1, -1):
            put(Y, 7 - k, X[k] * T.float32(k + 1))

    Y[0] = total(3)
    copy(2, 4)
    scale(2)
