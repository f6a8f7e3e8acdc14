"""Warp-shuffle row reductions: one warp per row of ``A`` (rows dynamic, 256 columns).

Each lane accumulates 8 strided elements; ``T.cuda.warp_sum`` finishes the row sum and
a ``shfl_xor_sync`` butterfly (unrolled loop) the row maximum. Lane 0 writes both.
"""

from __future__ import annotations

from tirx.script import tirx as T


def make_row_reduce(cols=256, warps=4):
    rows = T.dynamic("rows")
    per_lane = cols // 32

    @T.function
    def row_reduce(A: T.Tensor((rows, cols), "float32"), Sum: T.Tensor((rows,), "float32"),
                   Max: T.Tensor((rows,), "float32")):  # fmt: skip
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(rows, warps), block=32 * warps))
        lane = T.cuda.lane_id()
        row = T.cuda.block_idx("x") * warps + T.cuda.thread_idx("x") // 32
        if row < rows:
            acc: T.float32 = 0.0
            mx: T.float32 = T.float32("-inf")
            for j in T.unroll(per_lane):
                v = A[row, lane + j * 32]
                acc = acc + v
                mx = T.max(mx, v)
            s = T.cuda.warp_sum(acc)
            for k in T.unroll(5):
                mx = T.max(mx, T.cuda.shfl_xor_sync(mx, 16 >> k))
            if lane == 0:
                Sum[row] = s
                Max[row] = mx

    return row_reduce


KERNELS = {"row_reduce": lambda: make_row_reduce()}
