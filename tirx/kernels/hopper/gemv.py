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

__all__ = ["MAX_M", "make_gemv", "make_gemv_mma"]

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
        if T.constexpr(split == 1):
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


@T.inline
def mma_k16(d, e, f, x, h, ab, hx):
    """``D += A B`` of one k16 slice: A's rows ``g`` and ``g + 8`` from the packed pairs ``h`` of
    ``e`` and ``f``, B's column ``g`` from the pairs ``hx`` of ``x`` (``ab``: ``"bf16"`` or
    ``"f16"``)."""
    T.ptx.mma(
        d[0], d[1], d[2], d[3], e[2 * h], f[2 * h], e[2 * h + 1], f[2 * h + 1], x[2 * hx], x[2 * hx + 1],
        d[0], d[1], d[2], d[3], "sync", "aligned", "m16n8k16", "row", "col", "f32", ab, ab, "f32", "",
    )  # fmt: skip


@functools.cache
def make_gemv_mma(dtype: str = "bfloat16", M: int = 8, warps: int = 8, unroll: int = 2):
    """``Y (M, n) = X (M, k) @ W (n, k)^T`` on the tensor cores, for ``M`` up to 8: the product
    is taken transposed (``Y^T = W X^T``), so 16 rows of ``W`` fill the A side of
    ``mma.sync.m16n8k16`` and the rows of ``X`` its 8 columns (columns from ``M`` on are
    computed and never stored). A block of ``warps`` warps takes 16 rows of ``W``; its warps
    take every ``warps``-th step of ``k`` and meet in shared memory.

    The sum over ``k`` does not depend on the order of its terms, so each lane loads whole
    16-byte vectors (lane ``l``: rows ``l // 4`` and ``l // 4 + 8``, columns ``8 * (l % 4)`` to
    ``+ 7`` of a 32-column block, the same columns of ``X``) and hands them to two MMAs as they
    are: the first takes columns 0-3 of each vector, the second 4-7, and A and B agree on the
    order. No shuffles, no shared-memory staging of ``W``."""
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype: expected 'float16' or 'bfloat16', got {dtype!r}")
    if not 1 <= M <= 8:
        raise ValueError(f"M: expected 1 to 8 rows, got {M}")
    if not 1 <= warps <= 32:
        raise ValueError(f"warps: expected 1 to 32, got {warps}")
    n = T.dynamic("n")
    k = T.dynamic("k")
    vec = _VEC
    kstep = 32 * unroll  # columns one warp covers per step
    ab = "bf16" if dtype == "bfloat16" else "f16"

    @T.function
    def gemv_mma(X: T.Tensor((M, k), dtype), W: T.Tensor((n, k), dtype), Y: T.Tensor((M, n), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, 16), block=warps * 32))
        tx = T.cuda.thread_idx("x")
        lane = tx % 32
        warp = tx // 32
        g = lane // 4
        q = lane % 4
        r0 = T.cast(T.cuda.block_idx("x"), "int64") * 16 + T.cast(g, "int64")
        # rows past n read row n - 1 and columns of X past M read row M - 1: their products
        # land in entries of D that are never stored
        ra = T.min(r0, T.cast(n, "int64") - 1)
        rb = T.min(r0 + 8, T.cast(n, "int64") - 1)
        xr = T.min(g, M - 1)
        d = T.alloc_local((4,), "float32")
        e = T.alloc_local((unroll * vec,), dtype)
        f = T.alloc_local((unroll * vec,), dtype)
        xv = T.alloc_local((unroll * vec,), dtype)
        eu = e.view("uint32")
        fu = f.view("uint32")
        xu = xv.view("uint32")
        for i in T.unroll(4):
            d[i] = T.float32(0)
        for s in T.serial(warp, k // kstep, step=warps):
            for u in T.unroll(unroll):
                col = T.cast(s, "int64") * kstep + T.cast(u * 32 + q * vec, "int64")
                e[T.Ramp(u * vec, 1, vec)] = W[ra, T.Ramp(col, T.int64(1), vec)]
                f[T.Ramp(u * vec, 1, vec)] = W[rb, T.Ramp(col, T.int64(1), vec)]
                xv[T.Ramp(u * vec, 1, vec)] = X[xr, T.Ramp(col, T.int64(1), vec)]
            for h in T.unroll(2 * unroll):
                mma_k16(d, eu, fu, xu, h, ab, h)
        # the last k % kstep columns, 32 at a time; a lane's vector past k is zero on both sides
        for t in T.serial(warp, T.ceildiv(k - (k // kstep) * kstep, 32), step=warps):
            col = T.cast(k // kstep, "int64") * kstep + T.cast(t * 32 + q * vec, "int64")
            if col < k:
                e[T.Ramp(0, 1, vec)] = W[ra, T.Ramp(col, T.int64(1), vec)]
                f[T.Ramp(0, 1, vec)] = W[rb, T.Ramp(col, T.int64(1), vec)]
                xv[T.Ramp(0, 1, vec)] = X[xr, T.Ramp(col, T.int64(1), vec)]
            else:
                for j in T.unroll(vec):
                    e[j] = T.cast(0, dtype)
                    f[j] = T.cast(0, dtype)
                    xv[j] = T.cast(0, dtype)
            for h in T.unroll(2):
                mma_k16(d, eu, fu, xu, h, ab, h)
        red = T.alloc_shared((warps * 128,), "float32")
        for i in T.unroll(4):
            red[tx * 4 + i] = d[i]
        T.cuda.cta_sync()
        if warp == 0:
            for i in T.unroll(4):
                acc: T.float32 = red[lane * 4 + i]
                for w in T.unroll(1, warps):
                    acc = acc + red[(w * 32 + lane) * 4 + i]
                m = 2 * q + i % 2  # D's column (a row of X) and row (of W) for register i
                r = r0 + (i // 2) * 8
                if m < M and r < n:
                    Y[m, r] = T.cast(acc, dtype)

    return gemv_mma


KERNELS = {
    "gemv_bf16_m1": lambda: make_gemv("bfloat16", 1),
    "gemv_f16_m4": lambda: make_gemv("float16", 4),
    "gemv_bf16_m2_split4": lambda: make_gemv("bfloat16", 2, 128, 4, 4),
    "gemv_mma_bf16_m8": lambda: make_gemv_mma("bfloat16", 8),
    "gemv_mma_f16_m3": lambda: make_gemv_mma("float16", 3, 4, 4),
}
