# A.rearrange(pattern, **sizes): an einops pattern as TIRx builds it, three views: the left groups
# split (view), the axes reordered (permute), the right groups merged (view).
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8, 16), "int32"), B: T.Tensor((16, 8), "int32"), C: T.Tensor((32, 4), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tx = T.cuda.thread_idx("x")
    At = A.rearrange("r c -> c r")
    Ar = A.rearrange("r (a b) -> (r a) b", b=4)
    B[tx // 8, tx % 8] = At[tx // 8, tx % 8]
    C[tx // 4, tx % 4] = Ar[tx // 4, tx % 4]
