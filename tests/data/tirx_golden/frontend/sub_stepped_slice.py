# A.sub[r, s::k]: a stepped slice (0 <= s < k, no stop), as TIRx builds it: the dimension viewed
# as (n // k, k), then element s of the inner dimension (a view of stride k).
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32, 16), "int32"), B: T.Tensor((32, 2), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.cuda.thread_idx("x")
    odd = A.sub[r, 1::2]
    quarter = A.sub[:, ::4]
    B[r, 0] = odd[0] + odd[7]
    B[r, 1] = quarter[r, 3]
