"""Elementwise add with a dynamic length: the seed kernel, and a 16-byte-access variant.

``make_add`` is the seed guide's kernel (one element per thread, int32 ``n``).
``make_add_vec`` handles ``vec`` consecutive elements per thread with one 16-byte load
and store (fp16 x 8), indexes in int64 (so ``n`` may exceed 2^31) and finishes the tail
element by element.
"""

from __future__ import annotations

from tirx.script import tirx as T


def make_add(dtype, value, block=256, index_dtype="int32"):
    n = T.dynamic("n", index_dtype)

    @T.function
    def add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, block), block=block))
        i = T.cast(T.cuda.block_idx("x"), index_dtype) * block + T.cast(T.cuda.thread_idx("x"), index_dtype)
        if i < n:
            B[i] = A[i] + value

    return add


def make_add_vec(dtype=T.float16, value=2, block=256, vec=8):
    n = T.dynamic("n", "int64")
    per_block = block * vec

    @T.function
    def add_vec(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, per_block), block=block))
        base = (
            T.cast(T.cuda.block_idx("x"), "int64") * block + T.cast(T.cuda.thread_idx("x"), "int64")
        ) * vec
        if base + vec <= n:
            B[T.Ramp(base, T.int64(1), vec)] = A[T.Ramp(base, T.int64(1), vec)] + T.Broadcast(
                T.cast(value, dtype), vec
            )
        else:
            for j in range(vec):
                k = base + T.cast(j, "int64")
                if k < n:
                    B[k] = A[k] + value

    return add_vec


KERNELS = {
    "add_f16": lambda: make_add(T.float16, 2, block=128),
    "add_f32": lambda: make_add(T.float32, 1),
    "add_f16_i64": lambda: make_add(T.float16, 2, block=256, index_dtype="int64"),
    "add_vec_f16": lambda: make_add_vec(),
}
