"""Decode GEMV: ``Y = X @ W^T`` for a few rows of ``X`` (``M`` from 1 to 8), at memory speed.

At decode sizes (one to a few tokens against an ``(N, K)`` weight) a GEMM is a stream of the
weight: each element of ``W`` is read once and used ``M`` times, so the time is the weight's
bytes over the memory's bandwidth. A tensor-core tile of ``64 x BN`` leaves most SMs idle there
(one CTA per ``BN`` columns of ``Y``: 64 CTAs for ``N = 4096``), so this kernel gives every row
of ``W`` one warp instead:

* lane ``l`` reads the row's 16-byte vectors ``l, l + 32, ...`` (``W[n, T.Ramp(c, 1, 8)]``:
  one ``LDG.E.128`` each, a warp reads 512 contiguous bytes per step); ``UNROLL`` vectors are
  loaded before the first multiply, so every warp keeps ``UNROLL`` x 512 bytes in flight;
* the matching elements of every row of ``X`` (small: they stay in L1/L2) are read the same
  way, and each lane keeps one float32 sum per row of ``X``;
* the lanes' sums are added with a butterfly (``T.cuda.warp_sum``) and lane 0 stores ``Y[m, n]``.

Sizes ``n`` (rows of ``W``) and ``k`` are launch arguments: one compiled kernel per dtype and
``M`` serves every weight. ``k`` must be a multiple of 8 (16-byte rows, as TMA needs for the
tensor-core path); the last partial step of a row is predicated per lane.
"""

from __future__ import annotations

import functools

from tirx.script import tirx as T

__all__ = ["MAX_M", "make_gemv"]

#: the most rows of ``X`` the kernel takes (above, the tensor-core GEMM is faster)
MAX_M = 8
_VEC = 8  # elements of a 16-byte vector (fp16 / bf16)


@functools.cache
def make_gemv(dtype: str = "bfloat16", M: int = 1, block: int = 128, unroll: int = 4, split: int = 1):
    """``Y (M, n) = X (M, k) @ W (n, k)^T`` for ``dtype`` fp16 / bf16: ``block`` threads,
    ``split`` warps per row of ``W`` (each takes every ``split``-th step of the row; their sums
    meet in shared memory: for few rows, so that enough warps stream), ``unroll`` 16-byte
    vectors per lane per step."""
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype: expected 'float16' or 'bfloat16', got {dtype!r}")
    if not 1 <= M <= MAX_M:
        raise ValueError(f"M: expected 1 to {MAX_M} rows, got {M}")
    if block % 32 or not 32 <= block <= 1024:
        raise ValueError(f"block: expected a multiple of 32 up to 1024, got {block}")
    warps = block // 32
    if split < 1 or warps % split:
        raise ValueError(f"split: expected a divisor of the {warps} warps of a block, got {split}")
    n = T.dynamic("n")
    k = T.dynamic("k")
    rows = warps // split  # rows of W a block takes
    vec = _VEC
    step = 32 * vec * unroll  # elements of a row one warp reads per step

    @T.function
    def gemv(X: T.Tensor((M, k), dtype), W: T.Tensor((n, k), dtype), Y: T.Tensor((M, n), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, rows), block=block))
        tx = T.cuda.thread_idx("x")
        lane = tx % 32
        warp = tx // 32
        part = warp % split
        row = T.cast(T.cuda.block_idx("x"), "int64") * rows + T.cast(warp // split, "int64")
        acc = T.alloc_local((M,), "float32")
        wv = T.alloc_local((unroll * vec,), dtype)
        xv = T.alloc_local((vec,), dtype)
        for m in T.unroll(M):
            acc[m] = T.float32(0)
        if row < n:
            for s in T.serial(part, k // step, step=split):
                base = T.cast(s, "int64") * step + T.cast(lane, "int64") * vec
                for u in T.unroll(unroll):
                    wv[T.Ramp(u * vec, 1, vec)] = W[row, T.Ramp(base + u * 32 * vec, T.int64(1), vec)]
                for m in T.unroll(M):
                    for u in T.unroll(unroll):
                        xv[T.Ramp(0, 1, vec)] = X[m, T.Ramp(base + u * 32 * vec, T.int64(1), vec)]
                        for j in T.unroll(vec):
                            acc[m] = acc[m] + T.cast(wv[u * vec + j], "float32") * T.cast(xv[j], "float32")
            for t in T.serial(part, T.ceildiv(k - (k // step) * step, 32 * vec), step=split):
                col = T.cast(k // step, "int64") * step + T.cast(t * 32 + lane, "int64") * vec
                if col < k:
                    wv[T.Ramp(0, 1, vec)] = W[row, T.Ramp(col, T.int64(1), vec)]
                    for m in T.unroll(M):
                        xv[T.Ramp(0, 1, vec)] = X[m, T.Ramp(col, T.int64(1), vec)]
                        for j in T.unroll(vec):
                            acc[m] = acc[m] + T.cast(wv[j], "float32") * T.cast(xv[j], "float32")
        if split == 1:
            for m in T.unroll(M):
                total = T.cuda.warp_sum(acc[m])
                if lane == 0 and row < n:
                    Y[m, row] = T.cast(total, dtype)
        else:
            red = T.alloc_shared((warps * M,), "float32")
            for m in T.unroll(M):
                total = T.cuda.warp_sum(acc[m])
                if lane == 0:
                    red[warp * M + m] = total
            T.cuda.cta_sync()
            if part == 0 and lane < M and row < n:
                out: T.float32 = red[warp * M + lane]
                for q in T.unroll(1, split):
                    out = out + red[(warp + q) * M + lane]
                Y[lane, row] = T.cast(out, dtype)

    return gemv


KERNELS = {
    "gemv_bf16_m1": lambda: make_gemv("bfloat16", 1),
    "gemv_f16_m4": lambda: make_gemv("float16", 4),
    "gemv_bf16_m2_split4": lambda: make_gemv("bfloat16", 2, 128, 4, 4),
}
