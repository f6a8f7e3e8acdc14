# Held-out round 12: a dynamic variable named only by a parameter's layout (a leading
# dimension `ld`) is one of the signature's symbols (`def f[m, n, ld](...)`), defined by the
# tensor as its shape's are; the kernel compiles.
from __future__ import annotations

from tirx.script import tirx as T

m = T.dynamic("m")
n = T.dynamic("n")
ld = T.dynamic("ld")


@T.function
def f(
    A: T.Tensor((m, n), "float32", layout=T.TileLayout.from_iters(shard=[T.Iter(m, ld, "m"), T.Iter(n, 1, "m")], replica=[])),
    B: T.Tensor((m, n), "float32"),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(T.ceildiv(n, 32), m), block=32))
    c = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")
    r = T.cuda.block_idx("y")
    if c < n:
        B[r, c] = A[r, c]
