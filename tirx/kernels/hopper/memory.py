"""Memory-bound Hopper kernels: 16-byte vector add, fused row softmax, RMSNorm.

Every global access is one 16-byte vector per thread (``X[r, T.Ramp(c, 1, 8)]`` for
fp16/bf16 is ``LDG.E.128`` / ``STG.E.128``), staged through a small register array
(a ``local`` buffer indexed only with unrolled constants). Rows are reduced with warp
butterflies (``T.cuda.warp_max`` / ``T.cuda.warp_sum``) and one small shared array of
per-warp partials; softmax needs one barrier per reduction, and both reductions use
separate shared slots so no third barrier is needed.

Factories (cached per argument set) return ``T.function`` kernels:

* ``make_vector_add(dtype, block, unroll)``: ``C = A + B``, ``unroll`` 16-byte vectors
  per thread (all loads issued before the first add), scalar tail.
* ``make_softmax(N, dtype, block)``: ``Y = softmax(X, dim=-1)`` for ``X`` of shape
  ``(rows, N)``; one block per row, the row kept in registers, fp32 arithmetic.
* ``make_rmsnorm(N, dtype, block, eps)``: ``Y = X * rsqrt(mean(X^2) + eps) * W``.
"""

from __future__ import annotations

import functools
import math

from tirx.kernels.rows import softmax_block
from tirx.kernels.rows import vec_elems as _vec
from tirx.script import tirx as T

LOG2E = 1.4426950408889634


@functools.cache
def make_vector_add(dtype: str = "float16", block: int = 256, unroll: int = 2):
    n = T.dynamic("n", "int64")
    vec = _vec(dtype)
    per_block = block * vec * unroll
    US = tuple(range(unroll))

    @T.function
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, per_block), block=block))
        tx = T.cast(T.cuda.thread_idx("x"), "int64")
        base = T.cast(T.cuda.block_idx("x"), "int64") * per_block + tx * vec
        a = T.alloc_local((unroll * vec,), dtype)
        b = T.alloc_local((unroll * vec,), dtype)
        if base + (unroll - 1) * block * vec + vec <= n:
            for u in US:
                a[T.Ramp(u * vec, 1, vec)] = A[T.Ramp(base + u * block * vec, T.int64(1), vec)]
                b[T.Ramp(u * vec, 1, vec)] = B[T.Ramp(base + u * block * vec, T.int64(1), vec)]
            for u in US:
                C[T.Ramp(base + u * block * vec, T.int64(1), vec)] = (
                    a[T.Ramp(u * vec, 1, vec)] + b[T.Ramp(u * vec, 1, vec)]
                )
        else:
            for u in US:
                for j in T.unroll(vec):
                    k = base + (u * block * vec) + T.cast(j, "int64")
                    if k < n:
                        C[k] = A[k] + B[k]

    return vector_add


@functools.cache
def make_softmax(N: int = 4096, dtype: str = "float16", block: int = 256):
    rows = T.dynamic("rows")
    vec = _vec(dtype)
    per = N // (block * vec)
    assert per >= 1 and per * block * vec == N, "N must be a multiple of block * 16 bytes"
    warps = block // 32
    cnt = per * vec

    @T.function
    def softmax(X: T.Tensor((rows, N), dtype), Y: T.Tensor((rows, N), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=rows, block=block))
        r = T.cuda.block_idx("x")
        tx = T.cuda.thread_idx("x")
        lane = tx % 32
        warp = tx // 32
        xv = T.alloc_local((cnt,), dtype)
        v = T.alloc_local((cnt,), "float32")
        red = T.alloc_shared((2 * warps,), "float32")
        for j in T.unroll(per):
            xv[T.Ramp(j * vec, 1, vec)] = X[r, T.Ramp((tx + j * block) * vec, 1, vec)]
        mx: T.float32 = T.float32("-inf")
        for k in T.unroll(cnt):
            v[k] = T.cast(xv[k], "float32") * T.float32(LOG2E)
            mx = T.max(mx, v[k])
        m1 = T.cuda.warp_max(mx)
        if lane == 0:
            red[warp] = m1
        T.cuda.cta_sync()
        rmax: T.float32 = red[0]
        for w in T.unroll(1, warps):
            rmax = T.max(rmax, red[w])
        acc: T.float32 = 0.0
        for k in T.unroll(cnt):
            v[k] = T.exp2(v[k] - rmax)
            acc = acc + v[k]
        s1 = T.cuda.warp_sum(acc)
        if lane == 0:
            red[warps + warp] = s1
        T.cuda.cta_sync()
        total: T.float32 = red[warps]
        for w in T.unroll(1, warps):
            total = total + red[warps + w]
        inv = T.float32(1.0) / total
        for k in T.unroll(cnt):
            xv[k] = T.cast(v[k] * inv, dtype)
        for j in T.unroll(per):
            Y[r, T.Ramp((tx + j * block) * vec, 1, vec)] = xv[T.Ramp(j * vec, 1, vec)]

    return softmax


@functools.cache
def make_rmsnorm(N: int = 4096, dtype: str = "float16", block: int = 256, eps: float = 1e-6):
    rows = T.dynamic("rows")
    vec = _vec(dtype)
    per = N // (block * vec)
    assert per >= 1 and per * block * vec == N, "N must be a multiple of block * 16 bytes"
    warps = block // 32
    cnt = per * vec
    inv_n = 1.0 / N
    assert math.isfinite(eps)

    @T.function
    def rmsnorm(X: T.Tensor((rows, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((rows, N), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=rows, block=block))
        r = T.cuda.block_idx("x")
        tx = T.cuda.thread_idx("x")
        lane = tx % 32
        warp = tx // 32
        xv = T.alloc_local((cnt,), dtype)
        wv = T.alloc_local((cnt,), dtype)
        red = T.alloc_shared((warps,), "float32")
        for j in T.unroll(per):
            xv[T.Ramp(j * vec, 1, vec)] = X[r, T.Ramp((tx + j * block) * vec, 1, vec)]
        for j in T.unroll(per):
            wv[T.Ramp(j * vec, 1, vec)] = W[T.Ramp((tx + j * block) * vec, 1, vec)]
        ss: T.float32 = 0.0
        for k in T.unroll(cnt):
            f = T.cast(xv[k], "float32")
            ss = ss + f * f
        s1 = T.cuda.warp_sum(ss)
        if lane == 0:
            red[warp] = s1
        T.cuda.cta_sync()
        total: T.float32 = red[0]
        for w in T.unroll(1, warps):
            total = total + red[w]
        scale = T.rsqrt(total * T.float32(inv_n) + T.float32(eps))
        for k in T.unroll(cnt):
            xv[k] = T.cast(T.cast(xv[k], "float32") * scale * T.cast(wv[k], "float32"), dtype)
        for j in T.unroll(per):
            Y[r, T.Ramp((tx + j * block) * vec, 1, vec)] = xv[T.Ramp(j * vec, 1, vec)]

    return rmsnorm


KERNELS = {
    "vector_add_f16": lambda: make_vector_add("float16"),
    "softmax_f16_4096": lambda: make_softmax(4096, "float16", softmax_block(4096)),
    "softmax_bf16_8192": lambda: make_softmax(8192, "bfloat16", softmax_block(8192, "bfloat16")),
    "rmsnorm_f16_4096": lambda: make_rmsnorm(4096, "float16", softmax_block(4096)),
    "rmsnorm_bf16_8192": lambda: make_rmsnorm(8192, "bfloat16", softmax_block(8192, "bfloat16")),
}
