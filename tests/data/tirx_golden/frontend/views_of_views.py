# Held-out rounds 9 and 10: a view of a view names its source's pointer (`v.data`), as TIRx
# prints it; a view of the storage names the storage's (`A.data`), and so does a
# declaration written with an explicit `X.data`.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    sm = T.alloc_shared((4, 16), "float32")
    tx = T.cuda.thread_idx("x")
    v = A.view(8, 8)
    w = A.view(4, 16)
    x = v.view(2, 32)
    y = x.view(64)
    z = w.sub[1:3, :]
    p = sm.permute(1, 0)
    q = p.view(64)
    r = T.decl_tensor(q.data, ty_args=[T.Tensor((2, 32), "float32", scope="shared")])
    u = T.decl_tensor(sm.data, ty_args=[T.Tensor((64,), "float32", scope="shared")])
    u[tx] = A[tx]
    B[tx] = v[0, 1] + w[1, 2] + x[1, 1] + y[3] + z[0, 0] + q[tx] + r[1, tx] + u[tx]
