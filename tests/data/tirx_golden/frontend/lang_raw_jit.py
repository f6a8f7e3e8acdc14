# Raw IR constructors, jit specialization, dynamic shapes, CTA reductions and kernel attributes:
# the tirx frontend builds what TIRx's printed text loads to.
from __future__ import annotations

from tirx.script import tirx as T

n = T.dynamic("n", dtype="int32")


@T.jit
def kern(
    A: T.Tensor((N,), "int32"),
    B: T.Tensor((n,), "float32"),
    *,
    N: T.constexpr,
):
    T.device_entry(
        launch=T.cuda.LaunchConfig(grid=1, block=128),
        kernel_attrs=T.cuda.KernelAttributes(min_blocks_per_sm=2),
    )
    tx = T.cuda.thread_idx("x")
    A[0] = T.BitwiseOr(A[1], T.BitwiseXor(A[2], 3))
    A[1] = T.Select(T.GE(A[0], 1), A[2] + 1, 0)
    A[2] = T.Cast("int32", T.GT(A[0], 2)) + T.Cast("int32", T.LE(A[1], 2)) + T.Cast("int32", T.NE(A[2], 2))
    s = T.smem((128,), "float32")
    s[tx] = B[tx]
    w = T.smem((4,), "float32")
    B[0] = T.cuda.cta_sum(s[tx], 4, w.data) + T.cuda.cta_max(s[tx], 4, w.data) + T.cuda.cta_min(s[tx], 4, w.data)
    v = T.broadcast(A[0], 4)
    A[T.Ramp(4, 1, 4)] = v


f = kern.specialize(N=8)
