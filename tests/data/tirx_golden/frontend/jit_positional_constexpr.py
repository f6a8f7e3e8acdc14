# T.constexpr parameters among the positional ones (TIRx takes them): bound by name in specialize.
from __future__ import annotations

from tirx.script import tirx as T


@T.jit
def tile_copy(
    A: T.Tensor((N, N), DT), B: T.Tensor((N, N), DT), N: T.constexpr, TILE: T.constexpr, DT: T.constexpr
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(N // TILE, N // TILE), block=(TILE, TILE)))
    tile = T.alloc_shared((TILE, TILE + 1), DT)
    tx = T.cuda.thread_idx("x")
    ty = T.cuda.thread_idx("y")
    tile[ty, tx] = A[T.cuda.block_idx("y") * TILE + ty, T.cuda.block_idx("x") * TILE + tx]
    T.cuda.cta_sync()
    B[T.cuda.block_idx("x") * TILE + ty, T.cuda.block_idx("y") * TILE + tx] = tile[tx, ty]


f = tile_copy.specialize(N=64, TILE=16, DT="float32")
