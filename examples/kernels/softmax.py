"""Row softmax: one block of 256 threads per row (rows dynamic, N columns fixed).

Each thread keeps N/256 values in registers; the row max and the row sum go through a
warp reduction and a small shared-memory array of per-warp partials.
"""

from __future__ import annotations

from tirx.script import tirx as T


def make_softmax(N=1024, block=256):
    rows = T.dynamic("rows")
    per = N // block
    warps = block // 32

    @T.function
    def softmax(X: T.Tensor((rows, N), "float32"), Y: T.Tensor((rows, N), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=rows, block=block))
        r = T.cuda.block_idx("x")
        tx = T.cuda.thread_idx("x")
        lane = tx % 32
        warp = tx // 32
        vals = T.alloc_local((per,), "float32")
        red = T.alloc_shared((warps,), "float32")
        mx: T.float32 = T.float32("-inf")
        for j in T.unroll(per):
            vals[j] = X[r, tx + j * block]
            mx = T.max(mx, vals[j])
        m1 = T.cuda.warp_max(mx)
        if lane == 0:
            red[warp] = m1
        T.cuda.cta_sync()
        rmax: T.float32 = red[0]
        for w in T.unroll(1, warps):
            rmax = T.max(rmax, red[w])
        T.cuda.cta_sync()
        acc: T.float32 = 0.0
        for j in T.unroll(per):
            vals[j] = T.exp(vals[j] - rmax)
            acc = acc + vals[j]
        s1 = T.cuda.warp_sum(acc)
        if lane == 0:
            red[warp] = s1
        T.cuda.cta_sync()
        total: T.float32 = 0.0
        for w in T.unroll(warps):
            total = total + red[w]
        inv = T.float32(1.0) / total
        for j in T.unroll(per):
            Y[r, tx + j * block] = vals[j] * inv

    return softmax


KERNELS = {"softmax_1024": lambda: make_softmax()}
