"""Block reduction through shared memory: each block sums ``block`` elements of ``A``.

A tree in shared memory with a mutable stride halved in a ``while`` loop and a barrier
per level; ``Out`` has one partial sum per block (``m`` blocks, dynamic).
"""

from __future__ import annotations

from tirx.script import tirx as T


def make_block_sum(block=256):
    n = T.dynamic("n")
    m = T.dynamic("m")

    @T.function
    def block_sum(A: T.Tensor((n,), "float32"), Out: T.Tensor((m,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=m, block=block))
        bx = T.cuda.block_idx("x")
        tx = T.cuda.thread_idx("x")
        buf = T.alloc_shared((block,), "float32")
        i = bx * block + tx
        if i < n:
            buf[tx] = A[i]
        else:
            buf[tx] = T.float32(0.0)
        T.cuda.cta_sync()
        stride: T.int32 = block // 2
        while stride > 0:
            if tx < stride:
                buf[tx] = buf[tx] + buf[tx + stride]
            T.cuda.cta_sync()
            stride = stride // 2
        if tx == 0:
            Out[bx] = buf[0]

    return block_sum


KERNELS = {"block_sum": lambda: make_block_sum()}
