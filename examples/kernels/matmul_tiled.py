"""Tiled matmul C = A @ B with two shared-memory tiles and an unrolled inner product."""

from __future__ import annotations

from tirx.script import tirx as T


def make_matmul(M, N, K, TILE=16):
    @T.function
    def mm_tiled(
        A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=(N // TILE, M // TILE), block=(TILE, TILE)))
        tx = T.cuda.thread_idx("x")
        ty = T.cuda.thread_idx("y")
        row = T.cuda.block_idx("y") * TILE + ty
        col = T.cuda.block_idx("x") * TILE + tx
        As = T.alloc_shared((TILE, TILE), "float32")
        Bs = T.alloc_shared((TILE, TILE), "float32")
        acc: T.float32 = 0.0
        for kt in range(K // TILE):
            As[ty, tx] = A[row, kt * TILE + tx]
            Bs[ty, tx] = B[kt * TILE + ty, col]
            T.cuda.cta_sync()
            for kk in T.unroll(TILE):
                acc += As[ty, kk] * Bs[kk, tx]
            T.cuda.cta_sync()
        C[row, col] = acc

    return mm_tiled


KERNELS = {
    "matmul_256": lambda: make_matmul(256, 256, 256),
    "matmul_512x128x64": lambda: make_matmul(512, 128, 64),
}
