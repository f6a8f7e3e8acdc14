"""Small kernels as ``.tirx`` text that several test files load (one copy of each)."""

from __future__ import annotations

#: a 1,024-element float16 add: 8 blocks of 128 threads, one element each
ADD = """\
@T.function
def add(A: T.Tensor((1024,), T.float16), B: T.Tensor((1024,), T.float16)):
    with T.device_entry(8, 1, 1, 128, 1, 1):
        i: T.let[T.int32] = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
        B[i] = A[i] + T.float16(2)
"""
